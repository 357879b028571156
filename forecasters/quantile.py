"""Forecasters of the quantile game (§10): defensive forecasting and online-conformal baselines.

Every forecaster here reads the level q and the range (ymin, ymax] from ``self.game``, which
the arena sets before ``reset``. Forecasts lie in [ymin, ymax].

- ``marginal_quantile_df``: predict ymax if sum_{s<t}(1{y_s <= p_s} - q) <= 0, else ymin.
  It certifies |coverage - q| <= max(q, 1 - q)/T without looking at the outcomes (§10: "some
  online quantile metrics are too easy to game").
- ``conditional_quantile_df``: Algorithm 6 with a kernel on (x, p), through the randomized
  two-point search of :func:`arena.search.two_point_search`. Hyperparameter free.
- baselines: ``quantile_ogd`` (online pinball-loss gradient descent), ``aci`` (adaptive
  conformal inference, Gibbs & Candes 2021), ``window_quantile`` and ``running_quantile``
  (empirical quantiles).

Empirical quantiles use the conformal convention: the level-b quantile of n values is the
ceil(b n)-th smallest (the smallest v whose empirical CDF is >= b).

References
----------
Perdomo & Recht, "In Defense of Defensive Forecasting", §10 (Algorithm 6); Gibbs & Candes,
"Adaptive conformal inference under distribution shift", NeurIPS 2021; errata: docs/ERRATA.md.
"""

from __future__ import annotations

import bisect
import math
from collections import deque
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from arena.kernels import FeatureKernel, Kernel, SumKernel, feature_terms
from arena.protocols import Context, Forecast, Forecaster
from arena.registry import register
from arena.search import two_point_search
from forecasters.defensive import MAX_GRID, checked_kernel


def _game_range(fc: Forecaster) -> tuple[float, float, float]:
    """(q, ymin, ymax) of the game the arena set on the forecaster."""
    game = getattr(fc, "game", None)
    if game is None or not hasattr(game, "q"):
        raise ValueError(
            f"{fc.name}: set .game to a quantile game before reset() (the arena does it; by hand: "
            "fc.game = arena.games.get_game('quantile', q=0.9, ymin=0, ymax=1))"
        )
    return float(game.q), float(game.ymin), float(game.ymax)


def empirical_quantile(sorted_values, level: float, default: float) -> float:
    """The ceil(level * n)-th smallest of ``sorted_values`` (``default`` when empty).

    Examples
    --------
    >>> empirical_quantile([1.0, 2.0, 3.0, 4.0], 0.5, 0.0), empirical_quantile([], 0.5, -1.0)
    (2.0, -1.0)
    """
    n = len(sorted_values)
    if n == 0:
        return default
    k = min(max(math.ceil(level * n), 1), n)
    return float(sorted_values[k - 1])


class _QuantileForecaster(Forecaster):
    games = ("quantile",)

    def reset(self, rng):
        super().reset(rng)
        self._q, self._lo, self._hi = _game_range(self)

    def _clip(self, p: float) -> float:
        return min(max(float(p), self._lo), self._hi)


# --------------------------------------------------------------------------- defensive
@register
class MarginalQuantileDF(_QuantileForecaster):
    """Marginal quantile DF (§10): ymax if sum_{s<t}(1{y_s <= p_s} - q) <= 0, else ymin.

    Because y_t lies in (ymin, ymax], predicting ymax covers and ymin does not, so the
    coverage path is deterministic: |mean coverage - q| <= max(q, 1 - q)/T (docs/ERRATA.md: the
    tight form of the paper's max(q, 1 - q)/(T - 1)). The count of covered rounds is kept as
    an integer and q as the exact ratio of two integers (the decimal it is written as: 7/10
    for 0.7), so the rule compares exactly, covered * den <= num * t, and ties (covered = q t)
    go to ymax as in the paper.

    Examples
    --------
    >>> from arena import play
    >>> r = play("quantile", MarginalQuantileDF(), "iid_normal", T=101, seed=0)
    >>> r.certificates["quantile_marginal"].holds, round(r.summary["coverage"], 4)
    (True, 0.901)
    """

    name = "marginal_quantile_df"
    family = "defensive"
    claims = ("quantile_marginal",)

    def reset(self, rng):
        super().reset(rng)
        self._covered, self._t = 0, 0
        # q exactly, as the decimal it is written as (7/10 for 0.7, not the nearest double 0.6999...)
        q = Fraction(repr(float(self._q)))
        self._num, self._den = q.numerator, q.denominator

    def predict(self, x: Context) -> float:
        # sum_{s<t} (1{y_s <= p_s} - q) <= 0  <=>  covered <= q (t - 1), compared in exact integer arithmetic:
        # the float product q * t rounds, and at a tie (covered = q t) it flips the forecast
        return self._hi if self._covered * self._den <= self._num * self._t else self._lo

    def update(self, x, p, y):
        self._covered += int(y <= p)
        self._t += 1


class _OnRange(Kernel):
    """A kernel on (x, u) seen as a kernel on (x, p), with u = (p - ymin)/(ymax - ymin) in [0, 1]."""

    def __init__(self, inner: Kernel, ymin: float, ymax: float):
        self.inner, self.ymin, self.width = inner, float(ymin), float(ymax) - float(ymin)

    @property
    def finite(self):  # type: ignore[override]
        return self.inner.finite

    def u(self, P):
        return (np.asarray(P, float) - self.ymin) / self.width

    def gram(self, X1, P1, X2, P2):
        return self.inner.gram(X1, self.u(P1), X2, self.u(P2))

    def diag(self, X, P):
        return self.inner.diag(X, self.u(P))

    def features(self, X, P):
        return self.inner.features(X, self.u(P))

    def __repr__(self):
        return f"_OnRange({self.inner!r}, ymin={self.ymin}, width={self.width})"


@dataclass(frozen=True)
class PBins(Kernel):
    """One-hot of the bin of p among ``bins`` equal bins of [0, 1] (the last bin closed): it jumps in p.

    With it, Algorithm 6 certifies coverage conditional on the forecast's bin (quantile
    calibration), and its search meets discontinuities, where the two-point randomization
    is needed.

    Examples
    --------
    >>> PBins(4).features(np.zeros((3, 0)), np.array([0.0, 0.3, 1.0]))
    array([[1., 0., 0., 0.],
           [0., 1., 0., 0.],
           [0., 0., 0., 1.]])
    """

    bins: int = 10
    finite = True

    def index(self, P) -> np.ndarray:
        return np.clip(np.floor(np.asarray(P, float) * self.bins), 0, self.bins - 1).astype(int)

    def features(self, X, P):
        out = np.zeros((len(P), self.bins))
        out[np.arange(len(P)), self.index(P)] = 1.0
        return out

    def gram(self, X1, P1, X2, P2):
        return (self.index(P1)[:, None] == self.index(P2)[None, :]).astype(float)

    def diag(self, X, P):
        return np.ones(len(P))

    def lip_p(self, X, P):
        return math.inf

    def sup_abs(self, X, P):
        return 1.0


class _Affine:
    """S(u) = a + b u + c u^2 + bins[bin(u)] for kernels made of feature terms and p-bins.

    It reads the running sum C = sum_s w_s Phi(x_s, u_s) column by column, so that each
    evaluation of S during the search costs O(1) after O(d) work per round.
    """

    def __init__(self, parts: list, d: int):
        self.cols: list[tuple[int, float, bool, int, int]] = []  # (first column, scale, reads x, power of p, width)
        self.bins: tuple[int, int] | None = None  # (first column, number of bins)
        col = 0
        for k in parts:
            if isinstance(k, PBins):
                self.bins = (col, k.bins)
                col += k.bins
                continue
            for term in feature_terms(k.terms):
                self.cols.append((col, term.scale, term.reads_x, term.power, term.width(d)))
                col += term.width(d)

    @staticmethod
    def parts_of(kernel: Kernel) -> list | None:
        parts = list(kernel.parts) if isinstance(kernel, SumKernel) else [kernel]
        if sum(isinstance(k, PBins) for k in parts) > 1 or not all(
            isinstance(k, (FeatureKernel, PBins)) for k in parts
        ):
            return None
        return parts

    def coeffs(self, x: np.ndarray, C: np.ndarray) -> tuple[float, float, float, np.ndarray | None]:
        abc = [0.0, 0.0, 0.0]
        for col, c, reads_x, power, width in self.cols:
            v = float(np.dot(x, C[col : col + width])) if reads_x else C[col]
            abc[power] += c * v
        bins = C[self.bins[0] : self.bins[0] + self.bins[1]] if self.bins else None
        return abc[0], abc[1], abc[2], bins


@register
class ConditionalQuantileDF(_QuantileForecaster):
    """Conditional quantile DF (§10 Algorithm 6) with a kernel k on (x, p).

    S_t(p) = sum_{s<t} k((x_t, p), (x_s, p_s)) (1{y_s <= p_s} - q), where p_s is the *sampled*
    forecast. If S_t(ymin) >= 0 predict ymin; elif S_t(ymax) <= 0 predict ymax; else bisect
    keeping S_t(lo) < 0 < S_t(hi) until hi - lo <= 1/(10 t^2 |S_t(lo)|) and predict lo with
    probability |S_t(hi)|/(|S_t(lo)| + |S_t(hi)|), hi otherwise (:func:`arena.search.two_point_search`).
    Against any L-Lipschitz outcome law this makes E_t[(1{y_t <= p_t} - q) S_t(p_t)] <= L/(10 t^2),
    and for every f in the kernel's RKHS
    |sum_t E[f(x_t, p_t)(1{y_t <= p_t} - q)]| <= ||f|| sqrt(L + sum_t E k(z_t, z_t)).

    The kernel sees p rescaled to u = (p - ymin)/(ymax - ymin) in [0, 1]. The algorithm
    has no tuning parameter; the kernel is the model.

    Parameters
    ----------
    kernel
        A spec for :func:`arena.kernels.make_kernel` on (x, u). The default feature map
        Phi = [1, u, x] certifies marginal coverage, coverage weighted by u, and coverage in
        every group whose one-hot indicator is a context coordinate (group natures put them
        in x). Feature maps use an O(1)-per-evaluation search; other kernels (``{"rbf": 1.0}``,
        products) the direct O(t) sums.
    bins
        If > 0, add the one-hot of the forecast's bin among ``bins`` equal bins of [0, 1]
        (:class:`PBins`): coverage conditional on the forecast's bin. This Phi jumps in p,
        which exercises the randomization.

    Examples
    --------
    >>> from arena import play
    >>> r = play("quantile", ConditionalQuantileDF(bins=5), "lipschitz_cdf", T=200, seed=0)
    >>> r.certificates["quantile_round"].holds, r.summary["randomized_rounds"] > 0
    (True, True)
    """

    name = "conditional_quantile_df"
    family = "defensive"
    claims = ("quantile_round", "quantile_group")

    def __init__(self, kernel=None, bins: int = 0):
        if kernel is None:
            kernel = {"features": ["1", "p", "x"]}
        if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or not 0 <= bins <= MAX_GRID:
            raise ValueError(
                f"{self.name}: bins={bins!r} must be an integer in [0, {MAX_GRID}] (0: no bins of p), e.g. bins: 10"
            )
        self.kernel = kernel
        self.bins = int(bins)
        inner = checked_kernel(self.name, kernel)
        self._inner = SumKernel((inner, PBins(self.bins))) if self.bins else inner

    @property
    def kernel_object(self) -> Kernel:
        """The kernel on (x, p) of the game being played (the referee recomputes S_t with it)."""
        return self._k

    def reset(self, rng):
        super().reset(rng)
        self._k = _OnRange(self._inner, self._lo, self._hi)
        self._t = 0
        self._C = None  # running sum of w_s Phi(x_s, p_s) (finite kernels)
        self._X, self._P, self._W = [], [], []  # the history (other kernels)
        self._affine: _Affine | None = None
        self._parts = _Affine.parts_of(self._inner) if self._inner.finite else None

    def summary_function(self, x: Context):
        """S_t(.) on [ymin, ymax] for context x, given the history so far."""
        x = np.asarray(x, float).reshape(-1)
        if self._t == 0:
            return lambda p: 0.0
        k, x1 = self._k, x[None, :]
        if self._C is not None:
            if self._parts is not None:
                if self._affine is None:
                    self._affine = _Affine(self._parts, x.size)
                a, b, c, bins = self._affine.coeffs(x, self._C)
                lo, width = self._lo, self._hi - self._lo
                if bins is None:
                    return lambda p: a + b * ((p - lo) / width) + c * ((p - lo) / width) ** 2
                nb = len(bins)

                def S(p):
                    u = (p - lo) / width
                    return a + b * u + c * u * u + bins[min(max(math.floor(u * nb), 0), nb - 1)]

                return S
            C = self._C
            return lambda p: float(k.features(x1, np.array([p]))[0] @ C)
        X, P, W = np.array(self._X), np.array(self._P), np.array(self._W)
        return lambda p: float(k.gram(x1, np.array([p]), X, P)[0] @ W)

    def predict(self, x: Context) -> Forecast:
        t = self._t + 1

        def width(s_lo, s_hi):
            return 1.0 / (10.0 * t * t * abs(s_lo))

        return two_point_search(self.summary_function(x), self._lo, self._hi, width, increasing=True)

    def update(self, x, p, y):
        w = (1.0 if y <= p else 0.0) - self._q
        x = np.asarray(x, float).reshape(-1)
        if self._inner.finite:
            phi = self._k.features(x[None, :], np.array([p]))[0]
            self._C = w * phi if self._C is None else self._C + w * phi
        else:
            self._X.append(x)
            self._P.append(float(p))
            self._W.append(w)
        self._t += 1


# --------------------------------------------------------------------------- baselines
@register
class QuantileOGD(_QuantileForecaster):
    """Online (sub)gradient descent on the pinball loss, projected on [ymin, ymax].

    p_{t+1} = clip(p_t - eta_t g_t) with g_t = 1{y_t <= p_t} - q, the subgradient of
    rho_q(y_t - p) at p_t. Steps: ``"fixed"`` eta_t = lr; ``"sqrt"`` eta_t = lr/sqrt(t);
    ``"adagrad"`` eta_t = lr/sqrt(sum_{s<=t} g_s^2). ``lr`` is in outcome units.

    Parameters
    ----------
    lr : step size (outcome units), > 0.
    schedule : ``"fixed"``, ``"sqrt"`` or ``"adagrad"``.
    init : the first forecast; None for the midpoint of the range.

    Examples
    --------
    >>> from arena import play
    >>> r = play("quantile", QuantileOGD(lr=0.1, schedule="fixed"), "iid_normal", T=2000, seed=0)
    >>> abs(r.summary["coverage"] - 0.9) < 0.02
    True
    """

    name = "quantile_ogd"
    SCHEDULES = ("fixed", "sqrt", "adagrad")

    def __init__(self, lr: float = 1.0, schedule: str = "adagrad", init: float | None = None):
        if isinstance(lr, bool) or not isinstance(lr, (int, float)) or not (math.isfinite(lr) and lr > 0):
            raise ValueError(f"{self.name}: lr={lr!r} must be a positive number (outcome units), e.g. lr: 1.0")
        if schedule not in self.SCHEDULES:
            raise ValueError(f"{self.name}: schedule={schedule!r}; expected one of {list(self.SCHEDULES)}")
        if init is not None and (
            isinstance(init, bool) or not isinstance(init, (int, float)) or not math.isfinite(init)
        ):
            raise ValueError(f"{self.name}: init={init!r} must be a number or null (the middle of the range)")
        self.lr, self.schedule, self.init = float(lr), schedule, None if init is None else float(init)

    def reset(self, rng):
        super().reset(rng)
        self._p = self._clip(0.5 * (self._lo + self._hi) if self.init is None else self.init)
        self._t, self._g2 = 0, 0.0

    def predict(self, x):
        return self._p

    def update(self, x, p, y):
        g = (1.0 if y <= p else 0.0) - self._q
        self._t += 1
        self._g2 += g * g
        eta = {"fixed": self.lr, "sqrt": self.lr / math.sqrt(self._t), "adagrad": self.lr / math.sqrt(self._g2)}[
            self.schedule
        ]
        self._p = self._clip(p - eta * g)


@register
class ACI(_QuantileForecaster):
    """Adaptive conformal inference (Gibbs & Candes 2021) on the outcomes as scores.

    The set is (-inf, p_t] with p_t the empirical (1 - alpha_t)-quantile of past outcomes
    (the last ``window`` of them, all if 0); err_t = 1{y_t > p_t} and
    alpha_{t+1} = alpha_t + gamma (alpha - err_t) with alpha = 1 - q.

    Conventions: while fewer than ``burn_in`` outcomes have been seen, predict their empirical
    q-quantile (the middle of the range before any) and keep alpha_t = alpha; afterwards
    update alpha_t every round. alpha_t <= 0 (an infinite quantile) predicts ymax;
    alpha_t >= 1 (an empty set) predicts ymin.

    Claims ``aci_coverage`` (Gibbs & Candes, Prop. 4.1): over the rounds after the burn-in,
    |coverage - q| <= (max(alpha, 1 - alpha) + gamma)/(gamma n); with ``burn_in=0``, the whole run.

    Parameters
    ----------
    gamma : step of the alpha recursion, > 0 (G&C use 0.005).
    burn_in : rounds before the recursion starts, >= 0 (0: it runs from the first round).
    window : number of past outcomes the quantile uses (0: all).

    Examples
    --------
    >>> from arena import play
    >>> r = play("quantile", ACI(gamma=0.01), "iid_normal", T=2000, seed=0)
    >>> abs(r.summary["coverage"] - 0.9) < 0.02
    True
    """

    name = "aci"
    claims = ("aci_coverage",)

    def __init__(self, gamma: float = 0.005, burn_in: int = 10, window: int = 0):
        if isinstance(gamma, bool) or not isinstance(gamma, (int, float)) or not (math.isfinite(gamma) and gamma > 0):
            raise ValueError(f"{self.name}: gamma={gamma!r} must be a positive number, e.g. gamma: 0.005")
        for key, v, least in (("burn_in", burn_in, 0), ("window", window, 0)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < least:
                raise ValueError(f"{self.name}: {key}={v!r} must be an integer >= {least}")
        self.gamma, self.burn_in, self.window = float(gamma), int(burn_in), int(window)

    def reset(self, rng):
        super().reset(rng)
        self._alpha_target = 1.0 - self._q
        self._alpha = self._alpha_target
        self._sorted: list[float] = []
        self._recent: deque = deque()
        self._n = 0

    @property
    def alpha_t(self) -> float:
        return self._alpha

    def predict(self, x):
        if self._n < self.burn_in:
            return self._clip(empirical_quantile(self._sorted, self._q, 0.5 * (self._lo + self._hi)))
        if self._alpha <= 0:
            return self._hi
        if self._alpha >= 1:
            return self._lo
        return self._clip(empirical_quantile(self._sorted, 1.0 - self._alpha, 0.5 * (self._lo + self._hi)))

    def update(self, x, p, y):
        if self._n >= self.burn_in:
            err = 1.0 if y > p else 0.0
            self._alpha += self.gamma * (self._alpha_target - err)
        self._n += 1
        bisect.insort(self._sorted, float(y))
        if self.window:
            self._recent.append(float(y))
            if len(self._recent) > self.window:
                old = self._recent.popleft()
                del self._sorted[bisect.bisect_left(self._sorted, old)]


@register
class WindowQuantile(_QuantileForecaster):
    """The empirical q-quantile of the last ``window`` outcomes (the middle of the range before any).

    Examples
    --------
    >>> from arena import play
    >>> r = play("quantile", WindowQuantile(window=50), "iid_normal", T=500, seed=0)
    >>> 0.8 < r.summary["coverage"] < 0.95
    True
    """

    name = "window_quantile"

    def __init__(self, window: int = 100):
        if isinstance(window, bool) or not isinstance(window, (int, np.integer)) or window < 1:
            raise ValueError(f"{self.name}: window={window!r} must be an integer >= 1, e.g. window: 100")
        self.window = int(window)

    def reset(self, rng):
        super().reset(rng)
        self._sorted: list[float] = []
        self._recent: deque = deque()

    def predict(self, x):
        return self._clip(empirical_quantile(self._sorted, self._q, 0.5 * (self._lo + self._hi)))

    def update(self, x, p, y):
        bisect.insort(self._sorted, float(y))
        self._recent.append(float(y))
        if len(self._recent) > self.window:
            old = self._recent.popleft()
            del self._sorted[bisect.bisect_left(self._sorted, old)]


@register
class RunningQuantile(_QuantileForecaster):
    """The empirical q-quantile of every past outcome (the middle of the range before any).

    Examples
    --------
    >>> from arena import play
    >>> r = play("quantile", RunningQuantile(), "iid_normal", T=1000, seed=0)
    >>> abs(r.summary["coverage"] - 0.9) < 0.03
    True
    """

    name = "running_quantile"

    def reset(self, rng):
        super().reset(rng)
        self._sorted: list[float] = []

    def predict(self, x):
        return self._clip(empirical_quantile(self._sorted, self._q, 0.5 * (self._lo + self._hi)))

    def update(self, x, p, y):
        bisect.insort(self._sorted, float(y))


__all__ = [
    "ACI",
    "ConditionalQuantileDF",
    "MarginalQuantileDF",
    "PBins",
    "QuantileOGD",
    "RunningQuantile",
    "WindowQuantile",
    "empirical_quantile",
]
