"""Fast exact sums for the Fermi-Sobolev kernel on [0, 1].

k(p, p') = min(p, p')^2 / 2 + min(1 - p, 1 - p')^2 / 2 + 5/6   (Vovk's K29 kernel).

Both sums split the kernel at p' <= p versus p' > p:

* p' <= p:  k = p'^2 / 2 + (1 - p)^2 / 2 + 5/6,
* p' >  p:  k = p^2 / 2 + (1 - p')^2 / 2 + 5/6   (both agree at p' = p),

so every sum reduces to prefix sums of W, W p^2 and W (1 - p)^2 ordered by p.

References
----------
Perdomo & Recht §8 (K29 and the Fermi-Sobolev kernel); Vovk, Takemura & Shafer 2005.
"""

from __future__ import annotations

from collections.abc import Sequence

import numba
import numpy as np

__all__ = ["fs_cross_sums", "fs_quadratic", "fs_diag", "fs_slack_sum"]

_C = 5.0 / 6.0


def _check(P, W) -> tuple[np.ndarray, np.ndarray]:
    """Validate at the boundary; return contiguous float64 arrays (P, W)."""
    P = np.ascontiguousarray(P, dtype=np.float64)
    W = np.ascontiguousarray(W, dtype=np.float64)
    if P.ndim != 1 or W.ndim != 1 or P.shape != W.shape:
        raise ValueError(f"P and W must be 1-D arrays of equal length; got shapes {P.shape} and {W.shape}")
    bad = ~((P >= 0.0) & (P <= 1.0))  # NaN fails both comparisons
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"P[{i}] = {float(P[i])!r} is outside [0, 1]: the kernel is defined on [0, 1]; clip forecasts first"
        )
    if not np.isfinite(W).all():
        i = int(np.flatnonzero(~np.isfinite(W))[0])
        raise ValueError(f"W[{i}] = {float(W[i])!r} is not finite: pass finite weights (e.g. w = y - p)")
    return P, W


@numba.njit(cache=True)
def _largest(x):
    """``x.max()`` of an array by a loop (numba's own max compiles for a third of a second); -1 for an empty
    one (the kernels' callers return before they call them with no rounds)."""
    if x.shape[0] == 0:
        return -1
    m = x[0]
    for i in range(1, x.shape[0]):
        if x[i] > m:
            m = x[i]
    return m


def fs_diag(P: Sequence[float] | np.ndarray) -> np.ndarray:
    """k(p, p) = p^2/2 + (1-p)^2/2 + 5/6 for each p.

    Examples
    --------
    >>> np.round(fs_diag([0.0, 0.5]), 6).tolist()
    [1.333333, 1.083333]
    """
    P = np.asarray(P, dtype=np.float64)
    return 0.5 * P**2 + 0.5 * (1.0 - P) ** 2 + _C


def fs_cross_sums(P: Sequence[float] | np.ndarray, W: Sequence[float] | np.ndarray) -> np.ndarray:
    """S_t = sum_{s<t} W_s k(P_t, P_s) for every t, in O(T log T).

    Parameters
    ----------
    P : array_like, shape (T,)
        Points in [0, 1], in time order.
    W : array_like, shape (T,)
        Finite weights (e.g. residuals y - p).

    Returns
    -------
    numpy.ndarray, shape (T,)
        S_0 = 0; S_t uses only the earlier rounds s < t.

    Notes
    -----
    A Fenwick tree over the ranks of P keeps, for the rounds seen so far, the sums
    of W, W P^2 and W (1-P)^2 at or below each rank; the rounds above P_t are the
    running totals minus those prefixes.

    Examples
    --------
    >>> np.round(fs_cross_sums([0.5, 0.5], [1.0, 1.0]), 6).tolist()
    [0.0, 1.083333]

    References
    ----------
    Perdomo & Recht §8.
    """
    P, W = _check(P, W)
    if len(P) == 0:
        return np.zeros(0)
    return _cross_sums_kernel(P, W, _dense_ranks(P))


def _dense_ranks(P: np.ndarray) -> np.ndarray:
    """The rank of each P among its distinct values (``np.unique(P, return_inverse=True)[1]``), made in
    the array of one argsort of P (no second array of T numbers)."""
    order = np.argsort(P)
    if len(P) >= 2**30:  # the in-place turn packs (rank, round) into one int64
        return _ranks(P, order, np.empty(len(P), dtype=np.int64))
    _ranks_in_place(P, order)
    return order


@numba.njit(cache=True)
def _ranks(P, order, rank):
    """Fill ``rank`` with the rank of each P among its distinct values, from any sort ``order`` of P."""
    r = -1
    for i in range(order.shape[0]):
        s = order[i]
        if i == 0 or P[s] != P[order[i - 1]]:
            r += 1
        rank[s] = r
    return rank


@numba.njit(cache=True)
def _ranks_in_place(P, order):
    """Turn ``order`` (order[i]: the round at sorted position i, fewer than 2^30 rounds) into the ranks
    of :func:`_ranks`, in place: each position first holds (rank << 32 | round), then every cycle of
    the permutation moves the ranks to their rounds (bit 62 marks the rounds done)."""
    low = (1 << 32) - 1
    done = 1 << 62
    r = -1
    for i in range(order.shape[0]):
        s = order[i]
        if i == 0 or P[s] != P[order[i - 1] & low]:
            r += 1
        order[i] = (r << 32) | s
    for i in range(order.shape[0]):
        if order[i] & done:
            continue
        packed = order[i]
        while True:
            t = packed & low
            nxt = order[t]
            order[t] = (packed >> 32) | done
            if t == i:
                break
            packed = nxt
    for i in range(order.shape[0]):
        order[i] ^= done


@numba.njit(cache=True, inline="always")
def _fenwick_round(f, m, r, p, w, tot0, tot2):
    """S_t of one round from the Fenwick trees (1-based, by rank; row i of ``f`` holds the three trees'
    cells i side by side) of W, W P^2 / 2 and W (1-P)^2 / 2 over the earlier rounds, then this round
    added: returns (S_t, tot0, tot2) with the new totals."""
    # Prefix over ranks <= r, i.e. earlier rounds with P_s <= P_t.
    a0 = 0.0
    a1 = 0.0
    a2 = 0.0
    i = r + 1
    while i > 0:
        a0 += f[i, 0]
        a1 += f[i, 1]
        a2 += f[i, 2]
        i -= i & (-i)
    below = a1 + 0.5 * (1.0 - p) ** 2 * a0
    above = (tot2 - a2) + 0.5 * p * p * (tot0 - a0)
    s_t = below + above + (5.0 / 6.0) * tot0
    v1 = 0.5 * w * p * p
    v2 = 0.5 * w * (1.0 - p) ** 2
    i = r + 1
    while i <= m:
        f[i, 0] += w
        f[i, 1] += v1
        f[i, 2] += v2
        i += i & (-i)
    return s_t, tot0 + w, tot2 + v2


@numba.njit(cache=True)
def _cross_sums_kernel(P, W, rank):
    T = P.shape[0]
    m = _largest(rank) + 1
    f = np.zeros((m + 1, 3))
    tot0 = 0.0
    tot2 = 0.0
    out = np.empty(T)
    for t in range(T):
        out[t], tot0, tot2 = _fenwick_round(f, m, rank[t], P[t], W[t], tot0, tot2)
    return out


def fs_slack_sum(
    P: Sequence[float] | np.ndarray,
    W: Sequence[float] | np.ndarray | None = None,
    *,
    y: Sequence[float] | np.ndarray | None = None,
) -> float:
    """sum_t 2 max(0, W_t S_t) with S = :func:`fs_cross_sums` (P, W): the search slack sigma of a
    Fermi-Sobolev run, ``np.sum(2.0 * np.maximum(0.0, W * fs_cross_sums(P, W)))`` without an array of
    T values (numpy's pairwise order, replayed as the terms come; equal to numpy's result up to
    rounding, since numpy may vectorise its own sum differently on another CPU). Give the
    outcomes ``y`` instead of W for the residuals W_t = y_t - P_t, made round by round.

    Examples
    --------
    >>> P, y = np.array([0.5, 0.25, 0.75]), np.array([1.0, 0.0, 1.0])
    >>> direct = float(np.sum(2.0 * np.maximum(0.0, (y - P) * fs_cross_sums(P, y - P))))
    >>> abs(fs_slack_sum(P, y=y) - direct) <= 1e-12 * max(1.0, abs(direct))
    True
    """
    if (W is None) == (y is None):
        raise ValueError("fs_slack_sum: give the weights W or the outcomes y (W = y - P), one of them")
    P, V = _check(P, W if y is None else y)
    if len(P) == 0:
        return 0.0
    return float(_slack_sum_kernel(P, V, y is not None, _dense_ranks(P), _pairwise_leaves(len(P))))


def _pairwise_leaves(n: int) -> np.ndarray:
    """The lengths of the blocks numpy's pairwise sum of n numbers adds directly, in order: it halves
    (to a multiple of 8) while more than 128 remain."""
    out: list[int] = []
    stack = [n]
    while stack:
        m = stack.pop()
        if m <= 128:
            out.append(m)
        else:
            half = m // 2 - (m // 2) % 8
            stack += [m - half, half]  # the first half on top: blocks come out in order
    return np.array(out, dtype=np.int64)


@numba.njit(cache=True)
def _pairwise_block(a, n):
    """numpy's sum of a block of n <= 128 numbers (eight running sums for n >= 8)."""
    if n < 8:
        res = 0.0
        for i in range(n):
            res += a[i]
        return res
    r0, r1, r2, r3, r4, r5, r6, r7 = a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]
    i = 8
    m = n - n % 8
    while i < m:
        r0 += a[i]
        r1 += a[i + 1]
        r2 += a[i + 2]
        r3 += a[i + 3]
        r4 += a[i + 4]
        r5 += a[i + 5]
        r6 += a[i + 6]
        r7 += a[i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[i]
        i += 1
    return res


@numba.njit(cache=True)
def _pairwise_combine(sums, n, at):
    """Add the block sums ``sums`` (from ``at[0]`` on) as numpy's pairwise sum of n numbers adds them."""
    if n <= 128:
        s = sums[at[0]]
        at[0] += 1
        return s
    half = n // 2 - (n // 2) % 8
    left = _pairwise_combine(sums, half, at)
    return left + _pairwise_combine(sums, n - half, at)


@numba.njit(cache=True)
def _slack_sum_kernel(P, V, residual, rank, leaves):
    # the cross sums of _cross_sums_kernel, each turned into its slack 2 max(0, W_t S_t) and summed
    # block by block as numpy sums an array
    T = P.shape[0]
    m = _largest(rank) + 1
    f = np.zeros((m + 1, 3))
    tot0 = 0.0
    tot2 = 0.0
    block = np.empty(128)
    sums = np.empty(leaves.shape[0])
    leaf = 0
    fill = 0
    for t in range(T):
        w = V[t] - P[t] if residual else V[t]
        s_t, tot0, tot2 = _fenwick_round(f, m, rank[t], P[t], w, tot0, tot2)
        x = w * s_t
        block[fill] = 2.0 * (0.0 if 0.0 >= x else x)  # np.maximum(0.0, x): NaN stays NaN
        fill += 1
        if fill == leaves[leaf]:
            sums[leaf] = _pairwise_block(block, fill)
            leaf += 1
            fill = 0
    return _pairwise_combine(sums, T, np.zeros(1, dtype=np.int64))


def fs_quadratic(
    P: Sequence[float] | np.ndarray, W: Sequence[float] | np.ndarray, order: np.ndarray | None = None
) -> float:
    """sum_{s,t} W_s W_t k(P_s, P_t) in O(T log T), by sorting and prefix sums.

    Order-free and computed independently of ``fs_cross_sums`` (it checks it).

    Parameters
    ----------
    P : array_like, shape (T,)
        Points in [0, 1].
    W : array_like, shape (T,)
        Finite weights.
    order : numpy.ndarray, optional
        ``np.argsort(P, kind="stable")``, when the caller has it.

    Returns
    -------
    float
        The quadratic form W^T K W (>= 0 up to rounding: k is a kernel).

    Examples
    --------
    >>> round(fs_quadratic([0.0, 1.0], [1.0, -1.0]), 12)
    1.0
    """
    P, W = _check(P, W)
    if len(P) == 0:
        return 0.0
    # In sorted order, for s before t P_s <= P_t and k = P_s^2/2 + (1-P_t)^2/2 + 5/6 (ties are harmless:
    # both branches of the kernel agree there). One pass makes the terms of the four sums of
    #   sum w^2 k(p, p) + 2 (sum w B2 + sum w (1-p)^2/2 B0 + 5/6 sum w B0),
    # B0, B2 the exclusive cumulative sums of w and w p^2 / 2, and adds each as numpy's pairwise sum
    # of its array would: the very numbers of the formula on sorted copies, without any copy.
    s = _fs_sums(P, W, np.argsort(P, kind="stable") if order is None else order, _pairwise_leaves(len(P)))
    return float(s[0] + 2.0 * ((s[1] + s[2]) + _C * s[3]))


@numba.njit(cache=True)
def _fs_sums(P, W, order, leaves):
    """fs_quadratic's four sums over the sorted order (0: w^2 k(p, p); 1: w B2; 2: w (1-p)^2/2 B0;
    3: w B0), each term as numpy evaluates it on the sorted arrays, each sum in numpy's pairwise order."""
    n = order.shape[0]
    block = np.empty((4, 128))
    sums = np.empty((4, leaves.shape[0]))
    leaf = 0
    fill = 0
    b0 = 0.0  # exclusive cumulative sums (sequential, as np.cumsum) of w and of 0.5 w p^2
    b2 = 0.0
    for i in range(n):
        s = order[i]
        p = P[s]
        w = W[s]
        q = 1.0 - p
        block[0, fill] = (w * w) * ((0.5 * (p * p) + 0.5 * (q * q)) + _C)
        block[1, fill] = w * b2
        block[2, fill] = ((w * 0.5) * (q * q)) * b0
        block[3, fill] = w * b0
        a2 = (0.5 * w) * (p * p)
        b0 = w if i == 0 else b0 + w
        b2 = a2 if i == 0 else b2 + a2
        fill += 1
        if fill == leaves[leaf]:
            for j in range(4):
                sums[j, leaf] = _pairwise_block(block[j], fill)
            leaf += 1
            fill = 0
    out = np.empty(4)
    for j in range(4):
        out[j] = _pairwise_combine(sums[j], n, np.zeros(1, dtype=np.int64))
    return out
