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
from matplotlib.lines import Line2D

from arena.plots.labels import display_name, run_note
from arena.plots.style import _RC, COLUMN_WIDTH, FIGSIZE, METRIC_LABELS, PALETTE, _lines, _new_figure, _plain_log_ticks
from arena.sequential import threshold, verdict

#: The colors of a comparison's verdicts (:func:`arena.compare.verdict`).
_VERDICT_COLORS = {"A better": PALETTE[0], "B better": PALETTE[1], "undecided": "0.6"}
#: Up to this many curves (natures and seeds), the confidence sequences are drawn against t; more
#: would overlap: their final values are drawn as intervals, one row each, instead.
_MAX_CURVES = 3


def comparison_figure(curves: pd.DataFrame, alpha: float = 0.05, final: pd.DataFrame | None = None) -> Figure:
    """The anytime-valid comparison of A and B (:func:`arena.compare.compare`'s ``curves`` and, when given,
    its ``final`` rows), a paper's single column wide. With several natures, each nature's first seed.

    Up to :data:`_MAX_CURVES` curves, two panels against rounds t (log axis), one color per curve:
    above, the running mean difference A - B of the score with its confidence sequence as a band
    (below zero: A is better); below, the e-process against "A is no better than B" (solid) and
    against "B is no better than A" (dotted) on a log axis, with the threshold 2/alpha dashed.

    With more, the curves would overlap: above, one row per nature, the confidence sequence at the
    last round as an interval around the mean difference, colored by the verdict (A better, B
    better, undecided; the round of a verdict in the row's label); below, the e-processes of the
    natures with a verdict in its color, named at their end, and the others in gray (for
    calibration, which has no e-process, the rows only).

    Calibration has no e-process: its figure has no lower panel. The title says the game, T, the pair, the
    score and the seeds drawn. The band of a
    confidence sequence never has zero width (it is no interval over seeds)."""
    n_seeds = int(curves["seed"].nunique())
    first_seed = curves.groupby("nature")["seed"].transform("min")
    many = curves["nature"].nunique() > 1
    if many:  # one curve per nature: its first seed (the table has them all)
        curves = curves.loc[curves["seed"] == first_seed]
    groups = list(curves.groupby(["nature", "seed"], sort=True))
    first = curves.iloc[0]
    metric = METRIC_LABELS.get(first["metric"], first["metric"])
    if first["metric"] == "calibration":
        metric = "|calibration in the large|"
    title = _comparison_title(curves, first, metric, alpha, n_seeds if not many else 0)
    with mpl.rc_context(_RC):
        if len(groups) > _MAX_CURVES:
            return _rows_figure(groups, _finals(groups, alpha, final), alpha, metric, title)
        e_values = any(np.isfinite(g["e_a_better"]).any() for _, g in groups)  # none for calibration
        fig = _new_figure((FIGSIZE[0], FIGSIZE[1] * (1.7 if e_values else 1.1)))
        top, bottom = fig.subplots(2, 1, sharex=True) if e_values else (fig.add_subplot(), None)
        for i, ((nature, seed), g) in enumerate(groups):
            color = PALETTE[i % len(PALETTE)]
            label = display_name(nature) + ("" if many else f" (seed {seed})")
            t = g["t"].to_numpy(float)
            top.plot(t, g["mean"], color=color, label=label, gid=f"mean:{nature}:{seed}")
            top.fill_between(
                t,
                g["low"],
                g["high"],
                color=color,
                alpha=0.3 / max(1, len(groups)) ** 0.5,
                linewidth=0,
                gid=f"cs:{nature}:{seed}",
            )
            if bottom is not None:
                bottom.plot(t, g["e_a_better"], color=color, gid=f"e_a:{nature}:{seed}")
                bottom.plot(t, g["e_b_better"], color=color, linestyle=":", gid=f"e_b:{nature}:{seed}")
        top.axhline(0.0, color="0.6", linewidth=0.6, zorder=0)
        top.set_ylabel(f"{metric}\nA \u2212 B (band: CS)")
        fig.suptitle("\n".join(_lines(title, COLUMN_WIDTH - 0.2)), fontsize=8)  # over the figure, not the panel
        fig.legend(*top.get_legend_handles_labels(), loc="outside lower center", ncol=3, frameon=False, fontsize=6.5)
        if bottom is not None:
            _e_axes(bottom, alpha)
        else:  # no e-process (calibration): one panel, not an empty one
            top.set_xscale("log")
            _plain_log_ticks(top.xaxis)
            top.set_xlabel("round t (log scale)")
    return fig


def _comparison_title(curves: pd.DataFrame, first: pd.Series, metric: str, alpha: float, n_seeds: int) -> str:
    """The game, T, the pair, the score, the level and the seeds drawn: ``n_seeds``, or (0) one seed of each
    nature (its first: the table has them all)."""
    run = run_note(curves, seeds=False)
    pair = f"{display_name(first['forecaster_a'])} (A) vs {display_name(first['forecaster_b'])} (B) on {metric}"
    if n_seeds:
        which = f"{n_seeds} seed" + ("s" if n_seeds != 1 else "")
    else:
        seeds = sorted(curves["seed"].unique())
        which = f"seed {seeds[0]} of each nature" if len(seeds) == 1 else "the first seed of each nature"
    return (f"{run}: " if run else "") + f"{pair}, {1 - alpha:.0%} CS, {which}"


def _finals(groups: list, alpha: float, final: pd.DataFrame | None) -> list[dict]:
    """Per (nature, seed) of ``groups``: the last round's mean, low and high, the verdict and its round,
    from ``final`` where it has the row (the exact round of the verdict), else from the curve (its
    checkpoints)."""
    out = []
    for (nature, seed), g in groups:
        row = (
            final.loc[(final["nature"] == nature) & (final["seed"] == seed)]
            if final is not None and {"nature", "seed", "verdict", "decided_at"} <= set(final.columns)
            else pd.DataFrame()
        )
        last = g.iloc[-1]
        said, at = (row["verdict"].iloc[0], float(row["decided_at"].iloc[0])) if len(row) else verdict(g, alpha)
        out.append(
            {
                "nature": nature,
                "seed": seed,
                "t": float(last["t"]),
                "mean": float(last["mean"]),
                "low": float(last["low"]),
                "high": float(last["high"]),
                "verdict": said,
                "at": at,
            }
        )
    return out


def _rows_figure(groups: list, finals: list[dict], alpha: float, metric: str, title: str) -> Figure:
    """:func:`comparison_figure` for many natures: the final intervals as rows above, the e-processes below."""
    order = sorted(range(len(finals)), key=lambda i: (finals[i]["mean"], str(finals[i]["nature"])))
    rows = 0.13 * len(finals)
    e_values = any(np.isfinite(g["e_a_better"]).any() for _, g in groups)  # none for calibration: no lower panel
    fig = _new_figure((COLUMN_WIDTH, rows + (3.0 if e_values else 1.4)))
    top, bottom = (
        fig.subplots(2, 1, gridspec_kw={"height_ratios": [rows + 0.5, 1.6]}) if e_values else (fig.add_subplot(), None)
    )
    labels = []
    one_nature = len({str(f["nature"]) for f in finals}) == 1  # then the rows are its seeds
    for y, i in enumerate(order):
        f = finals[i]
        color = _VERDICT_COLORS.get(f["verdict"], "0.6")
        top.plot(
            [f["low"], f["high"]],
            [y, y],
            color=color,
            linewidth=1.6,
            solid_capstyle="butt",
            gid=f"cs:{f['nature']}:{f['seed']}",
        )
        top.plot(
            [f["mean"]],
            [y],
            color=color,
            marker="o",
            markersize=3.5,
            markeredgecolor="white",
            markeredgewidth=0.4,
            linestyle="none",
            gid=f"mean:{f['nature']}:{f['seed']}",
        )
        decided = f["verdict"] != "undecided" and np.isfinite(f["at"])
        labels.append(_row_name(f, one_nature) + (f" (t = {int(f['at'])})" if decided else ""))
    top.axvline(0.0, color="0.4", linewidth=0.6, zorder=0)
    top.set_yticks(range(len(order)), labels, fontsize=6)
    top.set_ylim(-0.7, len(order) - 0.3)
    top.invert_yaxis()
    top.tick_params(axis="y", length=0)
    T = int(max(f["t"] for f in finals))
    top.set_xlabel(f"{metric}: A \u2212 B at t = {T}\n(bar: its CS; left of 0: A better)", fontsize=6.5)
    fig.suptitle("\n".join(_lines(title, COLUMN_WIDTH - 0.2)), fontsize=8)
    _verdict_legend(fig, finals)
    if bottom is None:
        return fig
    _draw_e_processes(bottom, groups, finals, one_nature)
    _e_axes(bottom, alpha, gray_note=True)
    return fig


def _verdict_legend(fig: Figure, finals: list[dict]) -> None:
    """The legend of the verdicts drawn, below the figure."""
    present = [v for v in _VERDICT_COLORS if any(f["verdict"] == v for f in finals)]  # the verdicts drawn
    handles = [
        Line2D(
            [],
            [],
            color=_VERDICT_COLORS[v],
            linewidth=1.6,
            marker="o",
            markersize=3.5,
            markeredgecolor="white",
            markeredgewidth=0.4,
        )
        for v in present
    ]
    names = [f"{v} (from the round t named)" if v != "undecided" else "undecided (gray)" for v in present]
    fig.legend(
        handles,
        names,
        loc="outside lower center",
        ncol=2,
        frameon=False,
        fontsize=6,
        handlelength=1.4,
        columnspacing=0.8,
    )


def _draw_e_processes(bottom, groups: list, finals: list[dict], one_nature: bool) -> None:
    """The e-processes of each nature: in its verdict's color and named at their end where there is a verdict,
    else in gray."""
    for ((nature, seed), g), f in zip(groups, finals, strict=False):  # finals come in the groups' order (_finals)
        if not np.isfinite(g["e_a_better"]).any():
            continue
        t = g["t"].to_numpy(float)
        decided = f["verdict"] != "undecided"
        color, width = (_VERDICT_COLORS[f["verdict"]], 1.0) if decided else ("0.75", 0.6)
        bottom.plot(
            t, g["e_a_better"], color=color, linewidth=width, gid=f"e_a:{nature}:{seed}", zorder=3 if decided else 2
        )
        bottom.plot(
            t,
            g["e_b_better"],
            color=color,
            linewidth=width,
            linestyle=":",
            gid=f"e_b:{nature}:{seed}",
            zorder=3 if decided else 2,
        )
        if decided:  # named at its end: the verdict colors alone do not tell two natures apart
            end = g["e_a_better"] if f["verdict"] == "A better" else g["e_b_better"]
            bottom.annotate(
                _row_name(f, one_nature),
                (t[-1], float(end.iloc[-1])),
                xytext=(2, 0),
                textcoords="offset points",
                fontsize=6,
                color=color,
                va="center",
                ha="left",
                annotation_clip=False,
            )


def _row_name(final: dict, by_seed: bool) -> str:
    """A row's name: its nature, or its seed where every row is of one nature."""
    return f"seed {final['seed']}" if by_seed else display_name(final["nature"])


def _e_axes(ax, alpha: float, gray_note: bool = False) -> None:
    """The e-value panel's axes: log scales, the threshold 2/alpha dashed and named, the labels."""
    ax.set_yscale("log")
    ax.set_ylim(top=max(ax.get_ylim()[1], 5 * threshold(alpha)))  # the threshold's label inside the axes
    ax.axhline(threshold(alpha), color="0.3", linestyle="--", linewidth=0.8, gid="threshold")
    ax.annotate(
        f"2/\u03b1 = {threshold(alpha):g}: a verdict",
        (0.02, threshold(alpha)),
        xycoords=ax.get_yaxis_transform(),
        xytext=(0, 1.5),
        textcoords="offset points",
        fontsize=6,
        color="0.3",
        va="bottom",
        ha="left",
    )
    if gray_note:
        ax.set_ylabel("e-value")
        ax.set_title("e-values (solid: A better, dotted: B better)", fontsize=6.5)
    else:
        ax.set_ylabel("e-value (solid: A better,\ndotted: B better)")
    ax.set_xscale("log")
    _plain_log_ticks(ax.xaxis)
    ax.set_xlabel("round t (log scale)")


__all__ = ["comparison_figure"]
