"""A curve's values over seeds, summed up per point: the moments that figures and intervals need, and that combine.

A report draws each curve as its mean over seeds with a 95% interval (:func:`arena.intervals.moments_ci`). That
needs, per point (game, T, forecaster, nature, metric, t), not every seed's value but its :data:`MOMENTS`: the
number of finite values ``n``, their ``mean`` and standard deviation ``std`` (n - 1 in the denominator; NaN for
one value), ``min`` and ``max`` (equal: every seed gave one value, the mean is exact), and the value of the first
seed (``first_seed``, ``first``: a run drawn as it was played, e.g. the expert weights). Moments of parts of the
seeds combine into those of them all (:func:`combine`, the pairwise update of Chan, Golub and LeVeque, 1979), so
:func:`arena.stream.stream_tables` makes the ``curve_stats`` table in one pass over the stored matchups, in memory
that grows with the points of the curves, not with the seeds.

Examples
--------
>>> c = pd.DataFrame({"forecaster": "k29", "seed": [0, 1, 2, 0], "t": [1, 1, 1, 2], "value": [1.0, 2.0, 6.0, 4.0]})
>>> moments(c, ["forecaster", "t"])[["t", "n", "mean", "std", "first"]].values.tolist()
[[1.0, 3.0, 3.0, 2.6457513110645907, 1.0], [2.0, 1.0, 4.0, nan, 4.0]]
>>> halves = [moments(c.iloc[:2], ["forecaster", "t"]), moments(c.iloc[2:], ["forecaster", "t"])]
>>> combine(halves, ["forecaster", "t"])[["n", "mean", "std"]].round(12).values.tolist()
[[3.0, 3.0, 2.645751311065], [1.0, 4.0, nan]]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

#: The columns of a point's moments, after its keys.
MOMENTS = ("n", "mean", "std", "min", "max", "first_seed", "first")
#: The keys of a point of a curve, in the order of the ``curve_stats`` table (those a table has).
CURVE_KEYS = ("game", "T", "forecaster", "nature", "metric", "t")


def is_moments(df: pd.DataFrame) -> bool:
    """Whether ``df`` holds moments (:data:`MOMENTS`) rather than a value per seed."""
    return all(c in df for c in MOMENTS)


def moments(df: pd.DataFrame, by: Sequence[str], value: str = "value", seed: str = "seed") -> pd.DataFrame:
    """Per group of ``by`` (sorted, NaN keys kept): the :data:`MOMENTS` of its finite ``value``s; NaN and infinite
    values are left out, and a group without a finite value has no row. Without a ``seed`` column, every row
    counts as seed 0."""
    by = list(by)
    values = pd.to_numeric(df[value], errors="coerce").replace([np.inf, -np.inf], np.nan)
    seeds = df[seed] if seed in df else pd.Series(0, index=df.index)
    d = df[by].assign(_v=values, _s=seeds).loc[values.notna()].reset_index(drop=True)  # labels: one row each
    if d.empty:
        return pd.DataFrame(columns=[*by, *MOMENTS])
    g = d.groupby(by, sort=True, dropna=False)
    out = g["_v"].agg(["count", "mean", "std", "min", "max"]).reset_index()
    first = d.loc[g["_s"].idxmin().to_numpy()]  # the row of each group's smallest seed (its first, on a tie)
    out["first_seed"], out["first"] = first["_s"].to_numpy(), first["_v"].to_numpy(float)
    out = out.rename(columns={"count": "n"})
    out["n"] = out["n"].astype(float)
    out["std"] = out["std"].where(out["min"] != out["max"], np.where(out["n"] >= 2, 0.0, np.nan))
    return out


def combine(parts: Sequence[pd.DataFrame], by: Sequence[str]) -> pd.DataFrame:
    """The moments of the seeds of all ``parts`` (moments of disjoint sets of seeds, each per group of ``by``), per
    group of ``by``, sorted: counts add, means are count-weighted, the sums of squared deviations add with the
    spread of the parts' means, min of mins, max of maxes, the first of the smallest seed."""
    by = list(by)
    d = pd.concat([p for p in parts if len(p)], ignore_index=True) if any(len(p) for p in parts) else None
    if d is None:
        return pd.DataFrame(columns=[*by, *MOMENTS])
    if len(parts) == 1 and not d.duplicated(by).any():  # one point a group already: its moments, sorted
        return d.sort_values(by, kind="stable", ignore_index=True)[[*by, *MOMENTS]]
    keys = [d[k] for k in by]
    n = d["n"].to_numpy(float)
    total = d.groupby(keys, sort=False, dropna=False)["n"].transform("sum").to_numpy(float)
    weighted = pd.Series(n * d["mean"].to_numpy(float), index=d.index)
    mean = weighted.groupby(keys, sort=False, dropna=False).transform("sum").to_numpy(float) / total
    m2 = np.where(n >= 2, d["std"].to_numpy(float) ** 2 * (n - 1), 0.0) + n * (d["mean"].to_numpy(float) - mean) ** 2
    d = d.assign(_w=weighted, _m2=m2)
    g = d.groupby(by, sort=True, dropna=False)
    out = g.agg(n=("n", "sum"), _w=("_w", "sum"), _m2=("_m2", "sum"), min=("min", "min"), max=("max", "max"))
    out = out.reset_index()
    first = d.loc[g["first_seed"].idxmin().to_numpy()]
    out["mean"] = out["_w"] / out["n"]
    with np.errstate(invalid="ignore", divide="ignore"):
        std = np.sqrt(out["_m2"] / (out["n"] - 1))
    out["std"] = np.where(out["n"] < 2, np.nan, np.where(out["min"] == out["max"], 0.0, std))
    out["first_seed"], out["first"] = first["first_seed"].to_numpy(), first["first"].to_numpy(float)
    return out[[*by, *MOMENTS]]


#: The keys of a reliability bin pooled over seeds (those a table has), and the columns of a bin.
BIN_KEYS = ("game", "T", "forecaster", "nature")
BIN_COLUMNS = ("bin", "lo", "hi", "count", "mean_p", "mean_y")


def pool_bins(reliability: pd.DataFrame, by: Sequence[str] = ()) -> pd.DataFrame:
    """Reliability bins (a row per matchup and bin: :data:`BIN_COLUMNS`) pooled per group of ``by`` and bin:
    counts add, means are count-weighted; a bin with no forecast or a NaN mean is left out. Pooled bins pool
    again into the same bins (up to rounding): the ``reliability_pooled`` table is pooled a batch at a time."""
    by = list(by)
    if reliability is None or any(c not in reliability for c in (*BIN_COLUMNS, *by)):
        return pd.DataFrame(columns=[*by, *BIN_COLUMNS])
    count = pd.to_numeric(reliability["count"], errors="coerce").replace([np.inf, -np.inf], np.nan)
    mp, my = (pd.to_numeric(reliability[c], errors="coerce").astype(float) for c in ("mean_p", "mean_y"))
    df = reliability.assign(count=count).loc[(count > 0) & np.isfinite(mp) & np.isfinite(my)]
    if df.empty:
        return pd.DataFrame(columns=[*by, *BIN_COLUMNS])
    df = df.assign(wp=df["count"] * df["mean_p"], wy=df["count"] * df["mean_y"])
    g = (
        df.groupby([*by, "bin"])
        .agg(lo=("lo", "min"), hi=("hi", "max"), count=("count", "sum"), wp=("wp", "sum"), wy=("wy", "sum"))
        .reset_index()
    )
    g["count"] = g["count"].astype(float)
    g["mean_p"], g["mean_y"] = g["wp"] / g["count"], g["wy"] / g["count"]
    return g.drop(columns=["wp", "wy"])


def scaled(m: pd.DataFrame, factor) -> pd.DataFrame:
    """Moments of the values multiplied by a positive ``factor`` (a number, or one per row)."""
    f = np.asarray(factor, float)
    return m.assign(**{c: m[c] * f for c in ("mean", "std", "min", "max", "first")})


__all__ = [
    "BIN_COLUMNS",
    "BIN_KEYS",
    "CURVE_KEYS",
    "MOMENTS",
    "combine",
    "is_moments",
    "moments",
    "pool_bins",
    "scaled",
]
