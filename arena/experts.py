"""The experts game (§9): binary outcomes, forecasts in [0, 1], the context holds expert advice.

Protocol
--------
In round t the nature (an *expert panel*) reveals the N experts' advice f_1(x_t), ..., f_N(x_t)
in [0, 1] as the context; the forecaster announces p_t; the outcome y_t in {0, 1} follows;
every player is scored by the game's ``loss`` ("squared": (p - y)^2, "log": -log p(y),
unclipped). The referee compares the forecaster's cumulative loss with every expert's.

Second-guessing experts (end of §9; Vovk's term) see the forecaster's forecast before they
advise: their advice is f_j(x_t, p), continuous in p. This is a *declared capability* of a
panel, added to the shared core with two hooks of :class:`arena.games.Game` and nothing else:

* a panel sets ``second_guessing = True``, declares ``advice_lipschitz`` (a bound on
  |d f_j / dp|) and implements ``advice(t, x, p) -> array``, a pure function of its
  arguments (it may be called for round t after the nature has moved on to round t + 1);
* the forecaster's context is an :class:`AdviceContext`: the numbers the nature revealed
  (for a second-guessing panel, each expert's opinion before it sees p; see the panel) and
  the method ``x.advice(p)``, which returns f(x_t, p) for any p in [0, 1]. Defensive
  forecasters evaluate it inside their anticorrelation search; for an ordinary panel it
  returns the revealed advice whatever p;
* once the realized forecast p_t is drawn, the environment records f(x_t, p_t) as the
  round's context (:meth:`ExpertsGame.scored_context`), so the referee scores every expert
  at the forecast actually played. For a point forecast that is the announced p; for a
  randomized forecast, the realized draw (the forecaster's loss is also at the draw).

A plain ``numpy`` array is also accepted wherever an :class:`AdviceContext` is expected
(:func:`advice_function`), so forecasters can be driven by hand.

References
----------
Perdomo & Recht, §9 (ℓ∞ defensive forecasting and expert prediction); SPEC §2-§4.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np

from arena.games import BinaryGame, register_game
from arena.protocols import ProtocolError

#: The losses of the experts game.
EXPERT_LOSSES = ("squared", "log")


def squared_loss(p, y):
    """(p - y)^2, elementwise.

    Examples
    --------
    >>> float(squared_loss(0.25, 1.0))
    0.5625
    """
    return (np.asarray(p, float) - np.asarray(y, float)) ** 2


def log_loss(p, y):
    """Unclipped log loss -y log p - (1 - y) log(1 - p), elementwise; +inf when the outcome had
    probability 0 (no warning, never NaN for p and y in range).

    Examples
    --------
    >>> float(log_loss(0.5, 1.0)) == math.log(2), float(log_loss(0.0, 1.0)), float(log_loss(0.0, 0.0))
    (True, inf, 0.0)
    """
    p, y = np.broadcast_arrays(np.asarray(p, float), np.asarray(y, float))
    with np.errstate(divide="ignore"):
        one = -np.log(p)
        zero = -np.log1p(-p)
    return np.where(y == 1.0, one, zero) if p.ndim else (one if y == 1.0 else zero)


LOSS_FUNCTIONS: dict[str, Callable] = {"squared": squared_loss, "log": log_loss}


class ExpertLoss(str):
    """The name of a loss that is also the loss: ``game.loss == "log"`` and ``game.loss(p, y)``.

    The :class:`arena.games.Game` interface scores a round with ``game.loss(p, y)``; the
    experts game also has a configurable field named ``loss``. This string subclass serves
    both.

    Examples
    --------
    >>> ell = ExpertLoss("squared")
    >>> ell == "squared", ell(0.5, 1.0)
    (True, 0.25)
    """

    def __call__(self, p: float, y: float) -> float:
        return float(LOSS_FUNCTIONS[str(self)](p, y))


def check_loss_name(who: str, loss) -> str:
    if not isinstance(loss, str) or loss not in EXPERT_LOSSES:
        raise ValueError(f"{who}: loss={loss!r} is not a loss of the experts game; expected one of "
                         f"{', '.join(map(repr, EXPERT_LOSSES))}, e.g. loss: squared")
    return str(loss)


class AdviceContext(np.ndarray):
    """The context of a round of the experts game: the revealed advice, and ``advice(p)``.

    A 1-d float array (what the nature revealed) with two attributes: the callable behind
    :meth:`advice` (None for an ordinary panel) and ``lipschitz``, the panel's declared bound
    on |d f_j / dp| (0 for an ordinary panel).

    Examples
    --------
    >>> x = AdviceContext([0.2, 0.7])
    >>> x.advice(0.9).tolist(), x.second_guessing
    ([0.2, 0.7], False)
    >>> y = AdviceContext([0.2, 0.7], advice=lambda p: np.array([p, 1 - p]), lipschitz=1.0)
    >>> y.advice(0.9).tolist(), y.copy().second_guessing
    ([0.9, 0.09999999999999998], True)
    """

    def __new__(cls, values, advice: Callable[[float], np.ndarray] | None = None, lipschitz: float = 0.0):
        obj = np.array(values, dtype=np.float64).reshape(-1).view(cls)
        obj.advice_fn = advice
        obj.lipschitz = float(lipschitz)
        return obj

    def __array_finalize__(self, obj):
        self.advice_fn = getattr(obj, "advice_fn", None)
        self.lipschitz = getattr(obj, "lipschitz", 0.0)

    def __reduce__(self):  # keep the attributes through pickling and deepcopy
        base = np.asarray(self).copy()
        return (AdviceContext, (base, self.advice_fn, self.lipschitz))

    @property
    def second_guessing(self) -> bool:
        return self.advice_fn is not None

    def advice(self, p: float) -> np.ndarray:
        """f(x_t, p): the advice the experts give to the forecast p (the revealed advice when they
        do not second-guess)."""
        if self.advice_fn is None:
            return np.asarray(self)
        return np.asarray(self.advice_fn(float(p)), dtype=np.float64).reshape(-1)


def advice_function(x) -> Callable[[float], np.ndarray]:
    """p -> f(x, p) for a context of the experts game (an :class:`AdviceContext` or a plain array)."""
    if isinstance(x, AdviceContext) and x.second_guessing:
        return x.advice
    values = np.asarray(x, dtype=np.float64).reshape(-1)
    return lambda p: values


def lipschitz_of(x) -> float:
    return float(getattr(x, "lipschitz", 0.0)) if isinstance(x, AdviceContext) and x.second_guessing else 0.0


def _check_advice(values: np.ndarray, n: int, who: str, t: int, where: str) -> np.ndarray:
    if values.shape != (n,) or not (values.min() >= 0.0 and values.max() <= 1.0):  # NaN fails too
        raise ProtocolError(f"{who} gave advice {values!r} at t={t} ({where}); the experts game needs "
                            f"{n} forecasts in [0, 1], one per expert")
    return values


@register_game
@dataclass(frozen=True)
class ExpertsGame(BinaryGame):
    """Prediction with expert advice (§9): y in {0, 1}, p in [0, 1], advice in the context.

    Parameters
    ----------
    loss : "squared" (p - y)^2 or "log" -log p(y) (unclipped: +inf when p(y) = 0).

    Examples
    --------
    >>> g = ExpertsGame(loss="log")
    >>> g.loss == "log", round(g.loss(0.5, 1.0), 6)
    (True, 0.693147)
    >>> ExpertsGame(loss="hinge")
    Traceback (most recent call last):
    ...
    ValueError: experts game: loss='hinge' is not a loss of the experts game; expected one of 'squared', 'log', e.g. loss: squared
    """

    name: str = "experts"
    loss: str = "squared"

    def __post_init__(self):
        object.__setattr__(self, "loss", ExpertLoss(check_loss_name("experts game", self.loss)))

    def present_context(self, nature, t: int, x: np.ndarray) -> AdviceContext:
        who = f"nature {getattr(nature, 'name', '?')!r}"
        if x.size == 0:
            raise ProtocolError(f"{who} revealed no advice at t={t}; the experts game needs the N >= 1 experts' "
                                "forecasts as the context (use an expert panel, e.g. nature=expert_constants)")
        if getattr(nature, "second_guessing", False):
            lip = float(getattr(nature, "advice_lipschitz", math.inf))
            return AdviceContext(x, partial(_validated_advice, nature, t, x.copy(), who), lip)
        return AdviceContext(_check_advice(x, x.size, who, t, "revealed"))

    def scored_context(self, nature, t: int, x: np.ndarray, p: float) -> np.ndarray:
        if isinstance(x, AdviceContext) and x.second_guessing:
            return np.asarray(x.advice(p)).copy()
        return x


def _validated_advice(nature, t: int, x: np.ndarray, who: str, p: float) -> np.ndarray:
    values = np.asarray(nature.advice(t, x, float(p)), dtype=np.float64).reshape(-1)
    return _check_advice(values, x.size, who, t, f"second-guessing the forecast p={p!r}")
