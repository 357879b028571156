"""Algorithm 4 (kernel defensive forecasting) in compiled code, for K29 and its sum kernels.

For a kernel c_fs k_FS + <Phi, Phi'> (K29's Fermi-Sobolev kernel plus named feature terms: 1 + k_FS +
pp' + <x,x'>, moment matching, linear DF) the summary function of Algorithm 4 is

    S_t(p) = sum_{s<t} w_s k((x_t, p), (x_s, p_s)) = c_fs S_FS(p) + a + b p + c p^2,

the Fermi-Sobolev part kept in the trie of :mod:`forecasters.fstrie` (O(log 1/tol) per forecast and per
update) and the feature part as the running sum of w_s Phi(x_s, p_s), whose product with Phi(x_t, p) is
the quadratic. :class:`K29Engine` holds both and runs the search of
:func:`arena.search.anticorrelation_search` on them; :class:`forecasters.defensive.KernelDF`
delegates to it when its kernel has that form.

References
----------
Perdomo & Recht §3 (Alg. 2), §7 (Alg. 4) and §8 (K29); Vovk, Takemura & Shafer 2005.
"""

from __future__ import annotations

from collections.abc import Callable

import numba
import numpy as np

from arena.kernels import FeatureKernel, FeatureTerm, FermiSobolev, Kernel, SumKernel, feature_terms
from arena.search import anticorrelation_search
from forecasters.fstrie import MAX_DEPTH, FSTrie, search_depth, trie_insert, trie_search

__all__ = ["K29Engine", "kernel_layout"]


@numba.njit(cache=True)
def _quadratic_coeffs(g, kind, v):
    a = 0.0
    b = 0.0
    c = 0.0
    for j in range(v.shape[0]):
        term = g[j] * v[j]
        if kind[j] == 0:
            a += term
        elif kind[j] == 1:
            b += term
        else:
            c += term
    return a, b, c


@numba.njit(cache=True)
def _accumulate(v, g, kind, p, w):
    for j in range(v.shape[0]):
        if kind[j] == 0:
            v[j] += w * g[j]
        elif kind[j] == 1:
            v[j] += w * (g[j] * p)
        else:
            v[j] += w * (g[j] * (p * p))


@numba.njit(cache=True)
def _play(meta, nodes, depth, n_halvings, c_fs, G, kind, v, y, out_p):
    """All rounds of kernel DF against known outcomes: search, then update with w = y - p.

    Returns the first round whose forecast is off the key grid (the trie cannot store it), or -1.
    """
    T = y.shape[0]
    scale = 2.0**depth
    for t in range(T):
        a, b, c = _quadratic_coeffs(G[t], kind, v)
        p = trie_search(meta, nodes, depth, n_halvings, c_fs, a, b, c)
        out_p[t] = p
        w = y[t] - p
        _accumulate(v, G[t], kind, p, w)
        if c_fs != 0.0 and w != 0.0:
            kf = p * scale
            k = np.int64(kf)
            if k != kf:
                return t
            trie_insert(meta, nodes, k, w, w * p * p, w * (1.0 - p) * (1.0 - p))
    return -1


def kernel_layout(kernel: Kernel) -> tuple[float, tuple[FeatureTerm, ...]] | None:
    """(c_fs, terms) when k = c_fs k_FS + <Phi, Phi'> with Phi made of named terms, else None.

    Then S_t(p) = c_fs S_FS(p) + a + b p + c p^2 (the terms are 1, p, p^2 times 1 or x).

    Examples
    --------
    >>> from arena.kernels import make_kernel
    >>> c_fs, terms = kernel_layout(make_kernel(["fs", {"features": ["1", "p"]}]))
    >>> c_fs, [t.power for t in terms], kernel_layout(make_kernel({"rbf": 1.0}))
    (1.0, [0, 1], None)
    """
    c_fs, terms, stack = 0.0, [], [kernel]
    while stack:
        k = stack.pop(0)
        if isinstance(k, SumKernel):
            stack[:0] = list(k.parts)
        elif isinstance(k, FermiSobolev):
            c_fs += 1.0
        elif isinstance(k, FeatureKernel):
            terms += feature_terms(k.terms)
        else:
            return None
    return c_fs, tuple(terms)


class _Features:
    """Phi(x, p)_j = g_j(x) p^kind_j for the named terms, with g_j(x) = scale_j * (1 or x_i)."""

    def __init__(self, terms: tuple[FeatureTerm, ...], d: int):
        idx, scale, kind = [], [], []
        for term in terms:
            cols = range(d) if term.reads_x else [d]  # column d of [x, 1] is the constant 1
            idx += list(cols)
            scale += [term.scale] * len(cols)
            kind += [term.power] * len(cols)
        self.d = d
        self.idx = np.array(idx, dtype=np.int64)
        self.scale = np.array(scale, dtype=np.float64)
        self.kind = np.array(kind, dtype=np.int64)
        self.uses_x = bool(np.any(self.idx < d))

    def g(self, x: np.ndarray) -> np.ndarray:
        if not self.uses_x:
            return self.scale
        return self.scale * np.concatenate((x, (1.0,)))[self.idx]

    def g_rows(self, X: np.ndarray) -> np.ndarray:
        """g(x_t) for every row, elementwise the same numbers as :meth:`g`."""
        if not self.uses_x:
            return np.broadcast_to(self.scale, (len(X), len(self.kind)))
        ext = np.hstack((X, np.ones((len(X), 1))))
        return np.ascontiguousarray(self.scale[None, :] * ext[:, self.idx])


class K29Engine:
    """Algorithm 4's summary function and search for k = c_fs k_FS + <Phi, Phi'>, in compiled code.

    S_t(p) = c_fs S_FS(p) + a + b p + c p^2: the Fermi-Sobolev part in an :class:`FSTrie`, the
    feature part as the running sum ``v`` of w_s Phi(x_s, p_s), whose product with Phi(x_t, p)
    is the quadratic. :meth:`forecast` takes the path of
    :func:`arena.search.anticorrelation_search` on that S_t; :meth:`play` plays a whole game
    against known outcomes. A point off the trie's grid (an update with a p that no search
    returned) joins a direct sum, and the forecasts then come from the plain search.

    Examples
    --------
    >>> from arena.kernels import make_kernel
    >>> engine = K29Engine(make_kernel("fs"), tol=2.0**-10)
    >>> p = engine.forecast(np.zeros(0))
    >>> engine.update(np.zeros(0), p, 1.0 - p)
    >>> engine.forecast(np.zeros(0)) == anticorrelation_search(engine.summary(np.zeros(0)), tol=2.0**-10)
    True
    """

    @staticmethod
    def applies(kernel: Kernel, tol: float) -> bool:
        """Whether the kernel splits as c_fs k_FS + <Phi, Phi'> and the search's points are exact dyadic keys."""
        return kernel_layout(kernel) is not None and search_depth(tol)[1] <= MAX_DEPTH

    def __init__(self, kernel: Kernel, tol: float):
        layout = kernel_layout(kernel)
        if layout is None:
            raise ValueError(f"{kernel!r} is not Fermi-Sobolev plus feature terms: use the direct sums")
        self.c_fs, self.terms = layout
        self.tol = tol
        self.halvings = search_depth(tol)[0]
        self.trie = FSTrie.for_tol(tol)
        self.v = np.zeros(0)  # the running sum of w_s Phi(x_s, p_s), laid out at the first context
        self.off_grid: list[tuple[float, float]] = []  # (p, w) of points off the trie's grid
        self._features: _Features | None = None

    def _phi(self, d: int) -> _Features:
        if self._features is None:
            self._features = _Features(self.terms, d)
            self.v = np.zeros(len(self._features.kind))
        elif self._features.d != d and self._features.uses_x:
            raise ValueError(f"a context of dimension {d} after contexts of dimension {self._features.d}")
        return self._features

    def _quadratic(self, x) -> tuple[float, float, float]:
        """(a, b, c): the feature part of S_t at the context x is a + b p + c p^2."""
        if not self.terms:
            return 0.0, 0.0, 0.0
        x = np.asarray(x, float).reshape(-1)
        phi = self._phi(x.size)
        return _quadratic_coeffs(phi.g(x), phi.kind, self.v)

    def summary(self, x) -> Callable[[float], float]:
        """S_t(.) at the context x, given the points so far."""
        a, b, c = self._quadratic(x)
        P, W = (np.array(v) for v in zip(*self.off_grid, strict=True)) if self.off_grid else (np.zeros(0),) * 2

        def S(p: float) -> float:
            fs = self.trie.value(p) + (float(W @ FermiSobolev().gram(None, [p], None, P)[0]) if len(P) else 0.0)
            return (self.c_fs * fs if self.c_fs else 0.0) + a + b * p + c * p * p

        return S

    def forecast(self, x) -> float:
        """The anticorrelation search's root of S_t at the context x."""
        if self.off_grid:
            return anticorrelation_search(self.summary(x), tol=self.tol)
        a, b, c = self._quadratic(x)
        trie = self.trie
        return trie_search(trie.meta, trie.nodes, trie.depth, self.halvings, self.c_fs, a, b, c)

    def update(self, x, p: float, w: float) -> None:
        """Add the point (x, p) with weight w = y - p."""
        if self.terms:
            x = np.asarray(x, float).reshape(-1)
            phi = self._phi(x.size)
            _accumulate(self.v, phi.g(x), phi.kind, float(p), float(w))
        if self.c_fs and w != 0 and not self.trie.try_insert(p, w):
            self.off_grid.append((float(p), float(w)))

    def play(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """The forecasts of every round against outcomes known in advance (forecast, then update with
        w_t = y_t - p_t); row t of ``X`` is the context x_t."""
        if self.off_grid:
            raise ValueError("the engine holds points off its grid: play round by round")
        T = len(y)
        X = np.asarray(X, float).reshape(T, -1)
        phi = self._phi(X.shape[1])
        self.trie.reserve(2 * T + 2)
        p = np.empty(T)
        trie = self.trie
        G = np.ascontiguousarray(phi.g_rows(X), dtype=np.float64)
        y = np.ascontiguousarray(y, dtype=np.float64)
        stopped = _play(trie.meta, trie.nodes, trie.depth, self.halvings, self.c_fs, G, phi.kind, self.v, y, p)
        if stopped >= 0:  # cannot happen: the search only returns grid points
            raise RuntimeError(f"forecast {p[stopped]!r} at round {stopped + 1} is off the key grid")
        return p
