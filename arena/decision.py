"""The decision game (§5): the forecaster's forecast p_t is turned into an action a_t = π(p_t).

π(p) = argmin_a E_{y ~ Ber(p)} ℓ(a, y) is the best response to the forecast taken at face
value. The game is scored by ℓ(π(p_t), y_t) and the referee compares the cumulative loss with
the best fixed action in hindsight. Outcomes are binary and forecasts lie in [0, 1], so every
forecaster and nature of the binary game also plays this game (``accepts = ("binary",)``).

Losses (``loss``):

* ``zero_one``: actions {0, 1}, ℓ(a, y) = 1{a != y}; π(p) = 1{p >= 1/2} (discontinuous);
* ``asymmetric``: actions {0, 1}, a missed 1 costs 4 and a false alarm 1; π(p) = 1{p >= 1/5};
* ``matrix``: any finite action set, given by ``matrix``: one row [ℓ(a, 0), ℓ(a, 1)] per action;
* ``squared``: actions a in [0, 1], ℓ(a, y) = (a - y)^2, π(p) = p (continuous).

Ties in π (p where two actions are equally good) go to the action that is better when y = 1
(smaller ℓ(a, 1) - ℓ(a, 0)), then to the lower row: π(1/2) = 1 for the 0-1 loss, as in §5.

References
----------
Perdomo & Recht, §5 (risk minimization); SPEC §3-§4.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from arena.games import BinaryGame, register_game
from arena.protocols import OutcomeLaw

#: Named finite losses: rows are actions, columns ℓ(a, 0), ℓ(a, 1).
PRESETS: dict[str, tuple[tuple[float, float], ...]] = {
    "zero_one": ((0.0, 1.0), (1.0, 0.0)),
    "asymmetric": ((0.0, 4.0), (1.0, 0.0)),
}
DECISION_LOSSES = (*PRESETS, "matrix", "squared")


def _check_matrix(matrix) -> tuple[tuple[float, float], ...]:
    example = "e.g. matrix: [[0, 1], [1, 0]] (rows are actions, columns the losses when y = 0 and y = 1)"
    try:
        arr = np.asarray(matrix, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"decision game: matrix={matrix!r} is not a table of numbers; {example}") from None
    if arr.ndim != 2 or arr.shape[1] != 2 or arr.shape[0] < 1:
        raise ValueError(f"decision game: matrix has shape {arr.shape}; expected one row [loss(a, 0), loss(a, 1)] "
                         f"per action, i.e. shape (K, 2) with K >= 1; {example}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"decision game: matrix={matrix!r} has a non-finite entry; {example}")
    return tuple((float(a), float(b)) for a, b in arr)


class DecisionLoss(str):
    """The loss name that is also the game's per-round loss ℓ(π(p), y) (see :class:`DecisionGame`)."""

    game: DecisionGame

    def __call__(self, p: float, y: float) -> float:
        return float(self.game.action_loss(self.game.action(p), y))


@register_game
@dataclass(frozen=True)
class DecisionGame(BinaryGame):
    """Risk minimization with forecasts (§5): the action π(p_t), scored by ℓ(π(p_t), y_t).

    Parameters
    ----------
    loss : "zero_one", "asymmetric", "squared" or "matrix" (then ``matrix`` is required).
    matrix : for ``loss: matrix``, one row [ℓ(a, 0), ℓ(a, 1)] per action (K x 2).

    Examples
    --------
    >>> g = DecisionGame()
    >>> g.action(0.49), g.action(0.5), g.loss(0.7, 0.0), g.B
    (0, 1, 1.0, 1.0)
    >>> DecisionGame(loss="matrix", matrix=[[0, 1, 2]])
    Traceback (most recent call last):
    ...
    ValueError: decision game: matrix has shape (1, 3); expected one row [loss(a, 0), loss(a, 1)] per action, i.e. shape (K, 2) with K >= 1; e.g. matrix: [[0, 1], [1, 0]] (rows are actions, columns the losses when y = 0 and y = 1)
    """

    #: Forecasters and natures of the binary game play this game too.
    accepts = ("binary",)
    #: The arena records the announced atoms and their probabilities (a point or a two-point
    #: forecast): the referee computes the expected regret of randomized forecasts exactly.
    records_atoms = True

    name: str = "decision"
    loss: str = "zero_one"
    matrix: tuple | None = None

    def __post_init__(self):
        if not isinstance(self.loss, str) or self.loss not in DECISION_LOSSES:
            raise ValueError(f"decision game: loss={self.loss!r} is unknown; expected one of "
                             f"{', '.join(map(repr, DECISION_LOSSES))} (with matrix: [[...], ...] for 'matrix')")
        if self.loss == "matrix":
            if self.matrix is None:
                raise ValueError("decision game: loss='matrix' needs matrix: one row [loss(a, 0), loss(a, 1)] per "
                                 "action, e.g. matrix: [[0, 1], [1, 0]]")
            matrix = _check_matrix(self.matrix)
            object.__setattr__(self, "matrix", matrix)  # a tuple: the game stays hashable
        elif self.matrix is not None:
            raise ValueError(f"decision game: matrix is given but loss={self.loss!r}; set loss: matrix to use it")
        else:
            matrix = PRESETS.get(self.loss)
        object.__setattr__(self, "_table", matrix)  # None for the squared loss (continuous actions)
        name = DecisionLoss(self.loss)
        name.game = self
        object.__setattr__(self, "loss", name)
        if matrix is not None:
            m = np.asarray(matrix, float)
            object.__setattr__(self, "_m", m)
            object.__setattr__(self, "_d", m[:, 1] - m[:, 0])
            # tie rule: among minimizers prefer smaller d (better when y = 1), then the lower row
            object.__setattr__(self, "_pref", np.lexsort((np.arange(len(m)), m[:, 1] - m[:, 0])))
            # the same table as Python floats, in preference order (the scalar fast path)
            object.__setattr__(self, "_rows", tuple((int(k), float(m[k, 0]), float(m[k, 1])) for k in self._pref))

    # -------------------------------------------------------------------------------- actions
    @property
    def continuous(self) -> bool:
        """True when π is continuous in p (the squared loss): the deterministic search applies."""
        return self._table is None

    @property
    def n_actions(self) -> int | None:
        return None if self._table is None else len(self._table)

    @property
    def B(self) -> float:
        """sup_a |ℓ(a, 1) - ℓ(a, 0)| (§5)."""
        return 1.0 if self._table is None else float(np.max(np.abs(self._d)))

    def actions(self, p) -> np.ndarray:
        """π(p) for an array of forecasts: action rows (finite losses) or values in [0, 1] (squared)."""
        p = np.asarray(p, float)
        if self._table is None:
            return p.copy()
        m = self._m[self._pref]
        risk = (1.0 - p[..., None]) * m[:, 0] + p[..., None] * m[:, 1]
        best = risk.min(axis=-1, keepdims=True)
        # the first preferred action within rounding of the minimum
        first = np.argmax(risk <= best + 1e-12 * (1.0 + np.abs(best)), axis=-1)
        return self._pref[first]

    def action(self, p: float):
        """π(p): an action row (finite losses) or a value in [0, 1] (squared loss); the same rule as
        :meth:`actions`, in plain Python (the forecasters' searches call it often)."""
        p = float(p)
        if self._table is None:
            return p
        risks = [(1.0 - p) * m0 + p * m1 for _, m0, m1 in self._rows]
        best = min(risks)
        cut = best + 1e-12 * (1.0 + abs(best))
        return next(k for (k, _, _), r in zip(self._rows, risks) if r <= cut)

    def diff(self, p: float) -> float:
        """ℓ(π(p), 1) - ℓ(π(p), 0) for one forecast (see :meth:`diffs`)."""
        if self._table is None:
            return 1.0 - 2.0 * float(p)
        return float(self._d[self.action(p)])

    def action_losses(self, a, y) -> np.ndarray:
        """ℓ(a, y) elementwise for actions as returned by :meth:`actions`."""
        y = np.asarray(y, float)
        if self._table is None:
            return (np.asarray(a, float) - y) ** 2
        a = np.asarray(a, int)
        return np.where(y == 1.0, self._m[a, 1], self._m[a, 0])

    def action_loss(self, a, y: float) -> float:
        """ℓ(a, y) for one action (plain Python)."""
        if self._table is None:
            return (float(a) - float(y)) ** 2
        return self._table[int(a)][1 if y == 1.0 else 0]

    def diffs(self, p) -> np.ndarray:
        """ℓ(π(p), 1) - ℓ(π(p), 0): the first coordinate of Φ(p) (§5)."""
        a = self.actions(p)
        return 1.0 - 2.0 * a if self._table is None else self._d[a]

    def best_fixed_loss(self, y: np.ndarray) -> float:
        """min_a sum_t ℓ(a, y_t): the best fixed action in hindsight."""
        y = np.asarray(y, float)
        n1 = float(np.sum(y))
        n0 = len(y) - n1
        if self._table is None:
            return n0 * n1 / len(y) if len(y) else 0.0  # a* = mean(y)
        return float(np.min(n0 * self._m[:, 0] + n1 * self._m[:, 1]))

    def best_fixed_action(self, y: np.ndarray):
        y = np.asarray(y, float)
        if self._table is None:
            return float(np.mean(y)) if len(y) else 0.5
        n1 = float(np.sum(y))
        return int(np.argmin((len(y) - n1) * self._m[:, 0] + n1 * self._m[:, 1]))

    def law_at_atoms(self, answer, forecast, y: float) -> tuple[float, float, float, float]:
        """(F(lo), F(hi), NaN, expected loss) of a round, recorded with the atoms lo <= hi.

        The expected loss is E[ℓ(π(p_t), y_t)] over the announced (point or two-point)
        forecast, at the realized outcome: the forecast coin is independent of the outcome.
        """
        lo, hi = forecast.points[0], forecast.points[-1]
        w = forecast.probs[0] if len(forecast.points) == 2 else 1.0
        if isinstance(answer, OutcomeLaw):
            F_lo, F_hi = float(answer.cdf(lo)), float(answer.cdf(hi))
        else:
            F_lo, F_hi = float(y <= lo), float(y <= hi)
        return F_lo, F_hi, math.nan, w * self.loss(lo, y) + (1 - w) * self.loss(hi, y)

    def certificate_bound(self, T: int) -> float:
        """The §5 bound 2 B sqrt(2T)."""
        return 2.0 * self.B * math.sqrt(2.0 * T)
