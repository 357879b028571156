"""Matchup ids computed from plain containers (the serial part of a tournament) equal the ids of the
OmegaConf configs the jobs build, for every shipped tournament and for configs with interpolations."""

from __future__ import annotations

import pytest
from omegaconf import OmegaConf, open_dict

from arena import plan as tr
from arena.config import compose, hydra_session


def _slow_ids(cfg):
    base = tr.shared_config(cfg)
    return [tr.matchup_key(tr.matchup_config(cfg, e, base)) for e in tr.plan(cfg)]


@pytest.mark.parametrize(
    "overrides",
    [
        ["tournament=bench"],
        ["tournament=experts"],
        ["tournament=quantile"],
        ["tournament=calibration"],
        ["tournament=decisions"],
    ],
)
def test_planned_ids_match_the_job_configs(overrides):
    with hydra_session():
        cfg = compose(overrides)
        cfg = OmegaConf.masked_copy(cfg, [k for k in cfg if k != "hydra"])
        ids = tr.planned_ids(cfg)
        assert ids == _slow_ids(cfg) and len(set(ids)) == len(ids)
        _assert_shards_hold_the_job_configs(cfg)


def _assert_shards_hold_the_job_configs(cfg, shards=3):
    """The shards deal the plan round-robin, each matchup with its id and the resolved config a job built
    from an OmegaConf config (what run_matchup plays and stores)."""
    base = tr.shared_config(cfg)
    slow = [
        (tr.matchup_key(c), OmegaConf.to_container(c, resolve=True))
        for c in (tr.matchup_config(cfg, e, base) for e in tr.plan(cfg))
    ]
    dealt = []
    with open_dict(cfg):
        for shard in range(shards):
            cfg.tournament.shards, cfg.shard = shards, shard
            part = tr.shard_of(cfg)
            assert part == slow[shard::shards]
            dealt += part
    assert sorted(mid for mid, _ in dealt) == sorted(mid for mid, _ in slow)


def test_an_interpolation_is_resolved_per_matchup():
    with hydra_session():
        cfg = compose(["tournament=experts", "tournament.seeds=[0,1]", "+note=s${seed}"])
        cfg = OmegaConf.masked_copy(cfg, [k for k in cfg if k != "hydra"])
        dicts = [tr._matchup_dict(cfg, e) for e in tr.plan(cfg)]
        assert not any(tr._plain(d) for d in dicts)  # note: ${seed}, resolved per matchup
        ids = tr.planned_ids(cfg)
        assert ids == _slow_ids(cfg) and len(set(ids)) == len(ids)
        _assert_shards_hold_the_job_configs(cfg)
        assert {m["note"] for _, m in tr.planned_matchups(cfg)} == {"s0", "s1"}


def test_an_interpolation_in_an_option_is_resolved_per_matchup():
    """An option (forecaster or nature) holding an interpolation is resolved for each matchup that shares it."""
    cfg = OmegaConf.create({"game": {"name": "binary"}, "T": 10, "seed": 0})
    option = OmegaConf.create({"_target_": "forecasters.baselines.Constant", "note": "s${seed}"})
    plain_option = OmegaConf.create({"_target_": "adversaries.iid.IidBernoulli"})
    entries = [tr.Entry("c", option, "n", plain_option, 10, seed) for seed in (0, 1)]
    shared = tr.Shared(cfg)  # made once, as for a plan's matchups
    resolved = [tr.resolved_matchup(cfg, e, shared) for e in entries]
    assert [r["forecaster"]["note"] for r in resolved] == ["s0", "s1"]
    assert resolved == [tr.resolved_matchup(cfg, e) for e in entries]


def test_a_plan_without_interpolations_builds_no_config_per_matchup(monkeypatch):
    """The labels' interpolations of the shared config are set per matchup: a shipped tournament's matchups are
    their own resolved form, made without an OmegaConf config each (milliseconds a matchup at 10^5 matchups):
    the configs built do not grow with the seeds."""
    created = []
    real = OmegaConf.create
    built = {}
    with hydra_session():
        for seeds in ("[0]", "[0,1,2]"):
            cfg = compose(["tournament=calibration", f"tournament.seeds={seeds}"])
            cfg = OmegaConf.masked_copy(cfg, [k for k in cfg if k != "hydra"])
            expected = _slow_ids(cfg)
            with monkeypatch.context() as m:
                m.setattr(tr.OmegaConf, "create", lambda *a, **k: created.append(1) or real(*a, **k))
                assert tr.planned_ids(cfg) == expected
            built[seeds], created[:] = len(created), []
    assert built["[0]"] == built["[0,1,2]"], built
