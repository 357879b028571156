"""The oblivious fast path of the model adapters and of the replay natures: the same game as the step loop.

The adapters (river, scikit-learn) play every round in one loop (``play_oblivious``); a replay nature gives
every round's context and outcome at once (``Nature.series``). Either way the recorded game, its trace and
its scores are those of the round-by-round path.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from adversaries.replay import Replay, SeattleRain
from arena import play
from arena.env import ForecastEnv
from arena.oblivious import Declined, rounds
from arena.protocols import Nature, ProtocolError
from forecasters.adapters import RiverForecaster, SklearnForecaster

RECORDED = ("X", "p_mean", "p", "p_internal", "y", "y_prob")


@pytest.fixture(scope="module")
def rounds_csv(tmp_path_factory) -> Path:
    """600 rounds of a logistic law of two context columns, with a hole in each of rows 7 (a) and 30 (y)."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(600, 2))
    y = (rng.random(600) < 1 / (1 + np.exp(-(X @ [1.5, -1.0])))).astype(float)
    d = pd.DataFrame({"y": y, "a": X[:, 0], "b": X[:, 1]})
    d.loc[7, "a"], d.loc[30, "y"] = np.nan, np.nan
    path = tmp_path_factory.mktemp("fast") / "rounds.csv"
    d.to_csv(path, index=False)
    return path


class _RoundByRound(Replay):
    """A replay that offers no ``series``: the fast path asks it round by round (same name: same streams)."""

    series = None


def _spied(monkeypatch, cls, verb: str) -> list:
    """The answers of ``cls.verb``'s calls that returned (the class's own method stays in place, wrapped)."""
    calls: list = []
    original = getattr(cls, verb)

    def spy(self, *args):
        out = original(self, *args)
        calls.append(out)
        return out

    monkeypatch.setattr(cls, verb, spy)
    return calls


def _same_game(a, b) -> None:
    for name in RECORDED:
        np.testing.assert_array_equal(getattr(a.recorder, name), getattr(b.recorder, name), err_msg=name)
    pd.testing.assert_frame_equal(a.trace, b.trace)
    assert a.summary == pytest.approx(b.summary, nan_ok=True, rel=0, abs=0)
    assert {k: c.value for k, c in a.certificates.items()} == {k: c.value for k, c in b.certificates.items()}


# ----------------------------------------------------------------------------- the adapters' play_oblivious


def _natures(path: Path) -> list:
    return [
        ("replay", {"path": str(path), "column": "y", "context_columns": ["a", "b"], "on_missing": "skip"}),
        ("replay", {"path": str(path), "column": "y", "on_missing": "skip"}),
        ("iid_bernoulli", {}),
        ("logistic", {}),
    ]


def _fast_and_step(monkeypatch, cls, forecaster, params, nature, nature_params, T):
    calls = _spied(monkeypatch, cls, "play_oblivious")
    runs = [
        play(
            "binary",
            forecaster,
            nature,
            T=T,
            seed=5,
            forecaster_params=params,
            nature_params=nature_params,
            keep_forecasts=False,
            fast_path=fast_path,
        )
        for fast_path in (True, False)
    ]
    assert len(calls) == 1 and calls[0] is not None  # the fast path played the first game, the step loop the second
    return runs


@pytest.mark.parametrize("model", ["linear_model.LogisticRegression", "naive_bayes.GaussianNB"])
@pytest.mark.parametrize("case", range(4))
def test_river_plays_the_step_loops_game_on_the_fast_path(monkeypatch, rounds_csv, model, case):
    pytest.importorskip("river", reason="the optional extra river is not installed")
    nature, nature_params = _natures(rounds_csv)[case]
    fast, step = _fast_and_step(monkeypatch, RiverForecaster, "river", {"model": model}, nature, nature_params, 500)
    _same_game(fast, step)
    assert fast.forecaster.predict(np.zeros(fast.nature.context_dim)) == step.forecaster.predict(
        np.zeros(step.nature.context_dim)
    )  # the model is left as the step loop leaves it


@pytest.mark.parametrize("estimator", ["linear_model.SGDClassifier", "naive_bayes.BernoulliNB"])
@pytest.mark.parametrize("case", range(4))
def test_sklearn_plays_the_step_loops_game_on_the_fast_path(monkeypatch, rounds_csv, estimator, case):
    pytest.importorskip("sklearn", reason="the optional extra sklearn is not installed")
    nature, nature_params = _natures(rounds_csv)[case]
    params = {"estimator": estimator}
    fast, step = _fast_and_step(monkeypatch, SklearnForecaster, "sklearn", params, nature, nature_params, 60)
    _same_game(fast, step)


# ----------------------------------------------------------------------------- Nature.series


@pytest.mark.parametrize(
    "params",
    [
        {"context_columns": ["a", "b"], "on_missing": "skip"},
        {"context_columns": ["b"], "missing_columns": ["y"], "on_missing": "skip", "start": 40},
        {"context_columns": ["a", "b"], "intercept": True, "on_missing": "skip", "start": 3},
        {"intercept": True, "on_missing": "skip"},
        {"missing_columns": ["y"], "on_missing": "skip", "start": 100},
    ],
)
@pytest.mark.parametrize("forecaster", ["k29", "running_mean"])
def test_a_replay_given_at_once_plays_the_round_by_round_game(monkeypatch, rounds_csv, params, forecaster):
    responds = _spied(monkeypatch, Replay, "respond")
    nature = {"path": str(rounds_csv), "column": "y", **params}
    T = Replay(**nature).length
    at_once = play("binary", forecaster, Replay(**nature), T=T, seed=2, keep_forecasts=False)
    assert responds == []  # no round was asked for
    one_by_one = play("binary", forecaster, _RoundByRound(**nature), T=T, seed=2, keep_forecasts=False)
    assert len(responds) == T
    _same_game(at_once, one_by_one)


def test_the_shipped_replay_is_given_at_once(monkeypatch):
    responds = _spied(monkeypatch, Replay, "respond")
    runs = [
        play(
            "binary",
            "k29",
            SeattleRain(["precipitation", "wind"], intercept=True),
            T=1460,
            seed=0,
            fast_path=f,
            keep_forecasts=False,
        )
        for f in (True, False)
    ]
    assert len(responds) == 1460  # the step loop's only
    _same_game(*runs)


def _env(nature: Nature, T: int, seed: int = 4) -> ForecastEnv:
    env = ForecastEnv(nature, T=T)
    env.reset(seed=seed)
    return env


def test_rounds_at_once_leave_the_outcome_coin_where_round_by_round_leaves_it(monkeypatch, rounds_csv):
    responds = _spied(monkeypatch, Replay, "respond")
    nature = {"path": str(rounds_csv), "column": "y", "context_columns": ["a", "b"], "on_missing": "skip"}
    envs = [_env(Replay(**nature), 598), _env(_RoundByRound(**nature), 598)]
    got = [rounds(envs[0])]
    assert responds == []
    got.append(rounds(envs[1]))
    for a, b in zip(*got, strict=True):
        np.testing.assert_array_equal(a, b)
    assert envs[0].streams.outcome.random() == envs[1].streams.outcome.random()


def test_series_is_declined_where_the_rounds_would_differ(rounds_csv):
    nature = Replay(rounds_csv, column="y", context_columns=["a"], on_missing="skip")
    nature.reset(np.random.default_rng(0))
    assert nature.series(nature.length + 1) is None  # the round past the end names itself, round by round
    X, y = nature.series(5)
    np.testing.assert_array_equal(X, np.stack([nature.context(t) for t in range(1, 6)]))
    np.testing.assert_array_equal(y, [nature.respond(t, None, None) for t in range(1, 6)])

    class Shifted(Replay):
        name = "replay_shifted"

        def context(self, t):
            return super().context(t) + 1.0

    shifted = Shifted(rounds_csv, column="y", context_columns=["a"], on_missing="skip")
    shifted.reset(np.random.default_rng(0))
    assert shifted.series(5) is None


class _Given(Nature):
    """Gives its rounds at once: one context coordinate, the outcomes ``ys``; ``bad``: a context that is not
    finite in round 3."""

    name = "given"
    context_dim = 1

    def __init__(self, ys=(0.0, 1.0, 1.0, 0.0), bad: bool = False, shape=None):
        self.ys, self.bad, self.shape = list(ys), bad, shape

    def context(self, t):
        return np.array([np.nan if self.bad and t == 3 else float(t)])

    def respond(self, t, x, forecast):
        return self.ys[t - 1]

    def series(self, T):
        X = np.stack([self.context(t) for t in range(1, T + 1)])
        return (X.reshape(self.shape) if self.shape else X), np.array(self.ys[:T])


class _GivenRoundByRound(_Given):
    series = None


def test_rounds_at_once_are_checked_as_round_by_round():
    for nature, error in (
        (dict(bad=True), r"nature 'given' returned context array\(\[nan\]\) at t=3; expected 1 finite floats"),
        (dict(ys=(0.0, 0.5, 1.0, 1.0)), None),
    ):
        for cls in (_Given, _GivenRoundByRound):
            env = _env(cls(**nature), 4)
            with pytest.raises(ProtocolError if error else Declined) as caught:
                rounds(env)
            if error:
                assert str(caught.value) == error.replace("\\", "")
    with pytest.raises(
        ProtocolError,
        match=r"series\(T=4\) gave contexts of shape \(4,\) and outcomes of shape \(4,\); expected \(4, 1\)",
    ):
        rounds(_env(_Given(shape=(4,)), 4))


@pytest.mark.parametrize(
    ("proba", "expected"),
    [
        ({}, 0.5),  # no class seen yet
        ({False: 1.0}, 0.0),  # only the other class
        ({False: 0.3, True: 0.7}, 0.7),
        ({0: 0.2, 1: 0.8}, 0.8),  # integer labels: 1 is the key True
        ({True: 1.2}, 1.0),  # clamped
        ({True: -0.1}, 0.0),
    ],
)
def test_river_probability_of_class_one(proba, expected):
    from forecasters.adapters import _river_probability

    assert _river_probability(proba) == expected


def test_river_probability_keeps_nan():
    from forecasters.adapters import _river_probability

    assert np.isnan(_river_probability({True: float("nan")}))  # the arena's check names the bad forecast
