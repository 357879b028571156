"""Figures of the experts game (§9): regret to the best expert (common curves), the weights each
forecaster puts on the experts, and the excess risk of online-to-batch predictors.

References
----------
Perdomo & Recht, "In Defense of Defensive Forecasting", §9 (prediction with expert advice).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib as mpl
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from arena.answer import HEADLINE_METRICS
from arena.intervals import mean_ci
from arena.plots.common import (
    _clean,
    _curve_jobs,
    _curves,
    _draw_mean,
    _floor_note,
    _legend,
    _log_floor,
    _no_data,
    _restrict,
    _seed_note,
    _seeds,
    regret_curves,
)
from arena.plots.jobs import Job
from arena.plots.labels import display_name, heading
from arena.plots.style import (
    _BOUND_COLOR,
    _RC,
    COLUMN_WIDTH,
    FULL_WIDTH,
    _axes,
    _new_figure,
    _plain_log_ticks,
    order,
    styles_for,
)

#: Metrics of the experts game: leaderboards and the LaTeX table.
EXPERTS_METRICS = HEADLINE_METRICS["experts"]


def _weight_curves(curves: pd.DataFrame) -> pd.DataFrame:
    """The weight curves of ``curves`` (a row per seed, or moments over seeds: then the first seed's, its value
    as ``value``), with the expert's index."""
    df = _curves(curves)
    if df.empty:
        return df
    w = df.loc[df["metric"].astype(str).str.startswith("weight:")]
    w = w.drop(columns=["seed", "value"], errors="ignore").rename(columns={"first_seed": "seed", "first": "value"})
    return w.assign(expert=w["metric"].str.slice(7).astype(int)) if not w.empty else w


def expert_weights(
    curves: pd.DataFrame, nature: str | None = None, forecasters: Sequence[str] | None = None, ncols: int = 6
) -> Figure:
    """The weights each forecaster puts on the experts against t (log x), one panel per forecaster.

    Curves ``weight:<j>`` of :mod:`arena.games.experts` of one run per forecaster, its first seed at its
    largest T (and, without ``nature``, the first nature of ``curves``): weights are not averaged
    over seeds (where the best expert differs between seeds, a mean splits the weight in a way no
    run played; the other seeds are in ``curves.csv``); expert j is drawn in the j-th color of
    viridis, the same in every panel.

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
        if nature is None and "nature" in w and w["nature"].nunique() > 1:  # one nature's: the first
            nature = min(w["nature"].astype(str).unique())
            w = w.loc[w["nature"].astype(str) == nature]
        seed = None
        if "T" in w and not w.empty:  # one run's weights per forecaster (see above): at its largest T,
            w = w.loc[w["T"] == w.groupby("forecaster")["T"].transform("max")]
        if "seed" in w and not w.empty:  # on its first seed
            w = w.loc[w["seed"] == w.groupby("forecaster")["seed"].transform("min")]
            seed = int(w["seed"].min()) if w["seed"].nunique() == 1 else None
        names = (
            [n for n in order(w["forecaster"].unique()) if forecasters is None or n in forecasters]
            if not w.empty
            else []
        )
        if not names:
            fig, ax = _axes(None)
            _no_data(ax, "expert weights" + (f" for {nature}" if nature else ""))
            return fig
        rows = math.ceil(len(names) / ncols)
        cols = math.ceil(len(names) / rows)  # rows as even as can be: 7 panels are 4 + 3, not 6 + 1
        # a paper's full width; every panel keeps its own tick labels (none is left without)
        fig = _new_figure((FULL_WIDTH if cols > 2 else COLUMN_WIDTH, 1.55 * rows + 0.7))
        axes = fig.subplots(rows, cols, squeeze=False, sharey=True)
        n_exp = int(w["expert"].max()) + 1
        cmap = mpl.colormaps["viridis"]
        for k, name in enumerate(names):
            ax = axes[k // cols][k % cols]
            for j, part in w.loc[w["forecaster"] == name].sort_values("t").groupby("expert"):  # one run: no band
                ax.plot(
                    part["t"],
                    part["value"],
                    color=cmap(j / max(n_exp - 1, 1)),
                    linewidth=0.9,
                    gid=f"weight:{name}:{j}",
                    label=f"expert {j}" if k == 0 else None,
                )
            ax.set_xscale("log")
            _plain_log_ticks(ax.xaxis)
            ax.set_ylim(-0.02, 1.02)
            ax.set_title(display_name(name), fontsize=7)
            ax.tick_params(labelbottom=True)
        for k in range(len(names), rows * cols):
            axes[k // cols][k % cols].set_visible(False)
        fig.supxlabel("round t (log scale)", fontsize=7)
        fig.supylabel("weight on expert j", fontsize=7)
        handles, labels = axes[0][0].get_legend_handles_labels()
        if n_exp <= 8:  # one entry per expert; more: the colorbar of j
            fig.legend(handles, labels, loc="outside right center", ncol=1, frameon=False, fontsize=6.5)
        else:
            sm = mpl.cm.ScalarMappable(norm=mpl.colors.Normalize(0, n_exp - 1), cmap=cmap)
            fig.colorbar(sm, ax=axes.ravel().tolist(), label="expert j", fraction=0.03)
        note = (
            "seed " + str(seed) if seed is not None else "each forecaster's first seed"
        ) + "; weights are not averaged over seeds"
        fig.suptitle(f"{heading(curves, 'expert weights', nature)} ({note})", fontsize=8)
    return fig


def excess_risk_vs_n(table: pd.DataFrame, ax: Axes | None = None, styles: Mapping[str, dict] | None = None) -> Figure:
    """Excess test risk of the online-to-batch predictor against n (log-log), per forecaster and
    comparator class (mean over seeds, band: its 95% interval); where the table has a
    ``bound`` column (log N / (λ n) for ℓ∞ DF), it is dashed in the forecaster's color.

    Parameters
    ----------
    table : rows of :func:`arena.batch.sweep` (forecaster, n, seed, excess_risk[, bound]).
    ax : axes to draw on; a new single-column figure by default.
    styles : color and marker per drawn label (:func:`arena.plots.style.forecaster_styles`); by
        default those of the labels drawn.

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
        # log-log as the rates need; a mean at or below zero is marked on the floor, and the legend says so
        floor = _log_floor(stats["mean"])
        styles = styles_for(stats["forecaster"].unique(), styles)
        for i, name in enumerate(order(stats["forecaster"].unique())):
            _draw_mean(
                ax,
                stats.loc[stats["forecaster"] == name],
                name,
                "size",
                log=True,
                style=styles[name],
                floor=floor,
                phase=i,
            )
            if "bound" in df:
                b = df.loc[(df["forecaster"] == name) & df["bound"].notna()]
                if not b.empty:
                    g = b.groupby("n")["bound"].mean()
                    ax.plot(
                        g.index,
                        g.to_numpy(float),
                        color=styles[name]["color"],
                        linestyle="--",
                        linewidth=0.9,
                        gid=f"bound:{name}",
                    )
        ax.set_xscale("log")
        floored = []
        if floor is not None:
            ax.set_yscale("log")
            _plain_log_ticks(ax.yaxis)
            floored = _floor_note(ax, stats["mean"], floor)
        _plain_log_ticks(ax.xaxis)
        ax.set_xlabel("training examples n (log scale)")
        ax.set_ylabel("excess test risk\n(risk \u2212 best comparator's)")
        ax.set_title(_seed_note(_seeds(stats)), fontsize=7)
        extra = (
            [(Line2D([], [], color=_BOUND_COLOR, linestyle="--", linewidth=0.9), "log N / (λ n)")]
            if "bound" in df and df["bound"].notna().any()
            else []
        )
        _legend(ax, extra + floored, outside=own, loc="best")
    return fig


#: The figures of the experts game, by name (a report's job names its figure).
FIGURES = {
    "regret_experts": lambda curves, nature, styles: regret_curves(
        curves, "regret_experts", nature=nature, styles=styles
    ),
    "expert_weights": lambda curves, nature, styles: expert_weights(curves, nature=nature),
}


def jobs(
    summary: pd.DataFrame,
    curves: pd.DataFrame,
    fig_dir: Path,
    formats: Sequence[str],
    styles: Mapping[str, dict],
) -> list[Job]:
    """The figure jobs of the experts game's matchups: per nature ``regret_experts__<nature>`` (with
    the certified bounds) and ``expert_weights__<nature>``, and leaderboards of :data:`EXPERTS_METRICS`."""
    return _curve_jobs(
        "experts",
        {"regret_experts": "regret_experts", "expert_weights": None},
        EXPERTS_METRICS,
        summary,
        curves,
        fig_dir,
        formats,
        styles,
    )
