"""Figures of binary forecasts (the binary game, and the forecasts of the decision game): smooth
calibration against T, reliability diagrams pooled across seeds, and the jobs of their report (the small
multiples over natures are :mod:`arena.plots.multiples`').

Examples
--------
>>> import pandas as pd
>>> curves = pd.DataFrame({"forecaster": "k29", "nature": "iid_bernoulli", "seed": [0, 0, 1, 1],
...                        "t": [10, 100, 10, 100], "metric": "smce", "value": [2.0, 6.0, 4.0, 8.0]})
>>> fig = smce_vs_T(curves)
>>> line = [ln for ln in fig.axes[0].get_lines() if ln.get_gid() == "mean:k29"][0]
>>> [round(float(v), 6) for v in line.get_ydata()]  # mean over seeds of smCE_t / t
[0.3, 0.07]

References
----------
Perdomo & Recht, "In Defense of Defensive Forecasting", §8 (smooth calibration of K29).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.markers import MarkerStyle

from arena.aggregate import single_matchup
from arena.answer import HEADLINE_METRICS
from arena.intervals import moments_ci
from arena.moments import pool_bins
from arena.plots.common import (
    _FAMILY_TITLES,
    _clean,
    _curves,
    _draw_curves,
    _facets,
    _floor_note,
    _groups,
    _last_T,
    _legend,
    _log_floor,
    _no_data,
    _ok,
    _only,
    _panel_title,
    _per_t,
    _restrict,
    _rounds_axes,
    _seed_note,
    _seeds,
    regret_curves,
)
from arena.plots.jobs import Job
from arena.plots.labels import CURVE_TITLES, display_name, heading, run_note
from arena.plots.multiples import _BY_NATURE, _curve_span, _k29_guarantee, curves_by_nature
from arena.plots.style import (
    _BOUND_COLOR,
    _RC,
    COLUMN_WIDTH,
    FIGSIZE,
    FULL_WIDTH,
    _axes,
    _lines,
    _new_figure,
    order,
    styles_for,
)
from arena.results import safe_name

#: The headline metrics of the binary game: its LaTeX table and its leaderboards.
BINARY_METRICS = HEADLINE_METRICS["binary"]


def smce_vs_T(
    curves: pd.DataFrame, nature: str | None = None, ax: Axes | None = None, styles: Mapping[str, dict] | None = None
) -> Figure:
    """smCE/T against T on log-log axes: one line per forecaster, certified bounds dashed.

    Each line is the mean across seeds of smCE_t / t at the referee's checkpoints, with the
    95% Student-t interval of the mean across seeds as a band (none with a single seed). A
    forecaster that certifies smooth calibration (curve ``smce_bound``) gets its bound
    smce_bound/t dashed in its color (the bound is on its internal forecast, which is the
    announced one except for rounded variants). The thin gray line is sqrt(8t/3)/t, the
    K29 guarantee (docs/ERRATA.md: the paper's constants give sqrt(8T/3), not sqrt(2T)).

    Parameters
    ----------
    curves : long table (forecaster, seed, t, metric, value[, nature]).
    nature : keep only this nature; by default every row is used (one axes for the data given).
    ax : axes to draw on; a new single-column figure by default.
    styles : color and marker per forecaster (:func:`arena.plots.style.forecaster_styles`); by
        default those of the forecasters drawn.
    """
    own = ax is None
    with mpl.rc_context(_RC):
        df = _restrict(_last_T(_curves(curves)), nature=nature)
        obs = df.loc[df["metric"] == "smce"] if not df.empty else df
        obs = obs.loc[obs["t"] > 0] if not obs.empty else obs
        if obs.empty:
            fig, ax = _axes(ax)
            _no_data(ax, "smCE curves" + (f" for {nature}" if nature else ""))
            return fig
        obs = _per_t(obs)
        bounds = df.loc[(df["metric"] == "smce_bound") & (df["t"] > 0)]
        stats = moments_ci(obs, ["forecaster", "t"])
        fig, panels = _facets(ax, stats["forecaster"].unique(), styles, sharey=True)
        t, k29 = _k29_guarantee(obs)
        floor = _log_floor(np.r_[stats["mean"].to_numpy(float), k29])
        for a, names in panels:
            part = stats.loc[stats["forecaster"].isin(names)]
            extra = _draw_curves(
                a, part, "t", True, styles, bounds.loc[bounds["forecaster"].isin(names)], scale="x", floor=floor
            )
            # the K29 guarantee sqrt(8t/3)/t, a T^(-1/2) rate: the reference every curve is read against
            a.plot(t, k29, color=_BOUND_COLOR, linewidth=0.6, gid="reference:k29")
            _rounds_axes(a, "smCE\u209c / t (smooth calibration\nerror per round)", None)
            extra.append(
                (Line2D([], [], color=_BOUND_COLOR, linewidth=0.6), "\u221a(8t/3) / t \u221d 1/\u221at (K29 guarantee)")
            )
            extra += _floor_note(a, part["mean"], floor)
            _legend(a, extra, outside=own, loc="lower left")
        _panel_title(fig, panels, heading(df, CURVE_TITLES["smce"], nature), _seed_note(_seeds(stats)), own)
    return fig


def pool_reliability(reliability: pd.DataFrame) -> pd.DataFrame:
    """Pool reliability bins across seeds: counts add, means are count-weighted (NaN bins ignored).

    Examples
    --------
    >>> rel = pd.DataFrame({"bin": [0, 0], "lo": 0.0, "hi": 0.5, "count": [1, 3],
    ...                     "mean_p": [0.2, 0.4], "mean_y": [0.0, 1.0]})
    >>> pool_reliability(rel)[["count", "mean_p", "mean_y"]].round(3).values.tolist()
    [[4.0, 0.35, 0.75]]
    """
    return pool_bins(reliability)


#: Height, in the reliability panel's data units, of the tallest count bar: the bars fill the
#: lower quarter of the panel, under the points (the counts share the panel's axes).
_COUNT_TOP = 0.28
_UNIT_TICKS = ([0.0, 0.5, 1.0], ["0", "0.5", "1"])
#: A reliability line joins the bins holding at least this many forecasts and this share of them.
_JOINED_MIN, _JOINED_SHARE = 5, 0.005


def _reliability_frame(ax: Axes, title: str, x: bool = True, y: bool = True) -> None:
    """Unit square with the diagonal (perfect calibration), a title, and three ticks and the label on the x
    axis (where ``x``) and on the y axis (where ``y``); an axis without them has no ticks (an inner panel of
    a grid: the outer panels' read for all, and its ticks would cost as much to make as its panel)."""
    ax.plot([0, 1], [0, 1], color="0.6", linewidth=0.6, linestyle=":", zorder=1)
    ax.set_xlim(-0.03, 1.03)
    ax.set_ylim(-0.03, 1.03)
    ax.set_xticks(*_UNIT_TICKS) if x else ax.set_xticks([])
    ax.set_yticks(*_UNIT_TICKS) if y else ax.set_yticks([])
    ax.set_box_aspect(1)
    if x:
        ax.set_xlabel("mean forecast")
    if y:
        ax.set_ylabel("observed frequency")
    ax.set_title(title, fontsize=7)


def _draw_reliability(ax: Axes, pooled: pd.DataFrame, style: Mapping[str, str], count_axis: bool = True) -> None:
    """Bars of the share of forecasts per bin (same axes, the tallest at height ``_COUNT_TOP``) with
    their scale on the right of the panel (named where ``count_axis``), then the pooled bins as one
    line and one scatter."""
    count = pooled["count"].to_numpy(float)
    share = count / count.sum()
    top = share.max()
    lo, hi = pooled["lo"].to_numpy(float), pooled["hi"].to_numpy(float)
    centers = (lo + hi) / 2
    x0, x1 = centers - 0.45 * (hi - lo), centers + 0.45 * (hi - lo)
    h = _COUNT_TOP * share / top
    bars = np.stack(
        [
            np.column_stack([x0, 0 * h]),
            np.column_stack([x0, h]),
            np.column_stack([x1, h]),
            np.column_stack([x1, 0 * h]),
        ],
        axis=1,
    )  # one collection: one draw call for all bars
    ax.add_collection(
        PolyCollection(bars, facecolors=style["color"], alpha=0.15, linewidths=0, zorder=0.5, gid="counts"),
        autolim=False,
    )
    _share_axis(ax, top, label=count_axis)
    size = 60 * count / count.max()
    mp, my = pooled["mean_p"].to_numpy(float), pooled["mean_y"].to_numpy(float)
    # the line joins the bins that hold more than a handful of forecasts: a bin of the first rounds' few
    # forecasts (p = 1/2 on every seed) has an observed frequency of noise, and the line's kink to it
    # would be the figure's largest feature; its marker (area: its count) stays
    joined = count >= max(_JOINED_MIN, _JOINED_SHARE * count.sum())
    ax.plot(mp[joined], my[joined], color=style["color"], linewidth=0.6, alpha=0.7, zorder=2, gid="line")
    # a white edge sets filled markers apart; "+", "x", "1" are drawn by their edge, in the color
    edge = (
        {"edgecolors": "white", "linewidths": 0.3} if MarkerStyle(style["marker"]).is_filled() else {"linewidths": 0.8}
    )
    ax.scatter(
        mp,
        my,
        s=np.maximum(size, 4),
        color=style["color"],
        marker=style["marker"],
        zorder=3,
        clip_on=False,
        gid="bins",
        **edge,
    )


def _share_axis(ax: Axes, top: float, label: bool = True) -> None:
    """The scale of the bars under a reliability panel, right of it: share of the forecasts per bin,
    0 at the x axis and ``top`` (the tallest bar, at the height ``_COUNT_TOP``) in percent; named
    "forecasts" where ``label``. Drawn as a line and text (gid ``count_axis``, ``count_tick``,
    ``count_label``), not a secondary axis: a grid has one per panel, and an axis' ticks cost
    more to draw than its panel."""
    tr = ax.get_yaxis_transform()  # x in the panel's width, y in data
    x = 1.04
    ax.plot(
        [x + 0.03, x, x, x + 0.03],
        [0, 0, _COUNT_TOP, _COUNT_TOP],
        transform=tr,
        color="0.4",
        linewidth=0.5,
        clip_on=False,
        gid="count_axis",
    )
    pct = 100 * top
    for y, text in ((0.0, "0"), (_COUNT_TOP, f"{pct:.0f}%" if pct >= 9.5 else f"{pct:.1f}%")):
        ax.text(x + 0.05, y, text, transform=tr, fontsize=6, color="0.4", va="center", ha="left", gid="count_tick")
    if label:
        ax.text(
            x + 0.05,
            _COUNT_TOP + 0.06,
            "forecasts",
            transform=tr,
            fontsize=6,
            color="0.4",
            ha="left",
            va="bottom",
            gid="count_label",
        )


def reliability_diagram(
    reliability: pd.DataFrame,
    forecaster: str,
    nature: str,
    ax: Axes | None = None,
    count_axis: bool = True,
    style: Mapping[str, str] | None = None,
) -> Figure:
    """Mean forecast against observed frequency per bin, pooled across seeds.

    Marker area is proportional to the bin's count; the diagonal is perfect calibration;
    light bars along the x axis (in the same axes, the tallest a quarter of the panel high)
    show the share of the forecasts that fell in each bin, on the scale at the right.

    Parameters
    ----------
    reliability : table of bins (forecaster, nature, seed, bin, lo, hi, count, mean_p, mean_y).
    forecaster, nature : the matchup to draw (all its seeds are pooled).
    ax : axes to draw on; a new single-column figure by default.
    count_axis : name the bars' scale (share of forecasts per bin, right of the panel).
    style : the forecaster's color and marker; by default the first of :data:`arena.plots.style.PALETTE`
        and :data:`arena.plots.style.MARKERS`.
    """
    with mpl.rc_context(_RC):
        fig, ax = _axes(ax, (COLUMN_WIDTH, FIGSIZE[1]))
        _reliability_frame(ax, f"{display_name(forecaster)} vs {display_name(nature)}")
        df = reliability if reliability is not None else pd.DataFrame()
        df = _restrict(df, forecaster=forecaster, nature=nature)
        pooled = pool_reliability(df) if not df.empty else df
        if pooled.empty:
            ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes, color="0.4")
            return fig
        _draw_reliability(ax, pooled, style or styles_for([forecaster])[forecaster], count_axis)
    return fig


def reliability_grid(
    reliability: pd.DataFrame,
    nature: str,
    forecasters: Sequence[str] | None = None,
    ncols: int = 3,
    styles: Mapping[str, dict] | None = None,
) -> Figure:
    """One reliability panel per forecaster for one nature (a figure for the full text width).

    Panels share the unit square: tick labels only on the outer panels; the bars of each panel
    (share of the forecaster's forecasts per bin) have their scale right of the panel (0 and
    the tallest bar's share), named right of the last panel of each row. ``styles``: color
    and marker per forecaster (by default :func:`arena.plots.style.forecaster_styles` of the panels')."""
    df = _restrict(_last_T(reliability if reliability is not None else pd.DataFrame()), nature=nature)
    names = list(forecasters) if forecasters is not None else order(df["forecaster"].unique() if not df.empty else [])
    pooled = pool_bins(df, ["forecaster"])
    pooled = {str(name): part for name, part in pooled.groupby("forecaster", sort=False)}
    return _reliability_grid(pooled, nature, names, ncols, styles, run_note(df))


#: The grid of reliability panels, in inches: panel side, gaps between panels (room for a
#: title above each), and margins (tick labels and axis labels left and below, the title above).
_GRID = {
    "side": 0.93,
    "wgap": 0.36,
    "hgap": 0.28,
    "left": 0.5,
    "right": 0.5,
    "bottom": 0.42,
    "top": 0.26,
    "title_line": 0.15,
}


def _reliability_grid(
    pooled: dict[str, pd.DataFrame],
    nature: str,
    names: list[str],
    ncols: int,
    styles: Mapping[str, dict] | None = None,
    run: str = "",
) -> Figure:
    """The figure of :func:`reliability_grid`; ``run``: the game, T and seeds of its bins (:func:`run_note`)."""
    styles = styles_for(names, styles)
    n = max(len(names), 1)
    ncols = min(ncols, n)
    nrows = math.ceil(n / ncols)
    # a paper's column (up to three panels a row) or its full width: the panels' side follows
    width = COLUMN_WIDTH if ncols <= 3 else FULL_WIDTH
    g = dict(_GRID)
    g["side"] = min(1.75, (width - g["left"] - g["right"] - (ncols - 1) * g["wgap"]) / ncols)
    g["left"] += (width - g["left"] - g["right"] - ncols * g["side"] - (ncols - 1) * g["wgap"]) / 2  # centered
    widths = np.concatenate([(p["hi"] - p["lo"]).to_numpy(float) for p in pooled.values()] or [np.array([])])
    bins = f", {round(1 / np.median(widths))} bins" if widths.size and np.median(widths) > 0 else ""
    # what the markers and bars mean is the caption's: a title of three lines squeezed a column's two panels
    pooled_note = f" ({run} pooled{bins})" if run else (f" ({bins[2:]})" if bins else "")
    title = _lines(f"reliability, {display_name(nature)}{pooled_note}", width - 0.2, 0.065)  # 8 pt
    top = g["top"] + g["title_line"] * len(title)
    height = g["bottom"] + nrows * g["side"] + (nrows - 1) * g["hgap"] + top
    rects = [
        (
            (g["left"] + (i % ncols) * (g["side"] + g["wgap"])) / width,
            (height - top - (i // ncols) * (g["side"] + g["hgap"]) - g["side"]) / height,
            g["side"] / width,
            g["side"] / height,
        )
        for i in range(n)
    ]
    label_at = (0.08 / width, (g["bottom"] + (height - top - g["bottom"]) / 2) / height)
    with mpl.rc_context(_RC):
        fig = _grid_panels((width, height), names, rects, ncols, nrows, label_at)
        for i, (a, name) in enumerate(zip(fig.axes, names, strict=False)):
            p = pooled.get(str(name))
            if p is None or p.empty:
                a.text(0.5, 0.5, "no data", ha="center", va="center", transform=a.transAxes, color="0.4")
            else:
                _draw_reliability(a, p, styles[str(name)], count_axis=i % ncols == ncols - 1 or i == len(names) - 1)
        if not names:
            _no_data(fig.axes[0], f"reliability for {nature}")
        fig.suptitle("\n".join(title), fontsize=8, y=1 - 0.06 / height, va="top")
    return fig


def _grid_panels(size: tuple, names: list[str], rects: list[tuple], ncols: int, nrows: int, label_at: tuple) -> Figure:
    """The empty panels of a reliability grid of ``size`` (inches) at ``rects`` (figure fractions), framed and
    labelled. Every panel has the same square and the same three ticks: the layout is fixed, no layout engine
    measures the panels' labels at each draw."""
    fig = _new_figure(size, layout=None)
    for i, rect in enumerate(rects):
        a = fig.add_axes(rect)
        if i >= len(names):
            continue
        # inner panels: no ticks (the outer panels' read for all: one unit square); several rows: one
        # y label for them all, left of the grid
        _reliability_frame(a, display_name(names[i]), x=i >= len(names) - ncols, y=not i % ncols)
        if nrows > 1:
            a.set_ylabel("")
    if nrows > 1:  # the rows' panels are shorter than the label: it goes once, centred on the grid
        fig.text(*label_at, "observed frequency", rotation=90, ha="left", va="center")
    return fig


#: The figures of binary forecasts, by name (a report's job names its figure).
FIGURES = {
    "smce_vs_T": lambda curves, nature, styles: smce_vs_T(curves, nature=nature, styles=styles),
    "regret_linear": lambda curves, nature, styles: regret_curves(
        curves, "regret_linear", nature=nature, styles=styles
    ),
    "bias": lambda curves, nature, styles: regret_curves(curves, "bias", nature=nature, styles=styles),
    # small multiples: one panel per nature, one figure per group of forecasters
    "by_nature": lambda curves, metric, names, styles, title, span=None: curves_by_nature(
        curves, metric, names, styles, title=title, span=span
    ),
    # four panels a row: the grid is a paper's full width (6.75 in), each panel 1.2 in
    "reliability": lambda pooled, nature, names, run, styles: _reliability_grid(pooled, nature, names, 4, styles, run),
}
#: The curve figures of binary forecasts: (figure, curve).
_CURVES = (("smce_vs_T", "smce"), ("regret_linear", "regret_linear"), ("bias", "bias"))


def _group_names(groups: list[tuple[str | None, list[str]]]) -> list[str]:
    """A file name per group of forecasters of :func:`arena.plots.common._groups`: its family, numbered
    when the family has several groups (``defensive1``, ``defensive2``); ``all`` for one group of all.

    Examples
    --------
    >>> _group_names([("defensive", ["a"]), ("defensive", ["b"]), ("baseline", ["c"])])
    ['defensive1', 'defensive2', 'baseline']
    >>> _group_names([(None, ["a", "b"])])
    ['all']
    """
    fams = [str(f) if f else "all" for f, _ in groups]
    count = {f: fams.count(f) for f in fams}
    seen: dict[str, int] = {}
    out = []
    for f in fams:
        seen[f] = seen.get(f, 0) + 1
        out.append(f"{f}{seen[f]}" if count[f] > 1 else f)
    return out


def jobs(
    summary: pd.DataFrame,
    curves: pd.DataFrame,
    rel: pd.DataFrame,
    fig_dir: Path,
    formats: Sequence[str],
    styles: Mapping[str, dict],
    metrics: Sequence[str] = BINARY_METRICS,
    facet: bool = True,
) -> list[Job]:
    """The figure jobs of binary forecasts: the curves and reliability bins there are, and
    leaderboards of ``metrics``.

    With several natures and ``facet``, each curve (smCE/T, regret to linear, bias) is one figure of
    small multiples per group of forecasters (:func:`curves_by_nature`; ``<figure>__<group>``, the
    groups of :func:`arena.plots.common._groups`); else one figure per nature (``<figure>__<nature>``).
    A single matchup (one forecaster, one nature) gets smCE/T, and the regret and bias only where
    its forecaster certifies a bound on them: the other curves say nothing that its row does not.
    Reliability diagrams are one grid per nature."""
    natures = sorted(
        set().union(
            *(
                set(map(str, df["nature"].dropna().unique()))
                for df in (summary, curves, rel)
                if df is not None and "nature" in df
            )
        )
    )
    # the largest horizon T only (as the curves and leaderboards): a sweep's horizons pooled are no one game
    rel = _last_T(rel) if rel is not None else rel
    pooled = pool_bins(rel, ["nature", "forecaster"])  # pooled over seeds once; each job gets its nature's bins
    have_all = set(curves["metric"].unique()) if curves is not None and not curves.empty else set()
    single = summary is not None and single_matchup(summary)
    wanted = [
        (kind, m)
        for kind, m in _CURVES
        if m in have_all
        and (not single or kind == "smce_vs_T" or f"{m}_bound" in have_all or _BY_NATURE[m][1] in have_all)
    ]
    formats = tuple(formats)
    jobs = []
    if facet and len(natures) > 1 and wanted:
        names = order(curves["forecaster"].unique())
        groups = _groups(names, styles_for(names, styles))
        for kind, metric in wanted:
            cur = curves.loc[curves["metric"].isin([metric, _BY_NATURE[metric][1]])]
            # the figures of the groups share one log scale: a value sits at one height in each
            span = _curve_span(cur, metric) if _BY_NATURE[metric][3] else None
            for gname, (fam, part) in zip(_group_names(groups), groups, strict=False):
                title = _FAMILY_TITLES.get(str(fam), str(fam)) if fam else None
                if title and gname[-1].isdigit():
                    title += f" ({gname[len(str(fam)) :]} of {sum(f == fam for f, _ in groups)})"
                mine = cur.loc[cur["forecaster"].isin(part)]
                jobs.append(
                    Job("by_nature", (mine, metric, part, styles, title, span), fig_dir / f"{kind}__{gname}", formats)
                )
    for nat in natures:
        if not (facet and len(natures) > 1):
            cur = _restrict(curves, nature=nat)
            have = set(cur["metric"].unique()) if not cur.empty else set()
            for kind, metric in wanted:
                if metric in have:
                    jobs.append(Job(kind, (cur, nat, styles), fig_dir / f"{kind}__{safe_name(nat)}", formats))
        pooled_nat = _restrict(pooled, nature=nat)
        if not pooled_nat.empty:
            names = order(_restrict(rel, nature=nat)["forecaster"].unique())
            by_name = {str(name): part for name, part in pooled_nat.groupby("forecaster", sort=False)}
            args = (by_name, nat, names, run_note(_restrict(rel, nature=nat)), styles)
            jobs.append(Job("reliability", args, fig_dir / f"reliability__{safe_name(nat)}", formats))
    for metric in metrics:
        if metric in summary and not _clean(_ok(summary), metric).empty:
            jobs.append(
                Job(
                    "leaderboard",
                    (_only(summary, metric), metric),
                    fig_dir / f"leaderboard__{safe_name(metric)}",
                    formats,
                )
            )
    return jobs
