"""The experts game (§9): ℓ∞ DF, its certificates, the baselines, the panels and their protocol.

Forecasters are checked against direct reimplementations written here from the formulas
(Bayes mixture, Vovk's aggregating algorithm, Hedge's textbook bound), against every panel
(adaptive ones included) and against hypothesis-generated advice and outcomes.

References
----------
Perdomo & Recht, §9; certificates: docs/ERRATA.md.
"""

from __future__ import annotations

import copy
import math
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import arena
from adversaries.experts import ExpertConstants, ExpertLogistic, ExpertSecondGuessing
from arena import checks
from arena.games import get_game
from arena.games.experts import AdviceContext, ExpertsGame, log_loss, squared_loss
from arena.protocols import Bernoulli, Nature
from arena.registry import FORECASTERS, NATURES, load_plugins
from forecasters.experts import Aggregating, FollowTheLeader, Hedge, LinfDF, UniformAverage

load_plugins()

NEW_FORECASTERS = {"linf_df", "aggregating", "hedge", "ftl", "uniform_average"}
NEW_NATURES = {"expert_constants", "expert_logistic", "expert_good_noisy", "expert_switching", "expert_second_guessing"}
LOSSES = ("squared", "log")


# ----------------------------------------------------------------------------- helpers
class ScriptedPanel(Nature):
    """Replays an advice matrix and outcomes (an oblivious panel for hypothesis)."""

    name = "scripted_panel"
    games = ("experts",)

    def __init__(self, advice, outcomes):
        self.advice_rows = np.asarray(advice, float)
        self.outcomes = np.asarray(outcomes, float)
        self.context_dim = self.advice_rows.shape[1]
        self.length = len(self.outcomes)

    def context(self, t):
        return self.advice_rows[t - 1].copy()

    def respond(self, t, x, forecast):
        return float(self.outcomes[t - 1])


def _drive(fc, advice, outcomes, loss="squared"):
    """Play fc by hand on scripted advice and outcomes; return its forecasts."""
    fc.game = ExpertsGame(loss=loss)
    fc.reset(np.random.default_rng(0))
    out = []
    for x, y in zip(advice, outcomes, strict=False):
        p = fc.predict(np.asarray(x, float))
        out.append(p)
        fc.update(np.asarray(x, float), p, float(y))
    return np.array(out)


def _regret(p, advice, y, loss):
    ell = {"squared": squared_loss, "log": log_loss}[loss]
    lp, le = ell(np.asarray(p), np.asarray(y)), ell(np.asarray(advice), np.asarray(y)[:, None])
    with np.errstate(invalid="ignore"):
        gaps = lp[:, None] - le
    return np.max(np.sum(np.where(np.isnan(gaps), 0.0, gaps), axis=0))


def _random_script(seed, T=200, N=5, extreme=False):
    rng = np.random.default_rng(seed)
    advice = rng.uniform(0.0, 1.0, (T, N))
    if extreme:
        advice[rng.random((T, N)) < 0.2] = 0.0
        advice[rng.random((T, N)) < 0.2] = 1.0
        advice[:, 0] = rng.uniform(0.01, 0.99, T)  # one expert never says 0 or 1
    y = (rng.random(T) < 0.4).astype(float)
    return advice, y


# ----------------------------------------------------------------------------- the game
def test_game_loss_is_a_field_and_the_per_round_loss():
    g = get_game("experts", loss="log")
    assert g.loss == "log" and g.name == "experts"
    assert g.loss(0.25, 1.0) == pytest.approx(math.log(4))
    assert g.loss(0.0, 1.0) == math.inf and g.loss(1.0, 1.0) == 0.0
    assert get_game("experts").loss(0.25, 1.0) == pytest.approx(0.5625)


def test_bad_loss_gets_one_clear_error():
    with pytest.raises(
        ValueError,
        match=r"loss='hinge' is not a loss of the experts game; expected one of "
        r"'squared', 'log'",
    ):
        get_game("experts", loss="hinge")


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("panel", ["expert_constants", "expert_logistic", "expert_second_guessing", "expert_switching"])
def test_check_env_passes(panel, loss):
    checks.check_env("arena/Experts-v0", [panel], T=15, game=ExpertsGame(loss=loss))


def test_gym_make_experts_env():
    import gymnasium as gym

    env = gym.make("arena/Experts-v0", nature="expert_constants", nature_params={"N": 3}, T=2)
    x, _ = env.reset(seed=0)
    assert x.tolist() == [0.25, 0.5, 0.75]
    x, r, term, _, info = env.step(0.5)
    assert r == -((0.5 - info["y"]) ** 2) and not term


def _mirror(p):
    return np.array([p, 1 - p])


def test_advice_context_keeps_its_callable_through_copies():
    x = AdviceContext([0.2, 0.4], advice=_mirror, lipschitz=1.0)
    for y in (x.copy(), copy.deepcopy(x), pickle.loads(pickle.dumps(x)), x[:]):
        assert y.second_guessing and y.lipschitz == 1.0
        assert y.advice(0.3).tolist() == [0.3, 0.7]
    assert np.asarray(x).tolist() == [0.2, 0.4]


def test_second_guessing_advice_is_scored_at_the_played_forecast():
    panel = ExpertSecondGuessing(N=4, beta=0.6)
    r = arena.play("experts", "linf_df", panel, T=50, seed=3)
    rec = r.recorder
    fresh = ExpertSecondGuessing(N=4, beta=0.6)
    fresh.reset(np.random.default_rng(0))
    for t in range(rec.n):
        base = fresh._advice(t + 1, np.zeros(0))  # grid opinions (no contexts)
        assert np.allclose(rec.X[t], fresh.advice(t + 1, base, rec.p[t]), atol=1e-15)
    # the forecast is a fixed point of the DF search over the second-guessed advice: not the preview
    assert not np.allclose(rec.X, np.tile(base, (rec.n, 1)))


def test_a_forecaster_cannot_read_the_outcome_through_the_advice_callable():
    checks.check_no_lookahead(LinfDF(), T=30, game=ExpertsGame())
    checks.check_no_lookahead(LinfDF(), T=30, game=ExpertsGame(loss="log"))


# ----------------------------------------------------------------------------- certificates
CLAIMANTS = [
    ("linf_df", {}),
    ("linf_df", {"lam": 0.5}),
    ("aggregating", {}),
    ("hedge", {"eta": "doubling"}),
    ("hedge", {"eta": 0.4}),
]
PANELS = [
    ("expert_constants", {}),
    ("expert_constants", {"greedy": True}),
    ("expert_constants", {"outcomes": "anti_forecaster"}),
    ("expert_logistic", {"greedy": True}),
    ("expert_good_noisy", {}),
    ("expert_switching", {"period": 40}),
    ("expert_second_guessing", {}),
    ("expert_second_guessing", {"greedy": True}),
]


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize(("fc", "fp"), CLAIMANTS, ids=lambda v: str(v))
def test_certificates_hold_against_every_panel(fc, fp, loss):
    for nat, np_ in PANELS:
        r = arena.play(
            ExpertsGame(loss=loss),
            fc,
            nat,
            T=150,
            seed=1,
            forecaster_params=fp,
            nature_params=np_,
            keep_forecasts=False,
        )
        assert r.forfeit is None, r.forfeit
        for name, c in r.certificates.items():
            if name == "hedge_regret" and loss == "log" and not (isinstance(fp.get("eta"), float) and fp["eta"] <= 1):
                assert c.holds is None and "log-loss" in c.note
                continue
            assert c.holds, f"{fc}{fp} vs {nat}{np_} ({loss}): {name} value {c.value} > bound {c.bound}"


def test_greedy_nature_drives_regret_of_the_uniform_average_up():
    r = arena.play("experts", "uniform_average", "expert_constants", T=300, seed=0, nature_params={"greedy": True})
    assert r.summary["regret_experts"] > 20
    d = arena.play("experts", "linf_df", "expert_constants", T=300, seed=0, nature_params={"greedy": True})
    assert d.summary["regret_experts"] <= math.log(9) / 2 + 1e-9


def test_greedy_picks_the_outcome_that_maximizes_instantaneous_regret():
    panel = ExpertConstants(grid=[0.2, 0.9], greedy=True)
    panel.game = ExpertsGame()
    panel.reset(np.random.default_rng(0))
    x = panel.context(1)
    # leader: expert 0 (ties -> lowest index); p = 0.5: y = 0 gives 0.25 - 0.04 > y = 1 gives 0.25 - 0.64
    assert panel.respond(1, x, arena.Forecast.point(0.5)) == 0.0
    panel.observe(1, 0.5, 0.0)
    panel.observe(2, 0.5, 1.0)  # losses: expert 0: 0.04 + 0.64, expert 1: 0.81 + 0.01 -> expert 0 leads
    assert panel.respond(3, x, arena.Forecast.point(0.1)) == 1.0


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_certificates_hold_on_generated_sequences(data):
    N = data.draw(st.integers(1, 5))
    T = data.draw(st.integers(1, 40))
    values = st.one_of(st.sampled_from([0.0, 1.0, 1e-300, 1 - 1e-16, 0.5]), st.floats(0.0, 1.0))
    advice = np.array(data.draw(st.lists(st.lists(values, min_size=N, max_size=N), min_size=T, max_size=T)))
    y = np.array(data.draw(st.lists(st.sampled_from([0.0, 1.0]), min_size=T, max_size=T)))
    loss = data.draw(st.sampled_from(LOSSES))
    lam = data.draw(st.sampled_from([2.0, 1.0, 0.25]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow, no invalid value, no division by zero
        for fc in (LinfDF(lam=lam), Aggregating()):
            r = arena.play(ExpertsGame(loss=loss), fc, ScriptedPanel(advice, y), T=T, seed=0)
            assert r.forfeit is None, r.forfeit
            assert np.all(np.isfinite(r.recorder.p))
            for name, c in r.certificates.items():
                assert c.holds, f"{fc.name} {loss}: {name} {c.value} > {c.bound} ({c.extra})"


# ----------------------------------------------------------------------------- expected equalities
def _bayes_mixture(advice, y):
    """p_t = sum_j pi_j f_tj with pi_j ∝ prod_{s<t} f_sj(y_s): the closed form, in log space."""
    logpost = np.zeros(advice.shape[1])
    out = []
    for f, yt in zip(advice, y, strict=False):
        w = np.exp(logpost - np.max(logpost)) if np.isfinite(np.max(logpost)) else np.ones_like(logpost)
        out.append(float(w @ f / w.sum()))
        with np.errstate(divide="ignore"):
            logpost = logpost + np.log(f if yt == 1.0 else 1.0 - f)
    return np.array(out)


@pytest.mark.parametrize("seed", range(4))
def test_linf_df_log_loss_is_the_bayes_mixture(seed):
    advice, y = _random_script(seed, T=300, extreme=seed % 2 == 1)
    p = _drive(LinfDF(), advice, y, loss="log")
    assert np.max(np.abs(p - _bayes_mixture(advice, y))) < 1e-9


def _aa_direct(advice, y, loss, eta):
    """Vovk's aggregating algorithm written from its definition (weights as products)."""
    w = np.ones(advice.shape[1]) / advice.shape[1]
    out = []
    for f, yt in zip(advice, y, strict=False):
        if loss == "squared":
            g0 = -math.log(float(np.sum(w * np.exp(-eta * f**2)))) / eta
            g1 = -math.log(float(np.sum(w * np.exp(-eta * (1 - f) ** 2)))) / eta
            p = min(max((1 + g0 - g1) / 2, 0.0), 1.0)
            w = w * np.exp(-eta * (f - yt) ** 2)
        else:
            a1 = float(np.sum(w * f**eta)) ** (1 / eta)
            a0 = float(np.sum(w * (1 - f) ** eta)) ** (1 / eta)
            p = a1 / (a0 + a1)
            w = w * (f if yt == 1.0 else 1 - f) ** eta
        w = w / w.sum()
        out.append(p)
    return np.array(out)


@pytest.mark.parametrize(("loss", "eta"), [("squared", 2.0), ("squared", 0.7), ("log", 1.0), ("log", 0.5)])
def test_aggregating_algorithm_matches_a_direct_implementation(loss, eta):
    advice, y = _random_script(11, T=150)
    advice = np.clip(advice, 0.02, 0.98)  # the direct products stay away from 0
    p = _drive(Aggregating(eta=eta), advice, y, loss=loss)
    assert np.max(np.abs(p - _aa_direct(advice, y, loss, eta))) < 1e-12


@pytest.mark.parametrize("lam", [2.0, 0.7])
@pytest.mark.parametrize("seed", range(3))
def test_linf_df_squared_is_the_aggregating_algorithm(lam, seed):
    advice, y = _random_script(seed, T=300, extreme=seed == 2)
    df = _drive(LinfDF(lam=lam), advice, y)
    aa = _drive(Aggregating(eta=lam), advice, y)
    assert np.max(np.abs(df - aa)) < 1e-9


def test_linf_df_squared_lambda_2_is_aa_against_second_guessing_experts():
    a = arena.play("experts", LinfDF(), ExpertSecondGuessing(N=5), T=200, seed=2)
    b = arena.play("experts", Aggregating(), ExpertSecondGuessing(N=5), T=200, seed=2)
    assert np.max(np.abs(a.recorder.p - b.recorder.p)) < 1e-9


def test_predict_many_equals_predict():
    advice, y = _random_script(5, T=60)
    rng = np.random.default_rng(9)
    for loss in LOSSES:
        for fc in (
            LinfDF(),
            LinfDF(lam=0.3),
            Aggregating(),
            Hedge(eta=0.5),
            Hedge(),
            FollowTheLeader(),
            UniformAverage(),
        ):
            fc.game = ExpertsGame(loss=loss)
            fc.reset(None)
            for x, yt in zip(advice, y, strict=False):
                X = rng.uniform(0, 1, (7, advice.shape[1]))
                assert np.max(np.abs(fc.predict_many(X) - [fc.predict(r) for r in X])) < 1e-9
                fc.update(x, fc.predict(x), yt)


def test_no_overflow_on_long_log_loss_runs_with_extreme_experts():
    T = 3000
    rng = np.random.default_rng(0)
    advice = np.column_stack([np.full(T, 1e-12), np.full(T, 1 - 1e-12), rng.uniform(0.3, 0.7, T), np.zeros(T)])
    y = (rng.random(T) < 0.5).astype(float)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = _drive(LinfDF(), advice, y, loss="log")
    assert np.all(np.isfinite(p)) and np.all((p > 0) & (p < 1))
    assert _regret(p, advice, y, "log") <= math.log(4) + 1e-6


# ----------------------------------------------------------------------------- Hedge
def _hedge_textbook(T, N, eta):
    """Cesa-Bianchi & Lugosi Thm 2.2: log N / eta + eta T / 8 (convex losses in [0, 1])."""
    return math.log(N) / eta + eta * T / 8


@pytest.mark.parametrize("eta", [0.05, 0.5, 2.0, "tuned", "doubling"])
def test_hedge_stays_under_its_textbook_bound(eta):
    T, N = 400, 6
    for seed in range(3):
        advice, y = _random_script(seed, T=T, N=N)
        fc = Hedge(eta=eta, horizon=T if eta == "tuned" else None)
        p = _drive(fc, advice, y)
        if eta == "doubling":
            bound, m = 0.0, 0
            while 2**m <= T:
                length = min(2 ** (m + 1) - 1, T) - 2**m + 1
                bound += _hedge_textbook(length, N, math.sqrt(8 * math.log(N) / 2**m))
                m += 1
        else:
            e = math.sqrt(8 * math.log(N) / T) if eta == "tuned" else eta
            bound = _hedge_textbook(T, N, e)
        assert _regret(p, advice, y, "squared") <= bound
    # and the referee certifies the same bound against an adaptive nature
    r = arena.play(
        "experts",
        Hedge(eta=eta, horizon=T if eta == "tuned" else None),
        "expert_constants",
        T=T,
        seed=0,
        nature_params={"greedy": True},
    )
    assert r.certificates["hedge_regret"].holds


def test_hedge_tuned_rate():
    fc = Hedge(eta="tuned", horizon=1000)
    assert fc.rate_at(1, 8) == pytest.approx(math.sqrt(8 * math.log(8) / 1000))


# ----------------------------------------------------------------------------- panels
def test_panels_wrap_binary_natures_by_name_or_config():
    p = ExpertConstants(N=2, outcomes={"name": "iid_bernoulli", "params": {"p": 0.9}})
    p.reset(np.random.default_rng(0))
    assert p.respond(1, p.context(1), arena.Forecast.point(0.5)) == Bernoulli(0.9)
    assert ExpertConstants(outcomes="anti_forecaster").adaptive and not ExpertConstants().adaptive
    assert ExpertSecondGuessing().adaptive and ExpertSecondGuessing.adaptive
    assert ExpertLogistic().context_dim == 8


def test_every_new_plugin_is_registered_with_a_config():
    from pathlib import Path

    conf = Path(__file__).resolve().parents[1] / "conf"
    assert NEW_FORECASTERS <= set(FORECASTERS) and NEW_NATURES <= set(NATURES)
    for name in NEW_FORECASTERS:
        assert (conf / "forecaster" / f"{name}.yaml").is_file()
    for name in NEW_NATURES:
        assert (conf / "nature" / f"{name}.yaml").is_file()


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: LinfDF(lam=0.0), r"lam=0.0 is outside \(0, 2\]"),
        (lambda: LinfDF(lam=2.5), r"lam=2.5 is outside \(0, 2\]"),
        (lambda: LinfDF(lam=float("nan")), r"lam=nan is outside \(0, 2\]"),
        (lambda: ExpertConstants(N=0), r"N=0 is not an integer >= 1"),
        (lambda: ExpertLogistic(N=-3), r"N=-3 is not an integer >= 1"),
        (
            lambda: ExpertConstants(outcomes="iid_normal"),
            r"plays \('quantile',\); a panel wraps a nature of the binary",
        ),
        (lambda: ExpertConstants(outcomes="no_such_nature"), r"unknown nature 'no_such_nature'"),
        (lambda: Hedge(eta="tuned"), r"eta='tuned' needs the horizon T"),
        (lambda: Hedge(eta=-1.0), r"eta=-1.0 must be a positive number"),
        (lambda: Aggregating(eta=3.0), r"eta=3.0 must be in \(0, 2\]"),
        (lambda: LinfDF(loss="hinge"), r"loss='hinge'"),
        (lambda: ExpertLogistic(outcomes="iid_bernoulli"), r"has no contexts; logistic experts need features"),
    ],
)
def test_bad_configs_get_one_clear_error(make, match):
    with pytest.raises((ValueError, KeyError), match=match):
        make()


def test_bad_config_on_the_command_line_fails_before_running():
    from arena.config import validate
    from arena.errors import ConfigError

    with pytest.raises(ConfigError, match=r"forecaster: linf_df: lam=3.0 is outside \(0, 2\]"):
        validate(
            ["tournament=none", "game=experts", "forecaster=linf_df", "forecaster.lam=3.0", "nature=expert_constants"]
        )
    with pytest.raises(ConfigError, match=r"nature: expert_constants: N=0 is not an integer >= 1"):
        validate(["tournament=none", "game=experts", "forecaster=linf_df", "nature=expert_constants", "nature.N=0"])


def test_the_experts_tournament_composes():
    from arena.config import validate

    assert validate(["tournament=experts"], multirun=True) == 7 * 7 * 2
