"""Statistics across seeds: what arena.aggregate computes equals a direct loop with scipy."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import arena
from arena import aggregate
from arena.aggregate import leaderboard, metric_columns, paired, seed_stats, write_aggregates
from arena.minimax import minimax_table

FORECASTERS = ("a", "b", "c")
NATURES = ("n1", "n2")
SEEDS = (0, 1, 2, 3)


def _summary(seed: int = 0) -> pd.DataFrame:
    """A hand-made summary: 3 forecasters x 2 natures x 4 seeds at T = 50, with bookkeeping columns,
    a NaN metric value, two forfeits and a matchup (c vs n2) whose every seed forfeited."""
    rng = np.random.default_rng(seed)
    rows = []
    for fc, nat, s in itertools.product(FORECASTERS, NATURES, SEEDS):
        level = {"a": 0.2, "b": 0.25, "c": 0.3}[fc]
        rows.append(
            {
                "matchup_id": f"{fc}-{nat}-{s}",
                "game": "binary",
                "forecaster": fc,
                "nature": nat,
                "seed": s,
                "T": 50,
                "rounds": 50,
                "status": "ok",
                "forfeit_who": "",
                "forfeit_step": -1,
                "forfeit_reason": "",
                "adaptive": nat == "n2",
                "q": 0.9,
                "seed_nature": 1000 + s,
                "brier": level + 0.02 * rng.standard_normal(),
                "regret": 5 * level + rng.standard_normal(),
                "coverage": 0.9 + 0.01 * rng.standard_normal(),
                "cert.smce.value": 1.0,
                "cert.smce.bound": 2.0,
                "cert.smce.holds": True,
                "seconds_forecaster": rng.random(),
                "peak_rss_mb": 100.0,
                "config": "{}",
            }
        )
    s = pd.DataFrame(rows)
    s.loc[(s["forecaster"] == "a") & (s["nature"] == "n1") & (s["seed"] == 2), "brier"] = np.nan
    forfeit = (s["forecaster"] == "b") & (s["nature"] == "n1") & s["seed"].isin([1, 3])
    forfeit |= (s["forecaster"] == "c") & (s["nature"] == "n2")
    s.loc[forfeit, ["status", "forfeit_who", "forfeit_step", "forfeit_reason"]] = ["forfeit", "forecaster", 7, "bad"]
    s.loc[forfeit, "brier"] = 99.0  # a truncated game's value: never averaged
    return s


def _finite(s: pd.DataFrame, fc: str, nat: str, metric: str) -> np.ndarray:
    sel = s[(s["forecaster"] == fc) & (s["nature"] == nat) & (s["status"] == "ok")]
    v = sel[metric].to_numpy(float)
    return v[~np.isnan(v)]


def test_metric_columns_leave_out_bookkeeping_certificates_and_timing():
    s = _summary()
    assert metric_columns(s) == ["brier", "regret", "coverage"]
    assert metric_columns(s, ranked=True) == ["brier", "regret"]  # coverage is ranked through coverage_error
    assert aggregate.direction("coverage_error") == "min" and aggregate.direction("group_coverage.12") is None


def test_seed_stats_equal_a_loop_with_scipy():
    s = _summary()
    st = seed_stats(s)
    assert set(st["metric"]) == {"brier", "regret", "coverage"}
    assert {"seed", "peak_rss_mb", "seconds_forecaster", "cert.smce.value", "q", "T"}.isdisjoint(st["metric"])
    for fc, nat, metric in itertools.product(FORECASTERS, NATURES, ("brier", "regret", "coverage")):
        row = st[(st["forecaster"] == fc) & (st["nature"] == nat) & (st["metric"] == metric)]
        assert len(row) == 1, (fc, nat, metric)
        row = row.iloc[0]
        v = _finite(s, fc, nat, metric)
        n_forfeit = int(((s["forecaster"] == fc) & (s["nature"] == nat) & (s["status"] == "forfeit")).sum())
        assert (row["n"], row["n_forfeit"], row["game"], row["T"]) == (len(v), n_forfeit, "binary", 50)
        if len(v) == 0:  # every seed forfeited: the row stays, with no statistics
            assert np.isnan(row["mean"]) and np.isnan(row["ci_low"])
            continue
        assert row["mean"] == pytest.approx(v.mean(), rel=1e-12)
        lo, hi = stats.t.interval(0.95, len(v) - 1, loc=v.mean(), scale=stats.sem(v))
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((lo, hi), rel=1e-10)
        assert row["std"] == pytest.approx(v.std(ddof=1), rel=1e-12)
    # the NaN value and the forfeits are left out
    a_n1 = st[(st["forecaster"] == "a") & (st["nature"] == "n1") & (st["metric"] == "brier")].iloc[0]
    b_n1 = st[(st["forecaster"] == "b") & (st["nature"] == "n1") & (st["metric"] == "brier")].iloc[0]
    assert (a_n1["n"], a_n1["n_forfeit"], b_n1["n"], b_n1["n_forfeit"]) == (3, 0, 2, 2)
    assert b_n1["mean"] < 1  # not the forfeited 99


def test_seed_stats_with_one_seed_or_no_spread():
    s = _summary()
    one = seed_stats(s[s["seed"] == 0], ["regret"])
    assert (one.loc[one["n"] == 1, ["ci_low", "ci_high", "std"]].isna()).all().all()
    flat = seed_stats(s.assign(regret=1.5), ["regret"])
    ok = flat[flat["n"] >= 2]
    # identical values on every seed: no spread to measure, so no (zero-width) interval; the
    # matchups are not seed-invariant, since their Brier scores vary
    assert len(ok) and (ok["mean"] == 1.5).all() and (ok["n_effective"] == 1).all()
    assert ok[["half", "ci_low", "ci_high"]].isna().all().all() and not ok["seed_invariant"].any()
    # every metric identical on every seed: one game repeated, an exact mean
    same = seed_stats(s.assign(regret=1.5, brier=0.25, coverage=0.9), ["regret"])
    assert same.loc[same["n"] >= 2, "seed_invariant"].all() and not seed_stats(s, ["regret"])["seed_invariant"].any()


def _welch(s: pd.DataFrame, fc: str, metric: str) -> tuple[float, float, int]:
    """Mean over natures of the seed means and the half-width of its interval, by hand."""
    parts = [_finite(s, fc, nat, metric) for nat in NATURES]
    parts = [v for v in parts if len(v)]
    k = len(parts)
    mean = np.mean([v.mean() for v in parts])
    var = [v.var(ddof=1) / len(v) for v in parts]
    dof = sum(var) ** 2 / sum(w**2 / (len(v) - 1) for w, v in zip(var, parts, strict=False))
    return mean, stats.t.ppf(0.975, dof) * np.sqrt(sum(var)) / k, k


def test_leaderboard_means_ranks_and_intervals():
    s = _summary()
    board = leaderboard(s)
    assert set(board["metric"]) == {"brier", "regret"}  # coverage is not ranked
    for metric in ("brier", "regret"):
        part = board[board["metric"] == metric].set_index("forecaster")
        means = {}
        for fc in FORECASTERS:
            mean, half, k = _welch(s, fc, metric)
            means[fc] = mean
            assert part.loc[fc, "mean"] == pytest.approx(mean, rel=1e-12)
            assert part.loc[fc, "half"] == pytest.approx(half, rel=1e-9)
            assert part.loc[fc, "n_natures"] == k
        order = sorted(FORECASTERS, key=means.get)
        assert [int(part.loc[fc, "rank"]) for fc in order] == [1, 2, 3]
        assert list(board[board["metric"] == metric]["forecaster"]) == order  # sorted by rank
        # the mean rank over natures, by hand
        for fc in FORECASTERS:
            ranks = []
            for nat in NATURES:
                m = {f: _finite(s, f, nat, metric).mean() for f in FORECASTERS if len(_finite(s, f, nat, metric))}
                if fc in m:
                    ranks.append(1 + sum(v < m[fc] for v in m.values()))
            assert part.loc[fc, "mean_rank"] == pytest.approx(np.mean(ranks))


def test_leaderboard_with_one_nature_is_the_t_interval_of_the_seed_mean():
    s = _summary()
    s = s[(s["nature"] == "n2") & (s["forecaster"] != "c")]
    board = leaderboard(s, ["regret"]).set_index("forecaster")
    for fc in ("a", "b"):
        v = _finite(s, fc, "n2", "regret")
        lo, hi = stats.t.interval(0.95, len(v) - 1, loc=v.mean(), scale=stats.sem(v))
        assert (board.loc[fc, "ci_low"], board.loc[fc, "ci_high"]) == pytest.approx((lo, hi), rel=1e-9)


def test_leaderboard_direction_and_ties(monkeypatch):
    s = pd.DataFrame(
        {
            "game": "g",
            "forecaster": ["a", "b", "c", "d"],
            "nature": "n",
            "seed": 0,
            "T": 10,
            "loss": [0.3, 0.1, 0.1, 0.2],
            "score": [0.3, 0.1, 0.1, 0.2],
        }
    )
    monkeypatch.setitem(aggregate.DIRECTION, "score", "max")
    board = leaderboard(s)
    loss = board[board["metric"] == "loss"].set_index("forecaster")["rank"].to_dict()
    score = board[board["metric"] == "score"].set_index("forecaster")["rank"].to_dict()
    assert loss == {"b": 1, "c": 1, "d": 3, "a": 4}  # ties share the smallest rank
    assert score == {"a": 1, "d": 2, "b": 3, "c": 3}
    # an unranked metric asked for by name: means, no ranks
    monkeypatch.setitem(aggregate.DIRECTION, "score", None)
    board = leaderboard(s, ["score"])
    assert len(board) == 4 and board["rank"].isna().all() and board["mean_rank"].isna().all()
    assert board.set_index("forecaster")["mean"].to_dict() == {"a": 0.3, "b": 0.1, "c": 0.1, "d": 0.2}


def test_paired_equals_scipy_ttest_rel():
    s = _summary()
    for metric in ("brier", "regret"):
        p = paired(s, metric)
        assert set(zip(p["forecaster_a"], p["forecaster_b"], strict=False)) <= {("a", "b"), ("a", "c"), ("b", "c")}
        for nat, fa, fb in itertools.product(NATURES, FORECASTERS, FORECASTERS):
            if fa >= fb:
                continue
            ok = s[(s["nature"] == nat) & (s["status"] == "ok")]
            x = ok[ok["forecaster"] == fa].set_index("seed")[metric]
            y = ok[ok["forecaster"] == fb].set_index("seed")[metric]
            both = pd.concat([x, y], axis=1, keys=["x", "y"]).dropna()
            row = p[(p["nature"] == nat) & (p["forecaster_a"] == fa) & (p["forecaster_b"] == fb)]
            if len(both) == 0:  # c vs n2 forfeited every seed
                assert row.empty
                continue
            row = row.iloc[0]
            assert row["n"] == len(both) and row["metric"] == metric and row["T"] == 50
            assert row["adaptive"] == (nat == "n2")
            assert row["mean_diff"] == pytest.approx((both["x"] - both["y"]).mean(), rel=1e-12)
            if len(both) < 2:
                assert np.isnan(row["ci_low"]) and not row["significant"]
                continue
            test = stats.ttest_rel(both["x"], both["y"])
            ci = test.confidence_interval(0.95)
            assert (row["ci_low"], row["ci_high"]) == pytest.approx((ci.low, ci.high), rel=1e-9)
            assert row["significant"] == (test.pvalue < 0.05)
    # b vs n1 lost seeds 1 and 3, a vs n1 has a NaN brier at seed 2: one pair left
    one = paired(s, "brier")
    one = one[(one["nature"] == "n1") & (one["forecaster_a"] == "a") & (one["forecaster_b"] == "b")].iloc[0]
    assert one["n"] == 1


def test_write_aggregates_writes_parquet_and_csv(tmp_path):
    s = _summary()
    paths = write_aggregates(tmp_path, s)
    assert set(paths) == {"seed_stats", "leaderboard", "paired", "minimax"}
    expected = {
        "seed_stats": seed_stats(s),
        "leaderboard": leaderboard(s),
        "paired": pd.concat([paired(s, m) for m in ("brier", "regret")], ignore_index=True),
        "minimax": minimax_table(seed_stats(s), ["brier", "regret"], {"brier": "min", "regret": "min"}),
    }
    for name, path in paths.items():
        assert path == tmp_path / f"{name}.parquet"
        back = pd.read_parquet(path)
        pd.testing.assert_frame_equal(back, expected[name], check_dtype=False)
        csv = pd.read_csv(tmp_path / f"{name}.csv")
        assert len(csv) == len(expected[name]) and list(csv.columns) == list(expected[name].columns)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")], "temporary files left behind"


def test_write_aggregates_of_a_single_matchup_leaves_out_the_tables_across_matchups(tmp_path):
    """One forecaster against one nature (any seeds): no pair to compare, a one-by-one game. paired and minimax
    are not written, and stale ones of an earlier aggregation are removed; seed_stats and leaderboard are the
    same tables as for any summary."""
    s = _summary()
    one = s.loc[(s["forecaster"] == "a") & (s["nature"] == "n1")].reset_index(drop=True)
    assert aggregate.single_matchup(one) and aggregate.single_matchup(one.iloc[:1])
    assert not aggregate.single_matchup(s) and not aggregate.single_matchup(s.loc[s["forecaster"] == "a"])
    write_aggregates(tmp_path, s)  # an earlier aggregation of many matchups in the same directory
    assert (tmp_path / "paired.csv").is_file() and (tmp_path / "minimax.parquet").is_file()
    paths = write_aggregates(tmp_path, one)
    assert set(paths) == {"seed_stats", "leaderboard"}
    assert not [p.name for p in tmp_path.iterdir() if p.stem in aggregate.ACROSS]
    pd.testing.assert_frame_equal(pd.read_parquet(paths["seed_stats"]), seed_stats(one), check_dtype=False)
    pd.testing.assert_frame_equal(pd.read_parquet(paths["leaderboard"]), leaderboard(one), check_dtype=False)
    # what the left-out tables would hold: no pair, and a game whose value is the seed mean
    assert paired(one, "brier").empty
    mix = minimax_table(seed_stats(one), ["brier"], {"brier": "min"})
    assert mix["weight"].tolist() == [1.0, 1.0]
    assert mix["value"].iloc[0] == pytest.approx(one["brier"].mean(), rel=1e-12)


def test_paired_of_every_metric_at_once_equals_one_metric_at_a_time():
    """write_aggregates pairs the seeds of all metrics in one merge: the same rows as metric by metric."""
    s = _summary(3)
    each = pd.concat([paired(s, m) for m in ("regret", "brier")], ignore_index=True)
    pd.testing.assert_frame_equal(aggregate._paired(s, ["regret", "brier"]), each, check_exact=True)


def test_the_tables_read_from_parquet_by_blocks_and_cells_equal_those_of_the_frame_at_once(tmp_path, monkeypatch):
    """write_aggregates of a summary's Parquet file reads it a few columns at a time: the keys, then blocks of
    metrics; the seeds' pairs are merged a few (game, nature, T) at a time. With a block of one metric and a
    cell at a time, the tables are those of the frame at once, row for row: bit for bit but for the paired
    differences' means and deviations, summed in another order within a pair (to 1e-12)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    s = pd.concat([_summary(4), _summary(5).assign(nature=lambda d: d["nature"] + "x")], ignore_index=True)
    s = s.sort_values(["game", "forecaster", "nature", "seed", "T"], ignore_index=True)
    whole = write_aggregates(tmp_path / "whole", s)
    path = tmp_path / "summary.parquet"
    pq.write_table(pa.Table.from_pandas(s, preserve_index=False), path)
    monkeypatch.setattr(aggregate, "WHOLE_ROWS", 0)  # read a few columns at a time
    monkeypatch.setattr(aggregate, "LONG_ROWS", 1)  # one metric a block
    monkeypatch.setattr(aggregate, "PAIR_ROWS", 1)  # one (game, nature, T) a merge: four cells
    assert len(aggregate._cells(s.assign(_pos=0), ["_pos", "game", "nature", "T"])) == 4
    parts = write_aggregates(tmp_path / "parts", path)
    assert set(parts) == set(whole) == {"seed_stats", "leaderboard", "paired", "minimax"}
    for name in whole:
        a, b = pd.read_parquet(parts[name]), pd.read_parquet(whole[name])
        exact = name != "paired"
        pd.testing.assert_frame_equal(a, b, check_exact=exact, rtol=1e-12)
        if not exact:  # the keys, counts and verdicts exactly
            same = [c for c in b if b[c].dtype.kind not in "f"]
            pd.testing.assert_frame_equal(a[same], b[same], check_exact=True)


def test_real_result_rows():
    """Rows as the runner writes them (certificates, seeds, timing): the same pairs and means."""
    rows = [
        arena.play("binary", fc, "iid_bernoulli", T=60, seed=seed).row()
        for fc in ("k29", "running_mean")
        for seed in (0, 1, 2)
    ]
    s = pd.DataFrame(rows)
    cols = metric_columns(s)
    assert "brier" in cols and "smce_over_T" in cols
    assert not [c for c in cols if c.startswith(("cert.", "seed", "seconds_")) or c in ("T", "rounds", "peak_rss_mb")]
    st = seed_stats(s).set_index(["forecaster", "metric"])
    for fc in ("k29", "running_mean"):
        assert st.loc[(fc, "brier"), "mean"] == pytest.approx(s[s["forecaster"] == fc]["brier"].mean(), rel=1e-12)
    p = paired(s, "brier").iloc[0]
    diff = s[s["forecaster"] == "k29"]["brier"].to_numpy() - s[s["forecaster"] == "running_mean"]["brier"].to_numpy()
    assert (p["forecaster_a"], p["forecaster_b"], p["n"]) == ("k29", "running_mean", 3)
    assert p["mean_diff"] == pytest.approx(diff.mean(), rel=1e-12)


# ----------------------------------------------------------------------------- tables kept while current


def _stored_dir(tmp_path: Path) -> Path:
    from tests._stored import store_binary_matchups

    return store_binary_matchups(tmp_path / "run", ["k29", "running_mean"], ["iid_bernoulli"], [0, 1], T=64)


def test_tables_are_kept_while_their_matchups_and_the_tables_are_unchanged(tmp_path, monkeypatch):
    from _stored import put

    import arena.aggregate as agg
    from arena.store import scan
    from arena.stream import stream_tables

    out = _stored_dir(tmp_path)
    first = agg.write_tables(out)
    before = {p: p.read_bytes() for p in out.glob("*.parquet")}
    calls = []
    monkeypatch.setattr(agg, "stream_tables", lambda *a, **k: calls.append(a) or stream_tables(*a, **k))
    assert agg.write_tables(out) == first and not calls  # nothing aggregated again
    assert agg.current_tables(out) == first
    assert {p: p.read_bytes() for p in out.glob("*.parquet")} == before

    # a result stored again (its log grows) is aggregated again
    (f,) = (out / "matchups").glob("*.jsonl")
    f.write_bytes(f.read_bytes() + f.read_bytes().splitlines(keepends=True)[0])
    assert agg.current_tables(out) is None
    agg.write_tables(out)
    assert len(calls) == 1 and agg.current_tables(out) == first

    # an edited table, a removed matchup, another selection of matchups: aggregated again
    summary = out / "summary.csv"
    summary.write_text(summary.read_text() + "\n")
    assert agg.current_tables(out) is None
    agg.write_tables(out)
    assert len(calls) == 2
    ids = sorted(scan(out))
    assert agg.current_tables(out, set(ids[:2])) is None
    put(out, ids[-1], b"\n")  # its record taken out
    assert agg.current_tables(out) is None
    assert len(pd.read_parquet(agg.write_tables(out)["summary"])) == len(ids) - 1


def test_tables_with_a_corrupt_result_are_never_kept(tmp_path, capsys):
    import arena.aggregate as agg

    out = _stored_dir(tmp_path)
    from _stored import put

    from arena.store import scan

    put(out, min(scan(out)), b"0" * 50 + b"\n")  # a half-written result
    agg.write_tables(out)
    assert "left out of the summary" in capsys.readouterr().err
    assert agg.current_tables(out) is None and not (out / agg.TABLES_STAMP).exists()
    agg.write_tables(out)
    assert "left out of the summary" in capsys.readouterr().err  # said again at every aggregation


@pytest.mark.parametrize("stamp", ["", "{", "[]", '{"written": 3}', '{"written": [["summary", "../x"]]}'])
def test_a_damaged_tables_stamp_means_aggregate_again(tmp_path, stamp):
    import arena.aggregate as agg

    out = _stored_dir(tmp_path)
    first = agg.write_tables(out)
    (out / agg.TABLES_STAMP).write_text(stamp)
    assert agg.current_tables(out) is None
    assert agg.write_tables(out) == first and agg.current_tables(out) == first
