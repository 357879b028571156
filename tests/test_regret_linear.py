"""regret_linear only where it means something: against the best <w, (1, x)> by default; not applicable (NaN, the
certificate n/a, no curve, no figure, no leaderboard, no minimax row) with no context and no intercept."""

from __future__ import annotations

import math

import pytest

import arena
from arena import summarize
from arena.aggregate import write_tables
from arena.referee import Referee
from arena.results import matchup_id, reliability_table
from arena.store import save_matchup


def test_default_compares_with_the_best_constant_where_there_is_no_context():
    r = arena.play("binary", "k29", "iid_bernoulli", T=200, seed=0)
    # with an intercept and no context the comparators are the constants in [-M, M]: the best constant of [0, 1]
    assert r.summary["regret_linear"] == pytest.approx(r.summary["regret_constant"], abs=1e-9)
    assert r.summary["regret_linear"] > 0  # not the regret to the zero forecast (-9.86 there)


def test_no_context_and_no_intercept_is_not_applicable():
    r = arena.play("binary", "linear_df", "iid_bernoulli", T=100, seed=0, referee=Referee(intercept=False))
    assert math.isnan(r.summary["regret_linear"])
    assert "regret_linear" not in set(r.curves["metric"]) and "regret_linear_bound" not in set(r.curves["metric"])
    cert = r.certificates["linear_regret"]
    assert cert.verdict == "n/a" and "no context and no intercept" in cert.note
    # a context: applicable without an intercept
    r = arena.play("binary", "linear_df", "logistic", T=100, seed=0, referee=Referee(intercept=False))
    assert math.isfinite(r.summary["regret_linear"]) and r.certificates["linear_regret"].verdict == "holds"


def test_a_metric_not_applicable_anywhere_has_no_figure_leaderboard_or_minimax_row(tmp_path):
    referee = Referee(intercept=False)
    for fc in ("k29", "running_mean"):
        for nat in ("iid_bernoulli", "sinusoid"):
            r = arena.play("binary", fc, nat, T=60, seed=0, referee=referee)
            row = r.row()
            row["matchup_id"] = matchup_id("binary", fc, nat, 0, 60, {})
            save_matchup(tmp_path, row, r.curves, reliability_table(r.recorder.p, r.recorder.y))
    write_tables(tmp_path)
    paths = summarize.report(tmp_path, formats=("png",), quiet=True)
    assert paths and not [p for p in paths if "regret_linear" in p.name]
    import pandas as pd

    for name in ("minimax", "leaderboard"):
        assert "regret_linear" not in set(pd.read_csv(tmp_path / f"{name}.csv")["metric"]), name
    assert "regret_linear" not in (tmp_path / "summary.md").read_text()
    assert "regret_linear" not in (tmp_path / "index.html").read_text()
