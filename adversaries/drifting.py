"""Drifting natures for the binary game: the coin's bias moves over time.

All four are oblivious (they never look at the forecasts) and return the outcome
law ``Bernoulli(p_t)``; hidden state (the random walk, the Markov chain) is driven by
``self.rng`` only, so the same seed gives the same path of biases.

References
----------
Perdomo & Recht, "In Defense of Defensive Forecasting", §2 and §8.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from adversaries.iid import CHUNK, sigmoid
from arena.protocols import Bernoulli, Context, Draws, Forecast, Nature
from arena.registry import register
from arena.validators import check_count, check_positive, check_probability, check_real, check_vector


@register
class Sinusoid(Nature):
    """Periodic drift: p_t = 0.5 + amp * sin(2 pi t / period) (oblivious).

    Parameters
    ----------
    amp : float, default 0.4
        Amplitude, in [0, 0.5] so that p_t stays a probability.
    period : float, default 500
        Period in rounds, > 0.

    Examples
    --------
    >>> import numpy as np
    >>> nature = Sinusoid(amp=0.4, period=4)
    >>> nature.reset(np.random.default_rng(0))
    >>> [round(nature.respond(t, nature.context(t), Forecast.point(0.5)).p, 6) for t in (1, 2, 3, 4)]
    [0.9, 0.5, 0.1, 0.5]

    References
    ----------
    Perdomo & Recht, §8 (calibration against any sequence).
    """

    name = "sinusoid"
    games = ("binary",)
    adaptive = False

    def __init__(self, amp: float = 0.4, period: float = 500) -> None:
        self.amp = check_real(self.name, "amp", amp, "give an amplitude in [0, 0.5] such as amp: 0.4")
        if not 0.0 <= self.amp <= 0.5:
            raise ValueError(
                f"{self.name}: amp={amp!r} is outside [0, 0.5], so p_t would leave [0, 1]; "
                "give an amplitude such as amp: 0.4"
            )
        self.period = check_positive(self.name, "period", period, 500)

    def respond(self, t: int, x: Context, forecast: Forecast) -> Bernoulli:
        p = 0.5 + self.amp * math.sin(2.0 * math.pi * t / self.period)
        return Bernoulli(min(max(p, 0.0), 1.0))


def _fold(z: float, bound: float) -> float:
    """Reflect ``z`` into [-bound, bound] (a reflecting barrier at both ends)."""
    if -bound <= z <= bound:
        return z
    period = 4.0 * bound
    u = (z + bound) % period
    return (u if u <= 2.0 * bound else period - u) - bound


@register
class LogitWalk(Nature):
    """A random walk on the logit: logit p_{t+1} = logit p_t + sigma * N(0, 1) (oblivious).

    The walk starts at ``logit(p0)`` and reflects at ``+-bound`` so that p_t keeps moving
    instead of sticking near 0 or 1 on long horizons (a finite bound: an unbounded walk ends at p = 0 or 1
    in floating point, a game with no noise left).

    Parameters
    ----------
    sigma : float, default 0.1
        Standard deviation of each step of the logit, >= 0.
    p0 : float, default 0.5
        Probability in the first round, in (0, 1).
    bound : float, default 4.0
        Reflecting barrier for the logit (|logit p_t| <= bound, i.e. p_t in [0.018, 0.982]).

    Examples
    --------
    >>> import numpy as np
    >>> nature = LogitWalk(sigma=0.1, p0=0.5)
    >>> nature.reset(np.random.default_rng(0))
    >>> probs = [nature.respond(t, nature.context(t), Forecast.point(0.5)).p for t in range(1, 4)]
    >>> probs[0], 0 < probs[2] < 1
    (0.5, True)

    References
    ----------
    Perdomo & Recht, §8 (calibration against any sequence).
    """

    name = "logit_walk"
    games = ("binary",)
    adaptive = False

    def __init__(self, sigma: float = 0.1, p0: float = 0.5, bound: float = 4.0) -> None:
        self.sigma = check_real(self.name, "sigma", sigma, "give a step size such as sigma: 0.1")
        if self.sigma < 0:
            raise ValueError(f"{self.name}: sigma={sigma!r} is negative; give a step size such as sigma: 0.1")
        self.p0 = check_probability(self.name, "p0", p0, 0.5)
        if self.p0 in (0.0, 1.0):
            raise ValueError(f"{self.name}: p0={p0!r} has an infinite logit; give p0 in (0, 1) such as p0: 0.5")
        self.bound = check_real(self.name, "bound", bound, "give a finite bound such as bound: 4.0")
        if not self.bound > 0:
            raise ValueError(f"{self.name}: bound={bound!r} must be > 0; give e.g. bound: 4.0")
        if abs(math.log(self.p0 / (1.0 - self.p0))) > self.bound:
            raise ValueError(
                f"{self.name}: p0={p0!r} lies outside the barrier bound={bound!r} on the logit; "
                "raise bound or move p0 towards 0.5"
            )

    def reset(self, rng: np.random.Generator) -> None:
        super().reset(rng)
        self._logit = math.log(self.p0 / (1.0 - self.p0))
        self._t = 1
        self._steps = Draws(self.rng, "standard_normal", CHUNK)  # the same normals as one draw a round

    def respond(self, t: int, x: Context, forecast: Forecast) -> Bernoulli:
        while self._t < t:  # one step per elapsed round
            self._logit = _fold(self._logit + self.sigma * self._steps.next(), self.bound)
            self._t += 1
        return Bernoulli(sigmoid(self._logit))


@register
class Changepoints(Nature):
    """Piecewise-constant bias: ``probs`` in turn, each for ``every`` rounds, cycling (oblivious).

    Parameters
    ----------
    probs : list of float, default [0.2, 0.8, 0.5]
        The successive probabilities, each in [0, 1].
    every : int, default 1000
        Length of each segment in rounds, >= 1.

    Examples
    --------
    >>> import numpy as np
    >>> nature = Changepoints(probs=[0.2, 0.8], every=2)
    >>> nature.reset(np.random.default_rng(0))
    >>> [nature.respond(t, nature.context(t), Forecast.point(0.5)).p for t in range(1, 6)]
    [0.2, 0.2, 0.8, 0.8, 0.2]

    References
    ----------
    Perdomo & Recht, §8 (calibration against any sequence).
    """

    name = "changepoints"
    games = ("binary",)
    adaptive = False

    def __init__(self, probs: Iterable[float] = (0.2, 0.8, 0.5), every: int = 1000) -> None:
        self.probs = check_vector(self.name, "probs", probs, "[0.2, 0.8, 0.5]", probabilities=True)
        self.every = check_count(self.name, "every", every, 1000)

    def reset(self, rng: np.random.Generator) -> None:
        super().reset(rng)
        self._laws = tuple(Bernoulli(p) for p in self.probs)

    def respond(self, t: int, x: Context, forecast: Forecast) -> Bernoulli:
        return self._laws[((t - 1) // self.every) % len(self._laws)]


@register
class Markov(Nature):
    """Hidden Markov switching: a hidden state picks the bias and switches w.p. ``switch`` (oblivious).

    The first state is drawn uniformly (the chain's stationary law); at each later round
    the state moves, with probability ``switch``, to a uniformly chosen other state.

    Parameters
    ----------
    probs : list of float, default [0.2, 0.8]
        The probability of a 1 in each hidden state (two or more states).
    switch : float, default 0.01
        Probability of leaving the current state at each round, in [0, 1].

    Examples
    --------
    >>> import numpy as np
    >>> nature = Markov(probs=[0.2, 0.8], switch=0.01)
    >>> nature.reset(np.random.default_rng(0))
    >>> nature.respond(1, nature.context(1), Forecast.point(0.5)).p in (0.2, 0.8)
    True

    References
    ----------
    Perdomo & Recht, §8 (calibration against any sequence).
    """

    name = "markov"
    games = ("binary",)
    adaptive = False

    def __init__(self, probs: Iterable[float] = (0.2, 0.8), switch: float = 0.01) -> None:
        self.probs = check_vector(self.name, "probs", probs, "[0.2, 0.8]", probabilities=True)
        if len(self.probs) < 2:
            raise ValueError(
                f"{self.name}: probs={list(self.probs)!r} has one state; give two or more, e.g. probs: [0.2, 0.8]"
            )
        self.switch = check_probability(self.name, "switch", switch, 0.01)

    def reset(self, rng: np.random.Generator) -> None:
        super().reset(rng)
        self._state = int(self.rng.integers(len(self.probs)))
        self._t = 1
        self._laws = tuple(Bernoulli(p) for p in self.probs)
        self._uniforms = Draws(self.rng, "random", CHUNK)

    def respond(self, t: int, x: Context, forecast: Forecast) -> Bernoulli:
        while self._t < t:  # one transition per elapsed round
            if self._uniforms.next() < self.switch:
                other = int(self._uniforms.next() * (len(self.probs) - 1))  # uniform on the other states
                self._state = other if other < self._state else other + 1
            self._t += 1
        return self._laws[self._state]
