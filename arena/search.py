"""The anticorrelation search (§3 Alg. 2) and its randomized two-point variant (§10 Alg. 6).

Every defensive forecaster in the project finds its forecast with one of these two
functions; nothing else bisects.

References
----------
Perdomo & Recht, §3 (Algorithm 2) and §10 (Algorithm 6).
"""

from __future__ import annotations

from collections.abc import Callable

from arena.protocols import Forecast

DEFAULT_TOL = 2.0**-34
MIN_TOL = 2.0**-52


def anticorrelation_search(
    S: Callable[[float], float], lo: float = 0.0, hi: float = 1.0, tol: float = DEFAULT_TOL
) -> float:
    """Find p with S(p) ~ 0 for a continuous S (Algorithm 2).

    Returns ``hi`` if S(hi) >= 0, ``lo`` if S(lo) <= 0 (the exact branches); otherwise
    bisects on dyadic midpoints keeping S(lo) > 0 > S(hi), going right when S(mid) > 0,
    and returns the midpoint of the last interval (width <= ``tol``).

    Examples
    --------
    >>> round(anticorrelation_search(lambda p: 0.3 - p, tol=1e-9), 8)
    0.3
    >>> anticorrelation_search(lambda p: 1.0), anticorrelation_search(lambda p: -1.0)
    (1.0, 0.0)
    """
    if not tol >= MIN_TOL:
        raise ValueError(
            f"tol={tol!r}: the search precision must be a width >= 2**-52 (finer widths are "
            f"below double precision on [0, 1]), e.g. 1e-10"
        )
    if S(hi) >= 0:
        return hi
    if S(lo) <= 0:
        return lo
    while hi - lo > tol:
        mid = 0.5 * (lo + hi)
        if S(mid) > 0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def two_point_search(
    S: Callable[[float], float],
    lo: float,
    hi: float,
    width: Callable[[float, float], float],
    increasing: bool = False,
    max_iter: int = 200,
) -> Forecast:
    """Randomized anticorrelation search for an S that may jump (§10 Alg. 6).

    ``increasing=False`` is the orientation of Algorithm 2 (S(lo) > 0 > S(hi));
    ``increasing=True`` that of Algorithm 6 (S(lo) < 0 < S(hi)). Exact branches first;
    otherwise bisect until ``hi - lo <= width(S(lo), S(hi))`` and return ``lo`` with
    probability tau = |S(hi)| / (|S(lo)| + |S(hi)|) and ``hi`` otherwise, so that
    tau*S(lo) + (1 - tau)*S(hi) = 0. A midpoint with S(mid) = 0 is returned surely.

    Examples
    --------
    >>> step = lambda p: 1.0 if p < 0.5 else -1.0          # no root: it jumps at 1/2
    >>> f = two_point_search(step, 0.0, 1.0, lambda a, b: 1e-6)
    >>> f.points[1] - f.points[0] <= 1e-6, f.probs
    (True, (0.5, 0.5))
    """
    s_lo, s_hi = S(lo), S(hi)
    sign = 1.0 if increasing else -1.0  # orient so that we keep s(lo) < 0 < s(hi)
    if sign * s_lo >= 0:
        return Forecast.point(lo)
    if sign * s_hi <= 0:
        return Forecast.point(hi)
    for _ in range(max_iter):
        if hi - lo <= width(s_lo, s_hi):
            break
        mid = 0.5 * (lo + hi)
        s_mid = S(mid)
        if s_mid == 0:
            return Forecast.point(mid)
        if sign * s_mid < 0:
            lo, s_lo = mid, s_mid
        else:
            hi, s_hi = mid, s_mid
    tau = abs(s_hi) / (abs(s_lo) + abs(s_hi))
    return Forecast.two_point(lo, hi, tau)
