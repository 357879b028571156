"""Regret of squared-loss forecasts against comparator classes.

References
----------
Perdomo & Recht, §5-§6; certificates: docs/ERRATA.md.
"""

from __future__ import annotations

import math

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
    hi = 1.0
    while norm_minus_M(hi) > 0:
        hi *= 2.0
    lam = brent_root(norm_minus_M, 0.0, hi, xtol=1e-15, rtol=1e-15, maxiter=500)
    return V @ (b / (evals + lam))


def brent_root(f, a: float, b: float, xtol: float, rtol: float, maxiter: int) -> float:
    """A root of ``f`` bracketed by [a, b] (f(a) and f(b) of opposite signs), by Brent's method in the form of
    SciPy's ``brentq`` (Brent 1973, ch. 4: inverse quadratic or linear interpolation where it makes a short
    enough step, bisection where not), step for step: the same floats as ``scipy.optimize.brentq`` with the
    same tolerances, and the same errors (tests/test_metrics.py checks both), without importing
    scipy.optimize (0.15 s, on the way of every worker of a tournament). Signs are compared by their sign
    bits, as SciPy does (a product of two tiny values would underflow to zero).

    Raises ValueError where f(a) and f(b) have the same sign, f gives NaN or ``rtol`` is under 4 machine
    epsilons, and RuntimeError where ``maxiter`` steps do not converge (``brentq``'s default ``disp=True``).

    >>> round(brent_root(lambda x: x * x - 2.0, 0.0, 2.0, 1e-15, 1e-15, 100), 12)
    1.414213562373
    """
    if rtol < 4 * np.finfo(float).eps:
        raise ValueError(f"rtol={rtol!r} is too small: give at least {4 * np.finfo(float).eps:g}")

    def value(x: float) -> float:
        fx = float(f(x))
        if math.isnan(fx):
            raise ValueError(f"the function value at x={x} is NaN: the root finder cannot go on")
        return fx

    def negative(v: float) -> bool:
        return math.copysign(1.0, v) < 0

    x_prev, x_cur = float(a), float(b)
    f_prev, f_cur = value(x_prev), value(x_cur)
    if f_prev == 0:
        return x_prev
    if f_cur == 0:
        return x_cur
    if negative(f_prev) == negative(f_cur):
        raise ValueError(f"f({a}) = {f_prev} and f({b}) = {f_cur} have the same sign: no root bracketed")
    x_blk = f_blk = step_prev = step = 0.0
    for _ in range(maxiter):
        if f_prev != 0 and f_cur != 0 and negative(f_prev) != negative(f_cur):
            x_blk, f_blk = x_prev, f_prev  # the root lies between the last two iterates: they become the bracket
            step_prev = step = x_cur - x_prev
        if abs(f_blk) < abs(f_cur):  # keep the best iterate in x_cur
            x_prev, x_cur, x_blk = x_cur, x_blk, x_cur
            f_prev, f_cur, f_blk = f_cur, f_blk, f_cur
        tol = (xtol + rtol * abs(x_cur)) / 2
        half = (x_blk - x_cur) / 2
        if f_cur == 0 or abs(half) < tol:
            return x_cur
        bisect = True
        if abs(step_prev) > tol and abs(f_cur) < abs(f_prev):
            if x_prev == x_blk:  # secant through the two ends
                trial = -f_cur * (x_cur - x_prev) / (f_cur - f_prev)
            else:  # inverse quadratic through the three points
                d_prev = (f_prev - f_cur) / (x_prev - x_cur)
                d_blk = (f_blk - f_cur) / (x_blk - x_cur)
                trial = -f_cur * (f_blk * d_blk - f_prev * d_prev) / (d_blk * d_prev * (f_blk - f_prev))
            limit = 3 * abs(half) - tol
            if 2 * abs(trial) < (abs(step_prev) if abs(step_prev) < limit else limit):
                step_prev, step, bisect = step, trial, False
        if bisect:
            step_prev = step = half
        x_prev, f_prev = x_cur, f_cur
        x_cur += step if abs(step) > tol else (tol if half > 0 else -tol)
        f_cur = value(x_cur)
    raise RuntimeError(f"the root finder did not converge in {maxiter} steps (last iterate {x_cur})")


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
