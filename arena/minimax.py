"""The tournament as a zero-sum game: forecasters against natures, minimax mixtures and the value.

For a metric where lower is better, the payoff matrix A holds the forecasters' seed means (rows)
on every nature (columns). The forecaster side picks a mixture x of forecasters, nature a mixture
y of natures, and the forecaster pays x^T A y. By von Neumann's minimax theorem

    min_x max_y x^T A y = max_y min_x x^T A y = value of the game,

and :func:`solve_zero_sum` finds an optimal x (the mixture of forecasters with the best worst
case over natures), an optimal y (the mixture of natures that is worst for every forecaster
mixture) and the value, as two linear programs (scipy's HiGHS). A single forecaster's worst case
over natures is at least the value; a pure strategy is optimal when the game has a saddle point.

Examples
--------
>>> x, y, v = solve_zero_sum(np.array([[1.0, -1.0], [-1.0, 1.0]]))  # matching pennies
>>> x.round(6).tolist(), y.round(6).tolist(), round(v, 6)
([0.5, 0.5], [0.5, 0.5], 0.0)

References
----------
von Neumann (1928); the LP formulation: e.g. Karlin, Mathematical methods and theory in games (1959).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd


def solve_zero_sum(payoff: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Minimax mixtures of the zero-sum game in which the row player pays ``payoff[i, j]``.

    Returns (x, y, value): x minimizes max_j (x^T A)_j over mixtures of rows, y maximizes
    min_i (A y)_i over mixtures of columns, and value is both optima (equal up to the solver's
    tolerance). Rows: min v s.t. A^T x <= v, sum x = 1, x >= 0; columns: the dual.

    Examples
    --------
    >>> x, y, v = solve_zero_sum(np.array([[1.0, 3.0], [2.0, 4.0]]))  # a saddle point: row 0, column 1
    >>> x.tolist(), y.tolist(), v
    ([1.0, 0.0], [0.0, 1.0], 3.0)
    """
    from scipy.optimize import linprog

    A = np.asarray(payoff, float)
    if A.ndim != 2 or 0 in A.shape or not np.isfinite(A).all():
        raise ValueError(f"payoff of shape {A.shape}: give a nonempty 2-d matrix of finite values")
    m, n = A.shape
    # rows: variables (x_1..x_m, v); minimize v subject to A^T x - v <= 0, sum x = 1
    rows = linprog(
        np.r_[np.zeros(m), 1.0],
        A_ub=np.c_[A.T, -np.ones(n)],
        b_ub=np.zeros(n),
        A_eq=np.r_[np.ones(m), 0.0][None],
        b_eq=[1.0],
        bounds=[(0, None)] * m + [(None, None)],
        method="highs",
    )
    # columns: variables (y_1..y_n, w); maximize w subject to w - A y <= 0, sum y = 1
    cols = linprog(
        np.r_[np.zeros(n), -1.0],
        A_ub=np.c_[-A, np.ones(m)],
        b_ub=np.zeros(m),
        A_eq=np.r_[np.ones(n), 0.0][None],
        b_eq=[1.0],
        bounds=[(0, None)] * n + [(None, None)],
        method="highs",
    )
    if rows.status != 0 or cols.status != 0:  # cannot happen for a finite matrix; say so if it does
        raise RuntimeError(f"the LP solver failed: {rows.message} / {cols.message}")
    x, y = np.clip(rows.x[:m], 0, None), np.clip(cols.x[:n], 0, None)
    value = float(rows.x[m])
    if abs(value) <= 1e-12 * max(1.0, float(np.abs(A).max())):  # the solver's rounding of a zero: no "-0"
        value = 0.0
    return x / x.sum(), y / y.sum(), value


def minimax_table(stats: pd.DataFrame, metrics: Sequence[str], way: dict[str, str | None]) -> pd.DataFrame:
    """The minimax solution of the forecaster x nature game of each (game, T, metric).

    ``stats``: :func:`arena.aggregate.seed_stats` (the seed mean of every matchup); ``way``: each
    metric's direction ("max": higher is better, the payoff is negated; None: not ranked, skipped).
    Returns one row per player: ``game``, ``T``, ``metric``, ``side`` ("forecaster" or "nature"),
    ``name``, ``weight`` (its probability in the optimal mixture), ``value`` (the game's value, in
    the metric's units) and ``note``. A forecaster without a finite seed mean on every nature takes
    no part (its worst case is unknown or infinite: weight NaN, noted), nor does a nature that none
    of the remaining forecasters played.
    """
    out = []
    keep = stats.loc[stats["metric"].isin(list(metrics)) & (stats["n"] > 0)]
    cell = [k for k in ("game", "T", "metric") if k in keep]
    for key, part in keep.groupby(cell, sort=True) if cell else [((), keep)]:
        metric = part["metric"].iloc[0]
        if way.get(metric) is None:
            continue
        sign = -1.0 if way[metric] == "max" else 1.0
        # forecasters x natures (NaN where a forecaster did not play a nature); what pivot_table gives, at a
        # tenth of its cost (a tournament has a table per game, T and metric)
        grid = part.groupby(["forecaster", "nature"], sort=True)["mean"].mean().unstack("nature")
        ids = dict(zip(cell, key if isinstance(key, tuple) else (key,), strict=True))
        complete = np.isfinite(grid.to_numpy(float)).all(axis=1)
        left = grid.loc[complete]
        for name in grid.index[~complete]:
            out.append(
                {
                    **ids,
                    "side": "forecaster",
                    "name": name,
                    "weight": np.nan,
                    "value": np.nan,
                    "note": "left out: no finite mean on every nature",
                }
            )
        if left.empty:
            continue
        x, y, v = solve_zero_sum(sign * left.to_numpy(float))
        out += [
            {**ids, "side": "forecaster", "name": n, "weight": w, "value": sign * v, "note": ""}
            for n, w in zip(left.index, x, strict=True)
        ]
        out += [
            {**ids, "side": "nature", "name": n, "weight": w, "value": sign * v, "note": ""}
            for n, w in zip(left.columns, y, strict=True)
        ]
    cols = [*cell, "side", "name", "weight", "value", "note"]
    return pd.DataFrame(out, columns=cols) if out else pd.DataFrame(columns=cols)


__all__ = ["minimax_table", "solve_zero_sum"]
