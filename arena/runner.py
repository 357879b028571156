"""Play one matchup: forecaster vs nature in a game for T rounds, then referee it.

:func:`play` is the Python entry point for notebooks; the command line calls it once per
matchup and turns the :class:`Result` into a row of the results table.

The loop is plain Python over the plugin verbs (predict, step, update), so plugins never
see how the game is driven. Against an oblivious nature a forecaster may offer
``play_oblivious(X, y, u) -> (p_mean, p, p_internal)``: the runner then draws the
contexts, outcomes and forecast uniforms first, with the same streams in the same order
as the environment, and lets the forecaster play every round at once (K29 in compiled
code). The recorded game is identical to the step loop's (``fast_path=False``).

With ``time_limit`` a plugin call that runs too long forfeits (see :class:`_Watchdog`);
with ``trace_path`` the per-round trace is written to a Parquet file (:func:`write_trace`).
"""

from __future__ import annotations

import ctypes
import json
import operator
import os
import resource
import signal
import threading
import time
from dataclasses import dataclass, field
from itertools import repeat
from pathlib import Path

import numpy as np

from arena.env import CALLS, ForecastEnv, Recorder
from arena.games import Game
from arena.lazy import LazyModule
from arena.matchup import Matchup, build_matchup, check_length
from arena.protocols import Bernoulli, Forecast, Forecaster, Nature, OutcomeLaw, ProtocolError
from arena.referee import Certificate, Referee
from arena.seeding import forecaster_rng, stream_seeds

pd = LazyModule("pandas")  # imported when a table is read (curves, trace): playing a game does not load it

#: The columns of a curves row (t, metric, value): the rows a game records, and the frame made of them.
_CURVE_ROW = ("t", "metric", "value")


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
        return pd.DataFrame(_trace_columns(self.recorder, 0, self.recorder.n))

    def row(self) -> dict:
        """One flat row of the results table: config, seeds, metrics, certificates, timing."""
        from arena import __version__

        fparams, nparams = _jsonable(self.forecaster.params()), _jsonable(self.nature.params())
        row = {
            "game": self.game,
            "forecaster": self.forecaster.name,
            "nature": self.nature.name,
            "forecaster_family": str(getattr(self.forecaster, "family", "baseline")),
            "seed": self.seed,
            "T": self.T,
            "rounds": self.recorder.n,
            "status": "forfeit" if self.forfeit else "ok",
            "forfeit_who": self.forfeit.who if self.forfeit else "",
            "forfeit_step": self.forfeit.step if self.forfeit else -1,
            "forfeit_reason": self.forfeit.reason if self.forfeit else "",
            "adaptive": bool(self.nature.adaptive),
            "forecaster_params": json.dumps(fparams, sort_keys=True),
            "nature_params": json.dumps(nparams, sort_keys=True),
        }
        row.update(stream_seeds(self.seed, self.forecaster.name, self.nature.name))
        row.update(self.summary)
        for name, c in self.certificates.items():
            row[f"cert.{name}.value"] = c.value
            row[f"cert.{name}.bound"] = c.bound
            row[f"cert.{name}.holds"] = c.holds
            row[f"cert.{name}.verdict"] = c.verdict
            row[f"cert.{name}.reason"] = c.reason
            for k, v in c.extra.items():
                row[f"cert.{name}.{k}"] = v
        row.update({f"seconds_{k}": v for k, v in self.seconds.items()})
        row["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
        row["arena_version"] = __version__
        return row


# the field ``curves`` reads through this property (the dataclass's __init__ assigns it through the setter)
Result.curves = property(Result._get_curves, Result._set_curves, doc="long table (t, metric, value)")


def _trace_columns(rec: Recorder, start: int, stop: int) -> dict[str, np.ndarray | list]:
    """The trace's columns for rounds ``start + 1 .. stop`` (views of the recorder's arrays)."""
    s = slice(start, stop)
    cols = {"t": np.arange(start + 1, stop + 1)}
    for j in range(rec.X.shape[1]):
        cols[f"x_{j}"] = rec.X[s, j]
    if rec.forecasts is not None:
        cols["forecast"] = [str(f) for f in rec.forecasts[s]]
    cols.update(p_announced=rec.p_mean[s], p=rec.p[s], p_internal=rec.p_internal[s], y=rec.y[s], y_prob=rec.y_prob[s])
    if getattr(rec, "atoms", None) is not None:  # two-point games (quantile): atoms and nature's CDF there
        cols.update(
            atom_0=rec.atoms[s, 0],
            atom_1=rec.atoms[s, 1],
            prob_atom_0=rec.prob_lo[s],
            cdf_atom_0=rec.cdf_at_atoms[s, 0],
            cdf_atom_1=rec.cdf_at_atoms[s, 1],
            law_lipschitz=rec.law_lip[s],
            expected_loss=rec.expected_loss[s],
        )
    return cols


def write_trace(rec: Recorder, path: str | os.PathLike, rows: int = 65_536) -> Path:
    """Write the per-round trace (the columns of :attr:`Result.trace`) to a Parquet file.

    The rounds go ``rows`` at a time, one row group each, so memory stays bounded by a
    chunk whatever T; the file is written under a temporary name in the same folder and
    renamed when complete, so ``path`` never holds half a trace.

    Examples
    --------
    >>> import tempfile, pandas as pd
    >>> r = play("binary", "running_mean", "iid_bernoulli", T=100, seed=0)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = write_trace(r.recorder, f"{tmp}/trace.parquet", rows=32)
    ...     pd.read_parquet(path).equals(r.trace)
    True
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    from arena.results import _atomic

    def write(tmp: str) -> None:
        schema = pa.Table.from_pydict(_trace_columns(rec, 0, min(rec.n, 1))).schema
        with pq.ParquetWriter(tmp, schema, write_page_checksum=True) as writer:  # damage is found on reading
            for start in range(0, rec.n, rows):
                writer.write_table(pa.Table.from_pydict(_trace_columns(rec, start, min(start + rows, rec.n))))

    path = Path(path)
    _atomic(path, write)
    return path


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


#: What a misbehaving plugin call may raise and forfeit with: any error, and ``sys.exit`` (which would
#: otherwise end the whole tournament). KeyboardInterrupt (the user's Ctrl-C) and the time limit's
#: interrupt are not caught.
PLUGIN_ERRORS = (Exception, SystemExit)


def _who_broke(exc: BaseException) -> str:
    return "forecaster" if isinstance(exc, ProtocolError) and str(exc).startswith("forecaster") else "nature"


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
) -> Result:
    """Play one matchup and referee it.

    Plugins may be instances or registered names (with ``*_params`` for their
    constructor); :func:`arena.matchup.build_matchup` makes and checks them. A plugin that raises or breaks the protocol forfeits: the result
    keeps the rounds played and ``result.forfeit`` says who, when and why.

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
    Parquet file, a chunk of rounds at a time (:func:`write_trace`); after a forfeit, the
    rounds played.

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
    start = time.perf_counter()
    try:
        if crashed is None:
            fc.reset(forecaster_rng(seed, fc.name))
    except PLUGIN_ERRORS as exc:  # no round is played; the row says who failed in which phase
        t_fc, forfeit = 0.0, Forfeit("forecaster", 0, f"reset raised {type(exc).__name__}: {exc}")
    else:
        t_fc, forfeit = 0.0, crashed
    if crashed is None and forfeit is None:
        dog = _Watchdog(float(time_limit), env.progress) if time_limit is not None else None
        try:
            t_fc, forfeit = _play_game(env, fc, seed, fast_path, dog)
        finally:
            if dog is not None:
                dog.stop()
    if env.recorder is None:  # a reset failed before the record was made: an empty one
        env._recorder = _empty_recorder(env)
    rec = env.recorder.view()  # (writes the rounds still buffered: part of the game's time)
    t_game = time.perf_counter() - start
    summary, certs, curves = m.referee.score(g, rec, fc)
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


def _empty_recorder(env: ForecastEnv) -> Recorder:
    """The record of a game that ended before its first round (its dimensions as far as nature says)."""

    def dim(name: str) -> int:
        try:
            return int(getattr(env.nature, name))
        except Exception:  # noqa: BLE001 (a nature whose reset failed may not know its dimensions)
            return 0

    return Recorder(env.T, dim("context_dim"), False, atoms=env.game.records_atoms, group_dim=dim("group_dim"))


def _play_game(
    env: ForecastEnv, fc: Forecaster, seed: int, fast_path: bool, dog: _Watchdog | None
) -> tuple[float, Forfeit | None]:
    """Reset the game and play it (all rounds at once when the fast path applies, else step by
    step). Returns the forecaster's seconds and any forfeit. The watchdog is stopped once the
    rounds are played, inside the handlers of its interrupt."""
    try:
        try:
            x, _ = env.reset(seed=seed)  # nature's first context is timed too
        except PLUGIN_ERRORS as exc:  # nature's reset or first context failed: round 0, no round played
            return 0.0, Forfeit(_who_broke(exc), 0, f"reset raised {type(exc).__name__}: {exc}")
        t_fc = None
        if fast_path:
            try:
                t_fc = _play_oblivious(env, fc, dog)
                if t_fc is not None and dog is not None:
                    dog.stop()
            except _Timeout:  # over its budget: the step loop replays the game, each call timed
                dog.caught()
                t_fc, env.t = None, -1
        if t_fc is not None:
            return t_fc, None
        if env.t != 1:  # the fast path gave up after playing: replay from the start
            if dog is not None:
                dog.pause()
            fc.reset(forecaster_rng(seed, fc.name))
            x, _ = env.reset(seed=seed)
        return _play_steps(env, fc, x, dog)
    except _Timeout:  # nature's first context
        return 0.0, dog.forfeit()


def _play_steps(env: ForecastEnv, fc: Forecaster, x, dog: _Watchdog | None = None) -> tuple[float, Forfeit | None]:
    """The step loop: predict, the environment's round (``env.play_round``: ``env.step`` without
    Gymnasium's reward and info), update. Returns the forecaster's seconds and any forfeit."""
    forfeit, t_fc, t = None, 0.0, 1
    clock, predict, play_round, update = time.perf_counter, fc.predict, env.play_round, fc.update  # looked up once
    progress = env.progress  # the round of each call, for the watchdog (a store costs a few ns)
    try:
        for t in range(1, env.T + 1):
            progress[0] = t  # predict
            t0 = clock()
            try:
                f = predict(x)
            except PLUGIN_ERRORS as exc:  # a misbehaving plugin forfeits; the rounds played are kept
                forfeit = Forfeit("forecaster", t, f"predict raised {type(exc).__name__}: {exc}")
                break
            t1 = clock()
            try:
                x_next, p, y, _ = play_round(f)
            except PLUGIN_ERRORS as exc:
                forfeit = Forfeit(_who_broke(exc), t, f"{type(exc).__name__}: {exc}")
                break
            progress[4] = t  # update
            t2 = clock()
            try:
                update(x, p, y)
            except PLUGIN_ERRORS as exc:
                forfeit = Forfeit("forecaster", t, f"update raised {type(exc).__name__}: {exc}")
                break
            t_fc += (t1 - t0) + (clock() - t2)
            x = x_next
        if dog is not None:
            dog.stop()  # no interrupt after this (one on its way is absorbed)
    except _Timeout:  # wherever it lands, the call that overran forfeits
        forfeit = dog.forfeit()
    return t_fc, forfeit


class _Timeout(BaseException):
    """Raised in the playing thread when a plugin call overruns the time limit (a BaseException,
    so that a plugin's ``except Exception`` does not swallow it)."""


class _Watchdog:
    """Stops a plugin call that runs past ``limit`` seconds, at almost no cost per call.

    The loop stores the round of every call it makes in ``progress`` (one cell per kind of
    call, :data:`arena.env.CALLS`); a daemon thread looks at the cells every ``limit / 4``
    seconds. When they have not changed for ``limit`` seconds, the latest call (the greatest
    round, then the latest kind within it) has run at least that long: the thread raises
    :class:`_Timeout` in the playing thread. In the main thread it sends SIGALRM, whose
    handler (installed for the game only) raises it; a signal also interrupts ``time.sleep``
    and other blocking calls. In any other thread (Ray, joblib workers) it uses
    ``PyThreadState_SetAsyncExc``, which acts at the thread's next Python instruction (not
    during a sleep). Neither stops compiled code that never returns to Python.
    """

    def __init__(self, limit: float, progress: list):
        self.limit, self.progress = limit, progress
        self.overrun: tuple[str, int] | None = None  # (call, round) of the call that ran too long
        self._lock, self._done, self._pending = threading.Lock(), threading.Event(), False
        self._ident = threading.get_ident()
        self._signal = threading.current_thread() is threading.main_thread() and hasattr(signal, "pthread_kill")
        if self._signal:
            self._old = signal.signal(signal.SIGALRM, self._on_signal)
        self._thread = threading.Thread(target=self._watch, name="arena-watchdog", daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        seen, since, fired, tick = None, time.monotonic(), None, self.limit / 4
        while not self._done.wait(tick):
            now, calls = time.monotonic(), self.progress[:]
            if calls != seen:  # a call started since the last look
                seen, since = calls, now
            elif now - since >= self.limit and calls != fired and any(t is not None for t in calls):
                t, i = max((t, i) for i, t in enumerate(calls) if t is not None)
                with self._lock:
                    if self._done.is_set():
                        return
                    self.overrun, self._pending, fired = (CALLS[i], t), True, calls
                    if self._signal:
                        signal.pthread_kill(self._ident, signal.SIGALRM)
                    else:
                        ctypes.pythonapi.PyThreadState_SetAsyncExc(
                            ctypes.c_ulong(self._ident), ctypes.py_object(_Timeout)
                        )

    def _on_signal(self, signum, frame) -> None:
        if self._pending:
            self._pending = False
            raise _Timeout
        if callable(self._old):  # someone else's alarm
            self._old(signum, frame)

    def pause(self) -> None:
        """Time nothing until the next call (the loop's own work in between)."""
        self.progress[:] = [None] * len(self.progress)

    def caught(self) -> None:
        """Its interrupt reached the playing thread, whose handler caught it: none is on its way any more."""
        self._pending = False

    def forfeit(self) -> Forfeit:
        """The forfeit of the call that ran too long (nature's context of round t + 1 is fetched in round t), from
        the handler that caught its interrupt."""
        self.caught()
        call, t = self.overrun
        who = "forecaster" if call in ("predict", "update", "play_oblivious") else "nature"
        return Forfeit(who, max(t, 1), f"{call} exceeded the time limit of {self.limit:g} s")

    def stop(self) -> None:
        """Stop watching and restore the signal handler; an interrupt already on its way is
        absorbed here, so that none is raised after the game. An asynchronous exception on its way
        is taken here too (it comes at this thread's next instruction), never withdrawn: on CPython
        3.11, ``PyThreadState_SetAsyncExc(id, NULL)`` leaves the interpreter's eval breaker set for
        good, and then any function called under a trace function (a debugger, coverage,
        Hypothesis) loops forever on its first instruction."""
        while True:
            try:
                with self._lock:
                    self._done.set()  # no interrupt after this
                deadline = time.monotonic() + 1.0
                while self._pending and time.monotonic() < deadline:
                    time.sleep(0.001)  # the handler of SIGALRM, or this thread's next instruction, raises here
                if self._signal:
                    signal.signal(signal.SIGALRM, self._old)
                    self._signal = False
                self._thread.join()
                return
            except _Timeout:
                self._pending = False
                continue


class _Declined(Exception):
    """The oblivious fast path cannot reproduce this game; the step loop plays it."""


def _play_oblivious(env: ForecastEnv, fc: Forecaster, dog: _Watchdog | None = None) -> float | None:
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
    for name, a in zip(("X", "p_mean", "p", "p_internal", "y", "y_prob"), (X, p_mean, p, p_int, y, y_prob)):
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
                    raise _Declined
        if d:
            X[i] = x
        progress[1] = i + 1  # respond
        take(i, nature.respond(i + 1, x, shown))
    draw_pending(T)
    y = np.array(y, dtype=np.float64)
    if not (np.all(np.isfinite(X)) and np.all((y == 0.0) | (y == 1.0))):
        raise _Declined  # the step loop names the bad round
    return X, y, y_prob


__all__ = ["Forfeit", "Result", "play", "play_matchup", "write_trace"]
