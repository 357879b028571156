"""Progress lines: ``[arena] figures: 3/26 (12%) 0:00:02 elapsed, ~0:00:15 left | reliability__markov``.

One printer for every long step (the matchups of a tournament, the figures of a report). It counts nothing
shared: a caller that knows more (a tournament's jobs count their matchups in a file) gives the count and the
time left itself (:meth:`Progress.show`).

Examples
--------
>>> p = Progress(4, "figures", started=0.0)
>>> p.line(1, now=2.0)
'figures: 1/4 (25%) 0:00:02 elapsed, ~0:00:06 left'
>>> p.line(4, now=8.0)
'figures: 4/4 (100%) 0:00:08 elapsed'
"""

from __future__ import annotations

import threading
import time


def clock(seconds: float) -> str:
    """Seconds as ``h:mm:ss``.

    >>> clock(3725.4)
    '1:02:05'
    """
    seconds = int(round(seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


class Progress:
    """Prints ``[arena] <what>: done/total (percent) elapsed[, ~left] | note``, at most once every ``every``
    seconds, and always the last line; nothing when ``quiet``. Steps may come from several threads."""

    def __init__(
        self, total: int, what: str = "", quiet: bool = False, every: float = 1.0, started: float | None = None
    ):
        self.total, self.what, self.quiet, self.every = total, what, quiet, every
        self.started = time.time() if started is None else started
        self.done, self.printed = 0, -float("inf")
        self._lock = threading.Lock()

    def line(self, done: int, left: float | None = None, now: float | None = None) -> str:
        """The progress text for ``done`` of the total; ``left``: the seconds left, by default estimated from
        the pace since the start."""
        now = time.time() if now is None else now
        elapsed = now - self.started
        if left is None and 0 < done < self.total:
            left = elapsed / done * (self.total - done)
        rest = f", ~{clock(left)} left" if left is not None and done < self.total else ""
        head = f"{self.what}: " if self.what else ""
        return f"{head}{done}/{self.total} ({100 * done / max(self.total, 1):.0f}%) {clock(elapsed)} elapsed{rest}"

    def show(self, done: int, note: str = "", left: float | None = None) -> None:
        """Print the line for ``done`` (with ``note`` after it) unless one was printed less than ``every`` seconds
        ago; the last one always."""
        now = time.time()
        with self._lock:
            self.done = max(self.done, done)
            if self.quiet or (now - self.printed < self.every and done < self.total):
                return
            self.printed = now
            print(f"[arena] {self.line(done, left, now)}" + (f" | {note}" if note else ""), flush=True)

    def step(self, note: str = "") -> None:
        """One more done: :meth:`show` it."""
        with self._lock:
            self.done += 1
            done = self.done
        self.show(done, note)


__all__ = ["Progress", "clock"]
