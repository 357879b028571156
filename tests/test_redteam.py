"""The red team: searchers against closed-form worst cases, the nature-as-agent env, stored attacks
that replay the same game, certificates that hold against the attacks, and bias_pusher.

Small horizons and budgets (in evaluations: games of T rounds): the whole file runs in well under a
minute. The full-budget acceptance runs are in benchmarks/redteam.py.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys

import numpy as np
import pytest

import arena
from arena.games import get_game
from arena.metrics.smce import smce
from arena.redteam.objective import check_objective, score
from arena.redteam.policy import FORMAT, RedTeamNature, check_attack, load_attack, save_attack
from arena.redteam.search import cma_search, evaluate, plan_search, search
from arena.registry import load_plugins

load_plugins()
from adversaries.redteam import RedTeam  # noqa: E402 (after the plugins are registered)

BINARY = get_game("binary")


def brute_force_worst(forecast_of_history, T: int) -> float:
    """max over all 2^T outcome sequences of smCE/T against a deterministic forecaster given as
    p_t = forecast_of_history(y_1..y_{t-1}): the worst case, computed independently of the searchers."""
    best = 0.0
    for ys in itertools.product((0.0, 1.0), repeat=T):
        p = [forecast_of_history(ys[:t]) for t in range(T)]
        best = max(best, smce(np.array(p), np.array(ys)) / T)
    return best


def last_outcome(history) -> float:
    return history[-1] if history else 0.5


@pytest.mark.parametrize("c", [0.5, 0.3])
def test_cma_finds_the_worst_case_of_constant(c):
    # against a constant c every outcome sequence of ones (c <= 1/2) gives smCE = (1 - c) T, the most
    # |sum f(p)(y - p)| can reach with f in [0, 1]
    attack = cma_search("binary", "constant", "smce_over_T", T=60, budget=600, forecaster_params={"c": c})
    assert attack["search_value"] == pytest.approx(max(c, 1 - c))


@pytest.mark.parametrize("searcher", ["cma", "planner"])
def test_each_searcher_finds_the_worst_case_of_last_outcome(searcher):
    T = 10
    worst = brute_force_worst(last_outcome, T)
    assert worst > 0.4  # alternating outcomes: each round's residual is +-1 at forecasts 0 and 1
    if searcher == "cma":
        attack = cma_search("binary", "last_outcome", "smce_over_T", T=T, budget=1000)
    else:
        attack = plan_search("binary", "last_outcome", "smce_over_T", T=T, budget=1000)
    assert attack["search_value"] == pytest.approx(worst)
    if searcher == "planner":  # 0/1 answers against a deterministic forecaster: every seed plays the same game
        kept = search("binary", "last_outcome", "smce_over_T", T=T, budget=1000, searcher="planner", held_out=2)[0]
        assert kept["value"] == kept["search_value"] == pytest.approx(worst)


def test_search_reports_values_the_referee_gives_on_held_out_seeds_and_ranks_them():
    attacks = search(
        "binary", "window_mean", "smce_over_T", T=80, seed=3, budget=250, held_out=3, forecaster_params={"window": 5}
    )
    assert [a["searcher"] for a in attacks] and attacks[0]["value"] >= attacks[-1]["value"]
    for a in attacks:
        # a deterministic forecaster: the search plays seed 3 alone; the held-out seeds come after it
        assert a["seeds"] == [3] and a["held_out"]["seeds"] == [4, 5, 6] and not a["randomized"]
        for s, v in zip(a["held_out"]["seeds"], a["held_out"]["values"], strict=True):
            r = arena.play("binary", "window_mean", RedTeamNature(a), T=80, seed=s, forecaster_params={"window": 5})
            assert v == r.summary["smce_over_T"]  # the stored values are the referee's, on replay
        assert a["value"] == pytest.approx(np.mean(a["held_out"]["values"]), abs=1e-15)
        assert a["seed"] == 3 and a["forecaster"] == "window_mean" and a["certificate"] is None


@pytest.mark.parametrize("forecaster", ["k29", "k29_rounded"])
def test_attacks_on_k29_stay_under_its_certificate(forecaster):
    for a in search("binary", forecaster, "smce_over_T", T=120, budget=250, held_out=4):
        cert = a["certificate"]  # of the held-out runs: the value's own
        assert cert["name"] == "smce" and cert["holds"]
        assert cert["value"] <= cert["bound"]
        assert a["randomized"] == (forecaster == "k29_rounded")
        if forecaster == "k29":  # no rounding: the certified smCE is the attacked one
            assert a["value"] == pytest.approx(cert["value"])


def test_stored_policy_replays_the_same_game(tmp_path):
    attack = cma_search("binary", "ogd", "smce_over_T", T=100, seed=1, budget=200)
    attack.update(forecaster="ogd", metric="smce_over_T", seed=1)
    path = save_attack(attack, tmp_path / "ogd.json")
    nature = RedTeam(str(path))
    assert nature.params() == {"path": str(path)} and nature.adaptive
    a = arena.play("binary", "ogd", nature, T=100, seed=1)
    b = arena.play("binary", "ogd", RedTeamNature(load_attack(path)), T=100, seed=1)
    assert np.array_equal(a.recorder.y, b.recorder.y) and np.array_equal(a.recorder.p, b.recorder.p)
    assert a.summary["smce_over_T"] == attack["search_value"]


def test_planned_sequence_replays_the_same_game_against_a_randomized_forecaster(tmp_path):
    attack = plan_search("binary", "k29_rounded", "smce_over_T", T=60, seed=2, budget=300)
    path = save_attack(attack, tmp_path / "k29r.json")
    nature = RedTeam(str(path))
    assert not nature.adaptive and nature.length == 60  # a sequence ignores the forecast
    r = arena.play("binary", "k29_rounded", nature, T=60, seed=2)
    assert r.summary["smce_over_T"] == attack["search_value"]


def test_quantile_attack_respects_L_and_beats_the_pusher():
    game = get_game("quantile", q=0.9)
    attack = search(game, "running_quantile", "coverage_error", T=150, budget=200, held_out=2, L=2.0)[0]
    value, r = evaluate(attack, "running_quantile", "coverage_error", attack["held_out"]["seeds"][0], game=game)
    assert value == attack["held_out"]["values"][0]
    assert np.nanmax(r.recorder.law_lip) <= 2.0 + 1e-9  # every law nature gave is 2-Lipschitz
    pusher = arena.play(game, "running_quantile", "lipschitz_cdf", T=150, seed=0, nature_params={"L": 2.0})
    assert value >= pusher.summary["coverage_error"]


def test_experts_attack_on_ftl():
    attack = cma_search(
        get_game("experts"),
        "ftl",
        "regret_experts",
        T=100,
        budget=300,
        panel={"name": "expert_constants", "params": {"grid": [0.0, 1.0]}},
    )
    # two constant experts 0 and 1: FTL follows the leader, and a contrarian makes it lose every round
    # while the best expert loses about half of them: regret about T/2
    assert attack["search_value"] >= 0.45 * 100


def test_env_passes_check_env_and_its_rewards_sum_to_the_metric():
    import gymnasium as gym
    from gymnasium.utils.env_checker import check_env

    for kw in (
        {"forecaster": "running_mean"},
        {"forecaster": "aci", "game": "quantile", "metric": "coverage_error"},
        {"forecaster": "hedge", "game": "experts", "metric": "regret_experts"},
    ):
        check_env(gym.make("arena/RedTeam-v0", T=30, **kw).unwrapped, skip_render_check=True)
    env = gym.make("arena/RedTeam-v0", forecaster="window_mean", T=50, forecaster_params={"window": 4})
    env.reset(seed=5)
    actions = np.random.default_rng(0).integers(0, 2, 50).astype(float)
    total = sum(env.step(np.array([a]))[1] for a in actions)
    # the same answers, as a stored sequence, through arena.play and its referee
    attack = {"format": FORMAT, "kind": "sequence", "game": "binary", "T": 50, "answers": actions.tolist()}
    r = arena.play("binary", "window_mean", RedTeamNature(attack), T=50, seed=5, forecaster_params={"window": 4})
    assert total == pytest.approx(r.summary["smce_over_T"], abs=1e-12)


def test_bias_pusher_differs_from_anti_forecaster():
    differ = []
    for f in ("window_mean", "ogd", "k29", "linear_df", "running_mean", "last_outcome"):
        a = arena.play("binary", f, "anti_forecaster", T=500, seed=0)
        b = arena.play("binary", f, "bias_pusher", T=500, seed=0)
        if not np.array_equal(a.recorder.y, b.recorder.y):
            differ.append(f)
            assert a.summary["ece"] != b.summary["ece"]
    # where the contrarian is already the worst case (forecasts held near 1/2, or the last outcome) the
    # pusher plays it too; elsewhere it steers back to its worst bin
    assert differ == ["window_mean", "ogd", "k29", "linear_df"]


def test_errors_are_one_line():
    with pytest.raises(
        ValueError,
        match=r"metric='coverage' is not a red-team objective of the quantile game\. "
        r"Did you mean 'coverage_error'\?",
    ):
        check_objective("quantile", "coverage")
    with pytest.raises(ValueError, match="is neither a file nor a shipped attack"):
        _ = RedTeam("no_such_attack").attack
    with pytest.raises(ValueError, match="kind='plan'; expected one of"):
        check_attack({"format": FORMAT, "kind": "plan", "game": "binary"})
    with pytest.raises(ValueError, match="searcher='random'"):
        search("binary", "constant", "smce_over_T", T=10, searcher="random")
    with pytest.raises(ValueError, match=r"budget=3: give the evaluations .* an integer >= seeds=4"):
        search("binary", "constant", "smce_over_T", T=10, budget=3)
    with pytest.raises(ValueError, match=r"seeds=0: give a positive number of seeds"):
        search("binary", "constant", "smce_over_T", T=10, seeds=0)


def test_score_agrees_with_the_referee():
    r = arena.play("binary", "k29", "logistic", T=200, seed=0)
    rec = r.recorder
    for metric in ("smce_over_T", "ece", "bias", "regret_constant", "regret_linear"):
        assert score(BINARY, metric, rec.X, rec.p, rec.y) == pytest.approx(r.summary[metric], rel=1e-12)


def test_command_line(tmp_path):
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "arena.redteam",
            "forecaster=constant",
            "T=30",
            "budget=100",
            f"results_root={tmp_path}",
            "cross_attack=false",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    files = sorted((tmp_path / "redteam" / "binary" / "attacks").glob("*.json"))
    assert [f.name.rsplit("__", 1)[0] for f in files] == [
        "constant__smce_over_T__T30__s0__cma",
        "constant__smce_over_T__T30__s0__planner",
    ]
    cma = json.loads(files[0].read_text())
    assert cma["search_value"] == 0.5 and cma["held_out"]["seeds"] == list(range(1, 9))
    # both values in the terminal; the policy flips coins, so nature's own coins may cost it a little elsewhere
    assert f"{cma['value']:.6g} held out (seeds 1-8; search 0.5 on seed 0)" in out.stdout
    assert (tmp_path / "redteam" / "binary" / "table.md").is_file()
    bad = subprocess.run(
        [sys.executable, "-m", "arena.redteam", "metric=smce", "T=30", f"results_root={tmp_path}"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode == 2 and bad.stderr.strip().count("\n") == 0
    assert "not a red-team objective" in bad.stderr


@pytest.mark.parametrize("name", ["running_mean", "window_mean", "ogd", "k29"])
def test_shipped_attacks_replay_the_value_they_store(name):
    from adversaries.redteam import resolve

    attack = load_attack(resolve(name))
    held = attack["held_out"]
    assert attack["value"] == pytest.approx(np.mean(held["values"]), rel=1e-12)
    assert not set(held["seeds"]) & set(attack["seeds"])  # measured on seeds the search never saw
    for s, v in zip(held["seeds"], held["values"], strict=True):
        r = arena.play("binary", name, RedTeam(name), T=attack["T"], seed=s)
        assert r.summary[attack["metric"]] == pytest.approx(v, rel=1e-12)
        if attack["certificate"]:
            assert r.certificates["smce"].holds


def _without_timings(attack: dict) -> dict:
    return {k: v for k, v in attack.items() if k != "cpu_seconds"}


def test_the_same_settings_give_the_same_attacks():
    # a randomized forecaster, both searchers, each stopped by the budget (evaluations, not seconds)
    kw = {"T": 60, "budget": 60, "seeds": 2, "held_out": 2}
    first = search("binary", "k29_rounded", "smce_over_T", **kw)
    second = search("binary", "k29_rounded", "smce_over_T", **kw)
    assert [_without_timings(a) for a in first] == [_without_timings(a) for a in second]
    assert all(a["budget_bound"] and not a["time_bound"] and a["evaluations"] <= 60 for a in first)


def test_an_attack_says_which_limit_bound():
    bound = cma_search("binary", "ogd", "smce_over_T", T=50, budget=30)
    assert bound["budget_bound"] and not bound["time_bound"] and 0 < bound["evaluations"] <= 30
    free = plan_search("binary", "last_outcome", "smce_over_T", T=20, budget=1000)
    assert not free["budget_bound"] and not free["time_bound"]  # planned every round to the horizon
    capped = cma_search("binary", "ogd", "smce_over_T", T=50, budget=100_000, max_seconds=0.2)
    assert capped["time_bound"] and not capped["budget_bound"] and capped["evaluations"] < 100_000


def test_several_seeds_close_the_overfit_gap_on_k29_rounded():
    # k29_rounded flips a coin between grid points: a candidate scored on one seed's coins is tuned to them
    def kept(seeds: int) -> dict:
        return search(
            "binary", "k29_rounded", "smce_over_T", T=200, budget=400, searcher="cma", seeds=seeds, held_out=16
        )[0]

    one, four = kept(1), kept(4)
    assert four["seeds"] == [0, 1, 2, 3] and four["held_out"]["seeds"] == list(range(4, 20))
    assert one["seeds"] == [0] and one["held_out"]["seeds"] == list(range(1, 17))
    gap_one, gap_four = one["search_value"] - one["value"], four["search_value"] - four["value"]
    assert gap_one > 0.1 * one["search_value"]  # one seed: the held-out value is more than 10% below
    assert gap_four < gap_one / 3 and four["value"] >= 0.95 * four["search_value"]
    assert four["certificate"]["holds"] and four["value"] <= four["certificate"]["bound"]
