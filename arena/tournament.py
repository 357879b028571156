"""Tournaments: a sweep of matchups described as data, run in shards by any Hydra launcher.

A tournament config (``conf/tournament/<name>.yaml``) lists forecasters and natures
(names, or ``{name, params, grid}`` entries whose ``grid`` values are crossed), seeds and
horizons. The matchups are expanded in a fixed order and dealt round-robin to
``shards`` Hydra jobs (``shard=0..shards-1``), so that a launcher (the arena's local one, Ray or
SLURM on a cluster) distributes a few jobs instead of thousands, and every matchup is
stored as soon as it finishes. A tournament's results directory does not depend on the
time (``<results_root>/<tournament_name>``), so rerunning a tournament resumes it: a matchup
whose whole result is already stored for the same resolved config and code version (both are
in its id) is not played again, and the summary covers the matchups of the current plan only.

The Hydra job of every run (:func:`run_job`) plays its matchups here (:func:`run_matchup`: a
composed config, :func:`arena.matchup.matchup_from_config`, played and stored under its id),
prints the tournament's progress (:class:`Progress`), and :class:`SummaryCallback` aggregates
the results directory once the jobs are done (:func:`arena.aggregate.finish`). :func:`rerun` plays a stored
row again from the config it records (``arena-rerun``).
"""

from __future__ import annotations

import copy
import itertools
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from omegaconf import DictConfig, OmegaConf

from arena.errors import ConfigError, unknown_name
from arena.lazy import LazyModule
from arena.results import PLAN_FILE, code_version, is_done, matchup_id, planned, plugin_code, stored_ids

pd = LazyModule("pandas")  # for a stored row (arena-rerun): a worker that plays and stores matchups does not load it

#: Config keys that do not change a matchup's result (left out of its id).
NOT_IN_ID = (
    "hydra",
    "tournament",
    "shard",
    "report",
    "results_root",
    "tournament_name",
    "replace_plan",
    "retry_crashed",
)


def results_dir(root: str, name: str, tournament: str | None, stamp: str) -> str:
    """Where a run's results land: ``root/name`` for a tournament (so that rerunning it resumes),
    ``root/name/stamp`` for a single matchup or a ``-m`` sweep. The config's ``hydra.sweep.dir`` and
    ``hydra.run.dir`` call it as the ``arena_results_dir`` resolver.

    >>> results_dir("results", "calibration", "calibration", "2026-01-01_00-00-00")
    'results/calibration'
    >>> results_dir("results", "single", None, "2026-01-01_00-00-00")
    'results/single/2026-01-01_00-00-00'
    """
    return f"{root}/{name}" if tournament is not None else f"{root}/{name}/{stamp}"


if not OmegaConf.has_resolver("arena_results_dir"):
    OmegaConf.register_new_resolver("arena_results_dir", results_dir)


def auto_shards() -> int:
    """``tournament.shards: auto``: two shards per core this process may use (a few per worker even out
    slow matchups; each shard costs a copy of the composed config and one forked process to play in)."""
    from arena.supervise import cores

    return 2 * max(cores(), 1)


def load_option(group: str, name: str) -> DictConfig:
    """The config of one option of a group (``forecaster/k29``), from Hydra's search path."""
    from hydra.core.global_hydra import GlobalHydra

    repo = GlobalHydra.instance().config_loader().repository
    result = repo.load_config(f"{group}/{name}")
    if result is None:
        raise ConfigError(unknown_name(group, name, repo.get_group_options(group)))
    cfg = result.config
    if "defaults" in cfg:
        cfg = OmegaConf.masked_copy(cfg, [k for k in cfg if k != "defaults"])
    return cfg


def _entries(group: str, items) -> list[tuple[str, DictConfig]]:
    """Expand tournament entries into (label, option config) pairs, crossing grids."""
    out = []
    for item in items:
        if isinstance(item, str):
            out.append((item, load_option(group, item)))
            continue
        item = OmegaConf.to_container(item, resolve=True) if not isinstance(item, dict) else item
        unknown = set(item) - {"name", "params", "grid", "label"}
        if "name" not in item or unknown:
            raise ConfigError(
                f"tournament {group} entry {item!r}: give a name or {{name, params, grid}}"
                + (f" (unknown keys {sorted(unknown)})" if unknown else "")
            )
        base = OmegaConf.merge(load_option(group, item["name"]), item.get("params") or {})
        grid = item.get("grid") or {}
        keys = list(grid)
        for values in itertools.product(*(grid[k] if isinstance(grid[k], list) else [grid[k]] for k in keys)):
            point = dict(zip(keys, values))
            label = item.get("label", item["name"])
            if point:
                label += "[" + ",".join(f"{k}={v}" for k, v in point.items()) + "]"
            out.append((label, OmegaConf.merge(base, point)))
    return out


def _as_list(value, what: str) -> list:
    values = list(value) if OmegaConf.is_list(value) or isinstance(value, (list, tuple)) else [value]
    if not values:
        raise ConfigError(f"tournament {what} is empty; list at least one")
    return values


def plan(cfg: DictConfig) -> list[tuple]:
    """Every matchup of the tournament in ``cfg.tournament`` as (forecaster label, forecaster config,
    nature label, nature config, T, seed), in a fixed order; cheap (no config merge per matchup)."""
    t = cfg.tournament
    for key in ("forecasters", "natures", "seeds", "T"):
        if key not in t:
            raise ConfigError(f"tournament {t.get('name', '?')!r} has no {key!r}; add e.g. {key}: [...]")
    forecasters, natures = _entries("forecaster", t.forecasters), _entries("nature", t.natures)
    seeds, horizons = _as_list(t.seeds, "seeds"), _as_list(t.T, "T")
    return [
        (fl, fc, nl, nc, T, seed)
        for T in horizons
        for (fl, fc), (nl, nc) in itertools.product(forecasters, natures)
        for seed in seeds
    ]


def shared_config(cfg: DictConfig) -> dict:
    """The config shared by every matchup of a tournament, as plain containers (unresolved)."""
    return OmegaConf.to_container(
        OmegaConf.masked_copy(cfg, [k for k in cfg if k not in ("hydra", "tournament", "shard")])
    )


def matchup_config(cfg: DictConfig, entry: tuple, base: dict | None = None) -> DictConfig:
    """The full config of one planned matchup (``base``: :func:`shared_config` of ``cfg``, when already made)."""
    return OmegaConf.create(_matchup_dict(cfg, entry, base))


def _matchup_dict(cfg: DictConfig, entry: tuple, base: dict | None = None) -> dict:
    """:func:`matchup_config` as plain containers (unresolved)."""
    flabel, fcfg, nlabel, ncfg, T, seed = entry
    config = dict(shared_config(cfg) if base is None else base)
    config.update(
        T=T,
        seed=seed,
        forecaster_label=flabel,
        nature_label=nlabel,
        forecaster=OmegaConf.to_container(fcfg),
        nature=OmegaConf.to_container(ncfg),
    )
    return config


def _plain(value) -> bool:
    """Whether plain containers hold no interpolation: then they are their own resolved form."""
    if isinstance(value, dict):
        return all(_plain(v) for v in value.values())
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    return not (isinstance(value, str) and "${" in value)


def resolved_config(cfg: DictConfig | dict) -> dict:
    """The resolved config of one matchup (a composed config, or its resolved plain containers) without the
    keys that do not change its result."""
    config = OmegaConf.to_container(cfg, resolve=True) if OmegaConf.is_config(cfg) else dict(cfg)
    for key in NOT_IN_ID:
        config.pop(key, None)
    return config


def plugin_targets(cfg: DictConfig | dict) -> list[str]:
    """The ``_target_`` classes of a matchup's forecaster and nature."""
    return [str(cfg[k].get("_target_", "")) for k in ("forecaster", "nature") if k in cfg]


def matchup_key(cfg: DictConfig) -> str:
    """The id of a matchup: its labels, seed and T, and a hash of its resolved config and the code
    version (:func:`arena.results.code_version`), everything that shapes its result."""
    return _key(OmegaConf.to_container(cfg, resolve=True))


def _key(resolved: dict) -> str:
    """:func:`matchup_key` of a matchup's resolved config, as plain containers."""
    config = {k: v for k, v in resolved.items() if k not in NOT_IN_ID}
    config["code_version"] = code_version()
    plugins = plugin_code(plugin_targets(resolved))
    if plugins:  # a user's own plugin: its source is part of the version too
        config["plugin_code"] = plugins
    return matchup_id(
        str(resolved["game"]["name"]),
        str(resolved["forecaster_label"]),
        str(resolved["nature_label"]),
        int(resolved["seed"]),
        int(resolved["T"]),
        config,
    )


def resolved_matchup(cfg: DictConfig, entry: tuple, base: dict | None = None) -> dict:
    """The resolved config of one planned matchup as plain containers (``base``: :func:`shared_config` of ``cfg``).

    A matchup's config without interpolations is its own resolved form: no OmegaConf config is built
    (milliseconds each, for every matchup of a tournament: in its plan and in its jobs)."""
    config = _matchup_dict(cfg, entry, base)
    return config if _plain(config) else OmegaConf.to_container(OmegaConf.create(config), resolve=True)


def planned_matchups(cfg: DictConfig, shard: int | None = None, shards: int = 1) -> list[tuple[str, dict]]:
    """(matchup id, resolved config) of every matchup of the tournament in ``cfg.tournament`` in plan order,
    or of those dealt to ``shard`` of ``shards`` (round-robin); each id computed once, from plain containers."""
    base = shared_config(cfg)
    out = []
    for i, entry in enumerate(plan(cfg)):
        if shard is None or i % shards == shard:
            config = resolved_matchup(cfg, entry, base)
            out.append((_key(config), config))
    return out


def planned_ids(cfg: DictConfig) -> list[str]:
    """The matchup ids of every matchup of the tournament in ``cfg.tournament``, in plan order."""
    return [mid for mid, _ in planned_matchups(cfg)]


def shard_of(cfg: DictConfig) -> list[tuple[str, dict]]:
    """(matchup id, resolved config) of the matchups dealt to ``cfg.shard`` of ``cfg.tournament.shards``."""
    shards, shard = cfg.tournament.get("shards", 1), int(cfg.get("shard", 0))
    if not isinstance(shards, int) or isinstance(shards, bool) or shards < 1:
        raise ConfigError(
            f"tournament.shards={shards!r}: give a positive integer (`arena` turns auto into {auto_shards()} here)"
        )
    if not 0 <= shard < shards:
        raise ConfigError(f"shard={shard} is outside 0..{shards - 1}; the tournament has {shards} shards")
    return planned_matchups(cfg, shard, shards)


# ----------------------------------------------------------------------------- playing


def run_matchup(cfg: DictConfig | dict, out_dir: Path, crashed: str | None = None, mid: str | None = None) -> dict:
    """Play the matchup of one composed config (or its resolved plain containers) and store it under
    ``out_dir``; returns its row. ``crashed``: the matchup ended its process (:mod:`arena.supervise`); it is
    stored as that forfeit. ``mid``: its id, when already computed from the same config (:func:`shard_of`).

    With ``keep_trace`` the per-round trace streams to ``traces/<matchup_id>.parquet`` (the
    announced Forecast objects are kept in it for T <= 10^4 only, so memory stays bounded).
    """
    from arena.matchup import matchup_from_config
    from arena.results import reliability_columns, save_matchup
    from arena.runner import Forfeit, play_matchup

    config = resolved_config(cfg)  # resolved once: the matchup, its id and the stored config
    m = matchup_from_config(config)
    mid = _key(config) if mid is None else mid
    trace = Path(out_dir) / "traces" / f"{mid}.parquet" if config.get("keep_trace") else None
    if trace is not None:
        trace.parent.mkdir(parents=True, exist_ok=True)
    crash = Forfeit("unknown", 0, crashed) if crashed is not None else None
    result = play_matchup(m, keep_forecasts=trace is not None and m.T <= 10_000, trace_path=trace, crashed=crash)
    row = result.row()
    row["forecaster_plugin"], row["nature_plugin"] = row["forecaster"], row["nature"]
    row["forecaster"], row["nature"] = str(config["forecaster_label"]), str(config["nature_label"])
    row["matchup_id"] = mid
    row["config"] = json.dumps(config, sort_keys=True, default=str)
    row["code_version"] = code_version()
    row["plugin_code"] = plugin_code(plugin_targets(config))
    rec = result.recorder
    reliability = reliability_columns(rec.p, rec.y, m.referee.ece_bins) if m.game.name != "quantile" else None
    save_matchup(out_dir, row, result.curves_columns(), reliability, trace)
    return row


def metrics_text(row: dict) -> str:
    """One line of a finished matchup: its names, seed, T, headline metrics and any forfeit."""
    status = "" if row["status"] == "ok" else f"  FORFEIT ({row['forfeit_who']} at t={row['forfeit_step']})"
    if "smce_over_T" in row:
        metrics = f"smCE/T={row['smce_over_T']:.4g} brier={row['brier']:.4g}"
    else:  # the quantile game
        metrics = f"coverage={row.get('coverage', math.nan):.4g} pinball={row.get('pinball', math.nan):.4g}"
    return f"{row['forecaster']} vs {row['nature']} seed={row['seed']} T={row['T']}: {metrics}{status}"


def run_job(cfg: DictConfig) -> None:
    """The Hydra job: play the single matchup of ``cfg``, or the matchups of its tournament shard
    that are not stored yet (supervised: :mod:`arena.supervise`), printing each one's line (with the
    tournament's progress). Any error ends it with one line (:func:`one_line_errors`)."""
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    from arena.supervise import leave_to_parent, play_supervised

    hc = HydraConfig.get()
    out_dir = Path(hc.sweep.dir if hc.mode == RunMode.MULTIRUN else hc.run.dir)
    with one_line_errors(out_dir):
        if os.environ.get(DRIVER_PID, str(os.getpid())) not in (str(os.getpid()), ""):
            leave_to_parent()  # a launcher's worker: Ctrl-C is the arena process's, and it ends with it
        if cfg.get("tournament") is None:
            say(f"[arena] {metrics_text(run_matchup(cfg, out_dir))}")
            return
        progress = Progress(out_dir, int(cfg.tournament.shards)) if (out_dir / PLAN_FILE).is_file() else None
        if progress and progress.code_version != code_version():
            print(
                f"[arena] warning: the code changed since this tournament started ({progress.code_version} -> "
                f"{code_version()}); its results are stored under new ids: rerun the tournament to summarize them",
                file=sys.stderr,
                flush=True,
            )
        todo = [
            (mid, m)
            for mid, m in shard_of(cfg)
            if not is_done(out_dir, mid) or (cfg.get("retry_crashed") and crashed(out_dir, mid))
        ]

        def play(mid: str, m: dict, crash: str | None = None) -> None:
            with one_line_errors(out_dir):  # in the supervised child too
                text = metrics_text(run_matchup(m, out_dir, crash, mid))
            say(f"[arena] {progress.finished() + ' | ' if progress else ''}{text}")

        if todo:
            warm_up(cfg)
        play_supervised(out_dir, todo, play, play)


def say(line: str) -> None:
    """``line`` and its newline on stdout in one write (``print`` writes them apart, and an unbuffered stdout
    passes each on): the lines of a tournament's processes, written to one pipe, never run into each other."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def warm_up(cfg: DictConfig | None = None) -> None:
    """Load, in the job's own process, what playing and scoring a matchup load on first use, so that the
    supervised child that plays the shard (:mod:`arena.supervise` forks one per shard) inherits it instead of
    loading it again for every shard: the runner and Numba's CPU target (every compiled kernel: the binary
    game's scores, K29), some 0.1 s a process; for the other games (their curves are tables, their natures
    SciPy's laws) pandas and scipy.special too, and pandas and pyarrow where ``cfg`` keeps traces. The arena's launcher
    (:mod:`arena.launcher`) calls it before it forks its workers, which then find it done. Plugin code does
    not run here: only libraries load. The binary game plays and stores matchups without pandas or SciPy's
    optimizers: what the summary's tables need loads in :func:`warm_up_summary`."""
    import arena.runner  # noqa: F401

    if "numba" in sys.modules:  # a plugin or the game uses compiled code
        try:
            from numba.core.registry import cpu_target

            cpu_target.target_context.refresh()
        except Exception:  # noqa: BLE001 (another Numba: the child loads it on first use, as before)
            pass
    other_game = cfg is not None and str(OmegaConf.select(cfg, "game.name", default="binary")) != "binary"
    trace = cfg is not None and bool(cfg.get("keep_trace"))  # a table, written as Parquet
    if other_game or trace:
        import pandas  # noqa: F401
    if other_game:
        import scipy.special  # noqa: F401
    if trace:
        import pyarrow.parquet  # noqa: F401


def warm_up_summary() -> None:
    """Load what :func:`arena.aggregate.finish` loads to write the summary's tables (pandas, pyarrow, SciPy's linear programs and
    special functions, some 0.35 s): the arena's launcher calls it while its workers play, when the ``arena``
    process would otherwise wait."""
    import pyarrow.parquet  # noqa: F401
    import scipy.optimize  # noqa: F401 (the minimax table's linear programs)
    import scipy.special  # noqa: F401 (the confidence intervals' t quantiles)

    import arena.aggregate  # noqa: F401 (pandas)
    import arena.minimax  # noqa: F401


#: The environment variable that holds the pid of the ``arena`` process (set by :func:`arena.cli.main`).
DRIVER_PID = "ARENA_DRIVER_PID"


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
        print(f"arena: error: {message}", file=sys.stderr, flush=True)
        raise SystemExit(code) from None


def _plan_ids(out_dir: Path | None) -> set[str] | None:
    """The matchup ids of the tournament plan of ``out_dir``; None without one (or with a damaged one)."""
    try:
        return planned(out_dir) if out_dir is not None else None
    except ValueError:
        return None


def stored_text(out_dir: Path | None) -> str:
    """`` (N of M stored)`` for a tournament's results directory, else an empty string."""
    ids = _plan_ids(out_dir)
    return f" ({len(ids & stored_ids(out_dir))} of {len(ids)} stored)" if ids else ""


#: The results directory of this process's run (set when Hydra starts it), for Ctrl-C's message.
RUN_DIR: list[Path] = []


def interrupted_text() -> str:
    """``N of M stored`` for the run of this process (its tournament's plan, or its one matchup)."""
    if not RUN_DIR:
        return "nothing stored"
    ids = _plan_ids(RUN_DIR[-1])
    stored = stored_ids(RUN_DIR[-1])
    return f"{len(ids & stored)} of {len(ids)} stored" if ids else f"{len(stored)} of 1 stored"


def crashed(out_dir: Path, mid: str) -> bool:
    """Whether the stored result of ``mid`` records a matchup that ended its process (:mod:`arena.supervise`)."""
    from arena.results import read_stored

    row = read_stored(out_dir, mid)["summary"].iloc[0]
    return row["forfeit_who"] == "unknown" and "ended its process" in str(row["forfeit_reason"])


# ----------------------------------------------------------------------------- progress and summary


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


#: One 16-byte record (the time, as text) per matchup finished in this run, appended by every job.
PROGRESS_FILE = ".progress"
_RECORD = 16


class Progress:
    """Matchups done out of the tournament's total, elapsed time and an estimate of the time left.

    Every job of a sweep (on any launcher, on a shared filesystem) appends a record to the results
    directory's :data:`PROGRESS_FILE` when it stores a matchup, under an exclusive lock, and reads
    the count from the file's size: the figures are the whole tournament's, each count is printed
    once, and no directory is listed. The time left is estimated from the pace since the first
    matchup of this run finished (the start-up before it does not count), once every job had
    time to finish one.
    """

    def __init__(self, out_dir: Path, shards: int = 1):
        from arena.results import read_plan

        self.out_dir, self.shards = Path(out_dir), shards
        info = read_plan(out_dir)
        self.total, self.started, self.done_at_start = len(info["ids"]), info["started"], info["done_at_start"]
        self.code_version = info["code_version"]

    def finished(self) -> str:
        """Count one more matchup stored by this job; the progress line."""
        now = time.time()
        with open(self.out_dir / PROGRESS_FILE, "ab+") as f:
            _lock(f)
            f.write(f"{now:<{_RECORD - 1}.3f}\n".encode())
            f.flush()
            played = f.tell() // _RECORD
            f.seek(0)
            first = float(f.read(_RECORD) or now)
        done = min(self.done_at_start + played, self.total)
        workers = min(self.shards, os.cpu_count() or 1)
        left = ""
        if played > workers and done < self.total:
            left = f", ~{_clock((now - first) / (played - 1) * (self.total - done))} left"
        return (
            f"{done}/{self.total} ({100 * done / max(self.total, 1):.0f}%) {_clock(now - self.started)} elapsed{left}"
        )


def _lock(f) -> None:
    """An exclusive lock on an open file until it is closed (fcntl where there is one)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover (Windows: counts may repeat under concurrent jobs)
        return
    fcntl.flock(f.fileno(), fcntl.LOCK_EX)


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


try:
    from hydra.experimental.callback import Callback
except ImportError:  # pragma: no cover
    Callback = object  # type: ignore[misc,assignment]


def _skip_shard_validation() -> None:
    """Hydra's basic sweeper composes every job's config in this process before launching the batch,
    to find a bad override early; the jobs of a tournament differ only in ``shard``, and ``arena``
    checked the tournament before Hydra started (:func:`arena.config.prepare`). Those compositions are
    serial (about 0.3 s each, two shards per core): skip them. Each job still composes its own config."""
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper

    BasicSweeper.validate_batch_is_legal = lambda self, batch: None


class shard_configs_composed_once:
    """Within this block, Hydra composes the config of a tournament's first job in this process and gives every
    other job of the same sweep a copy with its ``shard`` (and Hydra's record of the job's overrides) set as
    composing would (:func:`arena.cli.main` runs Hydra in it).

    Hydra composes each job's config from scratch (``load_sweep_config``: the defaults tree, every YAML file
    read and merged, some 0.05 s) and the jobs of a tournament differ only in ``shard``: where they run in
    this process (``hydra.launcher.n_jobs=1``, the basic launcher) that is serial time per shard; a worker of
    the local launcher, forked inside this block, composes its first job and copies it for the others. A
    sweep of anything else is composed as Hydra does."""

    def __enter__(self):
        from hydra._internal.config_loader_impl import ConfigLoaderImpl

        self.original, cache = ConfigLoaderImpl.load_sweep_config, {}
        original = self.original

        def load_sweep_config(loader, master_config: DictConfig, sweep_overrides: list[str]) -> DictConfig:
            shard = [o for o in sweep_overrides if o.split("=")[0] == "shard"]
            key = (id(master_config), *(o for o in sweep_overrides if o not in shard))  # one sweep's jobs
            if len(shard) != 1 or key not in cache:
                cfg = original(loader, master_config, sweep_overrides)
                if len(shard) == 1:
                    cache[key] = (master_config, copy.deepcopy(cfg))  # the master kept: its id stays its own
                return cfg
            return _with_shard(cache[key][1], shard[0], master_config)

        ConfigLoaderImpl.load_sweep_config = load_sweep_config
        return self

    def __exit__(self, *exc) -> None:
        from hydra._internal.config_loader_impl import ConfigLoaderImpl

        ConfigLoaderImpl.load_sweep_config = self.original


def _with_shard(composed: DictConfig, override: str, master_config: DictConfig) -> DictConfig:
    """A copy of the composed config of one job of a tournament, as composing it with the ``shard=K`` override
    ``override`` instead gives: ``shard``, ``hydra.overrides.task`` and ``hydra.job.override_dirname``."""
    from hydra._internal.config_loader_impl import get_overrides_dirname
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parser = OverridesParser.create()
    cfg = copy.deepcopy(composed)
    cfg.shard = parser.parse_override(override).value()
    task = [override if line.split("=")[0] == "shard" else line for line in cfg.hydra.overrides.task]
    cfg.hydra.overrides.task = task
    names = cfg.hydra.job.config.override_dirname
    cfg.hydra.job.override_dirname = get_overrides_dirname(
        parser.parse_overrides(task), names.exclude_keys, names.item_sep, names.kv_sep
    )
    OmegaConf.copy_cache(from_config=master_config, to_config=cfg)
    return cfg


class SummaryCallback(Callback):
    """Records a tournament's plan before its jobs start; aggregates and reports a sweep once all its
    matchups finished (or a single run)."""

    def on_run_start(self, config: DictConfig, **kwargs: Any) -> None:
        RUN_DIR.append(Path(config.hydra.run.dir))

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        os.environ.setdefault(DRIVER_PID, str(os.getpid()))
        RUN_DIR.append(Path(config.hydra.sweep.dir))
        if config.get("tournament") is not None:
            with one_line_errors():
                start_tournament(config, Path(config.hydra.sweep.dir))
            _skip_shard_validation()

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        out_dir = Path(config.hydra.sweep.dir)
        from arena.aggregate import finish

        with one_line_errors(out_dir):
            finish(out_dir, bool(config.get("report", True)), planned(out_dir))
        from arena.lock import release

        release(out_dir)

    def on_run_end(self, config: DictConfig, **kwargs: Any) -> None:
        from arena.aggregate import finish

        with one_line_errors():
            finish(Path(config.hydra.run.dir), bool(config.get("report", True)))


# ----------------------------------------------------------------------------- rerun


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
    only name registered plugins (:func:`arena.matchup.check_stored_config`)."""
    from arena.matchup import check_stored_config
    from arena.results import MACHINE_COLUMNS, MACHINE_PREFIXES

    if "config" not in row or not isinstance(row["config"], str):
        raise ConfigError("the row has no `config` column; rows written by this arena record their resolved config")
    config = json.loads(row["config"])
    if not trust:
        check_stored_config(config)
    new = run_matchup(OmegaConf.create(config), out_dir)
    skip = {"parts"} | ({"code_version", "matchup_id"} if row.get("code_version") != new["code_version"] else set())
    compared = [
        c for c in row.index if c not in MACHINE_COLUMNS and not c.startswith(MACHINE_PREFIXES) and c not in skip
    ]
    return new, compared, [c for c in compared if not _same(row[c], new.get(c))]
