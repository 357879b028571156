"""Regret of squared-loss forecasts against comparator classes.

References
----------
Perdomo & Recht, §5-§6; certificates: docs/ERRATA.md.
"""

from __future__ import annotations

import numpy as np


def regret_constant(p: np.ndarray, y: np.ndarray) -> float:
    """sum (p_t - y_t)^2 - min_c sum (c - y_t)^2; the best constant is the mean of y.

    Examples
    --------
    >>> regret_constant(np.array([1.0, 0.0]), np.array([1.0, 0.0]))
    -0.5
    """
    if not len(p):
        return 0.0
    return float(np.sum((p - y) ** 2) - np.sum((y - y.mean()) ** 2))


def best_linear_weights(X: np.ndarray, y: np.ndarray, M: float) -> np.ndarray:
    """argmin over ||w|| <= M of sum (y_t - <w, x_t>)^2, solved exactly.

    Unconstrained least squares when its (minimum-norm) solution is inside the ball;
    otherwise the ridge solution whose norm is M, found on the eigenbasis of X^T X
    (the norm of the ridge path decreases in the multiplier, so the root is unique).
    """
    if M < 0:
        raise ValueError(f"M={M!r}: the comparator norm bound must be >= 0")
    X = np.asarray(X, float).reshape(len(y), -1)
    if X.shape[1] == 0 or M == 0:
        return np.zeros(X.shape[1])
    evals, V = np.linalg.eigh(X.T @ X)
    b = V.T @ (X.T @ y)
    keep = evals > 1e-12 * max(evals.max(), 1.0)
    w_ls = V[:, keep] @ (b[keep] / evals[keep])
    if np.linalg.norm(w_ls) <= M:
        return w_ls

    b, evals, V = b[keep], evals[keep], V[:, keep]  # X^T y has no component in the null space

    def norm_minus_M(lam: float) -> float:
        return float(np.linalg.norm(b / (evals + lam)) - M)

    if norm_minus_M(0.0) <= 0:  # ||w_ls|| = M within rounding (the two bases round differently)
        return V @ (b / evals)
    from scipy.optimize import brentq  # here: only a binding constraint needs it (a quarter second to import)

    hi = 1.0
    while norm_minus_M(hi) > 0:
        hi *= 2.0
    lam = brentq(norm_minus_M, 0.0, hi, xtol=1e-15, rtol=1e-15, maxiter=500)
    return V @ (b / (evals + lam))


def regret_linear(p: np.ndarray, y: np.ndarray, X: np.ndarray, M: float, intercept: bool = False) -> float:
    """sum (p_t - y_t)^2 - min_{||w|| <= M} sum (<w, x_t> - y_t)^2 (§6; comparator h(x) = <w, x>);
    ``intercept``: the comparators <w, x> + a with ||(w, a)|| <= M. NaN when X^T X overflows.

    Examples
    --------
    >>> X, y = np.zeros((2, 1)), np.array([1.0, 1.0])
    >>> regret_linear(np.array([1.0, 1.0]), y, X, 1.0), regret_linear(np.array([1.0, 1.0]), y, X, 1.0, intercept=True)
    (-2.0, 0.0)
    """
    if not len(p):
        return 0.0
    X = np.asarray(X, float).reshape(len(y), -1)
    if intercept:
        X = np.hstack((X, np.ones((len(y), 1))))
    with np.errstate(over="ignore", invalid="ignore"):
        if X.size and not np.all(np.isfinite(X.T @ X)):
            return float("nan")  # the comparator's normal equations overflow: no number to report
    w = best_linear_weights(X, y, M)
    return float(np.sum((p - y) ** 2) - np.sum((X @ w - y) ** 2))
