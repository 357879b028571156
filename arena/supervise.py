"""Supervision of a tournament shard: a matchup that kills its process is recorded, the shard goes on.

A plugin may end the process that plays it (``os._exit``, a segfault in compiled code, the
kernel's out-of-memory killer). The job of a shard (:func:`arena.tournament.run_job`) therefore
plays its matchups in a forked child process and supervises it (:func:`play_supervised`):

* before a matchup, the child writes a marker ``matchups/.<matchup_id>.running``; once the matchup
  is stored (or fails with an ordinary error, which the child reports as the job's error) it
  removes the marker;
* when the child ends with the marker still there, the matchup ended the process: the
  supervisor stores it as a forfeit (``forfeit_who`` "unknown", round 0, the exit status as the
  reason) and forks a new child for the rest of the shard. The crash is stored like any result,
  so a rerun does not play it again (``retry_crashed=true`` does);
* a child that runs out of memory (``MemoryError`` outside a plugin call, e.g. under an
  address-space limit) leaves its marker with the reason, and is recorded the same way.

Every worker process of a run also ends when its parent is gone (:func:`exit_with_parent`), so
that killing ``arena`` (even with ``kill -9``) leaves no worker playing on. Without ``os.fork``
(Windows) the matchups are played in the job's own process, unsupervised.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

#: Exit status of a child that ran out of memory in a matchup (its marker holds the reason).
CRASHED = 86


def cores() -> int:
    """The number of CPU cores this process may use (its affinity mask, where the system has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


#: The watcher thread of this process per parent pid (:func:`exit_with_parent`), with the pid that started it:
#: a forked child inherits the entry but not the thread.
_WATCHERS: dict[int, tuple[int, threading.Thread]] = {}


def exit_with_parent(parent: int | None = None, every: float = 0.5) -> threading.Thread:
    """Start a daemon thread that ends this process (status 1) once its parent ``parent`` (default:
    the current one) has exited: a worker orphaned by ``kill -9`` of its launcher stops within
    ``every`` seconds instead of playing on. (Polling the parent's pid works on every POSIX system,
    where ``prctl(PR_SET_PDEATHSIG)`` is Linux-only and fires when the parent *thread* ends.) One
    thread a process: called again (each job of a worker calls it), it returns the running one."""
    parent = os.getppid() if parent is None else parent
    pid, running = _WATCHERS.get(parent, (None, None))
    if pid == os.getpid() and running is not None and running.is_alive():
        return running

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(every)
        os._exit(1)

    thread = threading.Thread(target=watch, name="arena-exit-with-parent", daemon=True)
    thread.start()
    _WATCHERS[parent] = (os.getpid(), thread)
    return thread


def leave_to_parent() -> None:
    """In a worker process (a launcher's, the report's): leave Ctrl-C to the parent, which reports it and ends
    the run (a worker interrupted between two jobs would print a traceback of its pool's own), and end once
    the parent is gone (:func:`exit_with_parent`: killed, nothing else would tell a worker waiting for work).
    Ctrl-C is ignored from the main thread only (Ray runs a job in another; the signal is the process's)."""
    import signal

    _on_ctrl_c(signal.SIG_IGN)
    exit_with_parent()


def children() -> set:
    """The processes that :mod:`multiprocessing` started from this one and that still run (a pool's workers, ...)."""
    import multiprocessing

    return set(multiprocessing.active_children())


def end_children_since(others: set) -> None:
    """End at once (SIGTERM) the processes started from this one since ``others`` (:func:`children` then) were
    listed: a pool's workers on Ctrl-C or an error, where waiting would let their jobs run to the end."""
    for process in children() - others:
        process.terminate()


def forked_pool(workers: int, initializer: Callable = leave_to_parent, initargs: tuple = ()):
    """A standard process pool of ``workers`` processes forked from this one now (they inherit what it
    has loaded; nothing is pickled on the way but each job's arguments), started with Ctrl-C ignored, so
    that none listens to it before ``initializer`` (by default :func:`leave_to_parent`) runs. Raises what
    starting them raises."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    pool = ProcessPoolExecutor(
        workers, mp_context=multiprocessing.get_context("fork"), initializer=initializer, initargs=initargs
    )
    try:
        with ctrl_c_ignored():  # the first submit forks every worker (a fork context starts them all at once)
            ready = pool.submit(_ready)
        ready.result()
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    return pool


def _ready() -> None:
    """Nothing: a worker that runs it was forked and answers."""


def _on_ctrl_c(handler):
    """Set this process's Ctrl-C (SIGINT) handler, from the main thread only (a no-op in another: the
    signal is the process's); the previous handler, or None where none was set."""
    import signal

    if threading.current_thread() is threading.main_thread():
        return signal.signal(signal.SIGINT, handler)
    return None


class ctrl_c_ignored:
    """Within this block, Ctrl-C (SIGINT) is ignored by this process and by the processes it forks: a pool
    forked here starts with its workers deaf to it (they leave Ctrl-C to this process) before their own
    initializer runs. The previous handler is restored at the end (a no-op outside the main thread)."""

    def __enter__(self):
        import signal

        self.previous = _on_ctrl_c(signal.SIG_IGN)
        return self

    def __exit__(self, *exc) -> None:
        if self.previous is not None:
            _on_ctrl_c(self.previous)


#: Set by the Ctrl-C handler of :class:`ctrl_c_remembered`.
_INTERRUPTED = threading.Event()


class ctrl_c_remembered:
    """Within this block, Ctrl-C (SIGINT) raises KeyboardInterrupt as usual and is remembered too. Where it comes
    while Python code runs inside a C library's callback (Numba, through llvmlite, calls back into Python as it
    loads compiled code), ctypes drops the exception (and would print its traceback: it is kept quiet here):
    :func:`raise_if_interrupted` raises it again at the next check, and the end of the block does if no check
    came. A no-op outside the main thread."""

    def __enter__(self):
        def remember(signum, frame):
            _INTERRUPTED.set()
            raise KeyboardInterrupt

        def quiet(unraisable) -> None:  # a dropped Ctrl-C is raised again, not printed
            if not (isinstance(unraisable.exc_value, KeyboardInterrupt) and _INTERRUPTED.is_set()):
                hook(unraisable)

        _INTERRUPTED.clear()
        self.previous = _on_ctrl_c(remember)
        if self.previous is not None:
            self.hook = hook = sys.unraisablehook
            sys.unraisablehook = quiet
        return self

    def __exit__(self, exc_type, *exc) -> None:
        if self.previous is not None:
            _on_ctrl_c(self.previous)
            sys.unraisablehook = self.hook
        if exc_type is None and _INTERRUPTED.is_set():
            raise KeyboardInterrupt  # dropped inside a callback: an interrupt all the same


def raise_if_interrupted() -> None:
    """Raise KeyboardInterrupt if Ctrl-C came within :class:`ctrl_c_remembered` (and was dropped on its way)."""
    if _INTERRUPTED.is_set():
        raise KeyboardInterrupt


def marker(out_dir: Path, mid: str) -> Path:
    """The file that says matchup ``mid`` is being played (see the module's docstring)."""
    return Path(out_dir) / "matchups" / f".{mid}.running"


def clear_markers(out_dir: Path) -> None:
    """Remove the markers left by a run that was killed as a whole (its matchups are played again)."""
    folder = Path(out_dir) / "matchups"
    if folder.is_dir():
        for f in folder.glob(".*.running"):
            f.unlink(missing_ok=True)


def play_supervised(
    out_dir: Path,
    items: Sequence[tuple[str, object]],
    play: Callable[[str, object], None],
    record_crash: Callable[[str, object, str], None],
) -> None:
    """Play ``items`` (matchup id, config) with ``play(id, config)`` in a supervised child process; a matchup
    that ends its child is stored by ``record_crash(id, config, reason)`` and the rest are played by a new child.

    Ordinary errors of the child (a full disk) end it with its status after it printed them; the
    supervisor then raises SystemExit with that status. Ctrl-C ends both with KeyboardInterrupt.
    """
    if not hasattr(os, "fork"):
        for mid, cfg in items:
            play(mid, cfg)
        return
    pending = list(items)
    while pending:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            _child(out_dir, pending, play)
        status = _wait(pid)
        code = os.waitstatus_to_exitcode(status)
        if code == 0:
            return
        crashed = next((i for i, (mid, _) in enumerate(pending) if marker(out_dir, mid).exists()), None)
        if crashed is None:
            if code == 130:
                raise KeyboardInterrupt
            raise SystemExit(code if code > 0 else 1)
        mid, cfg = pending[crashed]
        reason = marker(out_dir, mid).read_text() or ""
        how = f"killed by signal {-code}" if code < 0 else f"exit status {code}"
        record_crash(
            mid,
            cfg,
            f"the matchup ended its process ({how}{': ' + reason if reason else ''}); "
            "rerun with retry_crashed=true to play it again",
        )
        marker(out_dir, mid).unlink(missing_ok=True)
        print(
            f"[arena] {mid} ended its process ({how}): recorded as a forfeit; the shard goes on",
            file=sys.stderr,
            flush=True,
        )
        pending = pending[crashed + 1 :]


def _wait(pid: int) -> int:
    """The child's wait status; on Ctrl-C (which the child gets too) wait for it, then pass it on."""
    try:
        return os.waitpid(pid, 0)[1]
    except KeyboardInterrupt:
        try:
            os.waitpid(pid, 0)
        except (ChildProcessError, KeyboardInterrupt):
            pass
        raise


def _child(out_dir: Path, items: Sequence[tuple[str, object]], play: Callable[[str, object], None]) -> None:
    code = 0
    try:
        exit_with_parent()
        (Path(out_dir) / "matchups").mkdir(parents=True, exist_ok=True)
        for mid, cfg in items:
            flag = marker(out_dir, mid)
            flag.write_text("")
            try:
                play(mid, cfg)
            except (MemoryError, RecursionError) as exc:  # the matchup exhausted the process: a crash
                flag.write_text(f"{type(exc).__name__}: {str(exc)[:200]}")
                code = CRASHED
                return
            except BaseException:
                flag.unlink(missing_ok=True)
                raise
            flag.unlink(missing_ok=True)
    except KeyboardInterrupt:
        code = 130
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
        if not isinstance(exc.code, int) and exc.code is not None:
            print(exc.code, file=sys.stderr)
    except BaseException as exc:  # noqa: BLE001 (reported in one line; the supervisor exits with the status)
        print(f"arena: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


__all__ = [
    "clear_markers",
    "ctrl_c_remembered",
    "exit_with_parent",
    "forked_pool",
    "leave_to_parent",
    "marker",
    "play_supervised",
    "raise_if_interrupted",
]
