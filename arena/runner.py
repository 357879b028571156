"""Play one matchup: forecaster vs nature in a game for T rounds, then referee it.

:func:`play` is the Python entry point for notebooks; the command line calls it once per
matchup and turns the :class:`Result` into a row of the results table.

The loop is plain Python over the plugin verbs (predict, step, update), so plugins never
see how the game is driven. Against an oblivious nature a forecaster may offer
``play_oblivious(X, y, u) -> (p_mean, p, p_internal)``: the runner then draws the
contexts, outcomes and forecast uniforms first, with the same streams in the same order
as the environment, and lets the forecaster play every round at once (K29 in compiled
code). The recorded game is identical to the step loop's (``fast_path=False``).
"""

from __future__ import annotations

import json
import resource
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from arena.env import ForecastEnv, Recorder, nature_streams
from arena.games import Game, get_game, plays
from arena.protocols import Bernoulli, Forecast, Forecaster, Nature, OutcomeLaw, ProtocolError
from arena.referee import Certificate, Referee
from arena.registry import make_forecaster
from arena.seeding import derive_rng, derive_seed


@dataclass
class Forfeit:
    """A matchup ended early because a plugin misbehaved at round ``step``."""

    who: str
    step: int
    reason: str


@dataclass
class Result:
    """The outcome of one matchup.

    Attributes
    ----------
    summary : metric name -> value (on the rounds played).
    certificates : certificate name -> :class:`arena.referee.Certificate`.
    curves : long table (t, metric, value) at log-spaced checkpoints.
    trace : per-round DataFrame (t, context, announced forecast, realized p, y).
    """

    game: str
    forecaster: Forecaster
    nature: Nature
    T: int
    seed: int
    recorder: Recorder
    summary: dict[str, float]
    certificates: dict[str, Certificate]
    curves: pd.DataFrame
    seconds: dict[str, float] = field(default_factory=dict)
    forfeit: Forfeit | None = None

    @property
    def trace(self) -> pd.DataFrame:
        rec = self.recorder
        cols = {"t": np.arange(1, rec.n + 1)}
        for j in range(rec.X.shape[1]):
            cols[f"x_{j}"] = rec.X[: rec.n, j]
        if rec.forecasts is not None:
            cols["forecast"] = [str(f) for f in rec.forecasts[: rec.n]]
        cols.update(p_announced=rec.p_mean[: rec.n], p=rec.p[: rec.n], p_internal=rec.p_internal[: rec.n],
                    y=rec.y[: rec.n], y_prob=rec.y_prob[: rec.n])
        if getattr(rec, "atoms", None) is not None:  # two-point games (quantile): atoms and nature's CDF there
            cols.update(atom_0=rec.atoms[: rec.n, 0], atom_1=rec.atoms[: rec.n, 1], prob_atom_0=rec.prob_lo[: rec.n],
                        cdf_atom_0=rec.cdf_at_atoms[: rec.n, 0], cdf_atom_1=rec.cdf_at_atoms[: rec.n, 1],
                        law_lipschitz=rec.law_lip[: rec.n], expected_loss=rec.expected_loss[: rec.n])
        return pd.DataFrame(cols)

    def row(self) -> dict:
        """One flat row of the results table: config, seeds, metrics, certificates, timing."""
        from arena import __version__

        fparams, nparams = _jsonable(self.forecaster.params()), _jsonable(self.nature.params())
        row = {"game": self.game, "forecaster": self.forecaster.name, "nature": self.nature.name,
               "seed": self.seed, "T": self.T, "rounds": self.recorder.n,
               "status": "forfeit" if self.forfeit else "ok",
               "forfeit_who": self.forfeit.who if self.forfeit else "",
               "forfeit_step": self.forfeit.step if self.forfeit else -1,
               "forfeit_reason": self.forfeit.reason if self.forfeit else "",
               "adaptive": bool(self.nature.adaptive),
               "forecaster_params": json.dumps(fparams, sort_keys=True),
               "nature_params": json.dumps(nparams, sort_keys=True)}
        row.update(seeds(self.seed, self.forecaster, self.nature))
        row.update(self.summary)
        for name, c in self.certificates.items():
            row[f"cert.{name}.value"] = c.value
            row[f"cert.{name}.bound"] = c.bound
            row[f"cert.{name}.holds"] = c.holds
            for k, v in c.extra.items():
                row[f"cert.{name}.{k}"] = v
        row.update({f"seconds_{k}": v for k, v in self.seconds.items()})
        row["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
        row["arena_version"] = __version__
        return row


def _jsonable(d: dict) -> dict:
    out = {}
    for k, v in d.items():
        if isinstance(v, (np.integer, np.floating)):
            v = v.item()
        elif isinstance(v, tuple):
            v = list(v)
        try:
            json.dumps(v)
        except TypeError:
            v = repr(v)
        out[k] = v
    return out


def seeds(seed: int, forecaster: Forecaster, nature: Nature) -> dict[str, int]:
    """Every stream's seed, as recorded in result rows (all derived from ``seed`` by name)."""
    return {"seed_forecaster": derive_seed(seed, "forecaster", forecaster.name),
            "seed_nature": derive_seed(seed, "nature", nature.name),
            "seed_outcome": derive_seed(seed, "outcome", nature.name),
            "seed_draw": derive_seed(seed, "forecast-draw", nature.name)}


def _who_broke(exc: BaseException) -> str:
    return "forecaster" if isinstance(exc, ProtocolError) and str(exc).startswith("forecaster") else "nature"


def play(game: str, forecaster: Forecaster | str, nature: Nature | str, T: int, seed: int = 0, *,
         forecaster_params: dict | None = None, nature_params: dict | None = None,
         referee: Referee | None = None, keep_forecasts: bool | None = None, fast_path: bool = True) -> Result:
    """Play one matchup and referee it.

    Plugins may be instances or registered names (with ``*_params`` for their
    constructor). A plugin that raises or breaks the protocol forfeits: the result
    keeps the rounds played and ``result.forfeit`` says who, when and why.

    ``fast_path`` lets a forecaster with ``play_oblivious`` play all rounds at once
    against an oblivious nature when no Forecast objects are kept (``keep_forecasts``
    is false; it defaults to ``T <= 10_000``); the record is the same as the step loop's.

    Examples
    --------
    >>> r = play("binary", "k29", "iid_bernoulli", T=500, seed=0)
    >>> r.certificates["smce"].holds, len(r.trace)
    (True, 500)
    >>> round(r.summary["bias"], 3) < 0.05
    True
    """
    if isinstance(T, bool) or not isinstance(T, (int, np.integer)) or T <= 0:
        raise ValueError(f"T={T!r}: the horizon must be a positive integer, e.g. T=1000")
    g = get_game(game)
    fc = make_forecaster(forecaster, **(forecaster_params or {}))
    if not plays(g, fc):
        raise ValueError(f"forecaster {fc.name!r} plays {fc.games}, not the {g.name!r} game")
    env = ForecastEnv(nature, int(T), g, nature_params,
                      keep_forecasts=(T <= 10_000) if keep_forecasts is None else keep_forecasts)
    referee = referee or Referee()
    fc.game = g
    fc.reset(derive_rng(seed, "forecaster", fc.name))
    start = time.perf_counter()
    x, _ = env.reset(seed=seed)
    t_fc = _play_oblivious(env, fc) if fast_path else None
    if t_fc is None:
        if env.t != 1:  # the fast path gave up after playing: replay from the start
            fc.reset(derive_rng(seed, "forecaster", fc.name))
            x, _ = env.reset(seed=seed)
        t_fc, forfeit = _play_steps(env, fc, x)
    else:
        forfeit = None
    t_game = time.perf_counter() - start
    rec = env.recorder.view()
    summary, certs, curves = referee.score(g, rec, fc)
    t_ref = time.perf_counter() - start - t_game
    seconds = {"forecaster": t_fc, "arena": t_game - t_fc, "referee": t_ref,
               "forecaster_per_step": t_fc / max(rec.n, 1)}
    return Result(g.name, fc, env.nature, int(T), int(seed), rec, summary, certs, curves, seconds, forfeit)


def _play_steps(env: ForecastEnv, fc: Forecaster, x) -> tuple[float, Forfeit | None]:
    """The step loop: predict, the environment's round (``env.play_round``: ``env.step`` without
    Gymnasium's reward and info), update. Returns the forecaster's seconds and any forfeit."""
    forfeit = None
    t_fc = 0.0
    clock, predict, play_round, update = time.perf_counter, fc.predict, env.play_round, fc.update  # looked up once
    for t in range(1, env.T + 1):
        t0 = clock()
        try:
            f = predict(x)
        except Exception as exc:  # a misbehaving plugin forfeits; the rounds played are kept
            forfeit = Forfeit("forecaster", t, f"predict raised {type(exc).__name__}: {exc}")
            break
        t1 = clock()
        try:
            x_next, p, y, _ = play_round(f)  # env.step without the reward and info
        except Exception as exc:
            forfeit = Forfeit(_who_broke(exc), t, f"{type(exc).__name__}: {exc}")
            break
        t2 = clock()
        try:
            update(x, p, y)
        except Exception as exc:
            forfeit = Forfeit("forecaster", t, f"update raised {type(exc).__name__}: {exc}")
            break
        t_fc += (t1 - t0) + (clock() - t2)
        x = x_next
    return t_fc, forfeit


class _Declined(Exception):
    """The oblivious fast path cannot reproduce this game; the step loop plays it."""


def _play_oblivious(env: ForecastEnv, fc: Forecaster) -> float | None:
    """Play all rounds at once against an oblivious nature; the forecaster's seconds, or None.

    None when the fast path does not apply or anything is off the protocol: the step loop
    then plays the game (from the start) and reports any forfeit at its round.
    """
    nature, game = env.nature, env.game
    plain_game = game.name == "binary" and getattr(env.recorder, "atoms", None) is None and all(
        getattr(type(game), m) is getattr(Game, m) for m in ("present_context", "scored_context", "outcome_prob"))
    if (nature.adaptive or env.keep_forecasts or not plain_game  # outcomes are checked as bits below
            or type(nature).observe is not Nature.observe
            or not callable(getattr(fc, "play_oblivious", None)) or not getattr(fc, "can_play_oblivious", True)):
        return None
    try:
        X, y, y_prob = _oblivious_outcomes(env)
    except Exception:  # noqa: BLE001 (the step loop reproduces the error at its round)
        env.t = -1
        return None
    u = env._draw_rng.random(env.T)  # the same numbers as T single draws
    env.t = -1  # streams consumed: a fallback must reset
    t0 = time.perf_counter()
    try:
        out = fc.play_oblivious(X, y, u)
    except Exception:  # noqa: BLE001
        return None
    t_fc = time.perf_counter() - t0
    if out is None:
        return None
    p_mean, p, p_int = (np.asarray(a, dtype=np.float64) for a in out)
    lo, hi = env.game.forecast_low, env.game.forecast_high
    if any(a.shape != y.shape for a in (p_mean, p, p_int)) or not np.all((p >= lo) & (p <= hi)):
        return None
    rec = env.recorder
    rec.X[:], rec.p_mean[:], rec.p[:], rec.p_internal[:], rec.y[:], rec.y_prob[:] = X, p_mean, p, p_int, y, y_prob
    rec.n, rec.forecasts = env.T, None
    env.t = env.T + 1
    return t_fc


def _oblivious_outcomes(env: ForecastEnv) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Contexts, outcomes and P(y = 1) of every round, drawn as ForecastEnv.step draws them.

    Nature's stream runs context(t), respond(t) in round order (an oblivious nature ignores
    the forecast it is shown); the outcome stream gives one uniform per Bernoulli law or
    plain outcome (batched) and its own draws to any other law, in round order.
    """
    nature, T, d = env.nature, env.T, env.nature.context_dim
    X = np.zeros((T, d))
    y, probs, coin = [0.0] * T, [0.0] * T, [False] * T  # lists: cheaper per round than arrays
    y_prob = np.full(T, np.nan)
    rng, shown, x = env._outcome_rng, Forecast.point(0.5), env._x
    raw, pending = None, 0  # pending: the first round whose single uniform is not drawn yet

    def draw_pending(stop: int) -> None:
        s = slice(pending, stop)
        uniform, c, q = rng.random(stop - pending), np.array(coin[s], dtype=bool), np.array(probs[s])
        y[s] = np.where(c, np.where(uniform < q, 1.0, 0.0), y[s]).tolist()
        y_prob[s] = np.where(c, 1.0 - (1.0 - q), np.nan)  # 1 - Bernoulli.cdf(0)

    for i in range(T):
        if i:
            new = nature.context(i + 1)
            if new is not raw:  # natures without contexts return the same empty array
                raw, x = new, np.asarray(new, dtype=np.float64).reshape(-1)
                if x.size != d:
                    raise _Declined
        if d:
            X[i] = x
        answer = nature.respond(i + 1, x, shown)
        if type(answer) is Bernoulli:
            probs[i], coin[i] = answer.p, True
        elif isinstance(answer, OutcomeLaw):
            draw_pending(i)
            y[i], y_prob[i] = float(answer.sample(rng)), 1.0 - answer.cdf(0.0)
            pending = i + 1
        else:
            y[i] = float(answer)
    draw_pending(T)
    y = np.array(y, dtype=np.float64)
    if not (np.all(np.isfinite(X)) and np.all((y == 0.0) | (y == 1.0))):
        raise _Declined  # the step loop names the bad round
    return X, y, y_prob


__all__ = ["play", "Result", "Forfeit", "seeds", "nature_streams"]
