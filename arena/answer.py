"""The answer of a results directory in a few lines: who won each game and T on its headline metric, which
certificates failed, which matchups were forfeited.

Pure functions of the ``summary`` table (:mod:`arena.results`) and the ``leaderboard`` (:mod:`arena.aggregate`);
:func:`arena.summarize.summarize` prints them last, so that a run ends with its answer.

Examples
--------
>>> board = pd.DataFrame({"game": "binary", "T": 200, "metric": "smce_over_T", "forecaster": ["k29", "ogd"],
...                       "n_natures": 2, "mean": [0.031, 0.045], "half": [0.004, 0.01], "exact": False,
...                       "rank": [1, 2]})
>>> winners(board)
['binary, T=200: k29 wins on smce_over_T, 0.031 ± 0.004 (mean over 2 natures, 95% CI); next ogd, 0.045 ± 0.01']
"""

from __future__ import annotations

import math

import pandas as pd

#: The headline metric of each game, the one its winner is named on (the first of its leaderboards).
HEADLINE = {
    "binary": "smce_over_T",
    "quantile": "coverage_error",
    "experts": "regret_experts_over_T",
    "decision": "regret_decision_expected_over_T",
}
#: The metrics a game that is not listed in :data:`HEADLINE` is judged on, the first it has.
FALLBACK = ("smce_over_T", "brier")
#: At most this many lines name winners; the other games and horizons are left to summary.md.
MAX_WINNER_LINES = 4


def headline(game: str, metrics) -> str | None:
    """The headline metric of ``game`` among ``metrics`` (those its leaderboard ranks), or None.

    >>> headline("binary", ["brier", "smce_over_T"]), headline("mine", ["brier"]), headline("mine", ["x"])
    ('smce_over_T', 'brier', None)
    """
    metrics = set(metrics)
    wanted = [HEADLINE[game]] if game in HEADLINE else list(FALLBACK)
    return next((m for m in wanted if m in metrics), None)


def number(value: float) -> str:
    """A value as people read it: four significant digits, no exponent between 1e-4 and 1e6.

    >>> number(0.0213456), number(464627577.0), number(3e-07), number(float("nan"))
    ('0.02135', '4.646e+08', '3e-07', 'n/a')
    """
    return "n/a" if not math.isfinite(value) else f"{value:.4g}"


def shown(row) -> str:
    """A leaderboard row's mean with its 95% interval: ``0.031 ± 0.004``, ``0.031 (exact)`` when every seed plays
    the same game, ``0.031 (one seed)`` when there is no interval."""
    mean = number(float(row["mean"]))
    if bool(row.get("exact", False)):
        return f"{mean} (exact)"
    half = float(row.get("half", math.nan))
    return f"{mean} ± {half:.2g}" if math.isfinite(half) else f"{mean} (one seed)"


def winners(board: pd.DataFrame, max_lines: int = MAX_WINNER_LINES) -> list[str]:
    """One line per game and T: the forecaster ranked first on the game's headline metric (:func:`headline`), its
    mean over natures with its 95% interval (or "exact"), and the next one; at most ``max_lines`` lines (the
    largest T of each game first), the rest counted in a last line."""
    if board is None or board.empty or not {"game", "T", "metric", "forecaster", "rank"} <= set(board):
        return []
    lines = []
    cells = board[["game", "T"]].drop_duplicates().sort_values(["game", "T"], ascending=[True, False])
    for game, T in cells.itertuples(index=False):
        part = board.loc[(board["game"] == game) & (board["T"] == T)]
        metric = headline(str(game), part["metric"].unique())
        if metric is None:
            continue
        ranked = part.loc[(part["metric"] == metric) & part["rank"].notna()].sort_values(["rank", "forecaster"])
        if ranked.empty:
            continue
        top = ranked.loc[ranked["rank"] == ranked["rank"].iloc[0]]
        first = top.iloc[0]
        names = " and ".join(str(f) for f in top["forecaster"])
        verb = "tie" if len(top) > 1 else "wins"
        if len(ranked) == 1:
            names, verb = f"{names} (alone)", "plays"
        natures = int(first.get("n_natures", 0))
        line = (
            f"{game}, T={T}: {names} {verb} on {metric}, {shown(first)} "
            f"(mean over {natures} nature{'s' if natures != 1 else ''}, 95% CI)"
        )
        rest = ranked.loc[ranked["rank"] > first["rank"]]
        if not rest.empty:
            line += f"; next {rest.iloc[0]['forecaster']}, {shown(rest.iloc[0])}"
        lines.append(line)
    if len(lines) > max_lines:
        more = len(lines) - (max_lines - 1)
        lines = [*lines[: max_lines - 1], f"... and {more} more games or horizons: see summary.md"]
    return lines


def _listed(groups: pd.Series, most: int = 3) -> str:
    """``a (2), b (1)``: the largest groups of a count, at most ``most``, then how many more."""
    groups = groups.sort_values(ascending=False, kind="stable")
    text = ", ".join(f"{name} ({n})" for name, n in groups.head(most).items())
    return text + (f" and {len(groups) - most} more" if len(groups) > most else "")


def certificates(summary: pd.DataFrame) -> str:
    """The certificates' verdicts over the finished matchups in one line: how many were checked and failed, and
    which (forecaster, certificate) pairs failed, with their counts.

    >>> s = pd.DataFrame({"forecaster": ["a", "a", "b"], "status": "ok", "cert.smce.verdict": ["holds", "fails", None]})
    >>> certificates(s)
    'certificates: 1 of 2 failed: a smce (1)'
    >>> certificates(s.assign(**{"cert.smce.verdict": "holds"}))
    'certificates: 0 of 3 failed'
    """
    finished = summary.loc[summary["status"] == "ok"] if "status" in summary else summary
    columns = [c for c in finished if c.startswith("cert.") and c.endswith(".verdict")]
    if finished.empty or not columns:
        return "certificates: none claimed"
    long = finished[["forecaster", *columns]].melt(id_vars="forecaster", var_name="cert", value_name="verdict")
    long = long.loc[long["verdict"].isin(("holds", "fails"))]
    failed = long.loc[long["verdict"] == "fails"]
    text = f"certificates: {len(failed)} of {len(long)} failed"
    if failed.empty:
        return text
    names = (
        failed["forecaster"].astype(str) + " " + failed["cert"].str.removeprefix("cert.").str.removesuffix(".verdict")
    )
    return f"{text}: {_listed(names.value_counts(sort=False))}"


def forfeits(summary: pd.DataFrame) -> str:
    """The forfeited matchups in one line: how many, and who forfeited against which nature, with counts.

    >>> s = pd.DataFrame({"forecaster": ["a", "b"], "nature": "n", "status": ["ok", "forfeit"],
    ...                   "forfeit_who": [None, "forecaster"]})
    >>> forfeits(s), forfeits(s.iloc[:1])
    ('forfeits: 1 of 2 matchups: b vs n, forecaster (1)', 'forfeits: none of 1 matchup')
    """
    n = len(summary)
    lost = summary.loc[summary["status"] != "ok"] if "status" in summary else summary.iloc[:0]
    if lost.empty:
        return f"forfeits: none of {n} matchup{'s' if n != 1 else ''}"
    who = lost["forfeit_who"].astype(str) if "forfeit_who" in lost else "?"
    names = lost["forecaster"].astype(str) + " vs " + lost["nature"].astype(str) + ", " + who
    return f"forfeits: {len(lost)} of {n} matchups: {_listed(names.value_counts(sort=False))}"


def answer(summary: pd.DataFrame, board: pd.DataFrame | None) -> list[str]:
    """The answer of a results directory: the winners (:func:`winners`; none for a single matchup, whose line was
    printed as it finished), the certificates' verdicts and the forfeits."""
    single = all(summary[k].nunique() <= 1 for k in ("game", "forecaster", "nature") if k in summary)
    return [*([] if single else winners(board)), certificates(summary), forfeits(summary)]


__all__ = ["FALLBACK", "HEADLINE", "answer", "certificates", "forfeits", "headline", "number", "shown", "winners"]
