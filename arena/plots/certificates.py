"""The certificates figure: every certificate's observed value over its certified bound, per matchup.

References
----------
Perdomo & Recht, "In Defense of Defensive Forecasting" (the certified bounds of each forecaster).
"""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from arena.answer import verdicts
from arena.plots.common import _no_data, _ok
from arena.plots.labels import display_name, run_note
from arena.plots.style import (
    _BOUND_COLOR,
    _RC,
    COLUMN_WIDTH,
    _axes,
    _lines,
    order,
    styles_for,
)


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
        verdict = verdicts(ok, name)
        keep = np.isfinite(v) & np.isfinite(b) & (b > 0) & verdict.isin(["holds", "fails"]).to_numpy()
        frames.append(
            ok.loc[keep, [c for c in ("forecaster", "nature", "seed") if c in ok]].assign(
                certificate=name, ratio=(v / b)[keep], verdict=verdict[keep]
            )
        )
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)


#: The color of a failed certificate (its value above its bound) in the certificates figure.
FAIL_COLOR = "#d62728"


def certificate_margins(
    summary: pd.DataFrame, ax: Axes | None = None, styles: Mapping[str, dict] | None = None
) -> Figure:
    """Every certificate of every finished matchup as its observed value over its certified bound.

    One row per forecaster and certificate (labelled "forecaster: certificate" in the
    forecaster's color), one point per matchup (nature and seed) in the forecaster's color and
    marker; the certified bound is the dashed line at 1. A failed certificate (verdict
    ``fails``: its value above its bound) is drawn in red, as a cross right of the line; a
    not-applicable one is not drawn, never as a pass (summary.md and index.html list it). Ratios
    below -1 (a negative regret) are drawn at -1 with a black edge, and the axis says so; past 10
    the axis is logarithmic. ``styles``: color and marker per forecaster
    (:func:`arena.plots.style.forecaster_styles`; by default those of the forecasters drawn).

    Examples
    --------
    >>> s = pd.DataFrame({"forecaster": "bit", "nature": "n", "seed": [0, 1, 2], "cert.bit.value": [0.0, 0.5, 3.0],
    ...                   "cert.bit.bound": 1.0, "cert.bit.verdict": ["holds", "holds", "fails"]})
    >>> ax = certificate_margins(s).axes[0]
    >>> [[float(x) for x in c.get_offsets()[:, 0]] for c in ax.collections[:2]]
    [[0.0, 0.5], [3.0]]
    """
    own = ax is None
    with mpl.rc_context(_RC):
        ratios = _certificate_ratios(summary)
        names = order(ratios["forecaster"].unique())
        styles = styles_for(names, styles)
        rows = sorted(
            {(f, c) for f, c in zip(ratios["forecaster"], ratios["certificate"], strict=False)},
            key=lambda fc: (names.index(fc[0]), fc[1]),
        )
        fig, ax = _axes(ax, (COLUMN_WIDTH, 0.9 + 0.15 * max(len(rows), 1)))
        if not rows:
            _no_data(ax, "certificates")
            return fig
        for i, (name, cert) in enumerate(rows):
            _draw_row(ax, ratios, i, name, cert, styles[name])
            if i and rows[i - 1][0] != name:
                ax.axhline(i - 0.5, color="0.85", linewidth=0.5, zorder=0)
        ax.axvline(1.0, color=_BOUND_COLOR, linestyle="--", linewidth=0.9, gid="bound")
        ax.axvline(0.0, color="0.8", linewidth=0.5, zorder=0)
        labels = [f"{display_name(n)}: {display_name(c)}" for n, c in rows]
        ax.set_yticks(range(len(rows)), labels, fontsize=6)
        for tick, (n, _) in zip(ax.get_yticklabels(), rows, strict=False):  # the label in the forecaster's color too
            tick.set_color(styles[n]["color"])
        ax.tick_params(axis="y", length=0)
        ax.set_ylim(len(rows) - 0.5, -0.5)
        high = ratios["ratio"].max()
        if high > 10:  # failures far past the bound: linear up to 1, logarithmic beyond, so both stay readable
            ax.set_xscale("symlog", linthresh=1.0, linscale=1.0)
            ax.set_xlim(-1.08, high * 3)
        else:
            ax.set_xlim(-1.08, max(1.1, high * 1.05))
        clipped = bool((ratios["ratio"] < -1).any())
        ax.set_xlabel(
            "certificate value / bound at T (\u2264 1: holds)"
            + ("\n(black edge: < \u22121, drawn at \u22121)" if clipped else ""),
            loc="right",
        )
        ax.text(
            1.0,
            1.0,
            "bound ",
            transform=ax.get_xaxis_transform(),
            ha="right",
            va="bottom",
            fontsize=6,
            color="0.35",
            gid="bound_label",
        )
        n_fail = int((ratios["verdict"] == "fails").sum())
        if own:
            run = run_note(_ok(summary))
            heading = (
                f"{run}: " if run else ""
            ) + f"certificates, one point per matchup: {n_fail} of {len(ratios)} fail"
            fig.suptitle(
                "\n".join(_lines(heading + (" (red \u00d7)" if n_fail else ""), COLUMN_WIDTH - 0.2, 0.052)), fontsize=7
            )
    return fig


def _draw_row(ax: Axes, ratios: pd.DataFrame, i: int, name: str, cert: str, style: Mapping[str, str]) -> None:
    """Row ``i`` of the certificates figure: forecaster ``name``'s certificate ``cert``, a point per matchup
    (spread over the row's height), failures as red crosses, ratios under -1 drawn at -1 with a black edge."""
    sel = (ratios["forecaster"] == name) & (ratios["certificate"] == cert)
    part = ratios.loc[sel, "ratio"].to_numpy(float)
    jitter = 0.25 * (np.arange(len(part)) % 5 - 2) / 2  # points of one row spread over its height
    fail = (ratios.loc[sel, "verdict"] == "fails").to_numpy()
    x = np.maximum(part, -1.0)
    ax.scatter(
        x[~fail],
        (i + jitter)[~fail],
        s=9,
        color=style["color"],
        marker=style["marker"],
        alpha=0.7,
        linewidths=0,
        gid=f"ratio:{name}:{cert}",
    )
    if fail.any():  # failures in red: the point a reader must see
        ax.scatter(
            x[fail],
            (i + jitter)[fail],
            s=16,
            color=FAIL_COLOR,
            marker="x",
            linewidths=1.0,
            gid=f"fails:{name}:{cert}",
            zorder=3,
        )
    low = part < -1
    if low.any():  # clipped: drawn at -1 with a black edge, said in the axis label
        ax.scatter(
            np.full(low.sum(), -1.0),
            (i + jitter)[low],
            s=12,
            facecolors="none",
            marker=style["marker"],
            edgecolors="black",
            linewidths=0.6,
            gid=f"clipped:{name}:{cert}",
            clip_on=False,
        )
