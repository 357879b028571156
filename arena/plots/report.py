"""The report of a results directory's tables: every figure of every game, a LaTeX table per game,
``summary.md`` and ``index.html``.

:func:`report` plans one job per figure (:mod:`arena.plots.plan`), draws those whose inputs changed
(:mod:`arena.plots.draw`), then writes the LaTeX tables and the two pages. It takes tables and draws: the
comparison of the top pair and each forecaster's family come in with the tables (:func:`arena.summarize.report`
makes them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

import pandas as pd

from arena.aggregate import single_matchup
from arena.answer import headline_metrics, measured
from arena.plots.answer import answers, markdown_lines
from arena.plots.common import _curves, _of_game
from arena.plots.draw import draw_all, drawn_once, rc_params, to_draw, write_manifest
from arena.plots.html import index_page
from arena.plots.jobs import Job
from arena.plots.pairs import pair_jobs
from arena.plots.paper import EXAMPLE, example_tex
from arena.plots.plan import comparison_jobs, game_jobs, game_styles, paper_jobs, stored_families
from arena.plots.tables import latex_table, markdown_body, markdown_page
from arena.results import inside, write_text_atomic

#: Formats a figure can be saved in (``arena-report --format``).
FORMATS = ("pdf", "png", "svg")
#: Files of ``figures/`` (and ``paper/``) that a report owns: any of them it did not write this time is stale.
_OWNED = {*(f".{ext}" for ext in FORMATS), ".tex"}


class Comparison(NamedTuple):
    """The anytime-valid comparison of each game's two best forecasters (:func:`arena.compare.top_pairs`):
    ``final`` (a row per nature and seed, or a row with the reason a pair could not be compared), ``curves``
    (empty when nothing was compared) and ``table``, the file ``final`` is written to (None: not written)."""

    final: pd.DataFrame
    curves: pd.DataFrame
    table: Path | None = None


class _Game(NamedTuple):
    """One game's tables (``game`` None: the tables hold no game column)."""

    game: str | None
    summary: pd.DataFrame
    curves: pd.DataFrame
    reliability: pd.DataFrame


def check_formats(*formats: Sequence[str]) -> None:
    """Raise ValueError naming a format that is not one of :data:`FORMATS` (or none given first)."""
    bad = [f for fs in formats for f in fs if f not in FORMATS]
    if bad or not formats[0]:
        raise ValueError(f"figure format {', '.join(map(repr, bad)) or 'none'}: choose from {', '.join(FORMATS)}")


def report(
    out_dir: Path | str,
    tables: Mapping[str, pd.DataFrame],
    comparison: Comparison | None = None,
    families: Mapping[str, str] | None = None,
    leaderboard_metrics: Sequence[str] = ("smce_over_T", "brier", "bias"),
    formats: Sequence[str] = ("png",),
    paper: bool = False,
    quiet: bool = False,
    html: bool = True,
    paper_formats: Sequence[str] = (),
) -> list[Path]:
    """Draw every figure of a results directory's ``tables`` into ``out_dir/figures/`` (and a paper's few into
    ``out_dir/paper/``), write a LaTeX table per game, ``out_dir/summary.md`` and ``out_dir/index.html``, and
    return the paths.

    Per game present (each in ``figures/<game>/`` when the directory holds several games):

    - binary forecasts (any game whose curves have them): smCE/T, regret to linear and bias as small multiples
      over the natures, one figure per group of forecasters (``smce_vs_T__<group>``, ``regret_linear__<group>``,
      ``bias__<group>``: :func:`arena.plots.binary.jobs`; per nature, ``<figure>__<nature>``, with one nature),
      ``reliability__<nature>`` (one panel per forecaster); ``leaderboard__<metric>`` per ``leaderboard_metrics``;
    - quantile game: ``rolling_coverage__<nature>``, ``coverage_error__<nature>``, ``group_coverage__<nature>``
      (group natures), ``coverage_vs_L`` (Lipschitz-CDF natures) and leaderboards of :data:`QUANTILE_METRICS`;
    - experts game: ``regret_experts__<nature>`` and ``expert_weights__<nature>``; decision game:
      ``regret_decision__<nature>``; leaderboards of :data:`EXPERTS_METRICS` / :data:`DECISION_METRICS`;
    - ``certificates``: every certificate's value over its bound (:func:`certificate_margins`);
    - ``table.tex``: :func:`latex_table` of the game's :data:`HEADLINE_METRICS`.

    A single matchup gets no leaderboard (one cell). Unless a single matchup, the figures a paper needs
    (:func:`arena.plots.plan.paper_jobs`) also go to ``out_dir/paper/`` in ``paper_formats`` (none: no
    ``paper/``), drawn once for both folders, with ``example.tex`` (:func:`arena.plots.paper.example_tex`) that
    includes them all; with ``paper``, only they are written. The ``comparison``'s figure
    ``compare__<A>__<B>__T<T>`` goes to ``figures/``; ``summary.md`` (:func:`markdown_page`) and ``index.html``
    (:func:`arena.plots.html.index_page`) are written once every figure is. Only figures whose inputs changed are
    drawn (:func:`arena.plots.draw.to_draw`); files of ``figures/`` and ``paper/`` this report did not produce are
    removed.

    Parameters
    ----------
    out_dir : the results directory.
    tables : its ``summary``, ``curves`` and ``reliability`` tables (:func:`arena.stream.collect`), and the
        ``seed_stats`` and ``paired`` tables the pages show, where it has them (else computed from the summary).
    comparison : the top pair's comparison, shown on the pages with its figure.
    families : each forecaster's family (:attr:`arena.protocols.Forecaster.family`), where its rows do not
        store it; a baseline by default.
    leaderboard_metrics : the leaderboards of binary forecasts, and the headline metrics of a
        game without its own entry in :data:`HEADLINE_METRICS`.
    formats : any of :data:`FORMATS`; by default PNG (what ``index.html`` shows).
    paper_formats : the formats of ``paper/`` beside the full report (none by default).
    """
    out_dir = Path(out_dir)
    check_formats(formats, paper_formats)
    games = _games(tables)
    summary = tables.get("summary")
    summary = summary if summary is not None else pd.DataFrame()
    roots = {"paper": formats} if paper else {"figures": formats}
    if not paper and paper_formats and not single_matchup(summary):
        roots["paper"] = paper_formats
    fig_dir = _folders(out_dir, roots, [g.game for g in games])
    jobs = _plan(games, roots, fig_dir, {**stored_families(summary), **(families or {})}, leaderboard_metrics)
    compare_jobs = _extra_jobs(out_dir, jobs, fig_dir, comparison, formats)
    _draw(out_dir, jobs, quiet)
    latex = {where: _latex_tables(games, fig_dir[where], where, leaderboard_metrics) for where in roots}
    written = {where: [f for job in js if job not in compare_jobs for f in job.files()] for where, js in jobs.items()}
    if "paper" in roots:  # the pack's example document, which includes all of it
        latex["paper"].append(_example(out_dir / "paper", written["paper"] + latex["paper"]))
    out = [*written.get("paper", []), *latex.get("paper", [])]
    if not paper:
        compare_files = [comparison.table] if comparison is not None and comparison.table and compare_jobs else []
        compare_files += [f for job in compare_jobs for f in job.files()]
        figures = [*written["figures"], *latex["figures"], *compare_files]
        md, page = _pages(out_dir, tables, comparison, jobs["figures"], figures, out, html, leaderboard_metrics)
        out = [*figures, *md, *out, *page]
    for where in roots:
        _remove_stale(out_dir / where, [f for job in jobs[where] for f in job.files()] + latex[where])
    return out


def _extra_jobs(out_dir: Path, jobs: dict, fig_dir: dict, comparison: Comparison | None, formats) -> list:
    """Add to ``jobs["figures"]`` the comparison's figures and the pair matrices (every pair's e-values, a
    matrix per game, T and score); return the comparison's jobs."""
    if "figures" not in jobs:
        return []
    compare_jobs = []
    if comparison is not None:
        compare_jobs = comparison_jobs(comparison.final, comparison.curves, fig_dir["figures"], formats)
        jobs["figures"] += compare_jobs
    jobs["figures"] += pair_jobs(_beside(out_dir, "pairs"), _beside(out_dir, "tiers"), fig_dir["figures"], formats)
    return compare_jobs


def _games(tables: Mapping[str, pd.DataFrame]) -> list[_Game]:
    """The tables of each game (one entry, game None, when the summary names none)."""
    summary, curves, rel = (tables.get(k) for k in ("summary", "curves", "reliability"))
    summary = summary if summary is not None else pd.DataFrame()
    curves = _curves(curves)  # moments over seeds: a row per point of a curve, whatever the seeds
    rel = rel if rel is not None else pd.DataFrame()
    names = sorted(summary["game"].dropna().astype(str).unique()) if "game" in summary else []
    return [_Game(g, *(_of_game(df, g) for df in (summary, curves, rel))) for g in names] or [
        _Game(None, summary, curves, rel)
    ]


def _folders(out_dir: Path, roots: Mapping, games: list[str | None]) -> dict[str, dict[str | None, Path]]:
    """Each game's folder in each root (``figures/<game>/`` when there are several games); a game name read
    from a table never leads out of the results directory."""
    return {
        where: {
            game: inside(out_dir, out_dir / where / (game if len(games) > 1 and where == "figures" else ""))
            for game in games
        }
        for where in roots
    }


def _plan(games, roots, fig_dir, families, leaderboard_metrics) -> dict[str, list[Job]]:
    """The figure jobs of every game in every root (``paper``: the few a paper needs)."""
    jobs: dict[str, list[Job]] = {where: [] for where in roots}
    for g in games:
        styles = game_styles(families, g.summary, g.curves, g.reliability)  # the same in all the game's figures
        for where, fmts in roots.items():
            fig_dir[where][g.game].mkdir(parents=True, exist_ok=True)
            planned = game_jobs(
                g.summary,
                g.curves,
                g.reliability,
                fig_dir[where][g.game],
                fmts,
                styles,
                leaderboard_metrics,
                facet=where == "figures",
            )
            jobs[where] += paper_jobs(g.game, g.summary, planned) if where == "paper" else planned
    return jobs


def _draw(out_dir: Path, jobs: Mapping[str, list[Job]], quiet: bool) -> None:
    """Draw the jobs whose inputs changed since each folder's manifest was written, each figure once (a paper's
    figure that the report shows too is saved in both places from one drawing); then the new manifests."""
    rc = rc_params()
    todo, manifests = [], {}
    for where, js in jobs.items():
        changed, manifests[out_dir / where] = to_draw(out_dir / where, js, rc)
        todo += changed
    if not quiet:
        n = sum(map(len, jobs.values()))
        print(
            f"[arena] figures: {len(todo)} to draw, {n - len(todo)} up to date in "
            + ", ".join(str(out_dir / w) for w in jobs),
            flush=True,
        )
    draw_all(drawn_once(todo), rc, quiet)
    for root, manifest in manifests.items():
        if manifest or (root / ".manifest.json").exists():
            write_manifest(root, manifest)


def _latex_tables(games: list[_Game], fig_dir: Mapping, where: str, leaderboard_metrics) -> list[Path]:
    """Each game's LaTeX table of its headline metrics, in its folder of ``where``."""
    paths = []
    for g in games:
        metrics = headline_metrics(g.game, measured(g.summary), leaderboard_metrics)
        if not metrics:
            continue
        path = fig_dir[g.game] / (f"{g.game or 'results'}_table.tex" if where == "paper" else "table.tex")
        n = g.summary["seed"].nunique() if "seed" in g.summary else 1
        write_text_atomic(
            f"% {g.game or 'all games'}: mean over natures of the mean over {n} seed(s), "
            "+- the half-width of its 95% interval (none: one seed, or one value on every "
            "seed); best in bold (arena.plots.latex_table)\n" + latex_table(g.summary, metrics) + "\n",
            path,
        )
        paths.append(path)
    return paths


def _example(paper: Path, files: Sequence[Path]) -> Path:
    """Write ``paper/example.tex`` (:func:`arena.plots.paper.example_tex`) for the pack's ``files``; its path."""
    example = paper / EXAMPLE
    write_text_atomic(example_tex([Path(f).relative_to(paper) for f in files]), example)
    return example


def _pages(out_dir, tables, comparison, jobs, figures, paper_files, html, leaderboard_metrics):
    """Write ``summary.md`` (unless the summary is empty) and ``index.html`` (with ``html``), which list
    ``figures`` and ``paper_files``, from the ``tables`` (the summary, and its statistics across seeds and paired
    comparisons where they are given); the paths written, as ``([summary.md], [index.html])``."""
    summary = tables.get("summary")
    summary = summary if summary is not None else pd.DataFrame()
    written, page = [], []
    final = comparison.final if comparison is not None else None
    stats, paired = (tables.get(name) for name in ("seed_stats", "paired"))
    found = answers(
        summary, _beside(out_dir, "pairs"), _beside(out_dir, "tiers"), final, leaderboard_metrics, stats=stats
    )
    if not summary.empty:
        path = out_dir / "summary.md"
        index = [out_dir / "index.html"] if html else []  # written below; the summary links it too
        body = markdown_body(summary, leaderboard_metrics, stats, paired)
        body = [*body[:2], *markdown_lines(found), *body[2:]]  # the answer first, under the title
        write_text_atomic(markdown_page(body, [*figures, *paper_files, *index], out_dir, final), path)
        written.append(path)
    if html:
        shown = [(job.stem, job.kind, job.args if job.kind != "compare" else ()) for job in jobs]
        listed = [*figures, *written, *paper_files]
        write_text_atomic(index_page(out_dir, summary, shown, listed, found, stats), out_dir / "index.html")
        page.append(out_dir / "index.html")
    return written, page


def _beside(out_dir: Path, name: str) -> pd.DataFrame | None:
    """The table ``name`` that the summary wrote beside the report's (pairs, tiers), if it is there and readable."""
    try:
        return pd.read_parquet(out_dir / f"{name}.parquet")
    except (OSError, ValueError):
        return None


def _remove_stale(root: Path, written: list[Path]) -> None:
    """Delete the figures and tables under ``root`` that this report did not write (an older
    configuration's, or a nature no longer played)."""
    keep = {Path(p).resolve() for p in written}
    for path in root.rglob("*"):
        if path.is_file() and path.suffix in _OWNED and path.resolve() not in keep:
            path.unlink(missing_ok=True)


__all__ = ["FORMATS", "Comparison", "check_formats", "report"]
