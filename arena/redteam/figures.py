"""Figures of the red team: attack versus certificate, and the cross-attack matrix.

Pure functions of the tables of :mod:`arena.redteam.table`; each takes ``ax=None`` and returns
the figure.

References
----------
SPEC §5 (red team).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from arena.plots import _axes, _no_data, _order, _plain_log_ticks, forecaster_style

_LABELS = {"smce_over_T": "worst smCE / T found", "coverage_error": "worst |coverage − q| found",
           "regret_experts": "worst regret to the best expert found"}


def attack_vs_certificate(table: pd.DataFrame, metric: str = "smce_over_T", ax=None):
    """Per forecaster, the worst ``metric`` found against T (log–log, solid with markers) and, where
    the forecaster claims a certificate that bounds it, the certified bound of the same runs
    (dashed, same colour, labelled). An attack must stay below its forecaster's dashed line.

    ``table``: :func:`arena.redteam.table.attack_table` (its best attack per forecaster and T is drawn).
    """
    from arena.redteam.table import worst_found

    fig, ax = _axes(ax)
    df = worst_found(table.loc[table["metric"] == metric]) if not table.empty else table
    if df.empty:
        _no_data(ax, f"no attack on {metric}")
        return fig
    for name in _order(df["forecaster"].unique()):
        g = df.loc[df["forecaster"] == name].sort_values("T")
        style = forecaster_style(name)
        ax.plot(g["T"], g["value"].clip(lower=1e-6), color=style["color"], marker=style["marker"], ms=4, lw=1.2,
                label=name)
        b = g.dropna(subset=["cert_bound"])
        if len(b):
            ax.plot(b["T"], b["cert_bound"], color=style["color"], ls="--", lw=1.0)
            ax.annotate(f"{name}: {b['certificate'].iloc[-1]} bound", (b["T"].iloc[-1], b["cert_bound"].iloc[-1]),
                        textcoords="offset points", xytext=(-4, 4), ha="right", fontsize=6, color=style["color"])
    ax.set_xscale("log")
    ax.set_yscale("log", nonpositive="mask")
    _plain_log_ticks(ax.xaxis)
    _plain_log_ticks(ax.yaxis)
    ax.set_xlabel("rounds T")
    ax.set_ylabel(_LABELS.get(metric, f"worst {metric} found"))
    ax.set_title("attack (solid) versus certificate (dashed)", fontsize=8)
    ax.legend(fontsize=6, frameon=False, ncols=2)
    return fig


def cross_attack_heatmap(matrix: pd.DataFrame, ax=None):
    """The cross-attack matrix: rows the forecaster an attack was found against, columns the
    forecaster it is played against, cells the metric reached (``matrix``:
    :func:`arena.redteam.table.cross_attack`, best searcher per cell)."""
    fig, ax = _axes(ax)
    if matrix.empty:
        _no_data(ax, "no cross-attack")
        return fig
    m = matrix.groupby(["attacker", "victim"])["value"].max().unstack("victim")
    m = m.reindex(index=_order(m.index), columns=_order(m.columns))
    im = ax.imshow(m.to_numpy(float), cmap="viridis", aspect="auto")
    ax.set_xticks(range(m.shape[1]), m.columns, rotation=60, ha="right", fontsize=6)
    ax.set_yticks(range(m.shape[0]), m.index, fontsize=6)
    ax.set_xlabel("played against")
    ax.set_ylabel("attack found against")
    for (i, j), v in np.ndenumerate(m.to_numpy(float)):
        if np.isfinite(v):
            ax.text(j, i, f"{v:.2g}", ha="center", va="center", fontsize=5,
                    color="white" if v < np.nanmax(m.to_numpy(float)) / 2 else "black")
    fig.colorbar(im, ax=ax, label=str(matrix["metric"].iloc[0]))
    return fig
