"""Figures of the red team: attack versus certificate, and the cross-attack matrix.

Pure functions of the tables of :mod:`arena.redteam.table`; each takes ``ax=None`` and returns the
figure. A forecaster's colour and marker are those of :func:`~arena.plots.style.forecaster_styles`
(derived from the forecasters in the table), so an attack and its forecaster's certified bound
share a colour.

References
----------
Perdomo & Recht, "In Defense of Defensive Forecasting", §8.
"""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib import ticker
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from arena.plots.common import _legend, _no_data
from arena.plots.style import _RC, FIGSIZE, METRIC_LABELS, _axes, _plain_log_ticks, order, styles_for
from arena.redteam.table import worst_found


def attack_vs_certificate(
    table: pd.DataFrame, metric: str = "smce_over_T", ax: Axes | None = None, styles: Mapping[str, dict] | None = None
) -> Figure:
    """Per forecaster, the worst ``metric`` found against T (log–log, solid with markers) and, where the
    forecaster claims a certificate that bounds it, the certified bound of the same runs (dashed, the
    same colour, in the legend as "<forecaster> bound"). An attack must stay at or below its
    forecaster's dashed line. The legend goes below the axes when the figure is drawn here.

    ``table``: :func:`arena.redteam.table.attack_table` (its best attack per forecaster and T is drawn).

    Examples
    --------
    >>> t = pd.DataFrame({"metric": "smce_over_T", "forecaster": ["k29", "k29", "ogd"], "T": [100, 1000, 1000],
    ...                   "value": [0.05, 0.017, 0.2], "certificate": ["smce", "smce", None],
    ...                   "cert_bound": [0.07, 0.023, np.nan]})
    >>> fig = attack_vs_certificate(t)
    >>> sorted(ln.get_gid() for ln in fig.axes[0].get_lines())
    ['attack:k29', 'attack:ogd', 'bound:k29']
    """
    with mpl.rc_context(_RC):
        own = ax is None
        fig, ax = _axes(ax)
        df = table.loc[table["metric"] == metric].dropna(subset=["value"])
        if df.empty:
            _no_data(ax, f"no attack on {metric}")
            return fig
        df = worst_found(df)
        styles = styles_for(df["forecaster"].unique(), styles)
        for name in order(df["forecaster"].unique()):
            g = df.loc[df["forecaster"] == name].sort_values("T")
            color = styles[name]["color"]
            ax.plot(
                g["T"],
                g["value"].clip(lower=1e-9),
                color=color,
                marker=styles[name]["marker"],
                label=name,
                gid=f"attack:{name}",
            )
            b = g.dropna(subset=["cert_bound"])
            if len(b):
                ax.plot(
                    b["T"],
                    b["cert_bound"],
                    color=color,
                    ls="--",
                    lw=1.0,
                    marker=styles[name]["marker"],
                    mfc="none",
                    label=f"{name} bound",
                    gid=f"bound:{name}",
                )
        ax.set_xscale("log")
        ax.set_yscale("log", nonpositive="mask")
        _plain_log_ticks(ax.xaxis)
        _plain_log_ticks(ax.yaxis)
        ax.yaxis.set_major_locator(ticker.LogLocator(subs=(1.0, 2.0, 5.0)))  # values span about a decade
        ax.set_xlabel("rounds T")
        ax.set_ylabel(f"worst {METRIC_LABELS.get(metric, metric)} found")
        Ts = sorted(df["T"].unique())
        when = f", T = {int(Ts[0])}" if len(Ts) == 1 else ""
        bounds = any(str(ln.get_gid()).startswith("bound:") for ln in ax.get_lines())
        ax.set_title(
            f"worst {METRIC_LABELS.get(metric, metric)} found{when}"
            + ("\n(hollow, dashed: the forecaster's certified bound)" if bounds else ""),
            fontsize=7,
        )
        if own:
            fig.set_size_inches(FIGSIZE[0] * 1.4, FIGSIZE[1])
        _legend(ax, outside=own)
        return fig


def cross_attack_heatmap(matrix: pd.DataFrame, ax: Axes | None = None) -> Figure:
    """The cross-attack matrix: rows the forecaster an attack was found against, columns the forecaster it
    is played against, cells the metric reached (``matrix``: :func:`arena.redteam.table.cross_attack`;
    the best searcher per cell).

    Examples
    --------
    >>> m = pd.DataFrame({"attacker": ["a", "a", "b", "b"], "victim": ["a", "b", "a", "b"], "metric": "smce_over_T",
    ...                   "value": [0.3, 0.1, 0.05, 0.2]})
    >>> cross_attack_heatmap(m).axes[0].get_images()[0].get_array().tolist()
    [[0.3, 0.1], [0.05, 0.2]]
    """
    with mpl.rc_context(_RC):
        fig, ax = _axes(ax)
        if matrix.empty:
            _no_data(ax, "no cross-attack")
            return fig
        m = matrix.groupby(["attacker", "victim"])["value"].max().unstack("victim")
        m = m.reindex(index=order(m.index), columns=order(m.columns))
        values = m.to_numpy(float)
        im = ax.imshow(values, cmap="viridis", aspect="auto")
        ax.set_xticks(range(m.shape[1]), m.columns, rotation=60, ha="right", fontsize=6)
        ax.set_yticks(range(m.shape[0]), m.index, fontsize=6)
        ax.set_xlabel("played against")
        ax.set_ylabel("attack found against")
        top = np.nanmax(values)
        for (i, j), v in np.ndenumerate(values):
            if np.isfinite(v):
                ax.text(
                    j, i, f"{v:.2g}", ha="center", va="center", fontsize=5, color="white" if v < top / 2 else "black"
                )
        metric = str(matrix["metric"].iloc[0])
        fig.colorbar(im, ax=ax, label=METRIC_LABELS.get(metric, metric))
        Ts = sorted(matrix["T"].unique()) if "T" in matrix else []
        when = f", T = {', '.join(str(int(t)) for t in Ts)}" if Ts else ""
        ax.set_title(f"cross-attack: {METRIC_LABELS.get(metric, metric)} reached{when} (best searcher)", fontsize=7)
        return fig
