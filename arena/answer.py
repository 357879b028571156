"""The answer of a results directory in a few lines: who won each game and T on its headline metric, which
certificates failed, which matchups were forfeited; and the pieces that the results page and ``summary.md``
(:mod:`arena.plots.answer`) show the same way: the headline metric of each game (:data:`HEADLINE_METRICS`), the
certificate counts and line, and numbers for people (:func:`human`).

Pure functions of the ``summary`` table (:mod:`arena.results`) and the ``leaderboard`` (:mod:`arena.aggregate`);
:func:`arena.summarize.summarize` prints them last, so that a run ends with its answer.

Examples
--------
>>> board = pd.DataFrame({"game": "binary", "T": 200, "metric": "smce_over_T", "forecaster": ["k29", "ogd"],
...                       "n_natures": 2, "mean": [0.031, 0.045], "half": [0.004, 0.01], "exact": False,
...                       "rank": [1, 2]})
>>> winners(board)
['binary, T=200: k29 wins on smce_over_T, 0.0310 ± 0.00400 (mean over 2 natures, 95% CI); next ogd, 0.0450 ± 0.0100']
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import pandas as pd

#: The metrics of each game's leaderboards (its LaTeX table and its leaderboards in ``summary.md``), the headline
#: metric first: the one its winner is named on, in the terminal and at the top of the results page.
HEADLINE_METRICS: dict[str, tuple[str, ...]] = {
    "binary": ("smce_over_T", "brier", "bias"),
    "quantile": ("coverage_error", "expected_coverage_error", "group_coverage_error_max", "pinball"),
    "experts": ("regret_experts_over_T", "loss"),
    "decision": ("regret_decision_expected_over_T", "decision_loss_expected", "smce_over_T", "brier"),
}
#: The leaderboard metrics of a game that :data:`HEADLINE_METRICS` does not list.
DEFAULT_METRICS = ("smce_over_T", "brier", "bias")
#: At most this many lines name winners; the other games and horizons are left to summary.md.
MAX_WINNER_LINES = 4
#: At most this many failed certificates are named in the terminal's certificate line.
MAX_FAILED_NAMED = 3


def headline_metrics(game: str | None, metrics: Iterable[str], default: Iterable[str] = DEFAULT_METRICS) -> list[str]:
    """The leaderboard metrics of ``game`` among ``metrics`` (those measured), the headline metric first.

    >>> headline_metrics("decision", ["brier", "decision_loss_expected"]), headline_metrics("mine", ["bias", "x"])
    (['decision_loss_expected', 'brier'], ['bias'])
    """
    measured = set(metrics)
    return [m for m in HEADLINE_METRICS.get(str(game), tuple(default)) if m in measured]


def headline(game: str | None, metrics: Iterable[str], default: Iterable[str] = DEFAULT_METRICS) -> str | None:
    """The headline metric of ``game`` among ``metrics`` (the first of :func:`headline_metrics`), or None.

    >>> headline("binary", ["brier", "smce_over_T"]), headline("mine", ["brier"]), headline("mine", ["x"])
    ('smce_over_T', 'brier', None)
    """
    return next(iter(headline_metrics(game, metrics, default)), None)


def measured(summary: pd.DataFrame) -> list[str]:
    """The columns of ``summary`` with at least one value: the metrics it measured."""
    return [str(c) for c in summary.columns if summary[c].notna().any()]  # a column at a time: no table of flags


def sig3(v: float) -> str:
    """Three significant digits, written out with their trailing zeros.

    >>> [sig3(v) for v in (0.24, 5.9e-5, 12.0, 1234.5, 0.0, -0.0415)]
    ['0.240', '0.0000590', '12.0', '1234', '0', '-0.0415']
    """
    if not np.isfinite(v) or v == 0:
        return "0" if v == 0 else "--"
    return f"{v:.{max(0, 2 - int(np.floor(np.log10(abs(v)))))}f}"


def human(v) -> str:
    """A number for people: three significant digits, written out between 0.001 and 100000, else as 4.65e8.

    >>> human(464627577.0), human(0.0412), human(12.0), human(3.2e-05), human(float("nan")), human("k29")
    ('4.65e8', '0.0412', '12.0', '3.20e-5', '--', 'k29')
    """
    try:
        v = float(v)
    except (TypeError, ValueError):
        return str(v)
    if not np.isfinite(v):
        return "--" if np.isnan(v) else ("∞" if v > 0 else "−∞")
    if v == 0 or 1e-3 <= abs(v) < 1e5:
        return sig3(v)
    mantissa, exponent = f"{v:.2e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def interval(row) -> str:
    """A leaderboard row's 95% interval as the pages head it "± 95%": its half-width, "exact" when every seed plays
    the same game, "one seed" when there is no interval.

    >>> interval({"exact": False, "half": 0.0042}), interval({"exact": True}), interval({"half": float("nan")})
    ('0.00420', 'exact', 'one seed')
    """
    if bool(row.get("exact", False)):
        return "exact"
    half = float(row.get("half", math.nan))
    return human(half) if math.isfinite(half) else "one seed"


def shown(row) -> str:
    """A leaderboard row's mean with its 95% interval (:func:`interval`): ``0.0310 ± 0.00400``, ``0.0310 (exact)``,
    ``0.0310 (one seed)``."""
    mean, half = human(row["mean"]), interval(row)
    return f"{mean} ± {half}" if half not in ("exact", "one seed") else f"{mean} ({half})"


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


def verdicts(summary: pd.DataFrame, name: str) -> pd.Series:
    """The verdict of certificate ``name`` in every row: "holds", "fails", "n/a", or NaN where the forecaster
    did not claim it. Results written before verdicts were recorded have only ``holds`` (a missing
    value there is read as not claimed).

    >>> verdicts(pd.DataFrame({"cert.x.holds": [True, False, None]}), "x").tolist()
    ['holds', 'fails', nan]
    """
    col = f"cert.{name}.verdict"
    if col in summary:
        return summary[col].where(summary[col].notna() & (summary[col] != ""))
    holds = summary.get(f"cert.{name}.holds", pd.Series(np.nan, index=summary.index, dtype=object))
    return holds.map(
        lambda h: np.nan if h is None or (isinstance(h, float) and np.isnan(h)) else ("holds" if bool(h) else "fails")
    )


#: The columns of :func:`certificate_counts`.
COUNT_COLUMNS = ("forecaster", "certificate", "holds", "fails", "n/a", "failing natures")


def certificate_counts(summary: pd.DataFrame) -> pd.DataFrame:
    """Per certificate and forecaster that claims it: how many matchups it holds, fails and does not apply to
    (n/a, never counted as a pass), and the natures where it fails (:data:`COUNT_COLUMNS`).

    >>> s = pd.DataFrame({"forecaster": ["a", "a", "b"], "nature": ["n", "m", "n"],
    ...                   "cert.smce.verdict": ["holds", "fails", None]})
    >>> certificate_counts(s).values.tolist()
    [['a', 'smce', 1, 1, 0, 'm']]
    """
    if summary is None or summary.empty or "forecaster" not in summary:
        return pd.DataFrame(columns=list(COUNT_COLUMNS))
    names = sorted(
        {
            str(c)[5:].rsplit(".", 1)[0]
            for c in summary.columns
            if str(c).startswith("cert.") and str(c).endswith((".holds", ".verdict"))
        }
    )
    forecasters = summary["forecaster"].astype(str)
    # the failing rows' natures from that column alone: selecting rows of the whole table makes pandas gather
    # every column of one type into one block first (at 10^6 matchups, a copy of the summary's numbers)
    nature = summary["nature"].astype(str) if "nature" in summary else None
    rows = []
    for name in names:
        v = verdicts(summary, name)
        for fc in sorted(forecasters.unique()):
            mine = v.loc[forecasters == fc].dropna()  # NaN: not claimed
            if mine.empty:
                continue
            fails = mine.index[mine == "fails"]
            natures = sorted(nature.loc[fails].unique()) if nature is not None else []
            counts = [int((mine == k).sum()) for k in ("holds", "fails", "n/a")]
            rows.append((fc, name, *counts, ", ".join(natures)))
    return pd.DataFrame(rows, columns=list(COUNT_COLUMNS))


def certificate_line(summary: pd.DataFrame, most: int | None = None) -> str:
    """The certificates' verdicts over the finished matchups in one line: how many fail, hold and do not apply, and
    which fail (forecaster, certificate and the natures where it fails; at most ``most`` of them).

    >>> s = pd.DataFrame({"forecaster": ["a", "a", "b"], "nature": ["n", "m", "n"], "status": "ok",
    ...                   "cert.smce.verdict": ["holds", "fails", "n/a"]})
    >>> certificate_line(s)
    'Certificates: 1 failure (1 hold, 1 not applicable): a smce (m).'
    >>> certificate_line(s.assign(**{"cert.smce.verdict": "holds"})), certificate_line(s[["forecaster"]])
    ('Certificates: 0 failures (3 hold, 0 not applicable).', 'No certificates claimed.')
    """
    finished = summary.loc[summary["status"] == "ok"] if "status" in summary else summary
    counts = certificate_counts(finished)
    if counts.empty:
        return "No certificates claimed."
    n = int(counts["fails"].sum())
    text = f"Certificates: {n} failure{'s' if n != 1 else ''} ({counts['holds'].sum()} hold, "
    text += f"{counts['n/a'].sum()} not applicable)"
    bad = counts.loc[counts["fails"] > 0]
    failing = [
        f"{fc} {name} ({natures})"
        for fc, name, natures in zip(bad["forecaster"], bad["certificate"], bad["failing natures"], strict=True)
    ]
    if not failing:
        return f"{text}."
    more = len(failing) - most if most is not None and len(failing) > most else 0
    named = "; ".join(failing[: len(failing) - more]) + (f"; and {more} more" if more else "")
    return f"{text}: {named}."


def forfeits(summary: pd.DataFrame) -> str:
    """The forfeited matchups in one line: how many, and who forfeited against which nature, with counts.

    >>> s = pd.DataFrame({"forecaster": ["a", "b"], "nature": "n", "status": ["ok", "forfeit"],
    ...                   "forfeit_who": [None, "forecaster"]})
    >>> forfeits(s), forfeits(s.iloc[:1])
    ('Forfeits: 1 of 2 matchups: b vs n, forecaster (1).', 'Forfeits: none of 1 matchup.')
    """
    n = len(summary)
    lost = summary.loc[summary["status"] != "ok"] if "status" in summary else summary.iloc[:0]
    if lost.empty:
        return f"Forfeits: none of {n} matchup{'s' if n != 1 else ''}."
    who = lost["forfeit_who"].astype(str) if "forfeit_who" in lost else "?"
    names = lost["forecaster"].astype(str) + " vs " + lost["nature"].astype(str) + ", " + who
    return f"Forfeits: {len(lost)} of {n} matchups: {_listed(names.value_counts(sort=False))}."


def answer(summary: pd.DataFrame, board: pd.DataFrame | None) -> list[str]:
    """The answer of a results directory: the winners (:func:`winners`; none for a single matchup, whose line was
    printed as it finished), the certificates' verdicts (:func:`certificate_line`) and the forfeits."""
    single = all(summary[k].nunique() <= 1 for k in ("game", "forecaster", "nature") if k in summary)
    return [*([] if single else winners(board)), certificate_line(summary, MAX_FAILED_NAMED), forfeits(summary)]


__all__ = [
    "COUNT_COLUMNS",
    "DEFAULT_METRICS",
    "HEADLINE_METRICS",
    "answer",
    "certificate_counts",
    "certificate_line",
    "forfeits",
    "headline",
    "headline_metrics",
    "human",
    "interval",
    "measured",
    "shown",
    "sig3",
    "verdicts",
    "winners",
]
