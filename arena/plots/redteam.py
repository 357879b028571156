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
from arena.plots.labels import display_name, run_note
from arena.plots.style import _RC, FIGSIZE, METRIC_LABELS, _axes, _lines, _plain_log_ticks, order, styles_for
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
        run = _search_note(df)
        df = worst_found(df)
        styles = styles_for(df["forecaster"].unique(), styles)
        names = order(df["forecaster"].unique())
        one_T = df["T"].nunique() == 1
        for i, name in enumerate(names):
            g = df.loc[df["forecaster"] == name].sort_values("T")
            x = np.full(len(g), float(i)) if one_T else g["T"].to_numpy(float)
            _draw_attack(ax, x, g, name, styles[name], one_T)
        ax.set_yscale("log", nonpositive="mask")
        _plain_log_ticks(ax.yaxis)
        ax.yaxis.set_major_locator(ticker.LogLocator(subs=(1.0, 2.0, 5.0)))  # values span about a decade
        if one_T:  # one horizon: a point per forecaster, its bound above it
            ax.set_xticks(range(len(names)), [display_name(n) for n in names], rotation=30, ha="right")
            ax.set_xlim(-0.6, len(names) - 0.4)
            ax.set_xlabel("forecaster")
        else:
            ax.set_xscale("log")
            _plain_log_ticks(ax.xaxis)
            Ts = sorted(df["T"].unique())
            ax.set_xticks(Ts, [str(int(t)) for t in Ts])  # the horizons searched, each named
            ax.set_xlabel("rounds T")
        low, high = ax.get_ylim()
        if high < 10 * low:  # within a decade: a few round values, not a crowd of 1, 2, 5 times the decades
            ax.yaxis.set_major_locator(ticker.MaxNLocator(4))
        ax.set_ylabel(f"worst {METRIC_LABELS.get(metric, metric)} found")
        bounds = any(str(ln.get_gid()).startswith("bound:") for ln in ax.get_lines())
        how = "hollow: the forecaster's certified bound" if one_T else "hollow, dashed: the certified bound"
        ax.set_title(
            "\n".join(
                _lines(f"{run}: worst {METRIC_LABELS.get(metric, metric)} found", FIGSIZE[0] - 0.9, 0.052)
            )  # the axes' width
            + (f"\n({how})" if bounds else ""),
            fontsize=7,
        )
        if not one_T:
            _legend(ax, outside=own)
        return fig


def _search_note(table: pd.DataFrame) -> str:
    """The game, the horizons T and the seeds the attacks were searched on, for a title.

    Examples
    --------
    >>> _search_note(pd.DataFrame({"game": "binary", "T": [200, 1000], "seed": [0, 0]}))
    'binary, T = 200, 1000, search seed 0'
    >>> _search_note(pd.DataFrame({"game": "binary", "T": [200, 1000], "seed": [0, 0], "held_out": ["1-8", "1-8"]}))
    'binary, T = 200, 1000, search seed 0, values on held-out seeds 1-8'
    """
    run = run_note(table, seeds=False)
    seeds = sorted(table["seed"].dropna().astype(int).unique()) if "seed" in table else []
    if seeds:
        run += (", " if run else "") + "search seed" + ("s " if len(seeds) > 1 else " ") + ", ".join(map(str, seeds))
    held = sorted(set(table["held_out"].dropna())) if "held_out" in table else []
    if held:  # the values drawn are replays on seeds the search never saw
        run += ", values on held-out seeds" + (f" {held[0]}" if len(held) == 1 else "")
    return run


def _draw_attack(ax: Axes, x: np.ndarray, g: pd.DataFrame, name: str, style: Mapping[str, str], one_T: bool) -> None:
    """A forecaster's worst attacks at ``x`` (filled) and, where it certifies a bound on the metric, the bound
    (hollow; dashed across several T, joined to its attack by a thin line at one T)."""
    color, marker = style["color"], style["marker"]
    ax.plot(x, g["value"].clip(lower=1e-9), color=color, marker=marker, label=display_name(name), gid=f"attack:{name}")
    has = g["cert_bound"].notna().to_numpy()
    if not has.any():
        return
    b = g["cert_bound"].to_numpy(float)[has]
    ax.plot(
        x[has],
        b,
        color=color,
        ls="--",
        lw=1.0,
        marker=marker,
        mfc="none",
        label=f"{display_name(name)} bound",
        gid=f"bound:{name}",
    )
    if one_T:
        ax.vlines(x[has], g["value"].to_numpy(float)[has], b, color=color, lw=0.6, alpha=0.6, gid=f"margin:{name}")


def cross_attack_heatmap(matrix: pd.DataFrame, ax: Axes | None = None) -> Figure:
    """The cross-attack matrix: rows the forecaster an attack was found against, columns the forecaster it
    is played against, cells the metric reached (``matrix``: :func:`arena.redteam.table.cross_attack`;
    the best searcher per cell, said in the title where an attacker has several). The title names the game,
    the metric, T and the seeds played; a cell's value is written in it, small enough to fit.

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
        ax.set_xticks(range(m.shape[1]), [display_name(c) for c in m.columns], rotation=60, ha="right", fontsize=6)
        ax.set_yticks(range(m.shape[0]), [display_name(r) for r in m.index], fontsize=6)
        ax.set_xlabel("played against")
        ax.set_ylabel("attack found against")
        top = np.nanmax(values)
        # a cell's value (".0019": five characters, 0.0075 in a point each) fills at most 80% of its cell; the
        # axes take about 1.8 in between the names and the colour bar
        size = min(7.0, 0.8 * (FIGSIZE[0] - 1.45) / m.shape[1] / (5 * 0.0075))
        for (i, j), v in np.ndenumerate(values):
            if np.isfinite(v):
                ax.text(
                    j, i, _cell(v), ha="center", va="center", fontsize=size, color="white" if v < top / 2 else "black"
                )
        metric = str(matrix["metric"].iloc[0])
        fig.colorbar(im, ax=ax, label=METRIC_LABELS.get(metric, metric))
        run = ", ".join(p for p in (run_note(matrix), _played_note(matrix)) if p)
        several = matrix.groupby("attacker")["searcher"].nunique().max() > 1 if "searcher" in matrix else False
        title = (
            (f"{run}: " if run else "")
            + f"cross-attack, {METRIC_LABELS.get(metric, metric)} reached"
            + (" (best searcher)" if several else "")
        )
        ax.set_title("\n".join(_lines(title, FIGSIZE[0] - 1.2, 0.052)), fontsize=7)  # the axes' width
        return fig


def _played_note(matrix: pd.DataFrame) -> str:
    """The seeds a cross-attack matrix was played on (its ``seeds`` column), for a title.

    Examples
    --------
    >>> _played_note(pd.DataFrame({"seeds": ["1-8", "1-8"]}))
    'seeds 1-8'
    >>> _played_note(pd.DataFrame({"seeds": ["1-8", "4-11"]}))
    'seeds 1-8 or 4-11'
    """
    played = sorted(set(matrix["seeds"].dropna().astype(str))) if "seeds" in matrix else []
    if not played:
        return ""
    return "seeds " + " or ".join(played)  # several: each attack on its own held-out seeds


def _cell(v: float) -> str:
    """A cell's value in at most five characters where it is below 1: two digits, no leading zero.

    Examples
    --------
    >>> _cell(0.0019), _cell(0.23), _cell(-0.5), _cell(1.5)
    ('.0019', '.23', '-.5', '1.5')
    """
    text = f"{v:.2g}"
    return text.replace("0.", ".", 1) if text.lstrip("-").startswith("0.") else text
