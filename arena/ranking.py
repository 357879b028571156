"""Rankings of forecasters that adding natures cannot pack: Nash averaging and alpha-Rank, beside the mean and
the worst case (``arena-rank``).

The input is a forecaster x nature table of losses (lower is better): the tournament as a zero-sum game in
which the forecaster side pays the loss (:mod:`arena.minimax`).

- **Mean** over natures and **worst case** (the largest loss over natures): the leaderboard's two columns.
  Adding natures like one already there moves the mean toward it.
- **Minimax**: the weight of each forecaster in the linear program's minimax mixture, one of possibly many.
- **Nash averaging** (Balduzzi et al. 2018): the maximum-entropy Nash equilibrium (x*, y*), unique because
  entropy is strictly concave on the convex set of equilibria; a forecaster's Nash average is its loss
  against the natures' mixture y*, (A y*)_i. Every forecaster in the support of an equilibrium has Nash
  average equal to the value of the game; the others are ranked by how much more they lose against the
  hardest mixture of natures. Copies of a nature share its weight: whenever the natures' equilibrium is
  unique, adding copies of a nature (or of a forecaster, always) leaves every Nash average unchanged. When the
  natures have many equilibria (a forecaster best on every nature makes every mixture of natures one), the
  maximum-entropy pick among them can move, and with it the Nash averages of forecasters outside the
  equilibrium's support (not the value, nor the forecasters of the support).
- **alpha-Rank** (Omidshafiei et al. 2019): the stationary distribution of a Markov chain over (forecaster,
  nature) profiles in which, at each step, one side's strategy is challenged by a mutant that takes over with
  the fixation probability of a population of ``m`` under selection intensity ``alpha``; a forecaster's mass
  is the chain's time spent on it. The losses are rescaled to [0, 1] first, so ``alpha`` does not depend on
  the metric's units; large alpha approaches the sink components of the game's response graph.

Examples
--------
>>> rps = np.array([[0.0, 1.0, -1.0], [-1.0, 0.0, 1.0], [1.0, -1.0, 0.0]])  # rock, paper, scissors
>>> nash = max_entropy_nash(rps)
>>> nash.x.round(6).tolist(), nash.y.round(6).tolist(), round(nash.value, 6)
([0.333333, 0.333333, 0.333333], [0.333333, 0.333333, 0.333333], 0.0)
>>> alpha_rank(rps).forecasters.round(6).tolist()
[0.333333, 0.333333, 0.333333]

References
----------
Balduzzi, Tuyls, Perolat, Graepel (2018), Re-evaluating evaluation, NeurIPS, Section 4 (Nash averaging).
Omidshafiei, Papadimitriou, Piliouras, Tuyls, Rowland, Lespiau, Czarnecki, Lanctot, Perolat, Munos (2019),
alpha-Rank: multi-agent evaluation by evolution, Scientific Reports 9, 9937 (Sections 3.1-3.2; OpenSpiel's
``alpharank``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from arena.minimax import solve_zero_sum

#: Say which rankings the columns are, in the order printed.
USAGE = """arena-rank TABLE.csv [--forecaster COL] [--nature COL] [--value COL]
arena-rank RESULTS_DIR --metric METRIC [--game GAME] [--T T]"""

#: alpha-Rank's defaults: selection intensity (on losses rescaled to [0, 1]) and population size.
ALPHA, POPULATION = 100.0, 50


class Nash(NamedTuple):
    """The maximum-entropy Nash equilibrium: ``x`` over forecasters (rows), ``y`` over natures, the ``value``."""

    x: np.ndarray
    y: np.ndarray
    value: float


class AlphaRank(NamedTuple):
    """alpha-Rank's stationary distribution: its mass on each forecaster, on each nature, on each profile."""

    forecasters: np.ndarray
    natures: np.ndarray
    profiles: np.ndarray


def max_entropy_nash(payoff: np.ndarray, lp: tuple[np.ndarray, np.ndarray, float] | None = None) -> Nash:
    """The maximum-entropy Nash equilibrium of the zero-sum game in which the row player pays ``payoff``:
    the value from :func:`arena.minimax.solve_zero_sum` (``lp``: its solution, when already solved), then, on
    each side, the mixture of largest entropy among the optimal ones (x with max_j (x^T A)_j <= value, y with
    min_i (A y)_i >= value; scipy's SLSQP, started from the linear program's solution).

    Examples
    --------
    >>> nash = max_entropy_nash(np.array([[0.0, 0.0], [1.0, 0.0]]))  # row 0 is best on every column
    >>> nash.x.round(6).tolist(), nash.y.round(6).tolist()  # every mixture of columns is optimal
    ([1.0, 0.0], [0.5, 0.5])
    """
    A = np.asarray(payoff, float)
    x0, y0, value = solve_zero_sum(A) if lp is None else lp
    tol = 1e-9 * max(1.0, float(np.abs(A).max()))
    x = _max_entropy(A.T, value + tol, x0, upper=True)
    y = _max_entropy(A, value - tol, y0, upper=False)
    return Nash(x, y, value)


def _max_entropy(M: np.ndarray, bound: float, start: np.ndarray, upper: bool) -> np.ndarray:
    """The mixture z of largest entropy with M z <= bound (``upper``) or M z >= bound, sum z = 1, z >= 0."""
    from scipy.optimize import minimize

    n = len(start)
    if n == 1:
        return np.ones(1)
    sign = -1.0 if upper else 1.0

    def neg_entropy(z):
        z = np.clip(z, 1e-300, None)
        return float(np.sum(z * np.log(z)))

    def grad(z):
        return np.log(np.clip(z, 1e-300, None)) + 1.0

    res = minimize(
        neg_entropy,
        start,
        jac=grad,
        method="SLSQP",
        bounds=[(0.0, 1.0)] * n,
        constraints=[
            {"type": "eq", "fun": lambda z: z.sum() - 1.0, "jac": lambda z: np.ones((1, n))},
            {"type": "ineq", "fun": lambda z: sign * (M @ z - bound), "jac": lambda z: sign * M},
        ],
        options={"ftol": 1e-14, "maxiter": 1000},
    )
    z = np.clip(res.x, 0.0, None)
    z = z / z.sum()
    slack = sign * (M @ z - bound)
    if not res.success and slack.min() < -1e-6 * max(1.0, float(np.abs(M).max())):
        return start  # the solver failed: the linear program's equilibrium, which is one
    return z


def nash_averaging(payoff: np.ndarray) -> np.ndarray:
    """Each row's Nash average: its loss against the natures' maximum-entropy equilibrium mixture, A y*.

    Examples
    --------
    >>> nash_averaging(np.array([[0.0, 0.0], [1.0, 0.0]])).round(6).tolist()
    [0.0, 0.5]
    """
    A = np.asarray(payoff, float)
    return A @ max_entropy_nash(A).y


def fixation(gain: np.ndarray, m: int) -> np.ndarray:
    """The chance that one mutant whose payoff exceeds the residents' by ``gain`` (already times alpha) takes
    over a population of m (Omidshafiei et al. 2019, eq. (4)): (1 - e^-g) / (1 - e^-mg), 1/m at g = 0,
    computed without overflow.

    Examples
    --------
    >>> fixation(np.array([0.0, 1e3, -1e3]), 50).round(6).tolist()
    [0.02, 1.0, 0.0]
    """
    g = np.asarray(gain, float)
    a = np.abs(g)
    with np.errstate(divide="ignore", invalid="ignore"):
        up = -np.expm1(-a) / -np.expm1(-m * a)  # g > 0
        down = np.exp(-(m - 1) * a) * up  # g < 0: (e^a - 1) / (e^ma - 1) = e^-(m-1)a (1 - e^-a) / (1 - e^-ma)
    return np.where(a < 1e-12, 1.0 / m, np.where(g > 0, up, down))


def alpha_rank(payoff: np.ndarray, alpha: float = ALPHA, m: int = POPULATION) -> AlphaRank:
    """alpha-Rank of the two-population game in which the row player (a forecaster) loses ``payoff[i, j]`` to
    the column player (a nature), who gains it; losses rescaled to [0, 1].

    From profile (i, j) the chain moves to (i', j) with probability eta * rho(alpha (A[i, j] - A[i', j])) (a
    forecaster that loses less takes over) and to (i, j') with eta * rho(alpha (A[i, j'] - A[i, j])), eta =
    1 / ((F - 1) + (N - 1)), rho :func:`fixation`; it stays otherwise.
    """
    A = np.asarray(payoff, float)
    span = float(A.max() - A.min())
    A = (A - A.min()) / span if span > 0 else np.zeros_like(A)
    F, N = A.shape
    eta = 1.0 / max(1, (F - 1) + (N - 1))
    C = np.zeros((F * N, F * N))
    idx = np.arange(F * N).reshape(F, N)
    i, k, j = np.meshgrid(np.arange(F), np.arange(F), np.arange(N), indexing="ij")  # forecaster i -> k, nature j
    move = i != k
    C[idx[i, j][move], idx[k, j][move]] = eta * fixation(alpha * (A[i, j] - A[k, j]), m)[move]
    i, j, k = np.meshgrid(np.arange(F), np.arange(N), np.arange(N), indexing="ij")  # nature j -> k, forecaster i
    move = j != k
    C[idx[i, j][move], idx[i, k][move]] = eta * fixation(alpha * (A[i, k] - A[i, j]), m)[move]
    np.fill_diagonal(C, 1.0 - C.sum(axis=1))
    pi = stationary(C).reshape(F, N)
    return AlphaRank(pi.sum(axis=1), pi.sum(axis=0), pi)


def alpha_rank_one_population(payoff: np.ndarray, alpha: float = ALPHA, m: int = POPULATION) -> np.ndarray:
    """alpha-Rank of a symmetric game (one population; ``payoff[s, t]``: what s gains against t), with the
    fixation probabilities of a population of m playing one another (Omidshafiei et al. 2019, eq. (3), the
    Moran process without the local-selection simplification): the mass on each strategy."""
    M = np.asarray(payoff, float)
    S = len(M)
    eta = 1.0 / max(1, S - 1)
    C = np.zeros((S, S))
    p = np.arange(1, m)
    for s in range(S):
        for t in range(S):
            if s != t:
                mutant = ((p - 1) * M[t, t] + (m - p) * M[t, s]) / (m - 1)
                resident = (p * M[s, t] + (m - p - 1) * M[s, s]) / (m - 1)
                logs = np.cumsum(-alpha * (mutant - resident))
                C[s, t] = eta * np.exp(-np.logaddexp.reduce(np.r_[0.0, logs]))
    np.fill_diagonal(C, 1.0 - C.sum(axis=1))
    return stationary(C)


def stationary(C: np.ndarray) -> np.ndarray:
    """The stationary distribution pi = pi C of a row-stochastic matrix: (C^T - I) pi = 0 with one equation
    replaced by sum pi = 1 (a least-squares solve where that system is singular: a reducible chain)."""
    n = len(C)
    lhs = C.T - np.eye(n)
    lhs[-1] = 1.0
    rhs = np.zeros(n)
    rhs[-1] = 1.0
    try:
        pi = np.linalg.solve(lhs, rhs)
    except np.linalg.LinAlgError:
        pi = np.linalg.lstsq(np.vstack([C.T - np.eye(n), np.ones((1, n))]), np.r_[np.zeros(n), 1.0], rcond=None)[0]
    pi = np.clip(pi, 0.0, None)
    return pi / pi.sum()


def rankings(table: pd.DataFrame, alpha: float = ALPHA, m: int = POPULATION) -> pd.DataFrame:
    """The rankings of a forecaster x nature table of losses (index: forecasters, columns: natures; every
    value finite), one row per forecaster: ``mean``, ``worst`` (largest loss over natures), ``minimax``
    (weight in the linear program's minimax mixture), ``nash_average`` and ``nash_weight`` (the
    maximum-entropy equilibrium), ``alpha_rank`` (mass), each with its rank (``*_rank``: 1 is best, ties share
    the smallest), sorted by the Nash average.

    Examples
    --------
    >>> t = pd.DataFrame([[0.0, 1.0, -1.0], [-1.0, 0.0, 1.0], [1.0, -1.0, 0.0], [2.0, 2.0, 2.0]],
    ...                  index=["rock", "paper", "scissors", "bad"], columns=["R", "P", "S"])
    >>> rankings(t)[["forecaster", "mean_rank", "worst_rank", "nash_average_rank", "alpha_rank_rank"]].values.tolist()
    [['paper', 1, 1, 1, 1], ['rock', 1, 1, 1, 1], ['scissors', 1, 1, 1, 1], ['bad', 4, 4, 4, 4]]
    """
    A = table.to_numpy(float)
    if A.ndim != 2 or 0 in A.shape or not np.isfinite(A).all():
        raise ValueError(
            f"a table of shape {A.shape} with {int((~np.isfinite(A)).sum())} missing values: give a "
            "finite loss for every forecaster on every nature"
        )
    lp = solve_zero_sum(A)
    nash = max_entropy_nash(A, lp)
    out = pd.DataFrame(
        {
            "forecaster": table.index.astype(str),
            "mean": A.mean(axis=1),
            "worst": A.max(axis=1),
            "minimax": lp[0],
            "nash_average": A @ nash.y,
            "nash_weight": nash.x,
            "alpha_rank": alpha_rank(A, alpha, m).forecasters,
        }
    )
    scale = max(1.0, float(np.abs(A).max()))
    for col, lower in (
        ("mean", True),
        ("worst", True),
        ("minimax", False),
        ("nash_average", True),
        ("alpha_rank", False),
    ):
        v = (out[col] / (scale if col not in ("minimax", "alpha_rank") else 1.0)).round(7)  # the solvers' tolerance
        out[f"{col}_rank"] = (v if lower else -v).rank(method="min").astype(int)
    return out.sort_values(["nash_average_rank", "alpha_rank_rank", "forecaster"], ignore_index=True)


def ranking_tables(
    summary: pd.DataFrame, metrics: list[str] | None = None, stats: pd.DataFrame | None = None
) -> pd.DataFrame:
    """:func:`rankings` of every game, T and ranked metric (``metrics``: these only) of a summary table, from
    the seed means (:func:`arena.aggregate.seed_stats`, or its rows in ``stats`` when the summary's are given;
    a higher-is-better metric negated), with ``game``, ``T``, ``metric`` and ``left_out`` (forecasters without a
    finite value on every nature) in front."""
    from arena.aggregate import direction, metric_columns, seed_stats

    chosen = [m for m in metric_columns(summary, ranked=True) if metrics is None or m in metrics]
    if summary.empty or not chosen:
        return pd.DataFrame()
    st = seed_stats(summary, chosen) if stats is None else stats.loc[stats["metric"].isin(chosen)]
    out = []
    for (game, T, metric), part in st.groupby(["game", "T", "metric"], sort=True):
        grid = part.groupby(["forecaster", "nature"])["mean"].mean().unstack("nature")
        grid = -grid if direction(str(metric)) == "max" else grid
        complete = np.isfinite(grid.to_numpy(float)).all(axis=1)
        if complete.sum() < 2:
            continue
        left = ", ".join(grid.index[~complete].astype(str))
        out.append(rankings(grid.loc[complete]).assign(game=game, T=T, metric=metric, left_out=left))
    if not out:
        return pd.DataFrame()
    table = pd.concat(out, ignore_index=True)
    return table[["game", "T", "metric", *[c for c in table if c not in ("game", "T", "metric")]]]


# ------------------------------------------------------------------------------------------------ arena-rank
def long_table(
    path: Path, forecaster: str = "forecaster", nature: str = "nature", value: str = "value"
) -> pd.DataFrame:
    """The forecaster x nature table of a long CSV (or Parquet) file: one row per (forecaster, nature), or
    several (seeds), averaged; every forecaster needs a finite value on every nature."""
    df = pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)
    missing = [c for c in (forecaster, nature, value) if c not in df]
    if missing:
        raise ValueError(
            f"{path} has no column {', '.join(map(repr, missing))} (it has {', '.join(map(str, df.columns))}); "
            "name the columns with --forecaster, --nature, --value"
        )
    values = pd.to_numeric(df[value], errors="coerce")
    if values.isna().any():
        i = int(np.flatnonzero(values.isna())[0])
        raise ValueError(f"{path}: {value} {df[value].iloc[i]!r} in row {i + 2} is not a number")
    grid = values.groupby([df[forecaster].astype(str), df[nature].astype(str)]).mean().unstack()
    holes = [(f, n) for f in grid.index for n in grid.columns if not np.isfinite(grid.loc[f, n])]
    if holes:
        f, n = holes[0]
        raise ValueError(
            f"{path}: forecaster {f!r} has no {value} on nature {n!r} ({len(holes)} such pairs): "
            "every forecaster needs a value on every nature"
        )
    return grid


def results_table(
    out_dir: Path, metric: str, game: str | None = None, T: int | None = None
) -> tuple[pd.DataFrame, str]:
    """The forecaster x nature table of seed means of ``metric`` in a results directory (one game, one T:
    the largest unless given), as losses (a metric where higher is better is negated), and a note naming the
    forecasters left out (no value on some nature)."""
    from arena.aggregate import direction, metric_columns, seed_stats
    from arena.results import planned
    from arena.stream import collect

    path = out_dir / "summary.parquet"
    summary = pd.read_parquet(path) if path.is_file() else collect(out_dir, planned(out_dir))["summary"]
    if summary.empty:
        raise ValueError(f"{out_dir} holds no finished matchup")
    ranked = metric_columns(summary, ranked=True)
    if metric not in ranked:
        from arena.errors import did_you_mean

        raise ValueError(
            f"metric {metric!r} is not a ranked metric of {out_dir} (it has {', '.join(ranked)})."
            f"{did_you_mean(metric, ranked)}"
        )
    games = sorted(summary["game"].astype(str).unique())
    if game is None and len(games) > 1:
        raise ValueError(f"{out_dir} holds the games {', '.join(games)}: choose one with --game")
    game = game or games[0]
    if game not in games:
        raise ValueError(f"game {game!r} is not in {out_dir} (it has {', '.join(games)})")
    part = summary.loc[summary["game"].astype(str) == game]
    Ts = sorted(int(t) for t in part["T"].unique())
    T = Ts[-1] if T is None else int(T)
    if T not in Ts:
        raise ValueError(f"T={T} is not among the horizons {Ts} of game {game!r}; choose one with --T")
    st = seed_stats(part.loc[part["T"] == T], [metric])
    grid = st.groupby(["forecaster", "nature"])["mean"].mean().unstack("nature")
    grid = -grid if direction(metric) == "max" else grid
    complete = np.isfinite(grid.to_numpy(float)).all(axis=1)
    note = "" if complete.all() else f"left out (no {metric} on some nature): {', '.join(grid.index[~complete])}"
    if complete.sum() == 0:
        raise ValueError(f"no forecaster has a finite {metric} on every nature of game {game!r} at T={T}")
    return grid.loc[complete], note


def format_rankings(r: pd.DataFrame) -> str:
    """The rankings of :func:`rankings` as aligned text, one line per forecaster."""
    cols = [
        ("mean", "mean"),
        ("worst", "worst"),
        ("minimax", "minimax w"),
        ("nash_average", "Nash avg"),
        ("alpha_rank", "alpha-Rank"),
    ]
    width = max(10, *(len(f) for f in r["forecaster"]))
    head = f"{'forecaster':<{width}} " + " ".join(f"{label:>16}" for _, label in cols)
    lines = [head]
    for _, row in r.iterrows():
        cells = " ".join(f"{row[c]:>11.4g} ({int(row[f'{c}_rank']):>2})" for c, _ in cols)
        lines.append(f"{row['forecaster']:<{width}} {cells}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """``arena-rank``: the mean, worst-case, minimax, Nash-averaging and alpha-Rank rankings of a table of
    losses (a long CSV or Parquet file, or a results directory with ``--metric``), side by side."""
    import argparse

    ap = argparse.ArgumentParser(
        prog="arena-rank",
        usage=USAGE,
        description="Rank forecasters on a table of losses (lower is better) by the mean and the worst case over "
        "natures, the minimax mixture, Nash averaging (the maximum-entropy Nash equilibrium of the forecaster x "
        "nature game) and alpha-Rank; the rank of each is in parentheses (1 is best).",
    )
    ap.add_argument(
        "table", type=Path, help="a long CSV/Parquet file (forecaster, nature, value) or a results directory"
    )
    ap.add_argument("--forecaster", default="forecaster", help="the forecaster column (default: forecaster)")
    ap.add_argument("--nature", default="nature", help="the nature column (default: nature)")
    ap.add_argument("--value", default="value", help="the loss column, lower is better (default: value)")
    ap.add_argument("--metric", help="a results directory's metric (a higher-is-better one is negated)")
    ap.add_argument("--game", help="a results directory's game, when it holds several")
    ap.add_argument("--T", type=int, help="a results directory's horizon (default: the largest)")
    ap.add_argument("--alpha", type=float, default=ALPHA, help=f"alpha-Rank's selection intensity (default {ALPHA:g})")
    ap.add_argument(
        "--population", type=int, default=POPULATION, help=f"alpha-Rank's population (default {POPULATION})"
    )
    from arena import __version__

    ap.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    args = ap.parse_args(argv)
    try:
        note = ""
        if args.table.is_dir():
            if not args.metric:
                raise ValueError(f"{args.table} is a results directory: name the metric to rank by with --metric")
            grid, note = results_table(args.table, args.metric, args.game, args.T)
        elif args.table.is_file():
            grid = long_table(args.table, args.forecaster, args.nature, args.value)
        else:
            raise FileNotFoundError(f"{args.table} does not exist; give a CSV file or a results directory")
        if not (args.alpha > 0 and args.population >= 2):
            raise ValueError(
                f"--alpha {args.alpha} --population {args.population}: give alpha > 0 and a population >= 2"
            )
        r = rankings(grid, args.alpha, args.population)
    except (OSError, ValueError) as exc:
        print(f"arena-rank: error: {' '.join(str(exc).split())}", file=sys.stderr)
        raise SystemExit(2) from None
    print(f"[arena] {len(grid)} forecasters x {grid.shape[1]} natures; losses, lower is better; rank in parentheses")
    print(format_rankings(r))
    if note:
        print(f"[arena] {note}")


__all__ = [
    "ALPHA",
    "POPULATION",
    "AlphaRank",
    "Nash",
    "alpha_rank",
    "alpha_rank_one_population",
    "fixation",
    "format_rankings",
    "long_table",
    "main",
    "max_entropy_nash",
    "nash_averaging",
    "ranking_tables",
    "rankings",
    "results_table",
    "stationary",
]
