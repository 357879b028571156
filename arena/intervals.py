"""The Student-t interval of a mean across seeds, from the values themselves or from their moments.

Every interval of the arena is one of these (:mod:`arena.aggregate`'s tables, the figures' bands): 95% Student-t,
mean +- t(0.975, n - 1) sd / sqrt(n); NaN with fewer than two values, and none (NaN, never zero-width) where every
value is the same: the mean is then exact (:func:`n_effective`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from arena.moments import MOMENTS, combine

#: Confidence level of every interval.
LEVEL = 0.95


def t_quantile(dof):
    """The two-sided Student-t quantile t(1/2 + LEVEL/2, dof) (fractional dof allowed; NaN for dof < 1)."""
    from scipy.special import stdtrit  # imported here: a worker drawing figures needs nothing else of scipy

    dof = np.asarray(dof, float)
    # stdtrit inverts the t distribution iteratively, element by element: a table's degrees of freedom take a
    # few distinct values (n - 1 over a handful of seed counts), so each is inverted once
    values, inverse = np.unique(dof, return_inverse=True)
    with np.errstate(invalid="ignore"):
        quantiles = stdtrit(np.where(values >= 1, values, np.nan), 0.5 + LEVEL / 2)
    return quantiles[inverse.reshape(dof.shape)]


def t_half_width(std, n):
    """Half-width of the Student-t interval of a mean of n values: t_quantile(n - 1) * std / sqrt(n).

    NaN where n < 2 (no spread to measure) and where std is zero: identical values are one
    value repeated (a seed-invariant matchup, :func:`n_effective`), not a zero-width interval.

    Examples
    --------
    >>> round(float(t_half_width(1.0, 4)), 4)  # t(0.975, 3) / 2
    1.5912
    >>> float(t_half_width(0.0, 3))
    nan
    """
    std, n = np.asarray(std, float), np.asarray(n, float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where((n >= 2) & (std > 0), t_quantile(n - 1) * std / np.sqrt(n), np.nan)


def n_effective(n, std):
    """The number of distinct draws behind a mean of n values: n, but 1 when they are all identical
    (std zero): a matchup whose outcome does not depend on the seed (a deterministic forecaster
    against a deterministic nature, a replayed series) repeats one game, and its mean is exact.

    Examples
    --------
    >>> n_effective([3, 3, 1, 0], [0.1, 0.0, np.nan, np.nan]).tolist()
    [3, 1, 1, 0]
    """
    n, std = np.asarray(n, float), np.asarray(std, float)
    return np.where((n >= 2) & (std == 0), 1, n).astype(int)


def mean_ci(df: pd.DataFrame, by: Sequence[str], value: str = "value") -> pd.DataFrame:
    """Per group of ``by``: n (values that are not NaN), mean, std and the Student-t interval of the mean.

    Columns ``[*by, n, n_effective, mean, std, half, ci_low, ci_high]``; a group whose values are
    all NaN has n = 0 and NaN statistics; a group of identical values has ``n_effective`` 1 and
    no interval (NaN), its mean being exact (:func:`n_effective`).

    Examples
    --------
    >>> df = pd.DataFrame({"f": "a", "t": [1, 1, 2], "value": [1.0, 3.0, 5.0]})
    >>> mean_ci(df, ["f", "t"])[["t", "n", "mean", "ci_low"]].round(3).values.tolist()
    [[1.0, 2.0, 2.0, -10.706], [2.0, 1.0, 5.0, nan]]
    >>> mean_ci(df.assign(value=1.0), ["f"])[["n", "n_effective", "mean", "half"]].values.tolist()
    [[3.0, 1.0, 1.0, nan]]
    """
    g = df.groupby(list(by), sort=True, dropna=False)[value].agg(["count", "mean", "std"]).reset_index()
    return _with_interval(g.rename(columns={"count": "n"}), by)


def moments_ci(m: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """:func:`mean_ci` of the values whose moments over seeds are ``m`` (:mod:`arena.moments`: a row per point,
    e.g. the ``curve_stats`` table), per group of ``by``: the points of a group are combined
    (:func:`arena.moments.combine`). A group of identical values (min = max) has ``n_effective`` 1 and no
    interval, as in :func:`mean_ci`.

    Examples
    --------
    >>> from arena.moments import moments
    >>> df = pd.DataFrame({"f": "a", "t": [1, 1, 2], "value": [1.0, 3.0, 5.0]})
    >>> moments_ci(moments(df, ["f", "t"]), ["f", "t"])[["t", "n", "mean", "ci_low"]].round(3).values.tolist()
    [[1.0, 2.0, 2.0, -10.706], [2.0, 1.0, 5.0, nan]]
    """
    g = combine([m], by) if len(m) else pd.DataFrame(columns=[*by, *MOMENTS])
    return _with_interval(g[[*by, "n", "mean", "std"]].astype({"n": float, "mean": float, "std": float}), by)


def _with_interval(g: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """``g`` (``[*by, n, mean, std]``) with ``n_effective`` after ``n`` and the interval: ``half``, ``ci_low``,
    ``ci_high``."""
    g.insert(len(by) + 1, "n_effective", n_effective(g["n"], g["std"]))
    g["half"] = t_half_width(g["std"], g["n"])
    g["ci_low"], g["ci_high"] = g["mean"] - g["half"], g["mean"] + g["half"]
    return g


__all__ = ["LEVEL", "mean_ci", "moments_ci", "n_effective", "t_half_width", "t_quantile"]
