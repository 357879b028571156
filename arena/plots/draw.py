"""Drawing a report's figure jobs (:class:`~arena.plots.jobs.Job`): each in this process or in a pool of worker
processes (``concurrent.futures``), and only those whose inputs changed since they were drawn.

A folder of figures keeps ``.manifest.json``: per figure, a digest of its data, its formats, the plotting code
and the rcParams (:func:`job_key`). A figure whose digest is the manifest's and whose files are there is not
drawn again (:func:`to_draw`).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import as_completed
from pathlib import Path

import matplotlib as mpl

import arena.plots.binary as binary
import arena.plots.decision as decision
import arena.plots.experts as experts
import arena.plots.quantile as quantile
from arena.plots.certificates import certificate_margins
from arena.plots.compare import comparison_figure
from arena.plots.jobs import Job, digest
from arena.plots.leaderboards import leaderboard_heatmap
from arena.plots.pairs import pair_matrix
from arena.plots.style import _save
from arena.progress import Progress
from arena.results import write_text_atomic

#: Every figure a report draws, by the name its job gives.
FIGURES = {
    **binary.FIGURES,
    **quantile.FIGURES,
    **experts.FIGURES,
    **decision.FIGURES,
    "leaderboard": lambda summary, metric: leaderboard_heatmap(summary, metric),
    "certificates": lambda summary, styles: certificate_margins(summary, styles=styles),
    "compare": lambda curves, final: comparison_figure(curves, final=final),
    "pairs": lambda pairs, tiers: pair_matrix(pairs, tiers),
}
#: The manifest of a folder's figures: per figure, the digest of its inputs (:func:`job_key`).
MANIFEST = ".manifest.json"
#: rcParams that never travel to a worker process.
_LOCAL_RC = ("backend", "backend_fallback", "interactive")
#: A worker process is worth starting only for this many figures or more.
_FIGURES_PER_WORKER = 2


def draw(job: Job, rc: Mapping) -> list[Path]:
    """Draw one figure under the rcParams ``rc`` and save it in each of its formats (and as its copies)."""
    with mpl.rc_context(rc):
        fig = FIGURES[job.kind](*job.args)
        return [p for stem, formats in ((job.stem, job.formats), *job.copies) for p in _save(fig, Path(stem), formats)]


def rc_params() -> dict:
    """This process's rcParams, as every figure is drawn with them, whichever process draws it."""
    return {k: v for k, v in mpl.rcParams.items() if k not in _LOCAL_RC}


def draw_all(jobs: Sequence[Job], rc: Mapping, quiet: bool = False) -> None:
    """Draw every job, in worker processes forked from this one where there are several CPUs (:func:`processes`),
    else here; a figure's error is raised here. Ctrl-C or an error ends the workers at once."""
    from arena.supervise import children, end_children_since, forked_pool

    progress = Progress(len(jobs), "figures", quiet=quiet)
    workers = processes(len(jobs))
    # forking beside a running thread (a launcher's) is unsafe: then this process draws everything
    if workers <= 1 or not hasattr(os, "fork") or threading.active_count() > 1:
        for job in jobs:
            draw(job, rc)
            progress.step(job.stem.name)
        return
    others = children()
    pool = forked_pool(workers)
    try:
        futures = {pool.submit(draw, job, rc): job for job in jobs}
        for future in as_completed(futures):
            future.result()
            progress.step(futures[future].stem.name)
    except BaseException:
        end_children_since(others)  # the workers end now, not after the figures they hold
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def processes(n_jobs: int) -> int:
    """How many processes draw ``n_jobs`` figures: ``ARENA_PLOT_JOBS`` if set (1: this one only), else one per
    CPU this process may use, but at least ``_FIGURES_PER_WORKER`` figures each."""
    from arena.supervise import cores

    try:
        n = int(os.environ.get("ARENA_PLOT_JOBS", "").strip() or 0)
    except ValueError:
        n = 0
    if n <= 0:
        n = min(cores(), n_jobs // _FIGURES_PER_WORKER)
    return max(1, min(n, n_jobs))


def _code_version() -> str:
    """A digest of the plotting code (every module of this package): a change to it redraws every figure."""
    h = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        h.update(path.name.encode() + path.read_bytes())
    return h.hexdigest()[:16]


def job_key(job: Job, rc: Mapping) -> str:
    """The digest of one figure's inputs: its name and data, its formats, the plotting code and ``rc``."""
    return digest(_code_version(), sorted((k, repr(v)) for k, v in rc.items()), job.data, job.formats)[:24]


def to_draw(root: Path, jobs: Sequence[Job], rc: Mapping) -> tuple[list[Job], dict[str, str]]:
    """The jobs of the folder ``root`` whose inputs changed since its manifest was written (or whose files are
    missing), and the folder's new manifest (:func:`write_manifest` once they are drawn)."""
    try:
        old = json.loads((root / MANIFEST).read_text())
        old = old if isinstance(old, dict) else {}
    except (OSError, ValueError):
        old = {}
    new, todo = {}, []
    for job in jobs:
        name, key = Path(job.stem).relative_to(root).as_posix(), job_key(job, rc)
        new[name] = key
        if old.get(name) != key or not all(f.exists() for f in job.files()):
            todo.append(job)
    return todo, new


def write_manifest(root: Path, manifest: Mapping[str, str]) -> None:
    write_text_atomic(json.dumps(dict(manifest), indent=0, sort_keys=True), root / MANIFEST)


def drawn_once(jobs: Sequence[Job]) -> list[Job]:
    """The jobs with those that draw the same figure (its name and data) merged into one, saved as each."""
    same: dict[str, list[Job]] = {}
    for job in jobs:
        same.setdefault(job.data, []).append(job)
    return [
        Job(js[0].kind, js[0].args, js[0].stem, js[0].formats, tuple((j.stem, j.formats) for j in js[1:]))
        for js in same.values()
    ]


__all__ = ["FIGURES", "MANIFEST", "draw", "draw_all", "drawn_once", "job_key", "processes", "to_draw"]
