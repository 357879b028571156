"""The binary game as a Gymnasium environment: the contract of ``arena/Binary-v0``."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest

import arena  # noqa: F401  (registers the Gymnasium ids)
from arena import checks
from arena.env import ForecastEnv
from arena.protocols import Forecast, ProtocolError
from arena.runner import play

ENV_ID = "arena/Binary-v0"
NATURES = {
    "iid_bernoulli": {},
    "logistic": {"w": [0.5, 2.0, -1.0, 0.3], "B": 2.0},  # contexts in R^4
    "anti_forecaster": {},
    "seattle_rain": {"context_columns": ["temp_max", "wind"]},
}


def make(nature: str = "iid_bernoulli", T: int = 50, **params) -> ForecastEnv:
    return gym.make(ENV_ID, nature=nature, T=T, nature_params=params or NATURES.get(nature)).unwrapped


def episode(env: ForecastEnv, actions, seed: int = 0):
    """Observations, rewards and infos of one episode at the given actions."""
    obs, _ = env.reset(seed=seed)
    out = [obs]
    rewards, infos = [], []
    for a in actions:
        obs, r, terminated, _truncated, info = env.step(a)
        out.append(obs)
        rewards.append(r)
        infos.append(info)
        if terminated:
            break
    return np.array(out), np.array(rewards), infos


@pytest.mark.parametrize("nature", sorted(NATURES))
def test_gymnasium_check_env_passes(nature):
    env = make(nature, T=20)
    assert env.observation_space.shape == (env.nature.context_dim,)
    checks.check_env(env)  # gymnasium's checker, plus reset(seed) and step determinism
    checks.check_env(ENV_ID, [env.nature])  # made through gym.make, with a spec


def test_logistic_contexts_live_in_R_d():
    env = make("logistic")
    obs, _ = env.reset(seed=1)
    assert obs.shape == (4,) and obs.dtype == np.float64 and obs[0] == 1.0
    assert obs in env.observation_space


@pytest.mark.parametrize("nature", sorted(NATURES))
def test_reset_with_a_seed_is_deterministic(nature):
    actions = np.linspace(0.0, 1.0, 30)
    a, b = episode(make(nature), actions, seed=7), episode(make(nature), actions, seed=7)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert [i["y"] for i in a[2]] == [i["y"] for i in b[2]]
    env = make(nature)  # and on the same instance, after another episode
    episode(env, actions[::-1], seed=8)
    np.testing.assert_array_equal(episode(env, actions, seed=7)[1], a[1])


def test_different_seeds_give_different_games():
    actions = [0.5] * 50
    y = [[i["y"] for i in episode(make("iid_bernoulli"), actions, seed=s)[2]] for s in (0, 1)]
    assert y[0] != y[1]
    x = [episode(make("logistic"), actions, seed=s)[0] for s in (0, 1)]
    assert not np.array_equal(x[0], x[1])


@pytest.mark.parametrize(
    "action",
    [0.3, np.array([0.3]), np.float32(0.3), Forecast.point(0.3)],
    ids=["float", "array", "float32", "Forecast"],
)
def test_step_returns_the_squared_loss_and_the_info(action):
    env = make("iid_bernoulli", T=5)
    env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(action)
    assert set(info) == {"y", "p", "t", "forecast"}
    assert info["t"] == 1 and info["y"] in (0.0, 1.0)
    assert info["p"] == pytest.approx(0.3) and isinstance(info["forecast"], Forecast)
    assert reward == pytest.approx(-((info["p"] - info["y"]) ** 2))
    assert obs.shape == (0,) and not terminated and not truncated


def test_reward_and_info_over_an_episode():
    env = make("anti_forecaster", T=40)
    _, rewards, infos = episode(env, np.linspace(0, 1, 40))
    assert [i["t"] for i in infos] == list(range(1, 41))
    for r, i in zip(rewards, infos, strict=False):
        assert r == -((i["p"] - i["y"]) ** 2)
        assert i["y"] == (1.0 if i["forecast"].mean < 0.5 else 0.0)  # the contrarian sees the forecast


@pytest.mark.parametrize("T", [1, 2, 17])
def test_terminated_exactly_at_T_and_stepping_after_raises(T):
    env = make("iid_bernoulli", T=T)
    env.reset(seed=0)
    for t in range(1, T + 1):
        _, _, terminated, truncated, info = env.step(0.5)
        assert terminated == (t == T), f"terminated={terminated} at t={t} of T={T}"
        assert not truncated and info["t"] == t
    with pytest.raises(RuntimeError, match=r"call reset\(\) before step\(\), and again after the game terminated"):
        env.step(0.5)
    env.reset(seed=0)  # a new episode can start
    assert env.step(0.5)[4]["t"] == 1


def test_step_before_reset_raises():
    with pytest.raises(RuntimeError, match=r"call reset\(\) before step\(\)"):
        make().step(0.5)


def test_a_two_point_forecast_is_realized_with_its_frequencies():
    n, lo, hi, q = 20_000, 0.2, 0.7, 0.3
    env = make("iid_bernoulli", T=n)
    env.reset(seed=3)
    f = Forecast.two_point(lo, hi, q)
    realized = np.array([env.step(f)[4]["p"] for _ in range(n)])
    assert set(np.unique(realized)) == {lo, hi}
    k = int(np.sum(realized == lo))
    sigma = math.sqrt(n * q * (1 - q))
    assert abs(k - n * q) <= 5 * sigma, f"{k} of {n} draws at {lo}, expected {n * q} +- {5 * sigma:.0f}"
    rec = env.recorder
    assert np.allclose(rec.p_mean, 0.2 * 0.3 + 0.7 * 0.7) and np.array_equal(rec.p, realized)


def test_the_forecast_coin_and_the_outcome_coin_are_independent_streams():
    """The realized forecast does not change the outcomes: same seed, different forecast laws, same y."""
    n = 200
    y = []
    for f in (Forecast.point(0.5), Forecast.two_point(0.1, 0.9, 0.5)):
        env = make("iid_bernoulli", T=n)
        env.reset(seed=5)
        y.append([env.step(f)[4]["y"] for _ in range(n)])
    assert y[0] == y[1]


@pytest.mark.parametrize(
    ("action", "match"),
    [
        (math.nan, r"forecaster forecast nan is outside the forecast space \[0\.0, 1\.0\]; clip or fix the forecaster"),
        (1.5, r"forecaster forecast 1\.5 is outside the forecast space \[0\.0, 1\.0\]"),
        (-0.1, r"forecast -0\.1 is outside the forecast space"),
        (Forecast((0.2, 0.8), (0.5, 0.6)), r"probabilities \(0\.5, 0\.6\); they must be >= 0 and sum to 1"),
        (Forecast((0.2, 0.8), (1.2, -0.2)), r"probabilities \(1\.2, -0\.2\); they must be >= 0 and sum to 1"),
        (Forecast((0.2,), (0.5, 0.5)), r"malformed distribution .*need as many probs as points"),
        (Forecast((0.2, 1.3), (0.5, 0.5)), r"forecast 1\.3 is outside the forecast space"),
        ("half", r"forecaster returned .*'half'.*expected a float in \[0\.0, 1\.0\] or an arena\.Forecast"),
        (np.array([0.2, 0.3]), r"expected a float in \[0\.0, 1\.0\] or an arena\.Forecast"),
    ],
    ids=["nan", "1.5", "negative", "probs-sum", "negative-prob", "malformed", "atom-out", "string", "two-floats"],
)
def test_bad_actions_raise_a_protocol_error(action, match):
    env = make("iid_bernoulli", T=5)
    env.reset(seed=0)
    with pytest.raises(ProtocolError, match=match):
        env.step(action)


def test_nature_streams_do_not_depend_on_the_forecaster():
    a = play("binary", "constant", "iid_bernoulli", T=300, seed=4)
    b = play("binary", "k29", "iid_bernoulli", T=300, seed=4)
    c = play("binary", "running_mean", "logistic", T=300, seed=4)
    d = play("binary", "linear_df", "logistic", T=300, seed=4)
    np.testing.assert_array_equal(a.recorder.y, b.recorder.y)
    np.testing.assert_array_equal(c.recorder.y, d.recorder.y)
    np.testing.assert_array_equal(c.recorder.X, d.recorder.X)
    assert not np.array_equal(a.recorder.p, b.recorder.p)  # the forecasters did differ


@pytest.mark.parametrize("T", [0, -5])
def test_a_non_positive_horizon_is_refused(T):
    with pytest.raises(ValueError, match=rf"T={T}: the horizon must be a positive integer, e.g. T=1000"):
        gym.make(ENV_ID, nature="iid_bernoulli", T=T)
    with pytest.raises(ValueError, match=rf"T={T}: the horizon must be a positive integer"):
        play("binary", "constant", "iid_bernoulli", T=T)


def test_a_boolean_horizon_is_refused():
    with pytest.raises(ValueError, match=r"T=True: the horizon must be a positive integer"):
        ForecastEnv("iid_bernoulli", T=True)


def test_a_forfeit_in_round_one_is_a_result_not_a_crash():
    from arena.protocols import Forecaster

    class NaNForecaster(Forecaster):
        name = "nan_forecaster"

        def predict(self, x):
            return math.nan

        def update(self, x, p, y):
            pass

    r = play("binary", NaNForecaster(), "iid_bernoulli", T=5)
    assert r.forfeit.who == "forecaster" and r.forfeit.step == 1 and r.recorder.n == 0


def test_a_fractional_horizon_is_refused():
    with pytest.raises(ValueError, match=r"T=2\.5: the horizon must be a positive integer"):
        ForecastEnv("iid_bernoulli", T=2.5)


def test_a_horizon_longer_than_a_replayed_series_is_refused(tmp_path):
    path = tmp_path / "bits.csv"
    pd.DataFrame({"y": [0, 1, 1, 0, 1]}).to_csv(path, index=False)
    env = gym.make(ENV_ID, nature="replay", T=6, nature_params={"path": str(path), "column": "y"})
    with pytest.raises(ValueError, match=r"T=6 exceeds the 5 rounds nature 'replay' can play; lower T to at most 5"):
        env.reset(seed=0)
    env = gym.make(ENV_ID, nature="replay", T=5, nature_params={"path": str(path), "column": "y"})
    env.reset(seed=0)
    assert [env.step(0.5)[4]["y"] for _ in range(5)] == [0.0, 1.0, 1.0, 0.0, 1.0]
    with pytest.raises(
        ValueError,
        match=r"T=2000 exceeds the 1460 rounds nature 'seattle_rain' can play; "
        r"lower T to at most 1460",
    ):
        play("binary", "constant", "seattle_rain", T=2000)


def test_the_recorder_keeps_every_round():
    env = make("logistic", T=25)
    obs, _rewards, infos = episode(env, np.full(25, 0.4), seed=2)
    rec = env.recorder
    assert rec.n == 25
    np.testing.assert_array_equal(rec.X, obs[:-1])  # the context each forecast was made on
    assert rec.y.tolist() == [i["y"] for i in infos]
    assert np.all((rec.y_prob > 0) & (rec.y_prob < 1))  # logistic exposes its law
