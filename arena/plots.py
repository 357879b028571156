"""Tables -> matplotlib figures, nothing else.

Every function here is a pure function of the tidy tables of :mod:`arena.results`
(``summary``, ``curves``, ``reliability``); plot functions take ``ax=None`` and return the
:class:`~matplotlib.figure.Figure`. Figures are drawn on the Agg canvas without touching
pyplot's global state (no ``plt.show``), sized for a single paper column (3.4 in wide,
8 pt type), and every forecaster keeps its color and marker across figures
(:func:`forecaster_style`). Missing or NaN data never crash a plot: the figure says "no data"
and :func:`report` skips it.

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

#: Single-column figure size (inches) and the type size that goes with it.
FIGSIZE = (3.4, 2.6)
#: PNG resolution: 150 dpi keeps 7 pt text crisp at single-column width, and draws and
#: compresses in about half the time of 200 dpi.
DPI = 150
_RC = {
    "font.size": 8, "axes.titlesize": 8, "axes.labelsize": 8, "xtick.labelsize": 7, "ytick.labelsize": 7,
    "legend.fontsize": 6.5, "legend.title_fontsize": 7, "lines.linewidth": 1.2, "lines.markersize": 3.5,
    "axes.linewidth": 0.6, "xtick.major.width": 0.6, "ytick.major.width": 0.6, "pdf.fonttype": 42,
    "axes.spines.top": False, "axes.spines.right": False,
    # a fixed title height: matplotlib's automatic placement checks every axes' tick labels
    # for overlap at each draw, a large share of the drawing time of a grid of panels
    "axes.titley": 1.0,
}

#: Okabe & Ito's colorblind-safe palette (yellow left out: too light on white), then Paul Tol's
#: muted wine, teal, olive and indigo for the forecasters beyond seven.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
           "#882255", "#44AA99", "#999933", "#332288",
           # Tol's remaining colors, for the quantile game's forecasters
           "#117733", "#DDCC77", "#88CCEE", "#AA4499", "#661100", "#6699CC", "#AA4466")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "h", "*", "p", "d", "H", "8", "+", "x", "1")
#: The project's forecasters in a fixed order: each gets its own color and marker for good.
KNOWN_FORECASTERS = ("k29", "k29_rounded", "kernel_df", "linear_df", "bit", "dmm", "ogd", "running_mean",
                     "window_mean", "last_outcome", "constant",
                     # the quantile game (the last one is the tournament's label of Alg. 6 with p-bins)
                     "conditional_quantile_df", "marginal_quantile_df", "aci", "quantile_ogd", "running_quantile",
                     "window_quantile", "conditional_quantile_df_bins")

METRIC_LABELS = {
    "smce_over_T": "smCE/T", "smce_pm_over_T": "smCE$_\\pm$/T", "smce": "smCE", "smce_pm": "smCE$_\\pm$",
    "brier": "Brier", "bias": "bias", "log_loss": "log loss", "ece": "ECE", "oi_gap": "OI gap",
    "regret_linear": "regret to linear", "regret_constant": "regret to constant",
}
_BOUND_COLOR = "0.45"


# ----------------------------------------------------------------------------------------- style
def forecaster_style(name: str) -> dict[str, str]:
    """The color and marker of a forecaster, the same in every figure.

    Known forecasters take their place in :data:`KNOWN_FORECASTERS` (all distinct); any other
    name is placed by a stable hash of the name (not Python's salted ``hash``).

    Examples
    --------
    >>> forecaster_style("k29")
    {'color': '#0072B2', 'marker': 'o'}
    >>> forecaster_style("my_plugin") == forecaster_style("my_plugin")
    True
    """
    if name in KNOWN_FORECASTERS:
        i = KNOWN_FORECASTERS.index(name)
        return {"color": PALETTE[i % len(PALETTE)], "marker": MARKERS[i % len(MARKERS)]}
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


def mean_band(df: pd.DataFrame, by: Sequence[str], x: str = "t", y: str = "value") -> pd.DataFrame:
    """Mean of ``y`` per ``by`` and ``x`` across seeds with the 95% normal half-width 1.96 sd/sqrt(n).

    ``half`` is NaN where only one seed is available (no band is drawn there).

    Examples
    --------
    >>> df = pd.DataFrame({"f": "a", "t": [1, 1, 2], "value": [1.0, 3.0, 5.0]})
    >>> mean_band(df, ["f"])[["t", "mean", "n"]].values.tolist()
    [[1.0, 2.0, 2.0], [2.0, 5.0, 1.0]]
    """
    g = df.groupby([*by, x], sort=True)[y].agg(["mean", "std", "count"]).reset_index()
    g = g.rename(columns={"count": "n"})
    g["half"] = np.where(g["n"] > 1, 1.96 * g["std"] / np.sqrt(g["n"]), np.nan)
    return g


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

    Each line is the mean across seeds of smCE_t / t at the referee's checkpoints, with a
    band of mean +- 1.96 standard errors across seeds (none with a single seed). A
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
        stats = mean_band(obs, ["forecaster"])
        for name in _order(stats["forecaster"].unique()):
            _draw_mean(ax, stats.loc[stats["forecaster"] == name], name, "t", log=True)
            b = bounds.loc[bounds["forecaster"] == name]
            if not b.empty:
                _draw_bound(ax, b, name, "t", scale="x")
        t = np.geomspace(max(obs["t"].min(), 1), obs["t"].max(), 50)
        ax.plot(t, np.sqrt(8 * t / 3) / t, color=_BOUND_COLOR, linewidth=0.6, gid="reference:k29")
        ax.set_xscale("log")
        ax.set_yscale("log", nonpositive="mask")
        _plain_log_ticks(ax.xaxis)
        _plain_log_ticks(ax.yaxis)
        ax.set_xlabel("rounds T")
        ax.set_ylabel("smCE / T")
        if nature:
            ax.set_title(nature.replace("_", " "))
        extra = [(Line2D([], [], color=_BOUND_COLOR, linewidth=0.6), "K29 guarantee \u221a(8T/3) / T")]
        if not bounds.empty:
            extra.append((Line2D([], [], color=_BOUND_COLOR, linestyle="--", linewidth=0.9), "certified bound"))
        _legend(ax, extra, outside=own, loc="lower left")
    return fig


def regret_curves(curves: pd.DataFrame, metric: str = "regret_linear", nature: str | None = None,
                  ax: Axes | None = None) -> Figure:
    """Regret against T (log x axis): mean across seeds +- 1.96 standard errors per forecaster.

    Where the curves hold ``<metric>_bound`` (a forecaster certifying it), the bound is dashed
    in the forecaster's color. Regret can be negative (the comparators are norm-bounded), so
    the y axis is linear with zero marked.

    Parameters
    ----------
    curves : long table (forecaster, seed, t, metric, value[, nature]).
    metric : the regret curve to draw, e.g. ``"regret_linear"`` or ``"regret_constant"``.
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
        bounds = df.loc[df["metric"] == f"{metric}_bound"]
        stats = mean_band(obs, ["forecaster"])
        for name in _order(stats["forecaster"].unique()):
            _draw_mean(ax, stats.loc[stats["forecaster"] == name], name, "t", log=False)
            b = bounds.loc[bounds["forecaster"] == name]
            if not b.empty:
                _draw_bound(ax, b, name, "t")
        ax.axhline(0.0, color="0.7", linewidth=0.5, zorder=0)
        ax.set_xscale("log")
        _plain_log_ticks(ax.xaxis)
        ax.set_xlabel("rounds T")
        ax.set_ylabel(METRIC_LABELS.get(metric, metric))
        if nature:
            ax.set_title(nature.replace("_", " "))
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
    filled = MarkerStyle(style["marker"]).is_filled()  # a white edge would hide "+", "x", "1"
    ax.scatter(mp, my, s=np.maximum(size, 2), color=style["color"], marker=style["marker"],
               edgecolors="white" if filled else style["color"], linewidths=0.3 if filled else 0.8, zorder=3,
               clip_on=False, gid="bins")


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
def seed_means(summary: pd.DataFrame, metric: str, by: Sequence[str] = ("forecaster", "nature")) -> pd.Series:
    """Mean of ``metric`` over the finished (not forfeited) matchups of each group; NaN ignored."""
    df = _clean(_ok(summary), metric, need=by)
    if df.empty:
        return pd.Series(dtype=float)
    return df.groupby(list(by))[metric].mean()


def _fmt(v: float) -> str:
    if not np.isfinite(v):
        return "--"
    return f"{v:.2e}" if v != 0 and (abs(v) < 1e-3 or abs(v) >= 1e4) else f"{v:.3g}"


def leaderboard_heatmap(summary: pd.DataFrame, metric: str = "smce_over_T", ax: Axes | None = None) -> Figure:
    """Forecaster x nature heatmap of the mean of ``metric`` over seeds (lower is better).

    Cells are annotated with their value; the colormap is viridis (log-scaled when the values
    span more than two decades). Forfeited matchups are left out of the mean; a cell with a
    forfeit is hatched and marked "F" (only "F" when every seed forfeited).
    """
    with mpl.rc_context(_RC):
        if summary is None or any(c not in summary for c in ("forecaster", "nature", metric)) or \
                _clean(summary, metric).empty:
            fig, ax = _axes(ax)
            _no_data(ax, metric)
            return fig
        means = seed_means(summary, metric).unstack("nature") if not _ok(summary).empty else pd.DataFrame()
        forfeits = (summary.assign(f=summary.get("status", "ok") == "forfeit")
                    .groupby(["forecaster", "nature"])["f"].agg(["any", "all"]))
        rows = _order(summary["forecaster"].unique())
        cols = sorted(summary["nature"].astype(str).unique())
        grid = means.reindex(index=rows, columns=cols) if not means.empty else pd.DataFrame(
            np.nan, index=rows, columns=cols)
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
                text = "F" if all_f or not np.isfinite(v) else _fmt(v) + (" F" if any_f else "")
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
    """A booktabs table of per-forecaster means (over natures and seeds), the best of each column bold.

    Lower is better in every column; ties at the shown precision are all bold. Forfeited
    matchups are left out; metrics absent from ``summary`` are skipped.

    Parameters
    ----------
    summary : one row per matchup (forecaster, nature, seed, metrics..., status).
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
    a & 0.3 \\\\
    b & \\textbf{0.25} \\\\
    \\bottomrule
    \\end{tabular}
    """
    metrics = [m for m in metrics if summary is not None and m in summary]
    keys = ["forecaster", "nature"] if by_nature else ["forecaster"]
    ok = _ok(summary) if metrics else pd.DataFrame()
    table = pd.DataFrame({m: seed_means(ok, m, keys) for m in metrics}) if not ok.empty else pd.DataFrame()
    head = [*("forecaster", "nature")[: len(keys)], *(METRIC_LABELS.get(m, m) for m in metrics)]
    lines = [f"\\begin{{tabular}}{{{'l' * len(keys)}{'r' * len(metrics)}}}", "\\toprule",
             " & ".join(_tex(h) if "$" not in h else h for h in head) + " \\\\", "\\midrule"]
    if not table.empty:
        if by_nature:
            table = table.reset_index().set_index(["nature", "forecaster"]).sort_index()
        shown = table.apply(lambda col: col.map(_fmt))
        groups = table.groupby(level="nature", sort=True) if by_nature else [(None, table)]
        for g, (_, part) in enumerate(groups):
            if by_nature and g:
                lines.append("\\midrule")
            best = {m: part[m].min() for m in metrics}
            for idx in _sorted_index(part, by_nature):
                row = [_tex(idx[1]), _tex(idx[0])] if by_nature else [_tex(idx)]
                for m in metrics:
                    v, s = table.loc[idx, m], shown.loc[idx, m]
                    bold = np.isfinite(v) and np.isfinite(best[m]) and s == _fmt(best[m])
                    row.append(f"\\textbf{{{s}}}" if bold else s)
                lines.append(" & ".join(row) + " \\\\")
    lines += ["\\bottomrule", "\\end{tabular}"]
    out = "\n".join(lines)
    if caption is not None or label is not None:
        extra = ([f"\\caption{{{caption}}}"] if caption else []) + ([f"\\label{{{label}}}"] if label else [])
        out = "\n".join(["\\begin{table}", "\\centering", out, *extra, "\\end{table}"])
    return out


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


def _save(fig: Figure, stem: Path, formats: Sequence[str]) -> list[Path]:
    paths = []
    engine = fig.get_layout_engine()
    if engine is not None and formats:
        # lay the figure out once for every format, then draw it once per format: a layout
        # engine left on would lay it out, and so draw it once more, in every savefig
        engine.execute(fig)
        fig.set_layout_engine("none")
    for ext in formats:
        path = stem.with_name(f"{stem.name}.{ext}")
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        os.close(fd)
        try:
            # no creation date in PDFs: the same tables give the same bytes, in any process
            meta = {"CreationDate": None} if ext == "pdf" else None
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
}
#: rcParams that never travel to a worker process.
_LOCAL_RC = ("backend", "backend_fallback", "interactive")


def _draw_job(job: tuple) -> list[Path]:
    """Draw one figure and save it in every format: ``(figure, args, stem, formats, rc)``."""
    kind, args, stem, formats, rc = job
    with mpl.rc_context(rc):  # the rcParams of the process that made the job
        return _save(_FIGURES[kind](*args), stem, formats)


_AGGREGATES = {"summary": "matchups", "curves": "curves", "reliability": "reliability"}


def _read_tables(out_dir: Path) -> dict[str, pd.DataFrame]:
    """:func:`arena.results.collect`, or the aggregated Parquet files of ``out_dir`` when they
    are up to date: every one written after the last change to the per-matchup files (their
    folders included, so that a file added or removed counts) and the summary's matchups those
    of ``matchups/``. Reading three files instead of three per matchup saves seconds when
    :func:`arena.cli.finish` has just aggregated the directory."""
    from arena.results import collect

    tables = None
    try:
        written = min((out_dir / f"{name}.parquet").stat().st_mtime_ns for name in _AGGREGATES)
        changed = 0
        for part in _AGGREGATES.values():
            folder = out_dir / part
            changed = max(changed, folder.stat().st_mtime_ns, *(f.stat().st_mtime_ns for f in folder.iterdir()))
        if written > changed:  # strictly later: on a file system with coarse times, read it all again
            tables = {name: pd.read_parquet(out_dir / f"{name}.parquet") for name in _AGGREGATES}
            done = {f.stem for f in (out_dir / "matchups").glob("*.parquet")}
            if set(tables["summary"]["matchup_id"]) != done:
                tables = None
    except (OSError, KeyError, ValueError):  # no aggregates, or unreadable ones
        tables = None
    return tables if tables is not None else collect(out_dir)


#: A worker process is worth starting only for this many figures or more: it takes one to two
#: seconds to import matplotlib and pandas, the time this process takes to draw a few figures.
_FIGURES_PER_WORKER = 6
#: What a worker process runs: read ``sys.path``, load this file as a module of its own (the
#: figures need matplotlib and pandas, not the whole ``arena`` package, which takes longer to
#: import than they do), then serve jobs (:func:`_serve`).
_WORKER = """import importlib.util, pickle, sys
sys.path[:] = pickle.load(sys.stdin.buffer)
spec = importlib.util.spec_from_file_location("_arena_plots_worker", sys.argv[1])
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
    """Draw every figure of a results directory into ``out_dir/figures/`` and return the paths.

    Per nature: ``smce_vs_T__<nature>``, ``regret_linear__<nature>`` and ``reliability__<nature>``
    (one panel per forecaster); then ``leaderboard__<metric>`` per leaderboard metric, each as
    PDF and PNG, and ``table.tex``. Matchups of the quantile game add ``rolling_coverage__<nature>``,
    ``coverage_error__<nature>``, ``group_coverage__<nature>`` (group natures), ``coverage_vs_L``
    (Lipschitz-CDF natures) and leaderboards of :data:`QUANTILE_METRICS`. A figure without data is skipped.
    Matchups of the experts game add ``regret_experts__<nature>`` (certified bounds dashed) and
    ``expert_weights__<nature>``, those of the decision game ``regret_decision__<nature>``, each
    with leaderboards of :data:`EXPERTS_METRICS` / :data:`DECISION_METRICS`. The paths come in that
    order, whatever the number of processes.

    The figures are drawn by this process and, where there is more than one CPU, by worker
    processes (one per CPU; set ``ARENA_PLOT_JOBS`` to choose the number of processes, 1 for
    none); each figure is the same whichever process draws it.

    Parameters
    ----------
    out_dir : the results directory; its tables are read with :func:`arena.results.collect`
        (or, the same tables quicker, from the ``summary``/``curves``/``reliability`` Parquet
        files that :func:`arena.results.write_tables` left there, when no matchup changed since)
        unless ``tables`` (keys ``summary``, ``curves``, ``reliability``) is given.
    """
    out_dir = Path(out_dir)
    if tables is None:
        tables = _read_tables(out_dir)
    summary, curves, rel = (tables.get(k, pd.DataFrame()) for k in ("summary", "curves", "reliability"))
    summary = summary if summary is not None else pd.DataFrame()
    fig_dir = out_dir / "figures"
    fig_dir.mkdir(parents=True, exist_ok=True)
    natures = sorted(set().union(*(set(df["nature"].dropna().astype(str)) for df in (summary, curves, rel)
                                   if df is not None and "nature" in df)))
    curves = _clean(curves, need=_CURVE_COLUMNS)
    rel = rel if rel is not None else pd.DataFrame()
    # each job gets its nature's rows only, and the reliability bins pooled over seeds once
    pooled = _pool(rel, ["nature", "forecaster"])
    rc = {k: v for k, v in mpl.rcParams.items() if k not in _LOCAL_RC}  # the workers draw with ours
    jobs: list[tuple] = []
    for nat in natures:
        cur = _restrict(curves, nature=nat)
        metrics = set(cur["metric"].unique()) if not cur.empty else set()
        if "smce" in metrics:
            jobs.append(("smce_vs_T", (cur, nat), fig_dir / f"smce_vs_T__{_safe(nat)}", formats, rc))
        if "regret_linear" in metrics:
            jobs.append(("regret_linear", (cur, nat), fig_dir / f"regret_linear__{_safe(nat)}", formats, rc))
        pooled_nat = _restrict(pooled, nature=nat)
        if not pooled_nat.empty:
            names = _order(_restrict(rel, nature=nat)["forecaster"].unique())
            by_name = {str(name): part for name, part in pooled_nat.groupby("forecaster", sort=False)}
            jobs.append(("reliability", (by_name, nat, names), fig_dir / f"reliability__{_safe(nat)}", formats, rc))
    for metric in leaderboard_metrics:
        if metric in summary and not _clean(_ok(summary), metric).empty:
            jobs.append(("leaderboard", (summary, metric), fig_dir / f"leaderboard__{_safe(metric)}", formats, rc))
    jobs += _quantile_jobs(summary, curves, fig_dir, formats, rc)  # the quantile game's figures, if any
    jobs += _experts_jobs(summary, curves, fig_dir, formats, rc)  # the experts and decision games' figures
    written: list[Path] = [path for paths in _run_jobs(jobs) for path in paths]
    metrics = [m for m in leaderboard_metrics if m in summary] or [m for m in QUANTILE_METRICS if m in summary]
    if metrics:
        path = fig_dir / "table.tex"
        path.write_text(latex_table(summary, metrics) + "\n")
        written.append(path)
    return written


__all__ = [
    "KNOWN_FORECASTERS",
    "MARKERS",
    "PALETTE",
    "forecaster_style",
    "latex_table",
    "leaderboard_heatmap",
    "mean_band",
    "pool_reliability",
    "regret_curves",
    "reliability_diagram",
    "reliability_grid",
    "report",
    "seed_means",
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
    forecaster (mean over seeds, band +- 1.96 standard errors), with the target q dotted.

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
        stats = mean_band(obs, ["forecaster"])
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
        stats = mean_band(obs, ["forecaster"])
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
        ax.set_xscale("log")
        ax.set_yscale("log", nonpositive="mask")
        _plain_log_ticks(ax.xaxis)
        _plain_log_ticks(ax.yaxis)
        ax.set_xlabel("rounds T")
        ax.set_ylabel("|coverage - q|")
        if nature:
            ax.set_title(nature.replace("_", " "))
        _legend_q(ax, extra, outside=own, loc="lower left")
    return fig


def group_coverage(summary: pd.DataFrame, nature: str, q: float | None = None, ax: Axes | None = None) -> Figure:
    """Coverage in each group of a group-structured nature (columns ``group_coverage.<j>``), one
    line per forecaster (mean over seeds), with the target q dotted.

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
        groups = [int(str(c).rsplit(".", 1)[1]) for c in cols]
        means = df.groupby("forecaster")[cols].mean()
        for name in _order(means.index):
            style = forecaster_style(name)
            ax.plot(groups, means.loc[name].to_numpy(float), color=style["color"], marker=style["marker"],
                    label=name, gid=f"mean:{name}")
        _target_line(ax, q)
        ax.set_ylim(-0.02, 1.02)
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
        stats = mean_band(rows, ["forecaster"], x="L", y=metric)
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

    Curves ``weight:<j>`` (mean over seeds) of :mod:`arena.metrics.experts`; expert j is drawn
    in the j-th color of viridis, the same in every panel.

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
            g = w.loc[w["forecaster"] == name].groupby(["expert", "t"])["value"].mean().reset_index()
            for j, part in g.groupby("expert"):
                ax.plot(part["t"], part["value"], color=cmap(j / max(n_exp - 1, 1)), linewidth=0.9,
                        gid=f"weight:{name}:{j}")
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
    comparator class (mean over seeds, band +- 1.96 standard errors); where the table has a
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
        df = df.assign(forecaster=label, size=df["n"])  # mean_band names its count column n
        stats = mean_band(df, ["forecaster"], x="size", y="excess_risk")
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
