"""The leaderboard heatmap: forecasters against natures, the mean of a metric over seeds in each cell."""

from __future__ import annotations

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.colors import LogNorm, Normalize, SymLogNorm
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.ticker import FuncFormatter

from arena.aggregate import direction, seed_stats
from arena.answer import sig3
from arena.plots.common import _clean, _last_T, _no_data
from arena.plots.style import (
    _RC,
    COLUMN_WIDTH,
    FULL_WIDTH,
    METRIC_LABELS,
    _axes,
    _DecadeFormatter,
    _fmt,
    _lines,
    _power_of_ten,
    order,
)


def leaderboard_heatmap(summary: pd.DataFrame, metric: str = "smce_over_T", ax: Axes | None = None) -> Figure:
    """Forecaster x nature heatmap of the mean of ``metric`` over seeds (:func:`arena.aggregate.seed_stats`).

    Cells are annotated with their value; the colormap is viridis (log-scaled when the values
    span more than two decades). Forfeited matchups are left out of the mean; a cell with a
    forfeit is hatched and marked "F" (only "F" when every seed forfeited). With several
    horizons T, the largest.
    """
    own = ax is None
    with mpl.rc_context(_RC):
        if (
            summary is None
            or any(c not in summary for c in ("forecaster", "nature", metric))
            or _clean(summary, metric).empty
        ):
            fig, ax = _axes(ax)
            _no_data(ax, metric)
            return fig
        st = seed_stats(_last_T(summary), [metric]).groupby(["forecaster", "nature"])
        means = st["mean"].mean().unstack("nature")
        forfeits = pd.DataFrame({"any": st["n_forfeit"].max() > 0, "all": st["n"].max() == 0})
        rows = order(summary["forecaster"].unique())
        cols = sorted(summary["nature"].astype(str).unique())
        grid = means.reindex(index=rows, columns=cols)
        values = grid.to_numpy(float)
        # a paper's column, or its full width where the row labels, the colorbar and a cell of 0.42 in for
        # each nature (seven 6 pt digits) do not fit the column
        labels = 0.05 * max(map(len, rows)) + 0.35
        wide = labels + 1.1 + 0.42 * len(cols) > COLUMN_WIDTH
        size = (FULL_WIDTH if wide else COLUMN_WIDTH, max(1.6, 1.0 + 0.22 * len(rows)))
        fig, ax = _axes(ax, size)
        finite = values[np.isfinite(values)]
        scale, unit = _cell_scale(finite)
        norm, extend, note = _color_norm(finite, scale)
        cmap = mpl.colormaps["viridis"].with_extremes(bad="0.85")
        cells = {}  # (row, column) -> the cell's text (its number, and F where a seed forfeited), a forfeit
        for i, fc in enumerate(rows):
            for j, nat in enumerate(cols):
                if (fc, nat) in forfeits.index:
                    v = values[i, j]
                    any_f, all_f = forfeits.loc[(fc, nat)]
                    text = "F" if all_f else (sig3(v / scale) if np.isfinite(v) else "--") + (" F" if any_f else "")
                    cells[i, j] = (text, any_f)
        longest = max((len(text) for text, _ in cells.values()), default=1)
        # every text fits its cell, in the data's own unit: the cell's width (the figure's, less the row
        # labels, the axis label and the colorbar) in 6 pt digits (0.053 in each)
        cell = (size[0] - labels - 0.75) / max(len(cols), 1)
        fontsize = 6 * min(1.0, max(cell / 0.053 * 0.92, 3) / longest)
        # no resampling: one flat cell per value (in PDF the 11 x 9 pixels themselves)
        im = ax.imshow(np.ma.masked_invalid(values), cmap=cmap, norm=norm, aspect="auto", interpolation="none")
        _draw_cells(ax, cells, values, rows, cols, cmap, norm, fontsize)
        ax.set_xticks(
            range(len(cols)), [c.replace("_", " ") for c in cols], rotation=35, ha="right", rotation_mode="anchor"
        )
        ax.set_yticks(range(len(rows)), [r.replace("_", " ") for r in rows])  # as every other figure names them
        ax.set_xlabel("nature")
        ax.set_ylabel("forecaster")
        ax.tick_params(length=0)
        for s in ax.spines.values():
            s.set_visible(False)
        cb = _colorbar(fig, ax, im, norm, extend, scale, unit + note)
        way = {"min": "; lower is better", "max": "; higher is better"}.get(direction(metric) or "", "")
        T = f", T = {int(summary['T'].max())}" if "T" in summary and summary["T"].notna().any() else ""
        title = f"{METRIC_LABELS.get(metric, metric)} ({metric}){T}, mean over seeds{way}"
        if own:  # our own figure: the title over its whole width
            fig.suptitle("\n".join(_lines(title, size[0] - 0.2, 0.052)), fontsize=7)
        else:
            ax.set_title(title, fontsize=7, loc="left")
        cb.ax.tick_params(labelsize=6)
    return fig


def _draw_cells(ax: Axes, cells: dict, values: np.ndarray, rows: list, cols: list, cmap, norm, fontsize: float) -> None:
    """Each cell's text (white on a dark color), hatched where a seed forfeited."""
    for (i, j), (text, any_f) in cells.items():
        v, fc, nat = values[i, j], rows[i], cols[j]
        if any_f:
            ax.add_patch(
                Rectangle(
                    (j - 0.5, i - 0.5),
                    1,
                    1,
                    fill=False,
                    hatch="///",
                    edgecolor="0.3",
                    linewidth=0,
                    gid=f"forfeit:{fc}:{nat}",
                )
            )
        light = np.isfinite(v) and np.mean(cmap(norm(v))[:3]) < 0.5
        ax.text(
            j,
            i,
            text,
            ha="center",
            va="center",
            fontsize=fontsize,
            color="white" if light else "black",
            gid=f"value:{fc}:{nat}",
            in_layout=False,
        )  # inside its cell: nothing to lay out


def _colorbar(fig: Figure, ax: Axes, im, norm: Normalize, extend: str, scale: float, label: str):
    """The heatmap's colorbar, in the cells' unit (``scale``), its decades as on every log axis."""
    cb = fig.colorbar(im, ax=ax, fraction=0.06, pad=0.02, extend=extend)
    if isinstance(norm, SymLogNorm):  # 0, then the decades of the log part (none inside the linear sliver)
        k = np.arange(np.ceil(np.log10(norm.linthresh)), np.floor(np.log10(norm.vmax)) + 1)
        cb.set_ticks([0.0, *10.0**k])
    if isinstance(norm, (LogNorm, SymLogNorm)):  # decades written as on every log axis, in the cells' unit
        cb.ax.yaxis.set_major_formatter(_DecadeFormatter(scale))
    elif scale != 1.0:  # the colorbar in the cells' unit
        cb.ax.yaxis.set_major_formatter(FuncFormatter(lambda v, pos: f"{v / scale:g}"))
    cb.set_label("mean over seeds" + label, fontsize=6.5)
    return cb


def _color_norm(finite: np.ndarray, scale: float = 1.0) -> tuple[Normalize, str, str]:
    """The heatmap's color scale: log when the bulk of the values (their quartiles) spans more than a decade,
    zeros at the bottom of it; else linear, clipped to the values that are not outliers (Tukey's fences, 1.5
    interquartile ranges beyond the quartiles), so that a few outliers, however far, do not wash out the rest
    (the colorbar's arrows and label say so). Returns (norm, colorbar extend, note); the note's values are
    divided by ``scale`` (the unit of the heatmap's cells, :func:`_cell_scale`).

    Examples
    --------
    >>> norm, extend, note = _color_norm(np.array([0.01, 0.012, 0.011, 0.013, 0.24]))
    >>> float(norm.vmax), extend
    (0.013, 'max')
    """
    if not finite.size:
        return Normalize(0, 1), "neither", ""
    lo, hi = float(finite.min()), float(finite.max())
    pos = finite[finite > 0]
    q1p, q3p = np.percentile(pos, [25, 75]) if pos.size else (1.0, 1.0)
    decades = pos.size >= 2 and q3p / q1p > 10 and hi / pos.min() > 100  # the bulk, not a few outliers
    if lo > 0 and decades:
        return LogNorm(lo, hi), "neither", "\nlog color scale"
    if lo == 0 and decades:  # zeros beside values over decades: log above the least
        return (
            SymLogNorm(linthresh=float(pos.min()), linscale=0.25, vmin=0.0, vmax=hi),
            "neither",
            f"\nlog color scale from {_fmt(float(pos.min()) / scale, 2)}\n(0 at the bottom)",
        )
    q1, q3 = np.percentile(finite, [25, 75])
    inside = finite[(finite >= q1 - 1.5 * (q3 - q1)) & (finite <= q3 + 1.5 * (q3 - q1))]
    if inside.size >= 2 and (inside.min() > lo or inside.max() < hi):
        a, b = float(inside.min()), float(inside.max())
        extend = {(True, True): "both", (True, False): "min", (False, True): "max"}[(a > lo, b < hi)]
        return Normalize(a, b), extend, f"\ncolor clipped to [{_fmt(a / scale, 2)}, {_fmt(b / scale, 2)}]"
    return Normalize(lo, hi), "neither", ""


def _cell_scale(finite: np.ndarray) -> tuple[float, str]:
    """One number format for every cell: three significant digits, written out (never 5.9e-05 beside
    0.0101), and a common power of ten (said
    in the colorbar's label) when the values are below 0.001 or from 10000 on.

    Examples
    --------
    >>> _cell_scale(np.array([8.62e-4, 1.2e-4]))
    (0.0001, ' (\u00d710\u207b\u2074)')
    >>> _cell_scale(np.array([0.5, 0.02]))
    (1.0, '')
    """
    nz = np.abs(finite[finite != 0]) if finite.size else finite
    if not nz.size or 1e-3 <= nz.max() < 1e4:  # three significant digits read well from 0.00100 to 9999
        return 1.0, ""
    e = int(np.floor(np.log10(nz.max())))
    return 10.0**e, f" (\u00d7{_power_of_ten(10.0**e)})"
