"""The quantile game (§10): game, laws, forecasters, natures, referee, certificates, configs.

References
----------
Perdomo & Recht, §10; errata: docs/ERRATA.md.
"""

from __future__ import annotations

import hashlib
import inspect
import itertools
import math
from pathlib import Path
from types import SimpleNamespace

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from omegaconf import OmegaConf

import arena  # noqa: F401  (registers the Gymnasium ids)
from arena import checks, play
from arena.env import ForecastEnv
from arena.games import QuantileGame, get_game
from arena.games.quantile import CERTIFICATES, group_certificate_over_seeds, pinball
from arena.laws import Mixture, PiecewiseLinearCDF, TruncatedNormal, TruncatedStudentT, Uniform, lipschitz_ramp
from arena.protocols import Forecast, Nature, ProtocolError
from arena.registry import FORECASTERS, NATURES, load_plugins
from arena.search import two_point_search
from forecasters.controls import ACIBrokenGeometric
from forecasters.quantile import ACI, ConditionalQuantileDF, MarginalQuantileDF, WindowQuantile, empirical_quantile

load_plugins()

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "adversaries" / "data"
# The negative controls (forecasters/controls.py) fail their claims on purpose: tests/test_controls.py plays them.
QUANTILE_FORECASTERS = sorted(
    n for n, c in FORECASTERS.items() if "quantile" in c.games and c.__module__ != "forecasters.controls"
)
QUANTILE_NATURES = sorted(n for n, c in NATURES.items() if "quantile" in c.games)
LAW_NATURES = [n for n in QUANTILE_NATURES if n not in ("quantile_replay", "seattle_hourly_temp", "seattle_daily_temp")]


def test_the_registries_hold_the_quantile_plugins():
    assert set(QUANTILE_FORECASTERS) == {
        "marginal_quantile_df",
        "conditional_quantile_df",
        "quantile_ogd",
        "aci",
        "window_quantile",
        "running_quantile",
    }
    assert {
        "iid_normal",
        "iid_uniform",
        "iid_student_t",
        "iid_mixture",
        "mean_shift",
        "variance_change",
        "level_changepoints",
        "group_normal",
        "hourly_cycle",
        "lipschitz_cdf",
        "quantile_replay",
        "seattle_hourly_temp",
        "seattle_daily_temp",
    } <= set(QUANTILE_NATURES)


# ---------------------------------------------------------------------------------- game
def test_game_parameters_and_pinball_loss():
    g = get_game("quantile", q=0.25, ymin=-1, ymax=3)
    assert (g.forecast_low, g.forecast_high, g.q) == (-1.0, 3.0, 0.25)
    assert g.loss(1.0, 2.0) == pytest.approx(0.25) and g.loss(1.0, 0.0) == pytest.approx(0.75)
    assert g.loss(1.0, 1.0) == 0.0
    assert pinball(np.array([1.0, 1.0]), np.array([2.0, 0.0]), 0.25) == pytest.approx([0.25, 0.75])


@pytest.mark.parametrize("q", [0.0, 1.0, -0.5, 1.5, float("nan")])
def test_q_outside_the_unit_interval_is_one_clear_error(q):
    with pytest.raises(ValueError, match=r"quantile game: q=.* (is outside \(0, 1\)|is not a finite number).*game\.q="):
        get_game("quantile", q=q)


def test_an_empty_range_is_refused():
    with pytest.raises(ValueError, match=r"range .* is empty; give ymin < ymax"):
        QuantileGame(ymin=1.0, ymax=1.0)


class _Script(Nature):
    name = "probe_values"
    games = ("quantile",)

    def __init__(self, values):
        self.values = list(values)

    def respond(self, t, x, forecast):
        return self.values[t - 1]


@pytest.mark.parametrize("bad", [-50.0, -60.0, 50.5, float("nan")])
def test_outcomes_outside_the_range_forfeit_with_a_clear_message(bad):
    r = play("quantile", "running_quantile", _Script([0.0, bad, 0.0]), T=3, seed=0)
    assert r.forfeit is not None and r.forfeit.who == "nature" and r.forfeit.step == 2
    assert "outside the quantile game's range (ymin, ymax] = (-50.0, 50.0] (ymin excluded)" in r.forfeit.reason
    assert "widen the range" in r.forfeit.reason
    env = ForecastEnv(_Script([bad]), T=1, game="quantile")
    env.reset(seed=0)
    with pytest.raises(ProtocolError, match="outside the quantile game's range"):
        env.step(0.0)


def test_more_than_two_atoms_is_refused():
    env = gym.make("arena/Quantile-v0", T=2).unwrapped
    env.reset(seed=0)
    with pytest.raises(ProtocolError, match="takes a point or a two-point forecast"):
        env.step(Forecast((0.0, 1.0, 2.0), (0.2, 0.3, 0.5)))


@pytest.mark.parametrize("nature", ["iid_normal", "group_normal", "lipschitz_cdf", "seattle_hourly_temp"])
def test_gymnasium_check_env_passes_for_the_quantile_game(nature):
    checks.check_env("arena/Quantile-v0", [nature], T=20)
    env = gym.make("arena/Quantile-v0", nature=nature, T=5).unwrapped
    env.reset(seed=3)
    _, r, _, _, info = env.step(Forecast.two_point(-1.0, 1.0, 0.5))
    assert r == pytest.approx(-env.game.loss(info["p"], info["y"])) and info["p"] in (-1.0, 1.0)


def test_the_recorder_keeps_atoms_only_in_the_quantile_game():
    assert play("binary", "k29", "iid_bernoulli", T=5).recorder.atoms is None
    rec = play("quantile", ConditionalQuantileDF(bins=4), "iid_normal", T=50).recorder
    assert rec.atoms.shape == (50, 2) and rec.cdf_at_atoms.shape == (50, 2) and np.all(np.isfinite(rec.law_lip))
    assert np.isnan(play("quantile", "aci", "seattle_daily_temp", T=5).recorder.law_lip).all()  # no law


# ---------------------------------------------------------------------------------- laws
LAWS = [
    TruncatedNormal(1.0, 2.0, -3.0, 4.0),
    TruncatedStudentT(3.0, 0.5, 1.5, -4.0, 6.0),
    Uniform(-1.0, 2.0),
    Mixture((TruncatedNormal(-2.0, 0.5, -5, 5), TruncatedNormal(2.0, 1.0, -5, 5)), (0.3, 0.7)),
    lipschitz_ramp(0.3, 2.0, -1.0, 3.0),
]


@pytest.mark.parametrize("law", LAWS, ids=lambda law: type(law).__name__)
def test_laws_cdf_mean_and_expected_pinball_match_monte_carlo(law):
    rng = np.random.default_rng(0)
    ys = np.array([law.sample(rng) for _ in range(40_000)])
    assert ys.min() > law.low and ys.max() <= law.high
    se = 4 * 0.5 / math.sqrt(len(ys))
    for v in (-0.5, 0.0, 1.0, 2.5):
        assert abs(law.cdf(v) - np.mean(ys <= v)) < se
        for q in (0.1, 0.9):
            mc = pinball(np.full(len(ys), v), ys, q)
            assert abs(law.expected_pinball(v, q) - mc.mean()) < 4 * mc.std() / math.sqrt(len(ys))
    grid = np.linspace(law.low, law.high, 5001)
    F = np.array([law.cdf(v) for v in grid])
    assert np.all(np.diff(F) >= 0) and np.max(np.diff(F) / np.diff(grid)) <= law.lipschitz * (1 + 1e-9)


def test_a_law_needs_mass_on_the_range_and_no_atoms():
    with pytest.raises(ValueError, match="almost no mass"):
        TruncatedNormal(100.0, 1.0, -5.0, 5.0)
    with pytest.raises(ValueError, match="is an atom"):
        PiecewiseLinearCDF((0.0, 1.0, 1.0, 2.0), (0.0, 0.2, 0.8, 1.0))
    with pytest.raises(ValueError, match=r"need L >= 1/\(high - low\)"):
        lipschitz_ramp(0.0, 0.1, 0.0, 1.0)


# --------------------------------------------------------------------------- forecasters
def _fresh(fc, game=None):
    fc.game = game or QuantileGame(q=0.8, ymin=-10.0, ymax=10.0)
    fc.reset(np.random.default_rng(0))
    return fc


def test_marginal_df_follows_its_rule_exactly():
    fc = _fresh(MarginalQuantileDF())
    s, ys = 0.0, np.random.default_rng(1).normal(size=200)
    for y in ys:
        p = fc.predict(np.zeros(0))
        assert p == (10.0 if s <= 1e-12 else -10.0)
        fc.update(np.zeros(0), p, y)
        s += (y <= p) - 0.8


def _aci_reference(ys, q, gamma, burn_in, lo, hi):
    """Gibbs & Candes' update written out directly (with this module's documented conventions)."""
    alpha_target = alpha = 1.0 - q
    out = []
    for t, y in enumerate(ys):
        past = sorted(ys[:t])
        n = len(past)
        if n < burn_in:
            p = past[math.ceil(q * n) - 1] if n else 0.5 * (lo + hi)
        elif alpha <= 0:
            p = hi
        elif alpha >= 1:
            p = lo
        else:
            p = past[math.ceil((1.0 - alpha) * n) - 1]
        out.append(p)
        if n >= burn_in:
            alpha += gamma * (alpha_target - (1.0 if y > p else 0.0))
    return out


@pytest.mark.parametrize("gamma", [0.005, 0.05, 0.5])
def test_aci_matches_a_direct_reference_implementation(gamma):
    rng = np.random.default_rng(5)
    ys = list(np.concatenate([rng.normal(0, 1, 150), rng.normal(4, 0.5, 100), rng.normal(-3, 2, 150)]))
    fc = _fresh(ACI(gamma=gamma, burn_in=10))
    got, alphas = [], []
    for y in ys:
        p = fc.predict(np.zeros(0))
        got.append(p)
        fc.update(np.zeros(0), p, y)
        alphas.append(fc.alpha_t)
    # exact: the same scalar recursion in Python floats, and the forecasts are order statistics (values of ys)
    assert got == _aci_reference(ys, 0.8, gamma, 10, -10.0, 10.0)
    if gamma == 0.5:  # the conventions outside [0, 1] were exercised
        assert min(alphas) < 0 or max(alphas) > 1


# the quantile tournament's natures (lipschitz_cdf adaptive at three L), and the replays
ACI_NATURES = [(n, {}) for n in QUANTILE_NATURES if n not in ("lipschitz_cdf", "quantile_replay")]
ACI_NATURES += [("lipschitz_cdf", {"L": L}) for L in (0.1, 1.0, 10.0)]


@pytest.mark.parametrize("burn_in", [0, 10])
def test_aci_coverage_certificate_holds_on_every_nature(burn_in):
    # Gibbs & Candes' bound is deterministic: no nature, seed or step may break it
    worst = 0.0
    for (nature, params), seed, gamma in itertools.product(ACI_NATURES, (0, 1), (0.005, 0.05, 0.5)):
        r = play("quantile", ACI(gamma=gamma, burn_in=burn_in), nature, T=400, seed=seed, nature_params=params)
        c = r.certificates["aci_coverage"]
        assert c.verdict == "holds", (nature, seed, gamma, c)
        assert c.extra["rounds_counted"] == 400 - burn_in
        worst = max(worst, c.value / c.bound)
        if burn_in == 0:  # the whole run is certified: the value is the run's coverage error
            assert c.value == pytest.approx(r.summary["coverage_error"], abs=1e-15)
    assert worst > 0.3  # some run comes near the bound: the check is not vacuous


def test_aci_coverage_certificate_holds_against_the_red_team():
    from arena.redteam.policy import RedTeamNature
    from arena.redteam.search import search

    game = get_game("quantile", q=0.9)
    params = {"gamma": 0.05, "burn_in": 0}
    attack = search(game, "aci", "coverage_error", T=120, budget=200, searcher="cma", forecaster_params=params, L=5.0)
    r = play(game, "aci", RedTeamNature(attack[0]), T=120, seed=0, forecaster_params=params)
    c = r.certificates["aci_coverage"]
    assert c.verdict == "holds" and c.value == pytest.approx(r.summary["coverage_error"], abs=1e-15)
    assert c.value > 0.5 * play(game, "aci", "iid_normal", T=120, forecaster_params=params).summary["coverage_error"]


@pytest.mark.parametrize("nature", ["iid_normal", "mean_shift", "lipschitz_cdf", "seattle_daily_temp"])
def test_aci_with_a_geometric_step_fails_the_certificate(nature):
    # the same nature and seed: the correct ACI holds, the one whose step grows 1% a round fails
    kw = {"gamma": 0.5, "burn_in": 0}
    good = play("quantile", ACI(**kw), nature, T=1000, seed=0).certificates["aci_coverage"]
    bad = play("quantile", ACIBrokenGeometric(growth=1.01, **kw), nature, T=1000, seed=0).certificates["aci_coverage"]
    assert good.verdict == "holds" and bad.verdict == "fails"
    assert bad.value > bad.bound > good.value


def test_aci_coverage_certificate_counts_the_rounds_after_the_burn_in():
    r = play("quantile", ACI(gamma=0.05, burn_in=10), "iid_normal", T=200, seed=3)
    c = r.certificates["aci_coverage"]
    covered = (r.recorder.y <= r.recorder.p)[10:]
    assert c.value == pytest.approx(abs(covered.mean() - 0.9), abs=1e-15)
    assert c.bound == pytest.approx((0.9 + 0.05) / (0.05 * 190), rel=1e-12)
    assert c.extra["whole_run_value"] == pytest.approx(r.summary["coverage_error"], abs=1e-15)
    assert play("quantile", ACI(burn_in=10), "iid_normal", T=10).certificates["aci_coverage"].verdict == "n/a"
    # a forecaster with no step size that claims it: not applicable, with the reason
    fc = WindowQuantile()
    c = CERTIFICATES["aci_coverage"](SimpleNamespace(covered=np.ones(5), q=0.9, forecaster=fc), None)
    assert c.verdict == "n/a" and "no step size gamma" in c.reason


def test_empirical_quantile_is_the_conformal_order_statistic():
    v = [3.0, 1.0, 2.0, 5.0, 4.0]
    assert [empirical_quantile(sorted(v), b, 0.0) for b in (0.1, 0.2, 0.21, 0.9, 1.0)] == [1.0, 1.0, 2.0, 5.0, 5.0]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.floats(0.01, 0.99), st.floats(-3, 3)), min_size=1, max_size=6),
    st.floats(-2, 2),
    st.floats(0, 5),
    st.integers(1, 500),
)
def test_two_point_search_straddles_the_sign_change_within_the_precision(jumps, b, slope, t):
    """Alg. 6: either an exact branch, or S(lo) < 0 < S(hi), hi - lo <= 1/(10 t^2 |S(lo)|), tau hedges."""

    def S(p):
        return b + slope * p + sum(a for c, a in jumps if p >= c)

    def width(s_lo, s_hi):
        return 1.0 / (10.0 * t * t * abs(s_lo))

    f = two_point_search(S, 0.0, 1.0, width, increasing=True)
    if S(0.0) >= 0:
        assert f.points == (0.0,)
    elif S(1.0) <= 0:
        assert f.points == (1.0,)
    elif f.is_point:  # S(mid) = 0, or tau rounded to 0 or 1: the atom kept has |S| below rounding
        scale = abs(b) + slope + sum(abs(a) for _, a in jumps)
        assert abs(S(f.points[0])) <= 1e-15 * scale
    else:
        (lo, hi), (tau, _) = f.points, f.probs
        assert S(lo) < 0 < S(hi) and hi - lo <= width(S(lo), S(hi))
        assert abs(tau * S(lo) + (1 - tau) * S(hi)) <= 1e-12 * (abs(S(lo)) + abs(S(hi)))


def test_conditional_df_straddles_and_updates_with_the_sampled_forecast():
    r = play("quantile", ConditionalQuantileDF(bins=8), "lipschitz_cdf", T=300, seed=2, keep_forecasts=True)
    fc, rec = r.forecaster, r.recorder
    assert r.summary["randomized_rounds"] > 0.05
    # its running sum is built from the realized (sampled) forecasts, exactly as the referee rebuilds it
    w = (rec.y <= rec.p) - 0.9
    # exact: elementwise features and products, summed one round at a time in round order on both sides
    np.testing.assert_array_equal(fc._C, np.cumsum(w[:, None] * fc.kernel_object.features(rec.X, rec.p), axis=0)[-1])
    # replay round by round: every randomized forecast straddles the sign change of S_t at the stated precision
    probe = _fresh(ConditionalQuantileDF(bins=8), get_game("quantile"))
    for t in range(1, rec.n + 1):
        S = probe.summary_function(rec.X[t - 1])
        f = rec.forecasts[t - 1]
        if not f.is_point:
            (lo, hi), (tau, _) = f.points, f.probs
            assert S(lo) < 0 < S(hi) and hi - lo <= 1 / (10 * t * t * abs(S(lo)))
            assert tau == pytest.approx(abs(S(hi)) / (abs(S(lo)) + abs(S(hi))), rel=1e-12)
        probe.update(rec.X[t - 1], rec.p[t - 1], rec.y[t - 1])


def test_a_kernel_without_feature_map_uses_the_direct_sums():
    r = play(
        "quantile",
        ConditionalQuantileDF(kernel=[{"features": ["1", "p"]}, {"rbf": 1.0}]),
        "group_normal",
        T=120,
        seed=0,
    )
    assert r.forfeit is None and r.certificates["quantile_round"].holds
    assert r.certificates["quantile_group"].holds is None  # ||f|| needs a finite feature map


# ---------------------------------------------------------------------------- certificates
@pytest.mark.parametrize("nature", QUANTILE_NATURES)
def test_marginal_certificate_holds_against_every_nature(nature):
    for q in (0.1, 0.5, 0.9):
        r = play(get_game("quantile", q=q), "marginal_quantile_df", nature, T=257, seed=1)
        c = r.certificates["quantile_marginal"]
        assert c.holds and c.bound == pytest.approx(max(q, 1 - q) / 257)
        assert c.extra["printed_bound"] == pytest.approx(max(q, 1 - q) / 256)


@pytest.mark.parametrize("nature", LAW_NATURES)
@pytest.mark.parametrize("bins", [0, 10])
def test_the_per_round_certificate_holds_against_every_law_nature(nature, bins):
    r = play("quantile", ConditionalQuantileDF(bins=bins), nature, T=300, seed=0)
    c = r.certificates["quantile_round"]
    assert c.holds is True and 0 <= c.value <= 1, (c, r.forfeit)


@pytest.mark.parametrize("L", [0.02, 0.1, 1.0, 10.0, 100.0])
@pytest.mark.parametrize("mode", ["push", "above", "below"])
def test_the_per_round_certificate_holds_against_lipschitz_adversaries(L, mode):
    r = play(
        "quantile", ConditionalQuantileDF(bins=5), "lipschitz_cdf", T=250, seed=1, nature_params={"L": L, "mode": mode}
    )
    c = r.certificates["quantile_round"]
    assert c.holds is True, c
    assert np.nanmax(r.recorder.law_lip) <= L * (1 + 1e-9)


class _Sloppy(ConditionalQuantileDF):
    """Alg. 6 with a search 10^4 times coarser than the rule: the certificate must catch it."""

    name = "sloppy_quantile_df"

    def predict(self, x):
        t = self._t + 1
        return two_point_search(
            self.summary_function(x),
            self._lo,
            self._hi,
            lambda s_lo, s_hi: 1e4 / (10.0 * t * t * abs(s_lo)),
            increasing=True,
        )


def test_the_per_round_certificate_catches_a_coarse_search():
    r = play("quantile", _Sloppy(bins=5), "lipschitz_cdf", T=200, seed=0, nature_params={"L": 10.0, "mode": "above"})
    assert r.certificates["quantile_round"].holds is False


class _FalseMarginal(MarginalQuantileDF):
    name = "false_marginal"

    def predict(self, x):
        return 0.0


def test_the_marginal_certificate_catches_a_false_claim():
    assert (
        play("quantile", _FalseMarginal(), "iid_normal", T=200, seed=0).certificates["quantile_marginal"].holds is False
    )


@pytest.mark.parametrize(
    ("nature", "params"), [("group_normal", {}), ("hourly_cycle", {}), ("lipschitz_cdf", {"L": 1.0, "mode": "push"})]
)
def test_the_group_certificate_holds_on_the_seed_average(nature, params):
    certs = [
        play("quantile", "conditional_quantile_df", nature, T=300, seed=s, nature_params=params).certificates[
            "quantile_group"
        ]
        for s in range(8)
    ]
    verdict = group_certificate_over_seeds(certs)
    assert verdict.holds, verdict
    assert all(c.extra["functions"] >= 1 for c in certs)


def test_the_seed_average_judgement_reads_the_results_table():
    from arena.games.quantile import group_certificate_table

    runs = [play("quantile", "conditional_quantile_df", "group_normal", T=150, seed=s) for s in range(3)]
    table = group_certificate_table(pd.DataFrame([r.row() for r in runs]))
    direct = group_certificate_over_seeds([r.certificates["quantile_group"] for r in runs])
    assert len(table) == 1 and table["seeds"].item() == 3
    assert table["value"].item() == pytest.approx(direct.value) and table["bound"].item() == pytest.approx(direct.bound)
    assert bool(table["holds"].item()) is direct.holds is True


def test_group_metrics_follow_the_group_columns():
    r = play("quantile", "conditional_quantile_df", "group_normal", T=600, seed=0)
    s, X = r.summary, r.recorder.X
    for j in range(3):
        g = X[:, j] == 1
        assert s[f"group_count.{j}"] == g.sum()
        assert s[f"group_coverage.{j}"] == pytest.approx(np.mean(r.recorder.y[g] <= r.recorder.p[g]))
    assert s["group_coverage_error_max"] < 0.1  # Phi contains the group one-hots
    baseline = play("quantile", "running_quantile", "group_normal", T=600, seed=0).summary
    assert baseline["group_coverage_error_max"] > 0.2  # a forecaster that ignores x


@pytest.mark.parametrize(
    ("forecaster", "nature", "params"),
    [
        ("conditional_quantile_df", "iid_mixture", {}),
        ("aci", "mean_shift", {}),
        (ConditionalQuantileDF(bins=6), "lipschitz_cdf", {"L": 2.0}),
    ],
)
def test_exact_expected_coverage_matches_monte_carlo(forecaster, nature, params):
    """The seed average of realized coverage estimates the seed average of the exact expected coverage."""
    realized, expected, loss, exp_loss = [], [], [], []
    for seed in range(150):
        s = play("quantile", forecaster, nature, T=40, seed=seed, nature_params=params).summary
        realized.append(s["coverage"])
        expected.append(s["expected_coverage"])
        loss.append(s["pinball"])
        exp_loss.append(s["expected_pinball"])
    d = np.array(realized) - np.array(expected)
    assert abs(d.mean()) < 4 * d.std() / math.sqrt(len(d)) + 1e-12
    d = np.array(loss) - np.array(exp_loss)
    assert abs(d.mean()) < 4 * d.std() / math.sqrt(len(d)) + 1e-12


def test_law_at_atoms_matches_monte_carlo():
    game, law = get_game("quantile", q=0.7, ymin=-5, ymax=5), TruncatedNormal(0.3, 1.2, -5, 5)
    f = Forecast.two_point(0.1, 0.9, 0.35)
    F_lo, F_hi, lip, exp_loss = game.law_at_atoms(law, f, 0.0)
    rng = np.random.default_rng(0)
    n = 100_000
    ys = np.array([law.sample(rng) for _ in range(n)])
    ps = np.where(rng.random(n) < 0.35, 0.1, 0.9)
    assert abs(0.35 * F_lo + 0.65 * F_hi - np.mean(ys <= ps)) < 4 * 0.5 / math.sqrt(n)
    mc = pinball(ps, ys, 0.7)
    assert abs(exp_loss - mc.mean()) < 4 * mc.std() / math.sqrt(n) and lip == law.lipschitz


# --------------------------------------------------------------------------------- natures
@pytest.mark.parametrize("L", [-1.0, 0.0, float("inf")])
def test_a_bad_lipschitz_constant_is_one_clear_error(L):
    with pytest.raises(ValueError, match=r"lipschitz_cdf: L=.* (must be > 0|is not finite).*L: 1\.0"):
        NATURES["lipschitz_cdf"](L=L)


def test_a_lipschitz_constant_too_small_for_the_range_names_the_fix():
    with pytest.raises(ValueError, match=r"L=0.001 is below 1/\(ymax - ymin\) = 0.01.*give L >= 0.01"):
        env = ForecastEnv("lipschitz_cdf", T=5, game="quantile", nature_params={"L": 0.001})
        env.reset(seed=0)


def test_the_lipschitz_adversary_ramps_at_the_atoms():
    nature = NATURES["lipschitz_cdf"](L=4.0, mode="above")
    nature.game = get_game("quantile", ymin=0.0, ymax=1.0)
    nature.reset(np.random.default_rng(0))
    law = nature.respond(1, np.zeros(0), Forecast.two_point(0.2, 0.3, 0.5))
    assert (law.cdf(0.2), law.cdf(0.3), law.lipschitz) == pytest.approx((0.0, 0.4, 4.0))
    law = nature.respond(2, np.zeros(0), Forecast.point(0.9))  # no room above: the ramp moves left
    assert law.cdf(1.0) == 1.0 and law.cdf(0.75) == 0.0 and law.cdf(0.9) == pytest.approx(0.6)


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_quantile_replay_reads_values_contexts_and_groups(tmp_path, suffix):
    df = pd.DataFrame({"y": [1.5, -2.0, 0.25, 7.0], "temp": [1.0, 2.0, 3.0, 4.0], "site": ["b", "a", "b", "c"]})
    path = tmp_path / f"s{suffix}"
    df.to_csv(path, index=False) if suffix == ".csv" else df.to_parquet(path)
    r = play(
        "quantile",
        "running_quantile",
        "quantile_replay",
        T=4,
        nature_params={"path": str(path), "column": "y", "context_columns": ["temp"], "group_columns": ["site"]},
    )
    np.testing.assert_array_equal(r.recorder.y, df["y"])
    np.testing.assert_array_equal(r.recorder.X, [[1, 0, 1, 0], [2, 1, 0, 0], [3, 0, 1, 0], [4, 0, 0, 1]])
    assert r.recorder.group_dim == 3 and r.summary["group_count.0"] == 1 and r.summary["group_coverage.1"] >= 0
    assert r.nature.group_labels == ["site=a", "site=b", "site=c"]


def test_quantile_replay_outside_the_range_names_file_row_and_fix(tmp_path):
    path = tmp_path / "s.csv"
    pd.DataFrame({"y": [1.0, 80.0]}).to_csv(path, index=False)
    env = ForecastEnv("quantile_replay", T=2, game="quantile", nature_params={"path": str(path), "column": "y"})
    with pytest.raises(
        ValueError,
        match=r"s.csv', column 'y', row 1 .* value 80 is outside the quantile game's "
        r"range .* set game.ymin below 1 and game.ymax >= 80",
    ):
        env.reset(seed=0)
    with pytest.raises(ValueError, match=r"column 'y', row 1 .* value 'x' is not a number"):
        pd.DataFrame({"y": ["1.0", "x"]}).to_csv(path, index=False)
        ForecastEnv("quantile_replay", T=2, game="quantile", nature_params={"path": str(path), "column": "y"}).reset()


def test_the_shipped_series_and_their_provenance():
    provenance = (DATA / "PROVENANCE.md").read_text()
    for name in ("seattle_hourly_temp.csv", "seattle_weather.csv"):
        raw = (DATA / name).read_bytes()
        assert len(raw) < 1_000_000 and hashlib.sha256(raw).hexdigest() in provenance
    hourly = pd.read_csv(DATA / "seattle_hourly_temp.csv")
    assert list(hourly.columns) == ["date", "temp", "temp_c", "hour"] and len(hourly) == 8759
    np.testing.assert_allclose(hourly["temp_c"], ((hourly["temp"] - 32) * 5 / 9).round(2), atol=0.006)
    assert (hourly["hour"] == pd.to_datetime(hourly["date"], format="%Y/%m/%d %H:%M").dt.hour).all()
    r = play("quantile", "aci", "seattle_hourly_temp", T=48, nature_params={"hour_groups": True})
    assert r.recorder.group_dim == 24 and r.recorder.X[:24].argmax(1).tolist() == list(range(24))


# ----------------------------------------------------------------------------- configs
@pytest.mark.parametrize(
    "kind,name", [("forecaster", n) for n in QUANTILE_FORECASTERS] + [("nature", n) for n in QUANTILE_NATURES]
)
def test_every_config_holds_the_defaults(kind, name):
    from hydra.utils import instantiate

    table = FORECASTERS if kind == "forecaster" else NATURES
    cfg = OmegaConf.load(ROOT / "conf" / kind / f"{name}.yaml")
    cls = table[name]
    assert cfg._target_ == f"{cls.__module__}.{cls.__qualname__}"
    assert set(cfg) - {"_target_"} == set(inspect.signature(cls).parameters)
    plugin = instantiate(cfg, _convert_="all")
    assert type(plugin) is cls and plugin.params() == cls().params()


def test_the_game_config_and_the_tournament():
    from arena.config import validate

    cfg = OmegaConf.load(ROOT / "conf" / "game" / "quantile.yaml")
    params = OmegaConf.to_container(cfg)
    game = get_game(params.pop("name"), **params)
    assert game == QuantileGame()
    assert validate(["tournament=quantile", "results_root=/nonexistent"]) == 7 * 13 * 3


def test_the_report_draws_the_quantile_figures(tmp_path, monkeypatch):
    from arena import summarize

    monkeypatch.setenv("ARENA_PLOT_JOBS", "1")
    rows, curves = [], []
    for fc in ("marginal_quantile_df", "aci"):
        for nat, params in (("group_normal", {}), ("lipschitz_cdf", {"L": 0.5}), ("lipschitz_cdf", {"L": 5.0})):
            for seed in (0, 1):
                r = play("quantile", fc, nat, T=100, seed=seed, nature_params=params)
                row = r.row()
                label = nat if nat != "lipschitz_cdf" else f"lipschitz_cdf[L={params['L']}]"
                row.update(nature=label, nature_plugin=nat)
                rows.append(row)
                curves.append(r.curves.assign(forecaster=fc, nature=label, seed=seed))
    tables = {"summary": pd.DataFrame(rows), "curves": pd.concat(curves), "reliability": pd.DataFrame()}
    names = {p.name for p in summarize.report(tmp_path, tables, formats=("png",))}
    assert {
        "rolling_coverage__group_normal.png",
        "coverage_error__group_normal.png",
        "group_coverage__group_normal.png",
        "coverage_vs_L.png",
        "leaderboard__coverage_error.png",
        "table.tex",
    } <= names
    assert not any(n.startswith(("smce_vs_T", "reliability")) for n in names)
