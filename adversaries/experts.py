"""Expert panels: the natures of the experts game (§9).

A panel reveals N experts' advice as the context and answers with binary outcomes. It
*wraps a binary nature* (``outcomes``: a registered name, or ``{name: ..., params: {...}}``):
the wrapped nature's contexts are what the experts look at, and its answers are the
outcomes. With ``greedy: true`` the outcomes come instead from the greedy regret maximiser:
seeing the announced forecast, it picks the y in {0, 1} that maximizes the forecaster's
instantaneous regret against the current leader (the expert with the least loss so far),
E_p[ℓ(p, y) - ℓ(f_leader(x, p), y)] over the announced distribution, under the game's loss.
A panel is adaptive when it is greedy, when its wrapped nature is, or when its experts
second-guess the forecast (their advice, hence the recorded game, depends on it).

Panels (every one has ``N``, ``outcomes`` and ``greedy``):

* ``expert_constants``: a fixed grid of constant forecasts;
* ``expert_logistic``: logistic experts sigmoid(<w_j, x_t>) with different weights;
* ``expert_good_noisy``: one expert reports the true P(y_t = 1), the others a noisy version;
* ``expert_switching``: the expert that reports the truth changes every ``period`` rounds;
* ``expert_second_guessing``: experts that see the forecast p before they advise
  (f_j(x, p) = (1 - beta) b_j + beta r_j(p), continuous in p).

The last two of the first four need the truth before the forecast: they read the wrapped
nature's law when it reveals its context, so that nature must be oblivious.

References
----------
Perdomo & Recht, §9 (experts, second-guessing experts).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import numpy as np

from arena.games import get_game
from arena.games.experts import LOSS_FUNCTIONS
from arena.lazy import LazyModule
from arena.protocols import Context, ExpertsNature, Forecast, Nature, OutcomeLaw
from arena.registry import UnknownPluginError, make_nature, register
from arena.validators import MAX_SIZE, check_count, check_positive, check_probability, check_real, check_vector

_special = LazyModule("scipy.special")  # expit, at the first panel that needs it (scipy.special is slow to import)


class _AdaptiveFlag:
    """``adaptive`` of a panel. A second-guessing panel is adaptive (its advice sees the forecast);
    another panel is adaptive when it is greedy or wraps an adaptive nature, so on the class,
    before it is configured, the flag reads False."""

    def __get__(self, obj, cls=None) -> bool:
        if obj is None:
            return bool(cls.second_guessing)
        return bool(obj.second_guessing or obj.greedy or getattr(obj._inner, "adaptive", False))


def _inner_nature(who: str, outcomes) -> Nature:
    """The wrapped binary nature from a name, a ``{name, params}`` mapping or an instance."""
    if isinstance(outcomes, Nature):
        inner = outcomes
    else:
        params = (outcomes.get("params") or {}) if isinstance(outcomes, Mapping) else None
        if isinstance(outcomes, str):
            name, params = outcomes, {}
        elif isinstance(params, Mapping) and "name" in outcomes and set(outcomes) <= {"name", "params"}:
            name = str(outcomes["name"])
        else:
            raise ValueError(
                f"{who}: outcomes={outcomes!r}; give the name of a binary nature (e.g. outcomes: "
                "iid_bernoulli) or {name: logistic, params: {w: [0.5, 2.0]}}"
            )
        try:
            inner = make_nature(name, **dict(params))
        except UnknownPluginError as exc:  # a KeyError; a bad parameter value is a ValueError
            raise ValueError(f"{who}: outcomes: {exc}") from None
        except TypeError as exc:  # a parameter the wrapped nature does not take
            raise ValueError(f"{who}: outcomes={outcomes!r}: {exc}; give only that nature's parameters") from None
    if "binary" not in inner.games:
        raise ValueError(
            f"{who}: outcomes nature {inner.name!r} plays {inner.games}; a panel wraps a nature of "
            "the binary game (e.g. iid_bernoulli, logistic, sinusoid, anti_forecaster)"
        )
    return inner


class ExpertPanel(ExpertsNature):
    """Base class of the panels: N experts' advice as the context, outcomes from a wrapped nature.

    Subclasses implement :meth:`_advice` (the advice of round t from the wrapped nature's
    context ``z``); second-guessing panels also override :meth:`advice`.
    """

    games = ("experts",)
    adaptive = _AdaptiveFlag()
    #: True when the advice depends on the forecast (then ``advice(t, x, p)`` gives it).
    second_guessing = False
    #: Needs the truth P(y_t = 1) when revealing the context (oblivious wrapped natures only).
    needs_law = False
    default_outcomes = "iid_bernoulli"

    def __init__(self, N: int, outcomes=None, greedy: bool = False):
        self.N = check_count(self.name, "N", N, 8, maximum=MAX_SIZE)
        self.outcomes = self.default_outcomes if outcomes is None else outcomes
        if not isinstance(greedy, (bool, np.bool_)):
            raise ValueError(f"{self.name}: greedy={greedy!r} must be true or false")  # noqa: TRY004
        self.greedy = bool(greedy)
        self._inner = _inner_nature(self.name, self.outcomes)
        if self.needs_law and self._inner.adaptive:
            raise ValueError(
                f"{self.name}: outcomes nature {self._inner.name!r} is adaptive, but this panel's "
                "experts read the outcome law before the forecast; wrap an oblivious nature "
                "(e.g. outcomes: sinusoid) and use greedy: true for adaptive outcomes"
            )

    @property
    def context_dim(self) -> int:
        return self.N

    @property
    def length(self) -> int | None:
        return self._inner.length

    @property
    def advice_lipschitz(self) -> float:
        """A bound on |d f_j(x, p) / dp| (0: the advice does not depend on p)."""
        return 0.0

    def params(self) -> dict:
        out = super().params()
        if isinstance(out.get("outcomes"), Nature):
            out["outcomes"] = {"name": out["outcomes"].name, "params": out["outcomes"].params()}
        return out

    # ------------------------------------------------------------------------------ protocol
    def reset(self, rng: np.random.Generator) -> None:
        super().reset(rng)
        inner_rng, self._rng = rng.spawn(2)
        self._inner.game = get_game("binary")
        self._inner.reset(inner_rng)
        self._losses = np.zeros(self.N)  # each expert's cumulative loss (the greedy leader)
        self._z = self._x = np.zeros(0)
        self._law = None
        self._truth = math.nan
        self._setup()

    def _setup(self) -> None:
        """Per-game state of a subclass (drawn from ``self._rng``)."""

    def context(self, t: int) -> Context:
        self._z = np.asarray(self._inner.context(t), dtype=np.float64).reshape(-1)
        if self.needs_law:
            self._law = self._inner.respond(t, self._z, _SHOWN)
            law = self._law
            self._truth = float(getattr(law, "p", 1.0 - law.cdf(0.0))) if isinstance(law, OutcomeLaw) else float(law)
        self._x = np.clip(self._advice(t, self._z), 0.0, 1.0)
        return self._x

    def _advice(self, t: int, z: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def advice(self, t: int, x: Context, p: float) -> np.ndarray:
        """f(x_t, p): the advice given to the forecast p (the revealed advice, for an ordinary panel).

        A pure function of its arguments: the arena may call it after the panel moved on."""
        return np.asarray(x, dtype=np.float64)

    def _loss(self):
        """The game's loss, elementwise (the squared loss outside the experts game)."""
        name = str(getattr(getattr(self, "game", None), "loss", "squared"))
        return LOSS_FUNCTIONS.get(name, LOSS_FUNCTIONS["squared"])

    def respond(self, t: int, x: Context, forecast: Forecast):
        if self.greedy:
            return self._greedy(t, x, forecast)
        if self.needs_law:
            return self._law
        return self._inner.respond(t, self._z, forecast)

    def _greedy(self, t: int, x: Context, forecast: Forecast) -> float:
        """The outcome that maximizes the expected instantaneous regret against the current leader."""
        loss = self._loss()
        leader = int(np.argmin(self._losses))
        regret = []
        for y in (0.0, 1.0):
            r = 0.0
            for p, w in zip(forecast.points, forecast.probs, strict=False):
                f = float(self.advice(t, x, p)[leader])
                a, b = float(loss(p, y)), float(loss(f, y))
                r += w * (0.0 if a == b else a - b)  # inf - inf: both lose everything, no regret
            regret.append(r)
        return 1.0 if regret[1] >= regret[0] else 0.0

    def observe(self, t: int, p: float, y: float) -> None:
        self._inner.observe(t, p, y)
        loss = self._loss()
        self._losses += loss(self.advice(t, self._x, p), y)


_SHOWN = Forecast.point(0.5)  # what a law-reading panel shows its oblivious nature


def _grid(N: int) -> np.ndarray:
    return (np.arange(N) + 1.0) / (N + 1.0)


@register
class ExpertConstants(ExpertPanel):
    """A fixed grid of constant experts: f_j = grid[j] (default (j + 1)/(N + 1), j = 0..N-1).

    Parameters
    ----------
    N : number of experts (>= 1); ignored when ``grid`` is given.
    grid : the constants, in [0, 1].
    outcomes : the wrapped binary nature (default iid_bernoulli).
    greedy : outcomes from the greedy regret maximiser instead.

    Examples
    --------
    >>> panel = ExpertConstants(N=4)
    >>> panel.reset(np.random.default_rng(0))
    >>> panel.context(1).tolist()
    [0.2, 0.4, 0.6, 0.8]
    """

    name = "expert_constants"

    def __init__(self, N: int = 9, grid=None, outcomes=None, greedy: bool = False):
        if grid is not None:
            grid = list(check_vector(self.name, "grid", grid, "[0.1, 0.5, 0.9]", probabilities=True))
            N = len(grid)
        super().__init__(N, outcomes, greedy)
        self.grid = grid

    def _setup(self):
        self._values = np.array(self.grid, float) if self.grid is not None else _grid(self.N)

    def _advice(self, t, z):
        return self._values


@register
class ExpertLogistic(ExpertPanel):
    """Logistic experts f_j(x) = sigmoid(<w_j, x_t>) on the wrapped nature's contexts.

    Parameters
    ----------
    N : number of experts.
    weights : N weight vectors of the context's dimension; by default drawn per game as
        ``scale`` * N(0, I) (nature's stream).
    scale : spread of the random weights.
    outcomes : the wrapped nature; it must have contexts (default ``logistic``).

    Examples
    --------
    >>> panel = ExpertLogistic(weights=[[0.0, 0.0, 0.0], [10.0, 0.0, 0.0]])
    >>> panel.reset(np.random.default_rng(0))
    >>> panel.context(1).round(4).tolist()
    [0.5, 1.0]
    """

    name = "expert_logistic"
    default_outcomes = "logistic"

    def __init__(self, N: int = 8, weights=None, scale: float = 1.5, outcomes=None, greedy: bool = False):
        if weights is not None:
            if isinstance(weights, (str, bytes)) or not isinstance(weights, Iterable):
                raise ValueError(
                    f"{self.name}: weights={weights!r} is not a list of weight vectors; give e.g. "
                    "weights: [[0.5, 2.0, -1.0], [0.0, 1.0, 1.0]]"
                )
            rows = [
                list(check_vector(self.name, f"weights[{i}]", w, "[0.5, 2.0, -1.0]")) for i, w in enumerate(weights)
            ]
            if not rows or len({len(r) for r in rows}) != 1:
                raise ValueError(
                    f"{self.name}: weights={weights!r}; give N >= 1 weight vectors of one length "
                    "(the context dimension), e.g. weights: [[0.5, 2.0, -1.0], [0.0, 1.0, 1.0]]"
                )
            weights, N = rows, len(rows)
        super().__init__(N, outcomes, greedy)
        self.weights = weights
        self.scale = check_positive(self.name, "scale", scale, 1.5)
        d = self._inner.context_dim
        if d == 0:
            raise ValueError(
                f"{self.name}: outcomes nature {self._inner.name!r} has no contexts; logistic experts "
                "need features, e.g. outcomes: logistic"
            )
        if weights is not None and len(weights[0]) != d:
            raise ValueError(
                f"{self.name}: weights have {len(weights[0])} coordinates but the contexts of "
                f"{self._inner.name!r} have {d}; give weight vectors of length {d}"
            )

    def _setup(self):
        d = self._inner.context_dim
        self._W = (
            np.array(self.weights, float)
            if self.weights is not None
            else self.scale * self._rng.standard_normal((self.N, d))
        )

    def _advice(self, t, z):
        return _special.expit(self._W @ z)


@register
class ExpertGoodNoisy(ExpertPanel):
    """One good expert, reporting the true P(y_t = 1), among N - 1 noisy ones.

    The noisy experts report clip(q_t + noise * e_jt, 0.01, 0.99) with fresh standard normal
    e_jt; the good one (index ``good``) reports q_t. The wrapped nature must be oblivious
    (the panel reads its law when it reveals the context).

    Examples
    --------
    >>> panel = ExpertGoodNoisy(N=3, outcomes={"name": "iid_bernoulli", "params": {"p": 0.3}})
    >>> panel.reset(np.random.default_rng(0))
    >>> float(panel.context(1)[0])
    0.3
    """

    name = "expert_good_noisy"
    needs_law = True
    default_outcomes = "sinusoid"

    def __init__(self, N: int = 8, noise: float = 0.25, good: int = 0, outcomes=None, greedy: bool = False):
        super().__init__(N, outcomes, greedy)
        self.noise = check_positive(self.name, "noise", noise, 0.25)
        self.good = check_count(self.name, "good", good, 0, minimum=0)
        if self.good >= self.N:
            raise ValueError(f"{self.name}: good={good!r} is not an expert index in 0..{self.N - 1}")

    def _good_index(self, t: int) -> int:
        return self.good

    def _advice(self, t, z):
        q = self._truth
        out = np.clip(q + self.noise * self._rng.standard_normal(self.N), 0.01, 0.99)
        out[self._good_index(t)] = q
        return out


@register
class ExpertSwitching(ExpertGoodNoisy):
    """The best expert switches: in rounds (k-1)*period+1 .. k*period, expert (k-1) mod N reports
    the truth and the others a noisy version (see ``expert_good_noisy``).

    Examples
    --------
    >>> panel = ExpertSwitching(N=2, period=1, outcomes={"name": "iid_bernoulli", "params": {"p": 0.3}})
    >>> panel.reset(np.random.default_rng(0))
    >>> [float(panel.context(t)[(t - 1) % 2]) for t in (1, 2)]  # expert 0, then expert 1
    [0.3, 0.3]
    """

    name = "expert_switching"

    def __init__(self, N: int = 4, noise: float = 0.25, period: int = 250, outcomes=None, greedy: bool = False):
        super().__init__(N, noise, 0, outcomes, greedy)
        self.period = check_count(self.name, "period", period, 250)

    def _good_index(self, t: int) -> int:
        return ((t - 1) // self.period) % self.N


_REACTIONS = ("follow", "contrarian", "sharpen")


@register
class ExpertSecondGuessing(ExpertPanel):
    """Second-guessing experts (§9): each sees the forecast p before it advises.

    Expert j holds an opinion b_j (a grid of constants (j + 1)/(N + 1), or sigmoid(<w_j, x_t>) with
    random weights when the wrapped nature has contexts) and advises
    f_j(x, p) = (1 - beta) b_j + beta r_j(p), where r_j cycles through ``follow`` r(p) = p,
    ``contrarian`` r(p) = 1 - p and ``sharpen`` r(p) = p^k / (p^k + (1 - p)^k) with k =
    ``sharpness``: continuous in p, with |d f_j / dp| <= beta max(1, k) (``advice_lipschitz``).

    The revealed context is the opinions b (what the experts think before they see p);
    ``advice(t, x, p)`` gives f(x, p) and is what the forecasters search over and the
    referee scores (at the realized p_t).

    Examples
    --------
    >>> panel = ExpertSecondGuessing(N=3, beta=0.5)
    >>> panel.reset(np.random.default_rng(0))
    >>> b = panel.context(1); b.tolist()
    [0.25, 0.5, 0.75]
    >>> panel.advice(1, b, 0.9).round(4).tolist()
    [0.575, 0.3, 0.8689]
    """

    name = "expert_second_guessing"
    second_guessing = True

    def __init__(
        self,
        N: int = 6,
        beta: float = 0.5,
        sharpness: float = 2.0,
        scale: float = 1.5,
        outcomes=None,
        greedy: bool = False,
    ):
        super().__init__(N, outcomes, greedy)
        self.beta = check_probability(self.name, "beta", beta, 0.5)
        self.sharpness = check_real(self.name, "sharpness", sharpness, "give a number >= 1 such as sharpness: 2")
        if self.sharpness < 1.0:
            raise ValueError(
                f"{self.name}: sharpness={sharpness!r} must be >= 1 (r(p) = p^k/(p^k + (1-p)^k)), e.g. sharpness: 2"
            )
        self.scale = check_positive(self.name, "scale", scale, 1.5)
        self._kinds = np.array([_REACTIONS.index(_REACTIONS[j % 3]) for j in range(self.N)])

    @property
    def advice_lipschitz(self) -> float:
        return self.beta * max(1.0, self.sharpness)

    def _setup(self):
        d = self._inner.context_dim
        self._W = self.scale * self._rng.standard_normal((self.N, d)) if d else None

    def _advice(self, t, z):
        if self._W is None:
            return _grid(self.N)
        return _special.expit(self._W @ z)

    def advice(self, t: int, x: Context, p: float) -> np.ndarray:
        b = np.asarray(x, dtype=np.float64)
        p = min(max(float(p), 0.0), 1.0)
        k = self.sharpness
        num, den = p**k, p**k + (1.0 - p) ** k
        reaction = np.array([p, 1.0 - p, num / den])[self._kinds]
        return np.clip((1.0 - self.beta) * b + self.beta * reaction, 0.0, 1.0)
