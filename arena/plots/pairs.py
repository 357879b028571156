"""The pair matrix of one family of :mod:`arena.pairs` (a game, T and score): a pure function of the ``pairs``
table.

Row A, column B: the e-value against "A is no better than B" at the last round, on a log color scale (dark:
strong evidence that A beats B) that ends a decade past m / alpha, an e-value that is a claim (the colorbar marks
it); a claim made is marked with a dot, an e-value of 1 or less (no evidence) is white. Rows and columns are in
the order of the tiers when given (best first), else by mean score.

Examples
--------
>>> p = pd.DataFrame({"forecaster_a": ["a", "b"], "forecaster_b": ["b", "a"], "e_value": [500.0, 0.01],
...                   "e_bh": [True, False], "mean": [-0.1, 0.1], "metric": "brier", "T": 100, "game": "binary",
...                   "alpha": 0.05})
>>> fig = pair_matrix(p)
>>> len(fig.axes), fig.axes[0].get_xticklabels()[0].get_text()
(2, 'a')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.colors import LogNorm
from matplotlib.figure import Figure

from arena.plots.jobs import Job
from arena.plots.labels import display_name, run_note
from arena.plots.style import _RC, COLUMN_WIDTH, FULL_WIDTH, METRIC_LABELS, _lines, _new_figure
from arena.results import safe_name

_METHOD = {"e_bh": "e-BH", "e_bonferroni": "e-Bonferroni"}


def pair_matrix(pairs: pd.DataFrame, tiers: pd.DataFrame | None = None, claim: str = "e_bh") -> Figure:
    """The pair matrix of one family's rows of ``pairs`` (:func:`arena.pairs.pair_tables`); ``tiers``: that
    family's tiers, for the order; ``claim``: the column of claims marked (``e_bh`` or ``e_bonferroni``)."""
    if tiers is not None and len(tiers):
        names = list(tiers.sort_values(["tier", "mean"], kind="stable")["forecaster"].astype(str))
    else:
        mean = pairs.groupby("forecaster_a")["mean"].mean().sort_values(kind="stable")
        names = list(mean.index.astype(str))
    index = {n: i for i, n in enumerate(names)}
    F = len(names)
    e = np.full((F, F), np.nan)
    made = np.zeros((F, F), bool)
    for r in pairs.itertuples(index=False):
        a, b = index.get(str(r.forecaster_a)), index.get(str(r.forecaster_b))
        if a is not None and b is not None:
            e[a, b], made[a, b] = float(r.e_value), bool(getattr(r, claim))
    side = COLUMN_WIDTH if F <= 14 else FULL_WIDTH  # a square of cells: a column holds 14 of them
    with mpl.rc_context(_RC):
        fig = _new_figure(figsize=(side, 0.72 * side + 0.05 * max(map(len, names), default=0) + 0.2))
        ax = fig.add_subplot()
        shown = np.where(e > 1, e, np.nan)
        top = float(np.nanmax(shown)) if np.isfinite(shown).any() else 10.0
        # the scale ends a decade past the e-value a claim needs (m / alpha): stronger evidence is as decisive,
        # and e-values of 10^30 would wash the cells near the threshold out to white
        first = pairs.iloc[0] if len(pairs) else {}
        need = float(first.get("m", np.nan)) / float(first.get("alpha", np.nan)) if len(pairs) else np.nan
        cap = 10.0 ** np.ceil(np.log10(need) + 1) if np.isfinite(need) and need > 1 else 1e6
        im = ax.imshow(shown, cmap="Blues", norm=LogNorm(vmin=1, vmax=max(min(top, cap), 10.0)))
        ys, xs = np.nonzero(made)
        ax.scatter(xs, ys, s=8, color="#d55e00", zorder=3, gid="claims")
        shown_names = [display_name(n) for n in names]
        ax.set_xticks(range(F), shown_names, rotation=90, fontsize=6)
        ax.set_yticks(range(F), shown_names, fontsize=6)
        ax.set_xlabel("B")
        ax.set_ylabel("A")
        ax.tick_params(length=0)
        metric = str(first.get("metric", ""))
        head = run_note(pairs.iloc[:1]) if len(pairs) else ""
        title = (
            f"{head}: {METRIC_LABELS.get(metric, metric)}, every nature and seed; the e-value of 'A beats B' "
            f"(against 'A no better than B'; dots: {_METHOD.get(claim, claim)}'s claims)"
        )
        fig.suptitle("\n".join(_lines(title, side - 0.2, 0.052)), fontsize=7)
        cb = fig.colorbar(im, ax=ax, fraction=0.05, pad=0.02, extend="max" if top > cap else "neither")
        if np.isfinite(need) and need > 1:  # an e-value that is a claim under e-BH and e-Bonferroni alike
            cb.ax.axhline(need, color="#d55e00", linewidth=1.5)
        cb.set_label("e-value (log scale; white: \u2264 1;\nline: m / \u03b1, enough for a claim)", fontsize=6.5)
        cb.ax.tick_params(labelsize=6)
    return fig


def pair_jobs(
    pairs: pd.DataFrame | None, tiers: pd.DataFrame | None, fig_dir: Mapping[str | None, Path], formats: Sequence[str]
) -> list[Job]:
    """The pair matrix of each family of ``pairs`` (game, T and score), ``pairs__<score>__T<T>`` in the game's folder
    of ``fig_dir``; none without the table (or with only its errors: rounds not stored)."""
    if pairs is None or not {"game", "T", "metric", "e_value"} <= set(pairs):
        return []
    pairs = pairs.loc[pairs["e_value"].notna()]
    jobs = []
    for (game, T, metric), part in pairs.groupby(["game", "T", "metric"], sort=True):
        mine = (
            tiers.loc[(tiers["game"] == game) & (tiers["T"] == T) & (tiers["metric"] == metric)]
            if tiers is not None and {"game", "T", "metric"} <= set(tiers)
            else None
        )
        folder = fig_dir.get(str(game), next(iter(fig_dir.values())))
        stem = folder / f"pairs__{safe_name(metric)}__T{safe_name(T)}"
        jobs.append(Job("pairs", (part, mine), stem, tuple(formats)))
    return jobs


__all__ = ["pair_jobs", "pair_matrix"]
