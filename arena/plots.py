"""Tables -> matplotlib figures, nothing else.

Every function here is a pure function of the tidy tables of :mod:`arena.results`
(``summary``, ``curves``, ``reliability``); plot functions take ``ax=None`` and return the
:class:`~matplotlib.figure.Figure`. Figures are drawn on the Agg canvas without touching
pyplot's global state (no ``plt.show``), sized for a single paper column (3.4 in wide,
8 pt type), and every forecaster keeps its color and marker across figures
(:func:`forecaster_style`, colorblind-safe palettes). Every curve is a mean across seeds with
its 95% Student-t interval as a band, and the statistics of tables and summaries are those of
:mod:`arena.aggregate`. Missing or NaN data never crash a plot: the figure says "no data"
and :func:`report` skips it. :func:`report` saves PDFs with TrueType (Type 42) fonts.

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
Perdomo & Recht, "In Defense of Defensive Forecasting", §8 (smooth calibration of K29); SPEC §8.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import re
import tempfile
import textwrap
from collections.abc import Iterable, Sequence
from pathlib import Path

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib import ticker
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import PolyCollection
from matplotlib.colors import LogNorm, Normalize
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.markers import MarkerStyle
from matplotlib.patches import Rectangle

from arena.aggregate import direction, leaderboard, mean_ci, paired, seed_stats

#: Single-column figure size (inches) and the type size that goes with it.
FIGSIZE = (3.4, 2.6)
#: PNG resolution: 150 dpi keeps 7 pt text crisp at single-column width, and draws and
#: compresses in about half the time of 200 dpi.
DPI = 150
_RC = {
    "font.size": 8, "axes.titlesize": 8, "axes.labelsize": 8, "xtick.labelsize": 7, "ytick.labelsize": 7,
    "legend.fontsize": 6.5, "legend.title_fontsize": 7, "lines.linewidth": 1.2, "lines.markersize": 3.5,
    "axes.linewidth": 0.6, "xtick.major.width": 0.6, "ytick.major.width": 0.6,
    "axes.spines.top": False, "axes.spines.right": False,
    # a fixed title height: matplotlib's automatic placement checks every axes' tick labels
    # for overlap at each draw, a large share of the drawing time of a grid of panels
    "axes.titley": 1.0,
}
#: Fonts embedded in PDF and PostScript as TrueType (Type 42), not Type 3: selectable text, and
#: what publishers ask for. Applied where the figures are saved (:func:`_save`).
_SAVE_RC = {"pdf.fonttype": 42, "ps.fonttype": 42}

#: Okabe & Ito's colorblind-safe palette (yellow left out: too light on white), then Paul Tol's
#: muted wine, teal, olive and indigo for the forecasters beyond seven.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
           "#882255", "#44AA99", "#999933", "#332288",
           # Tol's remaining colors, for the quantile game's forecasters
           "#117733", "#DDCC77", "#88CCEE", "#AA4499", "#661100", "#6699CC", "#AA4466")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "h", "*", "p", "d", "H", "8", "+", "x", "1")
#: The project's forecasters by the games they meet in (the binary ones meet decision DF in the
#: decision game): each gets its own color and marker for good. Its place in its group picks the
#: color, so that colors differ within a game and every game starts with Okabe & Ito's; the
#: marker is shifted by :data:`_MARKER_SHIFT` per group, so that no two forecasters share both.
FORECASTER_GROUPS = (
    ("k29", "k29_rounded", "kernel_df", "linear_df", "bit", "dmm", "ogd", "running_mean", "window_mean",
     "last_outcome", "constant", "decision_df", "decision_df_deterministic"),
    # the quantile game (the last one is the tournament's label of Alg. 6 with p-bins)
    ("conditional_quantile_df", "marginal_quantile_df", "aci", "quantile_ogd", "running_quantile",
     "window_quantile", "conditional_quantile_df_bins"),
    # the experts game (with the tournament's labels of l-inf DF and Hedge variants)
    ("linf_df", "linf_df_lam1", "aggregating", "hedge", "hedge_tuned", "hedge_doubling", "ftl", "uniform_average"),
)
_MARKER_SHIFT = 6
#: Every known forecaster, in the order of the legends.
KNOWN_FORECASTERS = tuple(name for group in FORECASTER_GROUPS for name in group)

METRIC_LABELS = {
    "smce_over_T": "smCE/T", "smce_pm_over_T": "smCE$_\\pm$/T", "smce": "smCE", "smce_pm": "smCE$_\\pm$",
    "brier": "Brier", "bias": "bias", "log_loss": "log loss", "ece": "ECE", "oi_gap": "OI gap",
    "regret_linear": "regret to linear", "regret_constant": "regret to constant",
}
_BOUND_COLOR = "0.45"


# ----------------------------------------------------------------------------------------- style
def forecaster_style(name: str) -> dict[str, str]:
    """The color and marker of a forecaster, the same in every figure.

    Known forecasters take their place in :data:`FORECASTER_GROUPS` (colors distinct within a
    group, color and marker together distinct overall); any other name is placed by a stable
    hash of the name (not Python's salted ``hash``).

    Examples
    --------
    >>> forecaster_style("k29")
    {'color': '#0072B2', 'marker': 'o'}
    >>> forecaster_style("my_plugin") == forecaster_style("my_plugin")
    True
    """
    for g, group in enumerate(FORECASTER_GROUPS):
        if name in group:
            i = group.index(name)
            return {"color": PALETTE[i % len(PALETTE)], "marker": MARKERS[(i + _MARKER_SHIFT * g) % len(MARKERS)]}
    h = int.from_bytes(hashlib.sha256(str(name).encode()).digest()[:8], "big")
    return {"color": PALETTE[h % len(PALETTE)], "marker": MARKERS[(h // len(PALETTE)) % len(MARKERS)]}


def _order(names: Iterable[str]) -> list[str]:
    """Known forecasters in their fixed order, then the others alphabetically."""
    names = set(map(str, names))
    return [n for n in KNOWN_FORECASTERS if n in names] + sorted(names - set(KNOWN_FORECASTERS))


def _new_figure(figsize=FIGSIZE, layout: str | None = "constrained", **kw) -> Figure:
    fig = Figure(figsize=figsize, layout=layout, **kw)
    FigureCanvasAgg(fig)  # render with Agg, whatever pyplot's backend is
    return fig


def _axes(ax: Axes | None, figsize=FIGSIZE) -> tuple[Figure, Axes]:
    if ax is not None:
        return ax.figure, ax
    fig = _new_figure(figsize)
    return fig, fig.add_subplot()


def _plain_log_ticks(axis) -> None:
    """Decades written as 0.01, 0.1, 1, 10 (plain text: no mathtext, quicker and easier to read).

    No minor ticks: matplotlib's eight per decade cost about a fifth of a curve figure's
    drawing time, and the labelled decades are what the reader uses."""
    axis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_locator(ticker.NullLocator())


def _rounds_axes(ax: Axes, ylabel: str, nature: str | None, logy: bool = True) -> None:
    """A curve figure's axes: rounds T on a log x axis, ``ylabel`` (log or linear), the nature as title."""
    if logy:
        ax.set_yscale("log", nonpositive="mask")
        _plain_log_ticks(ax.yaxis)
    ax.set_xscale("log")
    _plain_log_ticks(ax.xaxis)
    ax.set_xlabel("rounds T")
    ax.set_ylabel(ylabel)
    if nature:
        ax.set_title(nature.replace("_", " "))


def _no_data(ax: Axes, what: str) -> None:
    ax.text(0.5, 0.5, f"no data: {what}", ha="center", va="center", transform=ax.transAxes, color="0.4")
    ax.set_xticks([])
    ax.set_yticks([])


_CURVE_COLUMNS = ("forecaster", "t", "metric", "value")
_BIN_COLUMNS = ("bin", "lo", "hi", "count", "mean_p", "mean_y")


def _clean(df: pd.DataFrame | None, column: str = "value", need: Sequence[str] = ()) -> pd.DataFrame:
    """Drop rows whose ``column`` is NaN or infinite (they are ignored, not plotted as zero).

    A table without ``column`` or any of the ``need`` columns counts as empty."""
    if df is None or df.empty or any(c not in df for c in (column, *need)):
        return pd.DataFrame()
    values = pd.to_numeric(df[column], errors="coerce").replace([np.inf, -np.inf], np.nan)
    return df.assign(**{column: values}).loc[values.notna()]


def _restrict(df: pd.DataFrame, **where) -> pd.DataFrame:
    for col, val in where.items():
        if val is not None and not df.empty:
            df = df.loc[df[col] == val] if col in df else df.iloc[:0]
    return df


def _ok(summary: pd.DataFrame) -> pd.DataFrame:
    """Finished matchups only: a forfeited run's metrics cover a truncated game."""
    return summary if "status" not in summary else summary.loc[summary["status"] != "forfeit"]


# ----------------------------------------------------------------------------------- curves
def _draw_mean(ax: Axes, g: pd.DataFrame, name: str, x: str, log: bool, scale: pd.Series | float = 1.0):
    style = forecaster_style(name)
    xs = g[x].to_numpy(float)
    mean = (g["mean"] / scale).to_numpy(float)
    half = (g["half"] / scale).to_numpy(float)
    (line,) = ax.plot(xs, mean, color=style["color"], marker=style["marker"], markevery=max(1, len(xs) // 6),
                      label=name, gid=f"mean:{name}")
    ok = np.isfinite(half)
    if ok.any():
        lo, hi = mean - half, mean + half
        if log:  # a band crossing zero cannot be drawn on log axes: clip it at a tenth of the mean
            lo = np.maximum(lo, mean / 10)
        ax.fill_between(xs, lo, hi, where=ok, color=style["color"], alpha=0.2, linewidth=0, gid=f"band:{name}")
    return line


def _draw_bound(ax: Axes, b: pd.DataFrame, name: str, x: str, scale=1.0):
    g = b.groupby(x)["value"].mean()
    xs = g.index.to_numpy(float)
    ax.plot(xs, (g / (xs if scale == "x" else scale)).to_numpy(float), color=forecaster_style(name)["color"],
            linestyle="--", linewidth=0.9, gid=f"bound:{name}")


def _legend(ax: Axes, extra: list | None = None, outside: bool = False, **kw) -> None:
    """Forecasters then ``extra`` (handle, label) pairs; below the axes when the figure is ours."""
    handles, labels = ax.get_legend_handles_labels()
    for h, lab in extra or []:
        handles.append(h)
        labels.append(lab)
    if not handles:
        return
    style = {"frameon": False, "handlelength": 1.8, "columnspacing": 0.8, "borderaxespad": 0.2,
             "handletextpad": 0.4}
    if outside:  # never covers data; the figure grows by one line of text per legend row
        ncol = 3 if len(handles) > 4 else 2
        fig = ax.figure
        w, h = fig.get_size_inches()
        fig.set_size_inches(w, h + 0.13 * math.ceil(len(handles) / ncol))
        fig.legend(handles, labels, loc="outside lower center", ncol=ncol, **style)
    else:
        ax.legend(handles, labels, ncol=2 if len(handles) > 4 else 1, **style, **kw)


def smce_vs_T(curves: pd.DataFrame, nature: str | None = None, ax: Axes | None = None) -> Figure:
    """smCE/T against T on log-log axes: one line per forecaster, certified bounds dashed.

    Each line is the mean across seeds of smCE_t / t at the referee's checkpoints, with the
    95% Student-t interval of the mean across seeds as a band (none with a single seed). A
    forecaster that certifies smooth calibration (curve ``smce_bound``) gets its bound
    smce_bound/t dashed in its color (the bound is on its internal forecast, which is the
    announced one except for rounded variants). The thin gray line is sqrt(8t/3)/t, the
    K29 guarantee (SPEC §7: the paper's constants give sqrt(8T/3), not sqrt(2T)).

    Parameters
    ----------
    curves : long table (forecaster, seed, t, metric, value[, nature]).
    nature : keep only this nature; by default every row is used (one axes for the data given).
    ax : axes to draw on; a new single-column figure by default.
    """
    own = ax is None
    with mpl.rc_context(_RC):
        fig, ax = _axes(ax)
        df = _restrict(_clean(curves, need=_CURVE_COLUMNS), nature=nature)
        obs = df.loc[df["metric"] == "smce"] if not df.empty else df
        obs = obs.loc[obs["t"] > 0] if not obs.empty else obs
        if obs.empty:
            _no_data(ax, "smCE curves" + (f" for {nature}" if nature else ""))
            return fig
        obs = obs.assign(value=obs["value"] / obs["t"])
        bounds = df.loc[(df["metric"] == "smce_bound") & (df["t"] > 0)]
        stats = mean_ci(obs, ["forecaster", "t"])
        for name in _order(stats["forecaster"].unique()):
            _draw_mean(ax, stats.loc[stats["forecaster"] == name], name, "t", log=True)
            b = bounds.loc[bounds["forecaster"] == name]
            if not b.empty:
                _draw_bound(ax, b, name, "t", scale="x")
        t = np.geomspace(max(obs["t"].min(), 1), obs["t"].max(), 50)
        ax.plot(t, np.sqrt(8 * t / 3) / t, color=_BOUND_COLOR, linewidth=0.6, gid="reference:k29")
        _rounds_axes(ax, "smCE / T", nature)
        extra = [(Line2D([], [], color=_BOUND_COLOR, linewidth=0.6), "K29 guarantee \u221a(8T/3) / T")]
        if not bounds.empty:
            extra.append((Line2D([], [], color=_BOUND_COLOR, linestyle="--", linewidth=0.9), "certified bound"))
        _legend(ax, extra, outside=own, loc="lower left")
    return fig


#: Curves whose certified bound is not ``<metric>_bound``: (bound curve, its scale ("x": divided
#: by t), log y axis). The bias is nonnegative and falls like 1/t for the defensive forecasters.
_CURVE_BOUNDS = {"bias": ("bit_bound", "x", True)}


def regret_curves(curves: pd.DataFrame, metric: str = "regret_linear", nature: str | None = None,
                  ax: Axes | None = None) -> Figure:
    """Regret (or another curve, e.g. ``bias``) against T (log x axis): per forecaster the mean
    across seeds and, as a band, its 95% Student-t interval.

    Where the curves hold ``<metric>_bound`` (a forecaster certifying it; for ``bias``, the
    bit-prediction bound ``bit_bound`` on abs(sum(p - y)), drawn divided by t), the bound is
    dashed in the forecaster's color. Regret can be negative (the comparators are norm-bounded),
    so the y axis is linear with zero marked (log for ``bias``, where a zero mean is not drawn).

    Parameters
    ----------
    curves : long table (forecaster, seed, t, metric, value[, nature]).
    metric : the curve to draw, e.g. ``"regret_linear"``, ``"regret_constant"`` or ``"bias"``.
    nature : keep only this nature; by default every row is used.
    ax : axes to draw on; a new single-column figure by default.
    """
    own = ax is None
    with mpl.rc_context(_RC):
        fig, ax = _axes(ax)
        df = _restrict(_clean(curves, need=_CURVE_COLUMNS), nature=nature)
        obs = df.loc[df["metric"] == metric] if not df.empty else df
        if obs.empty:
            _no_data(ax, f"{metric} curves" + (f" for {nature}" if nature else ""))
            return fig
        bound, scale, logy = _CURVE_BOUNDS.get(metric, (f"{metric}_bound", 1.0, False))
        bounds = df.loc[df["metric"] == bound]
        stats = mean_ci(obs, ["forecaster", "t"])
        for name in _order(stats["forecaster"].unique()):
            _draw_mean(ax, stats.loc[stats["forecaster"] == name], name, "t", log=logy)
            b = bounds.loc[bounds["forecaster"] == name]
            if not b.empty:
                _draw_bound(ax, b, name, "t", scale=scale)
        if not logy:
            ax.axhline(0.0, color="0.7", linewidth=0.5, zorder=0)
        _rounds_axes(ax, METRIC_LABELS.get(metric, metric), nature, logy)
        extra = []
        if not bounds.empty:
            extra.append((Line2D([], [], color=_BOUND_COLOR, linestyle="--", linewidth=0.9), "certified bound"))
        _legend(ax, extra, outside=own, loc="best")
    return fig


# ------------------------------------------------------------------------------ reliability
def pool_reliability(reliability: pd.DataFrame) -> pd.DataFrame:
    """Pool reliability bins across seeds: counts add, means are count-weighted (NaN bins ignored).

    Examples
    --------
    >>> rel = pd.DataFrame({"bin": [0, 0], "lo": 0.0, "hi": 0.5, "count": [1, 3],
    ...                     "mean_p": [0.2, 0.4], "mean_y": [0.0, 1.0]})
    >>> pool_reliability(rel)[["count", "mean_p", "mean_y"]].round(3).values.tolist()
    [[4.0, 0.35, 0.75]]
    """
    return _pool(reliability)


def _pool(reliability: pd.DataFrame | None, by: Sequence[str] = ()) -> pd.DataFrame:
    """:func:`pool_reliability` per group of ``by`` (e.g. nature and forecaster) in one groupby."""
    by = list(by)
    df = _clean(reliability, "count", (*_BIN_COLUMNS, *by))
    if not df.empty:
        mp, my = (pd.to_numeric(df[c], errors="coerce").astype(float) for c in ("mean_p", "mean_y"))
        df = df.loc[(df["count"] > 0) & np.isfinite(mp) & np.isfinite(my)]
    if df.empty:
        return pd.DataFrame(columns=[*by, "bin", "lo", "hi", "count", "mean_p", "mean_y"])
    df = df.assign(wp=df["count"] * df["mean_p"], wy=df["count"] * df["mean_y"])
    g = df.groupby([*by, "bin"]).agg(lo=("lo", "min"), hi=("hi", "max"), count=("count", "sum"),
                                     wp=("wp", "sum"), wy=("wy", "sum")).reset_index()
    g["count"] = g["count"].astype(float)
    g["mean_p"], g["mean_y"] = g["wp"] / g["count"], g["wy"] / g["count"]
    return g.drop(columns=["wp", "wy"])


#: Height, in the reliability panel's data units, of the tallest count bar: the bars fill the
#: lower quarter of the panel, under the points (the counts share the panel's axes).
_COUNT_TOP = 0.28
_UNIT_TICKS = ([0.0, 0.5, 1.0], ["0", "0.5", "1"])


def _reliability_frame(ax: Axes, title: str) -> None:
    """Unit square with the diagonal (perfect calibration), three ticks per axis, a title."""
    ax.plot([0, 1], [0, 1], color="0.6", linewidth=0.6, linestyle=":", zorder=1)
    ax.set_xlim(-0.03, 1.03)
    ax.set_ylim(-0.03, 1.03)
    ax.set_xticks(*_UNIT_TICKS)
    ax.set_yticks(*_UNIT_TICKS)
    ax.set_box_aspect(1)
    ax.set_xlabel("mean forecast")
    ax.set_ylabel("observed frequency")
    ax.set_title(title, fontsize=7)


def _draw_reliability(ax: Axes, pooled: pd.DataFrame, forecaster: str, count_axis: bool) -> None:
    """Count bars (same axes, tallest = ``_COUNT_TOP``), then the pooled bins as one line and one scatter."""
    style = forecaster_style(forecaster)
    count = pooled["count"].to_numpy(float)
    lo, hi = pooled["lo"].to_numpy(float), pooled["hi"].to_numpy(float)
    top = count.max()
    centers = (lo + hi) / 2
    x0, x1 = centers - 0.45 * (hi - lo), centers + 0.45 * (hi - lo)
    h = _COUNT_TOP * count / top
    bars = np.stack([np.column_stack([x0, 0 * h]), np.column_stack([x0, h]), np.column_stack([x1, h]),
                     np.column_stack([x1, 0 * h])], axis=1)  # one collection: one draw call for all bars
    ax.add_collection(PolyCollection(bars, facecolors=style["color"], alpha=0.15, linewidths=0, zorder=0.5,
                                     gid="counts"), autolim=False)
    if count_axis:  # a count scale on the right, 0 at the x axis, ticks up to the tallest bar
        scale = top / _COUNT_TOP
        sec = ax.secondary_yaxis("right", functions=(lambda y: y * scale, lambda c: c / scale))
        sec.set_ylabel("count", color="0.4", loc="bottom")
        sec.tick_params(axis="y", colors="0.4", labelsize=6)
        ticks = ticker.MaxNLocator(3, integer=True).tick_values(0, top)
        sec.set_yticks([v for v in ticks if 0 <= v <= top])
        sec.spines["right"].set_bounds(0, _COUNT_TOP)
        sec.set_gid("count_axis")
    else:  # the tallest bar carries its count
        k = int(np.argmax(count))
        ax.text(centers[k], _COUNT_TOP + 0.015, f"{round(top):,}", ha="left" if centers[k] < 0.5 else "right",
                va="bottom", fontsize=5.5, color="0.35", gid="count_max")
    size = 60 * count / top
    mp, my = pooled["mean_p"].to_numpy(float), pooled["mean_y"].to_numpy(float)
    ax.plot(mp, my, color=style["color"], linewidth=0.6, alpha=0.7, zorder=2)
    # a white edge sets filled markers apart; "+", "x", "1" are drawn by their edge, in the color
    edge = {"edgecolors": "white", "linewidths": 0.3} if MarkerStyle(style["marker"]).is_filled() else {
        "linewidths": 0.8}
    ax.scatter(mp, my, s=np.maximum(size, 2), color=style["color"], marker=style["marker"], zorder=3,
               clip_on=False, gid="bins", **edge)


def reliability_diagram(reliability: pd.DataFrame, forecaster: str, nature: str, ax: Axes | None = None,
                        count_axis: bool = True) -> Figure:
    """Mean forecast against observed frequency per bin, pooled across seeds.

    Marker area is proportional to the bin's count; the diagonal is perfect calibration;
    light bars along the x axis (in the same axes, the tallest a quarter of the panel high)
    show how many forecasts fell in each bin.

    Parameters
    ----------
    reliability : table of bins (forecaster, nature, seed, bin, lo, hi, count, mean_p, mean_y).
    forecaster, nature : the matchup to draw (all its seeds are pooled).
    ax : axes to draw on; a new single-column figure by default.
    count_axis : a count scale on the right of the panel; without it (in grids, where a scale
        would crowd the panels) the tallest bar is labelled with its count instead.
    """
    with mpl.rc_context(_RC):
        fig, ax = _axes(ax, (FIGSIZE[1] + 0.4, FIGSIZE[1]))
        _reliability_frame(ax, f"{forecaster} vs {nature}".replace("_", " "))
        df = reliability if reliability is not None else pd.DataFrame()
        df = _restrict(df, forecaster=forecaster, nature=nature)
        pooled = pool_reliability(df) if not df.empty else df
        if pooled.empty:
            ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes, color="0.4")
            return fig
        _draw_reliability(ax, pooled, forecaster, count_axis)
    return fig


def reliability_grid(reliability: pd.DataFrame, nature: str, forecasters: Sequence[str] | None = None,
                     ncols: int = 3) -> Figure:
    """One reliability panel per forecaster for one nature (a figure for the full text width).

    Panels share the unit square: tick labels only on the outer panels; each panel's count
    bars are scaled to its own tallest bar, which is labelled with its count."""
    df = _restrict(reliability if reliability is not None else pd.DataFrame(), nature=nature)
    names = list(forecasters) if forecasters is not None else _order(df["forecaster"].unique() if not df.empty
                                                                     else [])
    pooled = _pool(df, ["forecaster"])
    pooled = {str(name): part for name, part in pooled.groupby("forecaster", sort=False)}
    return _reliability_grid(pooled, nature, names, ncols)


#: The grid of reliability panels, in inches: panel side, gaps between panels (room for a
#: title above each), and margins (tick labels and axis labels left and below, the title above).
_GRID = {"side": 1.75, "wgap": 0.12, "hgap": 0.28, "left": 0.5, "right": 0.12, "bottom": 0.42, "top": 0.26,
         "title_line": 0.15}


def _reliability_grid(pooled: dict[str, pd.DataFrame], nature: str, names: list[str], ncols: int) -> Figure:
    n = max(len(names), 1)
    ncols = min(ncols, n)
    nrows = math.ceil(n / ncols)
    g = _GRID
    width = g["left"] + ncols * g["side"] + (ncols - 1) * g["wgap"] + g["right"]
    title = textwrap.wrap(f"reliability: {nature.replace('_', ' ')} (marker area and bars: count per bin; "
                          "tallest bar labelled)", width=int(width / 0.065))  # 8 pt characters per line
    top = g["top"] + g["title_line"] * len(title)
    height = g["bottom"] + nrows * g["side"] + (nrows - 1) * g["hgap"] + top
    with mpl.rc_context(_RC):
        # every panel has the same square and the same three ticks: the layout is fixed, no
        # layout engine measures the panels' labels at each draw
        fig = _new_figure((width, height), layout=None)
        axes = [fig.add_axes(((g["left"] + (i % ncols) * (g["side"] + g["wgap"])) / width,
                              (height - top - (i // ncols) * (g["side"] + g["hgap"]) - g["side"]) / height,
                              g["side"] / width, g["side"] / height)) for i in range(n)]
        for i, a in enumerate(axes):
            if i >= len(names):
                continue
            name = names[i]
            _reliability_frame(a, str(name).replace("_", " "))
            p = pooled.get(str(name))
            if p is None or p.empty:
                a.text(0.5, 0.5, "no data", ha="center", va="center", transform=a.transAxes, color="0.4")
            else:
                _draw_reliability(a, p, name, count_axis=False)
            if i % ncols:
                a.set_ylabel("")
                a.tick_params(labelleft=False)
            if i < len(names) - ncols:
                a.set_xlabel("")
                a.tick_params(labelbottom=False)
        if not names:
            _no_data(axes[0], f"reliability for {nature}")
        fig.suptitle("\n".join(title), fontsize=8, y=1 - 0.06 / height, va="top")
    return fig


# ----------------------------------------------------------------------------- leaderboard
def _last_T(summary: pd.DataFrame) -> pd.DataFrame:
    """The rows of the largest horizon T: tables and heatmaps compare forecasters at one T."""
    if "T" in summary and summary["T"].nunique() > 1:
        return summary.loc[summary["T"] == summary["T"].max()]
    return summary


def _fmt(v: float, digits: int = 3) -> str:
    """``digits`` significant digits; scientific notation below 1e-3 and from 1e4."""
    if not np.isfinite(v):
        return "--"
    return f"{v:.{digits - 1}e}" if v != 0 and (abs(v) < 1e-3 or abs(v) >= 1e4) else f"{v:.{digits}g}"


def _pm(mean: float, half: float, pm: str = " $\\pm$ ") -> str:
    """The mean, then the half-width of its interval (two digits) where there is one."""
    return _fmt(mean) + (pm + _fmt(half, 2) if np.isfinite(half) else "")


def leaderboard_heatmap(summary: pd.DataFrame, metric: str = "smce_over_T", ax: Axes | None = None) -> Figure:
    """Forecaster x nature heatmap of the mean of ``metric`` over seeds (:func:`arena.aggregate.seed_stats`).

    Cells are annotated with their value; the colormap is viridis (log-scaled when the values
    span more than two decades). Forfeited matchups are left out of the mean; a cell with a
    forfeit is hatched and marked "F" (only "F" when every seed forfeited). With several
    horizons T, the largest.
    """
    with mpl.rc_context(_RC):
        if summary is None or any(c not in summary for c in ("forecaster", "nature", metric)) or \
                _clean(summary, metric).empty:
            fig, ax = _axes(ax)
            _no_data(ax, metric)
            return fig
        st = seed_stats(_last_T(summary), [metric]).groupby(["forecaster", "nature"])
        means = st["mean"].mean().unstack("nature")
        forfeits = pd.DataFrame({"any": st["n_forfeit"].max() > 0, "all": st["n"].max() == 0})
        rows = _order(summary["forecaster"].unique())
        cols = sorted(summary["nature"].astype(str).unique())
        grid = means.reindex(index=rows, columns=cols)
        values = grid.to_numpy(float)
        size = (max(FIGSIZE[0], 1.4 + 0.55 * len(cols)), max(1.6, 1.0 + 0.22 * len(rows)))
        fig, ax = _axes(ax, size)
        finite = values[np.isfinite(values)]
        if finite.size and finite.min() > 0 and finite.max() / finite.min() > 100:
            norm = LogNorm(finite.min(), finite.max())
        else:
            norm = Normalize(finite.min(), finite.max()) if finite.size else Normalize(0, 1)
        cmap = mpl.colormaps["viridis"].with_extremes(bad="0.85")
        # no resampling: one flat cell per value (in PDF the 11 x 9 pixels themselves)
        im = ax.imshow(np.ma.masked_invalid(values), cmap=cmap, norm=norm, aspect="auto", interpolation="none")
        for i, fc in enumerate(rows):
            for j, nat in enumerate(cols):
                v = values[i, j]
                any_f, all_f = forfeits.loc[(fc, nat)] if (fc, nat) in forfeits.index else (False, False)
                if any_f:
                    ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, hatch="///", edgecolor="0.3",
                                           linewidth=0, gid=f"forfeit:{fc}:{nat}"))
                if (fc, nat) not in forfeits.index:
                    continue
                text = "F" if all_f else _fmt(v) + (" F" if any_f else "")
                light = np.isfinite(v) and np.mean(cmap(norm(v))[:3]) < 0.5
                ax.text(j, i, text, ha="center", va="center", fontsize=6, color="white" if light else "black",
                        gid=f"value:{fc}:{nat}", in_layout=False)  # inside its cell: nothing to lay out
        ax.set_xticks(range(len(cols)), [c.replace("_", " ") for c in cols], rotation=35, ha="right",
                      rotation_mode="anchor")
        ax.set_yticks(range(len(rows)), rows)
        ax.tick_params(length=0)
        for s in ax.spines.values():
            s.set_visible(False)
        cb = fig.colorbar(im, ax=ax, fraction=0.06, pad=0.02)
        cb.set_label(METRIC_LABELS.get(metric, metric) + " (mean over seeds)", fontsize=7)
        cb.ax.tick_params(labelsize=6)
    return fig


# ------------------------------------------------------------------------------------ table
def _tex(s: str) -> str:
    return re.sub(r"([_&%#$])", r"\\\1", str(s))


def latex_table(summary: pd.DataFrame, metrics: Sequence[str] = ("smce_over_T", "brier", "bias"),
                by_nature: bool = False, caption: str | None = None, label: str | None = None) -> str:
    """A booktabs table of one game's forecasters, the best entry of each column in bold.

    An entry is the forecaster's mean over natures of its seed means
    (:func:`arena.aggregate.leaderboard`) or, ``by_nature``, its mean over seeds on each nature
    (:func:`arena.aggregate.seed_stats`), then ``$\\pm$`` the half-width of the 95% interval
    where there are several seeds. Bold: the best in the metric's direction
    (:func:`arena.aggregate.direction`; none for a metric that is not ranked), and every
    entry that ties with it at the shown precision. Forfeited matchups are left out;
    metrics absent from ``summary`` are skipped; with several horizons T, the largest.

    Parameters
    ----------
    summary : one row per matchup (forecaster, nature, seed, metrics..., status) of one game.
    metrics : columns of the table.
    by_nature : one row per forecaster x nature instead (best per nature in bold).
    caption, label : wrap the tabular in a ``table`` environment with these.

    Examples
    --------
    >>> s = pd.DataFrame({"forecaster": ["a", "a", "b"], "nature": "n", "brier": [0.2, 0.4, 0.25]})
    >>> print(latex_table(s, ["brier"]))  # doctest: +NORMALIZE_WHITESPACE
    \\begin{tabular}{lr}
    \\toprule
    forecaster & Brier \\\\
    \\midrule
    a & 0.3 $\\pm$ 1.3 \\\\
    b & \\textbf{0.25} \\\\
    \\bottomrule
    \\end{tabular}
    """
    metrics = [m for m in metrics if summary is not None and m in summary]
    keys = ["nature", "forecaster"] if by_nature else ["forecaster"]
    head = [*("forecaster", "nature")[: len(keys)], *(METRIC_LABELS.get(m, m) for m in metrics)]
    lines = [f"\\begin{{tabular}}{{{'l' * len(keys)}{'r' * len(metrics)}}}", "\\toprule",
             " & ".join(_tex(h) if "$" not in h else h for h in head) + " \\\\", "\\midrule"]
    stats = pd.DataFrame()
    if metrics and not summary.empty:
        df = _last_T(summary)
        stats = seed_stats(df, metrics) if by_nature else leaderboard(df, metrics)
        stats = stats.loc[np.isfinite(stats["mean"])]
    if not stats.empty:
        table = stats.set_index([*keys, "metric"])[["mean", "half"]].unstack("metric")
        groups = table.groupby(level="nature", sort=True) if by_nature else [(None, table)]
        for g, (_, part) in enumerate(groups):
            if by_nature and g:
                lines.append("\\midrule")
            best = {m: _best(part["mean"][m], m) if m in part["mean"] else np.nan for m in metrics}
            for idx in _sorted_index(part, by_nature):
                row = [_tex(idx[1]), _tex(idx[0])] if by_nature else [_tex(idx)]
                for m in metrics:
                    v, h = (part.loc[idx, (c, m)] if m in part[c] else np.nan for c in ("mean", "half"))
                    shown = _pm(v, h)
                    bold = np.isfinite(v) and np.isfinite(best[m]) and _fmt(v) == _fmt(best[m])
                    row.append(f"\\textbf{{{shown}}}" if bold else shown)
                lines.append(" & ".join(row) + " \\\\")
    lines += ["\\bottomrule", "\\end{tabular}"]
    out = "\n".join(lines)
    if caption is not None or label is not None:
        extra = ([f"\\caption{{{caption}}}"] if caption else []) + ([f"\\label{{{label}}}"] if label else [])
        out = "\n".join(["\\begin{table}", "\\centering", out, *extra, "\\end{table}"])
    return out


def _best(values: pd.Series, metric: str) -> float:
    """The best of ``values`` in the metric's direction (NaN when it is not ranked)."""
    way = direction(metric)
    return values.min() if way == "min" else values.max() if way == "max" else np.nan


def _sorted_index(part: pd.DataFrame, by_nature: bool) -> list:
    """Index entries of ``part`` in the forecasters' fixed order."""
    names = _order(part.index.get_level_values("forecaster"))
    if not by_nature:
        return names
    nature = part.index.get_level_values("nature")[0]
    return [(nature, n) for n in names]


# ----------------------------------------------------------------------------------- report
def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", str(name))


#: fontTools, which subsets the TrueType fonts embedded in PDFs, logs every table it prunes at INFO
#: level; under Hydra's logging that floods the console.
logging.getLogger("fontTools").setLevel(logging.WARNING)


def _save(fig: Figure, stem: Path, formats: Sequence[str]) -> list[Path]:
    paths = []
    engine = fig.get_layout_engine()
    if engine is not None and formats:
        # lay the figure out once for every format, then draw it once per format: a layout
        # engine left on would lay it out, and so draw it once more, in every savefig; at the
        # PNG's resolution, where hinted text is a little wider than at the default 100 dpi
        fig.set_dpi(DPI)
        engine.execute(fig)
        fig.set_layout_engine("none")
    for ext in formats:
        path = stem.with_name(f"{stem.name}.{ext}")
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        os.close(fd)
        try:
            # no creation date in PDFs: the same tables give the same bytes, in any process
            meta = {"CreationDate": None} if ext == "pdf" else None
            with mpl.rc_context(_SAVE_RC):
                fig.savefig(tmp, format=ext, dpi=DPI, metadata=meta)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        paths.append(path)
    return paths


#: The figures :func:`report` draws, by name: a job names its figure, so that it can travel
#: to a worker process.
_FIGURES = {
    "smce_vs_T": lambda curves, nature: smce_vs_T(curves, nature=nature),
    "regret_linear": lambda curves, nature: regret_curves(curves, "regret_linear", nature=nature),
    "reliability": lambda pooled, nature, names: _reliability_grid(pooled, nature, names, 3),
    "leaderboard": lambda summary, metric: leaderboard_heatmap(summary, metric),
    "bias": lambda curves, nature: regret_curves(curves, "bias", nature=nature),
    "certificates": lambda summary: certificate_margins(summary),
}
#: rcParams that never travel to a worker process.
_LOCAL_RC = ("backend", "backend_fallback", "interactive")


def _draw_job(job: tuple) -> list[Path]:
    """Draw one figure and save it in every format: ``(figure, args, stem, formats, rc)``."""
    kind, args, stem, formats, rc = job
    with mpl.rc_context(rc):  # the rcParams of the process that made the job
        return _save(_FIGURES[kind](*args), stem, formats)


_AGGREGATES = ("summary", "curves", "reliability")


def _read_tables(out_dir: Path) -> dict[str, pd.DataFrame]:
    """The aggregated Parquet files of ``out_dir`` when they are up to date (written after the last
    change to ``matchups/``, the folder included so that a file added or removed counts), else
    :func:`arena.results.collect` of the matchups of the directory's tournament plan (all its
    matchups when it has none). Reading three files instead of one per matchup saves seconds
    when :func:`arena.cli.finish` has just aggregated the directory."""
    from arena.results import collect, planned

    try:
        written = min((out_dir / f"{name}.parquet").stat().st_mtime_ns for name in _AGGREGATES)
        folder = out_dir / "matchups"
        changed = max(folder.stat().st_mtime_ns, *(f.stat().st_mtime_ns for f in folder.iterdir()))
        if written > changed:  # strictly later: on a file system with coarse times, read it all again
            return {name: pd.read_parquet(out_dir / f"{name}.parquet") for name in _AGGREGATES}
    except (OSError, KeyError, ValueError):  # no aggregates, or unreadable ones
        pass
    return collect(out_dir, planned(out_dir))


#: A worker process is worth starting only for this many figures or more: it takes one to two
#: seconds to import matplotlib and pandas, the time this process takes to draw a few figures.
_FIGURES_PER_WORKER = 6
#: What a worker process runs: read ``sys.path``, load this file as ``arena.plots`` under an
#: empty ``arena`` package (the figures need matplotlib, pandas and :mod:`arena.aggregate`, not
#: the game engine that ``arena/__init__.py`` imports, which takes longer to import than they
#: do), then serve jobs (:func:`_serve`).
_WORKER = """import importlib.util, os, pickle, sys, types
sys.path[:] = pickle.load(sys.stdin.buffer)
package = sys.modules["arena"] = types.ModuleType("arena")
package.__path__ = [os.path.dirname(sys.argv[1])]
spec = importlib.util.spec_from_file_location("arena.plots", sys.argv[1])
module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
module._serve()
"""


def _processes(n_jobs: int) -> int:
    """How many processes draw, this one included: ``ARENA_PLOT_JOBS`` if set (1 = this one
    only), else one per CPU this process may use, but never fewer than
    ``_FIGURES_PER_WORKER`` figures per process."""
    env = os.environ.get("ARENA_PLOT_JOBS", "").strip()
    try:
        n = int(env) if env else 0
    except ValueError:
        n = 0
    if n <= 0:
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        n = min(cpus, n_jobs // _FIGURES_PER_WORKER)
    return max(1, min(n, n_jobs))


def _serve() -> None:
    """The loop of a worker process: a pickled job in on stdin, ``(ok, result)`` out on stdout."""
    import pickle
    import sys
    import traceback

    jobs = sys.stdin.buffer
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # a stray print must not corrupt the replies
    sys.stdout = sys.stderr
    while True:
        try:
            job = pickle.load(jobs)
        except EOFError:
            return
        try:
            reply = (True, _draw_job(job))
        except Exception as exc:  # noqa: BLE001  (raised again by the process that sent the job)
            text = traceback.format_exc()
            try:
                reply = (False, (exc, text))
                pickle.dumps(reply)
            except Exception:  # noqa: BLE001  (an exception that does not pickle)
                reply = (False, (RuntimeError(f"{type(exc).__name__}: {exc}"), text))
        pickle.dump(reply, out)
        out.flush()


def _run_jobs(jobs: list[tuple]) -> list[list[Path]]:
    """Draw every job; the results come in the jobs' order, whichever process drew them.

    This process draws jobs from the end of the list at once; each worker process (a fresh
    ``python`` running :func:`_serve`, started by a thread of this one) takes jobs from the
    front as soon as it is ready; they meet in the middle. Workers are plain subprocesses,
    not :mod:`multiprocessing` ones: no fork of a process that may run threads, and no
    second run of the caller's ``__main__``. A worker that cannot start or that dies leaves
    its job to this process; an error in a figure is raised here, whoever drew it."""
    import pickle
    import subprocess
    import sys
    import threading

    workers = _processes(len(jobs)) - 1
    if workers < 1 or not sys.executable or getattr(sys, "frozen", False):  # a frozen app is no python
        return [_draw_job(job) for job in jobs]
    results: list[list[Path] | None] = [None] * len(jobs)
    lock = threading.Lock()
    span = [0, len(jobs)]  # jobs span[0]:span[1] are not taken yet
    left: list[int] = []  # jobs a worker took but could not draw
    errors: list[BaseException] = []

    def take(front: bool) -> int | None:
        with lock:
            if errors or span[0] >= span[1]:
                return None
            if front:
                span[0] += 1
                return span[0] - 1
            span[1] -= 1
            return span[1]

    def feed() -> None:
        i = None
        try:
            proc = subprocess.Popen([sys.executable, "-c", _WORKER, str(Path(__file__).resolve())],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        except OSError:
            return
        try:
            pickle.dump([p for p in sys.path if isinstance(p, str)], proc.stdin)
            while (i := take(front=True)) is not None:
                pickle.dump(jobs[i], proc.stdin)
                proc.stdin.flush()
                ok, value = pickle.load(proc.stdout)
                if ok:
                    results[i] = value
                else:
                    exc, text = value
                    exc.__cause__ = RuntimeError(f"in a plotting worker process:\n{text}")
                    with lock:
                        errors.append(exc)
                i = None
        except Exception:  # noqa: BLE001  (the worker died, or the job did not pickle: the job is ours)
            if i is not None:
                with lock:
                    left.append(i)
        finally:
            try:
                proc.stdin.close()
            except OSError:
                pass
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    feeders = [threading.Thread(target=feed, name=f"arena-plots-{k}", daemon=True) for k in range(workers)]
    for t in feeders:
        t.start()
    try:
        while (i := take(front=False)) is not None:
            results[i] = _draw_job(jobs[i])
    finally:
        with lock:  # whatever happened here, the workers take no more jobs
            span[0] = span[1]
        for t in feeders:
            t.join()
    if errors:
        raise errors[0]
    for i in sorted(left):
        results[i] = _draw_job(jobs[i])
    return results  # type: ignore[return-value]


def report(out_dir: Path | str, tables: dict[str, pd.DataFrame] | None = None,
           leaderboard_metrics: Sequence[str] = ("smce_over_T", "brier", "bias"),
           formats: Sequence[str] = ("pdf", "png")) -> list[Path]:
    """Draw every figure of a results directory into ``out_dir/figures/``, write a LaTeX table per
    game and ``out_dir/summary.md``, and return the paths.

    Per game present (each in ``figures/<game>/`` when the directory holds several games):

    - binary forecasts (any game whose curves have them), per nature: ``smce_vs_T__<nature>``,
      ``regret_linear__<nature>``, ``bias__<nature>`` and ``reliability__<nature>`` (one panel
      per forecaster); ``leaderboard__<metric>`` per metric of ``leaderboard_metrics``;
    - quantile game: ``rolling_coverage__<nature>``, ``coverage_error__<nature>``,
      ``group_coverage__<nature>`` (group natures), ``coverage_vs_L`` (Lipschitz-CDF natures) and
      leaderboards of :data:`QUANTILE_METRICS`;
    - experts game: ``regret_experts__<nature>`` and ``expert_weights__<nature>``; decision game:
      ``regret_decision__<nature>``; leaderboards of :data:`EXPERTS_METRICS` / :data:`DECISION_METRICS`;
    - ``certificates``: every certificate's value over its bound (:func:`certificate_margins`);
    - ``table.tex``: :func:`latex_table` of the game's :data:`HEADLINE_METRICS`.

    Each figure comes as PDF (fonts embedded as TrueType) and PNG; a figure without data is
    skipped. Then ``summary.md`` (:func:`markdown_summary`). The paths come in that order,
    whatever the number of processes.

    The figures are drawn by this process and, where there is more than one CPU, by worker
    processes (one per CPU; set ``ARENA_PLOT_JOBS`` to choose the number of processes, 1 for
    none); each figure is the same whichever process draws it.

    Parameters
    ----------
    out_dir : the results directory; its tables are read with :func:`arena.results.collect`
        (or, the same tables quicker, from the ``summary``/``curves``/``reliability`` Parquet
        files that :func:`arena.results.write_tables` left there, when no matchup changed since)
        unless ``tables`` (keys ``summary``, ``curves``, ``reliability``) is given.
    leaderboard_metrics : the leaderboards of binary forecasts, and the headline metrics of a
        game without its own entry in :data:`HEADLINE_METRICS`.
    """
    out_dir = Path(out_dir)
    if tables is None:
        tables = _read_tables(out_dir)
    summary, curves, rel = (tables.get(k) for k in ("summary", "curves", "reliability"))
    summary = summary if summary is not None else pd.DataFrame()
    curves = _clean(curves, need=_CURVE_COLUMNS)
    rel = rel if rel is not None else pd.DataFrame()
    rc = {k: v for k, v in mpl.rcParams.items() if k not in _LOCAL_RC}  # the workers draw with ours
    games = sorted(summary["game"].dropna().astype(str).unique()) if "game" in summary else []
    parts = [(g, *(_of_game(df, g) for df in (summary, curves, rel))) for g in games] or [(None, summary, curves, rel)]
    fig_dir = {game: out_dir / "figures" / (game if len(parts) > 1 else "") for game, *_ in parts}
    jobs: list[tuple] = []
    for game, s, c, r in parts:
        fig_dir[game].mkdir(parents=True, exist_ok=True)
        jobs += _binary_jobs(s, c, r, fig_dir[game], formats, rc, leaderboard_metrics)
        jobs += _quantile_jobs(s, c, fig_dir[game], formats, rc)  # the quantile game's figures, if any
        jobs += _experts_jobs(s, c, fig_dir[game], formats, rc)  # the experts and decision games' figures
        if not _certificate_ratios(s).empty:
            jobs.append(("certificates", (s,), fig_dir[game] / "certificates", formats, rc))
    written: list[Path] = [path for paths in _run_jobs(jobs) for path in paths]
    for game, s, *_ in parts:
        metrics = _headline(game, s, leaderboard_metrics)
        if metrics:
            path = fig_dir[game] / "table.tex"
            n = s["seed"].nunique() if "seed" in s else 1
            path.write_text(f"% {game or 'all games'}: mean over natures of the mean over {n} seed(s), "
                            "+- the half-width of its 95% interval; best in bold (arena.plots.latex_table)\n"
                            + latex_table(s, metrics) + "\n")
            written.append(path)
    if not summary.empty:
        path = out_dir / "summary.md"
        path.write_text(markdown_summary(summary, written, out_dir, leaderboard_metrics))
        written.append(path)
    return written


def _of_game(df: pd.DataFrame, game: str) -> pd.DataFrame:
    """The rows of one game (all rows of a table without a game column)."""
    return df.loc[df["game"] == game] if df is not None and not df.empty and "game" in df else df


def _binary_jobs(summary: pd.DataFrame, curves: pd.DataFrame, rel: pd.DataFrame, fig_dir: Path,
                 formats: Sequence[str], rc: dict, metrics: Sequence[str]) -> list[tuple]:
    """The figure jobs of binary forecasts: per nature, the curves and reliability bins there are;
    leaderboards of ``metrics``."""
    natures = sorted(set().union(*(set(df["nature"].dropna().astype(str)) for df in (summary, curves, rel)
                                   if df is not None and "nature" in df)))
    pooled = _pool(rel, ["nature", "forecaster"])  # pooled over seeds once; each job gets its nature's bins
    jobs = []
    for nat in natures:
        cur = _restrict(curves, nature=nat)
        have = set(cur["metric"].unique()) if not cur.empty else set()
        for kind, metric in (("smce_vs_T", "smce"), ("regret_linear", "regret_linear"), ("bias", "bias")):
            if metric in have:
                jobs.append((kind, (cur, nat), fig_dir / f"{kind}__{_safe(nat)}", formats, rc))
        pooled_nat = _restrict(pooled, nature=nat)
        if not pooled_nat.empty:
            names = _order(_restrict(rel, nature=nat)["forecaster"].unique())
            by_name = {str(name): part for name, part in pooled_nat.groupby("forecaster", sort=False)}
            jobs.append(("reliability", (by_name, nat, names), fig_dir / f"reliability__{_safe(nat)}", formats, rc))
    for metric in metrics:
        if metric in summary and not _clean(_ok(summary), metric).empty:
            jobs.append(("leaderboard", (summary, metric), fig_dir / f"leaderboard__{_safe(metric)}", formats, rc))
    return jobs


def _headline(game: str | None, summary: pd.DataFrame, default: Sequence[str]) -> list[str]:
    """The game's headline metrics that the summary has."""
    return [m for m in HEADLINE_METRICS.get(game, default) if m in summary and summary[m].notna().any()]


# ---------------------------------------------------------------------------------- certificates
def _certificate_ratios(summary: pd.DataFrame | None) -> pd.DataFrame:
    """Long table (forecaster, nature, seed, certificate, ratio = value / bound) of the finished
    matchups' certificates that have a finite value and a positive, finite bound."""
    if summary is None or summary.empty or "forecaster" not in summary:
        return pd.DataFrame(columns=["forecaster", "certificate", "ratio"])
    ok = _ok(summary)
    frames = []
    for col in ok.columns:
        name = str(col)[5:-6] if str(col).startswith("cert.") and str(col).endswith(".value") else None
        if name is None or f"cert.{name}.bound" not in ok:
            continue
        v, b = (pd.to_numeric(ok[f"cert.{name}.{k}"], errors="coerce").astype(float) for k in ("value", "bound"))
        keep = np.isfinite(v) & np.isfinite(b) & (b > 0)
        frames.append(ok.loc[keep, [c for c in ("forecaster", "nature", "seed") if c in ok]].assign(
            certificate=name, ratio=(v / b)[keep]))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["forecaster", "certificate",
                                                                                       "ratio"])


def certificate_margins(summary: pd.DataFrame, ax: Axes | None = None) -> Figure:
    """Every certificate of every finished matchup as its observed value over its certified bound.

    One row per forecaster and certificate (labelled with the certificate; the forecaster is
    in the legend), one point per matchup (nature and seed) in the forecaster's color and
    marker; the certified bound is the dashed line at 1 (a point right of it exceeds the
    bound). Ratios below -1 (a negative regret) are drawn at -1.

    Examples
    --------
    >>> s = pd.DataFrame({"forecaster": "bit", "nature": "n", "seed": [0, 1], "cert.bit.value": [0.0, 0.5],
    ...                   "cert.bit.bound": 1.0})
    >>> [float(x) for x in certificate_margins(s).axes[0].collections[0].get_offsets()[:, 0]]
    [0.0, 0.5]
    """
    own = ax is None
    with mpl.rc_context(_RC):
        ratios = _certificate_ratios(summary)
        rows = sorted({(f, c) for f, c in zip(ratios["forecaster"], ratios["certificate"])},
                      key=lambda fc: (_order(ratios["forecaster"].unique()).index(fc[0]), fc[1]))
        fig, ax = _axes(ax, (FIGSIZE[0], 0.75 + 0.17 * max(len(rows), 1)))
        if not rows:
            _no_data(ax, "certificates")
            return fig
        for i, (name, cert) in enumerate(rows):
            part = ratios.loc[(ratios["forecaster"] == name) & (ratios["certificate"] == cert), "ratio"]
            style = forecaster_style(name)
            jitter = 0.25 * (np.arange(len(part)) % 5 - 2) / 2  # points of one row spread over its height
            first = i == 0 or rows[i - 1][0] != name
            ax.scatter(np.maximum(part.to_numpy(float), -1.0), i + jitter, s=9, color=style["color"],
                       marker=style["marker"], alpha=0.7, linewidths=0, gid=f"ratio:{name}:{cert}",
                       label=name if first else None)
            if first and i:
                ax.axhline(i - 0.5, color="0.85", linewidth=0.5, zorder=0)
        ax.axvline(1.0, color=_BOUND_COLOR, linestyle="--", linewidth=0.9, gid="bound")
        ax.axvline(0.0, color="0.8", linewidth=0.5, zorder=0)
        ax.set_yticks(range(len(rows)), [c.replace("_", " ") for _, c in rows], fontsize=6)
        ax.tick_params(axis="y", length=0)
        ax.set_ylim(len(rows) - 0.5, -0.5)
        low = ratios["ratio"].min()
        ax.set_xlim(min(-0.05, low - 0.05) if low > -1 else -1.05, max(1.1, ratios["ratio"].max() * 1.05))
        ax.set_xlabel("certificate value / certified bound")
        _legend(ax, [(Line2D([], [], color=_BOUND_COLOR, linestyle="--", linewidth=0.9), "certified bound")],
                outside=own, loc="best")
    return fig


# ---------------------------------------------------------------------------------- markdown
def _md_table(header: Sequence[str], rows: Iterable[Sequence], align: str) -> list[str]:
    """A Markdown table (``align``: one of l, r per column); '|' in a cell is escaped."""

    def cell(v) -> str:
        return str(v).replace("|", "\\|").replace("\n", " ")

    sep = ["---:" if a == "r" else "---" for a in align]
    return ["| " + " | ".join(header) + " |", "| " + " | ".join(sep) + " |",
            *("| " + " | ".join(cell(v) for v in row) + " |" for row in rows), ""]


def _md_leaderboard(board: pd.DataFrame, metric: str) -> list[str]:
    way = {"min": "lower is better", "max": "higher is better"}.get(direction(metric), "not ranked")
    rows = [(r["rank"], r["forecaster"], _pm(r["mean"], r["half"], " ± "), f"{r['mean_rank']:.2f}", r["n_natures"])
            for _, r in board.iterrows()]
    return [f"#### {METRIC_LABELS.get(metric, metric)} (`{metric}`, {way})", "",
            *_md_table(["rank", "forecaster", "mean ± 95% CI", "mean rank over natures", "natures"], rows, "rlrrr")]


def _md_paired(summary: pd.DataFrame, metric: str, best: str) -> list[str]:
    """The paired comparisons of ``best`` with every other forecaster whose interval excludes 0."""
    p = paired(summary, metric)
    p = p.loc[p["significant"] & ((p["forecaster_a"] == best) | (p["forecaster_b"] == best))]
    flip = np.where(p["forecaster_a"] == best, -1.0, 1.0)  # as other - best
    p = p.assign(other=np.where(flip < 0, p["forecaster_b"], p["forecaster_a"]), diff=flip * p["mean_diff"],
                 low=np.where(flip < 0, -p["ci_high"], p["ci_low"]), high=np.where(flip < 0, -p["ci_low"], p["ci_high"]))
    lower = direction(metric) == "min"
    rank = {n: i for i, n in enumerate(_order(p["other"]))}
    p = p.assign(order=p["other"].map(rank)).sort_values(["order", "nature"] if "nature" in p else ["order"])
    rows = [(r["other"], r.get("nature", ""), _fmt(r["diff"]), f"[{_fmt(r['low'])}, {_fmt(r['high'])}]", r["n"],
             "better" if (r["diff"] > 0) == lower else "worse") for _, r in p.iterrows()]
    head = [f"Paired with the best, `{best}` (other - best on the same seeds; the interval excludes 0):", ""]
    if not rows:
        return [*head[:-1], "none.", ""]
    return [*head, *_md_table(["forecaster", "nature", "other - best", "95% CI", "seeds", f"{best} is"], rows,
                              "llrrrl")]


def _md_certificates(summary: pd.DataFrame) -> list[str]:
    rows = []
    for col in (c for c in summary.columns if str(c).startswith("cert.") and str(c).endswith(".holds")):
        name = str(col)[5:-6]
        done = summary.loc[summary[col].notna()]
        for fc in _order(done["forecaster"].unique()):
            holds = done.loc[done["forecaster"] == fc]
            fails = holds.loc[~holds[col].astype(bool)]
            rows.append((fc, name, len(holds) - len(fails), len(fails),
                         ", ".join(sorted(fails["nature"].astype(str).unique())) if "nature" in fails else ""))
    if not rows:
        return ["No certificates.", ""]
    rows.sort(key=lambda r: (_order(summary["forecaster"].unique()).index(r[0]), r[1]))
    return _md_table(["forecaster", "certificate", "holds", "fails", "natures where it fails"], rows, "llrrl")


def _md_forfeits(summary: pd.DataFrame) -> list[str]:
    f = summary.loc[summary["status"] == "forfeit"] if "status" in summary else summary.iloc[:0]
    if f.empty:
        return ["None.", ""]
    cols = ["forecaster", "nature", "seed", "T", "forfeit_who", "forfeit_step", "forfeit_reason"]
    rows = f.reindex(columns=cols).fillna("").astype(str).itertuples(index=False)
    return _md_table(["forecaster", "nature", "seed", "T", "who", "step", "reason"], rows, "llrrlrl")


def markdown_summary(summary: pd.DataFrame, files: Sequence[Path] = (), root: Path | str | None = None,
                     leaderboard_metrics: Sequence[str] = ("smce_over_T", "brier", "bias")) -> str:
    """A Markdown summary of a results table, per game and horizon T: the leaderboard of each
    headline metric (:data:`HEADLINE_METRICS`, :func:`arena.aggregate.leaderboard`) with mean ±
    the half-width of its 95% interval, the paired comparisons with the best forecaster whose
    interval excludes 0 (:func:`arena.aggregate.paired`), the certificates' pass/fail counts and
    the forfeits; then links to ``files`` (figures as PDF and PNG, tables), relative to ``root``.

    Examples
    --------
    >>> s = pd.DataFrame({"game": "binary", "forecaster": ["a", "b"], "nature": "n", "seed": 0, "T": 10,
    ...                   "status": ["ok", "forfeit"], "forfeit_who": ["", "forecaster"], "forfeit_step": [-1, 3],
    ...                   "forfeit_reason": ["", "p = 2 out of [0, 1]"], "brier": [0.2, np.nan]})
    >>> md = markdown_summary(s)
    >>> "| 1 | a | 0.2 | 1.00 | 1 |" in md, "| b | n | 0 | 10 | forecaster | 3 | p = 2 out of [0, 1] |" in md
    (True, True)
    """
    n_forfeit = int((summary["status"] == "forfeit").sum()) if "status" in summary else 0
    lines = ["# Results summary", "",
             (f"{len(summary)} matchups ({n_forfeit} forfeited, left out of the statistics). Means are over "
              "seeds, then over natures; ± is the half-width of the 95% Student-t interval across seeds "
              "(natures fixed, seeds random; none with one seed). Paired comparisons pair runs by seed: the "
              "same outcomes from an oblivious nature, the same random numbers from an adaptive one."), ""]
    games = sorted(summary["game"].dropna().astype(str).unique()) if "game" in summary else [None]
    for game in games:
        s = _of_game(summary, game)
        metrics = _headline(game, s, leaderboard_metrics)
        board = leaderboard(s, metrics) if metrics else pd.DataFrame(columns=["T", "metric"])
        natures = s["nature"].nunique() if "nature" in s else 0
        seeds = sorted(s["seed"].unique().tolist()) if "seed" in s else "?"
        counts = f"{s['forecaster'].nunique()} forecasters, {natures} natures, seeds {seeds}."
        lines += [f"## {game or 'results'}", "", counts, ""]
        for T, b in board.groupby("T", sort=True):
            lines += [f"### T = {T}", ""]
            at_T = s.loc[s["T"] == T] if "T" in s else s
            for metric in metrics:
                bm = b.loc[b["metric"] == metric]
                if bm.empty:
                    continue
                lines += _md_leaderboard(bm, metric)
                lines += _md_paired(at_T, metric, str(bm["forecaster"].iloc[0]))
        lines += ["### Certificates", "", *_md_certificates(s), "### Forfeits", "", *_md_forfeits(s)]
    if files:
        root = Path(root) if root is not None else Path(".")
        stems: dict[Path, list[Path]] = {}
        for f in files:
            stems.setdefault(Path(f).with_suffix(""), []).append(Path(f))
        lines += ["## Files", ""]
        for stem, paths in stems.items():
            links = " · ".join(f"[{p.suffix[1:].upper()}]({_rel(p, root)})" for p in paths)
            lines.append(f"- `{_rel(stem, root)}`: {links}")
        lines.append("")
    return "\n".join(lines)


def _rel(path: Path, root: Path) -> str:
    try:
        return Path(path).relative_to(root).as_posix()
    except ValueError:
        return Path(path).as_posix()


__all__ = [
    "KNOWN_FORECASTERS",
    "MARKERS",
    "PALETTE",
    "forecaster_style",
    "latex_table",
    "leaderboard_heatmap",
    "pool_reliability",
    "regret_curves",
    "reliability_diagram",
    "reliability_grid",
    "report",
    "smce_vs_T",
]


# -------------------------------------------------------------------------- quantile game (§10)
#: Metrics of the quantile game: leaderboards and the LaTeX table.
QUANTILE_METRICS = ("coverage_error", "expected_coverage_error", "group_coverage_error_max", "pinball")
METRIC_LABELS.update({
    "coverage": "coverage", "coverage_error": "|coverage - q|", "expected_coverage_error": "E|coverage - q|",
    "group_coverage_error_max": "max group |coverage - q|", "pinball": "pinball loss",
    "expected_pinball": "expected pinball loss", "rolling_coverage": "rolling coverage",
})


def _legend_q(ax: Axes, extra: list | None = None, outside: bool = False, **kw) -> None:
    """:func:`_legend` in two columns below the axes (the quantile forecasters' names are long)."""
    if not outside:
        _legend(ax, extra, **kw)
        return
    handles, labels = ax.get_legend_handles_labels()
    for h, lab in extra or []:
        handles.append(h)
        labels.append(lab)
    if handles:
        fig = ax.figure
        w, h = fig.get_size_inches()
        fig.set_size_inches(w, h + 0.13 * math.ceil(len(handles) / 2))
        fig.legend(handles, labels, loc="outside lower center", ncol=2, frameon=False, handlelength=1.8,
                   columnspacing=0.8, borderaxespad=0.2, handletextpad=0.4)


def _target_line(ax: Axes, q: float | None) -> None:
    if q is not None and np.isfinite(q):
        ax.axhline(q, color=_BOUND_COLOR, linewidth=0.7, linestyle=":", zorder=0, gid="target")


def _quantile_level(summary: pd.DataFrame | None) -> float | None:
    if summary is None or "q" not in summary or summary["q"].dropna().empty:
        return None
    return float(summary["q"].dropna().iloc[0])


def rolling_coverage(curves: pd.DataFrame, nature: str | None = None, q: float | None = None,
                     ax: Axes | None = None) -> Figure:
    """Rolling coverage (fraction of y_t <= p_t over the referee's window) against t, per
    forecaster (mean over seeds, band: its 95% interval), with the target q dotted.

    Examples
    --------
    >>> c = pd.DataFrame({"forecaster": "aci", "seed": 0, "t": [50, 100], "metric": "rolling_coverage",
    ...                   "value": [0.88, 0.91]})
    >>> fig = rolling_coverage(c, q=0.9)
    >>> [ln.get_gid() for ln in fig.axes[0].get_lines()]
    ['mean:aci', 'target']
    """
    own = ax is None
    with mpl.rc_context(_RC):
        fig, ax = _axes(ax)
        df = _restrict(_clean(curves, need=_CURVE_COLUMNS), nature=nature)
        obs = df.loc[df["metric"] == "rolling_coverage"] if not df.empty else df
        if obs.empty:
            _no_data(ax, "rolling coverage" + (f" for {nature}" if nature else ""))
            return fig
        stats = mean_ci(obs, ["forecaster", "t"])
        for name in _order(stats["forecaster"].unique()):
            _draw_mean(ax, stats.loc[stats["forecaster"] == name], name, "t", log=False)
        _target_line(ax, q)
        ax.set_ylim(-0.02, 1.02)
        ax.set_xlabel("round t")
        ax.set_ylabel("rolling coverage")
        if nature:
            ax.set_title(nature.replace("_", " "))
        extra = [(Line2D([], [], color=_BOUND_COLOR, linestyle=":", linewidth=0.7), f"target q = {q:g}")] \
            if q is not None else []
        _legend_q(ax, extra, outside=own, loc="lower right")
    return fig


def coverage_error_vs_T(curves: pd.DataFrame, nature: str | None = None, q: float | None = None,
                        ax: Axes | None = None) -> Figure:
    """|coverage_t - q| against t on log-log axes per forecaster (mean over seeds and band), with the
    marginal DF's certified bound max(q, 1 - q)/t dashed in its color and, in gray, the tight
    bound and the paper's printed max(q, 1 - q)/(t - 1) (dotted). A run with zero error is not
    drawn (log axes).

    Examples
    --------
    >>> c = pd.DataFrame({"forecaster": "aci", "seed": 0, "t": [10, 100], "metric": "coverage_error",
    ...                   "value": [0.1, 0.01]})
    >>> fig = coverage_error_vs_T(c, q=0.9)
    >>> sorted(ln.get_gid() for ln in fig.axes[0].get_lines())
    ['mean:aci', 'reference:marginal', 'reference:printed']
    """
    own = ax is None
    with mpl.rc_context(_RC):
        fig, ax = _axes(ax)
        df = _restrict(_clean(curves, need=_CURVE_COLUMNS), nature=nature)
        obs = df.loc[(df["metric"] == "coverage_error") & (df["t"] > 0)] if not df.empty else df
        if obs.empty:
            _no_data(ax, "coverage curves" + (f" for {nature}" if nature else ""))
            return fig
        bounds = df.loc[df["metric"] == "coverage_error_bound"]
        stats = mean_ci(obs, ["forecaster", "t"])
        for name in _order(stats["forecaster"].unique()):
            _draw_mean(ax, stats.loc[stats["forecaster"] == name], name, "t", log=True)
            b = bounds.loc[bounds["forecaster"] == name]
            if not b.empty:
                _draw_bound(ax, b, name, "t")
        extra = []
        if q is not None:
            m = max(q, 1 - q)
            t = np.geomspace(max(obs["t"].min(), 2), obs["t"].max(), 50)
            ax.plot(t, m / t, color=_BOUND_COLOR, linewidth=0.6, gid="reference:marginal")
            ax.plot(t, m / (t - 1), color=_BOUND_COLOR, linewidth=0.6, linestyle=":", gid="reference:printed")
            extra += [(Line2D([], [], color=_BOUND_COLOR, linewidth=0.6), "max(q, 1-q)/T (certified)"),
                      (Line2D([], [], color=_BOUND_COLOR, linewidth=0.6, linestyle=":"), "max(q, 1-q)/(T-1) (printed)")]
        _rounds_axes(ax, "|coverage - q|", nature)
        _legend_q(ax, extra, outside=own, loc="lower left")
    return fig


def group_coverage(summary: pd.DataFrame, nature: str, q: float | None = None, ax: Axes | None = None) -> Figure:
    """Coverage in each group of a group-structured nature (columns ``group_coverage.<j>``), one
    line per forecaster (mean over seeds, band: its 95% interval), with the target q dotted.

    Examples
    --------
    >>> s = pd.DataFrame({"forecaster": "aci", "nature": "g", "seed": [0, 1], "group_coverage.0": [0.8, 0.9],
    ...                   "group_coverage.1": [1.0, 1.0]})
    >>> fig = group_coverage(s, "g", q=0.9)
    >>> [round(float(v), 3) for v in fig.axes[0].get_lines()[0].get_ydata()]
    [0.85, 1.0]
    """
    own = ax is None
    with mpl.rc_context(_RC):
        fig, ax = _axes(ax)
        df = _restrict(_ok(summary), nature=nature) if summary is not None and "nature" in summary else None
        cols = sorted((c for c in (df.columns if df is not None else []) if str(c).startswith("group_coverage.")),
                      key=lambda c: int(str(c).rsplit(".", 1)[1]))
        if df is None or df.empty or not cols:
            _no_data(ax, f"group coverage for {nature}")
            return fig
        long = df.melt(id_vars=["forecaster"], value_vars=cols, var_name="group").dropna(subset=["value"])
        long["group"] = long["group"].str.rsplit(".", n=1).str[1].astype(int)
        stats = mean_ci(long, ["forecaster", "group"])
        for name in _order(stats["forecaster"].unique()):
            _draw_mean(ax, stats.loc[stats["forecaster"] == name], name, "group", log=False)
        _target_line(ax, q)
        ax.set_ylim(-0.02, 1.02)
        ax.xaxis.set_major_locator(ticker.MaxNLocator(integer=True))
        ax.set_xlabel("group")
        ax.set_ylabel("coverage in the group")
        ax.set_title(nature.replace("_", " "))
        _legend_q(ax, outside=own, loc="lower right")
    return fig


def _lipschitz_rows(summary: pd.DataFrame) -> pd.DataFrame:
    """Rows of Lipschitz-CDF natures with their L (from ``nature_params``)."""
    import json

    if summary is None or summary.empty or "nature_params" not in summary:
        return pd.DataFrame()
    plugin = summary["nature_plugin"] if "nature_plugin" in summary else summary["nature"]
    rows = _ok(summary.loc[plugin == "lipschitz_cdf"])
    if rows.empty:
        return rows
    L = [json.loads(p).get("L", np.nan) if isinstance(p, str) else np.nan for p in rows["nature_params"]]
    return rows.assign(L=pd.to_numeric(pd.Series(L, index=rows.index), errors="coerce")).dropna(subset=["L"])


def coverage_vs_L(summary: pd.DataFrame, metric: str = "coverage_error", ax: Axes | None = None) -> Figure:
    """``metric`` against the Lipschitz constant L of the Lipschitz-CDF natures (log x axis), one
    line per forecaster (mean over seeds and band).

    Examples
    --------
    >>> s = pd.DataFrame({"forecaster": "aci", "nature": "l", "nature_plugin": "lipschitz_cdf", "seed": 0,
    ...                   "nature_params": ['{"L": 0.1}', '{"L": 10.0}'], "coverage_error": [0.1, 0.05]})
    >>> [float(v) for v in coverage_vs_L(s).axes[0].get_lines()[0].get_xdata()]
    [0.1, 10.0]
    """
    own = ax is None
    with mpl.rc_context(_RC):
        fig, ax = _axes(ax)
        rows = _lipschitz_rows(summary)
        rows = _clean(rows, metric) if not rows.empty else rows
        if rows.empty:
            _no_data(ax, f"{metric} of Lipschitz-CDF natures")
            return fig
        stats = mean_ci(rows, ["forecaster", "L"], metric)
        for name in _order(stats["forecaster"].unique()):
            _draw_mean(ax, stats.loc[stats["forecaster"] == name], name, "L", log=False)
        ax.set_xscale("log")
        _plain_log_ticks(ax.xaxis)
        ax.set_xlabel("Lipschitz constant L of nature's CDF")
        ax.set_ylabel(METRIC_LABELS.get(metric, metric))
        _legend_q(ax, outside=own, loc="best")
    return fig


_FIGURES.update({
    "rolling_coverage": lambda curves, nature, q: rolling_coverage(curves, nature=nature, q=q),
    "coverage_error_vs_T": lambda curves, nature, q: coverage_error_vs_T(curves, nature=nature, q=q),
    "group_coverage": lambda summary, nature, q: group_coverage(summary, nature, q=q),
    "coverage_vs_L": lambda summary, metric: coverage_vs_L(summary, metric),
})


def _quantile_jobs(summary: pd.DataFrame, curves: pd.DataFrame, fig_dir: Path, formats: Sequence[str],
                   rc: dict) -> list[tuple]:
    """The figure jobs of the quantile game's matchups (none when the summary has none)."""
    if summary is None or "game" not in summary or not (summary["game"] == "quantile").any():
        return []
    summary = summary.loc[summary["game"] == "quantile"].copy()  # a copy: one block, not hundreds of columns
    q = _quantile_level(summary)
    jobs = []
    for nat in sorted(summary["nature"].dropna().astype(str).unique()):
        cur = _restrict(curves, nature=nat)
        metrics = set(cur["metric"].unique()) if not cur.empty else set()
        if "rolling_coverage" in metrics:
            jobs.append(("rolling_coverage", (cur, nat, q), fig_dir / f"rolling_coverage__{_safe(nat)}", formats, rc))
        if "coverage_error" in metrics:
            jobs.append(("coverage_error_vs_T", (cur, nat, q), fig_dir / f"coverage_error__{_safe(nat)}", formats,
                         rc))
        part = _restrict(summary, nature=nat)
        if any(str(c).startswith("group_coverage.") and part[c].notna().any() for c in part.columns):
            jobs.append(("group_coverage", (part, nat, q), fig_dir / f"group_coverage__{_safe(nat)}", formats, rc))
    if not _lipschitz_rows(summary).empty:
        jobs.append(("coverage_vs_L", (summary, "coverage_error"), fig_dir / "coverage_vs_L", formats, rc))
    for metric in QUANTILE_METRICS:
        if metric in summary and not _clean(_ok(summary), metric).empty:
            # only the natures where the metric exists (group errors need groups): a NaN cell reads "F"
            has = summary.groupby("nature")[metric].transform(lambda v: v.notna().any())
            jobs.append(("leaderboard", (summary.loc[has], metric), fig_dir / f"leaderboard__{_safe(metric)}",
                         formats, rc))
    return jobs


__all__ += ["QUANTILE_METRICS", "coverage_error_vs_T", "coverage_vs_L", "group_coverage", "rolling_coverage"]


# ------------------------------------------------------------------ experts (§9) and decision (§5) games
#: Metrics of the experts and decision games: leaderboards.
EXPERTS_METRICS = ("regret_experts_over_T", "loss")
DECISION_METRICS = ("regret_decision_expected_over_T", "decision_loss_expected")
METRIC_LABELS.update({
    "regret_experts": "regret to the best expert", "regret_experts_over_T": "regret to the best expert / T",
    "loss": "mean loss", "regret_decision": "decision regret", "regret_decision_expected": "expected decision regret",
    "regret_decision_expected_over_T": "expected decision regret / T",
    "decision_loss_expected": "expected decision loss", "excess_risk": "excess test risk",
})


def _weight_curves(curves: pd.DataFrame) -> pd.DataFrame:
    df = _clean(curves, need=_CURVE_COLUMNS)
    if df.empty:
        return df
    w = df.loc[df["metric"].astype(str).str.startswith("weight:")]
    return w.assign(expert=w["metric"].str.slice(7).astype(int)) if not w.empty else w


def expert_weights(curves: pd.DataFrame, nature: str | None = None, forecasters: Sequence[str] | None = None,
                   ncols: int = 3) -> Figure:
    """The weights each forecaster puts on the experts against t (log x), one panel per forecaster.

    Curves ``weight:<j>`` (mean over seeds, band: its 95% interval) of :mod:`arena.metrics.experts`;
    expert j is drawn in the j-th color of viridis, the same in every panel.

    Examples
    --------
    >>> c = pd.DataFrame({"forecaster": "linf_df", "seed": 0, "t": [10, 100, 10, 100],
    ...                   "metric": ["weight:0", "weight:0", "weight:1", "weight:1"], "value": [0.5, 0.9, 0.5, 0.1]})
    >>> fig = expert_weights(c)
    >>> [ln.get_gid() for ln in fig.axes[0].get_lines()]
    ['weight:linf_df:0', 'weight:linf_df:1']
    """
    with mpl.rc_context(_RC):
        w = _restrict(_weight_curves(curves), nature=nature)
        names = [n for n in _order(w["forecaster"].unique()) if forecasters is None or n in forecasters] \
            if not w.empty else []
        if not names:
            fig, ax = _axes(None)
            _no_data(ax, "expert weights" + (f" for {nature}" if nature else ""))
            return fig
        cols = min(ncols, len(names))
        rows = math.ceil(len(names) / cols)
        fig = _new_figure((FIGSIZE[0] * cols / 1.6, 1.7 * rows + 0.3))
        axes = fig.subplots(rows, cols, squeeze=False, sharex=True, sharey=True)
        n_exp = int(w["expert"].max()) + 1
        cmap = mpl.colormaps["viridis"]
        for k, name in enumerate(names):
            ax = axes[k // cols][k % cols]
            g = mean_ci(w.loc[w["forecaster"] == name], ["expert", "t"])
            for j, part in g.groupby("expert"):
                color = cmap(j / max(n_exp - 1, 1))
                ax.plot(part["t"], part["mean"], color=color, linewidth=0.9, gid=f"weight:{name}:{j}")
                if np.isfinite(part["half"]).any():
                    ax.fill_between(part["t"], part["ci_low"], part["ci_high"], where=np.isfinite(part["half"]),
                                    color=color, alpha=0.1, linewidth=0, gid=f"band:{name}:{j}")
            ax.set_xscale("log")
            _plain_log_ticks(ax.xaxis)
            ax.set_ylim(-0.02, 1.02)
            ax.set_title(name, fontsize=7)
        for k in range(len(names), rows * cols):
            axes[k // cols][k % cols].set_visible(False)
        fig.supxlabel("round t", fontsize=7)
        fig.supylabel("weight", fontsize=7)
        if nature:
            fig.suptitle(f"expert weights: {nature.replace('_', ' ')} (expert j: j-th viridis color)", fontsize=8)
    return fig


def excess_risk_vs_n(table: pd.DataFrame, ax: Axes | None = None) -> Figure:
    """Excess test risk of the online-to-batch predictor against n (log-log), per forecaster and
    comparator class (mean over seeds, band: its 95% interval); where the table has a
    ``bound`` column (log N / (λ n) for ℓ∞ DF), it is dashed in the forecaster's color.

    Parameters
    ----------
    table : rows of :func:`arena.batch.sweep` (forecaster, n, seed, excess_risk[, bound]).

    Examples
    --------
    >>> t = pd.DataFrame({"forecaster": "linf_df", "n": [10, 100, 10, 100], "seed": [0, 0, 1, 1],
    ...                   "excess_risk": [0.1, 0.01, 0.05, 0.02], "bound": [0.1, 0.01, 0.1, 0.01]})
    >>> fig = excess_risk_vs_n(t)
    >>> [round(float(v), 3) for v in fig.axes[0].get_lines()[0].get_ydata()]
    [0.075, 0.015]
    """
    own = ax is None
    with mpl.rc_context(_RC):
        fig, ax = _axes(ax)
        df = _clean(table, "excess_risk", need=("forecaster", "n"))
        if df.empty:
            _no_data(ax, "excess risk")
            return fig
        label = df["forecaster"].astype(str)
        if "comparator" in df and df["comparator"].nunique() > 1:
            label = label + " vs " + df["comparator"].astype(str)
        df = df.assign(forecaster=label, size=df["n"])  # mean_ci names its count column n
        stats = mean_ci(df, ["forecaster", "size"], "excess_risk")
        positive = bool((stats["mean"] > 0).all())
        for name in _order(stats["forecaster"].unique()):
            _draw_mean(ax, stats.loc[stats["forecaster"] == name], name, "size", log=positive)
            if "bound" in df:
                b = df.loc[(df["forecaster"] == name) & df["bound"].notna()]
                if not b.empty:
                    g = b.groupby("n")["bound"].mean()
                    ax.plot(g.index, g.to_numpy(float), color=forecaster_style(name)["color"], linestyle="--",
                            linewidth=0.9, gid=f"bound:{name}")
        ax.axhline(0.0, color="0.7", linewidth=0.5, zorder=0)
        ax.set_xscale("log")
        if positive:
            ax.set_yscale("log")
            _plain_log_ticks(ax.yaxis)
        _plain_log_ticks(ax.xaxis)
        ax.set_xlabel("training examples n")
        ax.set_ylabel("excess test risk")
        extra = [(Line2D([], [], color=_BOUND_COLOR, linestyle="--", linewidth=0.9), "log N / (λ n)")] \
            if "bound" in df and df["bound"].notna().any() else []
        _legend(ax, extra, outside=own, loc="best")
    return fig


_FIGURES.update({
    "regret_experts": lambda curves, nature: regret_curves(curves, "regret_experts", nature=nature),
    "expert_weights": lambda curves, nature: expert_weights(curves, nature=nature),
    "regret_decision": lambda curves, nature: regret_curves(curves, "regret_decision_expected", nature=nature),
})


def _experts_jobs(summary: pd.DataFrame, curves: pd.DataFrame, fig_dir: Path, formats: Sequence[str],
                  rc: dict) -> list[tuple]:
    """The figure jobs of the experts and decision games' matchups (none when the summary has none):
    per nature ``regret_experts__<nature>`` (with the certified bounds), ``expert_weights__<nature>``
    and ``regret_decision__<nature>``, and leaderboards of :data:`EXPERTS_METRICS` and
    :data:`DECISION_METRICS`."""
    if summary is None or "game" not in summary:
        return []
    jobs = []
    for game, figures, metrics in (("experts", ("regret_experts", "expert_weights"), EXPERTS_METRICS),
                                   ("decision", ("regret_decision",), DECISION_METRICS)):
        part = summary.loc[summary["game"] == game]
        if part.empty:
            continue
        for nat in sorted(part["nature"].dropna().astype(str).unique()):
            cur = _restrict(curves, nature=nat)
            have = set(cur["metric"].unique()) if not cur.empty else set()
            for kind in figures:
                needed = {"regret_experts": "regret_experts", "regret_decision": "regret_decision_expected"}.get(kind)
                if (needed in have) if needed else any(str(m).startswith("weight:") for m in have):
                    jobs.append((kind, (cur, nat), fig_dir / f"{kind}__{_safe(nat)}", formats, rc))
        for metric in metrics:
            if metric in part and not _clean(_ok(part), metric).empty:
                jobs.append(("leaderboard", (part, metric), fig_dir / f"leaderboard__{_safe(metric)}", formats, rc))
    return jobs


__all__ += ["DECISION_METRICS", "EXPERTS_METRICS", "excess_risk_vs_n", "expert_weights"]


#: The headline metrics of each game: its LaTeX table and its leaderboards in ``summary.md``
#: (a game not listed uses :func:`report`'s ``leaderboard_metrics``).
HEADLINE_METRICS = {"binary": ("smce_over_T", "brier", "bias"), "quantile": QUANTILE_METRICS,
                    "experts": EXPERTS_METRICS, "decision": (*DECISION_METRICS, "smce_over_T", "brier")}
__all__ += ["HEADLINE_METRICS", "certificate_margins", "markdown_summary"]
