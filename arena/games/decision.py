"""The decision game (§5): the forecaster's forecast p_t is turned into an action a_t = π(p_t); its
regret to the best fixed action and its certificates.

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

Scoring
-------
The arena records every announced forecast as its atoms lo <= hi with P(lo) (a point forecast
has lo = hi), so the expected loss of a randomized forecast is exact:
E_t ℓ(π(p_t), y_t) = P(lo) ℓ(π(lo), y_t) + P(hi) ℓ(π(hi), y_t) (the forecast's coin is
independent of the outcome, which nature chose seeing only the announced distribution).

Metrics: realized and expected decision loss and regret (``regret_decision``,
``regret_decision_expected``) against min_a sum_t ℓ(a, y_t), the best action, and the binary
game's metrics (the outcomes are bits). Curves: both regrets and the certified bound.

Certificates (claimed by ``decision_df``):

- ``decision_regret`` (§5): with w_t = y_t - p_t, Φ(p) = [ℓ(π(p), 1) - ℓ(π(p), 0), B] and
  S_t(p) = sum_{s<t} w_s <Φ(p_s), Φ(p)>, the identity ||sum_t w_t Φ(p_t)||^2 =
  sum_t w_t^2 ||Φ(p_t)||^2 + 2 sum_t w_t S_t(p_t) gives regret <= 2 ||sum_t w_t Φ_t|| <=
  2 sqrt(2 B^2 T + σ), σ = 2 sum_t max(0, E_t[w_t S_t(p_t)]) (the search's slack; E_t over the
  announced forecast). The bound is the §5 bound 2B sqrt(2T) plus that slack; ``extra`` has
  the printed 2B sqrt(2T) and the data-dependent 2 sqrt(sum_t E_t[w_t^2 ||Φ_t||^2] + σ).
  Deterministic for point forecasts (the value is the realized regret); for a randomized
  search the value is the expected regret and the guarantee holds in expectation
  (``probabilistic``: judged on the average over seeds). A deterministic search against a
  discontinuous π has no guarantee (the paper's §5): the certificate is then marked not applicable.
- ``decision_search_precision``: in every round the slack is what the search leaves:
  E_t[w_t S_t(p_t)] <= 1/(10 t^2) for a two-point forecast (the width rule of the randomized
  search, or the float resolution of the interval), w_t S_t(p_t) <= |w_t| |C_t| tol for a
  point forecast of the deterministic search (S_t is 2|C_t|-Lipschitz for the squared loss).
  Value: the worst ratio of the two sides; bound 1.

References
----------
Perdomo & Recht, §5 (risk minimization) and §10 (the randomized search); certificates: docs/ERRATA.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from arena.certificates import (
    MAX_TOL,
    Certificate,
    checkpoints,
    decision_allowance,
    decision_regret_bound,
    judged,
    not_applicable,
)
from arena.games.base import GameScore, bind
from arena.games.binary import CERTIFICATES as BINARY_CERTIFICATES
from arena.games.binary import GRID_METRICS, BinaryGame, BinaryRun, rounding_grid
from arena.games.binary import METRICS as BINARY_METRICS
from arena.games.binary import curves as binary_curves
from arena.games.binary import metrics as binary_metrics
from arena.lazy import LazyModule
from arena.protocols import DecisionForecaster, OutcomeLaw

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = LazyModule("pandas")  # imported when a table is built: playing a game does not load pandas

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
        raise ValueError(
            f"decision game: matrix has shape {arr.shape}; expected one row [loss(a, 0), loss(a, 1)] "
            f"per action, i.e. shape (K, 2) with K >= 1; {example}"
        )
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"decision game: matrix={matrix!r} has a non-finite entry; {example}")
    return tuple((float(a), float(b)) for a, b in arr)


class DecisionLoss(str):
    """The loss name that is also the game's per-round loss ℓ(π(p), y) (see :class:`DecisionGame`)."""

    game: DecisionGame

    def __call__(self, p: float, y: float) -> float:
        return float(self.game.action_loss(self.game.action(p), y))


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
    >>> DecisionGame(loss="matrix", matrix=[[0, 1, 2]])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: decision game: matrix has shape (1, 3); expected one row [loss(a, 0), loss(a, 1)] per action, ...
    """

    #: Forecasters and natures of the binary game play this game too.
    accepts = ("binary",)
    #: The arena records the announced atoms and their probabilities (a point or a two-point
    #: forecast): the referee computes the expected regret of randomized forecasts exactly.
    records_atoms = True

    name: str = "decision"
    loss: DecisionLoss = DecisionLoss("zero_one")  # a loss name from the config, made a DecisionLoss here
    matrix: tuple | None = None
    # the loss table and what the actions read of it, set in __post_init__ (no parameters)
    _table: tuple | None = field(init=False, repr=False, compare=False)
    _m: np.ndarray = field(init=False, repr=False, compare=False)
    _d: np.ndarray = field(init=False, repr=False, compare=False)
    _pref: np.ndarray = field(init=False, repr=False, compare=False)
    _rows: tuple[tuple[int, float, float], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        if not isinstance(self.loss, str) or self.loss not in DECISION_LOSSES:
            raise ValueError(
                f"decision game: loss={self.loss!r} is unknown; expected one of "
                f"{', '.join(map(repr, DECISION_LOSSES))} (with matrix: [[...], ...] for 'matrix')"
            )
        if self.loss == "matrix":
            if self.matrix is None:
                raise ValueError(
                    "decision game: loss='matrix' needs matrix: one row [loss(a, 0), loss(a, 1)] per "
                    "action, e.g. matrix: [[0, 1], [1, 0]]"
                )
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
        return next(k for (k, _, _), r in zip(self._rows, risks, strict=True) if r <= cut)

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

    def score(self, referee, rec, forecaster):
        run = DecisionRun(self, rec, forecaster, referee.max_tol)
        summary = binary_metrics(referee, rec.X, rec.p, rec.y, rec.y_prob, grid=rounding_grid(forecaster))
        summary.update(decision_metrics(run))
        binary_run = BinaryRun(rec, forecaster, referee.max_tol)
        certs = {**bind(BINARY_CERTIFICATES, binary_run, referee), **bind(CERTIFICATES, run, referee)}
        # the binary curves draw the bounds of the binary claims only
        binary_claims = tuple(c for c in forecaster.claims if c not in CERTIFICATES)
        curves = pd.concat(
            [binary_curves(referee, rec, binary_claims, binary_run), decision_curves(run, referee.n_checkpoints)],
            ignore_index=True,
        )
        return GameScore(summary, curves, certs)


_EPS = np.finfo(float).eps


class DecisionRun:
    """The arrays of one decision run and the quantities the certificates share."""

    def __init__(self, game, rec, forecaster, max_tol: float = MAX_TOL):
        self.game, self.forecaster = game, forecaster
        self.max_tol = float(max_tol)
        self.p, self.y = rec.p, rec.y
        self.T = len(self.y)
        self.lo, self.hi, self.w_lo, self.exact = _atoms(rec)

    # -------------------------------------------------------------------------- losses
    @cached_property
    def realized_losses(self) -> np.ndarray:
        g = self.game
        return g.action_losses(g.actions(self.p), self.y)

    @cached_property
    def expected_losses(self) -> np.ndarray:
        g = self.game
        return self.w_lo * g.action_losses(g.actions(self.lo), self.y) + (1.0 - self.w_lo) * g.action_losses(
            g.actions(self.hi), self.y
        )

    def best_fixed(self, t: int) -> float:
        return self.game.best_fixed_loss(self.y[:t])

    @cached_property
    def randomized(self) -> bool:
        return bool(np.any(self.lo != self.hi))

    # ------------------------------------------------------------------- moment identity
    @cached_property
    def B2(self) -> float:
        return self.game.B**2

    @cached_property
    def history(self) -> tuple[np.ndarray, np.ndarray]:
        """(C_t, W_t) before each round: sums over s < t of w_s d(π(p_s)) and of w_s (realized p_s)."""
        w = self.y - self.p
        d = self.game.diffs(self.p)
        C = np.concatenate(([0.0], np.cumsum(w * d)[:-1]))
        W = np.concatenate(([0.0], np.cumsum(w)[:-1]))
        return C, W

    def S_at(self, a: np.ndarray) -> np.ndarray:
        C, W = self.history
        return self.game.diffs(a) * C + self.B2 * W

    @cached_property
    def S_atoms(self) -> tuple[np.ndarray, np.ndarray]:
        return self.S_at(self.lo), self.S_at(self.hi)

    @cached_property
    def expected_wS(self) -> np.ndarray:
        """E_t[w_t S_t(p_t)] over the announced forecast."""
        s_lo, s_hi = self.S_atoms
        return self.w_lo * (self.y - self.lo) * s_lo + (1.0 - self.w_lo) * (self.y - self.hi) * s_hi

    @cached_property
    def slack(self) -> np.ndarray:
        return 2.0 * np.maximum(0.0, self.expected_wS)

    @cached_property
    def expected_diag(self) -> np.ndarray:
        """E_t[w_t^2 ||Φ(p_t)||^2]."""
        g = self.game
        d_lo, d_hi = g.diffs(self.lo), g.diffs(self.hi)
        return self.w_lo * (self.y - self.lo) ** 2 * (d_lo**2 + self.B2) + (1.0 - self.w_lo) * (
            self.y - self.hi
        ) ** 2 * (d_hi**2 + self.B2)

    def allowance(self, t: int | None = None) -> float:
        """A(t, referee.max_tol) of the decision search (:func:`arena.certificates.decision_allowance`)."""
        return decision_allowance(self.T if t is None else int(t), self.game.B, self.max_tol)

    @property
    def search_ok(self) -> bool:
        """False for a deterministic search against a discontinuous π (no guarantee)."""
        fc = self.forecaster
        return self.game.continuous or not isinstance(fc, DecisionForecaster) or bool(fc.randomized)


def _atoms(rec) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    """(lo, hi, P(lo), exact) of every announced forecast, from the recorder's atoms or forecasts."""
    atoms, prob_lo = getattr(rec, "atoms", None), getattr(rec, "prob_lo", None)
    if atoms is not None and prob_lo is not None:
        return np.asarray(atoms[:, 0], float), np.asarray(atoms[:, 1], float), np.asarray(prob_lo, float), True
    forecasts = getattr(rec, "forecasts", None)
    if forecasts is not None and len(forecasts) >= len(rec.y):
        fs = forecasts[: len(rec.y)]
        lo = np.array([f.points[0] for f in fs], float)
        hi = np.array([f.points[-1] for f in fs], float)
        w = np.array([f.probs[0] if len(f.points) == 2 else 1.0 for f in fs], float)
        return lo, hi, w, True
    return rec.p.copy(), rec.p.copy(), np.ones(len(rec.y)), False  # only the realized forecasts


# ------------------------------------------------------------------------------ certificates
def cert_decision_regret(run: DecisionRun) -> Certificate:
    """§5: regret <= 2 sqrt(2 B^2 T + A), A the allowance fixed before the game (see the module docstring)."""
    T, B = run.T, run.game.B
    regret = float(np.sum(run.expected_losses) - run.best_fixed(T))
    sigma = float(np.sum(run.slack))
    A = run.allowance()
    bound = decision_regret_bound(B, T, A)
    extra = {
        "sigma": sigma,
        "allowance": A,
        "printed_bound": run.game.certificate_bound(T),
        "bound_data": 2.0 * math.sqrt(float(np.sum(run.expected_diag)) + A),
        "regret_realized": float(np.sum(run.realized_losses) - run.best_fixed(T)),
    }
    note = "" if run.exact else "the announced distributions were not recorded: realized forecasts used"
    if not run.search_ok:
        return not_applicable(
            "decision_regret",
            "a deterministic search against a discontinuous π has no "
            "guarantee (the paper's §5); use the randomized search",
            value=regret,
            bound=bound,
            extra=extra,
        )
    return judged("decision_regret", regret, bound, atol=1e-9, probabilistic=run.randomized, note=note, extra=extra)


def _precision_ratio(run: DecisionRun) -> np.ndarray:
    t = np.arange(1, run.T + 1, dtype=float)
    s_lo, s_hi = run.S_atoms
    two = run.lo != run.hi
    C, W = run.history
    mag = np.abs(s_lo) + np.abs(s_hi)
    spacing = np.spacing(np.maximum(np.abs(run.hi), np.abs(run.lo)))
    two_allow = np.maximum(1.0 / (10.0 * t * t), 4.0 * spacing * np.minimum(np.abs(s_lo), np.abs(s_hi)))
    tol = run.max_tol if run.game.continuous else 0.0  # the referee's largest width, not the declared one
    w = run.y - run.p
    point_allow = np.abs(w) * np.abs(C) * tol  # |S_t(p_t)| <= Lip(S_t) tol / 2 = 2|C_t| tol / 2 (squared loss)
    allowance = np.where(two, two_allow, point_allow) + 64 * _EPS * (1.0 + mag) * (1.0 + np.abs(C) + run.B2 * np.abs(W))
    slack = np.maximum(0.0, run.expected_wS)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(slack > 0, slack / allowance, 0.0)


def cert_decision_precision(run: DecisionRun) -> Certificate:
    """The per-round slack is what the search leaves (value: worst ratio; bound 1)."""
    if not run.search_ok:
        return not_applicable(
            "decision_search_precision", "a deterministic search against a discontinuous π (no root to find)", bound=1.0
        )
    ratio = _precision_ratio(run)
    worst = float(np.max(ratio)) if run.T else 0.0
    return Certificate(
        "decision_search_precision",
        worst,
        1.0,
        bool(worst <= 1.0),
        extra={"worst_round": int(np.argmax(ratio)) + 1 if run.T else 0},
    )


# ------------------------------------------------------------------------------ metrics, curves
def decision_metrics(run: DecisionRun) -> dict[str, float]:
    T = run.T
    best = run.best_fixed(T)
    out = {
        "decision_loss": float(np.mean(run.realized_losses)) if T else 0.0,
        "decision_loss_expected": float(np.mean(run.expected_losses)) if T else 0.0,
        "regret_decision": float(np.sum(run.realized_losses) - best),
        "regret_decision_expected": float(np.sum(run.expected_losses) - best),
        "randomized_rounds": float(np.mean(run.lo != run.hi)) if T else 0.0,
    }
    out["regret_decision_over_T"] = out["regret_decision"] / T if T else 0.0
    out["regret_decision_expected_over_T"] = out["regret_decision_expected"] / T if T else 0.0
    a = run.game.best_fixed_action(run.y)
    out["best_action"] = float(a)
    return out


def decision_curves(run: DecisionRun, n_checkpoints: int) -> pd.DataFrame:
    rows: list[tuple[int, str, float]] = []
    if not run.T:
        return pd.DataFrame(rows, columns=["t", "metric", "value"])
    claims = run.forecaster.claims
    real, expect = np.cumsum(run.realized_losses), np.cumsum(run.expected_losses)
    for t in checkpoints(run.T, n_checkpoints):
        best = run.best_fixed(int(t))
        m = {"regret_decision": real[t - 1] - best, "regret_decision_expected": expect[t - 1] - best}
        if "decision_regret" in claims and run.search_ok:
            m["regret_decision_bound"] = decision_regret_bound(run.game.B, t, run.allowance(t))
            m["regret_decision_expected_bound"] = m["regret_decision_bound"]
        rows += [(int(t), k, float(v)) for k, v in m.items()]
    return pd.DataFrame(rows, columns=["t", "metric", "value"])


#: Metric name -> one-line description of the metrics this game adds to the binary game's (names ending in ``<j>``:
#: one column per expert or group).
METRICS = {
    "decision_loss": "mean loss of the actions pi(p_t)",
    "decision_loss_expected": "mean loss of the actions, in expectation over a randomized forecast",
    "regret_decision": "regret of the actions pi(p_t) to the best fixed action (§5)",
    "regret_decision_over_T": "regret_decision / T",
    "regret_decision_expected": "regret_decision in expectation over a randomized forecast",
    "regret_decision_expected_over_T": "regret_decision_expected / T",
    "randomized_rounds": "fraction of rounds with a two-point (randomized) forecast",
    "best_action": "the best fixed action in hindsight",
}
#: Certificate name -> one-line description.
CERTIFICATE_DESCRIPTIONS = {
    "decision_regret": "§5: regret of the actions <= 2B sqrt(2T) + the search's slack",
    "decision_search_precision": "the decision search leaves no more slack than its width rule allows",
}
#: Certificate name -> function(run, referee) -> Certificate (scored on the decision run; the binary
#: game's certificates are scored too, on the binary run).
CERTIFICATES = {
    "decision_regret": lambda run, ref: cert_decision_regret(run),
    "decision_search_precision": lambda run, ref: cert_decision_precision(run),
}
DecisionGame.certificates = {**BINARY_CERTIFICATES, **CERTIFICATES}
DecisionGame.metric_descriptions = {**BINARY_METRICS, **GRID_METRICS, **METRICS}
DecisionGame.certificate_descriptions = CERTIFICATE_DESCRIPTIONS

__all__ = [
    "DecisionRun",
    "cert_decision_precision",
    "cert_decision_regret",
    "decision_curves",
    "decision_metrics",
    "DecisionGame",
]
