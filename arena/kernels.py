"""Kernels on (x, p) pairs, shared by the kernel forecasters and the referee.

A kernel k((x, p), (x', p')) is evaluated in blocks by ``gram``. Finite-dimensional
kernels also expose their feature map, which lets forecasters keep a running sum
(O(d) per step) and the referee compute gaps directly.

References
----------
Perdomo & Recht, §4 (feature maps), §7 (Algorithm 4), §8 (Fermi-Sobolev kernel, sums).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np


def _rows(X, n: int) -> np.ndarray:
    """Contexts as an (n, d) array (d may be 0; n may be 0)."""
    X = np.asarray(X, float)
    if X.ndim == 2 and len(X) == n:
        return X
    if n == 0:  # reshape(0, -1) is ambiguous
        return np.zeros((0, X.shape[-1] if X.ndim == 2 else 0))
    return X.reshape(n, -1)


class Kernel:
    """Base class. Subclasses implement ``gram`` and, when finite, ``features``."""

    #: True when the kernel has an explicit finite feature map.
    finite: bool = False

    def gram(self, X1: np.ndarray, P1: np.ndarray, X2: np.ndarray, P2: np.ndarray) -> np.ndarray:
        """The block K[i, j] = k((X1[i], P1[i]), (X2[j], P2[j]))."""
        raise NotImplementedError

    def diag(self, X: np.ndarray, P: np.ndarray) -> np.ndarray:
        return np.array(
            [self.gram(X[i : i + 1], P[i : i + 1], X[i : i + 1], P[i : i + 1])[0, 0] for i in range(len(P))]
        )

    def features(self, X: np.ndarray, P: np.ndarray) -> np.ndarray:
        """Feature rows Phi(X[i], P[i]) (finite kernels only)."""
        raise NotImplementedError(f"{type(self).__name__} has no finite feature map")

    def lip_p(self, X: np.ndarray, P: np.ndarray) -> float:
        """A bound on |d/dp k((x, p), z)| over the run's points (the search-precision allowance)."""
        return float("inf")

    def sup_abs(self, X: np.ndarray, P: np.ndarray) -> float:
        """A bound on |k| over the run's points."""
        d = self.diag(X, P)
        return float(np.max(np.abs(d))) if len(d) else 0.0

    def __add__(self, other: Kernel) -> Kernel:
        return SumKernel((self, other))


@dataclass(frozen=True)
class FermiSobolev(Kernel):
    """k_FS(p, p') = min(p,p')^2/2 + min(1-p,1-p')^2/2 + 5/6 (§8, Vovk's K29 kernel).

    Examples
    --------
    >>> float(FermiSobolev().gram(np.zeros((1, 0)), np.array([0.5]), np.zeros((1, 0)), np.array([0.5]))[0, 0].round(12))
    1.083333333333
    """

    def gram(self, X1, P1, X2, P2):
        a = np.asarray(P1, float)[:, None]
        b = np.asarray(P2, float)[None, :]
        return 0.5 * np.minimum(a, b) ** 2 + 0.5 * np.minimum(1 - a, 1 - b) ** 2 + 5.0 / 6.0

    def diag(self, X, P):
        P = np.asarray(P, float)
        return 0.5 * P**2 + 0.5 * (1 - P) ** 2 + 5.0 / 6.0

    def lip_p(self, X, P):
        return 1.0

    def sup_abs(self, X, P):
        return 4.0 / 3.0


@dataclass(frozen=True)
class RBF(Kernel):
    """exp(-gamma * ||x - x'||^2) on the contexts only."""

    gamma: float = 1.0

    def __post_init__(self):
        if not self.gamma > 0:
            raise ValueError(f"RBF gamma={self.gamma!r} must be > 0, e.g. gamma: 1.0")

    def gram(self, X1, P1, X2, P2):
        X1 = np.asarray(X1, float)
        X2 = np.asarray(X2, float)
        d2 = (X1**2).sum(1)[:, None] + (X2**2).sum(1)[None, :] - 2 * X1 @ X2.T
        return np.exp(-self.gamma * np.maximum(d2, 0.0))

    def diag(self, X, P):
        return np.ones(len(P))

    def lip_p(self, X, P):
        return 0.0

    def sup_abs(self, X, P):
        return 1.0


@dataclass(frozen=True)
class RandomFourierRBF(Kernel):
    """Random Fourier features for exp(-gamma ||x - x'||^2) on the contexts (Rahimi & Recht, 2007).

    z(x) = sqrt(2/D) cos(W x + b) with W ~ N(0, 2 gamma I) and b ~ U[0, 2 pi], drawn once from
    ``seed`` (a fixed function of the parameters, so runs stay reproducible). Then
    z(x).z(x') is an unbiased estimate of the RBF kernel with error O(1/sqrt(D)) for each
    pair (uniformly over a bounded set, O(sqrt(d log(D) / D)) with high probability), and
    a forecaster keeps a running sum of D features: O(D) per step instead of O(t).
    Guarantees are certified for the approximate kernel actually used.

    Examples
    --------
    >>> X = np.random.default_rng(0).normal(size=(5, 2))
    >>> k = RandomFourierRBF(gamma=0.5, n_features=20000)
    >>> bool(np.abs(k.gram(X, np.zeros(5), X, np.zeros(5)) - RBF(0.5).gram(X, None, X, None)).max() < 0.05)
    True
    """

    gamma: float = 1.0
    n_features: int = 256
    seed: int = 0
    finite = True

    def __post_init__(self):
        if not self.gamma > 0:
            raise ValueError(f"rff gamma={self.gamma!r} must be > 0, e.g. gamma: 1.0")
        if not (isinstance(self.n_features, (int, np.integer)) and self.n_features >= 1):
            raise ValueError(f"rff n_features={self.n_features!r} must be a positive integer, e.g. 256")

    def _weights(self, d: int):
        cache = self.__dict__.setdefault("_cache", {})
        if d not in cache:
            rng = np.random.default_rng([self.seed, d, self.n_features])
            cache[d] = (
                rng.normal(0.0, np.sqrt(2 * self.gamma), size=(d, self.n_features)),
                rng.uniform(0.0, 2 * np.pi, size=self.n_features),
            )
        return cache[d]

    def features(self, X, P):
        X = _rows(X, len(P))
        W, b = self._weights(X.shape[1])
        return np.sqrt(2.0 / self.n_features) * np.cos(X @ W + b)

    def gram(self, X1, P1, X2, P2):
        return self.features(X1, np.zeros(len(X1))) @ self.features(X2, np.zeros(len(X2))).T

    def diag(self, X, P):
        return (self.features(X, P) ** 2).sum(1)

    def lip_p(self, X, P):
        return 0.0

    def sup_abs(self, X, P):
        return 2.0


# Terms of a finite feature map given in config: name -> (dimension, phi, lip_p).
_TERMS = ("1", "p", "p2", "x", "px")
#: The power of p in each named term.
_POWER = {"1": 0, "x": 0, "p": 1, "px": 1, "p2": 2}


class FeatureTerm(NamedTuple):
    """One named term of a feature map: Phi(x, p) gets ``scale * p**power * (x if reads_x else 1)``."""

    scale: float
    name: str
    power: int
    reads_x: bool

    def width(self, d: int) -> int:
        """The number of columns of the term for contexts of dimension d."""
        return d if self.reads_x else 1


def feature_terms(terms) -> tuple[FeatureTerm, ...]:
    """The layout of a feature map's named terms, in the column order of :meth:`FeatureKernel.features`.

    Examples
    --------
    >>> [tuple(t) for t in feature_terms(["1", "2*px"])]
    [(1.0, '1', 0, False), (2.0, 'px', 1, True)]
    >>> feature_terms(["q"])
    Traceback (most recent call last):
    ...
    ValueError: unknown feature term 'q'; expected one of ['1', 'p', 'p2', 'x', 'px'], optionally scaled as '2*p'
    """
    out = []
    for term in terms:
        scale, _, name = str(term).rpartition("*")
        if name not in _TERMS:
            raise ValueError(
                f"unknown feature term {term!r}; expected one of {list(_TERMS)}, optionally scaled as '2*p'"
            )
        try:
            c = float(scale) if scale else 1.0
        except ValueError:
            raise ValueError(f"feature term {term!r}: the scale before '*' must be a number") from None
        out.append(FeatureTerm(c, name, _POWER[name], name in ("x", "px")))
    return tuple(out)


@dataclass(frozen=True)
class FeatureKernel(Kernel):
    """k(z, z') = <Phi(z), Phi(z')> for a feature map built from named terms.

    Terms: ``"1"`` (constant), ``"p"``, ``"p2"`` (p squared), ``"x"`` (the context
    vector), ``"px"`` (p times the context). Each may carry a scale, as
    ``"2*p"``. ``["1", "p", "x"]`` is the map of linear DF (§6).

    Examples
    --------
    >>> FeatureKernel(("1", "p", "x")).features(np.array([[3.0]]), np.array([0.5]))
    array([[1. , 0.5, 3. ]])
    """

    terms: tuple[str, ...] = ("1", "p")
    finite = True

    def __post_init__(self):
        if not self.terms:
            raise ValueError("a feature map needs at least one term, e.g. ['1', 'p']")
        feature_terms(self.terms)

    def features(self, X, P):
        X = _rows(X, len(P))
        P = np.asarray(P, float)
        terms = feature_terms(self.terms)
        # the columns are written into one array (an hstack of them would hold every column twice)
        F, j = np.empty((len(P), sum(t.width(X.shape[1]) for t in terms))), 0
        for term in terms:
            c, name, k = term.scale, term.name, term.width(X.shape[1])
            block = F[:, j : j + k]
            if name == "1":
                block[:] = c * 1.0
            elif name == "p":
                np.multiply(c, P[:, None], out=block)
            elif name == "p2":
                np.multiply(c, P[:, None] ** 2, out=block)
            elif name == "x":
                np.multiply(c, X, out=block)
            else:
                np.multiply(c * P[:, None], X, out=block)
            j += k
        return F

    def gram(self, X1, P1, X2, P2):
        return self.features(X1, P1) @ self.features(X2, P2).T

    def diag(self, X, P):
        F = self.features(X, P)
        return (F**2).sum(1)

    def lip_p(self, X, P):
        X = _rows(X, len(P))
        pmax = float(np.max(np.abs(P))) if len(P) else 1.0
        x2 = float(np.max((X**2).sum(1))) if X.size else 0.0
        lip = 0.0
        for c, name, _, _ in feature_terms(self.terms):
            lip += c * c * {"1": 0.0, "x": 0.0, "p": pmax, "p2": 2 * pmax**2, "px": pmax * x2}[name]
        return lip


@dataclass(frozen=True)
class SumKernel(Kernel):
    """k = k_1 + ... + k_m (§8: e.g. 1 + k_FS + pp' + <x, x'>)."""

    parts: tuple[Kernel, ...]

    @property
    def finite(self):  # type: ignore[override]
        return all(k.finite for k in self.parts)

    def gram(self, X1, P1, X2, P2):
        return sum(k.gram(X1, P1, X2, P2) for k in self.parts)

    def diag(self, X, P):
        return sum(k.diag(X, P) for k in self.parts)

    def features(self, X, P):
        return np.hstack([k.features(X, P) for k in self.parts])

    def lip_p(self, X, P):
        return sum(k.lip_p(X, P) for k in self.parts)

    def sup_abs(self, X, P):
        return sum(k.sup_abs(X, P) for k in self.parts)


@dataclass(frozen=True)
class ProductKernel(Kernel):
    """k = k_1 * k_2, e.g. k_FS(p, p') * exp(-gamma ||x - x'||^2)."""

    left: Kernel
    right: Kernel

    def gram(self, X1, P1, X2, P2):
        return self.left.gram(X1, P1, X2, P2) * self.right.gram(X1, P1, X2, P2)

    def diag(self, X, P):
        return self.left.diag(X, P) * self.right.diag(X, P)

    def lip_p(self, X, P):
        return self.left.lip_p(X, P) * self.right.sup_abs(X, P) + self.left.sup_abs(X, P) * self.right.lip_p(X, P)

    def sup_abs(self, X, P):
        return self.left.sup_abs(X, P) * self.right.sup_abs(X, P)


def make_kernel(spec: str | Sequence | dict | Kernel) -> Kernel:
    """Build a kernel from a config value.

    ``"fs"`` (Fermi-Sobolev), ``"rbf"``/``{"rbf": gamma}`` (exact, O(t) per step),
    ``{"rff": {"gamma": g, "n_features": D, "seed": s}}`` (its random-Fourier-feature
    approximation, O(D) per step), ``"linear"`` (pp' + <x,x'>),
    a list of feature terms as ``{"features": ["1", "p", "x"]}``, a list of specs (their
    sum) or ``{"product": [spec, spec]}``.

    Examples
    --------
    >>> make_kernel(["fs", {"features": ["1", "p", "x"]}]).finite
    False
    >>> make_kernel("linear").terms
    ('p', 'x')
    """
    if isinstance(spec, Kernel):
        return spec
    if isinstance(spec, str):
        named = {
            "fs": FermiSobolev(),
            "fermi_sobolev": FermiSobolev(),
            "rbf": RBF(),
            "linear": FeatureKernel(("p", "x")),
            "constant": FeatureKernel(("1",)),
        }
        if spec not in named:
            raise ValueError(
                f"unknown kernel {spec!r}; expected one of {sorted(named)}, a feature list or a list of kernels"
            )
        return named[spec]
    if isinstance(spec, dict) or hasattr(spec, "keys"):
        spec = dict(spec)
        if len(spec) != 1:
            raise ValueError(f"kernel spec {spec!r}: give exactly one of 'features', 'rbf', 'rff', 'product'")
        ((key, value),) = spec.items()
        if key == "features":
            return FeatureKernel(tuple(str(v) for v in value))
        if key == "rbf":
            return RBF(float(value))
        if key == "rff":
            return RandomFourierRBF(**dict(value))
        if key == "product":
            a, b = value
            return ProductKernel(make_kernel(a), make_kernel(b))
        raise ValueError(f"unknown kernel key {key!r}; expected 'features', 'rbf', 'rff' or 'product'")
    parts = tuple(make_kernel(s) for s in spec)
    if not parts:
        raise ValueError("an empty kernel list; give at least one kernel, e.g. ['fs']")
    return parts[0] if len(parts) == 1 else SumKernel(parts)


def cross_sums(kernel: Kernel, X: np.ndarray, P: np.ndarray, W: np.ndarray, block: int = 2048) -> np.ndarray:
    """S_t(p_t) = sum_{s<t} W_s k(z_t, z_s) for every t, as the forecaster saw it.

    O(T d) for finite kernels (running sum of W Phi), O(T log T) for the Fermi-Sobolev kernel
    (arena.fastfs), summed part by part for sums of kernels; O(T^2) in blocks otherwise.
    """
    T = len(P)
    X = _rows(X, T)
    if isinstance(kernel, SumKernel):
        return sum(cross_sums(k, X, P, W, block) for k in kernel.parts)
    if isinstance(kernel, FermiSobolev):
        from arena.fastfs import fs_cross_sums

        return fs_cross_sums(P, W)
    if kernel.finite:
        F = kernel.features(X, P)
        C = np.cumsum(W[:, None] * F, axis=0)
        out = np.zeros(T)
        out[1:] = np.einsum("ij,ij->i", F[1:], C[:-1])
        return out
    out = np.zeros(T)
    for a in range(0, T, block):
        b = min(T, a + block)
        K = kernel.gram(X[a:b], P[a:b], X[:b], P[:b])
        K = np.where(np.arange(b)[None, :] < np.arange(a, b)[:, None], K, 0.0)
        out[a:b] = K @ W[:b]
    return out


def kernel_gap(kernel: Kernel, X: np.ndarray, P: np.ndarray, W: np.ndarray, block: int = 2048) -> float:
    """||sum_t W_t Phi(z_t)||^2 = sum_{s,t} W_s W_t k(z_s, z_t), computed directly (not from cross_sums).

    O(T d) for finite kernels, O(T log T) for Fermi-Sobolev, part by part for sums."""
    T = len(P)
    X = _rows(X, T)
    if isinstance(kernel, SumKernel):
        return float(sum(kernel_gap(k, X, P, W, block) for k in kernel.parts))
    if isinstance(kernel, FermiSobolev):
        from arena.fastfs import fs_quadratic  # O(T log T), order-free: independent of cross_sums

        return float(fs_quadratic(P, W))
    if kernel.finite:
        v = W @ kernel.features(X, P)
        return float(v @ v)
    total = 0.0
    for a in range(0, T, block):
        b = min(T, a + block)
        total += float(W[a:b] @ (kernel.gram(X[a:b], P[a:b], X, P) @ W))
    return total
