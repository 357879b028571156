"""Supervision of a tournament shard: a matchup that kills its process is recorded, the shard goes on.

A plugin may end the process that plays it (``os._exit``, a segfault in compiled code, the
kernel's out-of-memory killer). The job of a shard (:func:`arena.tournament.run_job`), and a single
matchup's, therefore plays its matchups in a forked child process and supervises it (:func:`play_supervised`):

* before a matchup, the child writes a marker ``matchups/.<matchup_id>.running``; once the matchup
  is stored (or fails with an ordinary error, which the child reports as the job's error) it
  removes the marker;
* when the child ends with the marker still there, whatever its exit status, the matchup ended the
  process: the supervisor stores it as a forfeit (:class:`Crash`: who and the round where a plugin's
  call ran ``os._exit``, else ``"unknown"`` and 0; the exit status or signal in the reason) and forks a
  new child for the rest of the shard. The crash is stored like any result, so a rerun does not play
  it again (``retry_crashed=true`` does);
* a child that runs out of memory (``MemoryError`` outside a plugin call, e.g. under an
  address-space limit) leaves its marker with the reason, and is recorded the same way;
* a matchup that rebinds the arena's or a library's code (:class:`Pristine`) is the last its child
  plays: a fresh child, forked from the supervisor (which runs no plugin code), plays the rest, so no
  plugin changes another matchup's result; an error that follows such a change is its matchup's forfeit.

Every worker process of a run also ends when its parent is gone (:func:`exit_with_parent`), so
that killing ``arena`` (even with ``kill -9``) leaves no worker playing on. Without ``os.fork``
(Windows) the matchups are played in the job's own process, unsupervised.

A plugin's ``KeyboardInterrupt`` is its forfeit; a Ctrl-C this process receives is told from it by
its handler, which notes it (:func:`interrupted`, :class:`ctrl_c_noticed`).
"""

from __future__ import annotations

import builtins
import contextlib
import json
import mmap
import os
import sys
import threading
import time
import types
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple, NoReturn

#: Exit status of a child that ended a matchup as a crash (its marker holds the forfeit: :func:`_note`).
CRASHED = 86
#: Exit status of a child after a matchup that changed its code (:class:`Pristine`): a fresh child plays the rest.
RESTART = 87


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
        _exit(1)

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
    starting them raises.

    The objects this process holds are frozen (``gc.freeze``) while the workers are forked, as Python's
    documentation of :func:`gc.freeze` advises for a fork without exec: a worker's garbage collections then
    never walk the objects it inherited, so they stay shared with this process (each walk writes to every
    object, copying its memory page) and each collection is short. This process unfreezes its own at once."""
    import gc
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    pool = ProcessPoolExecutor(
        workers, mp_context=multiprocessing.get_context("fork"), initializer=initializer, initargs=initargs
    )
    gc.freeze()
    try:
        with ctrl_c_ignored():  # the first submit forks every worker (a fork context starts them all at once)
            ready = pool.submit(_ready)
        ready.result()
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    finally:
        gc.unfreeze()
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
        def quiet(unraisable) -> None:  # a dropped Ctrl-C is raised again, not printed
            if not (isinstance(unraisable.exc_value, KeyboardInterrupt) and _INTERRUPTED.is_set()):
                hook(unraisable)

        _INTERRUPTED.clear()
        self.previous = _on_ctrl_c(_remember)
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


def interrupted() -> bool:
    """Whether this process received Ctrl-C (SIGINT) within :class:`ctrl_c_remembered` or :class:`ctrl_c_noticed`:
    a KeyboardInterrupt raised otherwise is code's own (a plugin's), not the user's."""
    return _INTERRUPTED.is_set()


def _remember(signum, frame):
    _INTERRUPTED.set()
    raise KeyboardInterrupt


class ctrl_c_noticed:
    """Within this block a Ctrl-C that this process receives is told from a KeyboardInterrupt that code raises
    (:func:`interrupted`): where Python's own handler is set (a notebook, a script), one that notes it takes its
    place, in the main thread. Where the handler is already another (the command line's notes it too; a worker
    ignores Ctrl-C), nothing changes."""

    def __enter__(self):
        import signal

        self.previous = None
        if threading.current_thread() is threading.main_thread():
            if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
                _INTERRUPTED.clear()
                self.previous = signal.signal(signal.SIGINT, _remember)
        return self

    def __exit__(self, *exc) -> None:
        if self.previous is not None:
            import signal

            signal.signal(signal.SIGINT, self.previous)


def marker(out_dir: Path, mid: str) -> Path:
    """The file that says matchup ``mid`` is being played (see the module's docstring)."""
    return Path(out_dir) / "matchups" / f".{mid}.running"


def clear_markers(out_dir: Path) -> None:
    """Remove the markers left by a run that was killed as a whole (its matchups are played again)."""
    folder = Path(out_dir) / "matchups"
    if folder.is_dir():
        for f in folder.glob(".*.running"):
            f.unlink(missing_ok=True)


class Crash(NamedTuple):
    """A matchup that ended the process playing it, as its forfeit: who (``"unknown"`` where no plugin call was
    running, or none could be told), the round (0 where unknown) and why."""

    who: str
    step: int
    reason: str


def play_supervised(
    out_dir: Path,
    items: Sequence[tuple[str, object]],
    play: Callable[[str, object], None],
    record_crash: Callable[[str, object, Crash], None],
    errors: Callable[[], contextlib.AbstractContextManager] = contextlib.nullcontext,
    watch: Sequence[str] = (),
) -> None:
    """Play ``items`` (matchup id, config) with ``play(id, config)`` in a supervised child process; a matchup
    that ends its child is stored by ``record_crash(id, config, crash)`` and the rest are played by a new child,
    as are the matchups after one that changed the child's code (:class:`Pristine`: the arena's modules, the
    packages ``watch`` (the plugins') and the libraries in :data:`LIBRARIES`).

    ``errors()`` wraps each matchup in the child (it turns an error into a line and a SystemExit); the
    supervisor then raises SystemExit with the child's status. Ctrl-C ends both with KeyboardInterrupt.
    """
    if not hasattr(os, "fork"):
        for mid, cfg in items:
            with errors():
                play(mid, cfg)
        return
    pending = list(items)
    finished = mmap.mmap(-1, 8)  # shared with the children: how many of their matchups are stored
    pristine = Pristine(watch)  # taken here, where no plugin code runs; each child compares with it
    while pending:
        sys.stdout.flush()
        sys.stderr.flush()
        finished[:] = bytes(8)
        pid = os.fork()
        if pid == 0:  # the child: never returns
            _child(out_dir, pending, play, errors, finished, pristine)
        code = os.waitstatus_to_exitcode(_wait(pid))
        done = int.from_bytes(finished[:], "little")
        if done == len(pending) and code in (0, RESTART):
            return
        if code == RESTART:  # the matchup before changed the child's code: a fresh child plays the rest
            pending = pending[done:]
            continue
        mid, cfg = pending[done]
        if not marker(out_dir, mid).exists():
            if code == 130:
                raise KeyboardInterrupt
            raise SystemExit(code if code > 0 else 1)
        crash = _crash(marker(out_dir, mid).read_text(), code)
        record_crash(mid, cfg, crash)
        marker(out_dir, mid).unlink(missing_ok=True)
        print(
            f"[arena] {mid} ended its process: recorded as a forfeit ({crash.who} at t={crash.step}); "
            "the shard goes on",
            file=sys.stderr,
            flush=True,
        )
        pending = pending[done + 1 :]


def _crash(note: str, code: int) -> Crash:
    """The forfeit of a matchup whose child ended with status ``code``, its marker holding ``note`` (a JSON
    :class:`Crash` written by the child, or nothing)."""
    import signal

    if code < 0:
        try:
            name = f" ({signal.Signals(-code).name})"
        except ValueError:
            name = ""
        how = f"killed by signal {-code}{name}"
    else:
        how = f"exit status {code}"
    try:
        who, step, reason = json.loads(note)
    except ValueError:
        who, step, reason = "unknown", 0, ""
    said = f"{reason}: " if reason else ""
    if who == "unknown":  # no plugin's call named (a signal, a kill): retry_crashed plays it again
        return Crash(who, 0, f"{said}the matchup ended its process ({how}); rerun with retry_crashed=true to retry")
    return Crash(str(who), int(step), f"{said}the matchup ended its process ({how})")


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


def _child(
    out_dir: Path,
    items: Sequence[tuple[str, object]],
    play: Callable[[str, object], None],
    errors: Callable[[], contextlib.AbstractContextManager],
    finished: mmap.mmap,
    pristine: Pristine,
) -> None:
    code = 0
    try:
        exit_with_parent()
        (Path(out_dir) / "matchups").mkdir(parents=True, exist_ok=True)
        pristine.watch()
        for i, (mid, cfg) in enumerate(items):
            flag = marker(out_dir, mid)
            flag.write_text("")
            _PLAYING[:] = [flag]
            with errors():
                try:
                    play(mid, cfg)
                except (MemoryError, RecursionError) as exc:  # the matchup exhausted the process: a crash
                    _note(flag, "unknown", 0, f"{type(exc).__name__}: {str(exc)[:200]}")
                    code = CRASHED
                    return
                except Exception as exc:
                    changed = pristine.changed()
                    if not changed or isinstance(exc, OSError):  # the arena's own error (a full disk, a bug)
                        flag.unlink(missing_ok=True)
                        raise
                    # the matchup changed the arena's code, which then failed: the matchup's doing
                    message = " ".join(str(exc).split())[:300]
                    _note(flag, "unknown", 0, f"it changed {changed}, then {type(exc).__name__}: {message}")
                    code = CRASHED
                    return
                except BaseException:
                    flag.unlink(missing_ok=True)
                    raise
            flag.unlink(missing_ok=True)
            finished[:] = (i + 1).to_bytes(8, "little")
            if pristine.changed():
                code = RESTART
                return
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
            _exit(code)


# ----------------------------------------------------------------------------- what a matchup may change

#: The libraries a score is computed with: a matchup that rebinds a name of their top-level module, or of a class
#: defined there, gets no successor in its process (:class:`Pristine`; their submodules are not watched).
LIBRARIES = ("numpy", "scipy", "math", "builtins", "operator", "functools", "itertools", "statistics")

#: The marker of the matchup this process plays (:func:`_plugin_exit` writes its forfeit there).
_PLAYING: list[Path] = []

#: The process's own ``os._exit``, before :meth:`Pristine.watch` puts :func:`_plugin_exit` in its place.
_exit = os._exit


class Pristine:
    """The code of a process that plays matchups, as it was before the first: the names bound in every module of
    the arena and of the ``packages`` (the plugins'), in the top-level module of each of :data:`LIBRARIES`, and
    in each class defined there; and the code and defaults of the functions among them. A matchup that rebinds
    any of them (``Referee.score = ...``, ``np.mean = ...``, ``f.__code__ = ...``) would change the results of the
    matchups after it in its process: :meth:`changed` names what it rebound, and the supervisor gives those a
    fresh process. Taken once in the supervisor, it is compared in its children after each matchup (some 0.1 ms).

    It sees assignments, not changes made inside objects (a list's or dict's items, an instance's attributes, an
    array's values) nor through C (ctypes); nor a library's submodules; a module first imported during a matchup
    is watched from the next one on. Against a plugin written to defeat it, play sealed."""

    def __init__(self, packages: Sequence[str] = ()):
        self.roots = {"arena", *packages}
        self.namespaces: list[tuple[str, object, dict]] = []
        self.functions: set[int] = set()
        self.rebound: list[str] = []
        self.seen = 0
        self._add([m for m in map(sys.modules.get, LIBRARIES) if m is not None])
        self._extend()

    def _extend(self) -> None:
        """Watch the modules of the watched packages imported since the last look (none: a length compared)."""
        if len(sys.modules) == self.seen:
            return
        known = {id(space) for _, space, _ in self.namespaces}
        self._add(
            [
                m
                for n, m in list(sys.modules.items())
                if n.partition(".")[0] in self.roots and m is not None and id(m) not in known
            ]
        )
        self.seen = len(sys.modules)

    def _add(self, modules: list) -> None:
        names = {m.__name__ for m in modules}
        classes = {
            id(v): v
            for m in modules
            for v in list(vars(m).values())
            if isinstance(v, type) and not v.__flags__ & _IMMUTABLE and getattr(v, "__module__", None) in names
        }
        spaces = [(m.__name__, m) for m in modules] + [
            (f"{c.__module__}.{c.__qualname__}", c) for c in classes.values()
        ]
        for name, space in spaces:
            before = dict(vars(space))
            self.namespaces.append((name, space, before))
            for v in before.values():
                v = getattr(v, "__func__", v)  # a classmethod's or staticmethod's function
                if isinstance(v, types.FunctionType):
                    self.functions.add(id(v))

    def watch(self) -> None:
        """In the process that plays: note assignments to the watched functions' code and defaults (an audit
        hook: it stays for the process's life), and put :func:`_plugin_exit` in place of ``os._exit``."""
        sys.addaudithook(self._audit)
        os._exit = _plugin_exit

    def _audit(self, event: str, args: tuple) -> None:
        if event in ("object.__setattr__", "object.__delattr__") and id(args[0]) in self.functions:
            self.rebound.append(f"{getattr(args[0], '__module__', '?')}.{getattr(args[0], '__qualname__', '?')}")

    def changed(self, vars=vars, str=str, dict=dict) -> str:  # builtins bound here: rebinding them is seen
        """What the matchups played since :meth:`watch` rebound, named (at most three); empty when nothing. A name
        added is no change (a submodule imported, a lazy name cached) unless it hides a builtin; the modules
        imported since the last call are watched from now on."""
        names = list(self.rebound)
        for i, (name, space, before) in enumerate(self.namespaces):
            try:
                now = vars(space)
                if now == before:
                    continue
                if all(k in now and now[k] is v for k, v in before.items()) and not (now.keys() - before) & _BUILTINS:
                    self.namespaces[i] = (name, space, dict(now))  # only names added
                    continue
            except Exception:  # noqa: BLE001, S110 (an array rebound: comparing it with the old one raises)
                pass
            names.append(name)
            if len(names) > 2:
                break
        if not names:
            self._extend()
        return ", ".join(str(n) for n in names[:3])


#: The names of the builtins: one added to a module's names would hide a builtin from its functions.
_BUILTINS = frozenset(vars(builtins))
#: ``type.__flags__`` of a type whose attributes cannot be set (a C type's): nothing to watch.
_IMMUTABLE = 1 << 8
#: The attributes of a function whose assignment changes what it does.
_CODE = ("__code__", "__defaults__", "__kwdefaults__")


def _plugin_exit(status: int) -> NoReturn:
    """``os._exit`` in a child that plays matchups: one called from a plugin's call notes who called it and in
    which round in the matchup's marker (:func:`whereabouts`), then the process ends as asked."""
    where = whereabouts(sys._getframe(1)) if _PLAYING else None
    if where is not None:
        who, step, call = where
        _note(_PLAYING[0], who, step, f"{call} called os._exit({status})")
    _exit(status)


def _note(flag: Path, who: str, step: int, reason: str) -> None:
    """Write a matchup's forfeit in its marker, for the supervisor (:func:`_crash`)."""
    try:
        flag.write_text(json.dumps([who, step, reason]))
    except OSError:
        pass


def whereabouts(frame) -> tuple[str, int, str] | None:
    """(who, round, call) of the plugin call that ``frame`` runs in: the outermost call of a method of a
    forecaster or nature on the stack, and the round of the arena's game loop that made it (0: its reset); None
    outside a plugin's call."""
    from arena.protocols import Forecaster, Nature

    entry, step = None, 0
    while frame is not None:
        me = frame.f_locals.get("self")
        if isinstance(me, (Forecaster, Nature)):
            entry = ("forecaster" if isinstance(me, Forecaster) else "nature", frame.f_code.co_name)
        elif entry is not None and frame.f_globals.get("__name__") in _GAME_LOOPS:
            t = frame.f_locals.get("t")
            if isinstance(t, int) and not step:
                step = t
        frame = frame.f_back
    return None if entry is None else (entry[0], step, entry[1])


#: The modules whose functions play a game's rounds (their local ``t`` is the round).
_GAME_LOOPS = ("arena.runner", "arena.env", "arena.oblivious")


__all__ = [
    "Crash",
    "Pristine",
    "clear_markers",
    "ctrl_c_noticed",
    "ctrl_c_remembered",
    "exit_with_parent",
    "forked_pool",
    "interrupted",
    "leave_to_parent",
    "marker",
    "play_supervised",
    "raise_if_interrupted",
    "whereabouts",
]
