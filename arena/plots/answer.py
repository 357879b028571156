"""The answer of a results directory, per game and T, that the results page and ``summary.md`` lead with: the
headline metric's leaderboard (mean, interval or "exact", worst case and its nature, minimax weight), the
certificate verdicts in one line, the top anytime-valid comparison in words and the tiers.

Pure functions of tables: the summary, and the ``pairs`` and ``tiers`` tables of :func:`arena.pairs.every_pair` and
the top pair's comparison (:func:`arena.compare.top_pairs`) when the directory has them. The headline metric, the
certificate line and the numbers are those the terminal prints (:mod:`arena.answer`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

from arena.aggregate import direction, leaderboard, single_matchup
from arena.answer import DEFAULT_METRICS, certificate_line, headline, human, interval, measured
from arena.plots.common import _of_game
from arena.plots.style import METRIC_LABELS
from arena.plots.tables import _md_table, game_stats, md_code, md_escape

#: The columns of an answer's leaderboard, as the pages head them.
BOARD_COLUMNS = ("rank", "forecaster", "mean", "± 95%", "worst case", "worst nature", "minimax weight")


class Answer(NamedTuple):
    """Who won one game at one T: ``board`` (:data:`BOARD_COLUMNS`, numbers as text for people) on the headline
    ``metric``, and one line each for the certificates, the top comparison and the tiers ("" when there is none)."""

    game: str
    T: int
    metric: str
    label: str
    way: str
    board: pd.DataFrame
    certificates: str
    comparison: str
    tiers: str


def answers(
    summary: pd.DataFrame,
    pairs: pd.DataFrame | None = None,
    tiers: pd.DataFrame | None = None,
    compare: pd.DataFrame | None = None,
    default_metrics=DEFAULT_METRICS,
    stats: pd.DataFrame | None = None,
) -> list[Answer]:
    """The :class:`Answer` of every game and T of ``summary`` (forfeits left out of the statistics); ``stats``: its
    :func:`~arena.aggregate.seed_stats` as the results directory holds them, when it does."""
    if summary is None or summary.empty or "forecaster" not in summary:
        return []
    out = []
    games = sorted(summary["game"].dropna().astype(str).unique()) if "game" in summary else [None]
    for game in games:
        s = _of_game(summary, game)
        metric = headline(game, measured(s), default_metrics)
        if metric is None:
            continue
        st = game_stats(s, game, [metric], stats)
        board = leaderboard(s, [metric], stats=st)
        weights = _minimax_weights(st, metric) if not single_matchup(s) else {}
        for T, b in board.groupby("T", sort=True) if "T" in board else [(None, board)]:
            at_T = s.loc[s["T"] == T] if T is not None and "T" in s else s
            out.append(
                Answer(
                    game or "results",
                    int(T) if T is not None else 0,
                    metric,
                    METRIC_LABELS.get(metric, metric),
                    {"min": "lower is better", "max": "higher is better"}.get(direction(metric) or "", "not ranked"),
                    _board(b, weights.get(T, {})),
                    certificate_line(at_T),
                    comparison_line(_family(pairs, game, T), _family(compare, game, T)),
                    tiers_line(_family(tiers, game, T)),
                )
            )
    return out


def _family(table: pd.DataFrame | None, game, T) -> pd.DataFrame:
    """The rows of ``table`` at this game and T (all of them where it has no such column)."""
    if table is None or table.empty:
        return pd.DataFrame()
    keep = pd.Series(True, index=table.index)
    if game is not None and "game" in table:
        keep &= table["game"].astype(str) == str(game)
    if T is not None and "T" in table:
        keep &= table["T"] == T
    return table.loc[keep]


def _minimax_weights(stats: pd.DataFrame, metric: str) -> dict:
    """Each T's forecasters' weights in the minimax mixture of the forecaster x nature game on ``metric``."""
    from arena.minimax import minimax_table

    mix = minimax_table(stats, [metric], {metric: direction(metric)})
    if mix.empty:
        return {}
    mine = mix.loc[mix["side"] == "forecaster"]
    groups = mine.groupby("T") if "T" in mine else [(None, mine)]
    return {T: dict(zip(part["name"].astype(str), part["weight"], strict=True)) for T, part in groups}


def _board(b: pd.DataFrame, weight: dict) -> pd.DataFrame:
    """A leaderboard's rows as the pages show them."""
    rows = [
        (
            int(r["rank"]),
            str(r["forecaster"]),
            human(r["mean"]),
            interval(r),
            human(r["worst"]),
            str(r["worst_nature"]) if pd.notna(r["worst"]) else "",
            human(weight.get(str(r["forecaster"]), np.nan)) if weight else "",
        )
        for _, r in b.sort_values(["rank", "forecaster"], kind="stable").iterrows()
    ]
    return pd.DataFrame(rows, columns=list(BOARD_COLUMNS))


def comparison_line(pairs: pd.DataFrame, compare: pd.DataFrame) -> str:
    """The top anytime-valid comparison in words: from ``pairs`` (every pair, e-BH over all of them) the leader on
    the score against the runner-up, else from ``compare`` (the top pair, nature by nature)."""
    if not pairs.empty and {"forecaster_a", "forecaster_b", "e_value", "mean"} <= set(pairs):
        p = pairs.loc[pairs["e_value"].notna()] if "error" not in pairs else pairs.loc[pairs["error"].isna()]
        if not p.empty:
            metric = str(p["metric"].iloc[0]) if "metric" in p else ""
            p = p.loc[p["metric"].astype(str) == metric] if metric else p
            means = p.groupby("forecaster_a")["mean"].mean().sort_values(kind="stable")
            if len(means) >= 2:
                a, b = str(means.index[0]), str(means.index[1])
                row = p.loc[(p["forecaster_a"] == a) & (p["forecaster_b"] == b)].iloc[0]
                label = METRIC_LABELS.get(metric, metric)
                if bool(row.get("e_bh", False)):
                    at = row.get("e_bh_at", np.nan)
                    when = f", decided at t = {int(at)}" if pd.notna(at) and np.isfinite(at) else ""
                    return f"{a} beats {b} on {label}, e-value {human(row['e_value'])}{when} (e-BH over every pair)."
                return f"{a} vs {b} on {label}: no claim yet (e-value {human(row['e_value'])}, e-BH over every pair)."
    if not pairs.empty and "error" in pairs and pairs["error"].notna().all():
        return f"Pairs not compared: {pairs['error'].dropna().iloc[0]}."
    if not compare.empty and {"verdict", "forecaster_a", "forecaster_b"} <= set(compare):
        first = compare.iloc[0]
        if "error" in compare and isinstance(first.get("error"), str) and first["error"]:
            return f"{first['forecaster_a']} vs {first['forecaster_b']}: not compared ({first['error']})."
        said = compare["verdict"].value_counts()
        a, b = str(first["forecaster_a"]), str(first["forecaster_b"])
        return (
            f"{a} vs {b} on {first.get('metric', '')} per round, over {len(compare)} nature-seed runs: {a} better on "
            f"{int(said.get('A better', 0))}, {b} better on {int(said.get('B better', 0))}, undecided on "
            f"{int(said.get('undecided', 0))}."
        )
    return ""


def tiers_line(tiers: pd.DataFrame) -> str:
    """The tiers of the pairs' claims in one line (tier 1: those no claim beats)."""
    if tiers.empty or not {"tier", "forecaster"} <= set(tiers):
        return ""
    metric = str(tiers["metric"].iloc[0]) if "metric" in tiers else ""
    t = tiers.loc[tiers["metric"].astype(str) == metric] if metric else tiers
    parts = [
        f"{int(k)}: " + ", ".join(part.sort_values("mean", kind="stable")["forecaster"].astype(str))
        for k, part in t.groupby("tier", sort=True)
    ]
    method = f"{t['method'].iloc[0]}, " if "method" in t else ""
    return f"Tiers ({method}{METRIC_LABELS.get(metric, metric)}): " + " · ".join(parts) + "."


def markdown_lines(found: list[Answer]) -> list[str]:
    """The answers as the first section of ``summary.md``: per game and T, the leaderboard and the three lines."""
    lines = []
    for a in found:
        lines += [
            f"## Answer for {md_escape(a.game)}, T = {a.T}: {md_escape(a.label)}, {md_code(a.metric)} ({a.way})",
            "",
        ]
        lines += _md_table(list(BOARD_COLUMNS), a.board.itertuples(index=False), "rlrrrlr")
        lines += [md_escape(x) + "  " for x in (a.certificates, a.comparison, a.tiers) if x] + [""]
    return lines


__all__ = [
    "BOARD_COLUMNS",
    "Answer",
    "answers",
    "comparison_line",
    "markdown_lines",
    "tiers_line",
]
