"""Defensive forecasters of the binary game (§2-§8), all built on one anticorrelation search.

A kernel forecaster keeps the history of its forecasts and residuals w_s = y_s - p_s and
announces the root of S_t(p) = sum_{s<t} w_s k((x_t, p), (x_s, p_s)) found by
:func:`arena.search.anticorrelation_search`. A kernel with a finite feature map keeps
the running sum of w_s Phi(x_s, p_s) instead (O(d) per evaluation).

References
----------
Perdomo & Recht, §2 (bit prediction), §4 Alg. 3, §6, §7 Alg. 4, §8; SPEC §4 and §7.
"""

from __future__ import annotations

import math

import numpy as np

from arena.kernels import FeatureKernel, FermiSobolev, Kernel, SumKernel, make_kernel
from arena.protocols import Context, Forecast, Forecaster
from arena.registry import register
from arena.search import DEFAULT_TOL, anticorrelation_search


@register
class BitPrediction(Forecaster):
    """Bit prediction (§2): p_1 = 0, then 1 if sum_{s<t}(y_s - p_s) >= 0 else 0.

    Guarantees |sum_t (p_t - y_t)| <= 1 against any outcomes.

    Examples
    --------
    >>> from arena import play
    >>> r = play("binary", BitPrediction(), "anti_forecaster", T=100, seed=0)
    >>> r.certificates["bit"].holds
    True
    """

    name = "bit"
    claims = ("bit",)

    def reset(self, rng):
        super().reset(rng)
        self._residual = 0.0
        self._t = 0

    def predict(self, x: Context) -> float:
        if self._t == 0:
            return 0.0
        return anticorrelation_search(lambda p: self._residual)

    def update(self, x, p, y):
        self._residual += y - p
        self._t += 1


def _kernel_claims(kernel: Kernel) -> tuple[str, ...]:
    """The certificates a kernel forecaster can promise, read off its kernel (§6-§8)."""
    parts = kernel.parts if isinstance(kernel, SumKernel) else (kernel,)
    claims = ["kernel", "search_precision"]
    if any(isinstance(k, FermiSobolev) for k in parts):
        claims.append("smce")
    terms = {t for k in parts if isinstance(k, FeatureKernel) for t in k.terms}
    if {"1", "p", "x"} <= terms:
        claims.append("linear_regret")
    return tuple(claims)


@register
class KernelDF(Forecaster):
    """Kernel defensive forecasting (§7 Alg. 4) for any kernel on (x, p).

    Parameters
    ----------
    kernel
        A spec for :func:`arena.kernels.make_kernel`: ``"fs"``, ``{"rbf": 1.0}``,
        ``{"features": ["1", "p", "x"]}``, a list (sum) or ``{"product": [a, b]}``.
    tol
        Width of the last bisection interval of the anticorrelation search.

    Examples
    --------
    >>> from arena import play
    >>> r = play("binary", KernelDF(kernel=["fs", {"features": ["1", "p", "x"]}]), "logistic", T=200, seed=1)
    >>> all(c.holds for c in r.certificates.values())
    True
    """

    name = "kernel_df"

    def __init__(self, kernel="fs", tol: float = DEFAULT_TOL):
        if not (isinstance(tol, (int, float)) and 0 < tol < 1):
            raise ValueError(f"{self.name}: tol={tol!r} must be in (0, 1), e.g. tol: 1e-10")
        self.kernel = kernel
        self.tol = float(tol)
        self._k = make_kernel(kernel)

    @property
    def claims(self) -> tuple[str, ...]:  # type: ignore[override]
        return _kernel_claims(self._k)

    @property
    def kernel_object(self) -> Kernel:
        return self._k

    def reset(self, rng):
        super().reset(rng)
        self._n = 0
        self._X = self._P = self._W = None
        self._sum = None  # running sum of w_s Phi(x_s, p_s) for finite kernels

    def summary_function(self, x: Context):
        """S_t(.) for context x, given the history so far."""
        k, n = self._k, self._n
        if n == 0:
            return lambda p: 0.0
        x1 = np.asarray(x, float).reshape(1, -1)
        if k.finite:
            return lambda p: float(k.features(x1, np.array([p]))[0] @ self._sum)
        X, P, W = self._X[:n], self._P[:n], self._W[:n]
        return lambda p: float(k.gram(x1, np.array([p]), X, P)[0] @ W)

    def predict(self, x: Context) -> float:
        return anticorrelation_search(self.summary_function(x), tol=self.tol)

    def _remember(self, x, p: float, w: float) -> None:
        x = np.asarray(x, float).reshape(-1)
        if self._k.finite:
            phi = self._k.features(x[None, :], np.array([p]))[0]
            self._sum = w * phi if self._sum is None else self._sum + w * phi
            self._n += 1
            return
        if self._X is None or self._n == len(self._P):
            cap = max(64, 2 * self._n)
            X, P, W = np.zeros((cap, x.size)), np.zeros(cap), np.zeros(cap)
            if self._n:
                X[: self._n], P[: self._n], W[: self._n] = self._X[: self._n], self._P[: self._n], self._W[: self._n]
            self._X, self._P, self._W = X, P, W
        self._X[self._n], self._P[self._n], self._W[self._n] = x, p, w
        self._n += 1

    def update(self, x, p, y):
        self._remember(x, p, y - p)


@register
class DMM(KernelDF):
    """Defensive moment matching (§4 Alg. 3) with a feature map given by named terms.

    Guarantees ||sum_t (y_t - p_t) Phi(x_t, p_t)||^2 <= sum_t ||Phi||^2 (y_t - p_t)^2 (up to
    the search precision).

    Examples
    --------
    >>> DMM(features=["1", "p"]).claims
    ('kernel', 'search_precision')
    """

    name = "dmm"

    def __init__(self, features=("1", "p"), tol: float = DEFAULT_TOL):
        super().__init__(kernel={"features": list(features)}, tol=tol)
        del self.kernel
        self.features = list(features)


@register
class LinearDF(DMM):
    """Linear defensive forecasting (§6): moment matching with Phi = [1, p, x].

    Regret to every linear predictor <w, x> with ||w|| <= M is at most
    (sqrt(5) + sqrt(1 + 4M^2)) * sqrt(sum ||Phi||^2 w_t^2).
    """

    name = "linear_df"

    def __init__(self, tol: float = DEFAULT_TOL):
        super().__init__(features=("1", "p", "x"), tol=tol)
        del self.features


@register
class K29(KernelDF):
    """Vovk's K29: kernel DF with the Fermi-Sobolev kernel and no context (§8).

    Guarantees smCE <= sqrt(2) * sqrt(sum_t w_t^2 k_FS(p_t, p_t)) <= sqrt(8T/3).

    Examples
    --------
    >>> from arena import play
    >>> r = play("binary", K29(), "anti_forecaster", T=300, seed=0)
    >>> r.certificates["smce"].holds, r.summary["smce"] <= (8 * 300 / 3) ** 0.5
    (True, True)
    """

    name = "k29"

    def __init__(self, tol: float = DEFAULT_TOL):
        super().__init__(kernel="fs", tol=tol)
        del self.kernel

    def summary_function(self, x):
        return super().summary_function(np.zeros(0))  # K29 ignores the context


@register
class K29Rounded(K29):
    """K29 revealed through unbiased randomized rounding to the grid {0, 1/N, ..., 1} (§8).

    P(round to n/N) = max(0, 1 - N |p - n/N|) (SPEC §7 erratum: the paper swaps the two
    probabilities). The forecaster updates with its internal, unrounded forecast, which
    keeps the kernel certificate; the announced distribution carries it as ``internal``.

    Examples
    --------
    >>> f = K29Rounded(N=20).round(0.89)
    >>> f.points, tuple(round(w, 6) for w in f.probs)
    ((0.85, 0.9), (0.2, 0.8))
    """

    name = "k29_rounded"

    def __init__(self, N: int = 10, delta: float = 0.05, tol: float = DEFAULT_TOL):
        super().__init__(tol=tol)
        if not (isinstance(N, (int, np.integer)) and N >= 1):
            raise ValueError(f"k29_rounded: N={N!r} must be an integer >= 1 (the grid is {{0, 1/N, ..., 1}}), e.g. N: 10")
        if not 0 < delta < 1:
            raise ValueError(f"k29_rounded: delta={delta!r} must be in (0, 1), e.g. delta: 0.05")
        self.N, self.delta = int(N), float(delta)

    @property
    def claims(self):  # type: ignore[override]
        return (*super().claims, "rounded_calibration")

    def round(self, p: float) -> Forecast:
        lo = math.floor(p * self.N)
        frac = p * self.N - lo
        if lo >= self.N:
            return Forecast((1.0,), (1.0,), internal=p)
        return Forecast.two_point(lo / self.N, (lo + 1) / self.N, 1.0 - frac, internal=p)

    def predict(self, x):
        self._p = super().predict(x)
        return self.round(self._p)

    def update(self, x, p, y):
        super().update(x, self._p, y)  # the unrounded forecast, not the revealed one
