"""One path for a matchup: :func:`arena.matchup.build_matchup` checks everything, for every way in
(``arena.play``, the Gymnasium environment, a composed config), with the same messages."""

from __future__ import annotations

import gymnasium as gym
import pytest
from omegaconf import OmegaConf

import arena
from arena.errors import ConfigError
from arena.matchup import build_matchup, matchup_from_config
from arena.seeding import STREAMS, derive_seed, forecaster_rng, nature_streams, stream_seeds

BAD = [
    ({"T": 0}, r"T=0: the horizon must be a positive integer, e\.g\. T=1000"),
    ({"T": 2.5}, r"T=2\.5: the horizon must be a positive integer"),
    ({"T": 10**15}, r"T=1000000000000000 needs about \d+ GiB .* lower T to at most \d+"),
    ({"seed": -1}, r"seed=-1: the seed must be a non-negative integer, e\.g\. seed=0"),
    ({"seed": True}, r"seed=True: the seed must be a non-negative integer"),
    (
        {"time_limit": 0},
        (
            r"time_limit=0: give the seconds a plugin call may take as a positive number, "
            r"e\.g\. time_limit=10, or None for no limit \(null in a config\)"
        ),
    ),
    ({"game": "quantile"}, r"forecaster 'k29' does not play the 'quantile' game \(it plays \('binary',\)\)"),
    (
        {"forecaster": "marginal_quantile_df", "game": "quantile", "nature": "iid_bernoulli"},
        r"nature 'iid_bernoulli' does not play the 'quantile' game",
    ),
    ({"referee": {"M": 0}}, r"^referee: M=0 must be > 0 \(the comparator norm bound\)$"),
    ({"referee": {"nope": 1}}, r"^referee: .*unexpected keyword argument 'nope'"),
]


def _args(change: dict) -> dict:
    return {"game": "binary", "forecaster": "k29", "nature": "iid_bernoulli", "T": 10, "seed": 0} | change


@pytest.mark.parametrize(("change", "pattern"), BAD, ids=[str(c) for c, _ in BAD])
def test_build_matchup_refuses_bad_values_by_name(change, pattern):
    a = _args(change)
    with pytest.raises(ValueError, match=pattern):
        build_matchup(a.pop("game"), a.pop("forecaster"), a.pop("nature"), **a)


@pytest.mark.parametrize(("change", "pattern"), BAD[:7], ids=[str(c) for c, _ in BAD[:7]])
def test_play_and_a_config_give_the_same_message(change, pattern):
    a = _args(change)
    with pytest.raises(ValueError, match=pattern):
        arena.play(a.pop("game"), a.pop("forecaster"), a.pop("nature"), **a)
    cfg = OmegaConf.create(
        {
            "game": {"name": change.get("game", "binary")},
            "forecaster": {"_target_": "forecasters.defensive.K29"},
            "nature": {"_target_": "adversaries.iid.IidBernoulli"},
            "referee": {},
            "T": 10,
            "seed": 0,
            "time_limit": None,
        }
        | {k: v for k, v in change.items() if k != "game"}
    )
    with pytest.raises(ConfigError, match=pattern):
        matchup_from_config(cfg)


def test_the_environment_checks_through_build_matchup():
    with pytest.raises(ValueError, match=r"nature 'iid_bernoulli' does not play the 'quantile' game"):
        gym.make("arena/Quantile-v0", nature="iid_bernoulli", T=5)


def test_a_config_and_play_build_the_same_matchup():
    cfg = OmegaConf.create(
        {
            "game": {"name": "binary"},
            "forecaster": {"_target_": "forecasters.defensive.K29"},
            "nature": {"_target_": "adversaries.iid.IidBernoulli", "p": 0.3},
            "referee": {"M": 2.0},
            "T": 40,
            "seed": 5,
            "time_limit": 30,
        }
    )
    m = matchup_from_config(cfg)
    assert (m.game.name, m.forecaster.name, m.nature.name, m.T, m.seed) == ("binary", "k29", "iid_bernoulli", 40, 5)
    assert (m.nature.p, m.referee.M, m.time_limit) == (0.3, 2.0, 30)


def test_every_stream_is_derived_by_its_name_and_nature_streams_never_name_the_forecaster():
    assert stream_seeds(7, "k29", "logistic") == {
        "seed_forecaster": derive_seed(7, "forecaster", "k29"),
        "seed_nature": derive_seed(7, "nature", "logistic"),
        "seed_outcome": derive_seed(7, "outcome", "logistic"),
        "seed_draw": derive_seed(7, "forecast-draw", "logistic"),
    }
    assert [who for *_, who in STREAMS].count("forecaster") == 1
    assert forecaster_rng(7, "k29").random() == forecaster_rng(7, "k29").random()
    assert [g.random() for g in nature_streams(7, "logistic")] == [g.random() for g in nature_streams(7, "logistic")]
    row = arena.play("binary", "running_mean", "logistic", T=20, seed=7).row()
    assert {k: row[k] for k in stream_seeds(7, "running_mean", "logistic")} == stream_seeds(
        7, "running_mean", "logistic"
    )
