"""The figure of an anytime-valid comparison (:mod:`arena.compare`): the running mean difference of
scores with its confidence sequence, and the e-processes, against rounds t.

Examples
--------
>>> c = pd.DataFrame({"nature": "n", "seed": 0, "t": [1, 10, 100], "mean": [0.1, -0.05, -0.04],
...                   "low": [-1.0, -0.5, -0.08], "high": [1.0, 0.4, -0.01], "e_a_better": [1.0, 2.0, 40.0],
...                   "e_b_better": [1.0, 0.5, 0.01], "forecaster_a": "a", "forecaster_b": "b", "metric": "brier"})
>>> len(comparison_figure(c).axes)
2
"""

from __future__ import annotations

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from arena.plots.style import _RC, FIGSIZE, METRIC_LABELS, PALETTE, _new_figure, _plain_log_ticks


def comparison_figure(curves: pd.DataFrame, alpha: float = 0.05) -> Figure:
    """Two panels against rounds t (log axis), one color per nature (and seed): above, the running
    mean difference A - B of the score with its confidence sequence as a band (below zero: A is
    better); below, the e-process against "A is no better than B" (solid) and against "B is no
    better than A" (dotted) on a log axis, with the threshold 1/alpha dashed. For calibration
    (no e-process) the lower panel says so. With several natures, each nature's first seed.
    The band of a confidence sequence never has zero width (it is no interval over seeds)."""
    first_seed = curves.groupby("nature")["seed"].transform("min")
    many = curves["nature"].nunique() > 1
    if many:  # one curve per nature: its first seed (the table has them all)
        curves = curves.loc[curves["seed"] == first_seed]
    with mpl.rc_context(_RC):
        fig = _new_figure((FIGSIZE[0], FIGSIZE[1] * 1.7))
        top, bottom = fig.subplots(2, 1, sharex=True)
        groups = list(curves.groupby(["nature", "seed"], sort=True))
        for i, ((nature, seed), g) in enumerate(groups):
            color = PALETTE[i % len(PALETTE)]
            label = str(nature).replace("_", " ") + ("" if many else f" (seed {seed})")
            t = g["t"].to_numpy(float)
            top.plot(t, g["mean"], color=color, label=label, gid=f"mean:{nature}:{seed}")
            top.fill_between(t, g["low"], g["high"], color=color, alpha=0.3 / max(1, len(groups)) ** 0.5,
                             linewidth=0, gid=f"cs:{nature}:{seed}")
            if np.isfinite(g["e_a_better"]).any():
                bottom.plot(t, g["e_a_better"], color=color, gid=f"e_a:{nature}:{seed}")
                bottom.plot(t, g["e_b_better"], color=color, linestyle=":", gid=f"e_b:{nature}:{seed}")
        top.axhline(0.0, color="0.6", linewidth=0.6, zorder=0)
        first = curves.iloc[0]
        metric = METRIC_LABELS.get(first["metric"], first["metric"])
        if first["metric"] == "calibration":
            metric = "|calibration in the large|"
        top.set_ylabel(f"{metric}: A - B")
        top.set_title(f"{first['forecaster_a']} (A) vs {first['forecaster_b']} (B), {1 - alpha:.0%} CS"
                      + (", first seed" if many else ""))
        fig.legend(*top.get_legend_handles_labels(), loc="outside lower center", ncol=3, frameon=False, fontsize=5.5)
        if bottom.lines:
            bottom.set_yscale("log")
            bottom.axhline(1 / alpha, color="0.3", linestyle="--", linewidth=0.8, gid="threshold")
            bottom.set_ylabel("e-value (solid: A better,\ndotted: B better)")
        else:
            bottom.text(0.5, 0.5, "no e-process for calibration", ha="center", va="center",
                        transform=bottom.transAxes, color="0.4")
        bottom.set_xscale("log")
        _plain_log_ticks(bottom.xaxis)
        bottom.set_xlabel("rounds t")
    return fig


__all__ = ["comparison_figure"]
