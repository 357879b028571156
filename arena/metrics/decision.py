"""Referee of the decision game (§5): regret of the actions π(p_t) to the best fixed action.

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
  discontinuous π has no guarantee (SPEC §4): the certificate is then marked not applicable.
- ``decision_search_precision``: in every round the slack is what the search leaves:
  E_t[w_t S_t(p_t)] <= 1/(10 t^2) for a two-point forecast (the width rule of the randomized
  search, or the float resolution of the interval), w_t S_t(p_t) <= |w_t| |C_t| tol for a
  point forecast of the deterministic search (S_t is 2|C_t|-Lipschitz for the squared loss).
  Value: the worst ratio of the two sides; bound 1.

References
----------
Perdomo & Recht, §5 and §10 (the randomized search); SPEC §4 and §6.
"""

from __future__ import annotations

import math
from functools import cached_property

import numpy as np
import pandas as pd

import arena.decision  # noqa: F401  (registers the decision game)
from arena.referee import CERTIFICATES, SCORERS, Certificate, checkpoints, run_only

_EPS = np.finfo(float).eps


class DecisionRun:
    """The arrays of one decision run and the quantities the certificates share."""

    def __init__(self, game, rec, forecaster):
        self.game, self.forecaster = game, forecaster
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
        return (self.w_lo * g.action_losses(g.actions(self.lo), self.y)
                + (1.0 - self.w_lo) * g.action_losses(g.actions(self.hi), self.y))

    def best_fixed(self, t: int) -> float:
        return self.game.best_fixed_loss(self.y[:t])

    @cached_property
    def randomized(self) -> bool:
        return bool(np.any(self.lo != self.hi))

    # ------------------------------------------------------------------- moment identity
    @cached_property
    def B2(self) -> float:
        return self.game.B ** 2

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
        return (self.w_lo * (self.y - self.lo) ** 2 * (d_lo**2 + self.B2)
                + (1.0 - self.w_lo) * (self.y - self.hi) ** 2 * (d_hi**2 + self.B2))

    @property
    def search_ok(self) -> bool:
        """False for a deterministic search against a discontinuous π (no guarantee)."""
        return self.game.continuous or bool(getattr(self.forecaster, "randomized", True))


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
    """§5: regret <= 2 sqrt(2 B^2 T + σ) (see the module docstring)."""
    T, B = run.T, run.game.B
    regret = float(np.sum(run.expected_losses) - run.best_fixed(T))
    sigma = float(np.sum(run.slack))
    bound = 2.0 * math.sqrt(2.0 * B * B * T + sigma)
    extra = {"sigma": sigma, "printed_bound": run.game.certificate_bound(T),
             "bound_data": 2.0 * math.sqrt(float(np.sum(run.expected_diag)) + sigma),
             "regret_realized": float(np.sum(run.realized_losses) - run.best_fixed(T))}
    note = "" if run.exact else "the announced distributions were not recorded: realized forecasts used"
    if not run.search_ok:
        return Certificate("decision_regret", regret, bound, None, note="a deterministic search against a "
                           "discontinuous π has no guarantee (SPEC §4); use the randomized search", extra=extra)
    holds = regret <= bound * (1 + 1e-12) + 1e-9
    return Certificate("decision_regret", regret, bound, bool(holds), probabilistic=run.randomized, note=note,
                       extra=extra)


def _precision_ratio(run: DecisionRun) -> np.ndarray:
    t = np.arange(1, run.T + 1, dtype=float)
    s_lo, s_hi = run.S_atoms
    two = run.lo != run.hi
    C, W = run.history
    mag = np.abs(s_lo) + np.abs(s_hi)
    spacing = np.spacing(np.maximum(np.abs(run.hi), np.abs(run.lo)))
    two_allow = np.maximum(1.0 / (10.0 * t * t), 4.0 * spacing * np.minimum(np.abs(s_lo), np.abs(s_hi)))
    tol = float(getattr(run.forecaster, "tol", 0.0)) if run.game.continuous else 0.0
    w = run.y - run.p
    point_allow = np.abs(w) * np.abs(C) * tol  # |S_t(p_t)| <= Lip(S_t) tol / 2 = 2|C_t| tol / 2 (squared loss)
    allowance = np.where(two, two_allow, point_allow) + 64 * _EPS * (1.0 + mag) * (1.0 + np.abs(C) + run.B2 * np.abs(W))
    slack = np.maximum(0.0, run.expected_wS)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(slack > 0, slack / allowance, 0.0)


def cert_decision_precision(run: DecisionRun) -> Certificate:
    """The per-round slack is what the search leaves (value: worst ratio; bound 1)."""
    if not run.search_ok:
        return Certificate("decision_search_precision", math.nan, 1.0, None,
                           note="a deterministic search against a discontinuous π (no root to find)")
    ratio = _precision_ratio(run)
    worst = float(np.max(ratio)) if run.T else 0.0
    return Certificate("decision_search_precision", worst, 1.0, bool(worst <= 1.0),
                       extra={"worst_round": int(np.argmax(ratio)) + 1 if run.T else 0})


# ------------------------------------------------------------------------------ metrics, curves
def decision_metrics(run: DecisionRun) -> dict[str, float]:
    T = run.T
    best = run.best_fixed(T)
    out = {"decision_loss": float(np.mean(run.realized_losses)) if T else 0.0,
           "decision_loss_expected": float(np.mean(run.expected_losses)) if T else 0.0,
           "regret_decision": float(np.sum(run.realized_losses) - best),
           "regret_decision_expected": float(np.sum(run.expected_losses) - best),
           "randomized_rounds": float(np.mean(run.lo != run.hi)) if T else 0.0}
    out["regret_decision_over_T"] = out["regret_decision"] / T if T else 0.0
    out["regret_decision_expected_over_T"] = out["regret_decision_expected"] / T if T else 0.0
    a = run.game.best_fixed_action(run.y)
    out["best_action"] = float(a)
    return out


def decision_curves(run: DecisionRun, n_checkpoints: int) -> pd.DataFrame:
    rows = []
    if not run.T:
        return pd.DataFrame(rows, columns=["t", "metric", "value"])
    claims = getattr(run.forecaster, "claims", ())
    real, expect = np.cumsum(run.realized_losses), np.cumsum(run.expected_losses)
    slack = np.cumsum(run.slack)
    B2 = run.B2
    for t in checkpoints(run.T, n_checkpoints):
        best = run.best_fixed(int(t))
        m = {"regret_decision": real[t - 1] - best, "regret_decision_expected": expect[t - 1] - best}
        if "decision_regret" in claims and run.search_ok:
            m["regret_decision_bound"] = 2.0 * math.sqrt(2.0 * B2 * t + slack[t - 1])
            m["regret_decision_expected_bound"] = m["regret_decision_bound"]
        rows += [(int(t), k, float(v)) for k, v in m.items()]
    return pd.DataFrame(rows, columns=["t", "metric", "value"])


class _BinaryClaims:
    """A forecaster seen with its binary claims only (the binary curves draw their bounds)."""

    def __init__(self, fc):
        self.claims = tuple(c for c in fc.claims if c not in DECISION_CERTIFICATES)
        self.kernel_object = getattr(fc, "kernel_object", None)


def score_decision(referee, game, rec, forecaster):
    """The referee's scorer of the decision game: (summary, certificates, curves)."""
    run = DecisionRun(game, rec, forecaster)
    summary = referee.metrics(rec.X, rec.p, rec.y, rec.y_prob, grid=getattr(forecaster, "N", None))
    summary.update(decision_metrics(run))
    certs = referee.certificates(rec, forecaster, game_run=run, own=DECISION_CERTIFICATES)
    curves = pd.concat([referee.curves(rec, _BinaryClaims(forecaster)), decision_curves(run, referee.n_checkpoints)],
                       ignore_index=True)
    return summary, certs, curves


DECISION_CERTIFICATES = {"decision_regret": cert_decision_regret, "decision_search_precision": cert_decision_precision}


CERTIFICATES.update({name: run_only(fn) for name, fn in DECISION_CERTIFICATES.items()})
SCORERS["decision"] = score_decision

__all__ = [
    "DecisionRun",
    "cert_decision_precision",
    "cert_decision_regret",
    "decision_curves",
    "decision_metrics",
    "score_decision",
]
