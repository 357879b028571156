"""One results directory, one plan: the lock a tournament run holds on its results directory.

A tournament run (:func:`arena.jobs.start_tournament`) claims its results directory before
any matchup is played (:func:`claim`):

* it takes an exclusive lock on ``<dir>/.arena.lock`` (the `filelock
  <https://py-filelock.readthedocs.io>`_ package; held until the run's process ends) and writes who
  holds it to ``<dir>/.arena.lock.json`` (pid, host, start, number of matchups and a digest of the
  plan's matchup ids);
* when another run holds the lock, a run of the same plan shares the work (every matchup is stored
  atomically under its id, and each job skips what is stored); a run of another plan is refused
  with one line naming the holder;
* once it holds the lock, a run whose plan differs from the stored ``plan.json`` (same code, other
  matchups: other settings) is refused, so that the default run's summary is never replaced
  silently: name another directory (``tournament_name=...`` or ``results_root=...``) or pass
  ``replace_plan=true``. Stored matchups are never deleted; figures of the old plan that the new
  summary does not draw are removed when it is reported. After a code change the plan is simply
  renewed (the old results are of older code).

On NFS, ``filelock`` locks with ``flock``, which Linux clients emulate with NFS byte-range locks:
the lock then holds between machines when the server supports locking (NFSv4, or NFSv3 with
``lockd``); on a mount with ``nolock`` it holds between processes of one machine only.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import time
from pathlib import Path

from arena.errors import ConfigError

LOCK_FILE = ".arena.lock"
HOLDER_FILE = ".arena.lock.json"

#: The lock of each results directory this process holds (kept until the process ends).
_HELD: dict[Path, object] = {}


def plan_digest(ids: list[str]) -> str:
    """A digest of a plan's matchup ids (in any order)."""
    return hashlib.sha256("\n".join(sorted(ids)).encode()).hexdigest()[:16]


def holder(out_dir: Path) -> dict:
    """Who holds the lock of ``out_dir``, as recorded (empty when unknown)."""
    try:
        info = json.loads((Path(out_dir) / HOLDER_FILE).read_text())
        return info if isinstance(info, dict) else {}
    except (OSError, ValueError):
        return {}


def _who(info: dict) -> str:
    since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(info["since"])) if "since" in info else "?"
    matchups = info.get("matchups", "?")
    return f"arena pid {info.get('pid', '?')} on {info.get('host', '?')} (since {since}, {matchups} matchups)"


def claim(out_dir: Path, plan: dict, replace: bool = False) -> bool:
    """Claim ``out_dir`` for the tournament ``plan`` (its ``ids``, ``tournament``, ``code_version``).

    Returns True when this run holds the directory (it then writes the plan), False when it shares
    it with another run of the same plan. Raises ConfigError (one line) for another plan.
    """
    from filelock import FileLock, Timeout

    from arena.results import read_plan, write_text_atomic

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    digest = plan_digest(plan["ids"])
    key = out_dir.resolve()
    if key not in _HELD:
        lock = FileLock(str(out_dir / LOCK_FILE))
        try:
            lock.acquire(timeout=0)
        except Timeout:
            other = holder(out_dir)
            if other.get("plan") == digest:
                print(f"[arena] {out_dir} is in use by {_who(other)} with the same plan: sharing its work", flush=True)
                return False
            raise ConfigError(
                f"{out_dir} is in use by {_who(other)} with another plan; wait for it to finish, "
                "or give this run its own directory with tournament_name=NAME or results_root=DIR"
            ) from None
        _HELD[key] = lock
    try:
        old = read_plan(out_dir)
    except ValueError:  # a damaged plan.json: it is written again below
        old = None
    if (
        old is not None
        and not replace
        and old.get("code_version") == plan["code_version"]
        and plan_digest(old["ids"]) != digest
    ):
        release(out_dir)
        raise ConfigError(
            f"{out_dir} holds another plan of tournament {old.get('tournament')!r} ({len(old['ids'])} matchups; "
            f"this one has {len(plan['ids'])}): give this run its own directory with tournament_name=NAME or "
            "results_root=DIR, or add replace_plan=true to summarize this plan there instead (stored matchups "
            "are kept)"
        )
    write_text_atomic(
        json.dumps(
            {
                "pid": os.getpid(),
                "host": socket.gethostname(),
                "since": time.time(),
                "matchups": len(plan["ids"]),
                "plan": digest,
            }
        ),
        out_dir / HOLDER_FILE,
    )
    return True


def release(out_dir: Path) -> None:
    """Give up the lock of ``out_dir`` (if this process holds it)."""
    lock = _HELD.pop(Path(out_dir).resolve(), None)
    if lock is not None:
        lock.release()


__all__ = ["claim", "holder", "plan_digest", "release"]
