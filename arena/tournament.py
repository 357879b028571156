"""Tournaments under Hydra: the job function, the callbacks and the results folder's resolver.

``arena`` runs a tournament as a Hydra multirun over ``shard=0..shards-1`` (:mod:`arena.plan`
deals the matchups to the shards), so that any Hydra launcher (the arena's local one, Ray or SLURM
on a cluster) distributes a few jobs instead of thousands. Before the jobs start,
:class:`SummaryCallback` records the tournament's plan in its results directory; each job
(:func:`run_job`) plays its shard (:func:`arena.jobs.play_shard`); once they are done the callback
aggregates the results directory (:func:`arena.summarize.summarize`). With ``tournament.until_decided`` the
sweep plays the listed seeds and the callback then adds seeds to the undecided pairs (:func:`add_seeds`).
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from arena.jobs import one_line_errors, start_tournament, stored_of_plan
from arena.plan import until_decided
from arena.results import planned
from arena.store import stored_ids


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


def run_job(cfg: DictConfig) -> None:
    """The Hydra job: play the single matchup of ``cfg``, or the matchups of its tournament shard
    that are not stored yet (supervised: :mod:`arena.supervise`), printing each one's line (with the
    tournament's progress). Any error ends it with one line (:func:`one_line_errors`)."""
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    from arena.jobs import play_shard, play_single
    from arena.supervise import leave_to_parent

    hc = HydraConfig.get()
    out_dir = Path(hc.sweep.dir if hc.mode == RunMode.MULTIRUN else hc.run.dir)
    with one_line_errors(out_dir):
        if os.environ.get(DRIVER_PID, str(os.getpid())) not in (str(os.getpid()), ""):
            leave_to_parent()  # a launcher's worker: Ctrl-C is the arena process's, and it ends with it
        if cfg.get("tournament") is None:
            play_single(cfg, out_dir)
            return
        play_shard(cfg, out_dir)


def add_seeds(config: DictConfig, out_dir: Path) -> set[str]:
    """``tournament.until_decided``: once the sweep stored the listed seeds, add seeds to the undecided pairs
    (:func:`arena.sequential_seeds.until_decided`), played by this process's workers on this machine (as many
    as the local launcher's ``n_jobs`` gives); write the claims beside the summary and say how many matchups
    were played. Returns the ids played (the summary's matchups)."""
    from arena.launcher import workers_for
    from arena.results import write_table
    from arena.sequential_seeds import TABLE, play_here, played_text
    from arena.sequential_seeds import until_decided as run_until_decided

    cfg = OmegaConf.masked_copy(config, [k for k in config if k != "hydra"])
    workers = workers_for(int(OmegaConf.select(config, "hydra.launcher.n_jobs", default=-1) or -1))
    run = run_until_decided(cfg, out_dir, functools.partial(play_here, out_dir, workers=workers))
    write_table(run.table, out_dir, TABLE)
    print(f"[arena] {played_text(run)}", flush=True)
    return set(run.played)


#: The environment variable that holds the pid of the ``arena`` process (set by :func:`arena.cli.main`).
DRIVER_PID = "ARENA_DRIVER_PID"


#: The results directory of this process's run (set when Hydra starts it), for Ctrl-C's message.
RUN_DIR: list[Path] = []


def interrupted_text() -> str:
    """``N of M stored`` for the run of this process (its tournament's plan, or its one matchup)."""
    if not RUN_DIR:
        return "nothing stored"
    counts = stored_of_plan(RUN_DIR[-1])
    return f"{counts[0]} of {counts[1]} stored" if counts else f"{len(stored_ids(RUN_DIR[-1]))} of 1 stored"


def forfeited() -> tuple[int, int] | None:
    """(forfeits, matchups) in the summary of this process's run; None where it has none (nothing ran)."""
    import pandas as pd

    path = RUN_DIR[-1] / "summary.parquet" if RUN_DIR else None
    if path is None or not path.is_file():
        return None
    status = pd.read_parquet(path, columns=["status"])["status"]
    return int((status != "ok").sum()), len(status)


try:
    from hydra.experimental.callback import Callback
except ImportError:  # pragma: no cover
    Callback = object  # type: ignore[misc,assignment]


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

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        out_dir = Path(config.hydra.sweep.dir)
        from arena.summarize import summarize

        with one_line_errors(out_dir):
            only = planned(out_dir)
            if config.get("tournament") is not None and until_decided(config.tournament):
                only = add_seeds(config, out_dir)
            summarize(out_dir, bool(config.get("report", True)), only)
        from arena.lock import release

        release(out_dir)

    def on_run_end(self, config: DictConfig, **kwargs: Any) -> None:
        from arena.summarize import summarize

        with one_line_errors():
            summarize(Path(config.hydra.run.dir), bool(config.get("report", True)))
