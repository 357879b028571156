"""Defensive forecasters of the binary game (§2-§8), all built on one anticorrelation search.

A kernel forecaster keeps the history of its forecasts and residuals w_s = y_s - p_s and
announces the root of S_t(p) = sum_{s<t} w_s k((x_t, p), (x_s, p_s)) found by
:func:`arena.search.anticorrelation_search`. A kernel with a finite feature map keeps
the running sum of w_s Phi(x_s, p_s) instead (O(d) per evaluation).

With ``fast=True`` (the default) a kernel that is Fermi-Sobolev plus named feature terms
(K29, 1 + k_FS + pp' + <x,x'>, moment matching, linear DF) writes S_t as
c_fs S_FS(p) + a + b p + c p^2 and runs the same bisection compiled
(:class:`forecasters.fastk29.K29Engine`): O(log 1/tol) per forecast instead of O(t). ``fast=False`` keeps
the direct sums (the reference the fast path is tested against).

References
----------
Perdomo & Recht, §2 (bit prediction), §4 Alg. 3, §6, §7 Alg. 4, §8; errata: docs/ERRATA.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from arena.kernels import FeatureKernel, FermiSobolev, Kernel, SumKernel, make_kernel
from arena.protocols import Context, Forecast, Forecaster, RoundedForecaster
from arena.registry import register
from arena.rules import realize
from arena.search import DEFAULT_TOL, MIN_TOL, anticorrelation_search
from forecasters.fastk29 import K29Engine

#: The finest rounding grid (the referee keeps one error per grid point).
MAX_GRID = 10**6
#: kernel_df's default kernel, as in conf/forecaster/kernel_df.yaml and the README: 1 + k_FS + pp' + <x, x'>
#: (§8: smoothly calibrated and low regret to linear predictors). A tuple: never mutated.
DEFAULT_KERNEL = ("fs", {"features": ("1", "p", "x")})


def checked_kernel(who: str, spec) -> Kernel:
    """``make_kernel(spec)``, with any error as a ValueError that names the plugin and the value."""
    try:
        return make_kernel(spec)
    except (TypeError, ValueError, KeyError) as exc:
        raise ValueError(
            f"{who}: kernel={spec!r} is not a kernel spec ({exc}); give e.g. kernel: fs, or "
            "kernel: [fs, {features: ['1', 'p', 'x']}]"
        ) from None


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
    family = "defensive"
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


class _DirectSums:
    """The past points of a kernel forecaster, as the paper states S_t: O(t) per evaluation, or O(d) for a
    kernel with a finite feature map (the running sum of w_s Phi(x_s, p_s))."""

    def __init__(self, kernel: Kernel):
        self.kernel = kernel
        self.n = 0
        self.phi_sum: np.ndarray | None = None  # finite kernels
        self.X, self.P, self.W = np.zeros((0, 0)), np.zeros(0), np.zeros(0)  # the others (capacity doubles)

    def summary(self, x: Context) -> Callable[[float], float]:
        k, n, x1 = self.kernel, self.n, np.asarray(x, float).reshape(1, -1)
        if n == 0:
            return lambda p: 0.0
        if k.finite:
            return lambda p: float(k.features(x1, np.array([p]))[0] @ self.phi_sum)
        X, P, W = self.X[:n], self.P[:n], self.W[:n]
        return lambda p: float(k.gram(x1, np.array([p]), X, P)[0] @ W)

    def update(self, x: Context, p: float, w: float) -> None:
        x = np.asarray(x, float).reshape(-1)
        if self.kernel.finite:
            phi = self.kernel.features(x[None, :], np.array([p]))[0]
            self.phi_sum = w * phi if self.phi_sum is None else self.phi_sum + w * phi
        else:
            if self.n == len(self.P):
                cap, n = max(64, 2 * self.n), self.n
                X, P, W = np.zeros((cap, x.size)), np.zeros(cap), np.zeros(cap)
                if n:
                    X[:n], P[:n], W[:n] = self.X[:n], self.P[:n], self.W[:n]
                self.X, self.P, self.W = X, P, W
            self.X[self.n], self.P[self.n], self.W[self.n] = x, p, w
        self.n += 1


@register
class KernelDF(Forecaster):
    """Kernel defensive forecasting (§7 Alg. 4) for any kernel on (x, p).

    Each round it announces the root p_t of the summary function
    S_t(p) = sum_{s<t} w_s k((x_t, p), (x_s, p_s)), w_s = y_s - p_s, found by the anticorrelation
    search; a kernel that is Fermi-Sobolev plus feature terms runs the same search compiled
    (:class:`forecasters.fastk29.K29Engine`).

    Parameters
    ----------
    kernel
        A spec for :func:`arena.kernels.make_kernel`: ``"fs"``, ``{"rbf": 1.0}``,
        ``{"features": ["1", "p", "x"]}``, a list (sum) or ``{"product": [a, b]}``. The default is
        1 + k_FS + pp' + <x, x'> (§8), as in its config; ``kernel="fs"`` is K29.
    tol
        Width of the last bisection interval of the anticorrelation search. The search
        halves [0, 1], so its last width is the largest power of two <= ``tol``.
    fast
        Use the compiled engine when the kernel is Fermi-Sobolev plus feature terms
        (``"fs"``, ``["fs", {"features": [...]}]``, feature maps); other kernels (RBF,
        products) always use the direct sums. ``False`` forces the direct sums.

    Examples
    --------
    >>> from arena import play
    >>> r = play("binary", KernelDF(kernel=["fs", {"features": ["1", "p", "x"]}]), "logistic", T=200, seed=1)
    >>> all(c.holds for c in r.certificates.values())
    True
    """

    name = "kernel_df"
    family = "defensive"

    def __init__(self, kernel=DEFAULT_KERNEL, tol: float = DEFAULT_TOL, fast: bool = True):
        if not (isinstance(tol, (int, float)) and MIN_TOL <= tol < 1):
            raise ValueError(f"{self.name}: tol={tol!r} must be in [2**-52, 1), e.g. tol: 1e-10")
        if not isinstance(fast, (bool, np.bool_)):
            raise ValueError(  # noqa: TRY004 (one error type for bad parameters)
                f"{self.name}: fast={fast!r} must be true or false, e.g. fast: true"
            )
        self.kernel = kernel
        self.tol = float(tol)
        self.fast = bool(fast)
        self._k = checked_kernel(self.name, kernel)
        self._engine_applies = self.fast and K29Engine.applies(self._k, self.tol)

    def reset(self, rng):
        super().reset(rng)
        self._engine = K29Engine(self._k, self.tol) if self._engine_applies else None
        self._sums = _DirectSums(self._k)

    def summary_function(self, x: Context) -> Callable[[float], float]:
        """S_t(.) for context x, given the history so far."""
        return self._engine.summary(x) if self._engine is not None else self._sums.summary(x)

    def predict(self, x: Context) -> float:
        if self._engine is not None:
            return self._engine.forecast(x)
        return anticorrelation_search(self.summary_function(x), tol=self.tol)

    def update(self, x, p, y):
        (self._engine if self._engine is not None else self._sums).update(x, p, y - p)

    @property
    def claims(self) -> tuple[str, ...]:
        return _kernel_claims(self._k)

    @property
    def kernel_object(self) -> Kernel:
        return self._k

    @property
    def engine(self) -> K29Engine | None:
        """The compiled engine the forecaster delegates to since its last reset (None: the direct sums)."""
        return getattr(self, "_engine", None)

    @property
    def uses_fast_path(self) -> bool:
        """True while the compiled search is in use: it stops, for good, when ``update`` receives a p off
        the search's dyadic grid (a value no search returned)."""
        if not hasattr(self, "_engine"):  # before reset: whether it will be
            return self._engine_applies
        return self._engine is not None and not self._engine.off_grid

    @property
    def can_play_oblivious(self) -> bool:
        """Whether :meth:`play_oblivious` can run (the compiled engine is in use)."""
        return self.uses_fast_path

    def play_oblivious(self, X: np.ndarray, y: np.ndarray, u: np.ndarray):
        """Play every round against outcomes known in advance, in compiled code: the arena calls this
        against oblivious natures. Rounds, forecasts and state are exactly those of the predict/update loop.

        X : (T, d) contexts; y : (T,) outcomes; u : (T,) the uniforms that realize forecasts.
        Returns (p_mean, p, p_internal) arrays, or None when the engine is not in use. A point
        forecast is its own mean and realization: one array for all three.
        """
        if not self.uses_fast_path:
            return None
        p = self._engine.play(X, np.asarray(y, float))
        return p, p, p


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

    def __init__(self, features=("1", "p"), tol: float = DEFAULT_TOL, fast: bool = True):
        if isinstance(features, (str, bytes)) or not isinstance(features, (list, tuple)):
            raise ValueError(  # noqa: TRY004 (one error type for bad parameters)
                f"{self.name}: features={features!r} is not a list of feature names; give e.g. features: ['1', 'p']"
            )
        super().__init__(kernel={"features": list(features)}, tol=tol, fast=fast)
        self.features = list(features)


@register
class LinearDF(DMM):
    """Linear defensive forecasting (§6): moment matching with Phi = [1, p, x].

    Regret to every linear predictor <w, x> with ||w|| <= M is at most
    (sqrt(5) + sqrt(1 + 4M^2)) * sqrt(sum ||Phi||^2 w_t^2).
    """

    name = "linear_df"

    def __init__(self, tol: float = DEFAULT_TOL, fast: bool = True):
        super().__init__(features=("1", "p", "x"), tol=tol, fast=fast)


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

    def __init__(self, tol: float = DEFAULT_TOL, fast: bool = True):
        super().__init__(kernel="fs", tol=tol, fast=fast)

    def summary_function(self, x):
        return super().summary_function(np.zeros(0))  # K29 ignores the context


def auto_grid(T: int) -> int:
    """N = ceil(T^(1/3)), the grid of §8 that balances the rounded calibration bound (error of order T^(2/3)),
    in exact integer arithmetic.

    Examples
    --------
    >>> auto_grid(1000), auto_grid(1001), auto_grid(1)
    (10, 11, 1)
    """
    n = max(1, round(T ** (1 / 3)))
    while n**3 < T:
        n += 1
    while n > 1 and (n - 1) ** 3 >= T:
        n -= 1
    return n


@register
class K29Rounded(K29, RoundedForecaster):
    """K29 revealed through unbiased randomized rounding to the grid {0, 1/N, ..., 1} (§8).

    ``N: auto`` takes N = ceil(T^(1/3)) for the horizon ``horizon`` (§8: calibration error of
    order T^(2/3)).

    P(round to n/N) = max(0, 1 - N |p - n/N|) (erratum, docs/ERRATA.md: the paper swaps the two
    probabilities). The forecaster updates with its internal, unrounded forecast, which
    keeps the kernel certificate; the announced distribution carries it as ``internal``.

    Examples
    --------
    >>> f = K29Rounded(N=20).round(0.89)
    >>> f.points, tuple(round(w, 6) for w in f.probs)
    ((0.85, 0.9), (0.2, 0.8))
    """

    name = "k29_rounded"

    def __init__(
        self,
        N: int | str = 10,
        delta: float = 0.05,
        tol: float = DEFAULT_TOL,
        fast: bool = True,
        horizon: int | None = None,
    ):
        super().__init__(tol=tol, fast=fast)
        if horizon is not None and (
            isinstance(horizon, bool) or not isinstance(horizon, (int, np.integer)) or horizon < 1
        ):
            raise ValueError(
                f"k29_rounded: horizon={horizon!r} must be an integer >= 1 (the number of rounds T) or "
                "null, e.g. horizon: ${T}"
            )
        self.horizon = None if horizon is None else int(horizon)
        if N == "auto":
            if self.horizon is None:
                raise ValueError(
                    "k29_rounded: N='auto' (the grid N = ceil(T^(1/3)) of §8) needs the horizon T: give "
                    "horizon: ${T} (or a number), or a fixed N, e.g. N: 10"
                )
            N = auto_grid(self.horizon)
        if isinstance(N, bool) or not (isinstance(N, (int, np.integer)) and N >= 1):
            raise ValueError(
                f"k29_rounded: N={N!r} must be an integer >= 1 (the grid is {{0, 1/N, ..., 1}}), e.g. N: 10"
            )
        if N > MAX_GRID:
            raise ValueError(
                f"k29_rounded: N={N!r} is above {MAX_GRID} (the referee keeps one error per grid point), e.g. N: 10"
            )
        if isinstance(delta, bool) or not (isinstance(delta, (int, float)) and 0 < delta < 1):
            raise ValueError(f"k29_rounded: delta={delta!r} must be in (0, 1), e.g. delta: 0.05")
        self.N, self.delta = int(N), float(delta)

    @property
    def claims(self):
        return (*super().claims, "rounded_calibration")

    def round(self, p: float) -> Forecast:
        pn = p * self.N
        near = math.floor(pn + 0.5)
        if abs(pn - near) <= 8 * 2.220446049250313e-16 * max(
            1.0, pn
        ):  # a grid point n/N whose product with N is off by an ulp
            pn = near
        lo = math.floor(pn)
        frac = pn - lo
        if lo >= self.N:
            return Forecast((1.0,), (1.0,), internal=p)
        return Forecast.two_point(lo / self.N, (lo + 1) / self.N, 1.0 - frac, internal=p)

    def predict(self, x):
        self._p = super().predict(x)
        return self.round(self._p)

    def update(self, x, p, y):
        super().update(x, self._p, y)  # the unrounded forecast, not the revealed one

    def play_oblivious(self, X, y, u):
        """The internal forecasts from the compiled engine (the updates use them, not the revealed ones),
        each then rounded and realized by the round's rules, with the uniform of its round."""
        out = super().play_oblivious(X, y, u)
        if out is None:
            return None
        p_int = out[2]
        forecasts = [self.round(p) for p in p_int.tolist()]
        mean = np.array([f.mean for f in forecasts])
        p = np.array([realize(f, v) for f, v in zip(forecasts, np.asarray(u, float).tolist(), strict=True)])
        if len(p_int):
            self._p = float(p_int[-1])
        return mean, p, p_int
