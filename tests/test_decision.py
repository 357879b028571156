"""The decision game (§5): π(p), decision DF, its certificates, and why the 0-1 loss needs randomization.

References
----------
Perdomo & Recht, §5 and §10 (the randomized two-point search); certificates: docs/ERRATA.md.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import arena
from arena import checks
from arena.games import DecisionGame, get_game, plays
from arena.protocols import Nature
from forecasters.decision import DecisionDF

LOSSES = [
    DecisionGame(),
    DecisionGame(loss="asymmetric"),
    DecisionGame(loss="squared"),
    DecisionGame(loss="matrix", matrix=[[0.0, 1.0], [1.0, 0.0], [0.3, 0.3]]),
]


class Bits(Nature):
    """Oblivious scripted outcomes (for hypothesis)."""

    name = "bits"

    def __init__(self, bits):
        self.bits = [float(b) for b in bits]
        self.length = len(self.bits)

    def respond(self, t, x, forecast):
        return self.bits[t - 1]


# ------------------------------------------------------------------------------ the game
def test_best_response_pi_and_B():
    g = DecisionGame()
    assert [g.action(p) for p in (0.0, 0.4999, 0.5, 1.0)] == [0, 0, 1, 1]  # π(p) = 1{p >= 1/2}
    assert g.B == 1.0 and not g.continuous
    a = DecisionGame(loss="asymmetric")  # a missed 1 costs 4, a false alarm 1: act above p = 1/5
    assert [a.action(p) for p in (0.19, 0.2, 0.5)] == [0, 1, 1] and a.B == 4.0
    s = DecisionGame(loss="squared")
    assert s.action(0.3) == 0.3 and s.continuous and s.B == 1.0
    m = DecisionGame(loss="matrix", matrix=[[0, 1], [1, 0], [0.3, 0.3]])  # a third action: abstain
    assert [m.action(p) for p in (0.2, 0.5, 0.8)] == [0, 2, 1]


def test_best_fixed_action_in_hindsight():
    y = np.array([1.0, 1.0, 0.0])
    assert DecisionGame().best_fixed_loss(y) == 1.0
    assert DecisionGame(loss="asymmetric").best_fixed_loss(y) == 1.0  # always act: one false alarm
    assert DecisionGame(loss="squared").best_fixed_loss(y) == pytest.approx(2 / 3)  # a* = mean(y)


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"loss": "matrix", "matrix": [[0, 1, 2]]}, r"matrix has shape \(1, 3\); expected one row"),
        ({"loss": "matrix", "matrix": [0, 1]}, r"matrix has shape \(2,\); expected one row"),
        ({"loss": "matrix", "matrix": [[0, "x"]]}, r"is not a table of numbers"),
        ({"loss": "matrix", "matrix": [[0, float("inf")]]}, r"has a non-finite entry"),
        ({"loss": "matrix"}, r"loss='matrix' needs matrix"),
        ({"loss": "zero_one", "matrix": [[0, 1], [1, 0]]}, r"matrix is given but loss='zero_one'"),
        ({"loss": "hinge"}, r"loss='hinge' is unknown"),
    ],
)
def test_bad_decision_configs_get_one_clear_error(params, match):
    with pytest.raises(ValueError, match=match):
        get_game("decision", **params)


def test_bad_search_and_tol():
    with pytest.raises(ValueError, match=r"search='bisect'; expected one of"):
        DecisionDF(search="bisect")
    with pytest.raises(ValueError, match=r"tol=0 must be in \(0, 1\)"):
        DecisionDF(tol=0)


@pytest.mark.parametrize("game", LOSSES, ids=lambda g: str(g.loss))
def test_check_env_passes(game):
    checks.check_env("arena/Decision-v0", ["iid_bernoulli", "anti_forecaster", "logistic"], T=15, game=game)


def test_binary_plugins_play_the_decision_game():
    from arena.registry import forecaster_class, nature_class

    g = get_game("decision")
    assert plays(g, forecaster_class("k29")) and plays(g, nature_class("anti_forecaster"))
    assert not plays(get_game("binary"), DecisionDF)
    r = arena.play("decision", "k29", "anti_forecaster", T=200, seed=0)
    assert r.certificates["smce"].holds and r.summary["regret_decision"] >= 0


# ------------------------------------------------------------------------------ certificates
NATURES = [
    ("anti_forecaster", {}),
    ("bias_pusher", {}),
    ("iid_bernoulli", {}),
    ("logistic", {}),
    ("sinusoid", {"period": 50}),
    ("markov", {}),
]


@pytest.mark.parametrize("nature", NATURES, ids=lambda n: n[0])
def test_squared_loss_decision_df_certificate_holds_deterministically(nature):
    name, params = nature
    r = arena.play(DecisionGame(loss="squared"), "decision_df", name, T=500, seed=0, nature_params=params)
    for c in r.certificates.values():
        assert c.holds is True and not c.probabilistic, c
    assert r.summary["regret_decision"] <= 2 * math.sqrt(2 * 500)  # the printed §5 bound, B = 1


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bits=st.lists(st.sampled_from([0.0, 1.0]), min_size=1, max_size=80), game=st.sampled_from(LOSSES))
def test_decision_certificates_hold_on_generated_sequences(bits, game):
    r = arena.play(game, DecisionDF(), Bits(bits), T=len(bits), seed=0)
    prec = r.certificates["decision_search_precision"]
    assert prec.holds, prec  # deterministic in every case (the search's slack)
    reg = r.certificates["decision_regret"]
    assert reg.probabilistic == (not game.continuous) or reg.holds is True
    if game.continuous:
        assert reg.holds, reg


@pytest.mark.parametrize("game", LOSSES[:2] + LOSSES[3:], ids=lambda g: str(g.loss))
@pytest.mark.parametrize("nature", ["anti_forecaster", "bias_pusher", "iid_bernoulli"])
def test_randomized_decision_df_expected_regret_is_within_the_bound(game, nature):
    T, seeds = 400, range(4)
    values, bounds = [], []
    for seed in seeds:
        r = arena.play(game, "decision_df", nature, T=T, seed=seed)
        c = r.certificates["decision_regret"]
        assert r.certificates["decision_search_precision"].holds
        values.append(c.value)
        bounds.append(c.bound)
    assert np.mean(values) <= np.mean(bounds)  # in expectation (judged on the seed average)
    assert np.mean(values) <= game.certificate_bound(T) + 1e-9  # the printed 2B sqrt(2T) too


def test_deterministic_search_fails_for_the_zero_one_loss():
    """The reason for the randomized search: against y = 1{p < 1/2}, π(p_t) is always wrong."""
    T = 1000
    r = arena.play("decision", DecisionDF(search="deterministic"), "anti_forecaster", T=T, seed=0)
    assert r.summary["regret_decision"] >= 0.95 * T  # regret ≈ T
    assert r.certificates["decision_regret"].holds is None  # no guarantee: not applicable, with the reason
    assert "discontinuous" in r.certificates["decision_regret"].note
    good = arena.play("decision", DecisionDF(), "anti_forecaster", T=T, seed=0)
    assert good.summary["regret_decision_expected"] <= 2 * math.sqrt(2 * T)


def test_expected_regret_is_exact_from_the_announced_two_point_forecasts():
    game = DecisionGame()
    r = arena.play(game, DecisionDF(), "iid_bernoulli", T=300, seed=5, keep_forecasts=True)
    rec = r.recorder
    assert r.summary["randomized_rounds"] > 0.1
    expected = sum(
        sum(w * game.action_loss(game.action(pt), y) for pt, w in zip(f.points, f.probs, strict=False))
        for f, y in zip(rec.forecasts, rec.y, strict=False)
    )
    assert r.summary["regret_decision_expected"] == pytest.approx(expected - game.best_fixed_loss(rec.y), abs=1e-9)
    realized = sum(game.action_loss(game.action(p), y) for p, y in zip(rec.p, rec.y, strict=False))
    assert r.summary["regret_decision"] == pytest.approx(realized - game.best_fixed_loss(rec.y), abs=1e-9)


def test_two_point_forecasts_straddle_the_jump_with_the_balancing_probability():
    fc = DecisionDF()
    fc.game = DecisionGame()
    fc.reset(np.random.default_rng(0))
    fc.update(np.zeros(0), 0.2, 1.0)  # w = 0.8, d(π(0.2)) = 1
    fc.update(np.zeros(0), 0.7, 0.0)  # w = -0.7, d(π(0.7)) = -1: C = 1.5, W = 0.1
    S = fc.summary_function()
    assert S(0.3) == pytest.approx(1.6) and S(0.6) == pytest.approx(-1.4)  # no root: a jump at 1/2
    f = fc.predict(np.zeros(0))
    lo, hi = f.points
    t = 3
    assert lo < 0.5 <= hi and hi - lo <= 1 / (10 * t * t * 1.4)  # the width rule of round t
    tau = f.probs[0]
    assert abs(tau * S(lo) + (1 - tau) * S(hi)) < 1e-12  # the invariant holds in expectation
    assert tau * S(lo) * (hi - lo) <= 1 / (10 * t * t)  # E_t[w_t S_t(p_t)] <= 1/(10 t^2) whatever y_t


def test_the_decisions_tournament_composes():
    from arena.config import validate

    assert validate(["tournament=decisions"], multirun=True) == 6 * 7 * 3
