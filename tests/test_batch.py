"""Online-to-batch conversion (§11): the prefix forecasters, the exact test risk of A_S, the sweep.

References
----------
Perdomo & Recht, §11 and the proof of its Proposition; errata: docs/ERRATA.md.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from arena.batch import (
    Sample,
    comparator_risks,
    draw,
    expected_losses,
    high_probability_bound,
    interval,
    main,
    prefix_risks,
    summarize,
    sweep,
)
from arena.games import get_game
from arena.games.experts import ExpertsGame, squared_loss
from arena.registry import make_nature
from arena.seeding import derive_rng
from forecasters.experts import FollowTheLeader, LinfDF

COIN_PANEL = {
    "name": "expert_constants",
    "params": {"N": 9, "outcomes": {"name": "iid_bernoulli", "params": {"p": 0.3}}},
}


def _data(nature="expert_logistic", n=60, m=40, seed=0, game=None):
    game = game or ExpertsGame()
    nat = make_nature(nature)
    nat.game = game
    nat.reset(derive_rng(seed, "nature", nat.name))
    test, nxt = draw(nat, game, m, seed)
    train, _ = draw(nat, game, n, seed, start=nxt)
    return game, train, test


def test_prefix_forecaster_i_has_seen_exactly_the_first_i_minus_1_examples():
    game, train, test = _data()
    risks = prefix_risks(FollowTheLeader(), game, train, test, seed=0)
    # FTL's f_i predicts with the leader over examples 1..i-1 (expert 0 before any example)
    losses = squared_loss(train.X, train.y[:, None])
    for i in range(len(train)):
        leader = int(np.argmin(losses[:i].sum(axis=0))) if i else 0
        direct = float(np.mean(expected_losses(squared_loss, test.X[:, leader], test)))
        assert risks[i] == pytest.approx(direct, abs=1e-15)


class _NoBatch(LinfDF):
    """ℓ∞ DF without predict_many: evaluated through copies, one test point at a time."""

    name = "linf_df"
    predict_many = None


def test_evaluation_never_changes_the_online_run_and_both_paths_agree():
    game, train, test = _data()
    fast = prefix_risks(LinfDF(), game, train, test, seed=0)
    slow = prefix_risks(_NoBatch(), game, train, test, seed=0)
    assert np.max(np.abs(fast - slow)) < 1e-9  # closed-form roots = the search's, within its tolerance
    plain = LinfDF()  # the online forecasts are those of a run without any evaluation
    plain.game = game
    plain.reset(None)
    evaluated = LinfDF()
    prefix_risks(evaluated, game, train, test, seed=0)
    for x, y in zip(train.X, train.y, strict=False):
        p = plain.predict(x)
        plain.update(x, p, y)
    assert np.array_equal(plain._L, evaluated._L)


def test_batch_risk_is_the_average_of_the_prefix_risks():
    table = sweep(["linf_df"], "expert_logistic", {"name": "experts"}, ns=(7, 25), test_size=30, seeds=(3,))
    game, train, test = _data(n=25, m=30, seed=3)
    risks = prefix_risks(LinfDF(), game, train, test, seed=3)
    for n in (7, 25):
        row = table.loc[table["n"] == n].iloc[0]
        assert row["risk"] == pytest.approx(np.mean(risks[:n]), abs=1e-12)
        assert row["excess_risk"] == pytest.approx(row["risk"] - row["risk_best_expert"], abs=1e-12)


def test_expected_test_loss_uses_the_law_when_nature_exposes_it():
    test = Sample(np.zeros((2, 0)), np.array([1.0, 0.0]), np.array([0.3, np.nan]))
    assert expected_losses(squared_loss, np.array([0.5, 0.5]), test).tolist() == pytest.approx([0.25, 0.25])
    assert expected_losses(squared_loss, np.array([0.3, 0.3]), test).tolist() == pytest.approx([0.21, 0.09])


def test_linf_df_excess_risk_is_within_log_n_over_lambda_n_on_average():
    """Best expert = the Bayes forecast 0.3: the excess is mean_i (p_i - 0.3)^2 >= 0, <= log N/(2n) in expectation."""
    table = sweep(
        ["linf_df", "uniform_average"],
        COIN_PANEL,
        {"name": "experts"},
        ns=(10, 100, 1000),
        test_size=10,
        seeds=range(6),
    )
    ours = table.loc[table["forecaster"] == "linf_df"].groupby("n")
    df = ours[["excess_risk", "bound"]].mean()
    se = ours["excess_risk"].std() / math.sqrt(ours.size().iloc[0])
    assert (table["excess_risk"] >= -1e-12).all()
    # an expectation bound, checked on a 6-seed average: allow two standard errors
    assert (df["excess_risk"] <= df["bound"] + 2 * se).all()
    assert df["bound"].tolist() == pytest.approx([math.log(9) / (2 * n) for n in (10, 100, 1000)])
    assert df["excess_risk"].is_monotonic_decreasing
    uniform = table.loc[table["forecaster"] == "uniform_average", "excess_risk"]
    assert np.allclose(uniform, (0.5 - 0.3) ** 2)


def test_the_high_probability_bound_beside_the_expectation_bound():
    """§11 Prop.: w.p. 1 - delta, excess <= R(n)/n + 2B sqrt((log(2/delta) + log|Omega|)/n), B = 1 (squared loss)."""
    table = sweep(["linf_df"], COIN_PANEL, {"name": "experts"}, ns=(10, 100), test_size=10, seeds=range(8), delta=0.1)
    N = 9
    for n, part in table.groupby("n"):
        expected = math.log(N) / (2 * n)
        assert part["bound"].tolist() == pytest.approx([expected] * 8)
        assert part["bound_hp"].tolist() == pytest.approx(
            [expected + 2 * math.sqrt((math.log(20) + math.log(N)) / n)] * 8
        )
        assert (part["excess_risk"] <= part["bound_hp"]).all()  # at most delta of the seeds may exceed it
    s = summarize(table)
    assert s["seeds"].tolist() == [8, 8] and (s["excess_low"] <= s["excess_risk"]).all()
    assert (s["excess_risk"] <= s["excess_high"]).all() and s["within_hp"].tolist() == [1.0, 1.0]
    log = sweep(["linf_df"], COIN_PANEL, {"name": "experts", "loss": "log"}, ns=(10,), test_size=10, seeds=(0,))
    assert log["bound_hp"].isna().all()  # the log loss is unbounded: no B


def test_interval_is_the_student_t_interval():
    from scipy import stats

    v = [0.1, 0.4, 0.2, 0.3]
    m, lo, hi = interval(v)
    ref = stats.t.interval(0.95, 3, loc=np.mean(v), scale=stats.sem(v))
    assert m == pytest.approx(0.25) and (lo, hi) == pytest.approx(ref)
    assert high_probability_bound(0.0, 1, 4, 2 / math.e, B=0.5) == pytest.approx(0.5)


def test_binary_forecasters_against_the_best_linear_predictor():
    table = sweep(
        ["running_mean", "ogd"], "logistic", "binary", ns=(5, 20), test_size=40, seeds=(0,), comparator="best_linear"
    )
    assert set(table["comparator"]) == {"best_linear"} and table["bound"].isna().all()
    assert {"risk_best_linear", "risk_best_constant"} <= set(table.columns)
    assert np.all(np.isfinite(table["excess_risk"]))


def test_comparators():
    game, _, test = _data(game=get_game("experts", loss="log"))
    comps = comparator_risks(game, test)
    assert set(comps) == {"best_constant", "best_expert"}  # no linear class under the log loss


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        (
            {"nature": "expert_constants", "game": {"name": "experts"}, "comparator": "best_guess"},
            r"comparator='best_guess'",
        ),
        (
            {
                "nature": {"name": "expert_constants", "params": {"outcomes": "anti_forecaster"}},
                "game": {"name": "experts"},
            },
            r"is adaptive; the batch setting needs i.i.d",
        ),
        ({"nature": "expert_second_guessing", "game": {"name": "experts"}}, r"second-guessing experts"),
        (
            {"nature": "iid_bernoulli", "game": "binary", "comparator": "best_expert"},
            r"comparator 'best_expert' does not",
        ),
        ({"nature": "iid_bernoulli", "game": "binary", "ns": (0,)}, r"training sizes >= 1"),
        # issue 12: the quantile game used to be accepted and scored by the squared loss on P(y = 1) = 1 - F(0)
        ({"nature": "iid_normal", "game": "quantile"}, r"^online-to-batch: the 'quantile' game is not supported"),
        ({"nature": "iid_bernoulli", "game": "binary", "delta": 1.5}, r"delta=1\.5 must be in \(0, 1\)"),
    ],
)
def test_bad_batch_configs_get_one_clear_error(kw, match):
    kw = {
        "forecasters": ["running_mean" if kw.get("game") == "binary" else "linf_df"],
        "ns": (5,),
        "test_size": 5,
        "seeds": (0,),
        **kw,
    }
    with pytest.raises(ValueError, match=match):
        sweep(**kw)


def test_command_line_writes_the_table_and_the_figure(tmp_path, capsys):
    out = tmp_path / "b"
    main(["experts", f"out={out}", "ns=[5,10]", "seeds=[0]", "test_size=20", "forecasters=[linf_df,ftl]"])
    table = pd.read_parquet(out / "batch.parquet")
    assert len(table) == 4 and (out / "batch.csv").is_file()
    assert (out / "figures" / "excess_risk_vs_n.png").stat().st_size > 0
    assert "linf_df" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:
        main(["experts", f"out={out}", "horizon=3"])
    assert exc.value.code == 2
    assert "unknown keys ['horizon']" in capsys.readouterr().err
