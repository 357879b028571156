"""Every pair of forecasters compared anytime-validly, with the error controlled over all pairs.

For one game, T and score (lower is better), every forecaster's per-round scores on the (nature, seed)
matchups it finished give, for every ordered pair (A, B), the per-round difference averaged over the
matchups both finished, ``d_t = mean_k (score_B,k,t - score_A,k,t)``: positive where A scores lower. The
e-process of :func:`arena.sequential.e_process` on d (bounded by the score's range) is an e-value, at any
stopping time, against "A is no better than B": the running mean over rounds of the conditional means
(given every matchup's past) of d is at most 0 at every round. The averaging over natures and seeds is the
leaderboard's: a claim "A beats B" is about the mean over the tournament's natures and seeds.

The claims are chosen among all ordered pairs at once:

- **e-BH** (Wang & Ramdas 2022): with m e-values, claim the k* largest, k* the largest k whose k-th largest
  e-value is at least m / (alpha k). The expected share of false claims among those made (the false
  discovery rate) is at most alpha, whatever the dependence between the e-values; applied to the
  e-processes' values at a stopping time, they are e-values, so it holds at any stopping time.
- **e-Bonferroni**: claim where an e-value is at least m / alpha; the chance of any false claim (the
  family-wise error) is at most alpha, at any stopping time.

The claims are those at the last round; ``decided_at`` is the first checkpoint round from which a claim held
without interruption (stopping there would have made it). Tiers (:func:`tiers`): the claims form a directed
graph; a forecaster's tier is 1 + the length of the longest chain of claims above it, so tier 1 holds those
no claim beats, a claim "A beats B" puts A in a lower tier than B, and two forecasters of one tier are never
separated by a claim (forecasters in a cycle of claims, which only false claims can make, share a tier).

Examples
--------
>>> e_bh(np.array([100.0, 30.0, 1.0, 0.5]), 0.1).tolist()  # m = 4: 100 >= 40; 30 >= 4 / (0.1 * 2) = 20
[True, True, False, False]
>>> e_bonferroni(np.array([100.0, 30.0, 1.0, 0.5]), 0.1).tolist()
[True, False, False, False]
>>> tiers(["a", "b", "c", "d"], [("a", "b"), ("b", "c"), ("a", "c")])
{'a': 1, 'b': 2, 'c': 3, 'd': 1}

References
----------
Wang & Ramdas (2022), False discovery rate control with e-values, JRSS-B 84(3), Section 2 (e-BH) and
Proposition 2 (arbitrary dependence). Vovk & Wang (2021), E-values: calibration, combination and
applications, Ann. Statist. (e-Bonferroni). Choe & Ramdas (2023), Comparing sequential forecasters.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from arena.certificates import checkpoints
from arena.compare import (
    CURVE_POINTS,
    DEFAULT_SCORE,
    REPLAY_BUDGET,
    game_params,
    per_round,
    replay_seconds,
    round_scores,
)
from arena.errors import ConfigError
from arena.sequential import e_process
from arena.store import stored_rounds

#: The ways of choosing claims among all pairs; the first is the default.
METHODS = ("e-BH", "e-Bonferroni")


def e_bh(e: np.ndarray, alpha: float) -> np.ndarray:
    """The e-BH claims among the e-values ``e`` along the last axis (NaN: no hypothesis, never claimed; m
    counts the others, an overflowed e-value +inf among them): the k* largest, k* = max{k : e_(k) >= m / (alpha k)}.

    Examples
    --------
    >>> e_bh(np.array([np.inf, 30.0, 1.0, np.nan]), 0.1).tolist()
    [True, True, False, False]
    """
    e = np.asarray(e, float)
    present = ~np.isnan(e)
    m = present.sum(axis=-1, keepdims=True)
    ranked = -np.sort(-np.where(present, e, -np.inf), axis=-1)
    k = np.arange(1, e.shape[-1] + 1)
    ok = ranked >= m / (alpha * k)
    kstar = np.where(ok.any(axis=-1), e.shape[-1] - np.argmax(ok[..., ::-1], axis=-1), 0)
    cut = np.take_along_axis(ranked, np.maximum(kstar - 1, 0)[..., None], axis=-1)
    return (kstar[..., None] > 0) & present & (e >= cut)


def e_bonferroni(e: np.ndarray, alpha: float) -> np.ndarray:
    """The e-Bonferroni claims: e-values at least m / alpha (m: the present ones, not NaN, along the last axis).

    Examples
    --------
    >>> e_bonferroni(np.array([np.inf, 30.0, 1.0, np.nan]), 0.1).tolist()
    [True, True, False, False]
    """
    e = np.asarray(e, float)
    present = ~np.isnan(e)
    m = present.sum(axis=-1, keepdims=True)
    return present & (e >= m / alpha)


def pair_evalues(s: np.ndarray, lo: float, hi: float, at: np.ndarray) -> np.ndarray:
    """The e-processes of every ordered pair at the 0-based rounds ``at``.

    ``s``: scores of shape (..., F, K, T) (forecaster, matchup, round; in [lo, hi]; a matchup a forecaster
    did not finish is NaN throughout). Returns shape (..., F, F, len(at)): ``[..., a, b, :]`` against "a
    is no better than b" on the matchups both finished (NaN on the diagonal and where they share none).
    """
    s = np.asarray(s, float)
    F = s.shape[-3]
    done = np.isfinite(s).all(axis=-1)  # (..., F, K)
    out = np.full(s.shape[:-3] + (F, F, len(at)), np.nan)
    c = hi - lo
    for a in range(F):
        for b in range(a + 1, F):
            both = done[..., a, :] & done[..., b, :]
            n = both.sum(axis=-1)
            diff = np.where(both[..., None], np.nan_to_num(s[..., b, :, :] - s[..., a, :, :]), 0.0)
            d = diff.sum(axis=-2) / np.maximum(n, 1)[..., None]
            shared = (n > 0)[..., None]
            out[..., a, b, :] = np.where(shared, e_process(d, -c, c, at=at), np.nan)
            out[..., b, a, :] = np.where(shared, e_process(-d, -c, c, at=at), np.nan)
    return out


def claims(e: np.ndarray, alpha: float, method: str = "e-BH") -> np.ndarray:
    """The claims "a beats b" of :func:`pair_evalues` output ``e`` (..., F, F, C) at each of the C rounds, chosen
    among all F (F - 1) ordered pairs by ``method`` (:data:`METHODS`)."""
    if method not in METHODS:
        raise ValueError(f"method {method!r}: choose one of {', '.join(METHODS)}")
    F = e.shape[-2]
    flat = np.moveaxis(e.reshape(e.shape[:-3] + (F * F, e.shape[-1])), -1, -2)  # (..., C, F*F)
    pick = (e_bh if method == "e-BH" else e_bonferroni)(flat, alpha)
    return np.moveaxis(pick, -2, -1).reshape(e.shape)


def held_since(decided: np.ndarray, rounds: np.ndarray) -> np.ndarray:
    """The first of ``rounds`` from which each claim (last axis: the rounds) held to the end; NaN if not at
    the end."""
    last_gap = np.where(~decided, np.arange(decided.shape[-1]), -1).max(axis=-1)
    start = np.minimum(last_gap + 1, decided.shape[-1] - 1)
    return np.where(decided[..., -1], np.asarray(rounds, float)[start], np.nan)


def tiers(names: Sequence[str], beats: Sequence[tuple[str, str]]) -> dict[str, int]:
    """Each forecaster's tier under the claims ``beats`` ((a, b): "a beats b"): 1 + the longest chain of
    claims above it, forecasters on a cycle of claims counted as one."""
    index = {n: i for i, n in enumerate(names)}
    F = len(names)
    reach = np.eye(F, dtype=bool)
    for a, b in beats:
        reach[index[a], index[b]] = True
    for k in range(F):  # transitive closure (Warshall)
        reach |= reach[:, [k]] & reach[[k], :]
    same = reach & reach.T
    above = reach & ~same  # i strictly above j
    tier = np.ones(F, int)
    for _ in range(F):  # longest path by relaxation: at most F rounds
        tier = np.maximum(tier, np.where(above, tier[:, None] + 1, 0).max(axis=0))
    return {n: int(tier[index[n]]) for n in names}


def pair_tables(
    s: np.ndarray, names: Sequence[str], lo: float, hi: float, alpha: float = 0.05, method: str = "e-BH"
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(pairs, tiers)`` of one family (one game, T and score): ``s`` the scores (F, K, T) of the forecasters
    ``names`` (:func:`pair_evalues`). ``pairs``: every ordered pair with ``mean`` (A's mean score minus B's
    on the matchups both finished), ``e_value`` (against "A is no better than B", at the last round), each
    method's claim (``e_bh``, ``e_bonferroni``) and the round since which it held (``e_bh_at``,
    ``e_bonferroni_at``); ``tiers``: each forecaster's tier under ``method``'s claims."""
    if method not in METHODS:
        raise ValueError(f"method {method!r}: choose one of {', '.join(METHODS)}")
    n = s.shape[-1]
    rounds = np.unique(np.r_[checkpoints(n, CURVE_POINTS), n]).astype(int)
    e = pair_evalues(s, lo, hi, rounds - 1)
    F = len(names)
    means = np.nanmean(s.mean(axis=-1), axis=-1)
    rows = []
    decided = {m: claims(e, alpha, m) for m in METHODS}
    since = {m: held_since(decided[m], rounds) for m in METHODS}
    for a in range(F):
        for b in range(F):
            if a != b:
                rows.append(
                    {
                        "forecaster_a": names[a],
                        "forecaster_b": names[b],
                        "mean": means[a] - means[b],
                        "e_value": e[a, b, -1],
                        **{_col(m): bool(decided[m][a, b, -1]) for m in METHODS},
                        **{f"{_col(m)}_at": since[m][a, b] for m in METHODS},
                    }
                )
    pairs = pd.DataFrame(rows).assign(n=n, alpha=alpha, m=int(np.isfinite(e[..., -1]).sum()))
    won = pairs.loc[pairs[_col(method)], ["forecaster_a", "forecaster_b"]]
    tier = tiers(list(names), list(won.itertuples(index=False, name=None)))
    table = pd.DataFrame({"forecaster": list(names), "tier": [tier[x] for x in names], "mean": means})
    return pairs, table.assign(method=method).sort_values(["tier", "mean"], kind="stable", ignore_index=True)


def _col(method: str) -> str:
    return method.lower().replace("-", "_")


def every_pair(
    out_dir: Path | str,
    summary: pd.DataFrame,
    alpha: float = 0.05,
    metrics: Sequence[str] | None = None,
    method: str = "e-BH",
    budget: float = REPLAY_BUDGET,
    trust: bool = False,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(pairs, tiers)`` of a results directory: :func:`pair_tables` for each game and T, on the game's
    default score (or each of ``metrics``), from every finished matchup's per-round records
    (:func:`arena.compare.per_round`). A family whose matchups have no trace and would take more than
    ``budget`` seconds to replay (their stored timing) gets one row in ``pairs`` with the reason in
    ``error``."""
    if method not in METHODS:
        raise ValueError(f"method {method!r}: choose one of {', '.join(METHODS)}")
    if "calibration" in (metrics or ()):
        raise ValueError("metric 'calibration' is no mean of per-round scores: compare it with arena-compare")
    out_dir = Path(out_dir)
    pairs, tier = [], []
    ok = summary.loc[summary["status"] == "ok"] if "status" in summary else summary
    if ok.empty or not {"game", "T", "forecaster", "nature", "seed"} <= set(ok.columns):
        return pd.DataFrame(), pd.DataFrame()
    for (game, T), rows in ok.groupby(["game", "T"], sort=True):
        names = sorted(rows["forecaster"].astype(str).unique())
        if len(names) < 2:
            continue
        family = {"game": game, "T": int(T)}
        try:
            stored = stored_rounds(out_dir, rows["matchup_id"])
            cost = replay_seconds(out_dir, rows, stored)
            if cost > budget:
                raise ValueError(
                    f"no traces, and replaying them would take about {cost:.0f} s: run the tournament with "
                    "keep_trace=true"
                )
            records = _records(out_dir, rows, trust, stored)
        except Exception as exc:  # noqa: BLE001 (a section of the report: its reason is printed there)
            error = {"error": f"{type(exc).__name__}: {exc}", "refused": isinstance(exc, ConfigError)}
            pairs.append(pd.DataFrame([{**family, **error}]))
            continue
        for metric in metrics or [DEFAULT_SCORE.get(str(game), "brier")]:
            if metric not in rows:  # not a score of this game
                continue
            s, lo, hi = _scores(records, metric)
            p, t = pair_tables(s, names, lo, hi, alpha, method)
            pairs.append(p.assign(**family, metric=metric))
            tier.append(t.assign(**family, metric=metric))
    front = ["game", "T", "metric"]
    cat = [pd.concat(x, ignore_index=True) if x else pd.DataFrame() for x in (pairs, tier)]
    return tuple(d[[c for c in front if c in d] + [c for c in d if c not in front]] for d in cat)  # type: ignore[return-value]


def _records(out_dir: Path, rows: pd.DataFrame, trust: bool = False, stored: dict | None = None) -> dict:
    """Each (forecaster, nature, seed)'s realized forecasts and outcomes, and the game's parameters
    (``stored``: :func:`arena.store.stored_rounds` of ``rows``)."""
    out: dict = {}
    games: dict[str, dict] = {}
    columns = [
        c for c in ("matchup_id", "forecaster", "nature", "seed", "game", "config", "brier", "pinball") if c in rows
    ]
    for row in rows[columns].to_dict("records"):  # what per_round and game_params read (not a Series a row)
        p, y, _ = per_round(out_dir, row, trust, stored)
        game = game_params(row)
        game = games.setdefault(json.dumps(game, sort_keys=True, default=str), game)  # one dict per game played
        out[(str(row["forecaster"]), row["nature"], int(row["seed"]))] = (p, y, game)
    return out


def _scores(records: dict, metric: str) -> tuple[np.ndarray, float, float]:
    """The scores (F, K, T) of :func:`pair_evalues` (NaN where a forecaster did not finish a matchup)."""
    names = {name: i for i, name in enumerate(sorted({k[0] for k in records}))}
    keys = {key: i for i, key in enumerate(sorted({k[1:] for k in records}, key=str))}
    n = min(len(v[0]) for v in records.values())
    s = np.full((len(names), len(keys), n), np.nan)
    lo = hi = 0.0
    for (name, *key), (p, y, game) in records.items():
        values, lo, hi = round_scores(p[:n], y[:n], metric, game)
        s[names[name], keys[tuple(key)]] = values
    return s, lo, hi


__all__ = ["METHODS", "claims", "e_bh", "e_bonferroni", "every_pair", "pair_evalues", "pair_tables", "tiers"]
