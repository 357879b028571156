"""The oblivious fast path: against a nature whose outcomes ignore the forecasts, every round at once.

A forecaster may offer ``play_oblivious(X, y, u) -> (p_mean, p, p_internal)``: the
contexts, outcomes and forecast uniforms are drawn first, with the same streams in the same
order as the environment's rounds, and the forecaster plays every round at once (K29 in
compiled code). The recorded game is identical to the step loop's.
"""

from __future__ import annotations

import operator
import time
from itertools import repeat

import numpy as np

from arena.env import ForecastEnv
from arena.games import Game
from arena.protocols import Bernoulli, Forecast, Forecaster, Nature, OutcomeLaw
from arena.results import PLUGIN_ERRORS
from arena.watchdog import Watchdog


class Declined(Exception):
    """The oblivious fast path cannot reproduce this game; the step loop plays it."""


def play_oblivious(env: ForecastEnv, fc: Forecaster, dog: Watchdog | None = None) -> float | None:
    """Play all rounds at once against an oblivious nature; the forecaster's seconds, or None.

    None when the fast path does not apply or anything is off the protocol: the step loop
    then plays the game (from the start) and reports any forfeit at its round. Under a time
    limit, nature's calls are timed one by one and ``play_oblivious`` gets T times the limit.
    """
    nature, game = env.nature, env.game
    plain_game = (
        game.name == "binary"
        and getattr(env.recorder, "atoms", None) is None
        and all(
            getattr(type(game), m) is getattr(Game, m) for m in ("present_context", "scored_context", "outcome_prob")
        )
    )
    if (
        nature.adaptive
        or env.keep_forecasts
        or not plain_game  # outcomes are checked as bits below
        or type(nature).observe is not Nature.observe
        or not callable(fc.play_oblivious)
        or not fc.can_play_oblivious
    ):
        return None
    try:
        X, y, y_prob = _oblivious_outcomes(env, timed=dog is not None)
    except PLUGIN_ERRORS:  # noqa: BLE001 (the step loop reproduces the error at its round)
        env.t = -1
        return None
    u = env._draw_rng.random(env.T)  # the same numbers as T single draws
    env.t = -1  # streams consumed: a fallback must reset
    limit = dog.limit if dog is not None else None
    if dog is not None:
        dog.pause()
        dog.limit = limit * env.T
    env.progress[5] = 1  # play_oblivious
    t0 = time.perf_counter()
    try:
        out = fc.play_oblivious(X, y, u)
    except PLUGIN_ERRORS:  # noqa: BLE001
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
    rec, seen = env.recorder, {}
    for name, a in zip(
        ("X", "p_mean", "p", "p_internal", "y", "y_prob"), (X, p_mean, p, p_int, y, y_prob), strict=True
    ):
        # the recorder takes the arrays (a copy would cost as much memory again); a view of another array is
        # copied, and one handed out twice (K29's announced, realized and internal forecasts are one) is
        # kept once, read-only, so that no write to one column can change another
        if id(a) in seen:
            a = seen[id(a)]
            a.flags.writeable = False
        elif not a.flags.owndata:
            a = seen.setdefault(id(a), a.copy())
        else:
            seen[id(a)] = a
        setattr(rec, name, a)
    rec.n, rec.forecasts = env.T, None
    env.t = env.T + 1
    return t_fc


_law_p = operator.attrgetter("p")


def _oblivious_outcomes(env: ForecastEnv, timed: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Contexts, outcomes and P(y = 1) of every round, drawn as ForecastEnv.step draws them.

    Nature's stream runs context(t), respond(t) in round order (an oblivious nature ignores
    the forecast it is shown); the outcome stream gives one uniform per Bernoulli law or
    plain outcome (batched) and its own draws to any other law, in round order. ``timed``: a
    time limit watches nature's calls (each call marks ``env.progress``).
    """
    nature, T, d = env.nature, env.T, env.nature.context_dim
    X = np.zeros((T, d))
    y = probs = coin = None  # lists (cheaper per round than arrays), made when a round needs them (make_lists)
    y_prob = np.full(T, np.nan)
    rng, shown, x, progress = env._outcome_rng, Forecast.point(0.5), env._x, env.progress
    raw, pending, first = None, 0, 0  # pending: the first round whose single uniform is not drawn yet

    def make_lists() -> None:
        nonlocal y, probs, coin
        y, probs, coin = [0.0] * T, [0.0] * T, [False] * T

    def draw_pending(stop: int) -> None:
        s = slice(pending, stop)
        uniform, c, q = rng.random(stop - pending), np.array(coin[s], dtype=bool), np.array(probs[s])
        y[s] = np.where(c, np.where(uniform < q, 1.0, 0.0), y[s]).tolist()
        y_prob[s] = np.where(c, 1.0 - (1.0 - q), np.nan)  # 1 - Bernoulli.cdf(0)

    def take(i: int, answer) -> None:
        """Round i's answer: a Bernoulli law waits for its uniform; another law draws now, in order."""
        nonlocal pending
        if type(answer) is Bernoulli:
            probs[i], coin[i] = answer.p, True
        elif isinstance(answer, OutcomeLaw):
            draw_pending(i)
            y[i], y_prob[i] = float(answer.sample(rng)), 1.0 - answer.cdf(0.0)
            pending = i + 1
        else:
            y[i] = float(answer)

    if type(nature).context is Nature.context and not timed:  # no contexts: respond is the only call
        i, chunk, q = 0, 1 << 14, np.empty(T)
        while i < T:  # answers a chunk at a time, in a comprehension (quicker than the loop below)
            stop = min(i + chunk, T)
            answers = list(map(nature.respond, range(i + 1, stop + 1), repeat(x), repeat(shown)))
            if pending == 0 and first == 0:  # Bernoulli laws so far: their p in an array
                law = answers[0]
                # the same law every round (an i.i.d. nature): its p, without a list of it
                same = type(law) is Bernoulli and all(map(operator.is_, answers, repeat(law)))
                if same or set(map(type, answers)) == {Bernoulli}:
                    q[i:stop] = law.p if same else list(map(_law_p, answers))
                    i = stop
                    continue
            if first == 0:  # the rounds before this chunk were all Bernoulli laws: to the lists
                make_lists()
                probs[:i], coin[:i], first = q[:i].tolist(), [True] * i, T
            for j, answer in enumerate(answers, start=i):  # other laws: in round order, as below
                take(j, answer)
            i = stop
        if first == 0:  # every round a Bernoulli law: draw_pending(T) on arrays, in place (no temporaries)
            np.subtract(1.0, np.subtract(1.0, q, out=y_prob), out=y_prob)  # 1 - (1 - q), as draw_pending
            uniform = rng.random(T)
            uniform[:] = uniform < q  # y: 1.0 where the uniform is below p, else 0.0 (in the uniforms' array)
            return X, uniform, y_prob
        first = T  # every round is answered
    else:
        make_lists()
    for i in range(first, T):
        if i:
            progress[3] = i  # context (for the time limit)
            new = nature.context(i + 1)
            if new is not raw:  # natures without contexts return the same empty array
                raw, x = new, np.asarray(new, dtype=np.float64).reshape(-1)
                if x.size != d:
                    raise Declined
        if d:
            X[i] = x
        progress[1] = i + 1  # respond
        take(i, nature.respond(i + 1, x, shown))
    draw_pending(T)
    y = np.array(y, dtype=np.float64)
    if not (np.all(np.isfinite(X)) and np.all((y == 0.0) | (y == 1.0))):
        raise Declined  # the step loop names the bad round
    return X, y, y_prob


__all__ = ["Declined", "play_oblivious"]
