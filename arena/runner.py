"""Play one matchup: forecaster vs nature in a game for T rounds, then referee it.

:func:`play` is the Python entry point for notebooks; the command line calls it once per
matchup and turns the :class:`Result` into a row of the results table.

The loop is plain Python over the plugin verbs (predict, step, update), so plugins never
see how the game is driven; a compiled or vectorized path can replace this loop for
plugins that offer one without changing any plugin.
"""

from __future__ import annotations

import json
import resource
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from arena.env import ForecastEnv, Recorder, nature_streams
from arena.games import get_game
from arena.protocols import Forecaster, Nature, ProtocolError
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
         referee: Referee | None = None, keep_forecasts: bool | None = None) -> Result:
    """Play one matchup and referee it.

    Plugins may be instances or registered names (with ``*_params`` for their
    constructor). A plugin that raises or breaks the protocol forfeits: the result
    keeps the rounds played and ``result.forfeit`` says who, when and why.

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
    if g.name not in fc.games:
        raise ValueError(f"forecaster {fc.name!r} plays {fc.games}, not the {g.name!r} game")
    env = ForecastEnv(nature, int(T), g, nature_params,
                      keep_forecasts=(T <= 10_000) if keep_forecasts is None else keep_forecasts)
    referee = referee or Referee()
    fc.game = g
    fc.reset(derive_rng(seed, "forecaster", fc.name))
    forfeit = None
    t_fc = 0.0
    start = time.perf_counter()
    x, _ = env.reset(seed=seed)
    for t in range(1, int(T) + 1):
        t0 = time.perf_counter()
        try:
            f = fc.predict(x)
        except Exception as exc:  # a misbehaving plugin forfeits; the rounds played are kept
            forfeit = Forfeit("forecaster", t, f"predict raised {type(exc).__name__}: {exc}")
            break
        t1 = time.perf_counter()
        try:
            x_next, _, _, _, info = env.step(f)
        except Exception as exc:
            forfeit = Forfeit(_who_broke(exc), t, f"{type(exc).__name__}: {exc}")
            break
        t2 = time.perf_counter()
        try:
            fc.update(x, info["p"], info["y"])
        except Exception as exc:
            forfeit = Forfeit("forecaster", t, f"update raised {type(exc).__name__}: {exc}")
            break
        t_fc += (t1 - t0) + (time.perf_counter() - t2)
        x = x_next
    t_game = time.perf_counter() - start
    rec = env.recorder.view()
    summary, certs, curves = referee.score(g, rec, fc)
    t_ref = time.perf_counter() - start - t_game
    seconds = {"forecaster": t_fc, "arena": t_game - t_fc, "referee": t_ref,
               "forecaster_per_step": t_fc / max(rec.n, 1)}
    return Result(g.name, fc, env.nature, int(T), int(seed), rec, summary, certs, curves, seconds, forfeit)


__all__ = ["play", "Result", "Forfeit", "seeds", "nature_streams"]
