"""The leaderboard heatmap: forecasters against natures, the mean of a metric over seeds in each cell."""

from __future__ import annotations

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from arena.aggregate import direction, seed_stats
from arena.answer import sig3
from arena.plots.common import _clean, _last_T, _no_data
from arena.plots.labels import display_name, run_note
from arena.plots.style import (
    _RC,
    COLUMN_WIDTH,
    FULL_WIDTH,
    METRIC_LABELS,
    _axes,
    _lines,
    _power_of_ten,
    order,
)


def leaderboard_heatmap(summary: pd.DataFrame, metric: str = "smce_over_T", ax: Axes | None = None) -> Figure:
    """Forecaster x nature heatmap of the mean of ``metric`` over seeds (:func:`arena.aggregate.seed_stats`).

    Cells are annotated with their value and colored by their rank within their nature (viridis, 1: the best,
    darkest; ties share the best rank): natures differ in difficulty by far more than forecasters do, so that
    a color scale of the values painted most cells alike, and an outlier anywhere washed out the rest. Forfeited
    matchups are left out of the mean; a cell with a forfeit is hatched and marked "F" (only "F" when every seed
    forfeited). With several horizons T, the largest.
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
        last = _last_T(summary)
        st = seed_stats(last, [metric]).groupby(["forecaster", "nature"])
        means = st["mean"].mean().unstack("nature")
        forfeits = pd.DataFrame({"any": st["n_forfeit"].max() > 0, "all": st["n"].max() == 0})
        rows = order(summary["forecaster"].unique())
        cols = sorted(summary["nature"].astype(str).unique())
        grid = means.reindex(index=rows, columns=cols)
        values = grid.to_numpy(float)
        ranks = rank_within_columns(values, direction(metric) == "max")
        # a paper's column, or its full width where the row labels, the colorbar and a cell of 0.42 in for
        # each nature (seven 6 pt digits) do not fit the column
        labels = 0.05 * max(map(len, rows)) + 0.35
        wide = labels + 1.1 + 0.42 * len(cols) > COLUMN_WIDTH
        size = (FULL_WIDTH if wide else COLUMN_WIDTH, max(1.9, 1.1 + 0.22 * len(rows)))
        fig, ax = _axes(ax, size)
        scale, unit = _cell_scale(values[np.isfinite(values)])
        norm = Normalize(1, max(len(rows), 2))
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
        im = ax.imshow(np.ma.masked_invalid(ranks), cmap=cmap, norm=norm, aspect="auto", interpolation="none")
        _draw_cells(ax, cells, ranks, rows, cols, cmap, norm, fontsize)
        ax.set_xticks(
            range(len(cols)), [display_name(c) for c in cols], rotation=35, ha="right", rotation_mode="anchor"
        )
        ax.set_yticks(range(len(rows)), [display_name(r) for r in rows])  # as every other figure names them
        ax.set_xlabel("nature")
        ax.set_ylabel("forecaster")
        ax.tick_params(length=0)
        for s in ax.spines.values():
            s.set_visible(False)
        cb = fig.colorbar(im, ax=ax, fraction=0.06, pad=0.02)
        cb.set_ticks(sorted({1, *range(1, len(rows) + 1, max(1, len(rows) // 5)), len(rows)}))
        cb.set_label("rank within the nature\n(1: the best)", fontsize=6.5)
        cb.ax.tick_params(labelsize=6)
        cb.ax.invert_yaxis()  # the best at the top, as a leaderboard reads
        way = {"min": "; lower is better", "max": "; higher is better"}.get(direction(metric) or "", "")
        title = f"{run_note(last)}: {METRIC_LABELS.get(metric, metric)}{unit}, mean over seeds{way}"
        if own:  # our own figure: the title over its whole width
            fig.suptitle("\n".join(_lines(title, size[0] - 0.2, 0.052)), fontsize=7)
        else:
            ax.set_title(title, fontsize=7, loc="left")
    return fig


def rank_within_columns(values: np.ndarray, higher_is_better: bool = False) -> np.ndarray:
    """Each cell's rank within its column (1: the best; ties share the best rank; NaN stays NaN).

    Examples
    --------
    >>> rank_within_columns(np.array([[0.3, 5.0], [0.1, np.nan], [0.3, 1.0]])).tolist()
    [[2.0, 2.0], [1.0, nan], [2.0, 1.0]]
    """
    signed = -values if higher_is_better else values
    return pd.DataFrame(signed).rank(axis=0, method="min").to_numpy(float)


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
