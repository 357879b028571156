"""Sequential seeds (``tournament.until_decided``): the stopping rule keeps the false discovery rate under alpha at
every seed (simulation), stops a decided pair and spends the budget on a tie, and plays and stores exactly the
matchups a fixed-seed run would (same seed, same result)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from omegaconf import OmegaConf

from arena.errors import ConfigError
from arena.pairs import claims, pair_evalues
from arena.plan import decide_metric, requested_pairs, seeds_of
from arena.results import MACHINE_COLUMNS, MACHINE_PREFIXES
from arena.sequential_seeds import combine, players, undecided

ALPHA = 0.05


def stopping_rule(e_all: np.ndarray, asked: list[tuple[int, int]], listed: int = 1):
    """The rule of :func:`arena.sequential_seeds.until_decided` on per-seed e-values ``e_all`` (R, F, F, S), drawn
    beforehand (a seed's games do not depend on who plays it): a pair counts seed k when both its forecasters play
    it; after the listed seeds, only the forecasters of asked pairs still open play. The claims at every seed
    (R, S, F, F), who played each seed (R, S, F) and the seeds each replication played."""
    R, F, _, S = e_all.shape
    playing = np.ones((R, F), bool)
    factors = np.full(e_all.shape, np.nan)
    said, played = np.zeros((R, S, F, F), bool), np.zeros((R, S, F), bool)
    seeds = np.full(R, S)
    for k in range(S):
        played[:, k] = playing
        factors[..., k] = np.where(playing[:, :, None] & playing[:, None, :], e_all[..., k], np.nan)
        e = combine(factors[..., : k + 1])
        said[:, k] = claims(e[..., None], ALPHA)[..., 0]
        if k + 1 >= listed:
            playing = players(undecided(e, asked), asked, F)
            seeds = np.where(~playing.any(axis=-1) & (seeds == S), k + 1, seeds)
    return said, played, seeds


def fdr(said: np.ndarray, null: np.ndarray) -> np.ndarray:
    """The false discovery rate at every seed: the mean over replications of false claims / max(claims, 1)."""
    false = (said & null).sum(axis=(-2, -1))
    return (false / np.maximum(said.sum(axis=(-2, -1)), 1)).mean(axis=0)


def test_the_stopping_rule_keeps_false_claims_under_alpha_with_exact_martingales():
    """Two equal forecasters whose per-seed e-values are 1 +- 0.5 (mean exactly 1: the products are martingales,
    the hardest case for Ville's bound): stopping at the first claim, over 60 seeds, makes a false claim in
    fewer than alpha of 600 replications, at every seed."""
    rng = np.random.default_rng(0)
    R, S = 600, 60
    coin = rng.choice([-1.0, 1.0], size=(R, S))
    e_all = np.full((R, 2, 2, S), np.nan)
    e_all[:, 0, 1], e_all[:, 1, 0] = 1 + 0.5 * coin, 1 - 0.5 * coin
    said, _, seeds = stopping_rule(e_all, [(0, 1)])
    rate = fdr(said, np.ones((2, 2), bool))
    assert rate.max() <= ALPHA and rate[-1] > 0.01  # near the bound, never over it
    assert (seeds < S).mean() == pytest.approx(rate[-1])  # a replication stops only at a (false) claim


def test_the_stopping_rule_keeps_the_fdr_under_alpha_and_finds_a_known_gap():
    """Per-seed e-values of the arena's pairs (:func:`arena.pairs.pair_evalues` at the last of 100 rounds, 2
    natures): three equal forecasters and one whose score is lower by 0.2. Over 200 replications of 10 seeds the
    false discovery rate stays under alpha at every seed; the three true claims are made in every replication,
    after which the better forecaster plays no more seeds, while the tied pairs play to the budget."""
    rng = np.random.default_rng(1)
    R, S, F, K, T = 200, 10, 4, 2, 100
    scores = rng.uniform(0, 1, size=(R, S, F, K, T))
    scores[:, :, 3] = rng.uniform(0, 0.6, size=(R, S, K, T))
    e_all = np.moveaxis(pair_evalues(scores, 0.0, 1.0, np.array([T - 1]))[..., 0], 1, -1)  # (R, F, F, S)
    asked = [(i, j) for i in range(F) for j in range(i + 1, F)]
    said, played, seeds = stopping_rule(e_all, asked)
    null = np.ones((F, F), bool)
    null[3, :3] = False  # "3 beats i" is the only true claim
    assert fdr(said, null).max() <= ALPHA
    assert said[:, -1, 3, :3].all()  # power: every true claim, by the budget
    assert (seeds == S).all() and played[..., :3].all()  # the tied pairs never stop
    assert played[..., 3].sum(axis=1).max() <= 4  # the better forecaster stops once its pairs are decided


def test_overwhelming_evidence_stays_a_claim():
    """A per-seed e-value that overflows (inf) or a product past the largest float is capped, not dropped: e-BH
    counts it and claims it (it would count a non-finite e-value as no hypothesis)."""
    factors = np.full((2, 2, 3), np.nan)
    factors[0, 1] = [np.inf, 1e300, 1e300]
    factors[1, 0] = [0.0, 1e-300, 1e-300]
    e = combine(factors)
    assert np.isfinite(e[0, 1]) and e[0, 1] > 1e300 and e[1, 0] == 0.0
    assert not undecided(e, [(0, 1)]).any()


def test_settings_are_checked_and_pairs_named_once():
    t = OmegaConf.create({"seeds": [0, 1], "until_decided": True, "seed_budget": 4})
    assert seeds_of(t) == [0, 1, 2, 3]
    with pytest.raises(ConfigError, match="seed_budget=1"):
        seeds_of(OmegaConf.create({"seeds": [0, 1], "until_decided": True, "seed_budget": 1}))
    with pytest.raises(ConfigError, match="until_decided='yes'"):
        seeds_of(OmegaConf.create({"seeds": [0], "until_decided": "yes"}))
    labels = ["a", "b", "c"]
    assert requested_pairs(OmegaConf.create({"decide": [["b", "a"], ["a", "b"]]}), labels) == [("a", "b")]
    with pytest.raises(ConfigError, match=r"\['a', 'z'\] is not a pair"):
        requested_pairs(OmegaConf.create({"decide": [["a", "z"]]}), labels)
    assert decide_metric(OmegaConf.create({}), "quantile") == "pinball"
    assert decide_metric(OmegaConf.create({"decide_metric": "log_loss"}), "binary") == "log_loss"
    with pytest.raises(ConfigError, match="decides on pinball"):
        decide_metric(OmegaConf.create({"decide_metric": "brier"}), "quantile")


BIN = Path(sys.executable).parent
#: k29 against last_outcome (a big gap: decided on the first seed) and running_mean against a copy of itself (a
#: tie: played to the budget), on one nature at T = 1000.
TOURNAMENT = [
    "tournament=bench",
    "tournament.T=[1000]",
    "tournament.natures=[iid_bernoulli]",
    "tournament.forecasters=[k29,last_outcome,running_mean,{name:running_mean,label:running_mean_copy}]",
    "tournament.shards=2",
    "hydra.launcher.n_jobs=2",
    "report=false",
]
BUDGET = 4


def arena(root: Path, *extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "MPLBACKEND": "Agg", "OPENBLAS_NUM_THREADS": "1", "PYTHONHASHSEED": "0"}
    proc = subprocess.run(
        [str(BIN / "arena"), *TOURNAMENT, f"results_root={root}", *extra],
        cwd=root,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def summary(out: Path) -> pd.DataFrame:
    """The summary of a results directory by matchup id, without the columns of the machine (timing, memory)."""
    table = pd.read_parquet(out / "summary.parquet").set_index("matchup_id").sort_index()
    return table[[c for c in table if c not in MACHINE_COLUMNS and not c.startswith(MACHINE_PREFIXES)]]


def test_a_decided_pair_stops_a_tie_runs_to_the_budget_and_the_summary_is_the_fixed_runs(tmp_path):
    proc = arena(
        tmp_path,
        "tournament.seeds=[0]",
        "tournament.until_decided=true",
        f"tournament.seed_budget={BUDGET}",
        "tournament.decide=[[k29,last_outcome],[running_mean,running_mean_copy]]",
    )
    out = tmp_path / "bench"
    table = pd.read_csv(out / "until_decided.csv")
    pair = table.set_index(["forecaster_a", "forecaster_b"])
    assert pair.loc[("k29", "last_outcome"), "e_bh"] and pair.loc[("k29", "last_outcome"), "seeds"] == 1
    assert not pair.loc[("running_mean", "running_mean_copy"), "e_bh"]
    assert pair.loc[("running_mean", "running_mean_copy"), "seeds"] == BUDGET
    played = summary(out)
    seeds = played.groupby("forecaster")["seed"].apply(lambda s: sorted(s.unique()))
    assert seeds.to_dict() == {
        "k29": [0],
        "last_outcome": [0],
        "running_mean": [0, 1, 2, 3],
        "running_mean_copy": [0, 1, 2, 3],
    }
    # 4 matchups on seed 0, then 2 on each of 3 seeds: 10 of the 16 of the fixed-seed plan with 4 seeds
    assert "10 matchups played, 16 in the fixed-seed plan with the budget's seeds: 6 saved (38%)" in proc.stdout
    assert proc.stdout.count("[arena] until decided: seed") == BUDGET - 1

    fixed_root = tmp_path / "fixed"
    fixed_root.mkdir()
    arena(fixed_root, f"tournament.seeds=[{','.join(map(str, range(BUDGET)))}]")
    fixed = summary(fixed_root / "bench")
    assert len(fixed) == 16 and set(played.index) <= set(fixed.index)
    pd.testing.assert_frame_equal(played, fixed.loc[played.index])
