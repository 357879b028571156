"""Sequential seeds: a tournament that adds seeds to its undecided pairs only (``tournament.until_decided=true``).

The tournament first plays its listed seeds (``tournament.seeds``). Then, one seed at a time up to
``tournament.seed_budget`` seeds (:func:`arena.plan.seeds_of`), it decides every ordered pair of forecasters
of each horizon on the stored results, and plays the next seed only for the forecasters of the pairs the user
asked for (``tournament.decide``: every pair by default; :func:`arena.plan.requested_pairs`) that are still
undecided, against every nature. It stops when every asked pair is decided or the budget is spent.

The statistic is an e-process *over seeds*. For a pair (A, B) and one seed s, ``e_s`` is the e-process of
:func:`arena.pairs.pair_evalues` on that seed's matchups (the per-round score difference averaged over the
natures both finished) at the game's last round: an e-value, E[e_s] <= 1, against "A is no better than B on
seed s" (the running mean of the conditional means of the difference is at most 0). The pair's e-process is
the product of the ``e_s`` of the seeds both forecasters played (:func:`combine`). Why that is anytime-valid
in the seeds it adds:

- the seeds' games are independent (each is played from its own seed; a deterministic matchup repeats exactly,
  which is trivially independent), so given everything played on the seeds before s, ``e_s`` is still an
  e-value when the null holds on every seed;
- whether a forecaster plays seed s is decided before seed s is played, from the earlier seeds only: a pair
  left out of seed s multiplies by 1, a predictable choice;

so the product is a nonnegative supermartingale over seeds (a test martingale: Vovk & Wang 2021;
Ramdas et al. 2023), and its value at any stopping time, such as "every asked pair is decided" or "the budget
is spent", is an e-value (optional stopping). e-BH over every ordered pair at level alpha (Wang & Ramdas 2022:
valid for e-values under any dependence) then keeps the expected share of false claims among the claims made
at most alpha, at the stop and at every seed before it. The pooled e-values of ``pairs.csv`` (one e-process
over rounds of the difference averaged over all the matchups played) are those of a fixed set of matchups:
with seeds added while looking at them they carry no such guarantee, so the run's sequential claims are
written as ``until_decided.csv`` (:data:`TABLE`).

Same seed, same result: a matchup's id holds its seed and config, not the plan it came from, so every
matchup played here is the one a fixed-seed run would play and store; the summary is the fixed-seed run's
summary restricted to the matchups played.

Examples
--------
>>> e = np.array([[[np.nan, np.nan], [np.nan, np.nan]], [[3.0, 2.0], [np.nan, np.nan]]])
>>> combine(e)[1, 0], np.isnan(combine(e)[0, 1])  # seeds both played multiply; none played: no e-value
(np.float64(6.0), np.True_)
>>> bool(np.isfinite(combine(np.array([np.inf, 1e300, 1e300]))))  # capped: e-BH counts it
True
>>> undecided(np.array([[np.nan, 50.0], [0.1, np.nan]]), [(0, 1)], alpha=0.05)  # 50 >= m / alpha = 2 / 0.05
array([False])

References
----------
Vovk & Wang (2021), E-values: calibration, combination and applications, Ann. Statist. 49(3). Wang & Ramdas
(2022), False discovery rate control with e-values, JRSS-B 84(3). Ramdas, Grünwald, Vovk & Shafer (2023),
Game-theoretic statistics and safe anytime-valid inference, Statist. Sci. 38(4).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd
from omegaconf import DictConfig

from arena.compare import game_params, per_round, round_scores
from arena.pairs import claims, pair_evalues
from arena.plan import decide_metric, listed_seeds, plan, planned_matchups, requested_pairs, seeds_of
from arena.store import stored_rounds

#: The claims' level and method: those of ``pairs.csv`` (:func:`arena.pairs.every_pair`'s defaults).
ALPHA, METHOD = 0.05, "e-BH"
#: The largest log e-value kept (e^700 is about 1e304, below the largest float).
LOG_CAP = 700.0
#: The table of the sequential claims, beside the summary (.parquet and .csv).
TABLE = "until_decided"


def combine(factors: np.ndarray) -> np.ndarray:
    """Each pair's e-process over seeds: the product of its per-seed e-values ``factors`` (..., S) along the
    last axis, a seed the pair did not play (NaN) counting as 1; NaN where it played none. Each factor and the
    product are capped at e^LOG_CAP (a smaller e-value is still one), so that overwhelming evidence stays a
    finite number that e-BH counts."""
    factors = np.asarray(factors, float)
    played = ~np.isnan(factors)
    with np.errstate(divide="ignore"):
        log = np.minimum(np.log(np.where(played, factors, 1.0)), LOG_CAP).sum(axis=-1)
    return np.where(played.any(axis=-1), np.exp(np.minimum(log, LOG_CAP)), np.nan)


def undecided(e: np.ndarray, pairs: Sequence[tuple[int, int]], alpha: float = ALPHA) -> np.ndarray:
    """Whether each of the ``pairs`` (i, j) of the e-values ``e`` (..., F, F: every ordered pair of one family)
    is left unseparated by the claims of :func:`arena.pairs.claims` (e-BH over every ordered pair): neither "i
    beats j" nor "j beats i". Shape (..., len(pairs))."""
    said = claims(np.asarray(e, float)[..., None], alpha, METHOD)[..., 0]
    i, j = np.array(pairs, int).reshape(-1, 2).T
    return ~(said[..., i, j] | said[..., j, i])


def players(open_pairs: np.ndarray, pairs: Sequence[tuple[int, int]], F: int) -> np.ndarray:
    """Whether each of F forecasters is in one of the ``pairs`` still open (``open_pairs``, from
    :func:`undecided`): those play the next seed. Shape (..., F)."""
    out = np.zeros(open_pairs.shape[:-1] + (F,), bool)
    for k, (i, j) in enumerate(pairs):
        out[..., i] |= open_pairs[..., k]
        out[..., j] |= open_pairs[..., k]
    return out


def seed_factors(out_dir: Path, rows: pd.DataFrame, labels: Sequence[str], metric: str) -> np.ndarray:
    """The per-seed e-values (F, F) of one seed and horizon: :func:`arena.pairs.pair_evalues` at the last round
    on the finished matchups ``rows`` (of forecasters ``labels``); NaN where a pair shares no nature."""
    ok = rows.loc[rows["status"] == "ok"] if "status" in rows else rows
    natures = sorted(ok["nature"].astype(str).unique())
    scores, lo, hi = {}, 0.0, 1.0
    stored = stored_rounds(out_dir, ok["matchup_id"])
    for _, row in ok.iterrows():
        p, y, _ = per_round(out_dir, row, stored=stored)
        values, lo, hi = round_scores(p, y, metric, game_params(row))
        scores[(str(row["forecaster"]), str(row["nature"]))] = values
    F = len(labels)
    if not scores:
        return np.full((F, F), np.nan)
    n = min(len(v) for v in scores.values())
    s = np.full((F, len(natures), n), np.nan)
    for (name, nature), values in scores.items():
        s[list(labels).index(name), natures.index(nature)] = values[:n]
    return pair_evalues(s, lo, hi, np.array([n - 1]))[..., 0]


class SeedRun(NamedTuple):
    """What a run until decided played: its claims table (:data:`TABLE`), the ids of the matchups it played,
    the size of the fixed-seed plan with every seed of the budget, and the seeds it reached."""

    table: pd.DataFrame
    played: list[str]
    fixed: int
    seeds: int


def until_decided(cfg: DictConfig, out_dir: Path, play) -> SeedRun:
    """Run the tournament of ``cfg`` (no ``hydra`` key) until every asked pair is decided or the seed budget is
    spent, once its listed seeds are stored in ``out_dir``: ``play(items)`` plays a list of (matchup id,
    resolved config) and stores them. Returns what it played; prints a line per seed added."""
    t = cfg.tournament
    entries = plan(cfg)
    labels = list(dict.fromkeys(e.forecaster_label for e in entries))
    horizons = list(dict.fromkeys(e.T for e in entries))
    index = {name: i for i, name in enumerate(labels)}
    asked = [(index[a], index[b]) for a, b in requested_pairs(t, labels)]
    metric = decide_metric(t, str(cfg.game.name))
    seeds, listed = seeds_of(t), len(listed_seeds(t))
    factors = {T: np.full((len(labels), len(labels), len(seeds)), np.nan) for T in horizons}
    played: list[str] = []
    playing = {T: set(labels) for T in horizons}
    for k, seed in enumerate(seeds):
        batch = planned_matchups(
            cfg, entries=[e for e in entries if e.seed == seed and e.forecaster_label in playing[e.T]]
        )
        if k >= listed:  # the listed seeds are the sweep's
            open_pairs = sum(int(undecided(combine(factors[T][..., :k]), asked).sum()) for T in horizons)
            names = sorted(set().union(*playing.values()), key=labels.index)
            print(
                f"[arena] until decided: seed {seed} for {open_pairs} undecided pair(s): {len(batch)} matchups of "
                f"{', '.join(names)}",
                flush=True,
            )
            play(batch)
        played += [mid for mid, _ in batch]
        _add_seed(factors, k, out_dir, [mid for mid, _ in batch], labels, metric)
        if k + 1 >= listed:
            playing = {T: _playing(combine(factors[T][..., : k + 1]), asked, labels) for T in horizons}
            if not any(playing.values()):
                break
    table = _table(factors, labels, asked, str(cfg.game.name), metric)
    return SeedRun(table, played, len(entries), k + 1)


def _playing(e: np.ndarray, asked: list[tuple[int, int]], labels: list[str]) -> set[str]:
    return {labels[i] for i in np.flatnonzero(players(undecided(e, asked), asked, len(labels)))}


def _add_seed(factors: dict, k: int, out_dir: Path, ids: list[str], labels: list[str], metric: str) -> None:
    """Fill seed ``k``'s per-seed e-values of every horizon from the stored matchups ``ids``."""
    from arena.stream import collect

    if not ids:
        return
    summary = collect(out_dir, set(ids))["summary"]
    for T, rows in summary.groupby("T"):
        if int(T) in factors:
            factors[int(T)][..., k] = seed_factors(out_dir, rows, labels, metric)


def _table(factors: dict, labels: list[str], asked: list[tuple[int, int]], game: str, metric: str) -> pd.DataFrame:
    """Every ordered pair of every horizon: the seeds it played, its e-value over seeds, the e-BH claim, and
    whether the pair was asked for."""
    rows = []
    asked_set = set(asked) | {(j, i) for i, j in asked}
    for T, f in factors.items():
        e = combine(f)
        said = claims(e[..., None], ALPHA, METHOD)[..., 0]
        for i, a in enumerate(labels):
            for j, b in enumerate(labels):
                if i != j:
                    rows.append(
                        {
                            "game": game,
                            "T": T,
                            "metric": metric,
                            "forecaster_a": a,
                            "forecaster_b": b,
                            "seeds": int((~np.isnan(f[i, j])).sum()),
                            "e_value": e[i, j],
                            "e_bh": bool(said[i, j]),
                            "asked": (i, j) in asked_set,
                        }
                    )
    return pd.DataFrame(rows).assign(alpha=ALPHA)


def played_text(run: SeedRun) -> str:
    """One line: the asked pairs decided, the matchups played against the fixed-seed plan with the budget's
    seeds, and where the claims are."""
    asked = run.table.loc[run.table["asked"]]
    pairs = asked.assign(key=[frozenset(p) for p in zip(asked["forecaster_a"], asked["forecaster_b"], strict=True)])
    decided = pairs.groupby(["T", "key"])["e_bh"].any()
    saved = run.fixed - len(run.played)
    return (
        f"until decided: {int(decided.sum())} of {len(decided)} asked pairs decided by seed {run.seeds}; "
        f"{len(run.played)} matchups played, {run.fixed} in the fixed-seed plan with the budget's seeds: "
        f"{saved} saved ({saved / max(run.fixed, 1):.0%}); claims in {TABLE}.csv"
    )


def play_here(out_dir: Path, items: list[tuple[str, dict]], workers: int) -> None:
    """Play and store the matchups ``items`` that are not stored yet, dealt round-robin to ``workers`` processes
    forked from this one, each supervised (:func:`arena.supervise.play_supervised`) and appending to a log of
    its own."""
    from arena.store import done_ids
    from arena.supervise import children, end_children_since, forked_pool, play_supervised

    done = done_ids(out_dir, [mid for mid, _ in items])
    todo = [(mid, m) for mid, m in items if mid not in done]
    workers = max(min(workers, len(todo)), 1)
    stores = [functools.partial(_store, out_dir, f"seeds-{w}-of-{workers}") for w in range(workers)]
    if workers == 1:
        play_supervised(out_dir, todo, stores[0], stores[0])
        return
    others, pool = children(), None
    try:
        pool = forked_pool(workers)
        futures = [
            pool.submit(play_supervised, out_dir, todo[w::workers], stores[w], stores[w]) for w in range(workers)
        ]
        for future in futures:
            future.result()
    finally:
        end_children_since(others)
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


def _store(out_dir: Path, log: str, mid: str, config: dict, crash: str | None = None) -> None:
    from arena.jobs import one_line_errors, run_matchup

    with one_line_errors(out_dir):
        run_matchup(config, out_dir, crash, mid, log)


__all__ = [
    "ALPHA",
    "METHOD",
    "TABLE",
    "SeedRun",
    "combine",
    "play_here",
    "played_text",
    "players",
    "seed_factors",
    "undecided",
]
