"""The summary of a results directory, at the top of the data flow: the tables across seeds
(:mod:`arena.aggregate`), the comparison of each game's two best forecasters (:mod:`arena.compare`, which may
replay matchups), then the report (:mod:`arena.plots`: figures and pages), and where they all are.

``arena`` calls :func:`summarize` once its tournament is played; ``arena-report`` calls it on a results
directory. The modules it calls never call back up: statistics return tables, plots take tables and draw.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from arena.aggregate import ACROSS, current_tables, write_tables
from arena.answer import answer
from arena.results import code_version, planned, write_atomic, write_table, write_text_atomic
from arena.store import stored_ids
from arena.stream import collect

if TYPE_CHECKING:
    from arena.plots.report import Comparison

# The plots (matplotlib: a second or more to import) are imported where they draw, so that a run with report=false
# never loads them.

#: The table of the top pair's comparison (``compare_top.parquet`` and ``.csv``).
COMPARE = "compare_top"
#: What the comparison was made from (the digest of the summary and the code) and the digests of its tables:
#: a report with nothing new reads it back instead of replaying matchups.
_COMPARE_STAMP = ".compare_top.json"
#: The comparison's curves, kept for the next report's figure.
_COMPARE_CURVES = ".compare_top_curves.parquet"
#: The columns of a comparison's table that the pages read (:func:`arena.compare.top_pairs`).
_COMPARE_COLUMNS = ("game", "T", "metric", "forecaster_a", "forecaster_b", "nature", "verdict")
_AGGREGATES = ("summary", "curves", "reliability")
#: The statistics across seeds that the pages show, read where the directory has them (else computed from the summary).
_ACROSS_SEEDS = ("seed_stats", "paired")
#: Every ordered pair's e-value and claims, each family's tiers (:func:`arena.pairs.every_pair`), and the
#: rankings of every game, T and metric (:func:`arena.ranking.ranking_tables`).
PAIRS, TIERS, RANKINGS = "pairs", "tiers", "rankings"
#: What the pairs' tables were made from and their digests, as for the top pair's comparison.
_PAIRS_STAMP = ".pairs.json"


def summarize(
    out_dir: Path | str, draw: bool = True, only: set[str] | None = None, options: dict | None = None
) -> None:
    """Aggregate a results directory (the matchups ``only``, when given) into tables, draw its report (unless not
    ``draw``; ``options`` go to :func:`report`: formats, paper, quiet), and say where they are."""
    out_dir = Path(out_dir)
    if draw:
        from arena.plots.report import check_formats

        check_formats((options or {}).get("formats", ("png",)))
    tables = write_tables(out_dir, only)
    figures = report(out_dir, **(options or {})) if draw else []
    _say_where(out_dir, tables, figures, only, bool((options or {}).get("paper")))


def report(out_dir: Path | str, tables: Mapping[str, pd.DataFrame] | None = None, **options) -> list[Path]:
    """:func:`arena.plots.report.report` of a results directory: its tables (``tables``, by default read from
    it: :func:`read_tables`), each forecaster's family (:func:`families`) and, unless only a paper's figures
    are asked for, the top pair's comparison (:func:`top_comparison`). Returns the paths written."""
    from arena.plots.report import check_formats
    from arena.plots.report import report as draw_report

    out_dir = Path(out_dir)
    check_formats(options.get("formats", ("png",)), options.get("paper_formats", ()))
    tables = read_tables(out_dir) if tables is None else tables
    summary = tables.get("summary")
    summary = summary if summary is not None else pd.DataFrame()
    trust = bool(options.pop("trust", False))  # replay stored configs as they are (arena-report --trust)
    comparison = None if options.get("paper") or summary.empty else top_comparison(out_dir, summary, trust)
    if not (options.get("paper") or summary.empty):
        pair_claims(out_dir, summary, trust)
        rank_tables(out_dir, summary, tables.get("seed_stats"))
    return draw_report(out_dir, tables, comparison=comparison, families=families(summary), **options)


def refused_replays(out_dir: Path | str) -> int:
    """How many comparisons of ``out_dir``'s last report were not made because a stored config was refused
    (:func:`arena.matchup.matchup_from_stored` without ``trust``): rows of ``compare_top`` and ``pairs`` flagged
    ``refused``."""
    n = 0
    for name in (COMPARE, PAIRS):
        try:
            table = pd.read_parquet(Path(out_dir) / f"{name}.parquet", columns=["refused"])
        except Exception:  # noqa: BLE001  (no such table, or no refusal column: nothing refused)
            continue
        n += int(table["refused"].fillna(False).astype(bool).sum())
    return n


def read_tables(out_dir: Path) -> dict[str, pd.DataFrame]:
    """The aggregated Parquet files of ``out_dir`` when they are up to date (:func:`arena.aggregate.current_tables`),
    with the curves as their moments over seeds (``curve_stats``, :mod:`arena.moments`), the reliability bins
    pooled over seeds (``reliability_pooled``) and the statistics across seeds the pages show (``seed_stats``,
    ``paired``), else
    :func:`arena.stream.collect` of its stored matchups (those of its plan, when it has one)."""
    only = planned(out_dir)
    paths = current_tables(out_dir, only)
    if paths is not None and "summary" in paths:
        # the curves and bins as the figures draw them, over seeds: a row per point or bin whatever the seeds
        paths = {
            **paths,
            "curves": paths.get("curve_stats", paths.get("curves")),
            "reliability": paths.get("reliability_pooled", paths.get("reliability")),
        }
        try:
            tables = {name: pd.read_parquet(paths[name]) if paths.get(name) else pd.DataFrame() for name in _AGGREGATES}
            return {**tables, **{name: pd.read_parquet(paths[name]) for name in _ACROSS_SEEDS if paths.get(name)}}
        except (OSError, ValueError):  # unreadable after all: aggregate from the matchups
            pass
    return collect(out_dir, only)


def families(summary: pd.DataFrame) -> dict[str, str]:
    """Each forecaster's family (:attr:`arena.protocols.Forecaster.family`): its rows' ``forecaster_family``
    (stored with each matchup), else looked up from its plugin (the ``forecaster_plugin`` column: results
    stored before the family was), which imports the plugins; a plugin that is not installed here counts as a
    baseline."""
    from arena.plots.plan import stored_families

    if summary is None or "forecaster" not in summary:
        return {}
    names = summary["forecaster"].astype(str)
    out = stored_families(summary)
    plugin = summary["forecaster_plugin"] if "forecaster_plugin" in summary else summary["forecaster"]
    pairs = {n: p for n, p in zip(names, plugin.astype(str), strict=True) if n not in out}
    if not pairs:
        return out
    try:
        from arena.registry import forecaster_class, load_plugins

        load_plugins()
    except Exception:  # noqa: BLE001  (no plugins here: every forecaster a baseline)
        return {**out, **dict.fromkeys(pairs, "baseline")}
    for name, plug in pairs.items():
        try:
            out[name] = str(getattr(forecaster_class(plug), "family", "baseline"))
        except Exception:  # noqa: BLE001  (a plugin of another installation)
            out[name] = "baseline"
    return out


def top_comparison(out_dir: Path, summary: pd.DataFrame, trust: bool = False) -> Comparison:
    """The anytime-valid comparison of each game's two best forecasters (:func:`arena.compare.top_pairs`), its
    table written as ``compare_top.parquet``/``.csv`` (not when nothing could be compared: ``final`` gives the
    reason). A comparison of every pair is kept, and read back while the summary and the code are the same and
    its tables are the ones written; one with a pair that failed is made again next time."""
    from arena.compare import top_pairs
    from arena.plots.jobs import digest
    from arena.plots.report import Comparison

    key = digest(summary, code_version())
    kept = _kept_comparison(out_dir, key)
    if kept is not None:
        return kept
    (out_dir / _COMPARE_STAMP).unlink(missing_ok=True)
    final, curves = top_pairs(out_dir, summary, trust=trust)
    if curves.empty:  # nothing compared (no per-round records): summary.md gives the reason
        return Comparison(final, curves, None)
    table = write_table(final, out_dir, COMPARE)
    if "error" not in final or final["error"].isna().all():
        write_atomic(curves, out_dir / _COMPARE_CURVES)
        stamp = {"key": key, "table": _sha256(table), "curves": _sha256(out_dir / _COMPARE_CURVES)}
        write_text_atomic(json.dumps(stamp), out_dir / _COMPARE_STAMP)
    return Comparison(final, curves, table)


def pair_claims(out_dir: Path, summary: pd.DataFrame, trust: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every ordered pair's e-value and e-BH / e-Bonferroni claims and each game and T's tiers
    (:func:`arena.pairs.every_pair`), written as ``pairs`` and ``tiers`` (.parquet and .csv) beside the summary;
    kept, like the top pair's comparison, while the summary and the code are the same and the tables are the
    ones written. A family that could not be compared has one row in ``pairs`` with the reason (``error``)."""
    from arena.pairs import every_pair
    from arena.plots.jobs import digest

    key = digest(summary, code_version())
    names = {name: out_dir / f"{name}.parquet" for name in (PAIRS, TIERS)}
    try:
        stamp = json.loads((out_dir / _PAIRS_STAMP).read_text())
        if stamp.get("key") == key and all(stamp.get(n) == _sha256(p) for n, p in names.items()):
            return pd.read_parquet(names[PAIRS]), pd.read_parquet(names[TIERS])
    except Exception:  # noqa: BLE001  (missing, unreadable, altered: compared again)
        pass
    (out_dir / _PAIRS_STAMP).unlink(missing_ok=True)
    pairs, tiers = every_pair(out_dir, summary, trust=trust)
    if pairs.empty:
        return pairs, tiers
    for name, table in ((PAIRS, pairs), (TIERS, tiers)):
        write_table(table, out_dir, name)
    if "error" not in pairs:
        stamp = {"key": key, **{n: _sha256(p) for n, p in names.items()}}
        write_text_atomic(json.dumps(stamp), out_dir / _PAIRS_STAMP)
    return pairs, tiers


def rank_tables(out_dir: Path, summary: pd.DataFrame, stats: pd.DataFrame | None = None) -> pd.DataFrame:
    """The mean, worst-case, minimax, Nash-averaging and alpha-Rank rankings of every game, T and ranked metric
    (:func:`arena.ranking.ranking_tables`, from the summary's ``stats`` across seeds when given), written as
    ``rankings`` (.parquet and .csv) when there are any."""
    from arena.ranking import ranking_tables

    table = ranking_tables(summary, stats=stats)
    if not table.empty:
        write_table(table, out_dir, RANKINGS)
    return table


def _kept_comparison(out_dir: Path, key: str) -> Comparison | None:
    """The comparison that the stamp of ``out_dir`` (a results directory: untrusted) records for ``key``, when its
    tables are the ones it wrote (their SHA-256), the CSV is there too, and the table has the pages' columns."""
    from arena.plots.report import Comparison

    table, curves = out_dir / f"{COMPARE}.parquet", out_dir / _COMPARE_CURVES
    try:
        stamp = json.loads((out_dir / _COMPARE_STAMP).read_text())
        if (
            not isinstance(stamp, dict)
            or stamp.get("key") != key
            or not table.with_suffix(".csv").is_file()
            or stamp.get("table") != _sha256(table)
            or stamp.get("curves") != _sha256(curves)
        ):
            return None
        final = pd.read_parquet(table)
        return Comparison(final, pd.read_parquet(curves), table) if all(c in final for c in _COMPARE_COLUMNS) else None
    except Exception:  # noqa: BLE001  (missing, unreadable, a file pyarrow refuses: compared again)
        return None


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _say_where(out_dir: Path, tables: dict, figures: list, only: set[str] | None, paper: bool) -> None:
    """The run's answer (:func:`arena.answer.answer`: the winners, certificates, forfeits) and where its page,
    summary, tables and figures are, in a few lines."""
    for line in _answer(tables):
        print(f"[arena] {line}")
    if only is not None and (others := stored_ids(out_dir) - only):
        print(f"[arena] {len(others)} stored matchups of another config or code version are not in the summary")
    out = out_dir.resolve()
    folder = out / ("paper" if paper else "figures")
    drawn = sum(1 for f in figures if folder in Path(f).resolve().parents)  # not summary.md, index.html
    beside = ["summary.md"] if (out_dir / "summary.md").is_file() else []
    written = len(tables) + sum(
        1 for n in (PAIRS, TIERS, RANKINGS) if n not in tables and (out / f"{n}.parquet").is_file()
    )
    beside += [f"{written} tables (.parquet, .csv)"] + ([f"{drawn} figures in {folder.name}/"] if drawn else [])
    if tables and not set(ACROSS) & set(tables):  # nothing to pair, a 1 x 1 game
        beside.append(f"{', '.join(ACROSS)}: not written for a single matchup")
    if out_dir / "index.html" in figures:
        print(f"[arena] results page: {out / 'index.html'} ({', '.join(beside)} beside it)")
    else:
        print(f"[arena] results: {out}/ ({', '.join(beside)}; `arena-report {out_dir}` draws the page)")


def _answer(tables: dict) -> list[str]:
    """:func:`arena.answer.answer` of the tables just written (none: nothing was stored)."""
    try:
        summary = pd.read_parquet(tables["summary"])
        board = pd.read_parquet(tables["leaderboard"]) if "leaderboard" in tables else None
    except (KeyError, OSError, ValueError):
        return ["no matchup stored yet"]
    return answer(summary, board)


__all__ = [
    "COMPARE",
    "PAIRS",
    "RANKINGS",
    "TIERS",
    "families",
    "pair_claims",
    "rank_tables",
    "read_tables",
    "report",
    "summarize",
    "top_comparison",
]
