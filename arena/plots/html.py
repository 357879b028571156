"""The results page of a results directory: ``index.html``, written by :func:`arena.plots.report`.

One file that needs nothing outside the results directory (no network: its style and its few
lines of JavaScript are inline; figures and tables are linked relative to it, so the directory
can be copied or served as it is). It shows, in order: the answer of each game and T
(:mod:`arena.plots.answer`: the headline leaderboard, the certificates in one line, the top
anytime-valid comparison in words, the tiers), every figure with a one-line caption, then, folded,
the certificate verdicts (open when one fails), every leaderboard (click a column's head to sort)
and every other table the directory holds at its top level (red-team attacks, comparisons, pairs,
tiers, rankings: the first rows, with a link to the whole table), and links to the tables.

Examples
--------
>>> import pandas as pd
>>> s = pd.DataFrame({"forecaster": ["a", "a"], "nature": ["n", "m"], "cert.x.verdict": ["holds", "fails"]})
>>> verdicts(s)[["forecaster", "certificate", "holds", "fails", "failing natures"]].values.tolist()
[['a', 'x', 1, 1, 'm']]
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import jinja2
import numpy as np
import pandas as pd

from arena.aggregate import leaderboard
from arena.answer import certificate_counts, headline_metrics, human, measured
from arena.plots.answer import Answer
from arena.plots.binary import _CURVES
from arena.plots.multiples import _BY_NATURE
from arena.plots.style import METRIC_LABELS
from arena.plots.tables import game_stats

#: Tables of the results directory that the page shows in sections of their own (or not at all:
#: one row per matchup or per point of a curve is for download, not for reading).
_NOT_SHOWN = {"summary", "curves", "reliability", "seed_stats", "leaderboard"}
#: Rows of a table shown on the page (folded); the link gives the rest.
MAX_ROWS = 20

#: One-line captions of the figures, by figure name; ``{nature}`` is the nature's name.
CAPTIONS = {
    "smce_vs_T": "Smooth calibration error per round, smCE_t / t, against t on {nature}: forecasters' means; "
    "{bounds}; the K29 guarantee \u221a(8t/3) / t (\u221d 1/\u221at: the paper's closed form) in grey.",
    "regret_linear": "Squared-loss regret to the best norm-bounded linear forecast against t on {nature}; {bounds}.",
    "bias": "Bias |\u03a3(p \u2212 y)| / t against t on {nature} (log scale); {bounds}.",
    "reliability": "Reliability diagrams on {nature}: observed frequency against mean forecast per bin "
    "(pooled over seeds; marker area: the bin's count; a bin of fewer than 5 forecasts, or of "
    "under 0.5% of them, is not joined by the line); bars: share of the forecaster's forecasts per bin, on the scale "
    "right of each panel (its own).",
    # small multiples, one panel per nature (arena.plots.multiples.curves_by_nature)
    "smce_by_nature": "Smooth calibration error per round, smCE_t / t, against t, one panel per nature ({group}); "
    "{bounds}; the K29 guarantee \u221a(8t/3) / t (\u221d 1/\u221at: the paper's closed form, the same "
    "for every run) in grey.",
    "regret_linear_by_nature": "Squared-loss regret to the best linear forecast \u27e8w, x_t\u27e9 + a on the nature's "
    "features x_t, \u2016(w, a)\u2016 \u2264 M (the referee's M, 1 by default; a = 0 with referee.intercept=false), "
    "against t, "
    "one panel per nature ({group}), each with its own y scale; {bounds}.",
    "bias_by_nature": "Bias |\u03a3(p \u2212 y)| / t against t, one panel per nature ({group}, log scale); {bounds}.",
    "compare": "Anytime-valid comparison of the two best forecasters, A and B, by mean Brier score (the game's "
    "proper score; pinball in the quantile game), on each nature (first seed only): the mean score "
    "difference A \u2212 B with its 95% confidence sequence (with more than three natures, one row "
    "each at the last round, colored by the verdict, its round in brackets; else against t) and the "
    "e-values against t. A verdict is reached at the first round where an e-value reaches "
    "1/\u03b1 = 20, valid whenever it comes; the confidence sequence at the last round may still "
    "hold 0.",
    "pairs": "Every ordered pair of forecasters, anytime-validly: row A, column B, the e-value against "
    "\u201cA is no better than B\u201d at the last round over every nature and seed (log scale, white: no evidence); "
    "dots: the claims \u201cA beats B\u201d made by e-BH over all pairs (false discovery rate at most \u03b1). Rows "
    "and columns by tier, best first.",
    "leaderboard": "Leaderboard heatmap of {metric}: mean over seeds per forecaster and nature, colored by the "
    "forecaster's rank on the nature (1, the best, darkest). {leaderboard_note}",
    "certificates": "Every certificate's observed value over its certified bound at the last round T, per "
    "matchup (at most 1: it holds; right of the dashed line at 1: a failure, as a red cross).",
    "rolling_coverage": "Rolling coverage of the quantile forecast against t on {nature}, with the target q dotted. "
    + "{coverage_note}",
    "coverage_error_vs_T": "Coverage error |coverage_t \u2212 q| against t on {nature} (log-log); in grey the "
    "marginal bound max(q, 1 \u2212 q)/t that is certified and the printed one "
    "max(q, 1 \u2212 q)/(t \u2212 1) (dotted), a forecaster's certified bound dashed in its "
    "colour. {coverage_note}",
    "group_coverage": "Coverage in each group of {nature}, with the target q dotted.",
    "coverage_vs_L": "Coverage error against the Lipschitz constant L of nature's CDF. {coverage_note}",
    "regret_experts": "Regret to the best expert against t on {nature}, each panel with its own y scale; "
    "certified bounds dashed in their forecaster's colour.",
    "expert_weights": "Weights each forecaster puts on the experts against t on {nature}, on the first seed (the "
    "best expert can differ between seeds: a mean over seeds would split weights no run played).",
    "regret_decision": "Expected decision regret against t on {nature}, each panel with its own y scale; "
    "certified bounds dashed in their forecaster's colour.",
}


def verdicts(summary: pd.DataFrame) -> pd.DataFrame:
    """Per forecaster and certificate it claims: how many matchups it holds, fails and does not
    apply to (n/a, never counted as a pass), and the natures where it fails; failures first
    (:func:`arena.answer.certificate_counts`)."""
    out = certificate_counts(summary)
    return out.sort_values(["fails", "forecaster", "certificate"], ascending=[False, True, True], kind="stable")


def _cell(v) -> dict:
    """A table cell for the template: numbers right-aligned, a float with its exact value to sort by."""
    if isinstance(v, (float, np.floating)):
        return {"num": True, "v": repr(float(v)), "text": human(float(v))}
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return {"num": True, "v": str(int(v)), "text": str(int(v)) if abs(v) < 100_000 else human(float(v))}
    return {"num": False, "v": None, "text": str(v)}


def _table(df: pd.DataFrame, row_class=None) -> dict:
    """A table for the template's ``table`` macro: its head and rows (``row_class(row)``: a row's class)."""
    rows = [
        {"cls": row_class(r) if row_class else "", "cells": [_cell(v) for v in r.tolist()]} for _, r in df.iterrows()
    ]
    return {"head": [str(c) for c in df.columns], "rows": rows}


def _rel(path: Path, root: Path) -> str:
    try:
        return Path(path).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return Path(path).as_posix()


def _caption(kind: str, stem: Path, args: Sequence) -> str:
    nature = " ".join(stem.name.split("__", 1)[1].replace("_", " ").split()) if "__" in stem.name else ""
    metric = str(args[1]) if kind == "leaderboard" and len(args) > 1 else ""
    group = bounds = ""
    if kind == "by_nature" and len(args) > 4:  # (curves, curve, forecasters, styles, title[, span])
        kind = f"{args[1]}_by_nature"
        group = str(args[4] or "all forecasters")
        bounds = _bounds_text(args[0], args[1], args[2])
    elif (curve := dict(_CURVES).get(kind)) and args and isinstance(args[0], pd.DataFrame):  # (curves, nature, styles)
        bounds = _bounds_text(args[0], curve, None)
    text = CAPTIONS.get(kind, stem.name.replace("_", " "))
    coverage = metric.startswith(("coverage", "expected_coverage", "group_coverage"))  # a leaderboard's metric
    return text.format(
        nature=nature or "every nature",
        metric=METRIC_LABELS.get(metric, metric),
        group=group,
        bounds=bounds,
        coverage_note=_COVERAGE_NOTE,
        leaderboard_note=_COVERAGE_NOTE if coverage else "",
    ).strip()


#: Coverage can be had without information: say so wherever coverage is shown alone.
_COVERAGE_NOTE = (
    "Coverage alone can be had without forecasting anything (playing the ends of the range, "
    "in proportion q, covers a fraction q of any sequence): read it beside the pinball loss."
)


def _bounds_text(curves: pd.DataFrame, curve: str, forecasters: Sequence[str] | None) -> str:
    """What the dashed lines of a figure of small multiples are: the certified bounds of the forecasters drawn
    that have one in ``curves``, by name, or that none of them has one."""
    bound = _BY_NATURE.get(curve, (None, None))[1]
    rows = (
        curves.loc[curves["metric"] == bound] if bound and {"metric", "forecaster"} <= set(curves) else curves.iloc[:0]
    )
    if forecasters is not None:
        rows = rows.loc[rows["forecaster"].isin(list(forecasters))]
    names = sorted(rows["forecaster"].astype(str).unique()) if len(rows) else []
    if not names:
        return "no forecaster drawn certifies a bound on it"
    return (
        "dashed: the certified bound of "
        + ", ".join(n.replace("_", " ") for n in names)
        + (", in its colour" if len(names) == 1 else ", each in its forecaster's colour")
        + " (as the referee computes it on the run's forecasts)"
    )


def _tournament(out_dir: Path) -> str:
    """The tournament's name from its plan, if it has one (not the folder's name: the page of a
    directory copied elsewhere is the same)."""
    import json

    try:
        return str(json.loads((out_dir / "plan.json").read_text()).get("tournament") or "")
    except (OSError, ValueError, AttributeError):
        return ""


#: The page's template, from the package's ``templates`` folder; every value it shows is escaped.
_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("arena.plots", "templates"), autoescape=True, keep_trailing_newline=True
)


def index_page(
    out_dir: Path,
    summary: pd.DataFrame,
    figures: Sequence[tuple[Path, str, Sequence]],
    written: Sequence[Path],
    answers: Sequence[Answer] = (),
    stats: pd.DataFrame | None = None,
) -> str:
    """The text of ``out_dir/index.html``, the results page (:func:`arena.plots.report` writes it): the
    certificate verdicts, the leaderboards, the directory's other tables (as they are now), the figures and
    the downloads (``templates/index.html.j2``).

    Parameters
    ----------
    out_dir : the results directory.
    summary : its summary table (one row per matchup).
    figures : (stem, figure name, the figure's data) of each figure drawn; shown as PNG (else SVG)
        with a link to its PDF, when those files are among ``written``.
    written : the files of the report (those of ``out_dir`` itself, e.g. ``summary.md``, are listed
        with its tables even before they are written).
    answers : the answer of each game and T (:func:`arena.plots.answer.answers`), at the top.
    stats : the summary's :func:`~arena.aggregate.seed_stats`, as the directory holds them (else computed).
    """
    out_dir = Path(out_dir)
    v = verdicts(summary)
    return _ENV.get_template("index.html.j2").render(
        name=_tournament(out_dir),
        n=len(summary),
        answers=[{"a": a, "table": _table(a.board)} for a in answers],
        verdicts=None if v.empty else _table(v, lambda r: "fail" if r["fails"] > 0 else ""),
        failing=int((v["fails"] > 0).sum()) if not v.empty else 0,
        leaderboards=_leaderboards(summary, stats),
        others=_other_tables(out_dir),
        figures=_figures(out_dir, figures, {Path(p).resolve() for p in written}),
        files=_downloads(out_dir, written),
    )


def _leaderboards(summary: pd.DataFrame, stats: pd.DataFrame | None = None) -> list[dict]:
    """Each game's leaderboard per T and headline metric."""
    out = []
    games = sorted(summary["game"].dropna().astype(str).unique()) if "game" in summary else [None]
    cols = {
        "rank": "rank",
        "forecaster": "forecaster",
        "mean": "mean",
        "half": "\u00b1 (95%)",
        "mean_rank": "mean rank over natures",
        "n_natures": "natures",
    }
    for game in games:
        s = summary.loc[summary["game"] == game] if game is not None else summary
        metrics = headline_metrics(game, measured(s))
        board = leaderboard(s, metrics, stats=game_stats(s, game, metrics, stats)) if metrics else pd.DataFrame()
        for (T, metric), b in board.groupby(["T", "metric"], sort=True) if not board.empty else []:
            out.append(
                {
                    "game": game or "results",
                    "label": METRIC_LABELS.get(metric, metric),
                    "metric": metric,
                    "T": T,
                    "table": _table(b[list(cols)].rename(columns=cols)),
                }
            )
    return out


def _other_tables(out_dir: Path) -> list[dict]:
    """Every other table of the directory (red-team attacks first, comparisons, ...): its first rows."""
    paths = sorted(p for p in out_dir.glob("*.csv") if p.stem not in _NOT_SHOWN)
    paths.sort(key=lambda p: (0 if "redteam" in p.stem or "attack" in p.stem else 1, p.stem))
    out = []
    for path in paths:
        try:
            df = pd.read_csv(path)
        except (OSError, ValueError, pd.errors.ParserError):
            continue
        title = {"paired": "Paired comparisons of forecasters (same seeds)"}.get(path.stem, path.stem.replace("_", " "))
        more = f" (first {MAX_ROWS} of {len(df)} rows)" if len(df) > MAX_ROWS else ""
        out.append(
            {
                "title": title,
                "href": _rel(path, out_dir),
                "file": path.name,
                "more": more,
                "table": _table(df.head(MAX_ROWS)),
            }
        )
    return out


def _figures(out_dir: Path, figures: Sequence[tuple[Path, str, Sequence]], have: set[Path]) -> list[dict]:
    """Each figure written: its PNG (else SVG), its caption and its PDF when written."""
    out = []
    for stem, kind, args in figures:
        stem = Path(stem)
        files = [stem.with_name(f"{stem.name}.{e}") for e in ("png", "svg")]
        shown = next((f for f in files if f.resolve() in have), None)
        if shown is None:
            continue
        pdf = stem.with_name(f"{stem.name}.pdf")
        out.append(
            {
                "src": _rel(shown, out_dir),
                "size": _png_size(shown),
                "alt": stem.name,
                "caption": _caption(kind, stem, args),
                "pdf": _rel(pdf, out_dir) if pdf.resolve() in have else None,
            }
        )
    return out


def _png_size(path: Path) -> tuple[int, int] | None:
    r"""A PNG's width and height in pixels (from its header), else None (an SVG, an unreadable file).

    The page gives each image this size, so a figure is shown at its drawn width or more (150 pixels an
    inch drawn, 96 a CSS inch), a column-wide one never squeezed, and capped at the page's width by the CSS.

    Examples
    --------
    >>> import struct, tempfile
    >>> f = Path(tempfile.mkdtemp()) / "a.png"
    >>> _ = f.write_bytes(b"\x89PNG\r\n\x1a\n" + struct.pack(">I4sII", 13, b"IHDR", 487, 375))
    >>> _png_size(f), _png_size(f.with_suffix(".svg"))
    ((487, 375), None)
    """
    try:
        with open(path, "rb") as f:
            head = f.read(24)
    except OSError:
        return None
    if len(head) < 24 or head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return None
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def _downloads(out_dir: Path, written: Sequence[Path]) -> list[dict]:
    """The tables of the directory's top level to download (Parquet, CSV, Markdown), by name."""
    kinds = (".parquet", ".csv", ".md")
    files = {
        p.name: p
        for p in [*out_dir.glob("*"), *map(Path, written)]
        if p.suffix in kinds and not p.name.startswith(".") and p.parent.resolve() == out_dir.resolve()
    }
    return [{"href": _rel(p, out_dir), "name": p.name} for p in sorted(files.values(), key=lambda p: p.name)]


__all__ = ["CAPTIONS", "index_page", "verdicts"]
