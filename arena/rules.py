"""One round's rules, stated once.

Round t of a game, with nature's context x_t already revealed:

1. the forecaster announces a forecast, checked against the game (:func:`announce`);
2. nature answers having seen it (``Nature.respond``): a law of the outcome or an outcome;
3. the outcome coin: a Bernoulli law or a plain outcome takes one uniform from the outcome
   stream (:func:`takes_uniform`, :func:`bernoulli_outcome`), any other law samples from that
   stream itself (:func:`draw_outcome`);
4. the forecast coin: one uniform from the forecast stream realizes the forecast (:func:`realize`);
5. nature observes the realized forecast and the outcome (adaptive natures);
6. the round is recorded and the context of round t + 1 is revealed.

:meth:`arena.env.ForecastEnv.play_round` plays a round by these functions; the oblivious fast
path (:mod:`arena.oblivious`) batches steps 3 and 4 over every round (the uniforms of the coins
drawn in one call each, which gives the very numbers of one call a round) with the same functions.

Examples
--------
>>> import numpy as np
>>> bernoulli_outcome(0.25, 0.3), bernoulli_outcome(np.array([0.25, 0.5]), 0.3)
(1.0, array([1., 0.]))
>>> realize(Forecast.two_point(0.2, 0.4, 0.75), 0.7), realize(Forecast.two_point(0.2, 0.4, 0.75), 0.8)
(0.2, 0.4)
"""

from __future__ import annotations

import math

import numpy as np

from arena.protocols import Bernoulli, Forecast, OutcomeLaw, ProtocolError, as_forecast

#: The timed calls of a game, in their order within a round t (``ForecastEnv.progress``): the
#: forecaster's predict, nature's respond, observe and context of round t + 1, the
#: forecaster's update; and a forecaster's all-rounds-at-once play_oblivious.
CALLS = ("predict", "respond", "observe", "context", "update", "play_oblivious")


def announce(action, game, at_most_two_points: bool = False) -> Forecast:
    """Step 1: the forecaster's action (a float, a one-element array or an :class:`arena.Forecast`) as a
    checked Forecast in the game's forecast space; ``at_most_two_points``: the game takes a point or a
    two-point forecast. Raises :class:`arena.protocols.ProtocolError` naming the bad action.

    Text, true/false and a 0-d array are no forecast (a number by accident, e.g. a model's output not converted).
    """
    if type(action) is float and game.forecast_low <= action <= game.forecast_high:  # most rounds (NaN fails)
        return Forecast((action,))
    if isinstance(action, (str, bytes, bool, np.bool_)) or (isinstance(action, np.ndarray) and action.ndim == 0):
        raise ProtocolError(
            f"forecaster returned {type(action).__name__} {action!r}; expected a float in "
            f"[{game.forecast_low}, {game.forecast_high}] or an arena.Forecast (convert with float(...))"
        )
    if not isinstance(action, (Forecast, float)):
        try:
            action = np.asarray(action, dtype=np.float64).reshape(-1)
        except (TypeError, ValueError):
            raise ProtocolError(
                f"forecaster returned {action!r}; expected a float in "
                f"[{game.forecast_low}, {game.forecast_high}] or an arena.Forecast"
            ) from None
        action = action[0] if action.size == 1 else action
    f = as_forecast(action, game.forecast_low, game.forecast_high)
    if at_most_two_points and len(f.points) > 2:
        raise ProtocolError(
            f"forecaster announced a distribution on {len(f.points)} points; the "
            f"{game.name!r} game takes a point or a two-point forecast (Forecast.two_point)"
        )
    return f


def takes_uniform(answer) -> bool:
    """Whether nature's answer takes one uniform of the outcome coin (a Bernoulli law, or a plain outcome,
    whose uniform keeps the coin aligned whatever nature returns); any other law samples the stream itself."""
    return type(answer) is Bernoulli or not isinstance(answer, OutcomeLaw)


def bernoulli_outcome(u, p):
    """The outcome of a Bernoulli law of P(y = 1) = ``p`` on the uniform ``u`` (``Bernoulli.sample``): 1.0 when
    ``u < p``, else 0.0; elementwise on arrays."""
    return (u < p) * 1.0


def draw_outcome(answer, rng: np.random.Generator, game, who: str, t: int) -> tuple[float, float]:
    """Step 3 of round t: the outcome drawn from nature's answer on the outcome stream ``rng``, checked by the
    game, and P(y = 1) under the answer (NaN for a plain outcome)."""
    if type(answer) is Bernoulli:
        return game.check_outcome(bernoulli_outcome(rng.random(), answer.p), who, t), game.outcome_prob(answer)
    if type(answer) is float or not isinstance(answer, OutcomeLaw):  # a plain outcome (the float first: no ABC check)
        rng.random()  # takes its uniform too (takes_uniform): the coin stays aligned
        return game.check_outcome(answer, who, t), math.nan
    return game.check_outcome(answer.sample(rng), who, t), game.outcome_prob(answer)


def realize(f: Forecast, u: float) -> float:
    """Step 4: the forecast realized by the uniform ``u``: the atom where ``u`` falls in the cumulated
    probabilities (``Forecast.sample``, the inverse CDF); a two-point forecast gives its low atom when
    ``u`` < P(low)."""
    return f.sample(u)


__all__ = ["CALLS", "announce", "bernoulli_outcome", "draw_outcome", "realize", "takes_uniform"]
