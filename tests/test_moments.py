"""Moments over seeds (arena.moments): against numpy on the values themselves, however the seeds are split."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from arena.intervals import mean_ci, moments_ci
from arena.moments import MOMENTS, combine, moments, pool_bins, scaled

BY = ["forecaster", "t"]


def _values(seed: int = 0) -> pd.DataFrame:
    """A long table of curves: 3 forecasters x 5 rounds x up to 30 seeds (one value a seed, as a matchup gives),
    some NaN or infinite, one point whose every seed gives the same value and one point with a single seed."""
    rng = np.random.default_rng(seed)
    grid = pd.MultiIndex.from_product([["a", "b", "c"], [1, 2, 4, 8, 16], range(30)], names=["forecaster", "t", "seed"])
    df = grid.to_frame(index=False).sample(frac=0.8, random_state=seed).reset_index(drop=True)
    df["value"] = rng.lognormal(0, 2, len(df))
    df.loc[rng.random(len(df)) < 0.05, "value"] = np.nan
    df.loc[rng.random(len(df)) < 0.02, "value"] = np.inf
    df.loc[(df["forecaster"] == "a") & (df["t"] == 4), "value"] = 0.1  # identical on every seed
    df = df.loc[~((df["forecaster"] == "c") & (df["t"] == 16))]
    return pd.concat([df, pd.DataFrame({"forecaster": ["c"], "t": [16], "seed": [7], "value": [3.0]})])


def _direct(df: pd.DataFrame) -> pd.DataFrame:
    """The moments of each point computed from its finite values with numpy, one point at a time."""
    rows = []
    for (f, t), g in df.groupby(BY):
        ok = g.loc[np.isfinite(g["value"].to_numpy(float))]
        v = ok["value"].to_numpy(float)
        first = ok.loc[ok["seed"].idxmin()] if len(ok) else None
        rows.append(
            {
                "forecaster": f,
                "t": t,
                "n": float(len(v)),
                "mean": v.mean(),
                "std": v.std(ddof=1) if len(v) > 1 else np.nan,
                "min": v.min(),
                "max": v.max(),
                "first_seed": first["seed"],
                "first": first["value"],
            }
        )
    return pd.DataFrame(rows)


def test_moments_equal_numpy_on_the_values():
    df = _values().reset_index(drop=True)
    got = moments(df, BY)
    assert list(got.columns) == [*BY, *MOMENTS]
    pd.testing.assert_frame_equal(got, _direct(df), check_exact=False, rtol=1e-12, check_dtype=False)
    same = got.loc[(got["forecaster"] == "a") & (got["t"] == 4)].iloc[0]
    assert same["std"] == 0.0 and same["min"] == same["max"] == 0.1  # exactly: a repeated value
    one = got.loc[(got["forecaster"] == "c") & (got["t"] == 16)].iloc[0]
    assert one["n"] == 1 and np.isnan(one["std"]) and one["first"] == 3.0


@pytest.mark.parametrize("parts", [2, 3, 7])
def test_moments_of_parts_combine_into_those_of_all_the_seeds(parts):
    """However the rows are split (by seed, as batches of matchups split them), the combined moments are those of
    all the values at once: counts, min, max and the first seed exactly, mean and deviation to 1e-12."""
    df = _values(parts).reset_index(drop=True)
    order = np.random.default_rng(parts).permutation(len(df))
    split = [df.iloc[rows] for rows in np.array_split(order, parts)]
    got = combine([moments(p, BY) for p in split], BY)
    want = moments(df, BY)
    pd.testing.assert_frame_equal(got, want, check_exact=False, rtol=1e-12, check_dtype=False)
    exact = ["n", "min", "max", "first_seed", "first"]
    pd.testing.assert_frame_equal(got[exact], want[exact], check_exact=True, check_dtype=False)
    assert (got.loc[(got["forecaster"] == "a") & (got["t"] == 4), "std"] == 0.0).all()


def test_moments_ci_is_mean_ci_of_the_values():
    """The intervals drawn from moments are those of the values themselves (:func:`mean_ci`), per point and pooled
    over points (every t of a forecaster)."""
    df = _values(11)
    ok = df.loc[np.isfinite(df["value"])]
    m = moments(df, BY)
    for by in (BY, ["forecaster"]):
        got, want = moments_ci(m, by), mean_ci(ok, by)
        pd.testing.assert_frame_equal(got, want, check_exact=False, rtol=1e-10, check_dtype=False)


def test_moments_scaled_by_t_are_those_of_the_values_divided_by_t():
    df = _values(5)
    df = df.loc[np.isfinite(df["value"])]
    m = moments(df, BY)
    got = scaled(m, 1.0 / m["t"].to_numpy(float))
    want = moments(df.assign(value=df["value"] / df["t"]), BY)
    pd.testing.assert_frame_equal(got, want, check_exact=False, rtol=1e-12, check_dtype=False)


def test_pooled_bins_pool_again_into_the_same_bins():
    rng = np.random.default_rng(2)
    n = 300
    rel = pd.DataFrame(
        {
            "forecaster": rng.choice(["a", "b"], n),
            "bin": rng.integers(0, 10, n),
            "count": rng.integers(0, 50, n),
            "mean_p": rng.random(n),
            "mean_y": rng.random(n),
        }
    ).assign(lo=lambda d: d["bin"] / 10, hi=lambda d: (d["bin"] + 1) / 10)
    whole = pool_bins(rel, ["forecaster"])
    halves = pd.concat([pool_bins(rel.iloc[:120], ["forecaster"]), pool_bins(rel.iloc[120:], ["forecaster"])])
    pd.testing.assert_frame_equal(pool_bins(halves, ["forecaster"]), whole, check_exact=False, rtol=1e-12)
    # against a direct count-weighted mean of one bin
    g = rel.loc[(rel["forecaster"] == "a") & (rel["bin"] == 3) & (rel["count"] > 0)]
    row = whole.loc[(whole["forecaster"] == "a") & (whole["bin"] == 3)].iloc[0]
    assert row["count"] == g["count"].sum()
    assert row["mean_p"] == pytest.approx(np.average(g["mean_p"], weights=g["count"]), rel=1e-12)
