"""Play one matchup: forecaster vs nature in a game for T rounds, then referee it.

:func:`play` is the Python entry point for notebooks; the command line calls it once per
matchup and turns the :class:`Result` into a row of the results table.

The loop is plain Python over the plugin verbs: the forecaster predicts, the environment checks
the forecast and plays the round by :mod:`arena.rules`, the forecaster updates; plugins never
see how the game is driven. Against an oblivious nature a forecaster may offer
``play_oblivious(X, y, u) -> (p_mean, p, p_internal)``: the runner then draws the
contexts, outcomes and forecast uniforms first, with the same streams in the same order
as the environment, and lets the forecaster play every round at once (K29 in compiled
code; :mod:`arena.oblivious`). The recorded game is identical to the step loop's (``fast_path=False``).

With ``time_limit`` a plugin call that runs too long forfeits (:mod:`arena.watchdog`);
with ``trace_path`` the per-round trace is written to a Parquet file (:func:`arena.trace.write_trace`).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from arena.env import ForecastEnv, Recorder
from arena.lazy import LazyModule
from arena.matchup import Matchup, build_matchup, check_length
from arena.oblivious import ReadForecast, applies, play_oblivious
from arena.protocols import Forecaster, Nature
from arena.referee import Certificate, Referee
from arena.results import Forfeit, result_row
from arena.sealed import Sealed
from arena.seeding import forecaster_rng
from arena.supervise import ctrl_c_noticed
from arena.trace import trace_columns, write_trace
from arena.watchdog import Timeout, Watchdog, plugin_failure

pd = LazyModule("pandas")  # imported when a table is read (curves, trace): playing a game does not load it

#: The columns of a curves row (t, metric, value): the rows a game records, and the frame made of them.
_CURVE_ROW = ("t", "metric", "value")


@dataclass
class Result:
    """The outcome of one matchup.

    Attributes
    ----------
    summary : metric name -> value (on the rounds played).
    certificates : certificate name -> :class:`arena.referee.Certificate`.
    curves : long table (t, metric, value) at log-spaced checkpoints. It may be given as its rows
        (tuples): the DataFrame is built when first read, so that playing loads no pandas.
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

    def _get_curves(self) -> pd.DataFrame:
        curves = self.__dict__["_curves"]
        if isinstance(curves, list):  # rows (t, metric, value): the frame, once
            curves = self.__dict__["_curves"] = pd.DataFrame(curves, columns=list(_CURVE_ROW))
        return curves

    def _set_curves(self, curves) -> None:
        self.__dict__["_curves"] = curves

    def curves_columns(self):
        """The curves as column -> values, as :func:`arena.results.save_matchup` stores them: from the rows
        without pandas (a worker that plays and stores matchups never loads it), the same lists as the frame's;
        a frame already made is handed over as it is."""
        curves = self.__dict__["_curves"]
        if isinstance(curves, list):
            return {c: [r[k] for r in curves] for k, c in enumerate(_CURVE_ROW)}
        return curves  # a frame: its columns as they are (arena.results._columns reads either)

    @property
    def trace(self) -> pd.DataFrame:
        return pd.DataFrame(trace_columns(self.recorder, 0, self.recorder.n))

    def row(self) -> dict:
        """One flat row of the results table (:func:`arena.results.result_row`)."""
        return result_row(self)


# the field ``curves`` reads through this property (the dataclass's __init__ assigns it through the setter)
Result.curves = property(Result._get_curves, Result._set_curves, doc="long table (t, metric, value)")


def play(
    game: str,
    forecaster: Forecaster | str,
    nature: Nature | str,
    T: int,
    seed: int = 0,
    *,
    forecaster_params: dict | None = None,
    nature_params: dict | None = None,
    referee: Referee | None = None,
    keep_forecasts: bool | None = None,
    fast_path: bool = True,
    time_limit: float | None = None,
    trace_path: str | os.PathLike | None = None,
    sealed: bool = False,
) -> Result:
    """Play one matchup and referee it.

    Plugins may be instances or registered names (with ``*_params`` for their
    constructor); :func:`arena.matchup.build_matchup` makes and checks them. A plugin that raises or
    breaks the protocol forfeits: the result keeps the rounds played and ``result.forfeit`` says who,
    when and why.

    ``fast_path`` lets a forecaster with ``play_oblivious`` play all rounds at once
    against an oblivious nature when no Forecast objects are kept (``keep_forecasts``
    is false; it defaults to ``T <= 10_000``); the record is the same as the step loop's.

    ``time_limit`` (seconds) bounds every single call of the forecaster's predict and
    update and of nature's context, respond and observe: a call that runs longer is
    stopped and forfeits like an exception (``Forfeit(who, step, "predict exceeded the
    time limit of 0.5 s")``). A call is stopped between ``time_limit`` and about 1.5 times
    ``time_limit`` after it started. A ``play_oblivious`` batch gets ``T * time_limit`` in all;
    past that (or when a call of nature overruns on the fast path) the step loop replays the
    game, each call with its own limit, and names the round. Resets are not timed, and
    compiled code that never returns to Python (a numba loop) cannot be stopped.

    ``trace_path`` writes the per-round trace (:attr:`Result.trace`'s columns) to that
    Parquet file, a chunk of rounds at a time (:func:`arena.trace.write_trace`); after a forfeit, the
    rounds played.

    ``sealed`` plays the forecaster in a process of its own (:mod:`arena.sealed`): what it does to its
    interpreter changes no score. It plays round by round (no fast path), each call a round trip.

    Examples
    --------
    >>> r = play("binary", "k29", "iid_bernoulli", T=500, seed=0)
    >>> r.certificates["smce"].holds, len(r.trace)
    (True, 500)
    >>> round(r.summary["bias"], 3) < 0.05
    True
    """
    m = build_matchup(
        game,
        forecaster,
        nature,
        T,
        seed,
        forecaster_params=forecaster_params,
        nature_params=nature_params,
        referee=referee,
        time_limit=time_limit,
        sealed=sealed,
    )
    return play_matchup(m, keep_forecasts=keep_forecasts, fast_path=fast_path, trace_path=trace_path)


def play_matchup(
    m: Matchup,
    *,
    keep_forecasts: bool | None = None,
    fast_path: bool = True,
    trace_path: str | os.PathLike | None = None,
    crashed: Forfeit | None = None,
) -> Result:
    """Play a matchup that :func:`arena.matchup.build_matchup` built, and referee it (see :func:`play`).

    ``crashed``: the matchup ended the process that played it (:mod:`arena.supervise`); it is not
    played again, its result is that forfeit with no round played.
    """
    if m.forecaster is None:
        raise ValueError("the matchup has no forecaster; build it with one (a Gymnasium agent plays ForecastEnv)")
    if trace_path is not None and not Path(trace_path).parent.is_dir():
        raise ValueError(
            f"trace_path={str(trace_path)!r}: the folder {str(Path(trace_path).parent)!r} does not "
            "exist; create it first"
        )
    T, seed, fc, g, time_limit = m.T, m.seed, m.forecaster, m.game, m.time_limit
    env = ForecastEnv.from_matchup(m, keep_forecasts=(T <= 10_000) if keep_forecasts is None else keep_forecasts)
    fc.game = g
    if crashed is None:
        check_length(m.nature, T)  # a horizon longer than nature's data is the config's fault, not a forfeit
        check_length(fc, T)
    start = time.perf_counter()
    with ctrl_c_noticed():  # a plugin's KeyboardInterrupt forfeits; a Ctrl-C this process receives interrupts
        try:
            if crashed is None:
                fc.reset(forecaster_rng(seed, fc.name))
        except BaseException as exc:  # no round is played; the row says who failed in which phase
            t_fc, forfeit = 0.0, Forfeit("forecaster", 0, f"reset raised {plugin_failure(exc)}")
        else:
            t_fc, forfeit = 0.0, crashed
        if crashed is None and forfeit is None:
            dog = Watchdog(float(time_limit), env.progress) if time_limit is not None else None
            try:
                t_fc, forfeit = _play_game(env, fc, seed, fast_path, dog)
            finally:
                if dog is not None:
                    dog.stop()
    rec = env.recorder.view()
    t_game = time.perf_counter() - start
    summary, certs, curves = m.referee.score(g, rec, fc)
    if isinstance(fc, Sealed):  # its process ends; the result keeps its plain attributes
        fc.close()
    t_ref = time.perf_counter() - start - t_game
    seconds = {
        "forecaster": t_fc,
        "arena": t_game - t_fc,
        "referee": t_ref,
        "forecaster_per_step": t_fc / max(rec.n, 1),
    }
    if trace_path is not None:
        write_trace(rec, trace_path)
    return Result(g.name, fc, env.nature, T, seed, rec, summary, certs, curves, seconds, forfeit)


def _play_game(
    env: ForecastEnv, fc: Forecaster, seed: int, fast_path: bool, dog: Watchdog | None
) -> tuple[float, Forfeit | None]:
    """Reset the game and play it (all rounds at once when the fast path applies, else step by
    step). Returns the forecaster's seconds and any forfeit. The watchdog is stopped once the
    rounds are played, inside the handlers of its interrupt."""
    try:
        try:
            x, _ = env.reset(seed=seed)  # nature's first context is timed too
        except BaseException as exc:  # nature's reset or first context failed: round 0, no round played
            return 0.0, Forfeit("nature", 0, f"reset raised {plugin_failure(exc)}")
        if fast_path and applies(env, fc):
            try:
                t_fc = play_oblivious(env, fc, dog)
                if t_fc is not None and dog is not None:
                    dog.stop()
            except Timeout:  # over its budget: the step loop replays the game, each call timed
                dog.caught()
                t_fc = None
            except ReadForecast as exc:  # a nature that is not oblivious: the fast path would play another game
                return 0.0, Forfeit("nature", exc.step, str(exc))
            if t_fc is not None:
                return t_fc, None
            if dog is not None:  # the fast path gave up: the step loop replays the game from the start
                dog.pause()
            fc.reset(forecaster_rng(seed, fc.name))
            x, _ = env.reset(seed=seed)
        return _play_steps(env, fc, x, dog)
    except Timeout:  # nature's first context
        return 0.0, dog.forfeit()


def _play_steps(env: ForecastEnv, fc: Forecaster, x, dog: Watchdog | None = None) -> tuple[float, Forfeit | None]:
    """The step loop: the forecaster predicts, the environment checks the forecast (:meth:`ForecastEnv.announce`)
    and plays the round (:meth:`ForecastEnv.play_round`), the forecaster updates. Returns the forecaster's seconds
    and any forfeit, which names the plugin whose call failed."""
    forfeit, t_fc, t = None, 0.0, 1
    clock, progress = time.perf_counter, env.progress  # progress: the round of each call, for the watchdog
    try:
        for t in range(1, env.T + 1):
            progress[0] = t  # predict
            t0 = clock()
            try:
                f = fc.predict(x)
            except BaseException as exc:  # a misbehaving plugin forfeits; the rounds played are kept
                forfeit = Forfeit("forecaster", t, f"predict raised {plugin_failure(exc)}")
                break
            t1 = clock()
            try:
                f = env.announce(f)
            except BaseException as exc:
                forfeit = Forfeit("forecaster", t, plugin_failure(exc))
                break
            try:
                x_next, p, y, _ = env.play_round(f)
            except BaseException as exc:
                forfeit = Forfeit("nature", t, plugin_failure(exc))
                break
            progress[4] = t  # update
            t2 = clock()
            try:
                fc.update(x, p, y)
            except BaseException as exc:
                forfeit = Forfeit("forecaster", t, f"update raised {plugin_failure(exc)}")
                break
            t_fc += (t1 - t0) + (clock() - t2)
            x = x_next
        if dog is not None:
            dog.stop()  # no interrupt after this (one on its way is absorbed)
    except Timeout:  # wherever it lands, the call that overran forfeits
        forfeit = dog.forfeit()
    return t_fc, forfeit


__all__ = ["Result", "play", "play_matchup"]
