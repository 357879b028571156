"""A tournament's jobs: each plays the matchups of its shard that are not stored yet and stores each one.

A results directory does not depend on the time (``<results_root>/<tournament_name>``), so
rerunning a tournament resumes it: a matchup whose whole result is already stored for the same
resolved config and code version (both are in its id, :func:`arena.plan.matchup_key`) is not
played again. A job plays its matchups in a supervised child process (:mod:`arena.supervise`):
a matchup that ends the process is stored as a forfeit and the shard goes on. :func:`rerun` plays
a stored row again from the config it records (``arena-rerun``).
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from filelock import FileLock
from omegaconf import DictConfig, OmegaConf

from arena.errors import ConfigError, printable
from arena.lazy import LazyModule
from arena.plan import matchup_key, planned_ids, plugin_targets, resolved_config, shard_of
from arena.progress import Progress
from arena.results import CRASH, PLAN_FILE, code_version, planned, plugin_code
from arena.store import done_ids, log_name, read_stored, stored_ids

if TYPE_CHECKING:
    from arena.supervise import Crash

pd = LazyModule("pandas")  # for a stored row (arena-rerun): a worker that plays and stores matchups does not load it
#: The longest game whose realized forecasts and outcomes are stored with its result (two floats a round, as text).
ROUNDS_KEPT = 10_000


def run_matchup(
    cfg: DictConfig | dict, out_dir: Path, crashed: Crash | None = None, mid: str | None = None, log: str = "matchups"
) -> dict:
    """Play the matchup of one composed config (or its resolved plain containers) and store it under
    ``out_dir`` (in the log ``log``: :func:`arena.store.save_matchup`); returns its row. ``crashed``: the
    matchup ended its process (:mod:`arena.supervise`); it is stored as that forfeit. ``mid``: its id, when
    already computed from the same config (:func:`shard_of`).

    With ``keep_trace`` the per-round trace streams to ``traces/<matchup_id>.parquet`` (the
    announced Forecast objects are kept in it for T <= 10^4 only, so memory stays bounded).
    """
    from arena.matchup import matchup_from_config

    config = resolved_config(cfg)  # resolved once: the matchup, its id and the stored config
    return _play_and_store(matchup_from_config(config), config, out_dir, crashed, mid, log)


def _play_and_store(
    m, config: dict, out_dir: Path, crashed: Crash | None = None, mid: str | None = None, log: str = "matchups"
) -> dict:
    """Play matchup ``m`` of resolved config ``config`` and store it under ``out_dir`` in log ``log``; its row."""
    from arena.results import Forfeit, Provenance, reliability_columns, result_row
    from arena.runner import play_matchup
    from arena.store import save_matchup

    mid = matchup_key(config) if mid is None else mid
    trace = Path(out_dir) / "traces" / f"{mid}.parquet" if config.get("keep_trace") else None
    if trace is not None:
        trace.parent.mkdir(parents=True, exist_ok=True)
    crash = Forfeit(*crashed) if crashed is not None else None
    result = play_matchup(m, keep_forecasts=trace is not None and m.T <= 10_000, trace_path=trace, crashed=crash)
    labels = str(config["forecaster_label"]), str(config["nature_label"])
    row = result_row(result, Provenance(*labels, mid, config, plugin_code(plugin_targets(config))))
    rec = result.recorder
    reliability = reliability_columns(rec.p, rec.y, m.referee.ece_bins) if m.game.name != "quantile" else None
    # kept for the report's pairs (replaying every matchup there costs as much as the tournament), up to a size
    rounds = {"p": rec.p[: rec.n], "y": rec.y[: rec.n]} if rec.n <= ROUNDS_KEPT else None
    save_matchup(out_dir, row, result.curves_columns(), reliability, trace, rounds, log)
    return row


def metrics_text(row: dict) -> str:
    """One line of a finished matchup: its names, seed, T, headline metrics and any forfeit."""
    status = "" if row["status"] == "ok" else f"  FORFEIT ({row['forfeit_who']} at t={row['forfeit_step']})"
    if "smce_over_T" in row:
        metrics = f"smCE/T={row['smce_over_T']:.4g} brier={row['brier']:.4g}"
    else:  # the quantile game
        metrics = f"coverage={row.get('coverage', math.nan):.4g} pinball={row.get('pinball', math.nan):.4g}"
    return f"{row['forecaster']} vs {row['nature']} seed={row['seed']} T={row['T']}: {metrics}{status}"


def say(line: str) -> None:
    """``line`` and its newline on stdout in one write (``print`` writes them apart, and an unbuffered stdout
    passes each on): the lines of a tournament's processes, written to one pipe, never run into each other."""
    sys.stdout.write(printable(line) + "\n")  # labels from a config: their control characters shown escaped
    sys.stdout.flush()


def play_shard(cfg: DictConfig, out_dir: Path) -> None:
    """Play the matchups of the tournament shard of ``cfg`` that are not stored yet (supervised:
    :mod:`arena.supervise`), printing each one's line with the tournament's progress."""
    from arena.supervise import play_supervised

    progress = MatchupCount(out_dir, int(cfg.tournament.shards)) if (out_dir / PLAN_FILE).is_file() else None
    if progress and progress.code_version != code_version():
        print(
            f"[arena] warning: the code changed since this tournament started ({progress.code_version} -> "
            f"{code_version()}); its results are stored under new ids: rerun the tournament to summarize them",
            file=sys.stderr,
            flush=True,
        )
    mine = shard_of(cfg)
    done = done_ids(out_dir, [mid for mid, _ in mine])  # every stored result read once, checked whole
    todo = [(mid, m) for mid, m in mine if mid not in done or (cfg.get("retry_crashed") and crashed(out_dir, mid))]
    log = log_name(int(cfg.get("shard", 0)), int(cfg.tournament.get("shards", 1)))  # this shard's own log

    def play(mid: str, m: dict, crash: Crash | None = None) -> None:
        text = metrics_text(run_matchup(m, out_dir, crash, mid, log))
        if progress:  # the tournament's count, a few lines (summarize ends the run with its answer)
            progress.finished()
        else:
            say(f"[arena] {text}")

    play_supervised(out_dir, todo, play, play, lambda: one_line_errors(out_dir), plugin_packages(todo))


def plugin_packages(matchups: list[tuple[str, dict]]) -> tuple[str, ...]:
    """The top-level packages of the plugins of ``matchups`` (id, resolved config): what a supervised child
    watches besides the arena and its libraries (:class:`arena.supervise.Pristine`)."""
    return tuple(sorted({t.partition(".")[0] for _, m in matchups for t in plugin_targets(m)}))


def play_single(cfg: DictConfig, out_dir: Path) -> None:
    """Play the single matchup of ``cfg`` (supervised, as a shard's matchups are) and print its line."""
    from arena.supervise import play_supervised

    config = resolved_config(cfg)
    matchups = [(matchup_key(config), config)]

    def play(mid: str, m: dict, crash: Crash | None = None) -> None:
        say(f"[arena] {metrics_text(run_matchup(m, out_dir, crash, mid))}")

    play_supervised(out_dir, matchups, play, play, lambda: one_line_errors(out_dir), plugin_packages(matchups))


def crashed(out_dir: Path, mid: str) -> bool:
    """Whether the stored result of ``mid`` records a matchup that ended its process (:mod:`arena.supervise`)."""
    return read_stored(out_dir, mid)["summary"].iloc[0]["forfeit_who"] == CRASH


class one_line_errors:
    """Turn an error of a run into one line and a failing exit status (SystemExit, which Hydra passes on
    where it turns other exceptions of callbacks into warnings): a config error exits 2; a file that
    cannot be read or written exits 1, naming the file and what to do; Ctrl-C is left to
    :func:`arena.cli.main`."""

    def __init__(self, out_dir: Path | None = None):
        self.out_dir = out_dir

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, tb) -> bool:
        if exc is None or isinstance(exc, (KeyboardInterrupt, SystemExit)):
            return False
        if isinstance(exc, ConfigError):
            message, code = str(exc), 2
        elif isinstance(exc, OSError):
            where = f" {exc.filename}" if exc.filename else ""
            fix = {
                28: "free some space",
                30: "make it writable (the filesystem is read-only)",
                13: "make it writable",
            }.get(exc.errno or 0, "fix it")
            message, code = (
                (
                    f"cannot write or read{where}: {exc.strerror or exc}; {fix}, then run the same command "
                    f"to resume{stored_text(self.out_dir)}"
                ),
                1,
            )
        else:
            message, code = (f"{type(exc).__name__}: {' '.join(str(exc).split())[:500]}{stored_text(self.out_dir)}"), 1
        print(f"arena: error: {printable(message)}", file=sys.stderr, flush=True)
        raise SystemExit(code) from None


def stored_of_plan(out_dir: Path | None) -> tuple[int, int] | None:
    """(stored, planned) matchups of the tournament plan of ``out_dir``; None without one (or with a damaged one)."""
    try:
        ids = planned(out_dir) if out_dir is not None else None
    except ValueError:
        return None
    return (len(ids & stored_ids(out_dir)), len(ids)) if ids else None


def stored_text(out_dir: Path | None) -> str:
    """`` (N of M stored)`` for a tournament's results directory, else an empty string."""
    counts = stored_of_plan(out_dir)
    return f" ({counts[0]} of {counts[1]} stored)" if counts else ""


#: One 16-byte record (the time, as text) per matchup finished in this run, appended by every job.
PROGRESS_FILE = ".progress"
_RECORD = 16


class MatchupCount:
    """Matchups done out of the tournament's total, counted across its jobs, and an estimate of the time left.

    Every job of a sweep (on any launcher, on a shared filesystem) appends a record to the results
    directory's :data:`PROGRESS_FILE` when it stores a matchup, under a lock (a file beside it), and reads
    the count from the file's size: the figures are the whole tournament's, each count is printed
    once, and no directory is listed. The time left is estimated from the pace since the first
    matchup of this run finished (the start-up before it does not count), once every job had
    time to finish one. The line is :class:`arena.progress.Progress`'s.
    """

    def __init__(self, out_dir: Path, shards: int = 1):
        from arena.results import read_plan

        self.out_dir, self.shards = Path(out_dir), shards
        info = read_plan(out_dir)
        self.total, self.done_at_start = len(info["ids"]), info["done_at_start"]
        self.code_version = info["code_version"]
        self.printer = Progress(self.total, "matchups", started=info["started"])

    def finished(self) -> str:
        """Count one more matchup stored by this job; show the progress line (:meth:`arena.progress.Progress.show`)
        and return it."""
        now = time.time()
        # held for microseconds: a job that finds it taken retries within a millisecond (filelock's default
        # 50 ms, for the two shards of a tournament of short matchups, was 15% of their time)
        lock = FileLock(self.out_dir / f"{PROGRESS_FILE}.lock")
        with lock.acquire(poll_interval=0.001), open(self.out_dir / PROGRESS_FILE, "ab+") as f:
            f.write(f"{now:<{_RECORD - 1}.3f}\n".encode())
            f.flush()
            played = f.tell() // _RECORD
            f.seek(0)
            first = float(f.read(_RECORD) or now)
        done = min(self.done_at_start + played, self.total)
        workers = min(self.shards, os.cpu_count() or 1)
        left = (now - first) / (played - 1) * (self.total - done) if played > workers and done < self.total else None
        line = self.printer.line(done, left, now)
        self.printer.show(line, done)
        return line


def start_tournament(cfg: DictConfig, out_dir: Path) -> dict:
    """Lock the results directory and record the plan of a tournament run in it (its ids, the time, what
    is already stored), clearing temp files and markers left by a killed run (:mod:`arena.lock`).
    Returns the plan."""
    from arena.lock import claim
    from arena.results import PARTS, write_text_atomic
    from arena.supervise import clear_markers

    out_dir = Path(out_dir)
    ids = planned_ids(OmegaConf.masked_copy(cfg, [k for k in cfg if k != "hydra"]))
    if len(set(ids)) != len(ids):
        raise ConfigError(
            f"tournament {cfg.tournament.get('name')!r} lists the same matchup twice; "
            "give repeated entries different params or a label"
        )
    info = {
        "tournament": str(cfg.tournament.get("name")),
        "code_version": code_version(),
        "ids": ids,
        "started": time.time(),
    }
    if not claim(out_dir, info, bool(cfg.get("replace_plan"))):
        return info  # another run of the same plan holds the directory: share its work
    stored = stored_ids(out_dir)
    for part in PARTS:
        for tmp in (out_dir / part).glob(".*.tmp"):
            tmp.unlink(missing_ok=True)
    clear_markers(out_dir)
    info["done_at_start"] = len(stored.intersection(ids))
    write_text_atomic("", out_dir / PROGRESS_FILE)
    write_text_atomic(json.dumps(info), out_dir / PLAN_FILE)
    if info["done_at_start"]:
        print(
            f"[arena] resuming {info['tournament']}: {info['done_at_start']}/{len(ids)} matchups already "
            f"stored in {out_dir}",
            flush=True,
        )
    return info


def stored_row(source: Path, row: int | None = None, matchup: str | None = None) -> pd.Series:
    """Row ``row`` (0-based position) or the row of matchup id ``matchup`` of a results directory's
    summary (``source``) or of a summary table file."""
    from arena.results import read_table

    path = source / "summary.parquet" if source.is_dir() else source
    if source.is_dir() and not path.is_file():
        raise ConfigError(
            f"{source} has no summary.parquet; give a results directory after its tournament "
            "finished (or run `arena-report` on it), or a summary .parquet/.csv file"
        )
    table = read_table(path)
    if matchup is not None:
        hits = table.index[table["matchup_id"] == matchup] if "matchup_id" in table else []
        if len(hits) == 0:
            raise ConfigError(f"no row has matchup_id {matchup!r} in {source}; copy an id from the matchup_id column")
        return table.loc[hits[0]]
    if not 0 <= row < len(table):
        raise ConfigError(f"--row {row} is outside 0..{len(table) - 1} ({len(table)} rows in {source})")
    return table.iloc[row]


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (float, np.floating)) and isinstance(b, (float, np.floating)):
        return (math.isnan(a) and math.isnan(b)) or a == b
    return bool(a == b) or (_missing(a) and _missing(b))


def _missing(v: Any) -> bool:
    """None, NaN or an empty string: a CSV round trip turns an empty string into NaN."""
    return v is None or v == "" or (isinstance(v, float) and math.isnan(v))


def rerun(row: pd.Series, out_dir: Path, trust: bool = False) -> tuple[dict, list[str], list[str]]:
    """Play the matchup of one result row again from the config it records; the new row, the columns
    compared (timing and memory aside) and those whose values differ. Unless ``trust``, the config may
    only name registered plugins with plain values (:func:`arena.matchup.matchup_from_stored`)."""
    from arena.matchup import matchup_from_stored
    from arena.results import MACHINE_COLUMNS, MACHINE_PREFIXES

    if "config" not in row or not isinstance(row["config"], str):
        raise ConfigError("the row has no `config` column; rows written by this arena record their resolved config")
    m = matchup_from_stored(row["config"], trust)
    config = json.loads(row["config"])
    new = _play_and_store(m, resolved_config(OmegaConf.create(config)) if trust else config, out_dir, log="rerun")
    skip = {"parts"} | ({"code_version", "matchup_id"} if row.get("code_version") != new["code_version"] else set())
    compared = [
        c for c in row.index if c not in MACHINE_COLUMNS and not c.startswith(MACHINE_PREFIXES) and c not in skip
    ]
    return new, compared, [c for c in compared if not _same(row[c], new.get(c))]
