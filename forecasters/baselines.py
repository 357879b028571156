"""Baseline forecasters of the binary game: the comparisons defensive forecasting must beat.

References
----------
Perdomo & Recht, §6 (online gradient descent).
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np

from arena.protocols import Context, Forecaster
from arena.registry import register

#: The longest window a forecaster accepts (longer than any horizon the arena plays).
MAX_WINDOW = 10**9


def _is_number(value) -> bool:
    """An int or float, not a bool (YAML's true/false would otherwise pass as 1/0)."""
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def _bits(y) -> np.ndarray | None:
    """The outcomes as a float array when all are 0 or 1 (then running sums are exact), else None."""
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    return y if np.all((y == 0.0) | (y == 1.0)) else None


# The simple baselines announce point forecasts that depend on past outcomes only, so against an
# oblivious nature they can play every round at once: ``play_oblivious(X, y, u)`` returns
# (p_mean, p, p_internal), all equal to the forecasts the predict/update loop announces (from the
# forecaster's current state), and leaves the state that loop would leave. None (the step loop
# plays) unless every outcome is 0 or 1. Worth its second copy of each rule: benchmarks/oblivious.py
# measured the game 3-9x faster than the step loop, about half of a whole matchup (2026-11-26).


@register
class Constant(Forecaster):
    """Always the same forecast ``c``.

    Examples
    --------
    >>> Constant(0.3).predict(np.zeros(0))
    0.3
    """

    name = "constant"

    def __init__(self, c: float = 0.5):
        if not _is_number(c):
            raise ValueError(f"constant: c={c!r} is not a number; give a probability such as c: 0.5")
        if not 0 <= c <= 1:
            raise ValueError(f"constant: c={c!r} is outside [0, 1]; give a probability such as c: 0.5")
        self.c = float(c)

    def predict(self, x: Context) -> float:
        return self.c

    def update(self, x, p, y):
        pass

    def play_oblivious(self, X, y, u):
        y = _bits(y)
        if y is None:
            return None
        p = np.full(len(y), self.c)
        return p, p, p


@register
class RunningMean(Forecaster):
    """Laplace-smoothed frequency of past ones: (1 + sum y) / (2 + n).

    Examples
    --------
    >>> r = RunningMean(); r.reset(None); r.update(None, 0.5, 1.0); r.predict(None)
    0.6666666666666666
    """

    name = "running_mean"

    def reset(self, rng):
        super().reset(rng)
        self._ones, self._n = 0.0, 0

    def predict(self, x):
        return (1.0 + self._ones) / (2.0 + self._n)

    def update(self, x, p, y):
        self._ones += y
        self._n += 1

    def play_oblivious(self, X, y, u):
        y = _bits(y)
        if y is None:
            return None
        ones = self._ones + np.concatenate(([0.0], np.cumsum(y)))[:-1]  # ones seen before each round
        p = (1.0 + ones) / (2.0 + self._n + np.arange(len(y)))
        self._ones += float(y.sum())
        self._n += len(y)
        return p, p, p


@register
class LastOutcome(Forecaster):
    """The previous outcome (1/2 before any)."""

    name = "last_outcome"

    def reset(self, rng):
        super().reset(rng)
        self._last = 0.5

    def predict(self, x):
        return self._last

    def update(self, x, p, y):
        self._last = float(y)

    def play_oblivious(self, X, y, u):
        y = _bits(y)
        if y is None:
            return None
        p = np.concatenate(([self._last], y))[:-1]
        if len(y):
            self._last = float(y[-1])
        return p, p, p


@register
class WindowMean(Forecaster):
    """Mean of the last ``window`` outcomes (1/2 before any)."""

    name = "window_mean"

    def __init__(self, window: int = 50):
        if isinstance(window, bool) or not (isinstance(window, (int, np.integer)) and window >= 1):
            raise ValueError(f"window_mean: window={window!r} must be an integer >= 1, e.g. window: 50")
        if window > MAX_WINDOW:
            raise ValueError(
                f"window_mean: window={window!r} is above {MAX_WINDOW}; for the mean of all outcomes use running_mean"
            )
        self.window = int(window)

    def reset(self, rng):
        super().reset(rng)
        self._buf: deque[float] = deque(maxlen=self.window)
        self._sum = 0.0

    def predict(self, x):
        return self._sum / len(self._buf) if self._buf else 0.5

    def update(self, x, p, y):
        if len(self._buf) == self.window:
            self._sum -= self._buf[0]
        self._buf.append(float(y))
        self._sum += y

    def play_oblivious(self, X, y, u):
        y = _bits(y)
        if y is None:
            return None
        seen = np.concatenate((np.array(self._buf, dtype=np.float64), y))  # the window so far, then the rounds
        before = len(self._buf) + np.arange(len(y))  # outcomes seen before each round
        count = np.minimum(before, self.window)
        total = np.concatenate(([0.0], np.cumsum(seen)))
        sums = total[before] - total[before - count]
        p = np.divide(sums, count, out=np.full(len(y), 0.5), where=count > 0)
        for v in y[-self.window :].tolist():
            self.update(None, None, v)
        return p, p, p


@register
class OGD(Forecaster):
    """Projected online gradient descent on the squared loss for p = <w, [1, x]> (§6).

    w_{t+1} = Proj_{||w|| <= M}(w_t - lr_t (p_t - y_t) z_t) with z_t = [1, x_t] (the 1 only when
    ``intercept``), lr_t = lr (``schedule: fixed``) or lr / sqrt(t) (``schedule: sqrt``).
    The gradient uses the unclipped prediction; the announced forecast is clipped to
    [0, 1] when ``clip`` (otherwise an out-of-range forecast forfeits the game).

    ``paper: true`` is the paper's online gradient method (§6): w_t = w_{t-1} - α (p_{t-1} - y_{t-1})
    x_{t-1}, p_t = <w_t, x_t>, with α = ``lr`` fixed, no projection and no intercept (``schedule``,
    ``M`` and ``intercept`` are then not used). It claims ``ogd_regret``: regret to every <u, x>
    with ||u|| <= referee.M is at most M^2/α + α sum_t (p_t - y_t)^2 ||x_t||^2 (Zinkevich's
    argument on the half squared loss; the paper prints M^2/(2α) + α M^2 B^4 T/2, which assumes
    |p_t - y_t| <= M B). The game needs forecasts in [0, 1]: the announced forecast is p_t clipped
    (clipping only lowers (p - y)^2 for y in {0, 1}, so the bound still holds); the update uses the
    unclipped p_t, and the referee recomputes those iterates from the contexts, outcomes and ``lr``.

    Examples
    --------
    >>> from arena import play
    >>> r = play("binary", OGD(lr=0.1), "iid_bernoulli", T=2000, seed=0)
    >>> bool(abs(r.trace["p"].iloc[-200:].mean() - 0.3) < 0.1)
    True
    """

    name = "ogd"

    def __init__(
        self,
        lr: float = 0.1,
        schedule: str = "sqrt",
        M: float = 10.0,
        intercept: bool = True,
        clip: bool = True,
        paper: bool = False,
    ):
        if not (_is_number(lr) and math.isfinite(lr)):
            raise ValueError(f"ogd: lr={lr!r} is not a finite number; give a step size such as lr: 0.1")
        if not lr > 0:
            raise ValueError(f"ogd: lr={lr!r} must be > 0, e.g. lr: 0.1")
        if schedule not in ("fixed", "sqrt"):
            raise ValueError(f"ogd: schedule={schedule!r}; expected 'fixed' or 'sqrt'")
        if not (_is_number(M) and math.isfinite(M)):
            raise ValueError(f"ogd: M={M!r} is not a finite number; give the radius of the projection ball, e.g. M: 10")
        if not M > 0:
            raise ValueError(f"ogd: M={M!r} must be > 0 (the radius of the projection ball), e.g. M: 10")
        for key, value in (("intercept", intercept), ("clip", clip), ("paper", paper)):
            if not isinstance(value, (bool, np.bool_)):
                raise ValueError(f"ogd: {key}={value!r} must be true or false, e.g. {key}: true")  # noqa: TRY004
        self.lr, self.schedule, self.M = float(lr), schedule, float(M)
        self.intercept, self.clip, self.paper = bool(intercept), bool(clip), bool(paper)

    @property
    def claims(self) -> tuple[str, ...]:
        return ("ogd_regret",) if self.paper else ()

    def reset(self, rng):
        super().reset(rng)
        self._w: np.ndarray | None = None  # the weights, sized at the first context
        self._t = 0
        self._pad = self.intercept and not self.paper  # z = [1, x]
        self._fixed = self.schedule == "fixed" or self.paper  # lr_t = lr

    def _z(self, x) -> np.ndarray:
        """z = [1, x] (``intercept``) or x."""
        x = np.asarray(x, float).reshape(-1)
        z = np.concatenate(((1.0,), x)) if self._pad else x
        if self._w is None:
            self._w = np.zeros(z.size)
        if len(self._w) != z.size:
            raise ValueError(
                f"ogd: a context of {x.size} numbers after {len(self._w) - self._pad} in earlier rounds; "
                "give every round a context of the same length"
            )
        return z

    def predict(self, x):
        z = self._z(x)
        raw = float(self._w.dot(z))
        if self.clip or self.paper:  # paper: announced clipped into the game's [0, 1]; the update and the
            return min(max(raw, 0.0), 1.0)  # bound use the unclipped p_t
        return raw

    def update(self, x, p, y):
        self._t += 1
        z = self._z(x)
        lr = self.lr if self._fixed else self.lr / math.sqrt(self._t)
        self._w -= lr * (float(self._w.dot(z)) - float(y)) * z  # w_t - lr_t (<w_t, z_t> - y_t) z_t
        if self.paper:
            return  # no projection
        norm = math.sqrt(self._w.dot(self._w))
        if norm > self.M:
            self._w *= self.M / norm
