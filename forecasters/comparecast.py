"""comparecast's forecasters, as its published experiment computed them (Choe & Ramdas).

``k29_comparecast`` is comparecast's K29 (``comparecast.forecasters.forecast_k29``), which differs
from the arena's ``k29`` in four ways, each kept here so that its published forecasts are
reproduced: its kernels (``poly``: (1 + p p')^d, ``rbf``: exp(-(p - p')^2 / (2 sigma^2 + 1e-9)),
``epa``: 0.75 (1 - ((p - p') / c)^2)); its root search (scipy's ``bisect`` on [0, 1] stopped after
``maxiter`` halvings); its rule when S has no sign change on [0, 1], (1 + sign S(0)) / 2; and its
one-round shift: the forecast of round t is the root computed from rounds 1..t-2, the first one
0.5 (``shift_forecasts``). ``laplace`` is comparecast's Laplace forecaster, (c + k) / (n + 1) after
k ones in n rounds (the arena's ``running_mean`` is (1 + k) / (2 + n)).

Both are O(t) per evaluation of S, as in comparecast; they exist to reproduce its numbers
(``tests/test_real.py``), not to be fast.

References
----------
Choe & Ramdas, "Comparing sequential forecasters", Operations Research (2023); code:
github.com/yjchoe/ComparingForecasters (MIT), ``comparecast/forecasters.py``, ``kernels.py``.
"""

from __future__ import annotations

import numpy as np

from arena.protocols import Context, Forecaster
from arena.registry import register

#: Each kernel's default parameter, as comparecast's presets (k29_poly3, k29_rbf0.01, k29_epa).
KERNEL_DEFAULTS = {"poly": 3.0, "rbf": 0.01, "epa": 2.0}
#: scipy's bisect tolerances (``scipy.optimize.bisect``: xtol=2e-12, rtol=4 eps).
XTOL, RTOL = 2e-12, 4 * np.finfo(float).eps


def comparecast_kernel(kernel: str, param: float):
    """k(p, P) for a scalar p and an array P, with comparecast's float operations in its order.

    >>> comparecast_kernel("poly", 3)(0.5, np.array([0.0, 1.0])).tolist()
    [1.0, 3.375]
    """
    if kernel == "poly":
        return lambda p, P: (1.0 + p * P) ** param
    if kernel == "rbf":
        scale = 2 * param**2 + 1e-9
        return lambda p, P: np.exp(-((p - P) ** 2) / scale)
    return lambda p, P: 0.75 * (1 - ((p - P) / param) ** 2)


def bisect(f, maxiter: int) -> float:
    """scipy's ``bisect`` on [0, 1] (its C loop, step for step), stopped after ``maxiter`` halvings,
    with comparecast's rule where f(0) and f(1) have the same sign: (1 + sign f(0)) / 2.

    >>> bisect(lambda p: 0.3 - p, 10), bisect(lambda p: 1.0, 10), bisect(lambda p: 0.0, 10)
    (0.2998046875, 1.0, 0.0)
    """
    fa, fb = f(0.0), f(1.0)
    if fa * fb > 0:
        return (1.0 + float(np.sign(fa))) / 2.0
    if fa == 0:
        return 0.0
    if fb == 0:
        return 1.0
    xa, dm = 0.0, 1.0
    for _ in range(maxiter):
        dm *= 0.5
        xm = xa + dm
        fm = f(xm)
        if fm * fa >= 0:
            xa = xm
        if fm == 0 or abs(dm) < XTOL + RTOL * abs(xm):
            return xm
    return xa


@register
class K29Comparecast(Forecaster):
    """comparecast's K29, reproducing its published forecasts (``k29_poly3``, ``k29_rbf0.01``).

    Parameters
    ----------
    kernel : ``poly``, ``rbf`` or ``epa``.
    kernel_param : the degree d, the width sigma or the normaliser c; None: 3, 0.01 or 2.0.
    maxiter : the bisection's halvings (comparecast: 10, a forecast to within 2^-10).

    Examples
    --------
    >>> f = K29Comparecast(); f.reset(None)
    >>> ps = []
    >>> for y in [1, 0, 1, 1]:
    ...     ps.append(f.predict(None)); f.update(None, ps[-1], y)
    >>> ps
    [0.5, 0.0, 1.0, 0.0]
    """

    name = "k29_comparecast"

    def __init__(self, kernel: str = "poly", kernel_param: float | None = None, maxiter: int = 10):
        if kernel not in KERNEL_DEFAULTS:
            raise ValueError(f"{self.name}: kernel={kernel!r} is not one of {', '.join(KERNEL_DEFAULTS)}")
        if kernel_param is not None and (
            isinstance(kernel_param, bool) or not isinstance(kernel_param, (int, float)) or not kernel_param > 0
        ):
            raise ValueError(f"{self.name}: kernel_param={kernel_param!r} must be a positive number or null")
        if isinstance(maxiter, bool) or not isinstance(maxiter, int) or not 1 <= maxiter <= 60:
            raise ValueError(f"{self.name}: maxiter={maxiter!r} must be a whole number from 1 to 60, e.g. maxiter: 10")
        self.kernel, self.kernel_param, self.maxiter = kernel, kernel_param, maxiter
        param = KERNEL_DEFAULTS[kernel] if kernel_param is None else kernel_param
        # poly's degree is an integer power in comparecast ((1 + pp') ** 3): keep the same pow
        self._k = comparecast_kernel(kernel, int(param) if kernel == "poly" and param == int(param) else param)

    def reset(self, rng):
        super().reset(rng)
        self._y: list[float] = []
        self._roots: list[float] = []

    def _root(self, k: int) -> float:
        """The k-th root (0-based): S(p) = sum_{i<k} k(p, r_i) (y_i - r_i), summed left to right as Python's
        ``sum`` does (``cumsum``'s last value), so that every bisection step compares the same numbers."""
        if k == 0:
            return bisect(lambda p: 0.0, self.maxiter)
        R = np.asarray(self._roots[:k])
        W = np.asarray(self._y[:k]) - R
        kern = self._k
        return bisect(lambda p: float(np.cumsum(kern(p, R) * W)[-1]), self.maxiter)

    def predict(self, x: Context) -> float:
        n = len(self._y)
        if n == 0:
            return 0.5
        while len(self._roots) < n:  # the forecast of round n + 1 is the root from rounds 1..n-1
            self._roots.append(self._root(len(self._roots)))
        return float(self._roots[n - 1])

    def update(self, x, p, y):
        self._y.append(float(y))


@register
class Laplace(Forecaster):
    """comparecast's Laplace forecaster: (c + k) / (n + 1) after k ones in n rounds (c before any).

    Examples
    --------
    >>> f = Laplace(); f.reset(None)
    >>> ps = []
    >>> for y in [0, 1, 1, 0]:
    ...     ps.append(f.predict(None)); f.update(None, ps[-1], y)
    >>> ps
    [0.5, 0.25, 0.5, 0.625]
    """

    name = "laplace"

    def __init__(self, c: float = 0.5):
        if isinstance(c, bool) or not isinstance(c, (int, float)) or not 0 <= c <= 1:
            raise ValueError(f"{self.name}: c={c!r} must be in [0, 1], e.g. c: 0.5")
        self.c = float(c)

    def reset(self, rng):
        super().reset(rng)
        self._ones, self._n = 0.0, 0

    def predict(self, x: Context) -> float:
        return (self._ones + self.c) / (self._n + 1)

    def update(self, x, p, y):
        self._ones += y
        self._n += 1

    def play_oblivious(self, X, y, u):
        y = np.asarray(y, float)
        ones = self._ones + np.concatenate(([0.0], np.cumsum(y)))[:-1]
        p = (ones + self.c) / (self._n + 1 + np.arange(len(y)))
        self._ones += float(y.sum())
        self._n += len(y)
        return p, p, p
