"""Progress lines: ``[arena] figures: 3/26 (12%) 0:00:02 elapsed, ~0:00:15 left | reliability__markov``.

One printer for every long step (the matchups of a tournament, the figures of a report). :meth:`Progress.step`
counts one more step of this process and estimates the time left from the pace since the start; a caller that
counts elsewhere (a tournament's jobs count their matchups in a file) gives the count and the time left to
:meth:`Progress.line` and prints it with :meth:`Progress.show`. On a terminal the progress is one line rewritten
in place; elsewhere (a log, a pipe) a line at each fifth of the total, so that a run's output stays a few lines.

Examples
--------
>>> p = Progress(4, "figures", started=0.0)
>>> p.line(1, left=6.0, now=2.0)
'figures: 1/4 (25%) 0:00:02 elapsed, ~0:00:06 left'
>>> p.line(4, now=8.0)
'figures: 4/4 (100%) 0:00:08 elapsed'
"""

from __future__ import annotations

import sys
import threading
import time

#: Off a terminal, a progress line is printed when the count reaches each of this many parts of the total.
PARTS = 5


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
        """The progress text for ``done`` of the total, with the seconds ``left`` when given (and not done)."""
        now = time.time() if now is None else now
        rest = f", ~{clock(left)} left" if left is not None and done < self.total else ""
        head = f"{self.what}: " if self.what else ""
        share = f"{100 * done / max(self.total, 1):.0f}%"
        return f"{head}{done}/{self.total} ({share}) {clock(now - self.started)} elapsed{rest}"

    def step(self, note: str = "") -> None:
        """One more step done: show its line (:meth:`show`; the time left estimated from the pace since the start,
        ``note`` after it), on a terminal at most once every ``every`` seconds; the last one always."""
        now = time.time()
        with self._lock:
            self.done += 1
            if self.quiet or (now - self.printed < self.every and self.done < self.total):
                return
            left = (now - self.started) / self.done * (self.total - self.done)
            if self.show(self.line(self.done, left, now) + (f" | {note}" if note else ""), self.done):
                self.printed = now

    def show(self, text: str, done: int) -> bool:
        """Print ``[arena] text``, the line of step ``done``: on a terminal in place of the previous one (a new line
        after the last step); elsewhere only when ``done`` reaches another of :data:`PARTS` parts of the total
        (each count is shown by one process at most, when several count together). Whether it printed.

        >>> p = Progress(10)
        >>> [done for done in range(1, 11) if p.show(f"{done}/10", done)]
        [arena] 2/10
        [arena] 4/10
        [arena] 6/10
        [arena] 8/10
        [arena] 10/10
        [2, 4, 6, 8, 10]
        """
        out = sys.stdout
        if self.quiet:
            return False
        if out.isatty():
            out.write(f"\r\x1b[K[arena] {text}" + ("\n" if done >= self.total else ""))
        elif done >= self.total or done * PARTS // max(self.total, 1) > (done - 1) * PARTS // max(self.total, 1):
            out.write(f"[arena] {text}\n")
        else:
            return False
        out.flush()
        return True


__all__ = ["PARTS", "Progress", "clock"]
