"""The runner's game loop: time limits (forfeit on a plugin that hangs), streamed traces, and
the loop's bookkeeping (buffered recording, the outcome coin) against unbuffered references."""

from __future__ import annotations

import ctypes
import math
import signal
import threading
import time

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

import arena  # noqa: F401  (registers the plugins)
from arena.env import ForecastEnv
from arena.protocols import Bernoulli, Forecast, Forecaster, Nature, OutcomeLaw
from arena.runner import play
from arena.seeding import nature_streams
from arena.trace import write_trace
from arena.watchdog import Timeout, Watchdog

LIMIT = 0.2  # seconds; a stalled call lasts STALL unless it is stopped
STALL = 5.0


def stall(how: str, seconds: float = STALL) -> None:
    if how == "sleep":
        time.sleep(seconds)
    else:  # a pure-Python loop
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            pass


class Stalling(Forecaster):
    """Forecasts 0.5; its ``call`` (predict or update) stalls at round ``at``."""

    name = "fake_stalling"

    def __init__(self, call: str = "predict", at: int = 4, how: str = "sleep", seconds: float = STALL):
        self.call, self.at, self.how, self.seconds = call, at, how, seconds

    def reset(self, rng):
        self.t = 1

    def predict(self, x):
        if self.call == "predict" and self.t == self.at:
            stall(self.how, self.seconds)
        return 0.5

    def update(self, x, p, y):
        if self.call == "update" and self.t == self.at:
            stall(self.how, self.seconds)
        self.t += 1


class StallingNature(Nature):
    """A fair coin with a one-feature context; its ``call`` stalls at round ``at``."""

    name = "fake_stalling_nature"
    adaptive = True  # observes
    context_dim = 1

    def __init__(self, call: str = "respond", at: int = 3, how: str = "sleep"):
        self.call, self.at, self.how = call, at, how

    def context(self, t):
        if self.call == "context" and t == self.at:
            stall(self.how)
        return np.array([float(t)])

    def respond(self, t, x, forecast):
        if self.call == "respond" and t == self.at:
            stall(self.how)
        return Bernoulli(0.5)

    def observe(self, t, p, y):
        if self.call == "observe" and t == self.at:
            stall(self.how)


class Crasher(Forecaster):
    name = "fake_crasher"

    def reset(self, rng):
        self.t = 0

    def predict(self, x):
        self.t += 1
        if self.t == 7:
            raise ZeroDivisionError("oops")
        return 0.25

    def update(self, x, p, y):
        pass


def timed_play(*args, **kwargs):
    """The result and the seconds the game took (the referee's first scoring compiles code: not counted)."""
    r = play(*args, **kwargs)
    return r, r.seconds["forecaster"] + r.seconds["arena"]


# --------------------------------------------------------------------------- time limits


@pytest.mark.parametrize("how", ["sleep", "spin"])
@pytest.mark.parametrize(("call", "at", "rounds"), [("predict", 4, 3), ("update", 4, 4)])
def test_a_forecaster_call_past_the_time_limit_forfeits(call, at, rounds, how):
    r, seconds = timed_play("binary", Stalling(call, at, how), "iid_bernoulli", T=10, time_limit=LIMIT)
    assert (r.forfeit.who, r.forfeit.step) == ("forecaster", at), r.forfeit
    assert r.forfeit.reason == f"{call} exceeded the time limit of 0.2 s"
    assert r.recorder.n == rounds and len(r.trace) == rounds  # the rounds before are kept
    assert seconds < STALL / 2, f"the stalled {call} was not stopped ({seconds:.2f} s)"


@pytest.mark.parametrize("how", ["sleep", "spin"])
@pytest.mark.parametrize(
    ("call", "at", "step", "rounds"),
    [
        ("respond", 3, 3, 2),
        ("observe", 3, 3, 2),
        ("context", 5, 4, 4),  # the context of round 5 is revealed at the end of round 4
        ("context", 1, 1, 0),  # the first context, revealed by reset
    ],
)
def test_a_nature_call_past_the_time_limit_forfeits(call, at, step, rounds, how):
    r, seconds = timed_play("binary", "constant", StallingNature(call, at, how), T=10, time_limit=LIMIT)
    assert r.forfeit is not None and (r.forfeit.who, r.forfeit.step) == ("nature", step), r.forfeit
    assert r.forfeit.reason == f"{call} exceeded the time limit of 0.2 s"
    assert r.recorder.n == rounds
    np.testing.assert_array_equal(r.recorder.X[:, 0], np.arange(1, rounds + 1))
    assert seconds < STALL / 2


def test_a_slow_call_that_finishes_is_not_a_forfeit():
    slow = Stalling("predict", at=3, seconds=0.3)
    r, seconds = timed_play("binary", slow, "iid_bernoulli", T=10)  # no limit
    assert r.forfeit is None and r.recorder.n == 10 and seconds >= 0.3
    r = play("binary", slow, "iid_bernoulli", T=10, time_limit=5.0)  # within the limit
    assert r.forfeit is None and r.recorder.n == 10


def test_a_long_game_of_quick_calls_is_not_a_forfeit():
    """Only single calls are timed: the whole game takes many times the limit."""

    class Busy(Stalling):
        def predict(self, x):
            stall("spin", 0.01)
            return 0.5

    r = play("binary", Busy(), "iid_bernoulli", T=60, time_limit=0.1)
    assert r.forfeit is None and r.recorder.n == 60


@pytest.mark.parametrize("time_limit", [None, 1.0])
def test_a_forecaster_that_raises_still_forfeits(time_limit):
    r = play("binary", Crasher(), "iid_bernoulli", T=20, time_limit=time_limit)
    assert (r.forfeit.who, r.forfeit.step) == ("forecaster", 7)
    assert r.forfeit.reason == "predict raised ZeroDivisionError: oops"
    assert r.recorder.n == 6


def test_the_time_limit_does_not_change_the_game():
    for nature in ("logistic", "anti_forecaster"):
        a = play("binary", "running_mean", nature, T=300, seed=3)
        b = play("binary", "running_mean", nature, T=300, seed=3, time_limit=10.0)
        pd.testing.assert_frame_equal(a.trace, b.trace)
    a = play("binary", "k29", "iid_bernoulli", T=2000, seed=1)  # the fast path, under a budget
    b = play("binary", "k29", "iid_bernoulli", T=2000, seed=1, time_limit=10.0)
    np.testing.assert_array_equal(a.recorder.p, b.recorder.p)


def test_a_fast_path_over_its_budget_falls_back_to_the_step_loop():
    class SlowBatch(Stalling):
        def play_oblivious(self, X, y, u):  # T * time_limit = 1 s in all
            stall("spin")

    r, seconds = timed_play("binary", SlowBatch("none"), "iid_bernoulli", T=5, keep_forecasts=False, time_limit=LIMIT)
    ref = play("binary", Stalling("none"), "iid_bernoulli", T=5, keep_forecasts=False, fast_path=False)
    assert r.forfeit is None and seconds < STALL / 2
    pd.testing.assert_frame_equal(r.trace, ref.trace)


def test_a_nature_call_past_the_limit_on_the_fast_path_forfeits_at_its_round():
    """The fast path gives up; the step loop replays the game and names the round."""

    class StallingOblivious(StallingNature):
        adaptive = False
        observe = Nature.observe

    for call, step, rounds in (("context", 4, 4), ("respond", 5, 4)):
        r, seconds = timed_play(
            "binary", "constant", StallingOblivious(call, 5, "spin"), T=10, keep_forecasts=False, time_limit=LIMIT
        )
        assert (r.forfeit.who, r.forfeit.step, r.recorder.n) == ("nature", step, rounds), r.forfeit
        assert r.forfeit.reason == f"{call} exceeded the time limit of 0.2 s" and seconds < STALL / 2


def test_a_call_past_the_limit_off_the_main_thread_forfeits():
    """In a worker thread the watchdog raises asynchronously (a Python loop is stopped)."""
    out = {}
    worker = threading.Thread(
        target=lambda: out.update(
            r=timed_play("binary", Stalling("predict", 4, "spin"), "iid_bernoulli", T=10, time_limit=LIMIT)
        )
    )
    worker.start()
    worker.join(STALL * 2)
    r, seconds = out["r"]
    assert (r.forfeit.who, r.forfeit.step, r.recorder.n) == ("forecaster", 4, 3) and seconds < STALL / 2


def test_the_watchdog_leaves_nothing_behind():
    before = signal.getsignal(signal.SIGALRM)
    play("binary", Stalling("predict", 2), "iid_bernoulli", T=5, time_limit=LIMIT)
    play("binary", "constant", "iid_bernoulli", T=5, time_limit=LIMIT)
    assert signal.getsignal(signal.SIGALRM) is before
    time.sleep(LIMIT)
    assert not [t for t in threading.enumerate() if t.name == "arena-watchdog"]


def test_an_interrupt_on_its_way_when_the_game_ends_is_absorbed():
    """The race where the watchdog fires just as the game ends: stop() takes the interrupt, in the
    main thread (a signal) and in a worker thread (an asynchronous exception)."""
    before = signal.getsignal(signal.SIGALRM)
    dog = Watchdog(60.0, [None] * 6)

    def fire(target: int, how: str) -> None:  # what the watchdog does, while stop() waits for its lock
        with dog._lock:
            time.sleep(0.1)
            dog._pending = True
            if how == "signal":
                signal.pthread_kill(target, signal.SIGALRM)
            else:
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(target), ctypes.py_object(Timeout))

    threading.Thread(target=fire, args=(threading.get_ident(), "signal")).start()
    time.sleep(0.02)
    dog.stop()  # raises nothing
    sum(range(10_000))
    assert signal.getsignal(signal.SIGALRM) is before

    out, ready, go = {}, threading.Event(), threading.Event()

    def worker() -> None:
        out["dog"] = Watchdog(60.0, [None] * 6)
        ready.set()
        go.wait()
        try:
            out["dog"].stop()  # waits for the lock held below
            sum(range(10_000))
            out["leaked"] = False
        except Timeout:
            out["leaked"] = True

    w = threading.Thread(target=worker)
    w.start()
    ready.wait()
    with out["dog"]._lock:
        go.set()
        time.sleep(0.05)
        out["dog"]._pending = True
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(w.ident), ctypes.py_object(Timeout))
    w.join()
    assert out["leaked"] is False


TRACED_AFTER_A_FORFEIT = """
import sys, threading, time
sys.path.insert(0, sys.argv[1])
from test_runner import LIMIT, Stalling
from arena import play

out = {}
def game():  # a call past the limit in a worker thread: stopped by an asynchronous exception
    out["r"] = play("binary", Stalling("predict", 3, "spin"), "iid_bernoulli", T=10, time_limit=LIMIT)
worker = threading.Thread(target=game)
worker.start()
worker.join()
assert out["r"].forfeit.who == "forecaster", out
sys.settrace(lambda frame, event, arg: None)  # as a debugger, coverage or Hypothesis do
t0 = time.perf_counter()
sum(map(abs, range(1000)))
(lambda: None)()
sys.settrace(None)
print("traced call after the forfeit:", round(time.perf_counter() - t0, 3), "s")
"""


def test_a_forfeit_off_the_main_thread_leaves_no_interrupt_armed_for_later():
    """The watchdog's asynchronous exception is taken, never withdrawn: on CPython 3.11 withdrawing one
    (``PyThreadState_SetAsyncExc(id, NULL)``) left the interpreter's eval breaker set for good, and the next
    function called under a trace function looped forever (seen as a test suite that hung in a Hypothesis
    test, long after a time-limit test had passed)."""
    import subprocess
    import sys
    from pathlib import Path

    done = subprocess.run(
        [sys.executable, "-c", TRACED_AFTER_A_FORFEIT, str(Path(__file__).parent)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0 and "traced call after the forfeit:" in done.stdout, done.stderr[-2000:]


@pytest.mark.parametrize("bad", [0, -1.0, math.nan, math.inf, "1", True])
def test_a_bad_time_limit_is_refused(bad):
    with pytest.raises(
        ValueError,
        match=r"time_limit=.*: give the seconds a plugin call may take as a positive "
        r"number, e\.g\. time_limit=10, or None for no limit",
    ):
        play("binary", "constant", "iid_bernoulli", T=5, time_limit=bad)


# --------------------------------------------------------------------------- streamed traces


@pytest.mark.parametrize("keep_forecasts", [True, False])
def test_the_streamed_trace_equals_result_trace(tmp_path, keep_forecasts):
    path = tmp_path / "trace.parquet"
    r = play("binary", "running_mean", "logistic", T=300, seed=2, keep_forecasts=keep_forecasts, trace_path=path)
    back = pd.read_parquet(path)
    pd.testing.assert_frame_equal(back, r.trace)
    assert ("forecast" in back) == keep_forecasts and list(back)[:4] == ["t", "x_0", "x_1", "x_2"]
    assert [p.name for p in tmp_path.iterdir()] == ["trace.parquet"]  # no temporary file left


def test_the_streamed_trace_of_the_quantile_game(tmp_path):
    path = tmp_path / "q.parquet"
    r = play("quantile", "running_quantile", "lipschitz_cdf", T=200, seed=1, trace_path=path)
    back = pd.read_parquet(path)
    pd.testing.assert_frame_equal(back, r.trace)
    assert {"atom_0", "atom_1", "cdf_atom_0", "expected_loss"} <= set(back)


def test_the_streamed_trace_after_a_forfeit_holds_the_rounds_played(tmp_path):
    path = tmp_path / "f.parquet"
    r = play("binary", Crasher(), "iid_bernoulli", T=50, trace_path=path)
    back = pd.read_parquet(path)
    assert len(back) == 6 and back["t"].tolist() == list(range(1, 7))
    pd.testing.assert_frame_equal(back, r.trace)


def test_the_trace_is_written_in_row_groups_and_replaces_the_file(tmp_path):
    path = tmp_path / "t.parquet"
    path.write_text("an older trace")
    r = play("binary", "constant", "iid_bernoulli", T=1000, seed=0, keep_forecasts=False)
    write_trace(r.recorder, path, rows=128)
    assert pq.ParquetFile(path).num_row_groups == 8
    pd.testing.assert_frame_equal(pd.read_parquet(path), r.trace)


def test_a_trace_path_in_a_missing_folder_is_refused(tmp_path):
    bad = tmp_path / "nowhere" / "trace.parquet"
    with pytest.raises(
        ValueError,
        match=r"trace_path='.*nowhere/trace\.parquet': the folder '.*nowhere' does not "
        r"exist; create it first",
    ):
        play("binary", "constant", "iid_bernoulli", T=5, trace_path=bad)


# --------------------------------------------------------------------------- the loop's bookkeeping


class Half(OutcomeLaw):
    """A law that samples with its own draw from the outcome stream."""

    def sample(self, rng):
        return float(rng.random() < 0.5)

    def cdf(self, v):
        return 0.0 if v < 0 else (0.5 if v < 1 else 1.0)


class Mixed(Nature):
    """Bernoulli laws, another law and plain outcomes, mixed (the coin's buffered and unbuffered draws)."""

    name = "fake_mixed"

    def respond(self, t, x, forecast):
        if t % 7 == 0:
            return Half()
        if t % 5 == 0:
            return 1.0
        return Bernoulli(0.3 + 0.4 * (t % 2))


def test_outcomes_equal_unbuffered_draws_from_the_stream():
    T = 3000  # several chunks of the buffered coins and of the recorder
    r = play("binary", "running_mean", Mixed(), T=T, seed=4, fast_path=False)
    rng = nature_streams(4, Mixed().name)[1]
    want = []
    for t in range(1, T + 1):
        law = Mixed().respond(t, None, None)
        if isinstance(law, Half):
            want.append(law.sample(rng))
        elif isinstance(law, float):
            rng.random()  # a plain outcome takes its uniform too
            want.append(law)
        else:
            want.append(float(rng.random() < law.p))
    np.testing.assert_array_equal(r.recorder.y, want)


def test_gymnasium_steps_record_what_the_runner_records():
    """The same round function; the recorder is up to date whenever it is read (buffered rounds written)."""
    T = 2500
    r = play("binary", "constant", "logistic", T=T, seed=6, keep_forecasts=False, fast_path=False)
    env = ForecastEnv("logistic", T=T)
    env.reset(seed=6)
    for t in range(1, T + 1):
        env.step(Forecast.point(0.5) if t % 2 else 0.5)
        if t in (1, 1500):
            assert env.recorder.n == t
    for name in ("X", "p_mean", "p", "p_internal", "y", "y_prob"):
        np.testing.assert_array_equal(getattr(env.recorder, name), getattr(r.recorder, name), err_msg=name)


def test_k29_fast_path_records_one_read_only_forecast_column_equal_to_the_step_loop():
    # unrounded K29 announces, realizes and keeps the same forecast: the fast path records one array for the
    # three columns (a million rounds: 16 MB less), read-only so that no write to one changes the others
    fast = play("binary", "k29", "iid_bernoulli", T=3000, seed=4, keep_forecasts=False)
    steps = play("binary", "k29", "iid_bernoulli", T=3000, seed=4, keep_forecasts=False, fast_path=False)
    rec = fast.recorder
    assert rec.p is rec.p_mean and rec.p is rec.p_internal and not rec.p.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        rec.p_internal[0] = 0.5
    for name in ("p_mean", "p", "p_internal", "y", "y_prob"):
        np.testing.assert_array_equal(getattr(rec, name), getattr(steps.recorder, name))
    assert fast.summary == steps.summary
