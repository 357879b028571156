"""Exact smooth calibration error (smCE) of a forecast sequence.

smCE = sup over 1-Lipschitz f of |sum_t f(p_t) (y_t - p_t)|, in two forms:

* ``kind="paper"``: f maps [0, 1] into [0, 1] (Perdomo & Recht, §8);
* ``kind="pm"``: f maps [0, 1] into [-1, 1] (the usual definition).

The two are equal for forecasts in [0, 1] (``smce``'s Notes), so games report one, ``smce``.

Only the values of f at the distinct forecasts matter (any feasible set of values
extends to a 1-Lipschitz function on [0, 1] by linear interpolation), so both forms
are linear programs over n <= T variables. ``smce_lp`` solves that program with
HiGHS (an independent check for small T); ``smce`` solves it exactly in
O(T log T) with a dynamic program on its dual (see ``_pm_value``).

References
----------
Perdomo & Recht §8; Kakade & Foster 2004.
"""

from __future__ import annotations

from collections.abc import Sequence

import numba
import numpy as np

__all__ = ["smce", "smce_lp", "smce_curve"]

_KINDS = ("paper", "pm")


# --------------------------------------------------------------------------- input


def _check_inputs(p, y, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """Validate at the boundary; return float arrays (p, y)."""
    if kind not in _KINDS:
        raise ValueError(f"kind={kind!r} is not supported; use 'paper' (f in [0,1]) or 'pm' (f in [-1,1])")
    p = np.asarray(p, dtype=float)
    y = np.asarray(y, dtype=float)
    if p.ndim != 1 or y.ndim != 1 or p.shape != y.shape:
        raise ValueError(f"p and y must be 1-D arrays of equal length; got shapes {p.shape} and {y.shape}")
    _check_unit_interval(p, "p", "forecasts must be probabilities; clip them to [0, 1] first")
    _check_unit_interval(y, "y", "outcomes must be in [0, 1] (bits or their probabilities)")
    return p, y


def _check_unit_interval(a: np.ndarray, name: str, fix: str) -> None:
    bad = ~((a >= 0.0) & (a <= 1.0))  # NaN fails both comparisons, so it is caught too
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name}[{i}] = {float(a[i])!r} is outside [0, 1]: {fix}")


def _aggregate(p: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct sorted forecasts v and the summed residuals W at each of them.

    Equal forecasts must be merged: f takes one value there, so only the sum of
    their residuals enters the objective.
    """
    return _aggregate_sorted(p, y, np.argsort(p, kind="stable"))  # np.unique and np.bincount's numbers, in less memory


@numba.njit(cache=True)
def _keep_below(order, n, t):
    """Keep the entries < t of ``order[:n]`` at its front, in their order; their number."""
    k = 0
    for i in range(n):
        if order[i] < t:
            order[k] = order[i]
            k += 1
    return k


@numba.njit(cache=True)
def _aggregate_sorted(p, y, order):
    """``_aggregate`` of the rounds ``order`` (sorted stably by p, so equal forecasts come in round
    order): their distinct values and residuals summed in round order, as ``np.bincount`` sums them."""
    n = 0
    for i in range(order.shape[0]):
        if i == 0 or p[order[i]] != p[order[i - 1]]:
            n += 1
    v = np.empty(n)
    W = np.empty(n)
    j = -1
    for i in range(order.shape[0]):
        s = order[i]
        if i == 0 or p[s] != p[order[i - 1]]:
            j += 1
            v[j] = p[s]
            W[j] = 0.0
        W[j] += y[s] - p[s]
    return v, W


# --------------------------------------------------------------------------- LP


def smce_lp(p: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray, kind: str = "paper") -> float:
    """Smooth calibration error by linear programming (HiGHS); for small T.

    Parameters
    ----------
    p : array_like, shape (T,)
        Forecasts in [0, 1].
    y : array_like, shape (T,)
        Outcomes in [0, 1].
    kind : {"paper", "pm"}
        Range of the test functions: [0, 1] (paper) or [-1, 1] (pm).

    Returns
    -------
    float
        sup over 1-Lipschitz f of |sum_t f(p_t)(y_t - p_t)| (not divided by T).

    Examples
    --------
    >>> round(smce_lp([0.2, 0.2, 0.8], [1, 0, 1]), 6)
    0.8

    References
    ----------
    Perdomo & Recht §8; Kakade & Foster 2004.
    """
    p, y = _check_inputs(p, y, kind)
    if len(p) == 0:
        return 0.0
    v, W = _aggregate(p, y)
    lo = 0.0 if kind == "paper" else -1.0
    best_max = _lp_max(W, np.diff(v), lo)
    best_min = -_lp_max(-W, np.diff(v), lo)
    return float(max(best_max, -best_min, 0.0))


def _lp_max(W: np.ndarray, d: np.ndarray, lo: float) -> float:
    """max sum_i W_i f_i over lo <= f_i <= 1 and |f_{i+1} - f_i| <= d_i."""
    n = len(W)
    if n == 1:
        return float(max(W[0] * lo, W[0]))
    # Rows i and n-1+i encode f_i - f_{i+1} <= d_i and f_{i+1} - f_i <= d_i.
    rows = np.arange(n - 1)
    from scipy import sparse  # here: only the reference LP needs scipy.optimize (0.4 s to import)
    from scipy.optimize import linprog

    D = sparse.csr_matrix(
        (np.r_[np.ones(n - 1), -np.ones(n - 1)], (np.r_[rows, rows], np.r_[rows, rows + 1])),
        shape=(n - 1, n),
    )
    A = sparse.vstack([D, -D]).tocsr()
    res = linprog(-W, A_ub=A, b_ub=np.r_[d, d], bounds=(lo, 1.0), method="highs")
    if res.status != 0:
        raise RuntimeError(f"HiGHS failed on the smCE linear program: {res.message}")
    return float(-res.fun)


# --------------------------------------------------------------------------- exact DP


def smce(
    p: Sequence[float] | np.ndarray,
    y: Sequence[float] | np.ndarray,
    kind: str = "paper",
    order: np.ndarray | None = None,
) -> float:
    """Exact smooth calibration error in O(T log T).

    Parameters
    ----------
    p : array_like, shape (T,)
        Forecasts in [0, 1].
    y : array_like, shape (T,)
        Outcomes in [0, 1].
    kind : {"paper", "pm"}
        Range of the test functions: [0, 1] (paper, f: [0,1] -> [0,1]) or
        [-1, 1] (pm, the usual smCE). The two are equal (see Notes).
    order : numpy.ndarray, optional
        ``np.argsort(p, kind="stable")``, when the caller has it (the forecasts are then not sorted again).

    Returns
    -------
    float
        sup over 1-Lipschitz f of |sum_t f(p_t)(y_t - p_t)| (not divided by T);
        0.0 for T = 0.

    Notes
    -----
    With g = 2f - 1 the paper form becomes a [-1, 1] problem with Lipschitz
    constant 2, and the feasible g are symmetric under g -> -g, hence
    smCE_paper = |sum w| / 2 + V(W, 2d) / 2 and smCE_pm = V(W, d), where V is the
    value computed by ``_pm_value``. Agrees with ``smce_lp`` to rounding.

    The two forms are in fact equal on [0, 1]: a 1-Lipschitz f there has range
    width <= 1, and the objective is linear in a constant shift of f, so a best
    f in [-1, 1] touches 1 or -1 and then lies in [0, 1] or [-1, 0]; the latter
    is the negative of a [0, 1] function. So the referee reports one value
    (``smce``); the two forms are computed independently here (with Lipschitz
    constants 1 and 2 in ``_pm_value``) and by ``smce_lp``, which the tests compare.

    Examples
    --------
    >>> smce([0.5, 0.5], [1, 1])
    1.0
    >>> smce([0.0, 1.0], [0.25, 0.5], kind="pm")
    0.5
    >>> round(smce([0.2, 0.2, 0.8], [1, 0, 1]), 6)
    0.8

    References
    ----------
    Perdomo & Recht §8; Kakade & Foster 2004.
    """
    p, y = _check_inputs(p, y, kind)
    if len(p) == 0:
        return 0.0
    v, W = _aggregate(p, y) if order is None else _aggregate_sorted(p, y, order)
    return _from_aggregate(v, W, kind)


def _from_aggregate(v: np.ndarray, W: np.ndarray, kind: str) -> float:
    if kind == "pm":
        return float(max(_pm_value(v, W), 0.0))
    return float(abs(W.sum()) / 2.0 + max(_pm_value(v, W, 2.0), 0.0) / 2.0)


def smce_curve(
    p: Sequence[float] | np.ndarray,
    y: Sequence[float] | np.ndarray,
    checkpoints: Sequence[int] | np.ndarray,
    kind: str = "paper",
    order: np.ndarray | None = None,
) -> np.ndarray:
    """smCE of each prefix ``p[:t], y[:t]`` for t in ``checkpoints``, sorting the forecasts once.

    The rounds are sorted once, stably; the largest prefix first, each prefix keeps the
    sorted rounds before it (in place), and one pass sums its residuals per value in
    round order: each value is exactly ``smce(p[:t], y[:t], kind)``, with no sort per
    checkpoint and no copy of the run.

    Parameters
    ----------
    p, y : array_like, shape (T,)
        Forecasts and outcomes in [0, 1].
    checkpoints : sequence of int
        Prefix lengths, each in [0, T].
    kind : {"paper", "pm"}
        As in ``smce``.
    order : numpy.ndarray, optional
        ``np.argsort(p, kind="stable")`` of the whole run, when the caller has it: the rounds of a prefix keep
        their places in it (a stable sort orders by value, then round), so no prefix is sorted again.
    Returns
    -------
    numpy.ndarray
        Float array, one smCE (not divided by t) per checkpoint.

    Examples
    --------
    >>> smce_curve([0.5, 0.5, 0.5], [1, 0, 1], [0, 1, 2, 3]).tolist()
    [0.0, 0.5, 0.0, 0.5]

    References
    ----------
    Perdomo & Recht §8; Kakade & Foster 2004.
    """
    p, y = _check_inputs(p, y, kind)
    ts = np.asarray(checkpoints)
    if ts.ndim != 1 or (ts.size and not np.issubdtype(ts.dtype, np.integer)):
        raise ValueError("checkpoints must be a 1-D sequence of integers (prefix lengths)")
    if ts.size and (ts.min() < 0 or ts.max() > len(p)):
        raise ValueError(f"checkpoints must lie in [0, {len(p)}]; got range [{ts.min()}, {ts.max()}]")
    out = np.zeros(ts.size)
    if not ts.size or ts.max() == 0:
        return out
    n = int(ts.max())
    if order is None or len(order) != len(p):
        order = np.argsort(p[:n], kind="stable")
    else:  # the stable order of p[:n], a copy (the prefixes below are kept in it, in place)
        order = order[order < n] if n < len(p) else order.copy()
    for i in np.argsort(-ts, kind="stable").tolist():  # largest t first: each prefix is kept from the last
        t = int(ts[i])
        if t:
            n = _keep_below(order, n, t)
            v, W = _aggregate_sorted(p, y, order[:n])
            out[i] = _from_aggregate(v, W, kind)
    return out


def _pm_value(v: np.ndarray, W: np.ndarray, lip: float = 1.0) -> float:
    """V(W, d) = max sum_i W_i g_i over |g_i| <= 1, |g_{i+1} - g_i| <= d_i, d_i = lip (v_{i+1} - v_i).

    Solved through the LP dual (Abel summation with U_i = u_1 + ... + u_i):

        V = min over u with sum(u) = 0 of  sum_i |W_i - u_i| + sum_{i<n} d_i |U_i|.

    The prefix cost C_k(U) (best cost with U_k = U) is convex piecewise linear and
    obeys C_k = (C_{k-1} + d_{k-1}|.|) inf-convolved with |. - W_k|, from
    C_0 = |.|. Inf-convolution with |. - W| shifts every breakpoint by W and clamps
    the slopes to [-1, 1], i.e. removes slope weight d_{k-1} from each end. Since
    all breakpoints shift together and new ones enter at a known point, one
    double-ended priority queue (an interval heap: each breakpoint stored once, with
    its weight, 16 bytes) suffices: every breakpoint is pushed and removed at most
    once, so the cost is O(n log n) in the worst case (a primal "window max" slope
    trick can move the same breakpoints back and forth between its heaps).
    """
    return float(
        _pm_value_kernel(
            np.ascontiguousarray(v, dtype=np.float64), np.ascontiguousarray(W, dtype=np.float64), float(lip)
        )
    )


# ----- numba kernels: an interval heap of (key, weight) -------------------------------------
# Element i is (h[2i], h[2i + 1]) = (key, weight), side by side: a sift reads one cache line per
# level. Node j holds the elements 2j (its low end) and 2j + 1 (its high end, absent in a last node
# of one element) with key(2j) <= key(2j + 1); a node's interval lies inside its parent's. So the
# smallest key is element 0's and the largest element 1's (element 0's when there is one).


@numba.njit(cache=True, inline="always")
def _swap(h, a, b):
    t = h[2 * a]
    h[2 * a] = h[2 * b]
    h[2 * b] = t
    t = h[2 * a + 1]
    h[2 * a + 1] = h[2 * b + 1]
    h[2 * b + 1] = t


@numba.njit(cache=True)
def _ih_push(h, cnt, x, w):
    """Insert key x with weight w into the cnt elements; the new count."""
    pos = cnt
    h[2 * pos] = x
    h[2 * pos + 1] = w
    if pos == 0:
        return cnt + 1
    node = pos >> 1
    if pos & 1:  # the node's high end: keep low <= high, then up the low or the high side
        if x < h[2 * pos - 2]:
            _swap(h, pos, pos - 1)
            pos -= 1
            low = True
        else:
            low = False
    else:  # a node of one element: against its parent's interval
        parent = (node - 1) >> 1
        if x < h[4 * parent]:
            low = True
        elif x > h[4 * parent + 2]:
            low = False
        else:
            return cnt + 1
    while node > 0:
        parent = (node - 1) >> 1
        up = 2 * parent if low else 2 * parent + 1
        if (h[2 * pos] < h[2 * up]) if low else (h[2 * pos] > h[2 * up]):
            _swap(h, pos, up)
            pos = up
            node = parent
        else:
            break
    return cnt + 1


@numba.njit(cache=True)
def _ih_pop_min(h, cnt):
    """Remove the element of the smallest key; the new count."""
    cnt -= 1
    if cnt == 0:
        return cnt
    h[0] = h[2 * cnt]
    h[1] = h[2 * cnt + 1]
    lo = 0
    while True:
        if lo + 1 < cnt and h[2 * lo] > h[2 * lo + 2]:
            _swap(h, lo, lo + 1)
        child = 2 * lo + 2  # low end of the first child node (node lo/2 has children lo+1, lo+2)
        if child >= cnt:
            break
        if child + 2 < cnt and h[2 * child + 4] < h[2 * child]:
            child += 2
        if h[2 * child] < h[2 * lo]:
            _swap(h, child, lo)
            lo = child
        else:
            break
    return cnt


@numba.njit(cache=True)
def _ih_pop_max(h, cnt):
    """Remove the element of the largest key; the new count."""
    cnt -= 1
    if cnt <= 1:  # the largest was the last element (the root's high end) or the only one
        return cnt
    h[2] = h[2 * cnt]
    h[3] = h[2 * cnt + 1]
    node = 0
    while True:
        lo = 2 * node
        hi = lo + 1 if lo + 1 < cnt else lo
        if hi != lo and h[2 * lo] > h[2 * hi]:
            _swap(h, lo, hi)
        c = 2 * node + 1  # first child node
        if 2 * c >= cnt:
            break
        best = 2 * c + 1 if 2 * c + 1 < cnt else 2 * c  # its high end (or its only element)
        if 2 * c + 2 < cnt:
            other = 2 * c + 3 if 2 * c + 3 < cnt else 2 * c + 2
            if h[2 * other] > h[2 * best]:
                best = other
        if h[2 * best] > h[2 * hi]:
            _swap(h, best, hi)
            node = best >> 1
        else:
            break
    return cnt


@numba.njit(cache=True)
def _pm_value_kernel(v, W, lip):
    n = W.shape[0]
    # Stored position = actual position - shift, where shift = W_1 + ... + W_k is
    # the common translation applied since; so keys never need updating.
    h = np.empty(2 * n, dtype=np.float64)  # the breakpoints: (stored position, slope weight), an interval heap
    cnt = np.int64(0)  # not the literal 0: _ih_push is compiled once, for int64
    shift = 0.0
    # C(U) = -U + beta left of every breakpoint (the left slope is -1 after clamping).
    beta = 0.0
    for k in range(n):
        gap = 0.0 if k == 0 else lip * (v[k] - v[k - 1])
        # Add gap*|U| (for k = 0: C_0 = |U|, a breakpoint of weight 2 at 0).
        cnt = _ih_push(h, cnt, -shift, 2.0 if k == 0 else 2.0 * gap)
        if gap > 0.0:
            # Clamp the left slope back to -1: removing weight c at x moves the
            # left line to slope +c through (x, C(x)), so beta -= c * x.
            rest = gap
            while rest > 0.0 and cnt > 0:  # cnt > 0 always holds; guards rounding
                x = h[0] + shift
                w = h[1]
                if w <= rest:
                    rest -= w
                    beta -= w * x
                    cnt = _ih_pop_min(h, cnt)
                else:
                    h[1] = w - rest
                    beta -= rest * x
                    rest = 0.0
            # Clamp the right slope back to +1 (the left line is unaffected).
            rest = gap
            while rest > 0.0 and cnt > 0:
                top = 3 if cnt > 1 else 1  # the weight of the largest key
                w = h[top]
                if w <= rest:
                    rest -= w
                    cnt = _ih_pop_max(h, cnt)
                else:
                    h[top] = w - rest
                    rest = 0.0
        # Inf-convolve with |. - W_k|: translate by W_k; the line -U + beta becomes
        # -(U - W_k) + beta.
        shift += W[k]
        beta += W[k]
    # V = C_n(0) = beta + sum over breakpoints x < 0 of wt * (0 - x).
    value = beta
    for i in range(cnt):
        x = h[2 * i] + shift
        if x < 0.0:
            value -= h[2 * i + 1] * x
    return value
