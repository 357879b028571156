"""Anytime-valid comparisons of two forecasters: confidence sequences and e-processes.

Pure numpy functions of per-round values. With ``d_t`` the difference of two forecasters'
scores at round t (bounded in ``[lo, hi]``) and ``mu_t`` its conditional mean given the past,
:func:`confidence_sequence` gives intervals that contain the running mean
``Delta_t = (1/t) sum_{i<=t} mu_i`` *at every t at once* with probability at least 1 - alpha
(so it may be read at any time, also at a time chosen by looking at the data), and
:func:`e_process` gives a process whose value at any stopping time is an e-value against the
weak null ``Delta_t >= 0`` for every t ("A is no better than B" when d = score_A - score_B and
lower scores are better): under that null, the chance that it ever reaches 1/alpha is at most alpha.

Both rest on the empirical-Bernstein supermartingale (Howard et al. 2021, Theorem 4; Fan et
al. 2012): for x_i in [lo, hi], any predictable centres g_i in [lo, hi], c = hi - lo and
lambda in [0, 1/c),

    exp(lambda * sum_i (x_i - mu_i) - psi_E(lambda) * V_t),  V_t = sum_i (x_i - g_i)^2,
    psi_E(lambda) = (-log(1 - c lambda) - c lambda) / c^2,

is a nonnegative supermartingale. The confidence sequence uses its polynomial stitching boundary
(Howard et al. 2021, Theorem 1 and eq. (10)), in closed form, as Choe & Ramdas (2023, Theorem 2)
do for comparing forecasters; the e-process is a uniform mixture of that supermartingale over a
fixed grid of lambda (a mixture of e-processes is one). Nothing here assumes independence or
identical distributions: the outcomes may come from an adaptive nature.

Examples
--------
>>> rng = np.random.default_rng(0)
>>> d = rng.uniform(-1, 1, 5000) - 0.2         # A's score is lower by 0.2 on average
>>> cs = confidence_sequence(d, -1.2, 0.8)
>>> bool(cs["low"][-1] < -0.2 < cs["high"][-1]), bool(cs["high"][-1] < 0)
(True, True)
>>> e = e_process(-d, -0.8, 1.2)               # evidence that A is better
>>> bool(e[-1] > 1e6)
True

References
----------
Howard, Ramdas, McAuliffe, Sekhon (2021), Time-uniform, nonparametric, nonasymptotic confidence
sequences, Ann. Statist. 49(2). Choe & Ramdas (2023), Comparing sequential forecasters, Oper. Res.
Waudby-Smith & Ramdas (2023), Estimating means of bounded random variables by betting, JRSS-B.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

#: Stitching parameters (Howard et al. 2021, eq. (10)): s spreads the crossing probability over
#: epochs of intrinsic time growing geometrically by eta; the boundary is tightest near V = V_MIN.
STITCH_S, STITCH_ETA, V_MIN = 1.4, 2.0, 10.0
#: The e-process mixes lambda * c over 2^-1 ... 2^-GRID, equally weighted.
GRID = 20


def _check(x: np.ndarray, lo: float, hi: float, alpha: float) -> np.ndarray:
    x = np.asarray(x, float)
    if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
        raise ValueError(f"bounds [{lo}, {hi}]: give finite bounds lo < hi on the per-round values")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha={alpha}: give a level in (0, 1), e.g. alpha=0.05")
    bad = ~((x >= lo - 1e-12) & (x <= hi + 1e-12))
    if bad.any():
        i = np.flatnonzero(bad.reshape(-1))[0]
        raise ValueError(
            f"value {float(x.reshape(-1)[i])!r} at position {i} is outside the declared bounds "
            f"[{lo}, {hi}]; "
            "declare bounds that hold for every round"
        )
    return np.clip(x, lo, hi)


def _intrinsic_time(x: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """V_t = sum_{i<=t} (x_i - g_i)^2, g_i the mean of x_1..x_{i-1} (the midpoint before any), along the last axis."""
    t = np.arange(1, x.shape[-1] + 1)
    mean = np.cumsum(x, axis=-1) / t
    g = np.concatenate([np.full(x.shape[:-1] + (1,), (lo + hi) / 2), mean[..., :-1]], axis=-1)
    return np.cumsum((x - g) ** 2, axis=-1)


def stitching_boundary(
    v, alpha: float, c: float, s: float = STITCH_S, eta: float = STITCH_ETA, v_min: float = V_MIN
) -> np.ndarray:
    """The polynomial stitching boundary u(v) of a sub-gamma (hence sub-exponential) process with
    scale c: P(exists t: S_t >= u(max(V_t, v_min))) <= alpha (Howard et al. 2021, eq. (10)).

    u(v) = k1 sqrt(v l(v)) + c k2 l(v), l(v) = s log log(eta v / v_min) + log(zeta(s) / (alpha log^s eta)),
    k1 = (eta^(1/4) + eta^(-1/4)) / sqrt(2), k2 = (sqrt(eta) + 1) / 2, for v >= v_min.

    Examples
    --------
    >>> round(float(stitching_boundary(10.0, 0.05, 1.0)), 4)
    14.2081
    """
    from scipy.special import zeta

    v = np.maximum(np.asarray(v, float), v_min)
    ell = s * np.log(np.log(eta * v / v_min)) + np.log(zeta(s) / (alpha * np.log(eta) ** s))
    k1 = (eta**0.25 + eta**-0.25) / np.sqrt(2)
    k2 = (np.sqrt(eta) + 1) / 2
    return k1 * np.sqrt(v * ell) + c * k2 * ell


def confidence_sequence(x, lo: float, hi: float, alpha: float = 0.05) -> dict[str, np.ndarray]:
    """Empirical-Bernstein confidence sequence for the running mean of conditional means of x.

    x_t in [lo, hi] (along the last axis; leading axes are independent sequences). Returns
    ``mean`` (the running mean of x), ``low`` and ``high``: with probability at least 1 - alpha,
    low_t <= (1/t) sum_{i<=t} E[x_i | past] <= high_t for every t simultaneously. Two-sided: each
    side spends alpha / 2 (Choe & Ramdas 2023, Theorem 2, with the stitching boundary).
    """
    x = _check(x, lo, hi, alpha)
    t = np.arange(1, x.shape[-1] + 1)
    mean = np.cumsum(x, axis=-1) / t
    radius = stitching_boundary(_intrinsic_time(x, lo, hi), alpha / 2, hi - lo) / t
    return {"mean": mean, "low": np.maximum(mean - radius, lo), "high": np.minimum(mean + radius, hi)}


def _psi_e(lam, c: float):
    """psi_E(lambda) = (-log(1 - c lambda) - c lambda) / c^2, the sub-exponential CGF."""
    return (-np.log1p(-c * lam) - c * lam) / c**2


def e_process(x, lo: float, hi: float, at=None) -> np.ndarray:
    """An e-process against the weak null "the running mean of E[x_t | past] is <= 0 at every t".

    x_t in [lo, hi] with lo < 0 (along the last axis). Positive x is evidence against the null. ``at``: the
    0-based rounds to return (all by default; a few rounds of a long game need no mixture at every round).
    E_t = (1/J) sum_j exp(lambda_j S_t - psi_E(lambda_j) V_t), S_t = sum_{i<=t} x_i, with c = hi - lo,
    c lambda_j = 2^-j (j = 1..J): each term is bounded under the null by a nonnegative
    supermartingale started at 1, so P(exists t: E_t >= 1/alpha) <= alpha (Ville's inequality).
    """
    x = _check(x, lo, hi, 0.5)
    c = hi - lo
    lam = 2.0 ** -np.arange(1, GRID + 1) / c
    s, v = np.cumsum(x, axis=-1), _intrinsic_time(x, lo, hi)
    if at is not None:
        s, v = s[..., at], v[..., at]
    log_terms = lam * s[..., None] - _psi_e(lam, c) * v[..., None]
    top = log_terms.max(axis=-1, keepdims=True)
    with np.errstate(over="ignore"):
        return np.exp(top[..., 0] + np.log(np.mean(np.exp(log_terms - top), axis=-1)))


def threshold(alpha: float) -> float:
    """The e-value at which a one-sided e-process decides: 2/alpha. Each direction ("A better", "B better")
    spends alpha / 2, so that a tie, where both nulls hold, gives a wrong verdict with chance at most alpha.

    Examples
    --------
    >>> threshold(0.05)
    40.0
    """
    return 2 / alpha


def verdict(seq: pd.DataFrame, alpha: float) -> tuple[str, float]:
    """The verdict of a :func:`sequential_comparison` at its last round and the round from which it has held:
    "A better" where the e-process against "A is no better than B" is at least :func:`threshold` (2/alpha)
    *and* the (1 - alpha) confidence sequence lies below 0 (for calibration, which has no e-process: where
    the confidence sequence lies below 0), "B better" in the mirror case, else "undecided" (and NaN).

    Guarantee: each one-sided e-process crosses 2/alpha under its null with chance at most alpha / 2
    (Ville's inequality), at any round, so the chance of a wrong verdict is at most alpha, also when the two
    forecasters tie exactly (both nulls hold), whatever round the comparison stops at. Requiring the
    confidence sequence to agree (an intersection: it can only remove verdicts) means the verdict never
    contradicts the interval printed beside it; the round given is the first from which both held without
    interruption, so stopping there would have given the same verdict.

    Examples
    --------
    >>> seq = pd.DataFrame({"t": [1, 2, 3, 4], "low": -1.0, "high": [1.0, -0.1, 0.2, -0.1],
    ...                     "e_a_better": [1.0, 45.0, 50.0, 60.0], "e_b_better": [0.5, 0.1, 0.1, 0.1]})
    >>> verdict(seq, 0.05)  # the interval held 0 at round 3: decided from round 4
    ('A better', 4.0)
    >>> verdict(seq.assign(e_a_better=30.0), 0.05)  # 1/alpha < 30 < 2/alpha: no verdict
    ('undecided', nan)
    """
    a, b = (seq["high"] < 0).to_numpy(copy=True), (seq["low"] > 0).to_numpy(copy=True)
    if seq["e_a_better"].notna().any():
        a &= (seq["e_a_better"] >= threshold(alpha)).to_numpy()
        b &= (seq["e_b_better"] >= threshold(alpha)).to_numpy()
    for said, held in (("A better", a), ("B better", b)):
        if len(held) and held[-1]:
            start = len(held) - int(np.argmin(held[::-1])) if not held.all() else 0
            return said, float(seq["t"].iloc[start])
    return "undecided", math.nan


__all__ = ["confidence_sequence", "e_process", "stitching_boundary", "threshold", "verdict"]
