"""Verdicts: seed-invariant matchups, anytime-valid comparisons, worst case and minimax rankings.

The confidence sequence and the e-process are checked against a direct, loop-by-loop computation
of the published formulas and by simulation (type-I error over the whole horizon under the null);
the minimax solver against games solved in closed form.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from arena.aggregate import leaderboard, paired, seed_stats
from arena.cli import compare_main as main
from arena.compare import compare, pair_scores, per_round, sequential_comparison
from arena.minimax import minimax_table, solve_zero_sum
from arena.plots import latex_table, markdown_summary
from arena.sequential import confidence_sequence, e_process, stitching_boundary, verdict

ALPHA = 0.05
REPS, HORIZON = 500, 1000
#: Monte-Carlo allowance: three standard errors of a rate alpha estimated from REPS replications.
MC = 3 * math.sqrt(ALPHA * (1 - ALPHA) / REPS)


# ------------------------------------------------------------------------ the formulas, by hand
#: zeta(1.4) summed directly, with the Euler-Maclaurin tail of the terms from N on.
_N = 10_000
_ZETA_14 = sum(k**-1.4 for k in range(1, _N)) + _N**-0.4 / 0.4 + _N**-1.4 / 2


def _boundary_by_hand(v: float, alpha: float, c: float) -> float:
    """Howard et al. (2021), eq. (10): the polynomial stitching boundary, s = 1.4, eta = 2, m = 10."""
    s, eta, m = 1.4, 2.0, 10.0
    zeta = _ZETA_14
    v = max(v, m)
    ell = s * math.log(math.log(eta * v / m)) + math.log(zeta / (alpha * math.log(eta) ** s))
    return (eta**0.25 + eta**-0.25) / math.sqrt(2) * math.sqrt(v * ell) + c * (math.sqrt(eta) + 1) / 2 * ell


def test_confidence_sequence_and_e_process_match_a_direct_computation():
    rng = np.random.default_rng(1)
    x = rng.uniform(-0.7, 0.9, 300)
    lo, hi = -1.0, 1.0
    cs, e = confidence_sequence(x, lo, hi, ALPHA), e_process(x, lo, hi)
    total = v = 0.0
    for t in range(1, len(x) + 1):
        centre = total / (t - 1) if t > 1 else 0.0  # the mean of the past, the midpoint before any
        v += (x[t - 1] - centre) ** 2
        total += x[t - 1]
        radius = _boundary_by_hand(v, ALPHA / 2, hi - lo) / t
        assert cs["mean"][t - 1] == pytest.approx(total / t, rel=1e-12)
        assert cs["low"][t - 1] == pytest.approx(max(total / t - radius, lo), rel=1e-6)
        assert cs["high"][t - 1] == pytest.approx(min(total / t + radius, hi), rel=1e-6)
        c = hi - lo
        mix = np.mean(
            [
                math.exp(lam * total - (-math.log(1 - c * lam) - c * lam) / c**2 * v)
                for lam in (2.0**-j / c for j in range(1, 21))
            ]
        )
        assert e[t - 1] == pytest.approx(mix, rel=1e-9)
    assert stitching_boundary(5.0, 0.1, 2.0) == pytest.approx(_boundary_by_hand(5.0, 0.1, 2.0), rel=1e-6)


def test_confidence_sequence_covers_the_running_mean_at_every_round_under_drifting_means():
    """500 sequences of +-1 outcomes whose conditional means drift (an adaptive-looking null):
    the chance that the sequence ever misses the running mean of the means is at most alpha."""
    rng = np.random.default_rng(7)
    t = np.arange(1, HORIZON + 1)
    mu = 0.4 * np.sin(t / 60.0)  # E[x_t]
    x = np.where(rng.random((REPS, HORIZON)) < (1 + mu) / 2, 1.0, -1.0)
    target = np.cumsum(mu) / t
    cs = confidence_sequence(x, -1.0, 1.0, ALPHA)
    missed = ((cs["low"] > target) | (cs["high"] < target)).any(axis=1).mean()
    assert missed <= ALPHA + MC
    # the check can fail: the fixed-time 95% interval, read at every round, misses far more often than alpha
    sd = np.sqrt(np.cumsum((x - cs["mean"]) ** 2, axis=1) / t)  # rough, but wide enough to be fair
    naive = np.abs(cs["mean"] - target) > 1.96 * sd / np.sqrt(t)
    assert naive[:, 9:].any(axis=1).mean() > 2 * ALPHA


@pytest.mark.parametrize("null", ["zero", "weak"])
def test_e_process_type_one_error_over_the_whole_horizon(null):
    """Under the null the e-process reaches 1/alpha at some round in at most alpha of the runs;
    "weak": the conditional means alternate +0.2, -0.2 (so their running mean is never above 0)."""
    rng = np.random.default_rng(11)
    if null == "zero":
        x = rng.uniform(-1, 1, (REPS, HORIZON))
    else:
        mu = np.where(np.arange(HORIZON) % 2 == 0, -0.2, 0.2)
        x = mu + rng.uniform(-0.8, 0.8, (REPS, HORIZON))
    e = e_process(x, -1.0, 1.0)
    assert (e >= 1 / ALPHA).any(axis=1).mean() <= ALPHA + MC
    # and it has power: a mean of +0.1 is found in most runs
    found = (e_process(np.clip(x + 0.1, -1, 1), -1.0, 1.0) >= 1 / ALPHA).any(axis=1).mean()
    assert found > 0.5


def test_bounds_are_checked():
    with pytest.raises(ValueError, match=r"value 2.0 at position 1 is outside the declared bounds \[0, 1\]"):
        confidence_sequence([0.5, 2.0], 0, 1)
    with pytest.raises(ValueError, match="alpha=1.5"):
        confidence_sequence([0.5], 0, 1, alpha=1.5)


def test_pair_scores_of_each_game():
    p_a, p_b, y = np.array([0.2, 1.0]), np.array([0.5, 0.5]), np.array([0.0, 1.0])
    brier = pair_scores(p_a, p_b, y, y, "brier")
    assert brier["values"].tolist() == pytest.approx([0.04 - 0.25, 0.0 - 0.25])
    log = pair_scores(p_a, p_b, y, y, "log_loss")
    assert log["values"][0] == pytest.approx(-math.log(0.8) + math.log(0.5))
    assert log["hi"] == pytest.approx(-math.log(1e-6))
    game = {"name": "quantile", "q": 0.9, "ymin": -5.0, "ymax": 5.0}
    pin = pair_scores(np.array([1.0]), np.array([0.0]), np.array([2.0]), np.array([2.0]), "pinball", game)
    assert pin["values"][0] == pytest.approx(0.9 * 1 - 0.9 * 2) and pin["hi"] == pytest.approx(9.0)
    with pytest.raises(ValueError, match="'brier' is not a score of the quantile game"):
        pair_scores(p_a, p_b, y, y, "brier", game)
    cal = sequential_comparison(pair_scores(p_a, p_b, y, y, "calibration"))
    assert cal["mean"].iloc[-1] == pytest.approx(abs(0.5 * (-0.2 + 0.0)) - abs(0.5 * (-0.5 + 0.5)))
    assert cal["e_a_better"].isna().all() and (cal["low"] <= cal["mean"]).all() and (cal["mean"] <= cal["high"]).all()


# -------------------------------------------------------------------------------------- minimax
def test_minimax_of_games_solved_in_closed_form():
    x, y, v = solve_zero_sum(np.array([[1.0, -1.0], [-1.0, 1.0]]))  # matching pennies
    assert x == pytest.approx([0.5, 0.5]) and y == pytest.approx([0.5, 0.5]) and v == pytest.approx(0.0, abs=1e-12)
    # a 2x2 game without a saddle point: x1 = (d - c)/D, y1 = (d - b)/D, value (ad - bc)/D, D = a - b - c + d
    a, b, c, d = 4.0, 1.0, 2.0, 3.0
    D = a - b - c + d
    x, y, v = solve_zero_sum(np.array([[a, b], [c, d]]))
    assert x == pytest.approx([(d - c) / D, 1 - (d - c) / D]) and y == pytest.approx([(d - b) / D, 1 - (d - b) / D])
    assert v == pytest.approx((a * d - b * c) / D)
    x, y, v = solve_zero_sum(np.array([[1.0, 3.0], [2.0, 4.0]]))  # a saddle point
    assert x == pytest.approx([1, 0]) and y == pytest.approx([0, 1]) and v == pytest.approx(3.0)
    rps = np.array([[0.0, 1, -1], [-1, 0, 1], [1, -1, 0]])  # rock-paper-scissors, plus a dominated row
    x, y, v = solve_zero_sum(np.vstack([rps, rps[0] + 1]))
    assert x == pytest.approx([1 / 3, 1 / 3, 1 / 3, 0], abs=1e-9) and y == pytest.approx([1 / 3] * 3)
    with pytest.raises(ValueError, match="finite values"):
        solve_zero_sum(np.array([[1.0, np.inf]]))


def _summary(values: dict[tuple[str, str], list[float]], metric: str = "loss") -> pd.DataFrame:
    rows = [
        {"game": "g", "forecaster": f, "nature": n, "T": 10, "seed": s, "status": "ok", metric: v}
        for (f, n), vs in values.items()
        for s, v in enumerate(vs)
    ]
    return pd.DataFrame(rows)


def test_minimax_table_and_worst_case_from_a_summary(monkeypatch):
    # forecasters x natures: matching pennies shifted by 1, plus one forecaster that is never better
    s = _summary(
        {
            ("a", "n1"): [2.0, 2.0],
            ("a", "n2"): [0.0, 0.0],
            ("b", "n1"): [0.0, 0.0],
            ("b", "n2"): [2.0, 2.0],
            ("c", "n1"): [2.5, 2.5],
            ("c", "n2"): [2.5, 2.5],
            ("d", "n1"): [1.0, np.nan],
        }
    )
    st = seed_stats(s, ["loss"])
    mix = minimax_table(st, ["loss"], {"loss": "min"}).set_index(["side", "name"])
    assert mix.loc[("forecaster", "a"), "weight"] == pytest.approx(0.5)
    assert mix.loc[("forecaster", "c"), "weight"] == pytest.approx(0.0, abs=1e-9)
    assert np.isnan(mix.loc[("forecaster", "d"), "weight"]) and "left out" in mix.loc[("forecaster", "d"), "note"]
    assert mix.loc[("nature", "n2"), "weight"] == pytest.approx(0.5) and (mix["value"].dropna() == 1.0).all()
    board = leaderboard(s, ["loss"]).set_index("forecaster")
    assert board.loc["a", "worst"] == 2.0 and board.loc["a", "worst_nature"] == "n1"
    assert board.loc["c", "worst"] == 2.5 and board.loc["c", "worst_rank"] == 4  # a, b share rank 2; d has n1 only
    # higher is better: the payoff is negated, the value comes back in the metric's units
    neg = minimax_table(seed_stats(s.assign(loss=-s["loss"]), ["loss"]), ["loss"], {"loss": "max"})
    assert neg.loc[neg["name"] == "a", "weight"].iloc[0] == pytest.approx(0.5)
    assert neg["value"].dropna().iloc[0] == pytest.approx(-1.0)


# --------------------------------------------------------------------------- seed-invariant matchups
def test_seed_invariant_matchups_have_no_interval_anywhere():
    s = _summary(
        {
            ("det", "adaptive"): [0.3, 0.3, 0.3],
            ("det", "iid"): [0.2, 0.25, 0.3],
            ("other", "adaptive"): [0.5, 0.5, 0.5],
            ("other", "iid"): [0.1, 0.3, 0.2],
        }
    )
    st = seed_stats(s, ["loss"]).set_index(["forecaster", "nature"])
    row = st.loc[("det", "adaptive")]
    assert row["n"] == 3 and row["n_effective"] == 1 and row["seed_invariant"] and np.isnan(row["half"])
    assert st.loc[("det", "iid"), "n_effective"] == 3 and st.loc[("det", "iid"), "half"] > 0
    p = paired(s, "loss").set_index("nature")
    exact = p.loc["adaptive"]
    assert exact["exact"] and exact["n_effective"] == 1 and exact["mean_diff"] == pytest.approx(-0.2)
    assert np.isnan(exact["ci_low"]) and exact["significant"]
    assert not p.loc["iid", "exact"]
    # a metric that merely repeats while another varies: no interval, but neither exact nor significant
    s2 = s.assign(other=np.arange(len(s), dtype=float))
    row = seed_stats(s2, ["loss"]).set_index(["forecaster", "nature"]).loc[("det", "adaptive")]
    assert row["n_effective"] == 1 and np.isnan(row["half"]) and not row["seed_invariant"]
    row = paired(s2, "loss").set_index("nature").loc["adaptive"]
    assert not row["exact"] and not row["significant"] and np.isnan(row["half"])
    # a forecaster whose every nature is seed-invariant: an exact mean over natures, no interval
    only = s.loc[s["nature"] == "adaptive"]
    board = leaderboard(only, ["loss"])
    assert board["exact"].all() and board["half"].isna().all()
    md = markdown_summary(only, leaderboard_metrics=("loss",))
    assert "0.3 (exact)" in md and "Seed-invariant (exact) matchups: 2 of 2" in md
    assert "det | adaptive (exact)" not in md  # the pair is listed under the better one's natures
    assert "natures where det is better" in md and "adaptive (exact)" in md
    assert "$\\pm$" not in latex_table(only, ["loss"])


# --------------------------------------------------------------------------- stored results
@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    """k29 and running_mean against an oblivious and an adaptive nature, 2 seeds, T = 150, stored as
    a tournament stores them (config column); traces kept for seed 0 only."""
    from omegaconf import OmegaConf, open_dict

    from arena.config import compose, hydra_session
    from arena.jobs import run_matchup
    from arena.stream import collect

    out = tmp_path_factory.mktemp("verdicts")
    with hydra_session():
        for fc in ("k29", "running_mean"):
            for nat in ("iid_bernoulli", "anti_forecaster"):
                for seed in (0, 1):
                    cfg = compose(
                        [
                            f"forecaster={fc}",
                            f"nature={nat}",
                            "T=150",
                            f"seed={seed}",
                            f"keep_trace={'true' if seed == 0 else 'false'}",
                        ]
                    )
                    with open_dict(cfg):
                        cfg.forecaster_label, cfg.nature_label = fc, nat
                        del cfg["hydra"]
                    run_matchup(OmegaConf.create(OmegaConf.to_container(cfg)), out)
    summary = collect(out)["summary"]
    summary.to_parquet(out / "summary.parquet")
    return out, summary


def test_replay_gives_the_stored_trace(stored):
    out, summary = stored
    row = summary.loc[
        (summary["forecaster"] == "k29") & (summary["nature"] == "iid_bernoulli") & (summary["seed"] == 0)
    ].iloc[0]
    p, y, source = per_round(out, row)
    assert source == "trace"
    trace = out / "traces" / f"{row['matchup_id']}.parquet"
    trace.rename(trace.with_suffix(".bak"))
    try:
        p2, y2, source2 = per_round(out, row)  # the rounds stored with the result
        with pytest.MonkeyPatch.context() as mp:  # a result stored without them (T > ROUNDS_KEPT): replayed
            mp.setattr("arena.compare.stored_rounds", lambda *a: {})
            p3, y3, source3 = per_round(out, row)
    finally:
        trace.with_suffix(".bak").rename(trace)
    assert source2 == "stored" and np.array_equal(p, p2) and np.array_equal(y, y2)
    assert source3 == "replay" and np.array_equal(p, p3) and np.array_equal(y, y3)


def test_compare_of_stored_results(stored, tmp_path, capsys):
    out, summary = stored
    final, curves = compare(out, "k29", "running_mean")
    assert len(final) == 4 and set(final["source"]) == {"trace", "stored"}
    pairing = final.set_index(["nature", "seed"])["pairing"]
    assert pairing[("iid_bernoulli", 0)] == "common outcomes"
    assert pairing[("anti_forecaster", 1)] == "common random numbers"
    # the running mean difference at T is the difference of the referee's Brier scores
    for _, r in final.iterrows():
        brier = summary.set_index(["forecaster", "nature", "seed"])["brier"]
        want = brier[("k29", r["nature"], r["seed"])] - brier[("running_mean", r["nature"], r["seed"])]
        assert r["mean"] == pytest.approx(want, rel=1e-9, abs=1e-12)
        assert r["low"] <= r["mean"] <= r["high"] and r["e_a_better"] > 0
    assert set(curves["t"]) >= {150} and curves.groupby(["nature", "seed"]).size().min() > 5
    main([str(out), "k29", "running_mean", "--nature", "iid_bernoulli", "--out", str(tmp_path)])
    printed = capsys.readouterr().out
    assert "iid_bernoulli" in printed and "anti_forecaster" not in printed.split("\n", 2)[2]
    assert {p.name for p in Path(tmp_path).iterdir()} == {
        f"compare__k29__running_mean__brier{s}" for s in (".csv", "_curves.csv", ".pdf", ".png")
    }


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["k29", "running_man"],
            "forecaster 'running_man' is not in the results (they hold k29, running_mean). "
            "Did you mean 'running_mean'?",
        ),
        (["k29", "running_mean", "--metric", "pinball"], "'pinball' is not a score of the 'binary' game"),
        (["k29", "running_mean", "--T", "7"], "T=7 is not among the horizons [150]"),
        (["k29", "running_mean", "--alpha", "2"], "alpha=2.0"),
    ],
)
def test_compare_errors_are_one_line(stored, capsys, args, message):
    out, _ = stored
    with pytest.raises(SystemExit) as exc:
        main([str(out), *args])
    err = capsys.readouterr().err.strip()
    assert exc.value.code == 2 and len(err.splitlines()) == 1 and message in err, err


def test_top_pairs_replays_within_budget_and_says_why_not(stored, monkeypatch):
    import arena.compare as cmp

    out, summary = stored
    final, curves = cmp.top_pairs(out, summary)
    assert "error" not in final or final["error"].isna().all()
    assert set(final["nature"]) == {"iid_bernoulli", "anti_forecaster"} and set(final["seed"]) == {0}
    monkeypatch.setattr(cmp, "REPLAY_BUDGET", 0.0)  # seed 0 has traces: nothing to replay, still done
    assert not cmp.top_pairs(out, summary)[1].empty
    monkeypatch.setattr(cmp, "stored_rounds", lambda *a: {})  # results stored without their rounds
    slow = summary.assign(seed=summary["seed"].replace({0: 5, 1: 0}))  # now the first seed has no trace
    final, curves = cmp.top_pairs(out, slow.loc[slow["seed"] == 0].assign(seconds_forecaster=100.0))
    assert curves.empty and "replaying them would take about" in final["error"].iloc[0]
    md = markdown_summary(slow.loc[slow["seed"] == 0], comparisons=final)
    assert "not available (ValueError: no traces, and replaying them would take" in md


def test_no_band_where_every_seed_gives_the_same_curve():
    from arena.plots import regret_curves

    # five seeds: enough for a band (arena.plots.style.MIN_BAND_SEEDS), unless every seed agrees
    seeds = list(range(5))
    c = pd.DataFrame(
        {
            "forecaster": "f",
            "seed": seeds * 2,
            "t": [1] * 5 + [2] * 5,
            "metric": "bias",
            "value": [0.5] * 5 + [0.25] * 5,
        }
    )

    def bands(fig):
        return [col for col in fig.axes[0].collections if str(col.get_gid()).startswith("band:")]

    assert not bands(regret_curves(c, "bias"))
    assert bands(regret_curves(c.assign(value=[0.5, 0.4, 0.45, 0.42, 0.48, 0.25, 0.2, 0.22, 0.21, 0.24]), "bias"))


def test_certificate_verdict_counts():
    s = _summary({("f", "n1"): [1.0, 1.0, 1.0], ("g", "n1"): [2.0, 2.0, 2.0]})
    s["cert.smce.holds"] = [True, False, None, None, None, None]
    s["cert.smce.verdict"] = ["holds", "fails", "n/a", None, None, None]  # g does not claim it
    md = markdown_summary(s, leaderboard_metrics=("loss",))
    assert "1 hold, 1 fail, 1 not applicable." in md and "| f | smce | 1 | 1 | 1 | n1 |" in md
    assert "| g | smce |" not in md
    old = s.drop(columns="cert.smce.verdict").assign(**{"cert.smce.holds": [True, False, True, None, None, None]})
    md = markdown_summary(old, leaderboard_metrics=("loss",))
    assert "2 hold, 1 fail, 0 not applicable." in md and "| f | smce | 2 | 1 | n1 |" in md


def test_the_results_page_shows_the_top_comparison_with_its_caption(stored, tmp_path):
    """The top comparison's figure is on index.html with a one-line caption, like every other figure."""
    import shutil

    from arena.summarize import report

    out = tmp_path / "results"
    shutil.copytree(stored[0], out)
    paths = report(out, quiet=True)
    figures = [p for p in paths if p.name.startswith("compare__") and p.suffix == ".png"]
    assert len(figures) == 1
    page = (out / "index.html").read_text()
    caption = page.split(f'src="{figures[0].relative_to(out).as_posix()}"', 1)[1].split("</figure>", 1)[0]
    assert "<figcaption>Anytime-valid comparison of the two best forecasters, A and B, by mean Brier score" in caption


@pytest.mark.parametrize("processes", ["1", "2"])
def test_a_rerun_with_nothing_new_does_not_compare_the_top_pair_again(stored, tmp_path, monkeypatch, processes):
    """The top pair's comparison (its replays, table and figure) is kept while its inputs do not change: a
    rerun reads it back and gives the same pages; a changed summary compares again. In one process and with
    workers."""
    import shutil

    import arena.compare
    from arena.summarize import report

    monkeypatch.setenv("ARENA_PLOT_JOBS", processes)
    out = tmp_path / "results"
    shutil.copytree(stored[0], out)
    first = report(out, quiet=True)
    kept = [p for p in first if p.name.startswith("compare")]
    assert {p.suffix for p in kept} == {".parquet", ".png"} and (out / "compare_top.csv").is_file()
    times = {p: p.stat().st_mtime_ns for p in kept}
    pages = {name: (out / name).read_bytes() for name in ("summary.md", "index.html")}
    log = tmp_path / "compared"  # a worker compares in its own process: each call leaves a line here
    log.touch()
    real = arena.compare.top_pairs

    def counted(*a, **k):
        with log.open("a") as f:
            f.write("1")
        return real(*a, **k)

    def calls() -> int:
        return len(log.read_text())

    monkeypatch.setattr(arena.compare, "top_pairs", counted)
    again = report(out, quiet=True)
    assert calls() == 0 and again == first
    assert {p: p.stat().st_mtime_ns for p in kept} == times  # not one file written again
    assert {name: (out / name).read_bytes() for name in pages} == pages
    # its figure gone: drawn again from the comparison kept
    figure = next(p for p in kept if p.suffix == ".png")
    figure.unlink()
    assert report(out, quiet=True) == first and calls() == 0 and figure.is_file()
    # another summary: compared again
    from arena.stream import collect

    tables = collect(out)
    tables["summary"].loc[tables["summary"].index[0], "brier"] += 0.01
    report(out, tables=tables, quiet=True)
    assert calls() == 1


def test_a_comparison_not_wholly_had_or_altered_since_is_made_again(stored, tmp_path, monkeypatch):
    """The report keeps a comparison only when every pair was compared (a pair that failed, for any reason, is
    asked again next time), and reads it back only while its table is the one it wrote, with its CSV."""
    import shutil

    import arena.compare
    from arena.summarize import report

    monkeypatch.setenv("ARENA_PLOT_JOBS", "1")
    out = tmp_path / "results"
    shutil.copytree(stored[0], out)
    real, calls = arena.compare.top_pairs, []

    def one_pair_fails(*a, **k):  # a second pair that could not be compared (e.g. a trace unreadable this time)
        calls.append(1)
        final, curves = real(*a, **k)
        if len(calls) == 1:  # as top_pairs reports a pair it could not compare: a row with the reason
            final = final.assign(error=["OSError: a trace could not be read", *[np.nan] * (len(final) - 1)])
        return final, curves

    monkeypatch.setattr(arena.compare, "top_pairs", one_pair_fails)
    report(out, quiet=True)
    assert "not available (OSError: a trace could not be read)" in (out / "summary.md").read_text()
    report(out, quiet=True)  # asked again: the whole comparison this time, kept
    assert len(calls) == 2 and "could not be read" not in (out / "summary.md").read_text()
    report(out, quiet=True)
    assert len(calls) == 2
    table = out / "compare_top.parquet"
    pd.read_parquet(table).assign(verdict="A better").to_parquet(table)  # altered since: not read back
    report(out, quiet=True)
    assert len(calls) == 3
    (out / "compare_top.csv").unlink()  # its CSV gone: written again
    report(out, quiet=True)
    assert len(calls) == 4 and (out / "compare_top.csv").is_file()


SLOW_COMPARISON = """
import sys, time
from pathlib import Path
import arena.compare
from arena.cli import report_main

def slow(*a, **k):  # a comparison whose replays take a minute
    Path(sys.argv[2]).write_text("comparing")
    time.sleep(60)

arena.compare.top_pairs = slow
report_main([sys.argv[1]])
"""


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads a process's children from /proc (Linux)")
def test_ctrl_c_ends_a_comparison_at_once(stored, tmp_path):
    """Ctrl-C ends the report at once while it compares the top pair, not after its replays, and leaves no
    process behind."""
    import os
    import shutil
    import signal
    import subprocess
    import sys
    import time

    out, started = tmp_path / "results", tmp_path / "started"
    shutil.copytree(stored[0], out)
    proc = subprocess.Popen(
        [sys.executable, "-c", SLOW_COMPARISON, str(out), str(started)],
        start_new_session=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "ARENA_PLOT_JOBS": "2", "MPLBACKEND": "Agg"},
    )
    deadline = time.monotonic() + 60
    while not started.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert started.exists(), proc.communicate()[1][-2000:]
    t0 = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)  # as a terminal does: the whole foreground group
    _, err = proc.communicate(timeout=50)
    assert proc.returncode == 130 and time.monotonic() - t0 < 15, err[-2000:]
    assert err.strip().splitlines()[-1].startswith("interrupted:"), err[-2000:]
    assert not Path(f"/proc/{proc.pid}").exists() or proc.poll() is not None


# --------------------------------------------------------------- the verdict's level and its interval
def _verdicts(x: np.ndarray, alpha: float = ALPHA) -> list[tuple[str, float, int]]:
    """The verdict of each row of x (differences A - B in [-1, 1]) and the index of its decision round."""
    cs = confidence_sequence(x, -2.0, 2.0, alpha)
    ea, eb = e_process(-x, -2.0, 2.0), e_process(x, -2.0, 2.0)
    t = np.arange(1, x.shape[1] + 1)
    out = []
    for r in range(len(x)):
        seq = pd.DataFrame(
            {"t": t, "low": cs["low"][r], "high": cs["high"][r], "e_a_better": ea[r], "e_b_better": eb[r]}
        )
        said, at = verdict(seq, alpha)
        out.append((said, at, cs))
    return out


def test_each_direction_is_tested_at_half_alpha():
    """An e-value between 1/alpha and 2/alpha is no verdict: under an exact tie both one-sided nulls hold, and
    thresholds of 1/alpha on both would give a wrong verdict with chance up to 2 alpha."""
    seq = pd.DataFrame({"t": [1, 2], "low": -1.0, "high": -0.5, "e_a_better": [1.0, 1.5 / ALPHA], "e_b_better": 0.1})
    assert verdict(seq, ALPHA) == ("undecided", pytest.approx(math.nan, nan_ok=True))
    assert verdict(seq.assign(e_a_better=2 / ALPHA), ALPHA) == ("A better", 1.0)
    assert verdict(seq.assign(high=0.1, low=0.05, e_a_better=0.1, e_b_better=2 / ALPHA), ALPHA) == ("B better", 1.0)


def test_wrong_verdicts_under_an_exact_tie_stay_under_alpha():
    """400 ties of extreme variance (differences +-1, or rarely +-1 among zeros): no more than alpha wrong."""
    rng = np.random.default_rng(11)
    sign = np.where(rng.random((400, 2000)) < 0.5, 1.0, -1.0)
    sparse = sign * (rng.random((400, 2000)) < 0.05)
    for x in (sign, sparse):
        wrong = np.mean([said != "undecided" for said, _, _ in _verdicts(x)])
        assert wrong <= ALPHA + MC


def test_the_verdict_never_disagrees_with_the_confidence_sequence():
    """Extreme-variance differences (+-1) with small gaps either way: a verdict holds with the interval
    excluding 0 on its side from its round to the last (the interval printed beside it), and no verdict is
    withheld where the interval and the e-value both say so at the end."""
    rng = np.random.default_rng(5)
    seen = set()
    for gap in (-0.1, -0.03, 0.0, 0.03, 0.1):
        x = np.where(rng.random((200, 3000)) < 0.5 + gap / 2, 1.0, -1.0)  # mean difference gap
        ea, eb = e_process(-x, -2.0, 2.0), e_process(x, -2.0, 2.0)
        for r, (said, at, cs) in enumerate(_verdicts(x)):
            seen.add(said)
            low, high = cs["low"][r], cs["high"][r]
            if said == "A better":
                i = int(at) - 1
                assert (high[i:] < 0).all() and (ea[r, i:] >= 2 / ALPHA).all()
            elif said == "B better":
                i = int(at) - 1
                assert (low[i:] > 0).all() and (eb[r, i:] >= 2 / ALPHA).all()
            else:
                assert not (high[-1] < 0 and ea[r, -1] >= 2 / ALPHA)
                assert not (low[-1] > 0 and eb[r, -1] >= 2 / ALPHA)
    assert seen == {"A better", "B better", "undecided"}  # the check can fail


def test_the_report_writes_every_pair_and_the_tiers_beside_the_summary(stored, tmp_path, monkeypatch):
    """pairs.csv: both ordered pairs of k29 and running_mean on their 2 natures x 2 seeds (one replayed, one
    from traces), with e-values, claims and rounds; tiers.csv: one tier per forecaster. Kept while nothing changes."""
    import shutil

    import arena.pairs
    from arena.pairs import every_pair
    from arena.summarize import report

    monkeypatch.setenv("ARENA_PLOT_JOBS", "1")
    out = tmp_path / "results"
    shutil.copytree(stored[0], out)
    report(out, quiet=True)
    pairs, tiers = pd.read_csv(out / "pairs.csv"), pd.read_csv(out / "tiers.csv")
    assert {(r.forecaster_a, r.forecaster_b) for r in pairs.itertuples()} == {
        ("k29", "running_mean"),
        ("running_mean", "k29"),
    }
    assert set(pairs.columns) >= {"game", "T", "metric", "e_value", "e_bh", "e_bh_at", "e_bonferroni", "m"}
    assert set(pairs["T"]) == {150} and set(pairs["metric"]) == {"brier"} and set(pairs["m"]) == {2}
    assert list(tiers.columns[:5]) == ["game", "T", "metric", "forecaster", "tier"]
    assert sorted(tiers["forecaster"]) == ["k29", "running_mean"] and set(tiers["tier"]) <= {1, 2}
    ranks = pd.read_csv(out / "rankings.csv")  # and the rankings of every ranked metric
    assert {"brier", "log_loss"} <= set(ranks["metric"]) and {"nash_average", "alpha_rank"} <= set(ranks.columns)
    # the same as computed directly from the stored results
    direct, _ = every_pair(out, stored[1])
    assert np.allclose(pairs["e_value"], direct["e_value"])
    # kept: a report with nothing new does not compare again
    monkeypatch.setattr(arena.pairs, "every_pair", lambda *a, **k: pytest.fail("compared again"))
    report(out, quiet=True)
