"""The game protocol: forecasts, outcome laws, forecasters and natures.

Read this module first. One round ``t`` of every game:

1. nature reveals a context ``x_t`` (a 1-d float array, possibly of length 0);
2. the forecaster announces a :class:`Forecast` (a point or a finite distribution);
3. nature answers with an outcome, or with an :class:`OutcomeLaw`, having seen the
   *announced* forecast (never the coin that realizes it);
4. the arena draws the realized forecast and the outcome from independent seeded
   streams; the forecaster then observes ``(x_t, p_t, y_t)`` through ``update``.

Plugins subclass :class:`Forecaster` or :class:`Nature`; constructors only store
parameters, randomness arrives through ``reset(rng)``. Before ``reset`` the arena sets
the attribute ``game`` of both players to the :class:`arena.games.Game` being played, so
that a plugin can read the game's parameters (a quantile level, an outcome range).

References
----------
Perdomo & Recht, "In Defense of Defensive Forecasting", §2-§3 and §10.
"""

from __future__ import annotations

import copy
import inspect
import math
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

Context = np.ndarray
"""A context ``x_t``: a 1-d float array (length 0 when the game has no context)."""

EMPTY_CONTEXT = np.zeros(0)


class ProtocolError(ValueError):
    """A plugin broke the game protocol (a NaN forecast, an outcome out of range, ...)."""


@dataclass(frozen=True)
class Forecast:
    """A finite distribution over forecast points; a point forecast has one atom.

    Parameters
    ----------
    points, probs
        Atoms and their probabilities (non-negative, summing to one).
    internal
        Optional forecaster-internal value that the forecaster's own guarantee is
        stated for, e.g. the unrounded K29 forecast behind a rounded one (§8).

    Examples
    --------
    >>> Forecast.two_point(0.85, 0.9, 0.2).mean
    0.89
    >>> Forecast.point(0.3).is_point
    True
    """

    points: tuple[float, ...]
    probs: tuple[float, ...] = (1.0,)
    internal: float | None = field(default=None, compare=False)

    @classmethod
    def point(cls, p: float) -> Forecast:
        return cls((float(p),), (1.0,))

    @classmethod
    def two_point(cls, lo: float, hi: float, prob_lo: float, internal: float | None = None) -> Forecast:
        """``lo`` with probability ``prob_lo``, ``hi`` otherwise (atoms of zero mass dropped)."""
        prob_lo = min(max(float(prob_lo), 0.0), 1.0)
        if prob_lo >= 1.0 or lo == hi:
            return cls((float(lo),), (1.0,), internal)
        if prob_lo <= 0.0:
            return cls((float(hi),), (1.0,), internal)
        return cls((float(lo), float(hi)), (prob_lo, 1.0 - prob_lo), internal)

    @property
    def is_point(self) -> bool:
        return len(self.points) == 1

    @property
    def mean(self) -> float:
        if self.is_point:
            return self.points[0]
        return round(math.fsum(p * w for p, w in zip(self.points, self.probs, strict=False)), 15)

    def sample(self, u: float) -> float:
        """The atom selected by a uniform draw ``u`` in [0, 1) (inverse CDF)."""
        if self.is_point:
            return self.points[0]
        acc = 0.0
        for p, w in zip(self.points, self.probs, strict=False):
            acc += w
            if u < acc:
                return p
        return self.points[-1]

    def __str__(self) -> str:
        if self.is_point:
            return f"{self.points[0]:.12g}"
        return " ".join(f"{p:.12g}@{w:.6g}" for p, w in zip(self.points, self.probs, strict=False))


def as_forecast(value: Forecast | float, low: float, high: float, who: str = "forecaster") -> Forecast:
    """Validate a forecast against the forecast space ``[low, high]``.

    Raises :class:`ProtocolError` naming the bad value and what was expected.
    """
    if type(value) is float and low <= value <= high:  # the common case: a valid plain float (NaN fails)
        return Forecast((value,))
    if isinstance(value, Forecast):
        f = value
    else:
        try:
            f = Forecast.point(float(value))
        except (TypeError, ValueError):
            raise ProtocolError(
                f"{who} returned {value!r}; expected a float in [{low}, {high}] or an arena.Forecast"
            ) from None
    if len(f.points) == 0 or len(f.points) != len(f.probs):
        raise ProtocolError(f"{who} returned a malformed distribution {f!r}: need as many probs as points (>= 1)")
    for p in f.points:
        if not math.isfinite(p) or p < low or p > high:
            raise ProtocolError(
                f"{who} forecast {p!r} is outside the forecast space [{low}, {high}]; clip or fix the forecaster"
            )
    if any((not math.isfinite(w)) or w < 0 for w in f.probs) or abs(math.fsum(f.probs) - 1.0) > 1e-9:
        raise ProtocolError(f"{who} returned probabilities {f.probs!r}; they must be >= 0 and sum to 1")
    return f


class Draws:
    """Scalar draws of one generator method, made ``chunk`` at a time and served one by one.

    ``Draws(rng, "standard_normal").next()`` returns the numbers that successive
    ``rng.standard_normal()`` calls would, at a fraction of the cost (numpy spends most of
    a scalar draw on call overhead): for a player or stream that draws a number per round.
    Draw nothing else from ``rng`` while a ``Draws`` serves it.

    Examples
    --------
    >>> d = Draws(np.random.default_rng(0), "random", chunk=4)
    >>> [d.next() for _ in range(6)] == np.random.default_rng(0).random(6).tolist()
    True
    """

    def __init__(self, rng: np.random.Generator, method: str = "random", chunk: int = 1024):
        self.rng, self.method, self.chunk = rng, method, int(chunk)
        self._buf: list[float] = []
        self._i = 0

    def next(self) -> float:
        if self._i == len(self._buf):
            self._refill()
        self._i += 1
        return self._buf[self._i - 1]

    def _refill(self) -> None:
        self._buf, self._i = getattr(self.rng, self.method)(self.chunk).tolist(), 0


class OutcomeLaw(ABC):
    """A distribution of the outcome, returned by a nature instead of a sample.

    The arena samples from it with its own outcome stream, and the referee uses it to
    compute expected metrics exactly. ``sample`` and ``cdf`` are the contract; the attributes
    below are everything else the referee reads, each with a default under which the
    certificates that need it are *not applicable* (never a vacuous pass) and the expected
    metrics that need it are not reported. ``arena.checks.check_laws_agree_with_samples``
    checks that ``cdf`` is the law of ``sample``.

    Attributes
    ----------
    lipschitz : a Lipschitz constant L of the CDF (§10's L-Lipschitz natures); inf (the default:
        a point mass, or a law that does not say) makes ``quantile_round`` and ``quantile_group``
        not applicable for its rounds.
    mean : the law's mean; NaN (the default): unknown.
    """

    @property
    def lipschitz(self) -> float:
        return math.inf

    @property
    def mean(self) -> float:
        return math.nan

    @abstractmethod
    def sample(self, rng: np.random.Generator) -> float: ...

    @abstractmethod
    def cdf(self, v: float) -> float:
        """P(y <= v)."""

    def cdf_integral(self, v: float) -> float:
        """int_{-inf}^v F(s) ds, for the expected pinball loss; NaN (the default): unknown."""
        return math.nan

    def expected_pinball(self, p: float, q: float) -> float:
        """E[rho_q(y - p)] = q (mean - p) + int_{-inf}^p F (NaN when ``mean`` or ``cdf_integral`` is unknown)."""
        return q * (self.mean - p) + self.cdf_integral(p)


@dataclass(frozen=True)
class Bernoulli(OutcomeLaw):
    """y = 1 with probability ``p``; one uniform draw per sample (paired comparisons).

    A ``p`` outside [0, 1] (or NaN) is a :class:`ProtocolError`: it would give expected
    metrics of a law that does not exist.

    Examples
    --------
    >>> Bernoulli(0.25).cdf(0.0)
    0.75
    >>> Bernoulli(1.5)
    Traceback (most recent call last):
    ...
    arena.protocols.ProtocolError: Bernoulli(p=1.5): p must be a probability in [0, 1]; fix the nature that built it
    """

    p: float

    def __post_init__(self):
        if not 0.0 <= self.p <= 1.0:  # NaN fails too
            raise ProtocolError(
                f"Bernoulli(p={self.p!r}): p must be a probability in [0, 1]; fix the nature that built it"
            )

    def sample(self, rng: np.random.Generator) -> float:
        return 1.0 if rng.random() < self.p else 0.0

    def cdf(self, v: float) -> float:
        if v < 0:
            return 0.0
        return 1.0 - self.p if v < 1 else 1.0

    @property
    def mean(self) -> float:
        return self.p


class Forecaster(ABC):
    """A player that announces forecasts.

    The verbs ``reset``, ``predict`` and ``update`` are the contract; the attributes and
    optional verbs below are every other hook the framework reads, each with its default
    (a subclass overrides one as a class attribute, an instance attribute or a property).

    Class attributes
    ----------------
    name : registered name (also the config file name under ``conf/forecaster``).
    games : games this forecaster can play.
    claims : names of the referee certificates whose bound this forecaster guarantees (a
        tuple; a subclass may compute it from its parameters with a property).
    family : ``"defensive"`` for the paper's defensive forecasters, ``"baseline"`` (the default)
        for the others; the report draws each family in panels of its own.
    """

    name: ClassVar[str] = ""
    games: ClassVar[tuple[str, ...]] = ("binary",)
    family: ClassVar[str] = "baseline"
    claims: tuple[str, ...] = ()

    #: The kernel k(z, z') of the forecaster's summary function S_t, for the kernel
    #: certificates (an :class:`arena.kernels.Kernel`); None: the forecaster has none.
    kernel_object = None
    #: Longest horizon this forecaster can play (a replayed forecast stream), or None.
    length: int | None = None
    #: The rows of its file a forecast replay does not play (``on_missing: skip``; () when it plays every row):
    #: a replay nature must skip the same. None: not a replay of a file (it plays whatever nature plays).
    skipped_rows: tuple[int, ...] | None = None
    #: The width of the forecaster's root search (the search-precision certificates allow
    #: the slack such a width leaves, and the referee refuses a width looser than its
    #: ``max_tol`` in every game); 0: an exact search, or none.
    tol: float = 0.0

    def reset(self, rng: np.random.Generator) -> None:
        """Clear all state; ``rng`` is the forecaster's only source of randomness."""
        self.rng = rng

    @abstractmethod
    def predict(self, x: Context) -> Forecast | float:
        """Announce a forecast for context ``x``."""

    @abstractmethod
    def update(self, x: Context, p: float, y: float) -> None:
        """Observe the realized forecast ``p`` and the outcome ``y`` of this round."""

    # Optional verbs: None means "not offered"; a subclass defines them as methods.

    #: ``play_oblivious(X, y, u) -> (p_mean, p, p_internal)``: play every round at once
    #: against an oblivious nature (contexts X, outcomes y, the forecast coins u), with the
    #: same forecasts as the round loop would give; None: the arena plays round by round.
    play_oblivious = None
    #: ``can_play_oblivious``: whether this instance's ``play_oblivious`` may run now.
    can_play_oblivious: bool = True
    #: ``predict_many(X) -> p``: the forecasts of the current state for many contexts at once
    #: (batch evaluation); None: ``predict`` row by row.
    predict_many = None
    #: ``weights_after(cum_losses, t) -> weights``: an experts forecaster's weights on the experts
    #: after t rounds, for the weight curves; None: no weights.
    weights_after = None
    #: ``kernel_contexts(X) -> Z``: the contexts its kernel saw in the rounds played, given nature's (T, d)
    #: contexts X (a forecaster that extends them, e.g. with another forecaster's forecast); the
    #: kernel certificates are scored on Z. None: nature's contexts.
    kernel_contexts = None

    def clone(self) -> Forecaster:
        """An independent copy in the current state, random generator included (default: a deep copy).

        A white-box red team (:mod:`arena.redteam`) plans against clones: each must announce
        what this forecaster would announce after the same calls. Override it when a deep copy
        is wrong or slow (a forecaster holding a file or a large shared table).
        """
        return copy.deepcopy(self)

    def params(self) -> dict:
        """Constructor parameters (recorded in every result row), read from the constructor's signature."""
        return constructor_params(self)


class Nature(ABC):
    """The player that produces contexts and outcomes.

    Class attributes
    ----------------
    name : registered name. games : games it can play.
    adaptive : True when ``respond`` looks at the announced forecast.
    """

    name: ClassVar[str] = ""
    games: ClassVar[tuple[str, ...]] = ("binary",)
    adaptive: ClassVar[bool] = False

    #: Dimension of the contexts; instances may set it from their parameters.
    context_dim: int = 0
    #: Longest horizon this nature can play (a replayed series), or None.
    length: int | None = None
    #: The rows of its file a replay does not play (``on_missing: skip``; () when it plays every row); a forecast
    #: replay of the same file must skip the same ones (:func:`arena.matchup.check_same_rows`). None: not a replay.
    skipped_rows: tuple[int, ...] | None = None

    # Optional verbs: None means "not offered"; a subclass defines them as methods.

    #: ``series(T) -> (X, y) | None``: every round's context (an array of shape (T, context_dim)) and plain
    #: outcome at once, for an oblivious nature whose rounds are fixed in advance (a replayed file): what
    #: ``context(t)`` and ``respond(t, x, forecast)`` return for t = 1 .. T whatever the forecasts, which the
    #: oblivious fast path then does not ask round by round; the method returns None where it cannot say (the
    #: arena asks round by round). None: the arena always asks round by round.
    series = None

    def reset(self, rng: np.random.Generator) -> None:
        """Clear all state; ``rng`` drives contexts and any hidden state (not the outcome coin)."""
        self.rng = rng

    def context(self, t: int) -> Context:
        """The context of round ``t`` (1-based)."""
        return EMPTY_CONTEXT

    @abstractmethod
    def respond(self, t: int, x: Context, forecast: Forecast) -> OutcomeLaw | float:
        """The outcome, or its law, for round ``t``; oblivious natures ignore ``forecast``."""

    def observe(self, t: int, p: float, y: float) -> None:  # noqa: B027 (an optional verb: nothing by default)
        """Learn the realized forecast and outcome of round ``t`` (adaptive natures)."""

    def params(self) -> dict:
        """Constructor parameters (recorded in every result row), read from the constructor's signature."""
        return constructor_params(self)


# ------------------------------------------------------------------------------ hooks of one game
# A game reads these through isinstance: a plugin that does not subclass one has none of them.


class RoundedForecaster(Forecaster):
    """Binary and decision games (§8): forecasts revealed on the grid {0, 1/N, ..., 1}.

    The referee adds the calibration error per grid point, and the ``rounded_calibration``
    certificate holds with probability at least 1 - ``delta``.
    """

    N: int
    delta: float


class DecisionForecaster(Forecaster):
    """Decision game (§5): whether the search is randomized (the guarantee against a discontinuous
    action rule needs it); a forecaster that does not say claims no deterministic search."""

    randomized: bool = True


class ExpertsForecaster(Forecaster):
    """Experts game (§9): what the experts certificates read of the forecaster."""

    #: The learning rate of exponential weights (λ of ℓ∞ DF, η of Hedge); None: no rate.
    rate: float | None = None
    #: The Lipschitz constant in p of the second-guessing advice the forecaster last saw (the
    #: search-precision allowance grows with it); 0: ordinary advice.
    advice_lipschitz: float = 0.0


class ExpertsNature(Nature):
    """Experts game (§9): a panel of experts, possibly second-guessing (advising on the forecast)."""

    #: Whether the experts see the announced forecast before they advise; then
    #: ``advice(t, x, p) -> array`` gives their advice to p, a pure function of its arguments.
    second_guessing: bool = False
    #: A bound on |d f_j / dp| of second-guessing advice (inf: none declared).
    advice_lipschitz: float = math.inf

    def advice(self, t: int, x: Context, p: float) -> np.ndarray:
        """Second-guessing panels only: the experts' advice in round ``t`` to the forecast ``p``."""
        raise NotImplementedError(
            f"nature {self.name!r} does not second-guess: set second_guessing = True and define advice(t, x, p)"
        )


class GroupNature(Nature):
    """Quantile game (§10): the last ``group_dim`` context coordinates are group indicators (the
    referee reports coverage per group)."""

    group_dim: int = 0


def constructor_params(obj) -> dict:
    """The constructor's parameters of ``obj``, each read from the attribute of the same name.

    A constructor stores each parameter under its own name, so the constructor's
    signature says what to record (as river's ``_get_params`` does); ``*args`` and ``**kwargs``
    are not parameters.

    Examples
    --------
    >>> class Mean(Forecaster):
    ...     def __init__(self, prior: float = 0.5):
    ...         self.prior, self._n = prior, 0
    ...     def predict(self, x): return self.prior
    ...     def update(self, x, p, y): pass
    >>> Mean(0.3).params()
    {'prior': 0.3}
    """
    out = {}
    for name, p in inspect.signature(type(obj).__init__).parameters.items():
        if name == "self" or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        try:
            out[name] = getattr(obj, name)
        except AttributeError:
            raise AttributeError(
                f"{type(obj).__name__} has no attribute {name!r}: its constructor must store the "
                f"parameter {name!r} as self.{name} (params() reads it from there)"
            ) from None
    return out
