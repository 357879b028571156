"""Nash averaging and alpha-Rank on games with known answers, their invariances, and arena-rank."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from arena.ranking import (
    alpha_rank,
    alpha_rank_one_population,
    fixation,
    max_entropy_nash,
    nash_averaging,
    rankings,
    stationary,
)

RPS = np.array([[0.0, 1.0, -1.0], [-1.0, 0.0, 1.0], [1.0, -1.0, 0.0]])


# ------------------------------------------------------------------------------------------ Nash averaging
def test_rock_paper_scissors_is_uniform_and_ties_everyone():
    nash = max_entropy_nash(RPS)
    assert nash.x == pytest.approx([1 / 3] * 3, abs=1e-7) and nash.y == pytest.approx([1 / 3] * 3, abs=1e-7)
    assert nash.value == pytest.approx(0.0, abs=1e-12)
    assert nash_averaging(RPS) == pytest.approx([0.0] * 3, abs=1e-7)


def _entropy(z: np.ndarray) -> float:
    z = z[z > 0]
    return float(-(z * np.log(z)).sum())


def test_the_maximum_entropy_equilibrium_among_a_continuum():
    """Rows 0 and 1 are the same forecaster on the natures that matter: every mixture of them is optimal, the
    maximum-entropy one is the even split; no other optimal mixture has more entropy (a scan of the segment)."""
    A = np.array([[0.0, 1.0], [0.0, 1.0], [1.0, 2.0]])  # column 1 dominates for nature; rows 0, 1 tie
    nash = max_entropy_nash(A)
    assert nash.value == pytest.approx(1.0) and nash.x == pytest.approx([0.5, 0.5, 0.0], abs=1e-6)
    assert nash.y == pytest.approx([0.0, 1.0], abs=1e-6)
    for w in np.linspace(0, 1, 21):
        z = np.array([w, 1 - w, 0.0])
        assert (z @ A).max() <= nash.value + 1e-12 and _entropy(z) <= _entropy(nash.x) + 1e-9
    # unique: the same answer from any order of the rows
    perm = max_entropy_nash(A[[2, 1, 0]])
    assert perm.x == pytest.approx(nash.x[[2, 1, 0]], abs=1e-6)


def test_copies_leave_nash_averaging_unchanged():
    """A game whose natures have a unique, completely mixed equilibrium (a weighted rock-paper-scissors) and a
    fourth forecaster outside the equilibrium; then a nature and a forecaster copied: the value and every
    forecaster's Nash average stay; the copies share the original's weight."""
    A = np.array([[0.1, 2.0, -1.0], [-1.0, 0.2, 3.0], [1.0, -2.0, 0.0], [1.0, 2.5, 1.0]])
    base = max_entropy_nash(A)
    assert (base.x[:3] > 0.1).all() and base.x[3] < 1e-6 and (base.y > 0.1).all()
    before = nash_averaging(A)
    assert before[:3] == pytest.approx([base.value] * 3, abs=1e-6) and before[3] > base.value + 0.5
    nature = A[:, [0, 1, 2, 2, 2]]  # nature 2 three times
    assert nash_averaging(nature) == pytest.approx(before, abs=1e-6)
    assert max_entropy_nash(nature).y[2:].sum() == pytest.approx(base.y[2], abs=1e-6)
    forecaster = A[[0, 0, 1, 2, 3]]
    assert nash_averaging(forecaster) == pytest.approx(before[[0, 0, 1, 2, 3]], abs=1e-6)
    # the mean over natures is not invariant: copies of a nature move it
    assert not np.allclose(nature.mean(axis=1), A.mean(axis=1), atol=1e-3)
    # rock-paper-scissors with rock's nature twice: still everyone tied at 0
    assert nash_averaging(RPS[:, [0, 0, 1, 2]]) == pytest.approx([0.0] * 3, abs=1e-6)


def test_where_the_natures_have_many_equilibria_the_pick_can_move():
    """The documented limit: row 0 is best on every nature, so every mixture of natures is optimal; copying
    nature 0 moves the maximum-entropy mixture and row 1's Nash average (from 1/2 to 2/3), never the value
    nor row 0's."""
    A = np.array([[0.0, 0.0], [1.0, 0.0]])
    assert nash_averaging(A) == pytest.approx([0.0, 0.5], abs=1e-6)
    assert nash_averaging(A[:, [0, 0, 1]]) == pytest.approx([0.0, 2 / 3], abs=1e-6)


# ---------------------------------------------------------------------------------------------- alpha-Rank
def test_alpha_rank_reproduces_openspiel_single_population_example():
    """OpenSpiel's alpharank_test (Han et al. 2013 payoffs, m = 20, alpha = 0.1, the full Moran process)."""
    r, t, p, s, delta, eps = 1.0, 2.0, 0.0, -1.0, 4.0, 0.25
    M = np.array(
        [
            [r - eps / 2, r - eps, 0, s + delta - eps, r - eps],
            [r, r, s, s, s],
            [0, t, p, p, p],
            [t - delta, t, p, p, p],
            [r, t, p, p, p],
        ]
    )
    expected = [0.40966787, 0.07959841, 0.20506998, 0.08505983, 0.2206039]
    assert alpha_rank_one_population(M, alpha=0.1, m=20) == pytest.approx(expected, abs=1e-7)


@pytest.mark.parametrize(
    "alpha, forecasters, natures",
    [
        (0.1, [0.1980621703, 0.5474490001, 0.2544888297], [0.1978399988, 0.08615320576, 0.7160067954]),
        (1.0, [0.0003885782937, 0.9980931498, 0.001518271865], [0.0004955216912, 8.077192071e-05, 0.9994237064]),
    ],
)
def test_alpha_rank_two_populations_equals_openspiel(alpha, forecasters, natures):
    """Values from OpenSpiel 2.0.2's ``alpharank.compute([-A, A], m=50, alpha)`` (A the losses rescaled to
    [0, 1]; forecasters gain -A, natures A)."""
    L = np.array([[0.2, 0.5, 0.9], [0.4, 0.3, 0.6], [0.8, 0.1, 0.7]])
    got = alpha_rank(L, alpha=alpha, m=50)
    assert got.forecasters == pytest.approx(forecasters, abs=1e-9)
    assert got.natures == pytest.approx(natures, abs=1e-9)


def test_alpha_rank_of_a_two_by_two_game_built_by_hand():
    """The four-profile chain written out: profiles (f, n) in order (0,0), (0,1), (1,0), (1,1); eta = 1/2;
    matching pennies in losses is symmetric, so every profile has mass 1/4; a dominant forecaster takes all
    the forecaster mass at large alpha."""
    m, a = 10, 3.0

    def rho(g):
        return 1 / m if g == 0 else (1 - np.exp(-g)) / (1 - np.exp(-m * g))

    L = np.array([[0.0, 1.0], [0.5, 0.25]])  # losses, already in [0, 1]
    C = np.zeros((4, 4))
    C[0, 2] = rho(a * (L[0, 0] - L[1, 0])) / 2  # forecaster 0 -> 1 against nature 0
    C[0, 1] = rho(a * (L[0, 1] - L[0, 0])) / 2  # nature 0 -> 1 against forecaster 0
    C[1, 3] = rho(a * (L[0, 1] - L[1, 1])) / 2
    C[1, 0] = rho(a * (L[0, 0] - L[0, 1])) / 2
    C[2, 0] = rho(a * (L[1, 0] - L[0, 0])) / 2
    C[2, 3] = rho(a * (L[1, 1] - L[1, 0])) / 2
    C[3, 1] = rho(a * (L[1, 1] - L[0, 1])) / 2
    C[3, 2] = rho(a * (L[1, 0] - L[1, 1])) / 2
    np.fill_diagonal(C, 1 - C.sum(axis=1))
    w, v = np.linalg.eig(C.T)
    pi = np.real(v[:, np.argmin(abs(w - 1))])
    pi = pi / pi.sum()
    assert alpha_rank(L, alpha=a, m=m).profiles.reshape(-1) == pytest.approx(pi, abs=1e-12)
    assert alpha_rank(np.array([[1.0, 0.0], [0.0, 1.0]]), alpha=a, m=m).profiles == pytest.approx(
        np.full((2, 2), 0.25), abs=1e-12
    )
    assert alpha_rank(np.array([[0.0, 0.1], [0.5, 1.0]]), alpha=1e4).forecasters[0] == pytest.approx(1.0)
    assert alpha_rank(RPS).forecasters == pytest.approx([1 / 3] * 3, abs=1e-9)


def test_fixation_and_stationary_are_stable():
    assert np.isfinite(fixation(np.array([-1e6, -1.0, 1e-14, 1.0, 1e6]), 50)).all()
    assert fixation(np.array([2.0]), 5)[0] == pytest.approx((1 - np.exp(-2)) / (1 - np.exp(-10)))
    assert fixation(np.array([-2.0]), 5)[0] == pytest.approx((1 - np.exp(2)) / (1 - np.exp(10)))
    assert stationary(np.array([[0.9, 0.1], [0.2, 0.8]])) == pytest.approx([2 / 3, 1 / 3])


# ------------------------------------------------------------------------------------------ the rankings table
def test_rankings_side_by_side_and_bad_tables():
    t = pd.DataFrame(RPS, index=["rock", "paper", "scissors"], columns=["R", "P", "S"])
    t.loc["bad"] = [2.0, 2.0, 2.0]
    r = rankings(t).set_index("forecaster")
    assert r.loc["bad", ["mean_rank", "worst_rank", "nash_average_rank", "alpha_rank_rank"]].tolist() == [4] * 4
    assert r.loc["bad", "minimax"] == pytest.approx(0.0, abs=1e-9)
    assert set(r.loc[["rock", "paper", "scissors"], "nash_average_rank"]) == {1}
    with pytest.raises(ValueError, match="1 missing values: give a finite loss"):
        rankings(t.assign(R=[0.0, 1.0, np.nan, 2.0]))


# ------------------------------------------------------------------------------------------------ arena-rank
def _long(path, rows, columns=("forecaster", "nature", "value")):
    pd.DataFrame(rows, columns=list(columns)).to_csv(path, index=False)
    return path


def test_arena_rank_prints_every_ranking_of_a_long_table(tmp_path, capsys):
    from arena.ranking import main

    names = ["rock", "paper", "scissors"]
    rows = [(f, n, RPS[i, j]) for i, f in enumerate(names) for j, n in enumerate("RPS")]
    rows += [("bad", n, 2.0) for n in "RPS"] + [("bad", "R", 2.0)]  # a repeated row (a second seed): averaged
    main([str(_long(tmp_path / "t.csv", rows))])
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "[arena] 4 forecasters x 3 natures; losses, lower is better; rank in parentheses"
    assert out[1].split() == ["forecaster", "mean", "worst", "minimax", "w", "Nash", "avg", "alpha-Rank"]
    assert out[-1].split()[0] == "bad" and out[-1].count("( 4)") == 5  # last in all five
    # other column names, by flags
    renamed = _long(tmp_path / "r.csv", rows, ("agent", "task", "loss"))
    main([str(renamed), "--forecaster", "agent", "--nature", "task", "--value", "loss"])
    assert capsys.readouterr().out.splitlines()[1:] == out[1:]


def test_arena_rank_of_a_results_directory(tmp_path, capsys):
    """A results directory's seed means of a metric; a higher-is-better metric is ranked negated."""
    from arena.ranking import main

    rows = []
    for i, f in enumerate(["a", "b"]):
        for j, n in enumerate(["x", "y"]):
            for seed in (0, 1):
                rows.append(
                    {
                        "matchup_id": f"{f}{n}{seed}",
                        "game": "binary",
                        "forecaster": f,
                        "nature": n,
                        "seed": seed,
                        "T": 10,
                        "status": "ok",
                        "brier": 0.1 * (i + 1) + 0.01 * j + 0.001 * seed,
                    }
                )
    pd.DataFrame(rows).to_parquet(tmp_path / "summary.parquet")
    main([str(tmp_path), "--metric", "brier"])
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("[arena] 2 forecasters x 2 natures") and out[2].split()[0] == "a"
    assert out[2].split()[:4] == ["a", "0.1055", "(", "1)"] and out[3].split()[:4] == ["b", "0.2055", "(", "2)"]


@pytest.mark.parametrize(
    "rows, args, message",
    [
        (None, [], "does not exist; give a CSV file or a results directory"),
        ([("a", "x", 1.0)], ["--value", "loss"], "has no column 'loss' (it has forecaster, nature, value); name"),
        ([("a", "x", "high")], [], "value 'high' in row 2 is not a number"),
        ([("a", "x", 1.0), ("b", "y", 1.0)], [], "forecaster 'a' has no value on nature 'y' (2 such pairs)"),
        ([("a", "x", 1.0)], ["--alpha", "0"], "give alpha > 0 and a population >= 2"),
        ("dir", [], "is a results directory: name the metric to rank by with --metric"),
    ],
)
def test_arena_rank_errors_are_one_line(tmp_path, capsys, rows, args, message):
    from arena.ranking import main

    if rows == "dir":
        path = tmp_path
    elif rows is None:
        path = tmp_path / "missing.csv"
    else:
        path = _long(tmp_path / "t.csv", rows)
    with pytest.raises(SystemExit) as exc:
        main([str(path), *args])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1 and err.startswith("arena-rank: error: ") and message in err


def test_ranking_tables_of_a_summary_negate_higher_is_better_and_name_who_is_left_out(monkeypatch):
    import arena.aggregate
    from arena.ranking import ranking_tables

    monkeypatch.setitem(arena.aggregate.DIRECTION, "accuracy", "max")
    rows = []
    for i, f in enumerate(["a", "b", "c"]):
        for n in ("x", "y"):
            if (f, n) == ("c", "y"):
                continue  # c never played y: left out
            rows.append(
                {
                    "matchup_id": f"{f}{n}",
                    "game": "binary",
                    "forecaster": f,
                    "nature": n,
                    "seed": 0,
                    "T": 10,
                    "status": "ok",
                    "brier": 0.1 * (i + 1),
                    "accuracy": 0.1 * (i + 1),
                }
            )
    r = ranking_tables(pd.DataFrame(rows))
    assert set(r["metric"]) == {"brier", "accuracy"} and set(r["left_out"]) == {"c"}
    rank = {m: g.set_index("forecaster")["nash_average_rank"].to_dict() for m, g in r.groupby("metric")}
    assert rank == {"brier": {"a": 1, "b": 2}, "accuracy": {"a": 2, "b": 1}}


def test_ranking_tables_from_the_directorys_statistics_across_seeds_equal_those_from_the_summary(monkeypatch):
    """The report ranks from the ``seed_stats`` table the directory holds (every metric, as written): the same
    table, to the bit, as from the summary's rows, which are then not read for statistics again."""
    import arena.aggregate
    from arena.aggregate import seed_stats
    from arena.ranking import ranking_tables

    rng = np.random.default_rng(3)
    rows = [
        {"game": "binary", "forecaster": f, "nature": n, "seed": s, "T": 10, "status": "ok",
         "brier": rng.uniform(), "smce_over_T": rng.uniform(), "bias": rng.normal()}
        for f in ("a", "b", "c", "d") for n in ("x", "y", "z") for s in range(3)
    ]  # fmt: skip
    summary = pd.DataFrame(rows)
    alone = ranking_tables(summary)
    stats = seed_stats(summary)

    def refused(*args, **kwargs):
        raise AssertionError("seed statistics computed again")

    monkeypatch.setattr(arena.aggregate, "seed_stats", refused)
    pd.testing.assert_frame_equal(ranking_tables(summary, stats=stats), alone, check_exact=True)
    assert set(alone["metric"]) == {"bias", "brier", "smce_over_T"} and len(alone) == 12
