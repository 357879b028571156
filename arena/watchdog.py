"""The time limit of a game's plugin calls: a watchdog thread that stops a call running too long; and what a
plugin call raised (:func:`plugin_failure`).

The loop stores the round of each call in a list, one cell per kind of call
(:data:`arena.rules.CALLS`); the watchdog only reads it, so a timed call costs one store.
"""

from __future__ import annotations

import ctypes
import signal
import threading
import time

from arena.results import Forfeit
from arena.rules import CALLS
from arena.supervise import interrupted


class Timeout(BaseException):
    """Raised in the playing thread when a plugin call overruns the time limit (a BaseException,
    so that a plugin's ``except Exception`` does not swallow it)."""


def plugin_failure(exc: BaseException) -> str:
    """``Type: message`` of what a plugin's call raised, for its forfeit: any exception, ``SystemExit``,
    ``GeneratorExit``, a plugin's own ``KeyboardInterrupt``. The arena's own interrupts are raised again: the
    time limit's (:class:`Timeout`) and a Ctrl-C that this process received (:func:`arena.supervise.interrupted`).
    """
    if isinstance(exc, Timeout) or (isinstance(exc, KeyboardInterrupt) and interrupted()):
        raise exc
    return f"{type(exc).__name__}: {exc}"


class Watchdog:
    """Stops a plugin call that runs past ``limit`` seconds, at almost no cost per call.

    The loop stores the round of every call it makes in ``progress`` (one cell per kind of
    call, :data:`arena.rules.CALLS`); a daemon thread looks at the cells every ``limit / 4``
    seconds. When they have not changed for ``limit`` seconds, the latest call (the greatest
    round, then the latest kind within it) has run at least that long: the thread raises
    :class:`Timeout` in the playing thread. In the main thread it sends SIGALRM, whose
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
                            ctypes.c_ulong(self._ident), ctypes.py_object(Timeout)
                        )

    def _on_signal(self, signum, frame) -> None:
        if self._pending:
            self._pending = False
            raise Timeout
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
            except Timeout:
                self._pending = False
                continue


__all__ = ["Timeout", "Watchdog", "plugin_failure"]
