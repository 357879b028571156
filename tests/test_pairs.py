"""Every pair decided anytime-validly: e-BH and e-Bonferroni against their definitions, the false discovery
rate by simulation at every checkpoint, power against a known gap, and the tiers."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from arena.pairs import claims, e_bh, e_bonferroni, held_since, pair_evalues, pair_tables, tiers

ALPHA = 0.1
REPS, T = 300, 600
AT = np.array([9, 29, 99, 299, 599])
#: Monte-Carlo allowance: three standard errors of a rate alpha from REPS replications.
MC = 3 * math.sqrt(ALPHA * (1 - ALPHA) / REPS)


def _e_bh_by_definition(e: list[float], alpha: float) -> set[int]:
    m = len(e)
    order = sorted(range(m), key=lambda i: -e[i])
    k = max((k for k in range(1, m + 1) if e[order[k - 1]] >= m / (alpha * k)), default=0)
    return set(order[:k])


def test_e_bh_and_e_bonferroni_follow_their_definitions():
    rng = np.random.default_rng(0)
    for _ in range(300):
        e = np.exp(rng.normal(1.0, 2.5, rng.integers(1, 12)))
        got = set(np.flatnonzero(e_bh(e, ALPHA)))
        assert got == _e_bh_by_definition(e.tolist(), ALPHA)
        assert set(np.flatnonzero(e_bonferroni(e, ALPHA))) == {i for i in range(len(e)) if e[i] >= len(e) / ALPHA}
        assert set(np.flatnonzero(e_bonferroni(e, ALPHA))) <= got  # e-BH claims at least what e-Bonferroni does
    # NaN: no hypothesis (a pair that shares no matchup), not counted in m
    assert e_bh(np.array([25.0, np.nan, 0.5]), ALPHA).tolist() == [True, False, False]  # m = 2: 25 >= 20


def _brier(rng, gaps: list[float]) -> np.ndarray:
    """Scores (REPS, F, K=3, T): forecaster f forecasts the same outcomes as every other, with noise of
    standard deviation 0.2 + gap around the true probability (a larger gap: a worse Brier score)."""
    K = 3
    q = rng.uniform(0.2, 0.8, (REPS, 1, K, T))
    y = (rng.random((REPS, 1, K, T)) < q).astype(float)
    sd = 0.2 + np.asarray(gaps)[None, :, None, None]
    p = np.clip(q + sd * rng.standard_normal((REPS, len(gaps), K, T)), 0, 1)
    return (p - y) ** 2


def _false_discovery_rate(made: np.ndarray, true: np.ndarray) -> np.ndarray:
    """Per checkpoint: the mean over replications of false claims / max(claims, 1)."""
    n = made.sum(axis=(1, 2))
    false = (made & ~true[None, :, :, None]).sum(axis=(1, 2))
    return (false / np.maximum(n, 1)).mean(axis=0)


@pytest.mark.parametrize("method", ["e-BH", "e-Bonferroni"])
def test_equal_forecasters_give_no_more_than_alpha_false_claims_at_every_checkpoint(method):
    """Five equal forecasters, every null true: the false discovery rate (here the chance of any claim) stays
    under alpha at every checkpoint."""
    rng = np.random.default_rng(1)
    s = _brier(rng, [0.0] * 5)
    e = pair_evalues(s, 0.0, 1.0, AT)
    made = claims(e, ALPHA, method)
    fdr = _false_discovery_rate(made, np.zeros((5, 5), bool))
    assert (fdr <= ALPHA + MC).all(), fdr
    # and across checkpoints (a user who stops at the first claim): no more than alpha either
    assert made.any(axis=(1, 2, 3)).mean() <= ALPHA + MC
    # the check can fail: a one-sided z-test of each pair at level alpha (no multiplicity) claims far more
    d = (s[:, None] - s[:, :, None]).mean(axis=3)  # (REPS, a, b, T): b's score - a's, over matchups
    n = AT + 1
    mean = np.cumsum(d, axis=-1)[..., AT] / n
    sd = np.sqrt(np.maximum(np.cumsum(d**2, axis=-1)[..., AT] / n - mean**2, 0))
    naive = mean > 1.2816 * sd / np.sqrt(n) + 1e-12
    assert _false_discovery_rate(naive, np.zeros((5, 5), bool)).max() > 3 * ALPHA


def test_false_discovery_rate_and_power_against_a_known_gap():
    """Two good forecasters (noise 0.2) and two bad ones (noise 0.5; a Brier gap of about 0.09): the four
    claims "good beats bad" are true, the eight others false. The false discovery rate stays under alpha at
    every checkpoint; by the end e-BH makes most true claims, and at least as many as e-Bonferroni."""
    rng = np.random.default_rng(2)
    e = pair_evalues(_brier(rng, [0.0, 0.0, 0.3, 0.3]), 0.0, 1.0, AT)
    true = np.zeros((4, 4), bool)
    true[:2, 2:] = True
    power = {}
    for method in ("e-BH", "e-Bonferroni"):
        made = claims(e, ALPHA, method)
        assert (_false_discovery_rate(made, true) <= ALPHA + MC).all()
        power[method] = made[:, true, -1].mean()
    assert power["e-BH"] >= power["e-Bonferroni"] and power["e-BH"] > 0.8, power


def test_pair_evalues_use_only_the_matchups_both_finished():
    rng = np.random.default_rng(3)
    s = rng.uniform(0, 1, (3, 2, 200))
    s[2, 0] = np.nan  # forecaster 2 did not finish matchup 0
    e = pair_evalues(s, 0.0, 1.0, np.array([199]))
    # 0 vs 2: only matchup 1, the difference s[2, 1] - s[0, 1]
    direct = pair_evalues(s[:, [1]], 0.0, 1.0, np.array([199]))
    assert e[0, 2, 0] == pytest.approx(direct[0, 2, 0]) and e[2, 0, 0] == pytest.approx(direct[2, 0, 0])
    assert np.isnan(e[[0, 1, 2], [0, 1, 2]]).all()


def test_a_claim_counts_from_the_round_since_which_it_held():
    decided = np.array([[False, True, False, True, True], [True, True, True, True, False]])
    assert held_since(decided, np.array([10, 20, 30, 40, 50])).tolist()[0] == 40.0
    assert np.isnan(held_since(decided, np.array([10, 20, 30, 40, 50]))[1])
    assert held_since(np.ones((1, 3), bool), np.array([1, 2, 3])).tolist() == [1.0]


def test_tiers_are_the_longest_chains_of_claims():
    names = ["a", "b", "c", "d", "e"]
    assert tiers(names, []) == dict.fromkeys(names, 1)
    t = tiers(names, [("a", "c"), ("b", "c"), ("c", "d"), ("b", "e")])
    assert t == {"a": 1, "b": 1, "c": 2, "d": 3, "e": 2}
    # a cycle of claims (only false claims make one) is one tier, below what beats it
    t = tiers(names, [("a", "b"), ("b", "c"), ("c", "b"), ("c", "d")])
    assert t["b"] == t["c"] == 2 and t["d"] == 3 and t["a"] == 1
    # the definition: a claim puts the winner in a lower tier; a forecaster in tier k > 1 is beaten from tier k - 1
    rng = np.random.default_rng(4)
    for _ in range(50):
        beats = [(x, y) for x, y in itertools.combinations(names, 2) if rng.random() < 0.3]
        t = tiers(names, beats)
        assert all(t[x] < t[y] for x, y in beats)
        assert all(t[y] == 1 or any(t[x] == t[y] - 1 for x, z in beats if z == y) for y in names)


def test_pair_tables_of_one_family():
    rng = np.random.default_rng(5)
    good = rng.uniform(0.0, 0.5, (1, 2, 2000))
    s = np.concatenate([good, good + 0.3, good + 0.3])  # b and c tie exactly, both worse than a
    pairs, table = pair_tables(s, ["a", "b", "c"], 0.0, 1.0, ALPHA)
    assert len(pairs) == 6 and set(pairs["m"]) == {6}
    won = pairs.loc[pairs["e_bh"], ["forecaster_a", "forecaster_b"]]
    assert sorted(map(tuple, won.to_numpy())) == [("a", "b"), ("a", "c")]
    assert (pairs.loc[pairs["e_bh"], "e_bh_at"] < 2000).all()
    assert table.set_index("forecaster")["tier"].to_dict() == {"a": 1, "b": 2, "c": 2}
    with pytest.raises(ValueError, match="method 'BH': choose one of e-BH, e-Bonferroni"):
        pair_tables(s, ["a", "b", "c"], 0.0, 1.0, ALPHA, "BH")


def test_the_pair_matrix_marks_every_claim_in_the_order_of_the_tiers():
    import matplotlib

    matplotlib.use("Agg")
    from arena.plots.pairs import pair_matrix

    rng = np.random.default_rng(6)
    good = rng.uniform(0.0, 0.5, (1, 2, 2000))
    pairs, table = pair_tables(np.concatenate([good + 0.3, good, good + 0.3]), ["b", "a", "c"], 0.0, 1.0, ALPHA)
    fig = pair_matrix(pairs.assign(game="binary", T=2000, metric="brier"), table)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()][0] == "a"  # tier 1 first
    dots = next(c for c in ax.collections if c.get_gid() == "claims").get_offsets()
    assert len(dots) == int(pairs["e_bh"].sum()) == 2
    assert "e-BH" in fig.get_suptitle()


def test_every_pair_of_nothing_to_compare_and_bad_settings(tmp_path):
    import pandas as pd

    from arena.pairs import every_pair

    empty = every_pair(tmp_path, pd.DataFrame({"forecaster": ["a"], "status": ["ok"]}))
    assert all(t.empty for t in empty)
    one = pd.DataFrame({"game": "binary", "T": 10, "forecaster": ["a"], "nature": "n", "seed": 0, "status": "ok"})
    assert all(t.empty for t in every_pair(tmp_path, one))  # one forecaster: no pair
    with pytest.raises(ValueError, match="metric 'calibration' is no mean of per-round scores"):
        every_pair(tmp_path, one, metrics=["calibration"])
    with pytest.raises(ValueError, match="method 'bh': choose one of e-BH, e-Bonferroni"):
        every_pair(tmp_path, one, method="bh")
