"""Figures of the quantile game (§10): rolling coverage, coverage error against T, coverage per
group and against the Lipschitz constant of nature's CDF.

References
----------
Perdomo & Recht, "In Defense of Defensive Forecasting", §10 (quantile regression).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib import ticker
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from arena.answer import HEADLINE_METRICS
from arena.intervals import mean_ci, moments_ci
from arena.plots.common import (
    _clean,
    _curves,
    _draw_curves,
    _edge_marks,
    _facets,
    _floor_note,
    _legend,
    _log_floor,
    _no_data,
    _ok,
    _only,
    _panel_title,
    _restrict,
    _rounds_axes,
    _seed_note,
    _seeds,
)
from arena.plots.jobs import Job
from arena.plots.labels import heading
from arena.plots.style import _BOUND_COLOR, _RC, METRIC_LABELS, _axes, _plain_log_ticks, order
from arena.results import safe_name

#: Metrics of the quantile game: leaderboards and the LaTeX table.
QUANTILE_METRICS = HEADLINE_METRICS["quantile"]


def _target_line(ax: Axes, q: float | None) -> None:
    if q is not None and np.isfinite(q):
        ax.axhline(q, color=_BOUND_COLOR, linewidth=0.7, linestyle=":", zorder=0, gid="target")


def _quantile_level(summary: pd.DataFrame | None) -> float | None:
    if summary is None or "q" not in summary or summary["q"].dropna().empty:
        return None
    return float(summary["q"].dropna().iloc[0])


def rolling_coverage(
    curves: pd.DataFrame,
    nature: str | None = None,
    q: float | None = None,
    ax: Axes | None = None,
    styles: Mapping[str, dict] | None = None,
) -> Figure:
    """Rolling coverage (fraction of y_t <= p_t over the referee's window) against t, per
    forecaster (mean over seeds, band: its 95% interval), with the target q dotted.

    Examples
    --------
    >>> c = pd.DataFrame({"forecaster": "aci", "seed": 0, "t": [50, 100], "metric": "rolling_coverage",
    ...                   "value": [0.88, 0.91]})
    >>> fig = rolling_coverage(c, q=0.9)
    >>> [ln.get_gid() for ln in fig.axes[0].get_lines()]
    ['mean:aci', 'target']
    """
    own = ax is None
    with mpl.rc_context(_RC):
        df = _restrict(_curves(curves), nature=nature)
        obs = df.loc[df["metric"] == "rolling_coverage"] if not df.empty else df
        if obs.empty:
            fig, ax = _axes(ax)
            _no_data(ax, "rolling coverage" + (f" for {nature}" if nature else ""))
            return fig
        stats = moments_ci(obs, ["forecaster", "t"])
        fig, panels = _facets(ax, stats["forecaster"].unique(), styles, sharey=True)
        from arena.games.quantile import ROLLING_FRACTION  # the referee's window: max(10, T // ROLLING_FRACTION)

        window = max(10, int(obs["t"].max()) // ROLLING_FRACTION)
        # robust limits: the middle 98% of the means and the target, not [0, 1] for data in [0.7, 0.95]
        lo, hi = np.nanpercentile(stats["mean"].to_numpy(float), [1, 99])
        if q is not None:
            lo, hi = min(lo, q), max(hi, q)
        pad = max(0.02, 0.08 * (hi - lo))
        for a, names in panels:
            part = stats.loc[stats["forecaster"].isin(names)]
            _draw_curves(a, part, "t", False, styles)
            _target_line(a, q)
            a.set_ylim(max(-0.02, lo - pad), min(1.02, hi + pad))
            a.set_xlabel("round t")
            a.set_ylabel(f"coverage of the last {window} rounds\n(fraction of y \u2264 p)")
            extra = (
                [(Line2D([], [], color=_BOUND_COLOR, linestyle=":", linewidth=0.7), f"target q = {q:g}")]
                if q is not None
                else []
            )
            _legend(a, extra + _edge_marks(a, part, "t", styles), outside=own, loc="lower right")
        _panel_title(fig, panels, heading(df, "rolling coverage", nature), _seed_note(_seeds(stats)), own)
    return fig


def coverage_error_vs_T(
    curves: pd.DataFrame,
    nature: str | None = None,
    q: float | None = None,
    ax: Axes | None = None,
    styles: Mapping[str, dict] | None = None,
) -> Figure:
    """|coverage_t - q| against t on log-log axes per forecaster (mean over seeds and band), with the
    marginal DF's certified bound max(q, 1 - q)/t dashed in its color and, in gray, the tight
    bound and the paper's printed max(q, 1 - q)/(t - 1) (dotted). A run with zero error is not
    drawn (log axes).

    Examples
    --------
    >>> c = pd.DataFrame({"forecaster": "aci", "seed": 0, "t": [10, 100], "metric": "coverage_error",
    ...                   "value": [0.1, 0.01]})
    >>> fig = coverage_error_vs_T(c, q=0.9)
    >>> sorted(ln.get_gid() for ln in fig.axes[0].get_lines())
    ['mean:aci', 'reference:marginal', 'reference:printed']
    """
    own = ax is None
    with mpl.rc_context(_RC):
        df = _restrict(_curves(curves), nature=nature)
        obs = df.loc[(df["metric"] == "coverage_error") & (df["t"] > 0)] if not df.empty else df
        if obs.empty:
            fig, ax = _axes(ax)
            _no_data(ax, "coverage curves" + (f" for {nature}" if nature else ""))
            return fig
        bounds = df.loc[df["metric"] == "coverage_error_bound"]
        stats = moments_ci(obs, ["forecaster", "t"])
        fig, panels = _facets(ax, stats["forecaster"].unique(), styles, sharey=True)
        t = np.geomspace(max(obs["t"].min(), 2), obs["t"].max(), 50)
        m = max(q, 1 - q) if q is not None else None
        floor = _log_floor(np.r_[stats["mean"].to_numpy(float), m / t if m else []])
        for a, names in panels:
            part = stats.loc[stats["forecaster"].isin(names)]
            extra = _draw_curves(a, part, "t", True, styles, bounds.loc[bounds["forecaster"].isin(names)], floor=floor)
            if m is not None:
                # under the curves: a forecaster's own certified bound, the same curve dashed, shows over it
                a.plot(t, m / t, color=_BOUND_COLOR, linewidth=0.6, gid="reference:marginal", zorder=1.5)
                a.plot(
                    t,
                    m / (t - 1),
                    color=_BOUND_COLOR,
                    linewidth=0.6,
                    linestyle=":",
                    gid="reference:printed",
                    zorder=1.5,
                )
                extra += [
                    (Line2D([], [], color=_BOUND_COLOR, linewidth=0.6), "max(q, 1\u2212q)/t (certified, \u221d 1/t)"),
                    (
                        Line2D([], [], color=_BOUND_COLOR, linewidth=0.6, linestyle=":"),
                        "max(q, 1\u2212q)/(t\u22121) (printed)",
                    ),
                ]
            _rounds_axes(a, "coverage error |cov\u209c \u2212 q|\n(cov\u209c: fraction of y \u2264 p to t)", None)
            extra += _floor_note(a, part["mean"], floor)
            _legend(a, extra, outside=own, loc="lower left")
        _panel_title(
            fig, panels, heading(df, "coverage error |coverage\u209c \u2212 q|", nature), _seed_note(_seeds(stats)), own
        )
    return fig


def group_coverage(
    summary: pd.DataFrame,
    nature: str,
    q: float | None = None,
    ax: Axes | None = None,
    styles: Mapping[str, dict] | None = None,
) -> Figure:
    """Coverage in each group of a group-structured nature (columns ``group_coverage.<j>``), one
    line per forecaster (mean over seeds, band: its 95% interval), with the target q dotted.

    Examples
    --------
    >>> s = pd.DataFrame({"forecaster": "aci", "nature": "g", "seed": [0, 1], "group_coverage.0": [0.8, 0.9],
    ...                   "group_coverage.1": [1.0, 1.0]})
    >>> fig = group_coverage(s, "g", q=0.9)
    >>> [round(float(v), 3) for v in fig.axes[0].get_lines()[0].get_ydata()]
    [0.85, 1.0]
    """
    own = ax is None
    with mpl.rc_context(_RC):
        df = _restrict(_ok(summary), nature=nature) if summary is not None and "nature" in summary else None
        cols = sorted(
            (c for c in (df.columns if df is not None else []) if str(c).startswith("group_coverage.")),
            key=lambda c: int(str(c).rsplit(".", 1)[1]),
        )
        if df is None or df.empty or not cols:
            fig, ax = _axes(ax)
            _no_data(ax, f"group coverage for {nature}")
            return fig
        long = df.melt(id_vars=["forecaster"], value_vars=cols, var_name="group").dropna(subset=["value"])
        long["group"] = long["group"].str.rsplit(".", n=1).str[1].astype(int)
        stats = mean_ci(long, ["forecaster", "group"])
        fig, panels = _facets(ax, stats["forecaster"].unique(), styles, sharey=True)
        lo, hi = np.nanpercentile(stats["mean"].to_numpy(float), [1, 99])
        lo, hi = (min(lo, q), max(hi, q)) if q is not None else (lo, hi)
        pad = max(0.02, 0.08 * (hi - lo))
        for a, names in panels:
            part = stats.loc[stats["forecaster"].isin(names)]
            _draw_curves(a, part, "group", False, styles)
            _target_line(a, q)
            a.set_ylim(max(-0.02, lo - pad), min(1.02, hi + pad))
            a.xaxis.set_major_locator(ticker.MaxNLocator(integer=True))
            a.set_xlabel(_group_label(df))
            a.set_ylabel("coverage in the group\n(fraction of y \u2264 p)")
            _legend(a, _edge_marks(a, part, "group", styles), outside=own, loc="lower right")
        _panel_title(fig, panels, heading(df, "coverage by group", nature), _seed_note(_seeds(stats)), own)
    return fig


def _group_label(rows: pd.DataFrame) -> str:
    """What a nature's groups are: the hour of day for the hourly natures (their one-hot hour is the
    group), else the group's index."""
    plugin = str(rows["nature_plugin"].iloc[0]) if "nature_plugin" in rows else ""
    params = str(rows["nature_params"].iloc[0]) if "nature_params" in rows else ""
    if plugin == "hourly_cycle" or '"hour_groups": true' in params:
        return "hour of day (group j = hour j)"
    return "group j of the nature's contexts"


def _lipschitz_rows(summary: pd.DataFrame) -> pd.DataFrame:
    """Rows of Lipschitz-CDF natures with their L (from ``nature_params``)."""
    if summary is None or summary.empty or "nature_params" not in summary:
        return pd.DataFrame()
    plugin = summary["nature_plugin"] if "nature_plugin" in summary else summary["nature"]
    rows = _ok(summary.loc[plugin == "lipschitz_cdf"])
    if rows.empty:
        return rows
    L = [json.loads(p).get("L", np.nan) if isinstance(p, str) else np.nan for p in rows["nature_params"]]
    return rows.assign(L=pd.to_numeric(pd.Series(L, index=rows.index), errors="coerce")).dropna(subset=["L"])


def coverage_vs_L(
    summary: pd.DataFrame,
    metric: str = "coverage_error",
    ax: Axes | None = None,
    styles: Mapping[str, dict] | None = None,
) -> Figure:
    """``metric`` against the Lipschitz constant L of the Lipschitz-CDF natures (log x axis), one
    line per forecaster (mean over seeds and band).

    Examples
    --------
    >>> s = pd.DataFrame({"forecaster": "aci", "nature": "l", "nature_plugin": "lipschitz_cdf", "seed": 0,
    ...                   "nature_params": ['{"L": 0.1}', '{"L": 10.0}'], "coverage_error": [0.1, 0.05]})
    >>> [float(v) for v in coverage_vs_L(s).axes[0].get_lines()[0].get_xdata()]
    [0.1, 10.0]
    """
    own = ax is None
    with mpl.rc_context(_RC):
        fig, ax = _axes(ax)
        rows = _lipschitz_rows(summary)
        rows = _clean(rows, metric) if not rows.empty else rows
        if rows.empty:
            _no_data(ax, f"{metric} of Lipschitz-CDF natures")
            return fig
        stats = mean_ci(rows, ["forecaster", "L"], metric)
        names = order(stats["forecaster"].unique())
        # few values of L: each forecaster's points side by side (dodged in log x), so none hides another
        dodge = {n: 10 ** (0.04 * (i - (len(names) - 1) / 2)) for i, n in enumerate(names)}
        stats = stats.assign(L=stats["L"] * stats["forecaster"].map(dodge))
        _draw_curves(ax, stats, "L", False, styles)
        ax.set_xscale("log")
        _plain_log_ticks(ax.xaxis)
        ax.set_xlabel("Lipschitz constant L of nature's CDF (log)")
        ax.set_ylabel(METRIC_LABELS.get(metric, metric) + " at T")
        ax.set_title(_seed_note(_seeds(stats)) + ";\npoints dodged in L", fontsize=7)  # two lines: the column
        _legend(ax, outside=own, loc="best")
    return fig


#: The figures of the quantile game, by name (a report's job names its figure).
FIGURES = {
    "rolling_coverage": lambda curves, nature, q, styles: rolling_coverage(curves, nature=nature, q=q, styles=styles),
    "coverage_error_vs_T": lambda curves, nature, q, styles: coverage_error_vs_T(
        curves, nature=nature, q=q, styles=styles
    ),
    "group_coverage": lambda summary, nature, q, styles: group_coverage(summary, nature, q=q, styles=styles),
    "coverage_vs_L": lambda summary, metric, styles: coverage_vs_L(summary, metric, styles=styles),
}


def jobs(
    summary: pd.DataFrame,
    curves: pd.DataFrame,
    fig_dir: Path,
    formats: Sequence[str],
    styles: Mapping[str, dict],
) -> list[Job]:
    """The figure jobs of the quantile game's matchups (none when the summary has none)."""
    if summary is None or "game" not in summary or not (summary["game"] == "quantile").any():
        return []
    summary = summary.loc[summary["game"] == "quantile"].copy()  # a copy: one block, not hundreds of columns
    q = _quantile_level(summary)
    formats = tuple(formats)
    jobs = []
    for nat in sorted(summary["nature"].dropna().astype(str).unique()):
        cur = _restrict(curves, nature=nat)
        metrics = set(cur["metric"].unique()) if not cur.empty else set()
        if "rolling_coverage" in metrics:
            jobs.append(
                Job("rolling_coverage", (cur, nat, q, styles), fig_dir / f"rolling_coverage__{safe_name(nat)}", formats)
            )
        if "coverage_error" in metrics:
            jobs.append(
                Job(
                    "coverage_error_vs_T", (cur, nat, q, styles), fig_dir / f"coverage_error__{safe_name(nat)}", formats
                )
            )
        part = _restrict(summary, nature=nat)
        if any(str(c).startswith("group_coverage.") and part[c].notna().any() for c in part.columns):
            jobs.append(
                Job("group_coverage", (part, nat, q, styles), fig_dir / f"group_coverage__{safe_name(nat)}", formats)
            )
    if not _lipschitz_rows(summary).empty:
        jobs.append(Job("coverage_vs_L", (summary, "coverage_error", styles), fig_dir / "coverage_vs_L", formats))
    for metric in QUANTILE_METRICS:
        if metric in summary and not _clean(_ok(summary), metric).empty:
            # only the natures where the metric exists (group errors need groups): a NaN cell reads "F"
            has = summary.groupby("nature")[metric].transform(lambda v: v.notna().any())
            jobs.append(
                Job(
                    "leaderboard",
                    (_only(summary.loc[has], metric), metric),
                    fig_dir / f"leaderboard__{safe_name(metric)}",
                    formats,
                )
            )
    return jobs
