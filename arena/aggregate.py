"""Summary table -> statistics across seeds: means with Student-t intervals, leaderboards, paired comparisons.

Pure functions of the summary table of :mod:`arena.results` (one row per matchup), given as a frame
or, by :func:`write_aggregates`, as its Parquet file, read a few columns at a time (:func:`columns`):
memory then grows with the matchups by the bytes of a few numbers each, not of their whole rows. The
rules they share live here, once:

- **Metrics** (:func:`metric_columns`): the numeric columns of the summary, except the matchup's
  identity and bookkeeping (seed, T, rounds, forfeit step), the game's settings and the nature's
  own properties (:data:`NOT_METRICS`, :data:`NOT_METRIC_PREFIXES`: the quantile level ``q``,
  group counts, the law's Lipschitz constant, the number of experts), certificates (``cert.*``:
  reported as pass/fail counts, not averaged) and the machine (timing ``seconds_*``, memory).
- **Seeds**: a forfeited matchup is left out (its metrics cover a truncated game) and counted
  (``n_forfeit``); a NaN value is left out of ``n``; an infinite one makes the mean infinite.
- **Intervals**: 95% Student-t, mean +- t(0.975, n - 1) sd / sqrt(n) (:func:`mean_ci`); NaN with
  fewer than two values, a single point with zero spread.
- **Direction** (:func:`direction`): lower is better for every metric (errors, losses, regret,
  bias, calibration gaps) except those in :data:`DIRECTION`: ``"max"`` for higher is better,
  ``None`` for descriptive columns that are not ranked (coverage itself is ranked through
  ``coverage_error`` = abs(coverage - q)).

Examples
--------
>>> s = pd.DataFrame({"game": "binary", "forecaster": ["a", "a", "b", "b"], "nature": "n", "T": 10,
...                   "seed": [0, 1, 0, 1], "brier": [0.20, 0.22, 0.25, 0.26]})
>>> seed_stats(s)[["forecaster", "metric", "n", "mean"]].round(3).values.tolist()
[['a', 'brier', 2, 0.21], ['b', 'brier', 2, 0.255]]
>>> leaderboard(s)[["forecaster", "rank"]].values.tolist()
[['a', 1], ['b', 2]]
>>> paired(s, "brier")[["forecaster_a", "forecaster_b", "n", "mean_diff"]].round(3).values.tolist()
[['a', 'b', 2, -0.045]]

References
----------
Seeds are derived by name (arena/seeding.py), so matchups pair by seed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from arena.intervals import mean_ci, t_quantile
from arena.results import (
    KEY_COLUMNS,
    MACHINE_COLUMNS,
    MACHINE_PREFIXES,
    code_version,
    write_table,
    write_text_atomic,
)
from arena.store import damaged, logs, selected_ids
from arena.stream import stream_tables

#: A matchup across seeds (the key columns of :mod:`arena.results` but the id and the seed).
GROUP = [k for k in KEY_COLUMNS if k not in ("matchup_id", "seed")]
#: Numeric summary columns that are not metrics (besides :data:`NOT_METRIC_PREFIXES`).
NOT_METRICS = frozenset(
    {
        "seed",
        "T",
        "rounds",
        "forfeit_step",
        "adaptive",
        "q",
        "law_exposed",
        "law_lipschitz_max",
        "n_experts",
        *MACHINE_COLUMNS,
    }
)
NOT_METRIC_PREFIXES = ("seed_", "cert.", "group_count.", *MACHINE_PREFIXES)
#: The metrics that are not "lower is better": "max" (higher is better) or None (not ranked).
DIRECTION: dict[str, str | None] = {
    "coverage": None,
    "expected_coverage": None,
    "group_coverage.": None,
    "expected_group_coverage.": None,
    "mean_forecast": None,
    "randomized_rounds": None,
    "best_action": None,
    "best_expert": None,
    "loss_best_expert": None,
}


def direction(metric: str) -> str | None:
    """``"min"`` (lower is better), ``"max"`` or ``None`` (not ranked); keys ending in "." are prefixes.

    Examples
    --------
    >>> direction("brier"), direction("coverage"), direction("group_coverage.3")
    ('min', None, None)
    """
    if metric in DIRECTION:
        return DIRECTION[metric]
    prefix = next((k for k in DIRECTION if k.endswith(".") and metric.startswith(k)), None)
    return DIRECTION[prefix] if prefix else "min"


def metric_columns(summary: pd.DataFrame, ranked: bool = False) -> list[str]:
    """The metric columns of a summary table, in its order (``ranked``: only those with a direction)."""
    cols = [
        c
        for c in summary.columns
        if str(c) not in NOT_METRICS
        and not str(c).startswith(NOT_METRIC_PREFIXES)
        and pd.api.types.is_numeric_dtype(summary[c])
        and not pd.api.types.is_bool_dtype(summary[c])
    ]
    return [c for c in cols if direction(c) is not None] if ranked else cols


def _finished(summary: pd.DataFrame) -> pd.Series:
    return summary["status"] != "forfeit" if "status" in summary else pd.Series(True, index=summary.index)


def _keys(summary: pd.DataFrame) -> list[str]:
    return [k for k in GROUP if k in summary]


def seed_invariant(summary: pd.DataFrame) -> pd.Series:
    """Per row of the summary: whether its matchup is seed-invariant, detected from the stored
    values: it finished on two seeds or more and every metric (:func:`metric_columns`) took one
    value on all of them (a deterministic forecaster against a deterministic or adaptive nature, a
    replayed series). Its seeds then repeat one game: its values are exact, with nothing to
    estimate. A metric that merely happens to repeat (a count over T rounds) does not make a
    matchup seed-invariant.

    Examples
    --------
    >>> s = pd.DataFrame({"forecaster": "f", "nature": ["a", "a", "b", "b"], "seed": [0, 1, 0, 1],
    ...                   "brier": [0.2, 0.2, 0.2, 0.3], "bias": [0.1, 0.1, 0.1, 0.1]})
    >>> seed_invariant(s).tolist()
    [True, True, False, False]
    """
    read, head = columns(summary)
    return _invariant(read, _base(read, head), metric_columns(head))


#: What reads columns of a summary: ``read(names)`` gives those columns of every row, in the summary's order.
Read = Callable[[Sequence[str]], pd.DataFrame]


def columns(summary: pd.DataFrame | Path) -> tuple[Read, pd.DataFrame]:
    """How to read ``summary`` a few columns at a time (a frame, or the path of its Parquet file), and a few of its
    rows with every column and its type (what :func:`metric_columns` and :func:`_keys` look at)."""
    if isinstance(summary, pd.DataFrame):
        return (lambda names: summary[list(names)]), summary
    path = Path(summary)
    file = pq.ParquetFile(path)
    if file.metadata.num_rows <= WHOLE_ROWS:  # a few MB: read at once
        return columns(file.read().to_pandas())
    head = next(file.iter_batches(batch_size=64)).to_pandas()
    return (lambda names: pq.read_table(path, columns=list(names)).to_pandas()), head


#: A summary file of this many rows or fewer is read whole (a few tens of MB), not a few columns at a time.
WHOLE_ROWS = 1 << 14


def _base(read: Read, head: pd.DataFrame) -> pd.DataFrame:
    """The columns of ``read``'s summary that name and qualify its rows: keys, seed, status, adaptive."""
    return read([c for c in [*_keys(head), "seed", "status", "adaptive"] if c in head])


def _blocks(metrics: Sequence[str], rows: int) -> list[list[str]]:
    """``metrics`` in blocks whose long table (a row per matchup and metric) stays under :data:`LONG_ROWS`
    rows, and :data:`SEED_METRICS` metrics at most."""
    size = max(1, min(SEED_METRICS, LONG_ROWS // max(rows, 1)))
    return [list(metrics[i : i + size]) for i in range(0, len(metrics), size)]


def _invariant(read: Read, base: pd.DataFrame, metrics: Sequence[str]) -> pd.Series:
    """:func:`seed_invariant` of the summary whose ``base`` columns are given, its metrics read block by block."""
    keys = _keys(base)
    finished = _finished(base)
    ok = base.loc[finished]
    if not metrics or ok.empty:
        return pd.Series(False, index=base.index)
    by = [ok[k] for k in keys] if keys else [pd.Series(0, index=ok.index)]
    inv = ok.groupby(by, dropna=False).size() >= 2
    for block in _blocks(metrics, len(base)):  # one value on every seed: of each metric of each block
        inv &= read(block).loc[finished].groupby(by, dropna=False).nunique(dropna=False).max(axis=1) <= 1
    flags = dict(zip(inv.index if keys else [0], inv.to_numpy(bool), strict=False))
    rows = base[keys].itertuples(index=False, name=None) if keys else [0] * len(base)
    return pd.Series([flags.get(_key(r, len(keys)), False) for r in rows], index=base.index, dtype=bool)


def _key(row: tuple, n: int):
    """A groupby key as pandas gives it: the value itself for one key column, a tuple for several."""
    return row[0] if n == 1 else row


def seed_stats(
    summary: pd.DataFrame, metrics: Sequence[str] | None = None, invariant: pd.Series | None = None
) -> pd.DataFrame:
    """Statistics across seeds of every metric of every matchup: one row per (game, forecaster,
    nature, T, metric).

    Columns: the matchup's keys, ``metric``, ``n`` (seeds that finished with a value that is not
    NaN), ``n_effective`` (1 when those values are identical), ``mean``, ``std``, ``half``,
    ``ci_low``, ``ci_high`` (95% Student-t; NaN when n_effective = 1: the mean is then exact, or
    rests on one seed or on values with no spread to measure), ``n_forfeit`` (seeds forfeited,
    left out) and ``seed_invariant`` (:func:`seed_invariant`: the seeds repeat one game, so the
    mean is exact; n_effective is then 1). A matchup has a row for a metric when one of its
    seeds has a value, or when one forfeited and some matchup of its game has the metric (so a
    matchup whose every seed forfeited keeps its rows, with n = 0).

    Parameters
    ----------
    summary : one row per matchup (game, forecaster, nature, seed, T, status, metrics...); any
        of the key columns may be absent.
    metrics : the metric columns; by default :func:`metric_columns`.
    invariant : :func:`seed_invariant` of ``summary``, when already computed.
    """
    read, head = columns(summary)
    metrics = list(metric_columns(head) if metrics is None else metrics)
    base = _base(read, head)
    invariant = _invariant(read, base, metric_columns(head)) if invariant is None else invariant  # every metric
    return _seed_stats(read, base, metrics, invariant)


def _seed_stats(read: Read, base: pd.DataFrame, metrics: Sequence[str], invariant: pd.Series) -> pd.DataFrame:
    """:func:`seed_stats` of the summary whose ``base`` columns are given, its metrics read block by block."""
    keys = _keys(base)
    # a few metrics at a time (the long table has a row per matchup and metric), in the order one pass gives
    blocks = [_seed_stats_block(pd.concat([base, read(b)], axis=1), keys, b) for b in _blocks(metrics, len(base))]
    filled = [b for b in blocks if len(b)]
    if len(filled) > 1:
        stats = pd.concat(filled, ignore_index=True).sort_values([*keys, "metric"], kind="stable", ignore_index=True)
    else:
        stats = (filled or blocks or [_seed_stats_block(base, keys, [])])[0]
    if not keys:
        stats["seed_invariant"] = bool(invariant.any())
        return stats
    inv = base[keys].assign(seed_invariant=invariant).drop_duplicates(keys)
    return stats.merge(inv, on=keys, how="left").fillna({"seed_invariant": False})


#: Metrics whose long table :func:`seed_stats` makes at once (memory bounded by the matchups of a few metrics).
SEED_METRICS = 8
#: Rows of that long table at most (fewer metrics at once for a summary of many matchups).
LONG_ROWS = 1 << 21


def _seed_stats_block(summary: pd.DataFrame, keys: list[str], metrics: list[str]) -> pd.DataFrame:
    """The statistics across seeds of ``metrics`` (:func:`seed_stats` without ``seed_invariant``)."""
    numbers = summary[metrics].apply(pd.to_numeric, errors="coerce").astype(float)
    long = pd.concat([summary[keys], numbers], axis=1).melt(id_vars=keys, var_name="metric")
    long["forfeit"] = np.tile(~_finished(summary).to_numpy(bool), len(metrics))
    # a metric belongs to a game when some row of the game has it, finished or not
    in_game = long["value"].notna().groupby([long[k] for k in ["game"] if k in keys] + [long["metric"]])
    long = long.loc[in_game.transform("any")]
    stats = mean_ci(long.assign(value=long["value"].mask(long["forfeit"])), [*keys, "metric"])
    stats["n_forfeit"] = long.groupby([*keys, "metric"], sort=True, dropna=False)["forfeit"].sum().to_numpy(int)
    return stats.loc[(stats["n"] > 0) | (stats["n_forfeit"] > 0)].reset_index(drop=True)


def leaderboard(
    summary: pd.DataFrame, metrics: Sequence[str] | None = None, stats: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Forecasters ranked per (game, T, metric) by their mean over natures of their seed means.

    Columns: ``game``, ``T``, ``metric``, ``forecaster``, ``n_natures`` (natures with a value),
    ``mean``, ``half``, ``ci_low``, ``ci_high``, ``exact`` (every nature's matchup is
    seed-invariant, :func:`seed_invariant`: the mean is exact, no interval), ``rank`` (1 = best
    in the metric's :func:`direction`; ties share the smallest rank, "min" style), ``mean_rank``
    (the mean over natures of the forecaster's rank on each nature),
    ``worst`` and ``worst_nature`` (the worst seed mean over natures in the metric's direction, and
    the nature attaining it: the forecaster's worst case, the criterion defensive forecasting is
    built for; NaN for a metric that is not ranked) and ``worst_rank``. The interval treats the
    natures as fixed and the seeds as random: the variance of the mean of K seed means is
    sum(sd_k^2 / n_k) / K^2, with Welch-Satterthwaite degrees of freedom (NaN when some nature has
    a single seed); a nature whose seeds gave one value adds no variance, and when every nature
    does there is no interval (never a zero-width one).

    Parameters
    ----------
    summary : one row per matchup (see :func:`seed_stats`).
    metrics : the metrics; by default every ranked one (:func:`metric_columns`). A metric that
        is not ranked (direction ``None``) gets its means and intervals, and NaN ranks.
    stats : :func:`seed_stats` of ``summary``, when already computed (of these metrics or more: a metric's
        rows do not depend on the others).
    """
    metrics = metric_columns(summary, ranked=True) if metrics is None else list(metrics)
    cell = ["game", "T", "metric"]
    st = (
        seed_stats(summary, metrics)
        if stats is None
        else stats.loc[stats["metric"].isin(metrics)].reset_index(drop=True)
    )
    st = st.loc[st["n"] > 0].assign(**{k: st.get(k, "") for k in (*cell, "nature")})
    # ranks of -mean where higher is better; the variance of each seed mean and its Welch-Satterthwaite term
    way = st["metric"].map(direction)
    st = st.assign(signed=st["mean"].where(way == "min", -st["mean"]).where(way.notna()), v=st["std"] ** 2 / st["n"])
    st = st.assign(
        nature_rank=st.groupby([*cell, "nature"])["signed"].rank(method="min"), v2=st["v"] ** 2 / (st["n"] - 1)
    )
    board = (
        st.groupby([*cell, "forecaster"], sort=True)
        .agg(
            n_natures=("mean", "size"),
            mean=("mean", "mean"),
            signed=("signed", "mean"),
            v=("v", "sum"),
            v2=("v2", "sum"),
            fewest=("n", "min"),
            mean_rank=("nature_rank", "mean"),
            exact=("seed_invariant", "all"),
        )
        .reset_index()
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        half = np.where(board["v"] > 0, t_quantile(board["v"] ** 2 / board["v2"]) * np.sqrt(board["v"]), np.nan)
    board["half"] = np.where(board["fewest"] >= 2, half / board["n_natures"], np.nan)
    board["ci_low"], board["ci_high"] = board["mean"] - board["half"], board["mean"] + board["half"]
    board["rank"] = board.groupby(cell)["signed"].rank(method="min").astype("Int64")
    board = board.merge(_worst_cases(st, cell), on=[*cell, "forecaster"], how="left")
    board["worst_rank"] = board.groupby(cell)["worst_signed"].rank(method="min").astype("Int64")
    board = board.sort_values([*cell, "rank", "forecaster"]).reset_index(drop=True)
    return board[[*cell, *_BOARD_COLUMNS]]


#: The columns of :func:`leaderboard` after the game, T and metric.
_BOARD_COLUMNS = (
    "forecaster",
    "n_natures",
    "mean",
    "half",
    "ci_low",
    "ci_high",
    "exact",
    "rank",
    "mean_rank",
    "worst",
    "worst_nature",
    "worst_rank",
)


def _worst_cases(st: pd.DataFrame, cell: list[str]) -> pd.DataFrame:
    """Each forecaster's worst case over natures per ``cell``: the largest signed seed mean (NaN signed: a metric
    not ranked), as ``worst`` (its mean), ``worst_nature`` and ``worst_signed``."""
    worst = st.loc[st["signed"].notna()].sort_values("signed", ascending=False, kind="stable")
    worst = worst.groupby([*cell, "forecaster"], sort=False).head(1)[[*cell, "forecaster", "mean", "nature", "signed"]]
    return worst.rename(columns={"mean": "worst", "nature": "worst_nature", "signed": "worst_signed"})


def paired(summary: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Paired comparisons of forecasters on the same seeds: per (game, nature, T) and pair a < b
    (alphabetically), the differences a - b of ``metric`` seed by seed.

    Columns: the keys, ``metric``, ``forecaster_a``, ``forecaster_b``, ``n`` (seeds where both
    finished with a value), ``n_effective``, ``mean_diff``, ``std``, ``half``, ``ci_low``,
    ``ci_high`` (95% Student-t), ``exact`` and ``significant``. When both matchups are
    seed-invariant (:func:`seed_invariant`) the difference is exact: ``exact`` is True,
    n_effective 1, no interval, and ``significant`` says that it is not zero. When the
    difference merely repeats on every seed, n_effective is 1 and there is no interval either,
    and it is not called significant. Otherwise ``significant`` says the interval excludes 0. The pairing is by seed: an
    oblivious nature gives both forecasters the same outcome sequence (its seed does not depend
    on the forecaster: arena/seeding.py); an adaptive nature reacts to each forecaster, so its pairs share
    the random numbers (common random numbers), not the outcomes.

    Examples
    --------
    >>> s = pd.DataFrame({"forecaster": ["b", "a", "b", "a", "b"], "nature": "n", "seed": [0, 0, 1, 1, 2],
    ...                   "pinball": [1.0, 0.5, 2.0, 1.0, 9.0]})
    >>> r = paired(s, "pinball").iloc[0]  # seed 2 has no pair
    >>> r["n"], r["mean_diff"], r["significant"]
    (np.int64(2), np.float64(-0.75), np.False_)
    >>> r = paired(s.assign(pinball=[1.0, 0.5, 1.0, 0.5, 1.0]), "pinball").iloc[0]  # the same game on every seed
    >>> r["n_effective"], r["mean_diff"], r["exact"], r["half"]
    (np.int64(1), np.float64(-0.5), np.True_, np.float64(nan))
    """
    return _paired(summary, [metric])


#: Metrics whose seeds' pairs :func:`_paired` merges at once (a row per pair of forecasters, seed and metric).
PAIRED_METRICS = 1


def _paired(summary: pd.DataFrame, metrics: Sequence[str], invariant: pd.Series | None = None) -> pd.DataFrame:
    """:func:`paired` of each metric of ``metrics``, one table in their order, merged :data:`PAIRED_METRICS` metrics
    at a time; ``invariant``: :func:`seed_invariant` of ``summary``, when already computed."""
    read, head = columns(summary)
    base = _base(read, head)
    invariant = _invariant(read, base, metric_columns(head)) if invariant is None else invariant
    return _paired_of(read, base, metrics, invariant)


def _paired_of(read: Read, base: pd.DataFrame, metrics: Sequence[str], invariant: pd.Series) -> pd.DataFrame:
    """:func:`_paired` of the summary whose ``base`` columns are given, its metrics read block by block."""
    metrics = list(metrics)
    blocks = (metrics[i : i + PAIRED_METRICS] for i in range(0, max(len(metrics), 1), PAIRED_METRICS))
    return _stacked([_paired_block(pd.concat([base, read(b)], axis=1), b, invariant) for b in blocks])


def _stacked(parts: list[pd.DataFrame]) -> pd.DataFrame:
    """The tables ``parts`` one under the other (the empty ones left out; the first when all are empty)."""
    filled = [p for p in parts if len(p)]
    return pd.concat(filled, ignore_index=True) if len(filled) > 1 else (filled or parts)[0]


def _paired_block(summary: pd.DataFrame, metrics: Sequence[str], invariant: pd.Series) -> pd.DataFrame:
    """:func:`paired` of each metric of ``metrics``, one table in their order: the seeds' pairs merged a few
    (game, nature, T) at a time, in their order (:func:`_cells`: memory bounded by the pairs of a few)."""
    keys = _keys(summary)
    extra = ["adaptive"] if "adaptive" in summary else []  # carried along: which pairs share outcomes
    others = [k for k in keys if k != "forecaster"] + extra
    ids = [*keys, *extra, "seed", "_inv"]
    d = summary.assign(_inv=invariant).loc[_finished(summary), [*ids, *metrics]]
    # one block of rows per metric, in the order of ``metrics`` (melt stacks them so): its position is a key
    d = d.melt(id_vars=ids, value_vars=list(metrics), var_name="_metric", value_name="_value")
    d = d.assign(_pos=np.repeat(np.arange(len(metrics)), len(d) // max(len(metrics), 1))).drop(columns="_metric")
    d = d.dropna(subset=["_value"])
    return _stacked([_pairs(cells, metrics, others) for cells in _cells(d, ["_pos", *others])])


#: Rows of seeds whose pairs :func:`_paired_block` merges at once, a few (metric, game, nature, T) at a time.
PAIR_ROWS = 1 << 17


def _cells(d: pd.DataFrame, by: list[str]) -> list[pd.DataFrame]:
    """The rows ``d`` as consecutive runs of whole cells of ``by`` (metric, game, nature, T), in their sorted order,
    of :data:`PAIR_ROWS` rows or so each; ``d`` itself when it is no more."""
    if len(d) <= PAIR_ROWS:
        return [d]
    cell = d.groupby(by, sort=True, dropna=False).ngroup().to_numpy()
    sizes = np.bincount(cell)
    chunk = np.cumsum(sizes) // PAIR_ROWS  # the run of each cell: whole cells, in order
    return [d.loc[mask] for k in np.unique(chunk) if (mask := np.isin(cell, np.flatnonzero(chunk == k))).any()]


def _pairs(d: pd.DataFrame, metrics: Sequence[str], others: list[str]) -> pd.DataFrame:
    """The paired statistics of the long rows ``d`` (of :func:`_paired_block`), sorted by metric, ``others`` and
    pair."""
    m = d.merge(d, on=["_pos", *others, "seed"], suffixes=("_a", "_b"))
    m = m.loc[m["forecaster_a"] < m["forecaster_b"]]
    m = m.assign(diff=m["_value_a"] - m["_value_b"], exact=m["_inv_a"] & m["_inv_b"])
    pair = ["_pos", *others, "forecaster_a", "forecaster_b"]
    out = mean_ci(m, pair, "diff").rename(columns={"mean": "mean_diff"})
    out.insert(len(pair) - 2, "metric", [metrics[i] for i in out["_pos"].to_numpy(int)])
    out["exact"] = m.groupby(pair, sort=True, dropna=False)["exact"].all().to_numpy(bool) & (out["n"] >= 2)
    out["significant"] = np.where(out["exact"], out["mean_diff"] != 0, (out["ci_low"] > 0) | (out["ci_high"] < 0))
    return out.drop(columns="_pos")


#: The tables across forecasters and natures, which :func:`write_aggregates` leaves out for a single matchup.
ACROSS = ("paired", "minimax")


def single_matchup(summary: pd.DataFrame) -> bool:
    """Whether a summary holds a single matchup: one game, one forecaster, one nature (any seeds and
    horizons); an empty summary holds none. A single matchup has no pair of forecasters to compare, and its
    forecaster x nature game is one by one, whose value is the seed mean already in ``seed_stats``: the
    tables :data:`ACROSS` would say nothing.

    Examples
    --------
    >>> s = pd.DataFrame({"game": "binary", "forecaster": "k29", "nature": "n", "seed": [0, 1], "T": 10})
    >>> single_matchup(s), single_matchup(s.assign(forecaster=["k29", "ogd"])), single_matchup(s.iloc[:0])
    (True, False, False)
    """
    return len(summary) > 0 and all(
        summary[k].nunique(dropna=False) <= 1 for k in ("game", "forecaster", "nature") if k in summary
    )


def write_aggregates(out_dir: Path | str, summary: pd.DataFrame | Path) -> dict[str, Path]:
    """Write ``seed_stats``, ``leaderboard``, ``paired`` and ``minimax`` (every ranked metric;
    :func:`arena.minimax.minimax_table`) of ``summary`` (a frame, or its Parquet file: read a few columns at a
    time) as Parquet and CSV; for a single matchup (:func:`single_matchup`) only the first two (any ``paired``
    and ``minimax`` files left in ``out_dir`` by an earlier aggregation are removed: they would describe other
    matchups).

    Returns the Parquet paths by name; each file is written atomically (temp file + rename).
    """
    out_dir = Path(out_dir)
    read, head = columns(summary)
    metrics, ranked = metric_columns(head), metric_columns(head, ranked=True)
    base = _base(read, head)
    invariant = _invariant(read, base, metrics)  # once: every table below needs it
    stats = _seed_stats(read, base, metrics, invariant)
    tables = {"seed_stats": stats, "leaderboard": leaderboard(head, ranked, stats=stats)}
    if base.empty or single_matchup(base):  # nothing, or nothing to compare
        for name in ACROSS:
            for suffix in (".parquet", ".csv"):
                (out_dir / f"{name}{suffix}").unlink(missing_ok=True)
    else:
        from arena.minimax import minimax_table

        tables["paired"] = _paired_of(read, base, ranked, invariant) if ranked else pd.DataFrame()
        tables["minimax"] = minimax_table(stats, ranked, {m: direction(m) for m in ranked})
    return {name: write_table(df, out_dir, name) for name, df in tables.items()}


#: In a results directory: what its tables were aggregated from, and the tables as written (:func:`write_tables`).
TABLES_STAMP = ".tables.json"


def _stamp(out_dir: Path, ids: Sequence[str], written: Sequence[tuple[str, str]]) -> dict:
    """The code version, the ids aggregated, and name, size and modification time (ns) of every input of the
    tables (the store's logs and files, the traces) and of every table file (Parquet and CSV): equal stamps,
    equal tables."""

    def files(paths) -> list:
        return [[p.name, st.st_size, st.st_mtime_ns] for p in paths if (st := _stat(p)) is not None]

    folders = [out_dir / "matchups", out_dir / "traces"]
    others = (p for f in folders if f.is_dir() for p in sorted(f.iterdir()) if p.suffix != ".jsonl")
    inputs = [*logs(out_dir), *(p for p in others if not p.name.startswith("."))]  # not the markers of play
    outputs = (out_dir / f"{name}{suffix}" for _, name in written for suffix in (".parquet", ".csv"))
    return {
        "code_version": code_version(),
        "ids": hashlib.sha256("\n".join(ids).encode()).hexdigest(),
        "inputs": files(inputs),
        "tables": files(outputs),
        "written": [list(w) for w in written],
    }


def _stat(path: Path):
    try:
        return path.stat()
    except OSError:
        return None


def current_tables(out_dir: Path | str, only: set[str] | None = None) -> dict[str, Path] | None:
    """The Parquet paths by name of the tables of ``out_dir``, if :func:`write_tables` aggregated them from
    exactly the stored matchups there are now (of ``only``, when given), with this code, and none has
    changed since; else None (then aggregate again)."""
    out_dir = Path(out_dir)
    ids = selected_ids(out_dir, only)
    return _up_to_date(out_dir, ids) if ids else None


def _up_to_date(out_dir: Path, ids: Sequence[str]) -> dict[str, Path] | None:
    """The tables' paths by name, if the stamp says they were aggregated from exactly these stored matchups by
    this code and have not changed since; else None. A stamp that is missing or unreadable is not up to date."""
    try:
        stamp = json.loads((out_dir / TABLES_STAMP).read_text())
        written = [(str(name), str(file)) for name, file in stamp["written"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if stamp != _stamp(out_dir, ids, written):
        return None
    return {name: out_dir / f"{file}.parquet" for name, file in written}


def write_tables(out_dir: Path | str, only: set[str] | None = None) -> dict[str, Path]:
    """Aggregate a results directory (the matchups ``only``, when given) into summary/curves/reliability
    Parquet and CSV files (:func:`arena.stream.stream_tables`: in bounded memory), and the tables across seeds of
    :func:`write_aggregates` (seed_stats, leaderboard, paired, minimax; not the last two for a single
    matchup).

    Tables already aggregated from the same stored matchups by the same code, and unchanged since, are
    kept as they are (:data:`TABLES_STAMP` records what they were made from): ``arena-report`` on a
    finished run aggregates nothing again. A run with a result left out (corrupt) is never stamped, so
    each aggregation reports it again.
    """
    out_dir = Path(out_dir)
    ids = selected_ids(out_dir, only)
    if ids and (kept := _up_to_date(out_dir, ids)) is not None:
        return kept
    rows, written = stream_tables(out_dir, only)
    written.update(write_aggregates(out_dir, written["summary"]))
    if rows == len(ids) and not damaged(out_dir):  # all aggregated: nothing left out to report again
        write_text_atomic(
            json.dumps(_stamp(out_dir, ids, [(n, p.stem) for n, p in written.items()])), out_dir / TABLES_STAMP
        )
    else:
        (out_dir / TABLES_STAMP).unlink(missing_ok=True)
    return written


__all__ = [
    "ACROSS",
    "DIRECTION",
    "TABLES_STAMP",
    "columns",
    "current_tables",
    "direction",
    "leaderboard",
    "metric_columns",
    "paired",
    "seed_invariant",
    "seed_stats",
    "single_matchup",
    "write_aggregates",
    "write_tables",
]
