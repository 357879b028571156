"""What the figures of every game share: the tables' cleaning, curves against T with their
bands and certified bounds, panels by family and their legends.

Every curve is a mean across seeds with its 95% Student-t interval as a band
(:func:`arena.intervals.moments_ci`; none where every seed gives the same value), drawn from the curves'
moments over seeds (:mod:`arena.moments`: the ``curve_stats`` table, or made by :func:`_curves` from a long
table with a row per seed); missing or NaN data never crash a figure: it says "no data".
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from arena.intervals import moments_ci
from arena.moments import CURVE_KEYS, is_moments, moments, scaled
from arena.plots.jobs import Job
from arena.plots.labels import CURVE_TITLES, display_name, heading
from arena.plots.style import (
    _RC,
    COLUMN_WIDTH,
    FIGSIZE,
    FULL_WIDTH,
    MAX_LINES,
    METRIC_LABELS,
    MIN_BAND_SEEDS,
    _axes,
    _DecadeFormatter,
    _lines,
    _new_figure,
    _plain_log_ticks,
    order,
    styles_for,
)
from arena.results import safe_name

_CURVE_COLUMNS = ("forecaster", "t", "metric", "value")


def _clean(df: pd.DataFrame | None, column: str = "value", need: Sequence[str] = ()) -> pd.DataFrame:
    """Drop rows whose ``column`` is NaN or infinite (they are ignored, not plotted as zero).

    A table without ``column`` or any of the ``need`` columns counts as empty."""
    if df is None or df.empty or any(c not in df for c in (column, *need)):
        return pd.DataFrame()
    values = pd.to_numeric(df[column], errors="coerce").replace([np.inf, -np.inf], np.nan)
    return df.assign(**{column: values}).loc[values.notna()]


def _curves(df: pd.DataFrame | None) -> pd.DataFrame:
    """The curves ``df`` as moments over seeds (:mod:`arena.moments`), a row per point (game, T, forecaster, nature,
    metric, t: those it has): ``df`` itself (``curve_stats``), or the moments of a long table, a row per seed
    (:data:`_CURVE_COLUMNS`, ``seed``; NaN and infinite values left out). Without the columns: empty."""
    if df is None or df.empty:
        return pd.DataFrame()
    if is_moments(df):
        return df.loc[df["n"] > 0] if all(c in df for c in ("forecaster", "t", "metric")) else pd.DataFrame()
    if any(c not in df for c in _CURVE_COLUMNS):
        return pd.DataFrame()
    return moments(df, [k for k in CURVE_KEYS if k in df])


def _per_t(m: pd.DataFrame) -> pd.DataFrame:
    """Moments of a curve divided by its round t (t > 0)."""
    return scaled(m, 1.0 / m["t"].to_numpy(float))


def _bound_means(b: pd.DataFrame, x: str) -> pd.Series:
    """A certified bound's mean over seeds (and natures, where ``b`` has several) per ``x``, from its moments."""
    return (b["n"] * b["mean"]).groupby(b[x]).sum() / b["n"].groupby(b[x]).sum()


def _restrict(df: pd.DataFrame, **where) -> pd.DataFrame:
    for col, val in where.items():
        if val is not None and not df.empty:
            df = df.loc[df[col] == val] if col in df else df.iloc[:0]
    return df


def _ok(summary: pd.DataFrame) -> pd.DataFrame:
    """Finished matchups only: a forfeited run's metrics cover a truncated game."""
    return summary if "status" not in summary else summary.loc[summary["status"] != "forfeit"]


def _last_T(summary: pd.DataFrame) -> pd.DataFrame:
    """The rows of the largest horizon T: tables and heatmaps compare forecasters at one T."""
    if "T" in summary and summary["T"].nunique() > 1:
        return summary.loc[summary["T"] == summary["T"].max()]
    return summary


def _only(summary: pd.DataFrame, *columns: str, prefix: str | None = None) -> pd.DataFrame:
    """The columns of ``summary`` a figure reads: the matchups' keys and status, ``columns`` and those
    starting with ``prefix``. A figure's job carries only these, so that its digest (the report's
    manifest) changes only when they do, and so that less travels to a worker process."""
    from arena.aggregate import KEY_COLUMNS

    keep = [
        c
        for c in summary.columns
        if c in KEY_COLUMNS or c in ("status", *columns) or (prefix is not None and str(c).startswith(prefix))
    ]
    return summary[keep]


def _of_game(df: pd.DataFrame, game: str) -> pd.DataFrame:
    """The rows of one game (all rows of a table without a game column)."""
    return df.loc[df["game"] == game] if df is not None and not df.empty and "game" in df else df


def _rounds_axes(ax: Axes, ylabel: str, nature: str | None, logy: bool = True) -> None:
    """A curve figure's axes: rounds T on a log x axis, ``ylabel`` (log or linear), the nature as title."""
    if logy:
        ax.set_yscale("log", nonpositive="mask")
        _plain_log_ticks(ax.yaxis)
    ax.set_xscale("log")
    _plain_log_ticks(ax.xaxis)
    ax.set_xlabel("round t (log scale)")
    ax.set_ylabel(ylabel)
    if nature:
        ax.set_title(display_name(nature))


def _decades(ax: Axes) -> None:
    """Ticks at the whole decades in view of each log axis of ``ax`` (1, 2 and 5 times them where
    fewer than two decades are in view): the default locator makes ticks a decade or two beyond
    the view too, and each tick costs as much to make as a short curve.

    Examples
    --------
    >>> from arena.plots.style import _new_figure
    >>> ax = _new_figure().add_subplot(); ax.set_xscale("log"); _ = ax.set_xlim(10, 1000); _decades(ax)
    >>> [float(v) for v in ax.get_xticks()]
    [10.0, 100.0, 1000.0]
    >>> _ = ax.set_xlim(0.03, 0.3); _decades(ax); [float(v) for v in ax.get_xticks()]
    [0.05, 0.1, 0.2]
    """
    for axis, (lo, hi) in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
        if axis.get_scale() != "log" or not (0 < lo < hi):
            continue
        k = np.arange(np.floor(np.log10(lo)), np.floor(np.log10(hi) + 1e-9) + 1)
        ticks = 10.0**k
        if ((ticks >= lo * (1 - 1e-9)) & (ticks <= hi * (1 + 1e-9))).sum() < 2:  # 1, 2 and 5 times the decades
            ticks = (10.0 ** k[:, None] * np.array([1.0, 2.0, 5.0])).ravel()
        ticks = ticks[(ticks >= lo * (1 - 1e-9)) & (ticks <= hi * (1 + 1e-9))]
        if len(ticks) >= 2:
            axis.set_ticks(ticks)


def _no_data(ax: Axes, what: str) -> None:
    ax.text(0.5, 0.5, f"no data: {what}", ha="center", va="center", transform=ax.transAxes, color="0.4")
    ax.set_xticks([])
    ax.set_yticks([])


#: The marker of a value under a log axis' floor (zero included): drawn on the floor (:func:`_draw_mean`).
_FLOORED = "v"


def _mark(marker: str, color) -> dict:
    """The style of a small mark on an axis (a value under its floor, or beyond its limits): no edge,
    smaller than a line's markers."""
    return {
        "linestyle": "none",
        "marker": marker,
        "color": color,
        "markeredgewidth": 0,
        "markersize": 0.7 * mpl.rcParams["lines.markersize"],
    }


def _draw_mean(
    ax: Axes,
    g: pd.DataFrame,
    name: str,
    x: str,
    log: bool,
    style: Mapping[str, str],
    scale: pd.Series | float = 1.0,
    floor: float | None = None,
    phase: int = 0,
):
    """A forecaster's mean line; its 95% interval as a band from :data:`MIN_BAND_SEEDS` seeds on.

    ``floor``: on a log axis, a value below it (zero included) is no point of the line but a small triangle
    (:data:`_FLOORED`) on the floor, in the line's color, and the line joins the values around it: a curve
    that is often exactly zero (the bias of a bit-predicting forecaster) neither falls apart into fragments
    nor plunges to the floor and back at every zero, hiding the other lines; the legend says so
    (:func:`_floor_note`). ``phase`` shifts the markers so that two lines drawn one over the other both
    show theirs."""
    xs = g[x].to_numpy(float)
    mean = (g["mean"] / scale).to_numpy(float)
    half = (g["half"] / scale).to_numpy(float)
    below = mean < floor if floor is not None else np.zeros(len(mean), bool)
    every = max(1, int((~below).sum()) // 6)
    (line,) = ax.plot(
        xs[~below],
        mean[~below],
        color=style["color"],
        marker=style["marker"],
        markevery=(phase % every, every),
        label=display_name(name),
        gid=f"mean:{name}",
    )
    if below.any():
        ax.plot(
            xs[below],
            np.full(int(below.sum()), floor),
            clip_on=False,
            gid=f"floored:{name}",
            **_mark(_FLOORED, style["color"]),
        )
    seeds = g["n"].to_numpy(float) if "n" in g else np.full(len(xs), np.inf)
    ok = np.isfinite(half) & (seeds >= MIN_BAND_SEEDS)
    if ok.any():
        lo, hi = mean - half, mean + half
        if log:  # a band crossing zero cannot be drawn on log axes: clip it at a tenth of the mean
            lo = np.maximum(lo, mean / 10)
            if floor is not None:
                lo, hi = np.maximum(lo, floor), np.maximum(hi, floor)
        ax.fill_between(xs, lo, hi, where=ok, color=style["color"], alpha=0.2, linewidth=0, gid=f"band:{name}")
    return line


def _log_floor(values: np.ndarray, decades: float = 3.0) -> float | None:
    """The bottom of a log axis for ``values``: the smallest positive value, but no more than
    ``decades`` decades under the largest (a dip to 1e-5 would squash the rest), at a whole decade;
    None when no value is positive."""
    v = np.asarray(values, float)
    pos = v[np.isfinite(v) & (v > 0)]
    if not pos.size:
        return None
    return float(10.0 ** np.floor(np.log10(max(pos.min(), pos.max() * 10.0**-decades))))


def _edge_marks(ax: Axes, stats: pd.DataFrame, x: str, styles: Mapping[str, dict]) -> list[tuple]:
    """Where robust y limits (set on ``ax`` already) leave out some of the means of ``stats``: a small
    triangle on the axis' edge at each, in its forecaster's color, pointing out of the axis; returns the
    legend entry of the mark as ``[(handle, label)]``, else ``[]``. A value never leaves a figure unsaid."""
    lo, hi = ax.get_ylim()
    out = False
    styles = styles_for(stats["forecaster"].unique(), styles)  # as the lines were drawn (_draw_curves)
    for name, g in stats.groupby("forecaster", sort=False):
        v, xs = g["mean"].to_numpy(float), g[x].to_numpy(float)
        for mask, edge, marker in ((v > hi, hi, "^"), (v < lo, lo, "v")):
            if mask.any():
                out = True
                ax.plot(
                    xs[mask],
                    np.full(int(mask.sum()), edge),
                    clip_on=False,
                    gid=f"beyond:{name}",
                    **_mark(marker, styles[name]["color"]),
                )
    if not out:
        return []
    return [(Line2D([], [], **_mark("^", "0.35")), "beyond the axis (its limits: the middle 98% of the values)")]


def _floor_note(ax: Axes, values: np.ndarray, floor: float | None) -> list[tuple]:
    """Where some of ``values`` lie under the log axis' floor (zeros too): the axis ends just under the
    floor, and the legend entry of their mark (:func:`_draw_mean`) as ``[(handle, label)]``; else ``[]``.
    A figure's legend lists it once, however many panels have it."""
    v = np.asarray(values, float)
    if floor is None or not (v[np.isfinite(v)] < floor).any():
        return []
    ax.set_ylim(bottom=floor / 1.25)
    written = _DecadeFormatter()
    written.set_locs([floor])  # the floor as the axis writes its decades
    return [(Line2D([], [], **_mark(_FLOORED, "0.35")), f"under {written(floor)} (0 too), on the axis")]


def _draw_bound(ax: Axes, b: pd.DataFrame, name: str, x: str, color: str, scale=1.0, label: str | None = None):
    g = _bound_means(b, x)
    xs = g.index.to_numpy(float)
    return ax.plot(
        xs,
        (g / (xs if scale == "x" else scale)).to_numpy(float),
        color=color,
        linestyle="--",
        linewidth=0.9,
        gid=f"bound:{name}",
        label=label,
    )[0]


def _draw_curves(
    ax: Axes,
    stats: pd.DataFrame,
    x: str,
    log: bool,
    styles: Mapping[str, dict] | None,
    bounds: pd.DataFrame | None = None,
    scale=1.0,
    floor: float | None = None,
    merge: bool = True,
) -> list:
    """Each forecaster's mean and band (``stats`` of :func:`arena.intervals.moments_ci`), in :func:`order`,
    and its certified bound dashed in its color where ``bounds`` (moments, :func:`_curves`) has one;
    ``styles`` completed for the names it lacks. With ``merge``, forecasters whose bounds are the same curve
    share one dashed line, labelled with all their names (else each is drawn, in its color). Returns the
    (handle, label) pairs of the bounds, for the legend."""
    styles = styles_for(stats["forecaster"].unique(), styles)
    names = order(stats["forecaster"].unique())
    for i, name in enumerate(names):
        _draw_mean(
            ax, stats.loc[stats["forecaster"] == name], name, x, log=log, style=styles[name], floor=floor, phase=i
        )
    drawn: dict[bytes, list[str]] = {}
    first: dict[bytes, pd.DataFrame] = {}
    for name in names:
        b = bounds.loc[bounds["forecaster"] == name] if bounds is not None and not bounds.empty else None
        if b is None or b.empty:
            continue
        key = np.round(_bound_means(b, x).to_numpy(float), 9).tobytes() if merge else name.encode()
        drawn.setdefault(key, []).append(name)
        first.setdefault(key, b)
    extra = []
    for key, who in drawn.items():
        label = "bound of " + ", ".join(display_name(w) for w in who)
        line = _draw_bound(ax, first[key], who[0], x, styles[who[0]]["color"], scale=scale)
        extra.append((line, label))
    return extra


def _seeds(stats: pd.DataFrame) -> int:
    """The number of seeds behind the means of ``stats`` (the largest count of a point)."""
    return int(stats["n"].max()) if "n" in stats and stats["n"].notna().any() else 0


def _seed_note(n: int) -> str:
    """What the lines of a figure are: means over ``n`` seeds, and whether the bands are drawn."""
    if n <= 1:
        return "one seed"
    band = "band: 95% t-interval" if n >= MIN_BAND_SEEDS else f"no band: < {MIN_BAND_SEEDS} seeds"
    return f"mean of {n} seeds; {band}"


#: The order of families' panels.
FAMILIES = ("defensive", "baseline")


def _groups(names: Sequence[str], styles: Mapping[str, dict]) -> list[tuple[str | None, list[str]]]:
    """The forecasters of each panel: all in one when they are at most :data:`MAX_LINES`, else by
    family (``styles[name]["family"]``), a family of more than MAX_LINES in panels of at most that many.

    Examples
    --------
    >>> _groups(["a", "b"], {})
    [(None, ['a', 'b'])]
    >>> st = {n: {"family": "defensive" if n < "e" else "baseline"} for n in "abcdefgh"}
    >>> _groups(list("abcdefgh"), st)
    [('defensive', ['a', 'b', 'c', 'd']), ('baseline', ['e', 'f', 'g', 'h'])]
    """
    names = order(names)
    if len(names) <= MAX_LINES:
        return [(None, names)]
    fams: dict[str, list[str]] = {}
    for n in names:
        fams.setdefault(str(styles.get(n, {}).get("family", "")), []).append(n)
    out = []
    for fam in sorted(fams, key=lambda f: (FAMILIES.index(f) if f in FAMILIES else len(FAMILIES), f)):
        part = fams[fam]
        k = math.ceil(len(part) / MAX_LINES)
        size = math.ceil(len(part) / k)
        for j in range(k):
            out.append((fam or None, part[j * size : (j + 1) * size]))
    return out


_FAMILY_TITLES = {"defensive": "defensive forecasters", "baseline": "baselines"}


def _facets(
    ax: Axes | None,
    names: Sequence[str],
    styles: Mapping[str, dict] | None,
    height: float = FIGSIZE[1],
    sharey: bool = False,
) -> tuple[Figure, list[tuple[Axes, list[str]]]]:
    """The axes of a figure of per-forecaster curves and the forecasters each shows: ``ax`` with all
    of them when given; else one column-wide panel, or one panel per group of :func:`_groups` side
    by side at full width (up to three a row), with one legend for all of them
    (:func:`_legend`, :func:`_panel_title`) below them."""
    if ax is not None:
        return ax.figure, [(ax, order(names))]
    groups = _groups(names, styles_for(names, styles))
    if len(groups) == 1:
        fig = _new_figure((COLUMN_WIDTH, height))
        return fig, [(fig.add_subplot(), groups[0][1])]
    ncols = min(3, len(groups))
    nrows = math.ceil(len(groups) / ncols)
    fig = _new_figure((FULL_WIDTH, 0.3 + (height - 0.3) * nrows))
    axes = [fig.add_subplot(nrows, ncols, i + 1) for i in range(len(groups))]
    fams = [str(fam) for fam, _ in groups]
    for i, (a, fam) in enumerate(zip(axes, fams, strict=False)):
        k = fams[: i + 1].count(fam)
        a.set_gid(f"panel:{fam}" + (f":{k}:{fams.count(fam)}" if fams.count(fam) > 1 else ""))
    fig._arena_sharey = sharey
    fig._arena_entries = {}  # the panels' legend entries, drawn once above them
    return fig, [(a, part) for a, (_, part) in zip(axes, groups, strict=False)]


def _panel_title(fig: Figure, panels: list, title: str | None, note: str, own: bool) -> None:
    """The title of a figure: ``title`` (e.g. the nature) and ``note`` (seeds); with several panels
    each names its family, the figure carries the title and, below the panels, one legend of every
    panel's entries."""
    if not own:
        return
    if len(panels) == 1:
        ax = panels[0][0]
        _decades(ax)
        text = ((title or "") + (f" ({note})" if note and title else note)).strip()
        ax.set_title("\n".join(_lines(text, fig.get_figwidth() - 0.3, 0.052)), fontsize=7)
        return
    if getattr(fig, "_arena_sharey", False):  # one y range for panels to be compared: its labels once a row
        lo = min(a.get_ylim()[0] for a, _ in panels)
        hi = max(a.get_ylim()[1] for a, _ in panels)
        for a, _ in panels:
            a.set_ylim(lo, hi)
            if a.get_subplotspec().colspan.start:
                a.set_ylabel("")
                a.tick_params(labelleft=False)
    for a, _ in panels:
        _decades(a)
        fam, *k = str(a.get_gid() or "").removeprefix("panel:").split(":")
        a.set_title(
            _FAMILY_TITLES.get(fam, fam if fam != "None" else "") + (f" ({k[0]} of {k[1]})" if k else ""), fontsize=7
        )
    heading = ((title or "") + (f" ({note})" if note else "")).strip()
    fig.suptitle("\n".join(_lines(heading, fig.get_figwidth() - 0.2)), fontsize=8)
    entries = getattr(fig, "_arena_entries", {})
    if entries:
        w, h = fig.get_size_inches()
        renderer = fig.canvas.get_renderer()
        for ncol in range(min(5, len(entries)), 0, -1):  # as many columns as fit the figure's width
            leg = fig.legend(
                list(entries.values()), list(entries), loc="outside lower center", ncol=ncol, **_LEGEND_STYLE
            )
            if ncol == 1 or leg.get_window_extent(renderer).width <= 0.98 * w * fig.dpi:
                break
            leg.remove()
        fig.set_size_inches(w, h + 0.12 * math.ceil(len(entries) / ncol))  # room for the legend's rows


_LEGEND_STYLE = {
    "frameon": False,
    "handlelength": 1.8,
    "columnspacing": 0.8,
    "borderaxespad": 0.2,
    "handletextpad": 0.4,
    "fontsize": 6.5,
}


def _legend(ax: Axes, extra: list | None = None, outside: bool = False, **kw) -> None:
    """Forecasters then ``extra`` (handle, label) pairs; below the axes when the figure is ours
    (it never covers data; the layout makes room for it)."""
    handles, labels = ax.get_legend_handles_labels()
    for h, lab in extra or []:
        handles.append(h)
        labels.append(lab)
    if not handles:
        return
    style = _LEGEND_STYLE
    root = ax.get_figure(root=True)
    if outside and hasattr(root, "_arena_entries"):  # a panel of several: one legend below them all
        for h, lab in zip(handles, labels, strict=False):
            root._arena_entries.setdefault(lab, h)
        return
    if outside:  # below the panel: the figure grows by a line of text per legend row
        ncol = 3 if max(map(len, labels)) <= 16 else 2  # three columns where the labels fit the column
        rows = math.ceil(len(handles) / ncol)
        grown = getattr(root, "_arena_legend_rows", 0)
        if rows > grown:
            w, h = root.get_size_inches()
            root.set_size_inches(w, h + 0.12 * (rows - grown))
            root._arena_legend_rows = rows
        ax.figure.legend(handles, labels, loc="outside lower center", ncol=ncol, **style)
    else:
        ax.legend(handles, labels, ncol=2 if len(handles) > 4 else 1, **style, **kw)


#: Curves whose certified bound is not ``<metric>_bound``: (bound curve, its scale ("x": divided
#: by t), log y axis). The bias is nonnegative and falls like 1/t for the defensive forecasters.
_CURVE_BOUNDS = {"bias": ("bit_bound", "x", True)}
#: Axis labels of curves against t: the symbol, then what it is.
CURVE_LABELS = {
    "bias": "bias |\u03a3\u209b(p\u209b \u2212 y\u209b)| / t",
    "regret_linear": "regret R\u209c to the best linear\n"
    "forecast \u27e8w, x\u209c\u27e9 + a, \u2016(w, a)\u2016 \u2264 M",
    "regret_constant": "regret R\u209c to the best\nconstant forecast",
    "regret_experts": "regret R\u209c to the best expert\n(loss units)",
    "regret_decision_expected": "expected decision regret R\u209c\n(loss units)",
}


def regret_curves(
    curves: pd.DataFrame,
    metric: str = "regret_linear",
    nature: str | None = None,
    ax: Axes | None = None,
    styles: Mapping[str, dict] | None = None,
) -> Figure:
    """Regret (or another curve, e.g. ``bias``) against t (log x axis): per forecaster the mean
    across seeds and, from :data:`~arena.plots.style.MIN_BAND_SEEDS` seeds on, its 95% Student-t
    interval as a band. More than :data:`~arena.plots.style.MAX_LINES` forecasters are split into
    panels by family.

    Where the curves hold ``<metric>_bound`` (a forecaster certifying it; for ``bias``, the
    bit-prediction bound ``bit_bound`` on abs(sum(p - y)), drawn divided by t), the bound is
    dashed in the forecaster's color and named in the legend. Regret can be negative (the
    comparators are norm-bounded), so its y axis is linear with zero marked; the bias is drawn on a
    log axis whose floor is at most three decades under its largest value, values under it
    (zeros too) marked on it, as the legend says. The panels of a figure do not share their y axes: a
    bound near 0 stays visible beside baselines with large regret.

    Parameters
    ----------
    curves : long table (forecaster, seed, t, metric, value[, nature]), or its moments over seeds
        (:func:`_curves`).
    metric : the curve to draw, e.g. ``"regret_linear"``, ``"regret_constant"`` or ``"bias"``.
    nature : keep only this nature; by default every row is used.
    ax : axes to draw on (every forecaster on it); a new figure by default.
    styles : color, marker and family per forecaster (:func:`arena.plots.style.forecaster_styles`);
        by default those of the forecasters drawn.
    """
    own = ax is None
    with mpl.rc_context(_RC):
        df = _restrict(_last_T(_curves(curves)), nature=nature)
        obs = df.loc[df["metric"] == metric] if not df.empty else df
        if obs.empty:
            fig, ax = _axes(ax)
            _no_data(ax, f"{metric} curves" + (f" for {nature}" if nature else ""))
            return fig
        bound, scale, logy = _CURVE_BOUNDS.get(metric, (f"{metric}_bound", 1.0, False))
        bounds = df.loc[df["metric"] == bound]
        stats = moments_ci(obs, ["forecaster", "t"])
        fig, panels = _facets(ax, stats["forecaster"].unique(), styles)
        for a, names in panels:
            part = stats.loc[stats["forecaster"].isin(names)]
            floor = _log_floor(part["mean"]) if logy else None
            extra = _draw_curves(
                a, part, "t", logy, styles, bounds.loc[bounds["forecaster"].isin(names)], scale=scale, floor=floor
            )
            if not logy:
                a.axhline(0.0, color="0.7", linewidth=0.5, zorder=0)
            _rounds_axes(a, CURVE_LABELS.get(metric, METRIC_LABELS.get(metric, metric)), None, logy)
            if logy:
                extra += _floor_note(a, part["mean"], floor)
            _legend(a, extra, outside=own, loc="best")
        what = CURVE_TITLES.get(metric, METRIC_LABELS.get(metric, metric))
        _panel_title(fig, panels, heading(df, what, nature), _seed_note(_seeds(stats)), own)
    return fig


def _curve_jobs(
    game: str,
    figures: dict[str, str | None],
    metrics: Sequence[str],
    summary: pd.DataFrame,
    curves: pd.DataFrame,
    fig_dir: Path,
    formats: Sequence[str],
    styles: Mapping[str, dict],
) -> list[Job]:
    """The figure jobs of one game's matchups (none when the summary has none): per nature each of
    ``figures`` whose curve (its value; ``None``: the expert weights) the nature has, then the
    leaderboards of ``metrics``."""
    if summary is None or "game" not in summary:
        return []
    part = summary.loc[summary["game"] == game]
    if part.empty:
        return []
    jobs = []
    for nat in sorted(part["nature"].dropna().astype(str).unique()):
        cur = _restrict(curves, nature=nat)
        have = set(cur["metric"].unique()) if not cur.empty else set()
        for kind, needed in figures.items():
            if (needed in have) if needed else any(str(m).startswith("weight:") for m in have):
                jobs.append(Job(kind, (cur, nat, styles), fig_dir / f"{kind}__{safe_name(nat)}", tuple(formats)))
    for metric in metrics:
        if metric in part and not _clean(_ok(part), metric).empty:
            jobs.append(
                Job(
                    "leaderboard",
                    (_only(part, metric), metric),
                    fig_dir / f"leaderboard__{safe_name(metric)}",
                    tuple(formats),
                )
            )
    return jobs
