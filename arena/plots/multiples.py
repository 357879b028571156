"""Small multiples of binary forecasts: one curve (smCE/t, bias, regret to linear) against t, one panel per
nature, one figure per group of forecasters.

Examples
--------
>>> c = pd.DataFrame({"forecaster": "k29", "nature": ["a", "a", "b", "b"], "seed": 0,
...                   "t": [10, 100, 10, 100], "metric": "smce", "value": [2.0, 6.0, 4.0, 8.0]})
>>> [ax.get_title() for ax in curves_by_nature(c).axes]
['a', 'b']
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from arena.intervals import moments_ci
from arena.plots.common import (
    _LEGEND_STYLE,
    _curves,
    _decades,
    _draw_curves,
    _floor_note,
    _last_T,
    _log_floor,
    _no_data,
    _per_t,
    _rounds_axes,
    _seed_note,
    _seeds,
)
from arena.plots.labels import display_name, heading
from arena.plots.style import (
    _BOUND_COLOR,
    _RC,
    FULL_WIDTH,
    _axes,
    _lines,
    _new_figure,
    styles_for,
)

#: The curves of binary forecasts a figure of small multiples draws, per curve name: (the value
#: drawn: the curve, or the curve / t; the certified bound's curve and its scale ("x": / t); log y
#: axis; y label, shared by the panels: a symbol on one line, since one row of panels is an inch
#: tall and the title says the rest).
_BY_NATURE = {
    "smce": (True, "smce_bound", "x", True, "smCE\u209c / t"),
    "bias": (False, "bit_bound", "x", True, "|\u03a3\u209b(p\u209b \u2212 y\u209b)| / t"),
    "regret_linear": (False, "regret_linear_bound", 1.0, False, "regret R\u209c"),
}


#: What each figure of small multiples shows, first in its title: what its y label's symbol means.
_BY_NATURE_TITLES = {
    "smce": "smooth calibration error per round smCE\u209c / t",
    "bias": "bias per round |\u03a3\u209b(p\u209b \u2212 y\u209b)| / t",
    "regret_linear": "regret R\u209c to the best linear forecast \u27e8w, x\u209c\u27e9 + a, "
    "\u2016(w, a)\u2016 \u2264 M",
}


#: The grid of small multiples, in inches: panel height, gap under a panel (its title), left
#: margin (y tick labels and the shared y label), gap between panels (y tick labels when the
#: panels do not share them), bottom margin, the title's height and a legend row's.
_MULTIPLES = {
    "height": 1.05,
    "hgap": 0.3,
    "left": 0.62,
    "wgap": 0.08,
    "wgap_own": 0.42,
    "right": 0.08,
    "bottom": 0.42,
    "title": 0.2,
    "legend_row": 0.145,
}


def curves_by_nature(
    curves: pd.DataFrame,
    metric: str = "smce",
    forecasters: Sequence[str] | None = None,
    styles: Mapping[str, dict] | None = None,
    ncols: int = 4,
    title: str | None = None,
    span: tuple[float, float] | None = None,
) -> Figure:
    """One curve of binary forecasts against t on every nature: small multiples, one panel per
    nature, at a paper's full width (6.75 in), one legend for all of them above the panels.

    ``metric`` is ``"smce"`` (drawn as smCE_t / t, with the K29 guarantee sqrt(8t/3)/t in gray, as in
    :func:`smce_vs_T`), ``"bias"`` (abs(sum(p - y)) / t, log axis, the bit-prediction bound / t
    dashed) or ``"regret_linear"`` (linear axis, zero marked). Each line is a forecaster's mean over
    seeds, with its 95% interval as a band from :data:`~arena.plots.style.MIN_BAND_SEEDS` seeds on;
    certified bounds are dashed in their forecaster's color. Log-axis panels share their y axis (the
    natures are compared on one scale), whose floor is at most three decades under the largest
    value: values under it (zeros too) are marked on it, as the legend says. Regret panels each have their own.

    Parameters
    ----------
    curves : long table (forecaster, nature, seed, t, metric, value).
    metric : one of ``"smce"``, ``"bias"``, ``"regret_linear"``.
    forecasters : the forecasters drawn (at most about :data:`~arena.plots.style.MAX_LINES` keep the
        panels readable: a report draws one figure per family); by default all.
    styles : color and marker per forecaster (:func:`arena.plots.style.forecaster_styles`).
    ncols : panels per row.
    title : the figure's title (e.g. the family), before the number of seeds.
    span : for a log axis, the (floor, top) of the axis (:func:`_curve_span` of every forecaster's curves: the
        figures of one curve, a group of forecasters each, then share their scale); by default this
        figure's own.

    Examples
    --------
    >>> c = pd.DataFrame({"forecaster": "k29", "nature": ["a", "a", "b", "b"], "seed": 0,
    ...                   "t": [10, 100, 10, 100], "metric": "smce", "value": [2.0, 6.0, 4.0, 8.0]})
    >>> [ax.get_title() for ax in curves_by_nature(c).axes]
    ['a', 'b']
    """
    if metric not in _BY_NATURE:
        raise ValueError(f"curves_by_nature: metric {metric!r}: choose from {', '.join(_BY_NATURE)}")
    per_t, bound_name, bound_scale, logy, ylabel = _BY_NATURE[metric]
    with mpl.rc_context(_RC):
        df = _last_T(_curves(curves))
        df = df if "nature" in df else pd.DataFrame()
        if forecasters is not None and not df.empty:
            df = df.loc[df["forecaster"].isin(list(forecasters))]
        obs = df.loc[(df["metric"] == metric) & (df["t"] > 0)] if not df.empty else df
        if obs.empty:
            fig, ax = _axes(None)
            _no_data(ax, f"{metric} curves")
            return fig
        stats = _by_nature_stats(obs, per_t)
        bounds = df.loc[(df["metric"] == bound_name) & (df["t"] > 0)]
        natures = sorted(stats["nature"].astype(str).unique())
        styles = styles_for(stats["forecaster"].unique(), styles)
        t, k29 = _k29_guarantee(obs)
        if logy and span is None:  # this figure's own: its means (and the guarantee), its bounds
            span = _log_span(np.r_[stats["mean"].to_numpy(float), k29 if per_t else []], bounds, bound_scale)
        floor = span[0] if logy and span is not None else None
        ncols = max(1, min(ncols, len(natures)))
        axes = _multiples_panels(natures, ncols, logy)
        seen = _draw_multiples(axes, natures, stats, bounds, styles, metric, floor, (t, k29))
        if logy and span is not None and np.isfinite(span[1]):  # the panels share the y axis: one call sets them all
            axes[0].set_ylim(floor / 1.25 if floor else None, span[1] * 1.3)
        for ax in axes:
            _decades(ax)
        title_lines = _lines(
            heading(df, _BY_NATURE_TITLES[metric])
            + (f", {title}" if title else "")
            + f" ({_seed_note(_seeds(stats))})",
            FULL_WIDTH - 0.2,
        )
        fig = axes[0].figure
        _lay_out_multiples(fig, axes, ncols, logy, seen, title_lines)
        _shared_ylabel(fig, axes[::ncols], ylabel)
        fig.suptitle("\n".join(title_lines), y=1 - 0.04 / fig.get_figheight(), va="top", fontsize=8)
    return fig


def _shared_ylabel(fig: Figure, first: list[Axes], ylabel: str) -> None:
    """``ylabel`` for every panel, its right edge a gap left of the widest y tick labels of the panels of the first
    column (``first``; regret ticks such as "\u22121000" are wider than log ones), at most two lines, at least
    0.04 in from the figure's edge."""
    g = _MULTIPLES
    renderer = fig.canvas.get_renderer()
    ticks = [ax.yaxis.get_tightbbox(renderer) for ax in first]
    inches = min((b.x0 for b in ticks if b is not None), default=g["left"] * fig.dpi) / fig.dpi
    span = fig.get_figheight() - g["bottom"] - g["title"] - g["legend_row"]
    text = "\n".join(_lines(ylabel, span, 0.058)[:2])
    width = 0.14 * (text.count("\n") + 1)  # an 8 pt line, turned on its side
    x = max(inches - 0.06, 0.04 + width)
    fig.supylabel(text, x=x / FULL_WIDTH, fontsize=8, ha="right")


def _draw_multiples(axes, natures, stats, bounds, styles, metric, floor, k29) -> dict:
    """Each nature's curves in its panel (``k29``: the guarantee's t and values, drawn with smCE/t); the
    legend's entries: every forecaster once, every bound once (named by its forecasters), the guarantee, and
    the mark of values under the shared floor once for every panel."""
    per_t, _, bound_scale, logy, _ = _BY_NATURE[metric]
    entries, floored = [], []
    for ax, nat in zip(axes, natures, strict=True):
        part = stats.loc[stats["nature"] == nat]
        extra = _draw_curves(
            ax,
            part,
            "t",
            logy,
            styles,
            bounds.loc[bounds["nature"] == nat],
            scale=bound_scale,
            floor=floor,
            merge=False,
        )
        if per_t:
            ax.plot(*k29, color=_BOUND_COLOR, linewidth=0.6, gid="reference:k29")
        if not logy:
            ax.axhline(0.0, color="0.7", linewidth=0.5, zorder=0)
        if logy:
            floored += _floor_note(ax, part["mean"], floor)
        entries += [*zip(*reversed(ax.get_legend_handles_labels()), strict=False), *((lab, h) for h, lab in extra)]
    seen: dict[str, object] = {}
    for lab, h in entries:
        seen.setdefault(lab, h)
    if per_t:
        seen["\u221a(8t/3) / t \u221d 1/\u221at (K29 guarantee)"] = Line2D([], [], color=_BOUND_COLOR, linewidth=0.6)
    for h, lab in floored[:1]:
        seen[lab] = h
    return seen


def _lay_out_multiples(fig: Figure, axes: list[Axes], ncols: int, logy: bool, seen: dict, heading: list[str]) -> None:
    """The figure's height and its panels' places (:data:`_MULTIPLES`), the legend above them, the x label."""
    g, legend_cols = _MULTIPLES, 5
    nrows = math.ceil(len(axes) / ncols)
    wgap = g["wgap"] if logy else g["wgap_own"]
    side = (FULL_WIDTH - g["left"] - g["right"] - (ncols - 1) * wgap) / ncols
    head = g["title"] + 0.14 * (len(heading) - 1)
    top = head + g["legend_row"] * math.ceil(len(seen) / legend_cols) + 0.16
    height = g["bottom"] + nrows * g["height"] + (nrows - 1) * g["hgap"] + top
    fig.set_size_inches(FULL_WIDTH, height)
    for i, ax in enumerate(axes):
        r, c = divmod(i, ncols)
        ax.set_position(
            (
                (g["left"] + c * (side + wgap)) / FULL_WIDTH,
                (height - top - r * (g["height"] + g["hgap"]) - g["height"]) / height,
                side / FULL_WIDTH,
                g["height"] / height,
            )
        )
    fig.legend(
        list(seen.values()),
        list(seen),
        loc="upper center",
        ncol=legend_cols,
        bbox_to_anchor=(0.5, 1 - head / height),
        **_LEGEND_STYLE,
    )
    fig.supxlabel("round t (log scale)", y=0.04 / height, fontsize=8, va="bottom")


def _multiples_panels(natures: list[str], ncols: int, logy: bool) -> list[Axes]:
    """The empty panels of :func:`curves_by_nature`, one per nature, in a new figure (placed by the caller: a fixed
    grid, no layout engine to run); log panels share their y axis."""
    fig = _new_figure((FULL_WIDTH, 4.0), layout=None)
    axes: list[Axes] = []
    for i, nat in enumerate(natures):
        ax = fig.add_subplot(sharey=axes[0] if (axes and logy) else None)
        axes.append(ax)
        _rounds_axes(ax, "", None, logy)
        ax.set_xlabel("")
        ax.set_title(display_name(nat), fontsize=7, pad=2)
        ax.tick_params(labelsize=6)
        if logy and i % ncols:
            ax.tick_params(labelleft=False)
        if i < len(natures) - ncols:
            ax.tick_params(labelbottom=False)
    return axes


def _by_nature_stats(obs: pd.DataFrame, per_t: bool) -> pd.DataFrame:
    """The means over seeds (and intervals) of a curve per nature, forecaster and t, as
    :func:`curves_by_nature` draws them (``per_t``: the curve divided by t)."""
    return moments_ci(_per_t(obs) if per_t else obs, ["nature", "forecaster", "t"])


def _k29_guarantee(obs: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """The K29 guarantee sqrt(8t/3) / t (a T^(-1/2) rate: the reference every smCE/t curve is read
    against) at 50 rounds t spanning those of ``obs``: (t, its values)."""
    t = np.geomspace(max(obs["t"].min(), 1), obs["t"].max(), 50)
    return t, np.sqrt(8 * t / 3) / t


def _log_span(values: np.ndarray, bounds: pd.DataFrame, bound_scale) -> tuple[float, float] | None:
    """(floor, top) of the log axis of :func:`curves_by_nature`: the floor of
    :func:`arena.plots.common._log_floor` of the ``values`` drawn (the means, and the K29 guarantee),
    the top the largest of those and of the certified ``bounds`` as drawn (their largest value over seeds;
    ``bound_scale`` "x": divided by t); None without a positive value."""
    floor = _log_floor(values)
    if floor is None:
        return None
    drawn = (bounds["max"] / (bounds["t"] if bound_scale == "x" else bound_scale)).to_numpy(float)
    top = np.r_[values, drawn]
    return floor, float(np.max(top[np.isfinite(top)]))


def _curve_span(curves: pd.DataFrame, metric: str) -> tuple[float, float] | None:
    """:func:`_log_span` of every forecaster's ``metric`` in ``curves``: the scale the figures of its
    groups of forecasters share."""
    per_t, bound_name, bound_scale = _BY_NATURE[metric][:3]
    curves = _last_T(_curves(curves))
    obs = curves.loc[(curves["metric"] == metric) & (curves["t"] > 0)] if not curves.empty else curves
    if obs.empty:
        return None
    values = _by_nature_stats(obs, per_t)["mean"].to_numpy(float)
    bounds = curves.loc[(curves["metric"] == bound_name) & (curves["t"] > 0)]
    return _log_span(np.r_[values, _k29_guarantee(obs)[1] if per_t else []], bounds, bound_scale)
