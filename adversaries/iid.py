"""I.i.d. natures for the binary game: a fixed coin and a contextual logistic model.

Both are oblivious and return the outcome law, so the referee computes expected
metrics exactly.

References
----------
Perdomo & Recht, "In Defense of Defensive Forecasting", §2 and §6.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from arena.protocols import Bernoulli, Context, Forecast, Nature
from arena.registry import register
from arena.validators import check_probability, check_real, check_vector

#: Rounds of per-round randomness a nature draws at once (a scalar draw costs more than a round).
CHUNK = 1024


def sigmoid(z: float) -> float:
    """1 / (1 + exp(-z)) for a float, without overflow (shared by the logistic natures).

    Examples
    --------
    >>> sigmoid(0.0), sigmoid(-1000.0)
    (0.5, 0.0)
    """
    # the two branches avoid overflow of exp for large |z|
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


@register
class IidBernoulli(Nature):
    """Independent coin flips: y_t ~ Bernoulli(p) in every round (oblivious).

    Parameters
    ----------
    p : float, default 0.3
        Probability of the outcome 1, in [0, 1].

    Examples
    --------
    >>> import numpy as np
    >>> nature = IidBernoulli(p=0.3)
    >>> nature.reset(np.random.default_rng(0))
    >>> nature.respond(1, nature.context(1), Forecast.point(0.9))
    Bernoulli(p=0.3)

    References
    ----------
    Perdomo & Recht, §2 (the protocol) and §11 (i.i.d. data).
    """

    name = "iid_bernoulli"
    games = ("binary",)
    adaptive = False

    def __init__(self, p: float = 0.3) -> None:
        self.p = check_probability(self.name, "p", p)

    def reset(self, rng: np.random.Generator) -> None:
        super().reset(rng)
        self._law = Bernoulli(self.p)  # the same (immutable) law every round

    def respond(self, t: int, x: Context, forecast: Forecast) -> Bernoulli:
        return self._law


@register
class Logistic(Nature):
    """Contextual logistic outcomes: y_t ~ Bernoulli(sigmoid(<w, x_t>)) (oblivious).

    The context is ``x_t = (1, z_t)``: a constant intercept coordinate 1 followed by
    ``d - 1 = len(w) - 1`` i.i.d. standard normal features whose norm is clipped to
    ``sqrt(B**2 - 1)``, so that ``||x_t|| <= B`` always. The intercept is part of the
    context because the referee's linear comparator class is ``<w, x>`` with no
    separate intercept: ``w[0]`` is the bias of the logit.

    Contexts and their laws are drawn ``CHUNK`` rounds at a time; ``respond`` answers with
    the law of the context revealed last.

    Parameters
    ----------
    w : list of float, default [0.5, 2.0, -1.0]
        Weights of the logit; ``len(w)`` is the context dimension d.
    B : float, default 2.0
        Bound on the context norm ``||x_t||``; at least 1 (the intercept alone has norm 1).

    Examples
    --------
    >>> import numpy as np
    >>> nature = Logistic(w=[0.5, 2.0, -1.0], B=2.0)
    >>> nature.reset(np.random.default_rng(0))
    >>> x = nature.context(1)
    >>> x.shape, float(x[0]), bool(np.linalg.norm(x) <= 2.0)
    ((3,), 1.0, True)
    >>> law = nature.respond(1, x, Forecast.point(0.5))
    >>> bool(abs(law.p - 1 / (1 + np.exp(-(0.5 + 2 * x[1] - x[2])))) < 1e-12)
    True

    References
    ----------
    Perdomo & Recht, §6 (linear classes, ``||x|| <= B``).
    """

    name = "logistic"
    games = ("binary",)
    adaptive = False

    def __init__(self, w: Iterable[float] = (0.5, 2.0, -1.0), B: float = 2.0) -> None:
        self.w = check_vector(self.name, "w", w, "[0.5, 2.0, -1.0]")
        self.B = check_real(self.name, "B", B, "give a norm bound such as B: 2.0")
        if self.B < 1.0:
            raise ValueError(
                f"{self.name}: B={B!r} is below 1, but the intercept coordinate alone has norm 1; "
                "give B >= 1, such as B: 2.0"
            )

    @property
    def context_dim(self) -> int:
        return len(self.w)

    def reset(self, rng: np.random.Generator) -> None:
        super().reset(rng)
        self._radius = math.sqrt(self.B**2 - 1.0) if self.B < 1e150 else self.B  # B**2 overflows past 1e154
        self._rows, self._probs, self._next = np.zeros((0, self.context_dim)), [], 0

    def _draw(self, n: int) -> tuple[np.ndarray, list[float]]:
        """``n`` contexts and their probabilities sigmoid(<w, x>), at once."""
        z = self.rng.standard_normal((n, self.context_dim - 1))
        norm = np.linalg.norm(z, axis=1)
        clip = norm > self._radius
        z[clip] *= (self._radius / norm[clip])[:, None]
        x = np.hstack((np.ones((n, 1)), z))
        while True:  # rounding can overshoot B by an ulp; the referee checks <= B
            over = np.linalg.norm(x, axis=1) > self.B
            if not over.any():
                break
            x[over, 1:] *= 0.999
        logit = x @ np.asarray(self.w)
        e = np.exp(-np.abs(logit))  # the sigmoid without overflow, as sigmoid computes it
        return x, (np.where(logit >= 0, 1.0, e) / (1.0 + e)).tolist()

    def context(self, t: int) -> Context:
        if self._next == len(self._rows):
            (self._rows, self._probs), self._next = self._draw(CHUNK), 0
        self._next += 1
        return self._rows[self._next - 1]

    def respond(self, t: int, x: Context, forecast: Forecast) -> Bernoulli:
        return Bernoulli(self._probs[self._next - 1])  # x is the context revealed last
