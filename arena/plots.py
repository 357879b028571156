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
from collections.abc import Iterable, Sequence
from pathlib import Path

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib import ticker
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import LogNorm, Normalize
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle

#: Single-column figure size (inches) and the type size that goes with it.
FIGSIZE = (3.4, 2.6)
DPI = 200
_RC = {
    "font.size": 8, "axes.titlesize": 8, "axes.labelsize": 8, "xtick.labelsize": 7, "ytick.labelsize": 7,
    "legend.fontsize": 6.5, "legend.title_fontsize": 7, "lines.linewidth": 1.2, "lines.markersize": 3.5,
    "axes.linewidth": 0.6, "xtick.major.width": 0.6, "ytick.major.width": 0.6, "pdf.fonttype": 42,
    "axes.spines.top": False, "axes.spines.right": False,
}

#: Okabe & Ito's colorblind-safe palette (yellow left out: too light on white), then Paul Tol's
#: muted wine, teal, olive and indigo for the forecasters beyond seven.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
           "#882255", "#44AA99", "#999933", "#332288")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "h", "*")
#: The project's forecasters in a fixed order: each gets its own color and marker for good.
KNOWN_FORECASTERS = ("k29", "k29_rounded", "kernel_df", "linear_df", "bit", "dmm", "ogd", "running_mean",
                     "window_mean", "last_outcome", "constant")

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


def _new_figure(figsize=FIGSIZE, **kw) -> Figure:
    fig = Figure(figsize=figsize, layout="constrained", **kw)
    FigureCanvasAgg(fig)  # render with Agg, whatever pyplot's backend is
    return fig


def _axes(ax: Axes | None, figsize=FIGSIZE) -> tuple[Figure, Axes]:
    if ax is not None:
        return ax.figure, ax
    fig = _new_figure(figsize)
    return fig, fig.add_subplot()


def _plain_log_ticks(axis) -> None:
    """Decades written as 0.01, 0.1, 1, 10 (plain text: no mathtext, quicker and easier to read)."""
    axis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(ticker.NullFormatter())


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
        ax.set_xlabel("rounds $T$")
        ax.set_ylabel("smCE / $T$")
        if nature:
            ax.set_title(nature.replace("_", " "))
        extra = [(Line2D([], [], color=_BOUND_COLOR, linewidth=0.6), r"K29 guarantee $\sqrt{8T/3}/T$")]
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
        ax.set_xlabel("rounds $T$")
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
    df = _clean(reliability, "count", _BIN_COLUMNS)
    if not df.empty:
        mp, my = (pd.to_numeric(df[c], errors="coerce").astype(float) for c in ("mean_p", "mean_y"))
        df = df.loc[(df["count"] > 0) & np.isfinite(mp) & np.isfinite(my)]
    if df.empty:
        return pd.DataFrame(columns=["bin", "lo", "hi", "count", "mean_p", "mean_y"])
    df = df.assign(wp=df["count"] * df["mean_p"], wy=df["count"] * df["mean_y"])
    g = df.groupby("bin").agg(lo=("lo", "min"), hi=("hi", "max"), count=("count", "sum"), wp=("wp", "sum"),
                              wy=("wy", "sum")).reset_index()
    g["count"] = g["count"].astype(float)
    g["mean_p"], g["mean_y"] = g["wp"] / g["count"], g["wy"] / g["count"]
    return g.drop(columns=["wp", "wy"])


def reliability_diagram(reliability: pd.DataFrame, forecaster: str, nature: str, ax: Axes | None = None,
                        count_axis: bool = True) -> Figure:
    """Mean forecast against observed frequency per bin, pooled across seeds.

    Marker area is proportional to the bin's count; the diagonal is perfect calibration;
    light bars (twin axis on the right) show how many forecasts fell in each bin.

    Parameters
    ----------
    reliability : table of bins (forecaster, nature, seed, bin, lo, hi, count, mean_p, mean_y).
    forecaster, nature : the matchup to draw (all its seeds are pooled).
    ax : axes to draw on; a new single-column figure by default.
    count_axis : label the count axis (off in grids, where it would crowd the panels).
    """
    with mpl.rc_context(_RC):
        fig, ax = _axes(ax, (FIGSIZE[1] + 0.4, FIGSIZE[1]))
        ax.plot([0, 1], [0, 1], color="0.6", linewidth=0.6, linestyle=":", zorder=1)
        ax.set_xlim(-0.03, 1.03)
        ax.set_ylim(-0.03, 1.03)
        ax.set_box_aspect(1)
        ax.set_xlabel("mean forecast")
        ax.set_ylabel("observed frequency")
        ax.set_title(f"{forecaster} vs {nature}".replace("_", " "), fontsize=7)
        df = reliability if reliability is not None else pd.DataFrame()
        df = _restrict(df, forecaster=forecaster, nature=nature)
        pooled = pool_reliability(df) if not df.empty else df
        if pooled.empty:
            ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes, color="0.4")
            return fig
        style = forecaster_style(forecaster)
        twin = ax.twinx()
        twin.set_box_aspect(1)
        twin.bar((pooled["lo"] + pooled["hi"]) / 2, pooled["count"], width=(pooled["hi"] - pooled["lo"]) * 0.9,
                 color=style["color"], alpha=0.15, linewidth=0, gid="counts")
        top = 3.5 * pooled["count"].max()  # bars fill the lower part of the panel, from the x axis up
        twin.set_ylim(-top * 0.03 / 1.03, top)
        twin.set_zorder(ax.get_zorder() - 1)
        ax.patch.set_visible(False)
        twin.spines[["top", "left", "bottom"]].set_visible(False)
        if count_axis:
            twin.set_ylabel("count", color="0.4", loc="bottom")
            twin.tick_params(axis="y", colors="0.4", labelsize=6)
            ticks = ticker.MaxNLocator(3, integer=True).tick_values(0, pooled["count"].max())
            twin.set_yticks([v for v in ticks if 0 <= v <= pooled["count"].max()])
        else:
            twin.set_yticks([])
            twin.spines["right"].set_visible(False)
        size = 60 * pooled["count"] / pooled["count"].max()
        ax.plot(pooled["mean_p"], pooled["mean_y"], color=style["color"], linewidth=0.6, alpha=0.7, zorder=2)
        ax.scatter(pooled["mean_p"], pooled["mean_y"], s=np.maximum(size, 2), color=style["color"],
                   marker=style["marker"], edgecolors="white", linewidths=0.3, zorder=3, clip_on=False,
                   gid="bins")
    return fig


def reliability_grid(reliability: pd.DataFrame, nature: str, forecasters: Sequence[str] | None = None,
                     ncols: int = 3) -> Figure:
    """One reliability panel per forecaster for one nature (a figure for the full text width)."""
    df = _restrict(reliability if reliability is not None else pd.DataFrame(), nature=nature)
    names = list(forecasters) if forecasters is not None else _order(df["forecaster"].unique() if not df.empty
                                                                     else [])
    n = max(len(names), 1)
    ncols = min(ncols, n)
    nrows = math.ceil(n / ncols)
    with mpl.rc_context(_RC):
        fig = _new_figure((2.2 * ncols, 2.1 * nrows + 0.2))
        axes = fig.subplots(nrows, ncols, squeeze=False)
        for i, a in enumerate(axes.flat):
            if i >= len(names):
                a.set_visible(False)
                continue
            reliability_diagram(df, names[i], nature, ax=a, count_axis=False)
            a.set_title(names[i].replace("_", " "), fontsize=7)
            if i % ncols:
                a.set_ylabel("")
            if i < len(names) - ncols:
                a.set_xlabel("")
        if not names:
            _no_data(axes[0, 0], f"reliability for {nature}")
        fig.suptitle(f"reliability: {nature.replace('_', ' ')} (marker area and bars: count)", fontsize=8)
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
        im = ax.imshow(np.ma.masked_invalid(values), cmap=cmap, norm=norm, aspect="auto")
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
                        gid=f"value:{fc}:{nat}")
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
    for ext in formats:
        path = stem.with_name(f"{stem.name}.{ext}")
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        os.close(fd)
        try:
            fig.savefig(tmp, format=ext, dpi=DPI)
            os.replace(tmp, path)
            fig.set_layout_engine("none")  # keep the layout computed for the first format
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        paths.append(path)
    return paths


def _has(curves: pd.DataFrame, metric: str, nature: str) -> bool:
    df = _restrict(_clean(curves, need=_CURVE_COLUMNS), nature=nature)
    return not df.empty and bool((df["metric"] == metric).any())


def report(out_dir: Path | str, tables: dict[str, pd.DataFrame] | None = None,
           leaderboard_metrics: Sequence[str] = ("smce_over_T", "brier", "bias"),
           formats: Sequence[str] = ("pdf", "png")) -> list[Path]:
    """Draw every figure of a results directory into ``out_dir/figures/`` and return the paths.

    Per nature: ``smce_vs_T__<nature>``, ``regret_linear__<nature>`` and ``reliability__<nature>``
    (one panel per forecaster); then ``leaderboard__<metric>`` per leaderboard metric, each as
    PDF and PNG, and ``table.tex``. A figure without data is skipped.

    Parameters
    ----------
    out_dir : the results directory; its tables are read with :func:`arena.results.collect`
        unless ``tables`` (keys ``summary``, ``curves``, ``reliability``) is given.
    """
    out_dir = Path(out_dir)
    if tables is None:
        from arena.results import collect

        tables = collect(out_dir)
    summary, curves, rel = (tables.get(k, pd.DataFrame()) for k in ("summary", "curves", "reliability"))
    summary = summary if summary is not None else pd.DataFrame()
    fig_dir = out_dir / "figures"
    fig_dir.mkdir(parents=True, exist_ok=True)
    natures = sorted(set().union(*(set(df["nature"].dropna().astype(str)) for df in (summary, curves, rel)
                                   if df is not None and "nature" in df)))
    written: list[Path] = []
    for nat in natures:
        if _has(curves, "smce", nat):
            written += _save(smce_vs_T(curves, nature=nat), fig_dir / f"smce_vs_T__{_safe(nat)}", formats)
        if _has(curves, "regret_linear", nat):
            written += _save(regret_curves(curves, "regret_linear", nature=nat),
                             fig_dir / f"regret_linear__{_safe(nat)}", formats)
        if rel is not None and not pool_reliability(_restrict(rel, nature=nat)).empty:
            written += _save(reliability_grid(rel, nat), fig_dir / f"reliability__{_safe(nat)}", formats)
    for metric in leaderboard_metrics:
        if metric in summary and not _clean(_ok(summary), metric).empty:
            written += _save(leaderboard_heatmap(summary, metric), fig_dir / f"leaderboard__{_safe(metric)}",
                             formats)
    metrics = [m for m in leaderboard_metrics if m in summary]
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
