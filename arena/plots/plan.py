"""The figure jobs of a report (:class:`~arena.plots.jobs.Job`): each game's figures, a paper's few, and the
figures of the top pair's comparison; and one style per forecaster of a game."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

import arena.plots.binary as binary
import arena.plots.decision as decision
import arena.plots.experts as experts
import arena.plots.quantile as quantile
from arena.aggregate import single_matchup
from arena.plots.certificates import _certificate_ratios
from arena.plots.common import _only
from arena.plots.jobs import Job
from arena.plots.style import forecaster_styles
from arena.results import safe_name

#: The curve figure of each game that goes into a paper (``--paper``).
_PAPER_CURVES = ("smce_vs_T", "coverage_error_vs_T", "regret_experts", "regret_decision")


def game_jobs(
    s: pd.DataFrame,
    c: pd.DataFrame,
    r: pd.DataFrame,
    fig_dir: Path,
    formats: Sequence[str],
    styles: dict,
    leaderboard_metrics: Sequence[str],
    facet: bool,
) -> list[Job]:
    """Every figure job of one game's tables: its binary forecasts' (:func:`arena.plots.binary.jobs`),
    each game's own, and the certificates; no leaderboard for a single matchup (a heatmap of one
    cell says nothing a table does not)."""
    jobs = binary.jobs(s, c, r, fig_dir, formats, styles, leaderboard_metrics, facet=facet)
    for module in (quantile, experts, decision):  # each game's own figures, if the game is there
        jobs += module.jobs(s, c, fig_dir, formats, styles)
    if not _certificate_ratios(s).empty:
        jobs.append(Job("certificates", (_only(s, prefix="cert."), styles), fig_dir / "certificates", tuple(formats)))
    if single_matchup(s):
        jobs = [j for j in jobs if j.kind != "leaderboard"]
    return _distinct_leaderboards(jobs)


def _distinct_leaderboards(jobs: list[Job]) -> list[Job]:
    """The jobs without a leaderboard whose metric takes the values of an earlier leaderboard's on every
    matchup (the experts game's ``loss`` under the squared loss is its ``brier``): two identical heatmaps
    under two names say nothing one does not; the earlier one is kept."""
    seen: list[pd.Series] = []
    out = []
    for job in jobs:
        if job.kind == "leaderboard":
            table, metric = job.args
            values = pd.to_numeric(table[metric], errors="coerce")  # with its index: the same matchups
            if any(
                v.index.equals(values.index)
                and np.array_equal(v.to_numpy(float), values.to_numpy(float), equal_nan=True)
                for v in seen
            ):
                continue
            seen.append(values)
        out.append(job)
    return out


def paper_jobs(game: str | None, summary: pd.DataFrame, jobs: list[Job]) -> list[Job]:
    """The figures of one game a paper needs, renamed ``<game>_<figure>``: the game's curve figure
    (smCE/T, coverage error or regret against t) and reliability diagram on one nature (an adaptive
    one where there is one: the guarantees are for adversaries), the leaderboard of its first
    headline metric, and the certificates."""
    natures = summary.loc[summary["adaptive"].astype(bool), "nature"] if "adaptive" in summary else pd.Series()
    natures = (
        sorted(natures.astype(str).unique()) or sorted(summary["nature"].astype(str).unique())
        if "nature" in summary
        else []
    )
    nature = natures[0] if natures else None
    prefix = f"{game or 'results'}_"
    chosen: list[Job] = []
    for job in jobs:
        name = Path(job.stem).name
        if job.kind in (*_PAPER_CURVES, "reliability") and nature is not None and name.endswith(f"__{nature}"):
            name = f"{job.kind}_{nature}"
        elif job.kind == "leaderboard" and not any(j.kind == "leaderboard" for j in chosen):
            name = name.replace("__", "_")
        elif job.kind != "certificates":
            continue
        chosen.append(Job(job.kind, job.args, Path(job.stem).with_name(prefix + name), job.formats))
    return chosen


def comparison_jobs(
    final: pd.DataFrame, curves: pd.DataFrame, fig_dir: Mapping[str | None, Path], formats: Sequence[str]
) -> list[Job]:
    """The figure of the top pair's comparison (:func:`arena.plots.compare.comparison_figure`) per game and T:
    ``compare__<A>__<B>__T<T>`` in the game's folder of ``fig_dir``."""
    jobs = []
    for (game, T), c in curves.groupby(["game", "T"], sort=True) if not curves.empty else []:
        folder = fig_dir.get(game, next(iter(fig_dir.values())))
        stem = folder / f"compare__{safe_name(c['forecaster_a'].iloc[0])}__{safe_name(c['forecaster_b'].iloc[0])}__T{T}"
        rows = final.loc[(final["game"] == game) & (final["T"] == T)]
        jobs.append(Job("compare", (c, rows), stem, tuple(formats)))
    return jobs


def stored_families(summary: pd.DataFrame | None) -> dict[str, str]:
    """Each forecaster's family as its rows store it (``forecaster_family``); none for a forecaster whose rows do
    not (results stored before the family was: the caller looks it up, else it counts as a baseline)."""
    if summary is None or "forecaster" not in summary or "forecaster_family" not in summary:
        return {}
    pairs = zip(summary["forecaster"].astype(str), summary["forecaster_family"], strict=True)
    return {n: str(f) for n, f in pairs if isinstance(f, str) and f}


def game_styles(families: Mapping[str, str], *tables: pd.DataFrame) -> dict[str, dict[str, str]]:
    """One color and marker per forecaster of a game, from every table of the game: the same in all its
    figures; with its family (``families``; a baseline by default), which splits crowded figures into panels."""
    names = set()
    for df in tables:
        if df is not None and "forecaster" in df:
            names |= set(map(str, df["forecaster"].dropna().unique()))
    return {n: {**st, "family": families.get(n, "baseline")} for n, st in forecaster_styles(names).items()}


__all__ = ["comparison_jobs", "game_jobs", "game_styles", "paper_jobs", "stored_families"]
