"""What the figures of every game share: the tables' cleaning, curves against T with their
bands and certified bounds, the leaderboard heatmap and the certificates' margins.

Every curve is a mean across seeds with its 95% Student-t interval as a band
(:func:`arena.aggregate.mean_ci`); missing or NaN data never crash a figure: it says "no data".
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.colors import LogNorm, Normalize
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle

from arena.aggregate import mean_ci, seed_stats
from arena.plots.style import (
    _BOUND_COLOR,
    _RC,
    FIGSIZE,
    METRIC_LABELS,
    _axes,
    _fmt,
    _plain_log_ticks,
    _safe,
    order,
    styles_for,
)

_CURVE_COLUMNS = ("forecaster", "t", "metric", "value")


def _clean(df: pd.DataFrame | None, column: str = "value", need: Sequence[str] = ()) -> pd.DataFrame:
    """Drop rows whose ``column`` is NaN or infinite (they are ignored, not plotted as zero).

    A table without ``column`` or any of the ``need`` columns counts as empty."""
    if df is None or df.empty or any(c not in df for c in (column, *need)):
        return pd.DataFrame()
    values = pd.to_numeric(df[column], errors="coerce").replace([np.inf, -np.inf], np.nan)
    return df.assign(**{column: values}).loc[values.notna()]


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
    ax.set_xlabel("rounds T")
    ax.set_ylabel(ylabel)
    if nature:
        ax.set_title(nature.replace("_", " "))


def _no_data(ax: Axes, what: str) -> None:
    ax.text(0.5, 0.5, f"no data: {what}", ha="center", va="center", transform=ax.transAxes, color="0.4")
    ax.set_xticks([])
    ax.set_yticks([])


def _draw_mean(ax: Axes, g: pd.DataFrame, name: str, x: str, log: bool, style: Mapping[str, str],
               scale: pd.Series | float = 1.0):
    xs = g[x].to_numpy(float)
    mean = (g["mean"] / scale).to_numpy(float)
    half = (g["half"] / scale).to_numpy(float)
    (line,) = ax.plot(xs, mean, color=style["color"], marker=style["marker"], markevery=max(1, len(xs) // 6),
                      label=name, gid=f"mean:{name}")
    ok = np.isfinite(half)
    if ok.any():
        lo, hi = mean - half, mean + half
        if log:  # a band crossing zero cannot be drawn on log axes: clip it at a tenth of the mean
            lo = np.maximum(lo, mean / 10)
        ax.fill_between(xs, lo, hi, where=ok, color=style["color"], alpha=0.2, linewidth=0, gid=f"band:{name}")
    return line


def _draw_bound(ax: Axes, b: pd.DataFrame, name: str, x: str, color: str, scale=1.0):
    g = b.groupby(x)["value"].mean()
    xs = g.index.to_numpy(float)
    ax.plot(xs, (g / (xs if scale == "x" else scale)).to_numpy(float), color=color,
            linestyle="--", linewidth=0.9, gid=f"bound:{name}")


def _draw_curves(ax: Axes, stats: pd.DataFrame, x: str, log: bool, styles: Mapping[str, dict] | None,
                 bounds: pd.DataFrame | None = None, scale=1.0) -> None:
    """Each forecaster's mean and band (``stats`` of :func:`arena.aggregate.mean_ci`), in :func:`order`,
    and its certified bound dashed where ``bounds`` has one; ``styles`` completed for the names it lacks."""
    styles = styles_for(stats["forecaster"].unique(), styles)
    for name in order(stats["forecaster"].unique()):
        _draw_mean(ax, stats.loc[stats["forecaster"] == name], name, x, log=log, style=styles[name])
        b = bounds.loc[bounds["forecaster"] == name] if bounds is not None else None
        if b is not None and not b.empty:
            _draw_bound(ax, b, name, x, styles[name]["color"], scale=scale)


def _legend(ax: Axes, extra: list | None = None, outside: bool = False, **kw) -> None:
    """Forecasters then ``extra`` (handle, label) pairs; below the axes when the figure is ours."""
    handles, labels = ax.get_legend_handles_labels()
    for h, lab in extra or []:
        handles.append(h)
        labels.append(lab)
    if not handles:
        return
    style = {"frameon": False, "handlelength": 1.8, "columnspacing": 0.8, "borderaxespad": 0.2,
             "handletextpad": 0.4}
    if outside:  # never covers data; the figure grows by one line of text per legend row
        ncol = 3 if len(handles) > 4 else 2
        fig = ax.figure
        w, h = fig.get_size_inches()
        fig.set_size_inches(w, h + 0.13 * math.ceil(len(handles) / ncol))
        fig.legend(handles, labels, loc="outside lower center", ncol=ncol, **style)
    else:
        ax.legend(handles, labels, ncol=2 if len(handles) > 4 else 1, **style, **kw)


#: Curves whose certified bound is not ``<metric>_bound``: (bound curve, its scale ("x": divided
#: by t), log y axis). The bias is nonnegative and falls like 1/t for the defensive forecasters.
_CURVE_BOUNDS = {"bias": ("bit_bound", "x", True)}


def regret_curves(curves: pd.DataFrame, metric: str = "regret_linear", nature: str | None = None,
                  ax: Axes | None = None, styles: Mapping[str, dict] | None = None) -> Figure:
    """Regret (or another curve, e.g. ``bias``) against T (log x axis): per forecaster the mean
    across seeds and, as a band, its 95% Student-t interval.

    Where the curves hold ``<metric>_bound`` (a forecaster certifying it; for ``bias``, the
    bit-prediction bound ``bit_bound`` on abs(sum(p - y)), drawn divided by t), the bound is
    dashed in the forecaster's color. Regret can be negative (the comparators are norm-bounded),
    so the y axis is linear with zero marked (log for ``bias``, where a zero mean is not drawn).

    Parameters
    ----------
    curves : long table (forecaster, seed, t, metric, value[, nature]).
    metric : the curve to draw, e.g. ``"regret_linear"``, ``"regret_constant"`` or ``"bias"``.
    nature : keep only this nature; by default every row is used.
    ax : axes to draw on; a new single-column figure by default.
    styles : color and marker per forecaster (:func:`arena.plots.style.forecaster_styles`); by
        default those of the forecasters drawn.
    """
    own = ax is None
    with mpl.rc_context(_RC):
        fig, ax = _axes(ax)
        df = _restrict(_clean(curves, need=_CURVE_COLUMNS), nature=nature)
        obs = df.loc[df["metric"] == metric] if not df.empty else df
        if obs.empty:
            _no_data(ax, f"{metric} curves" + (f" for {nature}" if nature else ""))
            return fig
        bound, scale, logy = _CURVE_BOUNDS.get(metric, (f"{metric}_bound", 1.0, False))
        bounds = df.loc[df["metric"] == bound]
        stats = mean_ci(obs, ["forecaster", "t"])
        _draw_curves(ax, stats, "t", logy, styles, bounds, scale=scale)
        if not logy:
            ax.axhline(0.0, color="0.7", linewidth=0.5, zorder=0)
        _rounds_axes(ax, METRIC_LABELS.get(metric, metric), nature, logy)
        extra = []
        if not bounds.empty:
            extra.append((Line2D([], [], color=_BOUND_COLOR, linestyle="--", linewidth=0.9), "certified bound"))
        _legend(ax, extra, outside=own, loc="best")
    return fig


def leaderboard_heatmap(summary: pd.DataFrame, metric: str = "smce_over_T", ax: Axes | None = None) -> Figure:
    """Forecaster x nature heatmap of the mean of ``metric`` over seeds (:func:`arena.aggregate.seed_stats`).

    Cells are annotated with their value; the colormap is viridis (log-scaled when the values
    span more than two decades). Forfeited matchups are left out of the mean; a cell with a
    forfeit is hatched and marked "F" (only "F" when every seed forfeited). With several
    horizons T, the largest.
    """
    with mpl.rc_context(_RC):
        if summary is None or any(c not in summary for c in ("forecaster", "nature", metric)) or \
                _clean(summary, metric).empty:
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
        size = (max(FIGSIZE[0], 1.4 + 0.55 * len(cols)), max(1.6, 1.0 + 0.22 * len(rows)))
        fig, ax = _axes(ax, size)
        finite = values[np.isfinite(values)]
        if finite.size and finite.min() > 0 and finite.max() / finite.min() > 100:
            norm = LogNorm(finite.min(), finite.max())
        else:
            norm = Normalize(finite.min(), finite.max()) if finite.size else Normalize(0, 1)
        cmap = mpl.colormaps["viridis"].with_extremes(bad="0.85")
        # no resampling: one flat cell per value (in PDF the 11 x 9 pixels themselves)
        im = ax.imshow(np.ma.masked_invalid(values), cmap=cmap, norm=norm, aspect="auto", interpolation="none")
        for i, fc in enumerate(rows):
            for j, nat in enumerate(cols):
                v = values[i, j]
                any_f, all_f = forfeits.loc[(fc, nat)] if (fc, nat) in forfeits.index else (False, False)
                if any_f:
                    ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, hatch="///", edgecolor="0.3",
                                           linewidth=0, gid=f"forfeit:{fc}:{nat}"))
                if (fc, nat) not in forfeits.index:
                    continue
                text = "F" if all_f else _fmt(v) + (" F" if any_f else "")
                light = np.isfinite(v) and np.mean(cmap(norm(v))[:3]) < 0.5
                ax.text(j, i, text, ha="center", va="center", fontsize=6, color="white" if light else "black",
                        gid=f"value:{fc}:{nat}", in_layout=False)  # inside its cell: nothing to lay out
        ax.set_xticks(range(len(cols)), [c.replace("_", " ") for c in cols], rotation=35, ha="right",
                      rotation_mode="anchor")
        ax.set_yticks(range(len(rows)), rows)
        ax.tick_params(length=0)
        for s in ax.spines.values():
            s.set_visible(False)
        cb = fig.colorbar(im, ax=ax, fraction=0.06, pad=0.02)
        cb.set_label(METRIC_LABELS.get(metric, metric) + " (mean over seeds)", fontsize=7)
        cb.ax.tick_params(labelsize=6)
    return fig


def _certificate_ratios(summary: pd.DataFrame | None) -> pd.DataFrame:
    """Long table (forecaster, nature, seed, certificate, ratio = value / bound, verdict) of the finished
    matchups' certificates that apply (a not-applicable one is never drawn, least of all as a pass) and
    have a finite value and a positive, finite bound."""
    columns = ["forecaster", "certificate", "ratio", "verdict"]
    if summary is None or summary.empty or "forecaster" not in summary:
        return pd.DataFrame(columns=columns)
    ok = _ok(summary)
    frames = []
    for col in ok.columns:
        name = str(col)[5:-6] if str(col).startswith("cert.") and str(col).endswith(".value") else None
        if name is None or f"cert.{name}.bound" not in ok:
            continue
        v, b = (pd.to_numeric(ok[f"cert.{name}.{k}"], errors="coerce").astype(float) for k in ("value", "bound"))
        verdict = _verdicts(ok, name)
        keep = np.isfinite(v) & np.isfinite(b) & (b > 0) & verdict.isin(["holds", "fails"]).to_numpy()
        frames.append(ok.loc[keep, [c for c in ("forecaster", "nature", "seed") if c in ok]].assign(
            certificate=name, ratio=(v / b)[keep], verdict=verdict[keep]))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)


def _verdicts(summary: pd.DataFrame, name: str) -> pd.Series:
    """The verdict of certificate ``name`` in every row: "holds", "fails", "n/a", or NaN where the forecaster
    did not claim it. Results written before verdicts were recorded have only ``holds`` (a missing
    value there is read as not claimed).

    Examples
    --------
    >>> s = pd.DataFrame({"cert.x.holds": [True, False, None]})
    >>> _verdicts(s, "x").tolist()
    ['holds', 'fails', nan]
    """
    col = f"cert.{name}.verdict"
    if col in summary:
        return summary[col].where(summary[col].notna() & (summary[col] != ""))
    holds = summary.get(f"cert.{name}.holds", pd.Series(np.nan, index=summary.index, dtype=object))
    return holds.map(lambda h: np.nan if h is None or (isinstance(h, float) and np.isnan(h)) else
                     ("holds" if bool(h) else "fails"))


#: The color of a failed certificate (its value above its bound) in the certificates figure.
FAIL_COLOR = "#d62728"


def certificate_margins(summary: pd.DataFrame, ax: Axes | None = None,
                        styles: Mapping[str, dict] | None = None) -> Figure:
    """Every certificate of every finished matchup as its observed value over its certified bound.

    One row per forecaster and certificate (labelled with the certificate; the forecaster is
    in the legend), one point per matchup (nature and seed) in the forecaster's color and
    marker; the certified bound is the dashed line at 1. A failed certificate (verdict
    ``fails``: its value above its bound) is drawn in red, as a cross right of the line; a
    not-applicable one is not drawn (summary.md lists it with its reason). Ratios below -1 (a
    negative regret) are drawn at -1. ``styles``: color and marker per forecaster
    (:func:`arena.plots.style.forecaster_styles`; by default those of the forecasters drawn).

    Examples
    --------
    >>> s = pd.DataFrame({"forecaster": "bit", "nature": "n", "seed": [0, 1, 2], "cert.bit.value": [0.0, 0.5, 3.0],
    ...                   "cert.bit.bound": 1.0, "cert.bit.verdict": ["holds", "holds", "fails"]})
    >>> ax = certificate_margins(s).axes[0]
    >>> [float(x) for x in ax.collections[0].get_offsets()[:, 0]], [float(x) for x in ax.collections[1].get_offsets()[:, 0]]
    ([0.0, 0.5], [3.0])
    """
    own = ax is None
    with mpl.rc_context(_RC):
        ratios = _certificate_ratios(summary)
        names = order(ratios["forecaster"].unique())
        styles = styles_for(names, styles)
        rows = sorted({(f, c) for f, c in zip(ratios["forecaster"], ratios["certificate"])},
                      key=lambda fc: (names.index(fc[0]), fc[1]))
        fig, ax = _axes(ax, (FIGSIZE[0], 0.75 + 0.17 * max(len(rows), 1)))
        if not rows:
            _no_data(ax, "certificates")
            return fig
        for i, (name, cert) in enumerate(rows):
            part = ratios.loc[(ratios["forecaster"] == name) & (ratios["certificate"] == cert), "ratio"]
            style = styles[name]
            jitter = 0.25 * (np.arange(len(part)) % 5 - 2) / 2  # points of one row spread over its height
            first = i == 0 or rows[i - 1][0] != name
            fail = (ratios.loc[part.index, "verdict"] == "fails").to_numpy()
            x = np.maximum(part.to_numpy(float), -1.0)
            ax.scatter(x[~fail], (i + jitter)[~fail], s=9, color=style["color"],
                       marker=style["marker"], alpha=0.7, linewidths=0, gid=f"ratio:{name}:{cert}",
                       label=name if first else None)
            if fail.any():  # failures in red: the point a reader must see
                ax.scatter(x[fail], (i + jitter)[fail], s=16, color=FAIL_COLOR, marker="x", linewidths=1.0,
                           gid=f"fails:{name}:{cert}", zorder=3)
            if first and i:
                ax.axhline(i - 0.5, color="0.85", linewidth=0.5, zorder=0)
        ax.axvline(1.0, color=_BOUND_COLOR, linestyle="--", linewidth=0.9, gid="bound")
        ax.axvline(0.0, color="0.8", linewidth=0.5, zorder=0)
        ax.set_yticks(range(len(rows)), [c.replace("_", " ") for _, c in rows], fontsize=6)
        ax.tick_params(axis="y", length=0)
        ax.set_ylim(len(rows) - 0.5, -0.5)
        low, high = ratios["ratio"].min(), ratios["ratio"].max()
        if high > 10:  # failures far past the bound: linear up to 1, logarithmic beyond, so both stay readable
            ax.set_xscale("symlog", linthresh=1.0, linscale=1.0)
            ax.set_xlim(min(-0.05, low - 0.05) if low > -1 else -1.05, high * 3)
        else:
            ax.set_xlim(min(-0.05, low - 0.05) if low > -1 else -1.05, max(1.1, high * 1.05))
        ax.set_xlabel("certificate value / certified bound")
        extra = [(Line2D([], [], color=_BOUND_COLOR, linestyle="--", linewidth=0.9), "certified bound")]
        if (ratios["verdict"] == "fails").any():
            extra.append((Line2D([], [], color=FAIL_COLOR, marker="x", linestyle="none"), "fails (value > bound)"))
        _legend(ax, extra, outside=own, loc="best")
    return fig


def _curve_jobs(game: str, figures: dict[str, str | None], metrics: Sequence[str], summary: pd.DataFrame,
               curves: pd.DataFrame, fig_dir: Path, formats: Sequence[str], rc: dict,
               styles: Mapping[str, dict]) -> list[tuple]:
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
                jobs.append((kind, (cur, nat, styles), fig_dir / f"{kind}__{_safe(nat)}", formats, rc))
    for metric in metrics:
        if metric in part and not _clean(_ok(part), metric).empty:
            jobs.append(("leaderboard", (part, metric), fig_dir / f"leaderboard__{_safe(metric)}", formats, rc))
    return jobs
