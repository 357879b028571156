"""The Fermi-Sobolev sums of past forecasts in a crit-bit trie, and the anticorrelation search over it.

With k_FS(p, p') = min(p,p')^2/2 + min(1-p,1-p')^2/2 + 5/6 the summary function splits
at p_s < p versus p_s >= p (both branches agree at p_s = p, so ties do not matter):

    S_FS(p) = A2/2 + (1-p)^2 A0/2 + p^2 (W - A0)/2 + (Q2 - B2)/2 + 5/6 W,

where A0, A2, B2 sum w_s, w_s p_s^2, w_s (1-p_s)^2 over the past points with p_s < p and
W, Q2 are the totals of w_s and w_s (1-p_s)^2. Kernel DF adds the finite part of a sum
kernel (1 + k_FS + pp' + <x,x'>, §8) as a quadratic a + b p + c p^2 whose coefficients come
from the running sum of w_s Phi(x_s, p_s):

    S(p) = c_fs S_FS(p) + a + b p + c p^2.

Past forecasts are dyadic: the bisection of :func:`arena.search.anticorrelation_search`
with ``n`` halvings (the least n with 2^-n <= tol, whatever tol is) only ever returns 0, 1
or a midpoint (2j+1) 2^-(n+1). They are stored as integer keys k = p 2^D, D = n + 1, in a
path-compressed binary trie (crit-bit / Patricia) whose every node carries the three
sums of its subtree. The bisection walks the trie down with the current dyadic interval:
it keeps the sums over keys left of the interval and the node holding exactly the keys
inside it, so every midpoint costs O(1) and one forecast O(log 1/tol); an insert costs the
same. A trie over T distinct keys has at most 2T - 1 nodes (memory O(T)).

The compiled search takes exactly the path of ``anticorrelation_search`` (the same
exact branches, dyadic midpoints, tie rule S(mid) > 0 -> right and final midpoint); only
the floating-point rounding of S differs from the direct O(t) sum, so forecasts agree to
the last bisection step unless S(mid) is within rounding of 0.

Examples
--------
>>> trie = FSTrie.for_tol(2.0**-10)
>>> trie.depth, trie.insert(0.25, 1.0), trie.insert(0.75, -1.0), trie.n_nodes
(11, None, None, 3)
>>> [round(float(v), 6) for v in trie.sums_below(0.5)]   # w, w p^2, w (1-p)^2 over p_s < 1/2
[1.0, 0.0625, 0.5625]
>>> p = trie.search(n_halvings=10)
>>> abs(trie.value(p)) < 1e-3
True

References
----------
Perdomo & Recht §3 (Alg. 2) and §8 (K29); Vovk, Takemura & Shafer 2005.
"""

from __future__ import annotations

import math

import numba
import numpy as np

__all__ = ["MAX_DEPTH", "FSTrie", "search_depth", "trie_insert", "trie_search"]

_C = 5.0 / 6.0
#: Deepest key grid: keys k = p 2^D must be exact doubles and the midpoints exact sums.
MAX_DEPTH = 53


def search_depth(tol: float) -> tuple[int, int]:
    """(n, D): the bisection's number of halvings for ``tol`` and the depth D = n + 1 of its answers.

    ``anticorrelation_search`` halves [0, 1] while the width exceeds ``tol``, so it stops at
    the first width 2^-n <= tol and returns a point of the grid 2^-(n+1) Z. A ``tol`` that is
    not a power of two therefore acts as the next power of two below it.

    Examples
    --------
    >>> search_depth(2.0**-34), search_depth(1e-10)
    ((34, 35), (34, 35))
    """
    if not 0 < tol < 1:
        raise ValueError(f"tol={tol!r}: the search precision must be in (0, 1), e.g. 2**-34")
    n, width = 0, 1.0
    while width > tol:  # the same float test as the search's loop
        width *= 0.5
        n += 1
    return n, n + 1


# ----------------------------------------------------------------------------------------
# compiled kernels. Node i of the trie is the row nodes[i] of a float64 array of 5 columns
# (40 bytes: memory and cache lines are what a deep search waits for), the first two read
# as integers through an int64 view of the same memory:
#   word 0: the leaf's key (any key of the subtree for an inner node) | (crit bit + 1) << 56
#           (crit bit -1: a leaf); word 1: left child | right child << 32;
#   S0, S2, SQ: sums of w, w p^2, w (1-p)^2 over the subtree.
# meta = [n_nodes, root, hint, hint_key]: the search leaves in ``hint`` the deepest node on
# the path of its answer ``hint_key``, so that inserting that answer (what every round
# does) starts its walk to a leaf there instead of at the root.

S0, S2, SQ = 2, 3, 4
_WIDTH = 5
_KEY_BITS = 56  # key < 2^54 in the low bits of word 0, crit bit + 1 above
_KEY_MASK = (1 << _KEY_BITS) - 1
_CHILD_MASK = (1 << 32) - 1
_MAX_NODES = 2**31 - 1


@numba.njit(cache=True, inline="always")
def _key(ints, n):
    return ints[n, 0] & _KEY_MASK


@numba.njit(cache=True, inline="always")
def _bit(ints, n):
    return (ints[n, 0] >> _KEY_BITS) - 1


@numba.njit(cache=True, inline="always")
def _child(ints, n, side):
    return (ints[n, 1] >> (32 * side)) & _CHILD_MASK


@numba.njit(cache=True)
def trie_insert(meta, nodes, k, s0, s2, sq):
    """Compiled: add the weights (s0, s2, sq) of a point at the key k to the trie (meta, nodes)."""
    ints = nodes.view(np.int64)
    n_nodes = meta[0]
    root = meta[1]
    if root < 0:
        ints[n_nodes, 0] = k
        ints[n_nodes, 1] = 0
        nodes[n_nodes, S0] = s0
        nodes[n_nodes, S2] = s2
        nodes[n_nodes, SQ] = sq
        meta[0] = n_nodes + 1
        meta[1] = n_nodes
        return
    # 1) any leaf sharing the longest prefix with k: follow k's bits (from the search's hint:
    #    a node on k's path, so the same leaf as from the root)
    n = meta[2] if (meta[2] >= 0 and meta[3] == k) else root
    meta[2] = -1
    b = _bit(ints, n)
    while b >= 0:
        n = _child(ints, n, (k >> b) & 1)
        b = _bit(ints, n)
    x = _key(ints, n) ^ k
    diff = -1
    while x != 0:
        x >>= 1
        diff += 1
    # 2) descend again, adding to every node above the insertion point
    parent = -1
    side = 0
    n = root
    b = _bit(ints, n)
    while b > diff:
        nodes[n, S0] += s0
        nodes[n, S2] += s2
        nodes[n, SQ] += sq
        parent = n
        side = (k >> b) & 1
        n = _child(ints, n, side)
        b = _bit(ints, n)
    if diff < 0:
        nodes[n, S0] += s0
        nodes[n, S2] += s2
        nodes[n, SQ] += sq
        return
    leaf = n_nodes
    inner = n_nodes + 1
    ints[leaf, 0] = k
    ints[leaf, 1] = 0
    nodes[leaf, S0] = s0
    nodes[leaf, S2] = s2
    nodes[leaf, SQ] = sq
    ints[inner, 0] = k | ((diff + 1) << _KEY_BITS)
    nodes[inner, S0] = nodes[n, S0] + s0
    nodes[inner, S2] = nodes[n, S2] + s2
    nodes[inner, SQ] = nodes[n, SQ] + sq
    if (k >> diff) & 1:
        ints[inner, 1] = n | (leaf << 32)
    else:
        ints[inner, 1] = leaf | (n << 32)
    if parent >= 0:
        other = _child(ints, parent, 1 - side)
        if side:
            ints[parent, 1] = other | (inner << 32)
        else:
            ints[parent, 1] = inner | (other << 32)
    else:
        meta[1] = inner
    meta[0] = n_nodes + 2


@numba.njit(cache=True)
def _try_insert(meta, nodes, p, w, scale):
    """Insert (p, w) if p is on the key grid and a node pair is free: 0 done, 1 off the grid, 2 full."""
    kf = p * scale
    if not (0.0 <= kf <= scale and kf == math.floor(kf)):
        return 1
    if meta[0] + 2 > nodes.shape[0]:
        return 2
    trie_insert(meta, nodes, np.int64(kf), w, w * p * p, w * (1.0 - p) * (1.0 - p))
    return 0


@numba.njit(cache=True, inline="always")
def _half(ints, node, m, side):
    """The node holding the keys of one half (side 0: left) of the current block of 2^m keys.

    ``node`` holds exactly the block's keys, so its crit bit is at most m - 1; below that
    (a compressed edge, or a leaf) all its keys fall in one half.
    """
    if node < 0:
        return np.int64(-1)
    if _bit(ints, node) == m - 1:
        return _child(ints, node, side)
    if ((_key(ints, node) >> (m - 1)) & 1) == side:
        return node
    return np.int64(-1)


@numba.njit(cache=True)
def _s_value(p, A0, A2, B2, W, Q2, c_fs, a, b, c):
    q = 1.0 - p
    s_fs = 0.5 * A2 + 0.5 * q * q * A0 + 0.5 * p * p * (W - A0) + 0.5 * (Q2 - B2) + _C * W
    return c_fs * s_fs + a + b * p + c * p * p


@numba.njit(cache=True)
def trie_search(meta, nodes, depth, n_halvings, c_fs, a, b, c):
    """Compiled: anticorrelation_search on [0, 1] for S = c_fs S_FS + a + b p + c p^2 (same path, same answer)."""
    ints = nodes.view(np.int64)
    root = meta[1]
    W = 0.0
    A2t = 0.0
    Q2 = 0.0
    if root >= 0:
        W = nodes[root, S0]
        A2t = nodes[root, S2]
        Q2 = nodes[root, SQ]
    meta[2] = -1
    # exact branches: S(1) >= 0 -> 1; S(0) <= 0 -> 0
    if _s_value(1.0, W, A2t, Q2, W, Q2, c_fs, a, b, c) >= 0:
        return 1.0
    if _s_value(0.0, 0.0, 0.0, 0.0, W, Q2, c_fs, a, b, c) <= 0:
        return 0.0
    unit = 2.0 ** (-depth)
    # the keys below 2^D: the left half of the root block [0, 2^(D+1))
    node = _half(ints, root, depth + 1, 0)
    deepest = root
    lo = np.int64(0)
    P0 = 0.0
    P2 = 0.0
    Pq = 0.0
    m = np.int64(depth)
    for _ in range(n_halvings):
        if node >= 0:
            deepest = node
        left = _half(ints, node, m, 0)
        right = _half(ints, node, m, 1)
        l0 = 0.0
        l2 = 0.0
        lq = 0.0
        if left >= 0:
            l0 = nodes[left, S0]
            l2 = nodes[left, S2]
            lq = nodes[left, SQ]
        mid = lo + (np.int64(1) << (m - 1))
        s = _s_value(mid * unit, P0 + l0, P2 + l2, Pq + lq, W, Q2, c_fs, a, b, c)
        if s > 0:
            lo = mid
            P0 += l0
            P2 += l2
            Pq += lq
            node = right
        else:
            node = left
        m -= 1
    if node >= 0:
        deepest = node
    answer = lo + (np.int64(1) << (m - 1))
    meta[2] = deepest
    meta[3] = answer
    return answer * unit


@numba.njit(cache=True)
def _sums_below(meta, nodes, kt):
    """Sums over the stored keys < kt."""
    ints = nodes.view(np.int64)
    out = np.zeros(3)
    n = meta[1]
    while n >= 0:
        b = _bit(ints, n)
        key = _key(ints, n)
        take = False
        if b < 0:
            take = key < kt
            stop = True
        else:
            hi_n = key >> (b + 1)
            hi_t = kt >> (b + 1)
            take = hi_n < hi_t
            stop = hi_n != hi_t
        if take:
            out[0] += nodes[n, S0]
            out[1] += nodes[n, S2]
            out[2] += nodes[n, SQ]
        if stop:
            break
        left = _child(ints, n, 0)
        if (kt >> b) & 1:
            out[0] += nodes[left, S0]
            out[1] += nodes[left, S2]
            out[2] += nodes[left, SQ]
            n = _child(ints, n, 1)
        else:
            n = left
    return out


# ----------------------------------------------------------------------------------------


class FSTrie:
    """Sums of w_s k_FS(., p_s) over past dyadic points p_s, in a crit-bit trie.

    Parameters
    ----------
    depth : int
        Keys are k = p 2^depth, integers in [0, 2^depth]; every stored p must be on that
        grid (forecasts of a bisection with ``depth - 1`` halvings are).
    capacity : int
        Initial number of nodes; the arrays double when full.
    """

    def __init__(self, depth: int, capacity: int = 64):
        if not (isinstance(depth, (int, np.integer)) and 1 <= depth <= MAX_DEPTH):
            raise ValueError(
                f"FSTrie depth={depth!r} must be an integer in [1, {MAX_DEPTH}] "
                f"(keys p * 2^depth must be exact doubles)"
            )
        self.depth = int(depth)
        self._scale = 2.0**self.depth
        cap = max(int(capacity), 4)
        self.meta = np.array([0, -1, -1, -1], dtype=np.int64)
        self.nodes = np.zeros((cap, _WIDTH), dtype=np.float64)

    @classmethod
    def for_tol(cls, tol: float, capacity: int = 64) -> FSTrie:
        """A trie for the forecasts of ``anticorrelation_search(..., tol=tol)``."""
        _, depth = search_depth(tol)
        if depth > MAX_DEPTH:
            raise ValueError(
                f"tol={tol!r} needs keys of depth {depth} > {MAX_DEPTH}: the midpoints are not "
                f"exact doubles; use tol >= 2**-{MAX_DEPTH - 1}"
            )
        return cls(depth, capacity)

    @property
    def n_nodes(self) -> int:
        return int(self.meta[0])

    @property
    def capacity(self) -> int:
        return len(self.nodes)

    def reserve(self, extra: int) -> None:
        """Make room for ``extra`` more nodes (an insert adds at most 2)."""
        need = self.n_nodes + int(extra)
        if need <= self.capacity:
            return
        if need > _MAX_NODES:
            raise ValueError(
                f"the trie would need {need} nodes; child indices are 32-bit, so it holds at most "
                f"{_MAX_NODES} (about {_MAX_NODES // 2} distinct forecasts): play fewer rounds"
            )
        nodes = np.zeros((max(need, 2 * self.capacity), _WIDTH), dtype=np.float64)
        nodes[: self.n_nodes] = self.nodes[: self.n_nodes]
        self.nodes = nodes

    def try_insert(self, p: float, w: float) -> bool:
        """Add the point p with weight w if p is on the key grid; False (nothing added) if not."""
        done = _try_insert(self.meta, self.nodes, p, w, self._scale)
        if done == 2:
            self.reserve(2)
            done = _try_insert(self.meta, self.nodes, p, w, self._scale)
        return done == 0

    def insert(self, p: float, w: float) -> None:
        """Add the point p with weight w (p must be on the key grid)."""
        if not math.isfinite(w):
            raise ValueError(f"w={w!r} is not finite: pass finite weights (w = y - p)")
        if not self.try_insert(float(p), float(w)):
            raise ValueError(
                f"p={p!r} is not a multiple of 2**-{self.depth} in [0, 1]: the trie stores the forecasts "
                f"of a bisection with {self.depth - 1} halvings; use the direct sums for other points"
            )

    def totals(self) -> np.ndarray:
        """(sum w, sum w p^2, sum w (1-p)^2) over all stored points."""
        root = int(self.meta[1])
        return self.nodes[root, S0 : SQ + 1].copy() if root >= 0 else np.zeros(3)

    def sums_below(self, p: float) -> np.ndarray:
        """(sum w, sum w p_s^2, sum w (1-p_s)^2) over the stored points p_s < p (any real p)."""
        kt = math.ceil(min(max(float(p), -1.0), 2.0) * self._scale)  # keys < p*2^D <=> keys < ceil(p*2^D)
        return _sums_below(self.meta, self.nodes, np.int64(kt))

    def value(self, p: float) -> float:
        """S_FS(p) = sum_s w_s k_FS(p, p_s), for any p in [0, 1]."""
        A0, A2, B2 = self.sums_below(p)
        W, _, Q2 = self.totals()
        return float(_s_value(float(p), A0, A2, B2, W, Q2, 1.0, 0.0, 0.0, 0.0))

    def search(
        self, n_halvings: int | None = None, c_fs: float = 1.0, a: float = 0.0, b: float = 0.0, c: float = 0.0
    ) -> float:
        """anticorrelation_search of c_fs S_FS(p) + a + b p + c p^2 with ``n_halvings`` bisection steps."""
        n = self.depth - 1 if n_halvings is None else n_halvings
        if not 0 <= n < self.depth:
            raise ValueError(
                f"n_halvings={n_halvings!r}: answers of a search with n halvings lie on the grid "
                f"2**-(n+1); this trie holds depth {self.depth}, so n must be in [0, {self.depth - 1}]"
            )
        return trie_search(self.meta, self.nodes, self.depth, n, float(c_fs), float(a), float(b), float(c))
