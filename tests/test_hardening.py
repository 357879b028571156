"""Hardening: plugins that misbehave in every way a process can (an exception in reset, sys.exit,
os._exit, a memory hog under an address-space limit) become forfeit rows and the tournament finishes;
its workers end with their parent; the results directory is locked to one plan; a full or read-only
disk and damaged files end a run with one line and a failing status, losing nothing stored."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest
from _stored import record  # tests/_stored.py

from arena.store import scan

BIN = Path(sys.executable).parent

MODULE = '''
import os
import posix
import sys

import numpy as np

from arena import Bernoulli, Nature, register
from forecasters.baselines import RunningMean


@register
class Misbehaving(RunningMean):
    """A running mean that misbehaves as `how` says, at round `at` (or in reset)."""

    name = "misbehaving"
    can_play_oblivious = False  # every round through predict

    def __init__(self, how: str = "none", at: int = 3):
        super().__init__()
        self.how, self.at = how, at

    def reset(self, rng):
        super().reset(rng)
        self.t = 0
        if self.how == "reset":
            raise LookupError("no model file")

    def predict(self, x):
        self.t += 1
        if self.t == self.at:
            if self.how == "exit":
                sys.exit(3)
            if self.how == "os_exit":  # posix's own: the arena cannot tell who called it
                posix._exit(7)
            if self.how == "hog":
                self.hog = [np.ones(2**27) for _ in range(64)]  # 64 GiB, far above the limit
        return super().predict(x)


@register
class BrokenNature(Nature):
    name = "broken_nature"
    games = ("binary",)

    def reset(self, rng):
        raise RuntimeError("the sensor is offline")

    def respond(self, t, x, forecast):
        return Bernoulli(0.5)
'''

TOURNAMENT = """
# @package _global_
tournament_name: bad
tournament:
  name: bad
  forecasters:
    - ogd
    - {name: misbehaving, label: raises_in_reset, params: {how: reset}}
    - {name: misbehaving, label: exits, params: {how: exit}}
    - {name: misbehaving, label: os_exits, params: {how: os_exit}}
    - {name: misbehaving, label: hogs, params: {how: hog}}
  natures: [iid_bernoulli, broken_nature]
  seeds: [0]
  T: [30]
  shards: 2
hydra:
  mode: MULTIRUN
  sweeper:
    params:
      shard: range(0,${tournament.shards})
"""


def _env(tmp_path: Path) -> dict:
    return {**os.environ, "MPLBACKEND": "Agg", "PYTHONPATH": str(tmp_path), "OPENBLAS_NUM_THREADS": "1"}


def _setup(tmp_path: Path) -> list[str]:
    (tmp_path / "misbehaving.py").write_text(textwrap.dedent(MODULE))
    for group, name, text in (
        ("forecaster", "misbehaving", "_target_: misbehaving.Misbehaving\nhow: none\nat: 3\n"),
        ("nature", "broken_nature", "_target_: misbehaving.BrokenNature\n"),
        ("tournament", "bad", TOURNAMENT),
    ):
        (tmp_path / "conf" / group).mkdir(parents=True, exist_ok=True)
        (tmp_path / "conf" / group / f"{name}.yaml").write_text(text)
    return [
        str(BIN / "arena"),
        f"hydra.searchpath=[file://{tmp_path / 'conf'}]",
        "tournament=bad",
        "report=false",
        f"results_root={tmp_path / 'results'}",
    ]


def _limit_memory() -> None:  # the child's address space: 3 GiB, so that the hog fails fast
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30))


def test_misbehaving_plugins_forfeit_and_the_tournament_finishes(tmp_path):
    cmd = _setup(tmp_path)
    proc = subprocess.run(
        cmd, cwd=tmp_path, env=_env(tmp_path), capture_output=True, text=True, timeout=600, preexec_fn=_limit_memory
    )
    assert proc.returncode == 3, proc.stderr[-3000:]  # finished, with forfeits
    out = tmp_path / "results" / "bad"
    summary = pd.read_parquet(out / "summary.parquet").set_index(["forecaster", "nature"])
    assert len(summary) == 10
    assert summary.loc[("ogd", "iid_bernoulli"), "status"] == "ok"
    expected = {
        "raises_in_reset": ("forecaster", 0, "reset raised LookupError: no model file"),
        "exits": ("forecaster", 3, "predict raised SystemExit: 3"),
        "os_exits": ("unknown", 0, "the matchup ended its process (exit status 7); rerun with retry_crashed"),
        "hogs": ("forecaster", 3, "MemoryError"),
    }
    for fc, (who, step, reason) in expected.items():
        row = summary.loc[(fc, "iid_bernoulli")]
        assert (row["status"], row["forfeit_who"], row["forfeit_step"]) == ("forfeit", who, step), fc
        assert reason in row["forfeit_reason"], row["forfeit_reason"]
    for fc in ("ogd", "exits", "hogs"):  # the nature fails first, in its reset
        row = summary.loc[(fc, "broken_nature")]
        assert (row["forfeit_who"], row["forfeit_step"], row["rounds"]) == ("nature", 0, 0)
        assert "RuntimeError: the sensor is offline" in row["forfeit_reason"]
    assert "ended its process: recorded as a forfeit (unknown at t=0)" in proc.stderr
    assert "9 of 10 matchups forfeited" in proc.stderr and "exit status 3" in proc.stderr

    again = subprocess.run(cmd, cwd=tmp_path, env=_env(tmp_path), capture_output=True, text=True, timeout=600)
    progress = out / ".progress"  # one 16-byte record per matchup the last run played (arena.jobs)
    assert again.returncode == 3 and progress.stat().st_size == 0  # every forfeit is stored: nothing replays
    before = scan(out)  # where each matchup's record lies
    retry = subprocess.run(
        [*cmd, "retry_crashed=true"], cwd=tmp_path, env=_env(tmp_path), capture_output=True, text=True, timeout=600
    )
    again_stored = [mid for mid, where in scan(out).items() if before[mid] != where]  # stored anew
    assert retry.returncode == 3 and progress.stat().st_size == 16, retry.stdout
    assert len(again_stored) == 1 and record(out, again_stored[0])["row"]["forecaster"] == "os_exits"


# ----------------------------------------------------------------------------- processes

BENCH = [
    "tournament=bench",
    "tournament.T=[1500]",
    "tournament.seeds=[0,1,2]",
    "tournament.forecasters=[linear_df,ogd]",
    "tournament.natures=[iid_bernoulli,logistic]",
    "tournament.shards=2",
    "hydra.launcher.n_jobs=2",
    "report=false",
]


def _stored(out: Path) -> int:
    return len(scan(out))


def _start(tmp_path: Path, *extra: str) -> subprocess.Popen:
    # Ctrl-C's default action in the child, as in a terminal: a test run started in the background by a
    # non-interactive shell (`cmd &`) inherits SIGINT ignored, and so would `arena`
    return subprocess.Popen(
        [str(BIN / "arena"), *BENCH, f"results_root={tmp_path}", *extra],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(tmp_path),
        start_new_session=True,
        preexec_fn=_default_sigint,
    )


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _wait_for(out: Path, n: int, proc: subprocess.Popen) -> int:
    deadline = time.monotonic() + 300
    while _stored(out) < n and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    return _stored(out)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def test_workers_end_when_arena_is_killed(tmp_path):
    proc = _start(tmp_path)
    assert 1 <= _wait_for(tmp_path / "bench", 1, proc) < 12
    os.kill(proc.pid, signal.SIGKILL)  # the arena process alone: its workers are orphaned
    proc.wait()
    deadline = time.monotonic() + 10
    while _group_alive(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    alive = _group_alive(proc.pid)
    if alive:
        os.killpg(proc.pid, signal.SIGKILL)
    assert not alive, "a worker of the killed arena process was still running 10 s later"


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _forked_children(pid: int) -> list[int]:
    """The children of ``pid`` forked from it (its command line), not a program it runs for a moment."""

    def cmdline(p: int) -> bytes | None:
        try:
            return Path(f"/proc/{p}/cmdline").read_bytes()
        except OSError:
            return None

    own = cmdline(pid)
    return [c for c in _children(pid) if own is not None and cmdline(c) == own]


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads a process's children from /proc (Linux)")
def test_a_killed_worker_ends_the_run_with_one_line_and_the_rerun_resumes(tmp_path):
    proc = _start(tmp_path)  # the local launcher: 2 worker processes forked from arena, each forks a player
    assert 1 <= _wait_for(tmp_path / "bench", 1, proc) < 12
    workers = _children(proc.pid)
    assert workers, "no worker process found"
    os.kill(workers[0], signal.SIGKILL)  # a worker (not the child playing its matchups): as the OOM killer does
    out, err = proc.communicate(timeout=120)
    if proc.returncode == 0:
        pytest.skip("the run ended before the worker was killed (a loaded machine)")
    assert proc.returncode == 1, err[-2000:]
    assert "a worker process of the local launcher ended abruptly" in err and "run the same command to resume" in err
    assert "Traceback" not in err, err[-3000:]
    stored = _stored(tmp_path / "bench")
    again = _play_bench(tmp_path)
    assert again.returncode == 0, again.stderr[-2000:]
    assert stored >= 1 and _stored(tmp_path / "bench") == 12
    assert f"resuming bench: {stored}/12 matchups already" in again.stdout


def _play_bench(tmp_path: Path) -> subprocess.CompletedProcess:
    """The bench tournament played (or resumed) in ``tmp_path``."""
    return subprocess.run(
        [str(BIN / "arena"), *BENCH, f"results_root={tmp_path}"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=_env(tmp_path),
        timeout=300,
        check=False,
    )


def _report_with_workers(tmp_path: Path) -> tuple[subprocess.Popen, list[int]]:
    """A played tournament's arena-report, caught while its figure workers (forked from it) run."""
    played = _play_bench(tmp_path)
    assert played.returncode == 0, played.stderr[-2000:]
    for _ in range(3):  # the report may end before its workers are seen (a fast machine): draw it again
        shutil.rmtree(tmp_path / "bench" / "figures", ignore_errors=True)
        proc = subprocess.Popen(
            [str(BIN / "arena-report"), str(tmp_path / "bench")],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
            preexec_fn=_default_sigint,
            env={**_env(tmp_path), "ARENA_PLOT_JOBS": "3"},
        )
        workers: list[int] = []
        while proc.poll() is None and not workers:
            workers = _forked_children(proc.pid)
            time.sleep(0.01)
        if workers:
            time.sleep(0.3)  # the workers are drawing, or waiting for a figure to draw
            if proc.poll() is None:
                return proc, workers
        proc.communicate()
    pytest.skip("no figure worker was seen while the report ran (a fast machine)")


def _gone(pids: list[int], seconds: float = 10) -> list[int]:
    """Those of ``pids`` still running after ``seconds`` (killed then, so that none is left behind)."""
    deadline = time.monotonic() + seconds
    while any(Path(f"/proc/{p}").exists() for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    alive = [p for p in pids if Path(f"/proc/{p}").exists()]
    for p in alive:
        os.kill(p, signal.SIGKILL)
    return alive


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads a process's children from /proc (Linux)")
def test_report_workers_end_when_arena_report_is_killed(tmp_path):
    """The figures' workers are forked from arena-report: killed with kill -9 mid-drawing, it leaves none behind."""
    proc, workers = _report_with_workers(tmp_path)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate()
    assert not _gone(workers), "a figure worker of the killed arena-report was still running 10 s later"


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads a process's children from /proc (Linux)")
def test_ctrl_c_in_arena_report_exits_130_with_one_line(tmp_path):
    proc, workers = _report_with_workers(tmp_path)
    os.killpg(proc.pid, signal.SIGINT)  # as a terminal does: the whole foreground group, workers too
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err[-2000:]
    assert "Traceback" not in err, err[-3000:]
    assert err.strip().splitlines()[-1].startswith("interrupted: the stored matchups and tables are untouched")
    assert not _gone(workers), "a figure worker was still running 10 s after Ctrl-C"


CALLBACK_CTRL_C = """
import ctypes, json, os, signal, sys
from arena.supervise import ctrl_c_remembered, raise_if_interrupted

def inside():  # Python called back from C, as llvmlite calls Numba while it loads compiled code
    os.kill(os.getpid(), signal.SIGINT)
    for _ in range(1000):  # the handler runs here, inside the callback: ctypes drops what it raises
        pass

callback = ctypes.CFUNCTYPE(None)(inside)
before = signal.getsignal(signal.SIGINT)  # Python's default, or SIG_IGN when started in the background
outcomes = []
for check in (True, False):
    steps = []
    try:
        with ctrl_c_remembered():
            callback()
            steps.append("dropped")
            if check:
                raise_if_interrupted()
            steps.append("went on")
    except KeyboardInterrupt:
        steps.append("raised")
    outcomes.append(steps)
print(json.dumps([outcomes, signal.getsignal(signal.SIGINT) is before, sys.unraisablehook is sys.__unraisablehook__]))
"""


def test_a_ctrl_c_dropped_inside_a_c_callback_is_raised_again():
    """A Ctrl-C that comes while C code runs a Python callback (Numba's, as the report's top comparison loads
    compiled code) is dropped by ctypes: arena-report exited 0 after it, with a traceback on stderr. Within
    ctrl_c_remembered it is raised again at the next check, or at the end of the block, and nothing is printed."""
    proc = subprocess.run(
        [sys.executable, "-c", CALLBACK_CTRL_C],
        capture_output=True,
        text=True,
        timeout=60,
        env=_env(Path(__file__).resolve().parent.parent),
    )
    assert proc.returncode == 0, proc.stderr
    outcomes, handler_restored, hook_restored = json.loads(proc.stdout)
    assert outcomes == [["dropped", "raised"], ["dropped", "went on", "raised"]]
    assert handler_restored and hook_restored and "Traceback" not in proc.stderr, proc.stderr


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forks a child process")
def test_a_process_watches_its_parent_with_one_thread_however_often_asked():
    """Each job of a launcher's worker asks for the watcher: one thread a process, and a forked child its own
    (in a fresh process: the watcher thread would outlive the test in this one)."""
    code = textwrap.dedent("""
        import os, threading
        from arena.supervise import exit_with_parent

        def watchers():
            return sum(t.name == "arena-exit-with-parent" for t in threading.enumerate())

        first = exit_with_parent()
        assert all(exit_with_parent() is first for _ in range(5)) and watchers() == 1
        pid = os.fork()
        if pid == 0:  # the parent's thread is not in the child; asking starts the child's own, once
            ok = watchers() == 0 and exit_with_parent() is exit_with_parent() and watchers() == 1
            os._exit(0 if ok else 1)
        _, status = os.waitpid(pid, 0)
        assert os.WEXITSTATUS(status) == 0
        print("ok")
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-2000:]


def test_ctrl_c_says_how_to_resume_and_exits_130(tmp_path):
    for attempt in range(3):  # a matchup takes some 0.1 s: on a loaded machine the run may end before the signal
        root = tmp_path / str(attempt)
        root.mkdir()
        proc = _start(root)
        n = _wait_for(root / "bench", 2, proc)  # once the first matchups are stored, ten to go
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)  # as a terminal does: the whole foreground group
        out, err = proc.communicate(timeout=120)
        if not (proc.returncode == 0 and "12/12 (100%)" in out):  # not finished before the signal came
            break
    assert proc.returncode == 130, err[-2000:]
    last = err.strip().splitlines()[-1]
    assert last.startswith("interrupted: ") and last.endswith("of 12 stored; run the same command to resume"), err
    assert int(last.split()[1]) >= n
    assert "Traceback" not in err
    assert not _group_alive(proc.pid) or time.sleep(3) or not _group_alive(proc.pid)


# ----------------------------------------------------------------------------- a full or read-only disk

FAULTY = """
import errno, os, sys
import arena.store as store

calls, real = [0], store.append


def faulty(out_dir, log, mid, payload):  # the disk fills up (or turns read-only) after {after} matchups
    calls[0] += 1
    if calls[0] > {after}:
        raise OSError(errno.{code}, os.strerror(errno.{code}), os.path.join(out_dir, "matchups", log + ".jsonl"))
    return real(out_dir, log, mid, payload)


store.append = faulty
from arena.cli import main

main(sys.argv[1:])
"""


@pytest.mark.parametrize("code, fix", [("ENOSPC", "free some space"), ("EROFS", "make it writable")])
def test_a_full_or_read_only_disk_is_one_line_and_loses_nothing(tmp_path, code, fix):
    script = tmp_path / "faulty.py"
    script.write_text(FAULTY.format(after=5, code=code))
    keep = [a for a in BENCH if a.split("=")[0] not in ("tournament.T", "tournament.shards", "hydra.launcher.n_jobs")]
    args = [*keep, "tournament.T=[200]", "hydra/launcher=basic", "tournament.shards=1", f"results_root={tmp_path}"]
    proc = subprocess.run(
        [sys.executable, str(script), *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=_env(tmp_path),
        timeout=600,
    )
    assert proc.returncode == 1, proc.stderr[-3000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert lines[0].startswith("arena: error: cannot write or read ") and str(tmp_path / "bench") in lines[0]
    assert fix in lines[0] and "run the same command to resume" in lines[0]
    out = tmp_path / "bench"
    kept = sorted(scan(out))
    assert kept and f"({len(kept)} of 12 stored)" in lines[0]
    resumed = subprocess.run(
        [str(BIN / "arena"), *args], cwd=tmp_path, capture_output=True, text=True, env=_env(tmp_path), timeout=600
    )
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert f"{len(kept)}/12 matchups already stored" in resumed.stdout
    assert set(kept) <= set(scan(out))
    assert len(pd.read_parquet(out / "summary.parquet")) == 12


# ------------------------------------------------------------------- the getting-started page, as printed


def _readme_section_blocks(title: str) -> list[str]:
    import re

    text = (Path(__file__).resolve().parent.parent / "docs" / "getting-started.md").read_text()
    section = text.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)


def test_the_getting_started_python_blocks_run_as_printed_in_a_fresh_process(tmp_path):
    blocks = _readme_section_blocks("Playing from Python")
    assert len(blocks) == 3 and any('gym.make("arena.env:arena/Binary-v0"' in b for b in blocks)
    for block in blocks:  # each alone: the Gymnasium one does not import arena itself
        proc = subprocess.run(
            [sys.executable, "-c", block], cwd=tmp_path, capture_output=True, text=True, env=_env(tmp_path), timeout=300
        )
        assert proc.returncode == 0, block + proc.stderr[-2000:]


def test_arena_help_is_the_arenas_own():
    proc = subprocess.run([str(BIN / "arena"), "--help"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0
    for needed in (
        "usage: arena",
        "tournament=NAME",
        "referee.ece_bins",
        "arena-report",
        "arena-rerun",
        "arena-list",
        "replace_plan=true",
        "130 interrupted",
    ):
        assert needed in proc.stdout, needed
    assert "== Config ==" not in proc.stdout and "Powered by Hydra" not in proc.stdout


def test_progress_counts_each_matchup_once_without_listing_the_results(tmp_path, monkeypatch):
    from arena.jobs import PROGRESS_FILE, MatchupCount

    (tmp_path / "plan.json").write_text(
        json.dumps(
            {
                "ids": [f"m{i}" for i in range(100)],
                "started": time.time() - 60,
                "done_at_start": 10,
                "code_version": "x",
            }
        )
    )
    (tmp_path / PROGRESS_FILE).write_bytes(b"")

    def no_listing(*args):
        raise AssertionError("the progress line listed a directory")

    monkeypatch.setattr(os, "listdir", no_listing)
    monkeypatch.setattr(os, "scandir", no_listing)
    progress = MatchupCount(tmp_path, shards=2)
    lines = [progress.finished() for _ in range(5)]
    assert [ln.split()[:2] for ln in lines] == [["matchups:", f"{n}/100"] for n in range(11, 16)]
    assert "left" not in lines[0]  # no estimate from the start-up (60 s here) before any matchup finished
    eta = lines[-1].split("~")[1].split(" left")[0]  # 4 matchups in well under a second: 85 left take seconds
    hours, minutes, seconds = (int(v) for v in eta.split(":"))
    assert hours == 0 and minutes == 0, lines[-1]


def test_the_end_of_a_run_names_summary_md(tmp_path, monkeypatch, capsys):
    """(Figures of an earlier plan that a report does not draw again are removed by the report itself.)"""
    import arena.summarize
    from arena.summarize import summarize

    def draw(out_dir, **options):  # stands in for the report: it writes summary.md
        (tmp_path / "summary.md").write_text("# verdicts\n")
        return [tmp_path / "summary.md"]

    monkeypatch.setattr(arena.summarize, "write_tables", lambda out_dir, only: {})
    monkeypatch.setattr(arena.summarize, "report", draw)
    summarize(tmp_path, draw=True)
    last = capsys.readouterr().out.splitlines()[-1]
    assert str(tmp_path.resolve()) in last and "summary.md" in last


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forks worker processes")
def test_pool_workers_never_walk_what_they_inherit_and_the_parent_collects_as_before():
    """A forked pool's workers find the objects they inherited frozen (their collections skip them, so the pages
    stay shared); the parent's own are unfrozen again once they are forked, so its garbage is collected as
    before (in a fresh process: the pool's workers would inherit the test runner's state)."""
    code = textwrap.dedent("""
        import gc
        from arena.supervise import forked_pool

        inherited = [[i] for i in range(10_000)]
        pool = forked_pool(2)
        try:
            frozen = pool.submit(gc.get_freeze_count).result()
        finally:
            pool.shutdown()
        assert frozen >= len(inherited), frozen
        assert gc.get_freeze_count() == 0, gc.get_freeze_count()
        print("ok")
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-2000:]
