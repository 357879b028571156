"""The oblivious fast path: against a nature whose outcomes ignore the forecasts, every round at once.

A forecaster may offer ``play_oblivious(X, y, u) -> (p_mean, p, p_internal)``. Against an
oblivious nature the rounds' contexts and outcomes do not depend on the forecasts, so they are
drawn first by the rules of :mod:`arena.rules`, batched: nature's answers a chunk of rounds at a
time (every round in one call where nature offers ``series``: a replayed file), the outcome coin's
uniforms of a run of Bernoulli laws in one call, the forecast coin's uniforms of every round in
one call (the very numbers of one call a round). The forecaster then plays every round at once
(K29 in compiled code), realizing its forecasts with those uniforms. The recorded game is
identical to the step loop's.
"""

from __future__ import annotations

import operator
import time
from itertools import repeat

import numpy as np

from arena.env import ForecastEnv
from arena.games import Game
from arena.protocols import Bernoulli, Forecaster, Nature, ProtocolError
from arena.rules import bernoulli_outcome, takes_uniform
from arena.watchdog import Watchdog, plugin_failure

#: Rounds whose answers are held at once (bounded memory whatever T).
CHUNK = 1 << 14


class Declined(Exception):
    """The oblivious fast path cannot reproduce this game; the step loop plays it."""


class ReadForecast(ProtocolError):
    """A nature declared oblivious read the forecast it was shown on the fast path (:class:`Unshown`), where it
    would play another game than the step loop's. ``step``: the round."""

    def __init__(self, name: str, step: int = 1):
        super().__init__(
            f"nature {name!r} says it is oblivious but read the forecast; declare adaptive = True in its class "
            "(a nature whose answer depends on the forecast)"
        )
        self.step = step


class Unshown:
    """What the fast path shows an oblivious nature as the forecast (it plays every round before the forecaster
    does): reading it in any way raises :class:`ReadForecast`, naming the nature."""

    __slots__ = ("_nature",)

    def __init__(self, nature: str):
        object.__setattr__(self, "_nature", nature)

    def __getattribute__(self, name: str):
        if name.startswith("__") and name.endswith("__"):
            return object.__getattribute__(self, name)
        raise ReadForecast(object.__getattribute__(self, "_nature"))

    def _read(self, *args):
        raise ReadForecast(object.__getattribute__(self, "_nature"))

    __float__ = __bool__ = __iter__ = __len__ = __getitem__ = __array__ = _read
    __lt__ = __le__ = __gt__ = __ge__ = __add__ = __sub__ = __mul__ = __truediv__ = __format__ = _read


def applies(env: ForecastEnv, fc: Forecaster) -> bool:
    """Whether the fast path may play this game: an oblivious nature that observes nothing, the binary game's
    plain rules (outcomes are bits, contexts shown and scored as they are), no Forecast objects kept, and a
    forecaster that offers ``play_oblivious`` now."""
    game, nature = env.game, env.nature
    plain_game = (
        game.name == "binary"
        and not game.records_atoms
        and all(
            getattr(type(game), m) is getattr(Game, m) for m in ("present_context", "scored_context", "outcome_prob")
        )
    )
    return bool(
        plain_game
        and not nature.adaptive
        and not env.keep_forecasts
        and type(nature).observe is Nature.observe
        and callable(fc.play_oblivious)
        and fc.can_play_oblivious
    )


def play_oblivious(env: ForecastEnv, fc: Forecaster, dog: Watchdog | None = None) -> float | None:
    """Play every round of a game that was just reset and that the fast path :func:`applies` to; the
    forecaster's seconds, or None when anything is off the protocol (the streams may be spent: the step loop
    plays the game again from a reset, and reports any forfeit at its round). Under a time limit, nature's
    calls are timed one by one and ``play_oblivious`` gets T times the limit."""
    try:
        X, y, y_prob = rounds(env, timed=dog is not None)
    except ReadForecast:
        raise
    except BaseException as exc:  # the step loop reproduces the error at its round
        plugin_failure(exc)
        return None
    u = env.streams.forecast  # every round's forecast coin
    limit = dog.limit if dog is not None else None
    if dog is not None:
        dog.pause()
        dog.limit = limit * env.T
    env.progress[5] = 1  # play_oblivious
    t0 = time.perf_counter()
    try:
        out = fc.play_oblivious(X, y, u)
    except BaseException as exc:  # the step loop reproduces the error at its round
        plugin_failure(exc)
        return None
    finally:
        if dog is not None:
            dog.pause()
            dog.limit = limit
    t_fc = time.perf_counter() - t0
    if out is None:
        return None
    p_mean, p, p_int = (np.asarray(a, dtype=np.float64) for a in out)
    lo, hi = env.game.forecast_low, env.game.forecast_high
    if any(a.shape != y.shape for a in (p_mean, p, p_int)) or not np.all((p >= lo) & (p <= hi)):
        return None
    env.record_all({"X": X, "p_mean": p_mean, "p": p, "p_internal": p_int, "y": y, "y_prob": y_prob})
    return t_fc


def rounds(env: ForecastEnv, timed: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Contexts, outcomes and P(y = 1) of every round of a game just reset, drawn as its step loop draws them.

    Nature's stream runs context(t), respond(t) in round order (an oblivious nature ignores the forecast it is
    shown); the outcome coin runs in round order too (:func:`outcomes`). A nature that gives its rounds at once
    (``Nature.series``) is not asked round by round unless ``timed``: a time limit watches nature's calls (each
    call marks ``env.progress``). Raises :class:`Declined` when an outcome is not a bit.
    """
    nature, T, x = env.nature, env.T, env.context
    fixed = None if timed or not callable(nature.series) else nature.series(T)
    if fixed is not None:  # rounds fixed in advance (a replayed file): all at once
        return fixed_rounds(env, *fixed)
    X, y, y_prob = np.zeros((T, x.size)), np.empty(T), np.empty(T)
    shown, progress = Unshown(nature.name), env.progress
    contexts = timed or type(nature).context is not Nature.context
    for start in range(0, T, CHUNK):
        stop = min(start + CHUNK, T)
        try:
            if contexts:  # one round at a time: context (checked by the environment), then respond
                answers = []
                for t in range(start + 1, stop + 1):
                    if t > 1:
                        progress[3] = t - 1  # context (of round t, fetched in round t - 1)
                        x = env.fetch_context(t)
                    X[t - 1] = x
                    progress[1] = t  # respond
                    answers.append(nature.respond(t, x, shown))
            else:  # no contexts: respond is the only call (in a comprehension, quicker than the loop)
                answers = list(map(nature.respond, range(start + 1, stop + 1), repeat(x), repeat(shown)))
        except ReadForecast as exc:  # the round: the loop's, or the chunk's first (an oblivious nature reads at once)
            exc.step = progress[1] if contexts else start + 1
            raise
        y[start:stop], y_prob[start:stop] = outcomes(answers, env.streams.outcome, env.game)
    if not np.all((y == 0.0) | (y == 1.0)):
        raise Declined  # the step loop names the bad round
    return X, y, y_prob


def fixed_rounds(env: ForecastEnv, X, y) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`rounds` of a nature that gave every context ``X`` and plain outcome ``y`` at once
    (``Nature.series``), checked in one test each as the per-round path checks them (the same error), the
    outcome coin advanced as that path advances it: one uniform per plain outcome, P(y = 1) unknown."""
    T, d, who = env.T, env.context.size, env.nature.name
    X, y = np.array(X, dtype=np.float64), np.array(y, dtype=np.float64)  # copies: the record keeps them
    if X.shape != (T, d) or y.shape != (T,):
        raise ProtocolError(
            f"nature {who!r}: series(T={T}) gave contexts of shape {X.shape} and outcomes of shape {y.shape}; "
            f"expected ({T}, {d}) and ({T},)"
        )
    bad = np.flatnonzero(~np.isfinite(X).all(axis=1))
    if bad.size:
        t = int(bad[0]) + 1
        env.fetch_context(t)  # the per-round path's error, naming the round
        raise ProtocolError(f"nature {who!r}: series(T={T}) and context({t}) disagree at t={t}")
    if not np.all((y == 0.0) | (y == 1.0)):
        raise Declined  # the step loop names the bad round
    for start in range(0, T, CHUNK):  # bounded memory whatever T
        env.streams.outcome.random(min(CHUNK, T - start))
    return X, y, np.full(T, np.nan)


def outcomes(answers: list, rng: np.random.Generator, game: Game) -> tuple[np.ndarray, np.ndarray]:
    """The outcome coin of consecutive rounds (:func:`arena.rules.draw_outcome`, batched): the outcomes and
    P(y = 1) drawn from nature's answers in round order, the uniforms of a run of answers that take one each
    drawn in one call."""
    n = len(answers)
    law = answers[0] if n else None
    if type(law) is Bernoulli and all(map(operator.is_, answers, repeat(law))):  # one law every round (i.i.d.)
        return bernoulli_outcome(rng.random(n), law.p), np.full(n, game.outcome_prob(law))
    y, y_prob, start = np.empty(n), np.full(n, np.nan), 0
    for i, answer in enumerate(answers):
        if not takes_uniform(answer):  # a law that samples the stream itself: the uniforms before it first
            _uniforms(answers, start, i, rng, game, y, y_prob)
            y[i], y_prob[i] = answer.sample(rng), game.outcome_prob(answer)
            start = i + 1
    _uniforms(answers, start, n, rng, game, y, y_prob)
    return y, y_prob


def _uniforms(answers: list, start: int, stop: int, rng, game: Game, y: np.ndarray, y_prob: np.ndarray) -> None:
    """Rounds ``start .. stop - 1``, whose answers take one uniform each (Bernoulli laws, plain outcomes)."""
    if start == stop:
        return
    for answer, u in zip(answers[start:stop], rng.random(stop - start).tolist(), strict=True):
        if type(answer) is Bernoulli:
            y[start], y_prob[start] = bernoulli_outcome(u, answer.p), game.outcome_prob(answer)
        else:
            y[start] = float(answer)
        start += 1


__all__ = ["Declined", "ReadForecast", "Unshown", "applies", "fixed_rounds", "outcomes", "play_oblivious", "rounds"]
