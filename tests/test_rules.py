"""One round's rules (arena.rules): the step loop and the oblivious fast path draw by the same functions,
the result row is built once, and a forfeit names who broke the game by the call that failed."""

from __future__ import annotations

import json

import numpy as np

from arena.games import get_game
from arena.jobs import crashed
from arena.oblivious import outcomes
from arena.protocols import Bernoulli, Forecast, Forecaster, Nature, OutcomeLaw, ProtocolError
from arena.results import CRASH, Forfeit, Provenance, result_row
from arena.rules import bernoulli_outcome, draw_outcome, realize
from arena.runner import play
from arena.store import save_matchup

BINARY = get_game("binary")


class TwoUniforms(OutcomeLaw):
    """A law of a bit that samples the outcome stream itself, two uniforms a draw."""

    def sample(self, rng: np.random.Generator) -> float:
        return 1.0 if rng.random() + rng.random() > 1.0 else 0.0

    def cdf(self, v: float) -> float:
        return 0.0 if v < 0 else 0.5 if v < 1 else 1.0


def test_the_batched_outcome_coin_draws_what_one_round_at_a_time_draws():
    answers = [Bernoulli(0.3), 1.0, TwoUniforms(), Bernoulli(0.7), Bernoulli(0.7), 0.0, TwoUniforms(), Bernoulli(0.5)]
    one, batched = np.random.default_rng(5), np.random.default_rng(5)
    rounds = [draw_outcome(a, one, BINARY, "nature 'n'", t) for t, a in enumerate(answers, start=1)]
    y, y_prob = outcomes(answers, batched, BINARY)
    assert y.tolist() == [r[0] for r in rounds]
    np.testing.assert_array_equal(y_prob, [r[1] for r in rounds])  # NaN for a plain outcome, in both
    assert one.random() == batched.random()  # the stream is left at the same place


def test_one_law_every_round_is_batched_as_the_rounds_draw_it():
    law = Bernoulli(0.4)
    one, batched = np.random.default_rng(1), np.random.default_rng(1)
    rounds = [draw_outcome(law, one, BINARY, "nature 'n'", t) for t in range(1, 101)]
    y, y_prob = outcomes([law] * 100, batched, BINARY)
    assert y.tolist() == [r[0] for r in rounds] and y_prob.tolist() == [r[1] for r in rounds]


def test_a_bernoulli_outcome_and_a_realized_forecast_are_the_protocols():
    u = np.random.default_rng(0).random(1000)
    assert bernoulli_outcome(u, 0.3).tolist() == [bernoulli_outcome(float(v), 0.3) for v in u]
    rng = np.random.default_rng(0)
    assert [Bernoulli(0.3).sample(rng) for _ in u] == bernoulli_outcome(u, 0.3).tolist()
    f = Forecast.two_point(0.2, 0.4, 0.75)
    assert [realize(f, float(v)) for v in u] == [f.sample(float(v)) for v in u]
    assert {realize(f, float(v)) for v in u} == {0.2, 0.4}


class _Blames(Nature):
    """A nature whose error message starts with the word "forecaster": the forfeit is still nature's."""

    name = "blames"
    games = ("binary",)

    def respond(self, t, x, forecast):
        if t == 3:
            raise ProtocolError("forecaster p=0.5 made this nature give up")
        return Bernoulli(0.5)


class _Bad(Forecaster):
    name = "bad"
    games = ("binary",)
    can_play_oblivious = False

    def reset(self, rng):
        pass

    def predict(self, x):
        return 1.5

    def update(self, x, p, y):
        pass


def test_a_forfeit_names_the_plugin_whose_call_failed():
    r = play("binary", "running_mean", _Blames(), T=10, seed=0)
    assert (r.forfeit.who, r.forfeit.step) == ("nature", 3)
    assert r.forfeit.reason == "ProtocolError: forecaster p=0.5 made this nature give up"
    r = play("binary", _Bad(), "iid_bernoulli", T=10, seed=0)
    assert (r.forfeit.who, r.forfeit.step, r.recorder.n) == ("forecaster", 1, 0)
    assert "forecaster forecast 1.5 is outside the forecast space" in r.forfeit.reason


def test_a_tournaments_row_is_the_results_row_with_its_provenance():
    r = play("binary", "running_mean", "logistic", T=20, seed=7)
    plain = result_row(r)
    assert plain == r.row() | {"peak_rss_mb": plain["peak_rss_mb"]}
    row = result_row(r, Provenance("rm", "lg", "mid", {"T": 20}, ""))
    assert (row["forecaster"], row["nature"], row["forecaster_plugin"], row["nature_plugin"]) == (
        "rm",
        "lg",
        "running_mean",
        "logistic",
    )
    assert row["matchup_id"] == "mid" and json.loads(row["config"]) == {"T": 20} and row["plugin_code"] == ""
    assert {k: v for k, v in row.items() if k in plain and k not in ("forecaster", "nature", "peak_rss_mb")} == {
        k: v for k, v in plain.items() if k not in ("forecaster", "nature", "peak_rss_mb")
    }


def test_a_crash_is_read_from_who_forfeited_not_from_the_words_of_its_reason(tmp_path):
    r = play("binary", "running_mean", "iid_bernoulli", T=5, seed=0)
    for mid, forfeit in (
        ("binary__a__n__s0__T5__0000000000", Forfeit(CRASH, 0, "killed by signal 9")),
        ("binary__b__n__s0__T5__0000000000", Forfeit("nature", 0, "it ended its process")),
    ):
        r.forfeit = forfeit
        name = mid.split("__")[1]
        row = result_row(r, Provenance(name, "n", mid, {}, ""))
        save_matchup(tmp_path, row, r.curves_columns(), None)
    assert crashed(tmp_path, "binary__a__n__s0__T5__0000000000")
    assert not crashed(tmp_path, "binary__b__n__s0__T5__0000000000")
