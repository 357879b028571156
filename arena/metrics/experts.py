"""Referee of the experts game (§9): regret to every expert and the certificates of ℓ∞ DF.

The recorded context of a round is the advice at the forecast played (for second-guessing
experts f_j(x_t, p_t), see :mod:`arena.experts`), so every expert is scored where the
forecaster was. Losses are unclipped; a round where the forecaster and an expert both
lose +inf (log loss, both gave the outcome probability 0) counts 0 for that expert, the
convention under which the potential argument of §9 is exact.

Metrics: the game's loss of the forecaster and of the best expert, the regret to every
expert (``regret_expert_<j>``, N <= 32) and to the best one (``regret_experts``), under the
game's loss and under both losses (``regret_experts_squared``, ``regret_experts_log``), plus
the binary game's metrics. Curves: the regret to the best expert at log-spaced t, the
certified bound, the mean loss, and the forecaster's weights on the experts (``weight:<j>``).

Certificates:

- ``experts_regret`` (§9 Prop.): with F_j = rate (ℓ(p_t, y_t) - ℓ(f_j, y_t)) and the weights
  α_t ∝ exp(sum_{s<t} F_s) recomputed from the run, the identity
  max_j sum_t F_j <= log sum_j exp(sum_t F_j) = log N + sum_t log sum_j α_tj exp(F_tj) holds
  exactly; a finite search precision leaves the last terms slightly positive, so the bound
  includes their positive part σ: regret to every expert <= (log N + σ) / rate, where rate
  is λ (squared loss) or 1 (log loss) for ℓ∞ DF and η for the aggregating algorithm.
  ``extra`` has σ and the printed bound log N / rate.
- ``experts_search_precision``: in every round σ_t is no larger than the search tolerance
  explains: σ_t <= λ (1 + 2 Lip) tol (squared) or (1 + Lip) (tol/2) / p_t(y_t) (log), Lip the
  Lipschitz constant in p that second-guessing advice declares (0 otherwise). The value is
  the worst ratio σ_t / allowance_t, the bound 1.
- ``hedge_regret``: regret <= log N / η + η T / 8 (squared loss in [0, 1]; also <= log N / η
  when η <= 1/2, exp-concavity), summed over the epochs of the doubling trick; log loss with
  η <= 1: <= log N / η. Plus the slack of a fixed-point search against second-guessing
  experts (the loss of p_t above that of the mixture sum_j w_j f_j(x_t, p_t)).

References
----------
Perdomo & Recht, §9 (Algorithm 5 and its Proposition); Cesa-Bianchi & Lugosi (2006), Thm 2.2
and Thm 3.3; SPEC §6.
"""

from __future__ import annotations

import math
from functools import cached_property

import numpy as np
import pandas as pd

from arena.experts import LOSS_FUNCTIONS
from arena.referee import CERTIFICATES, SCORERS, Certificate, checkpoints, run_only

_EPS = np.finfo(float).eps
#: Per-expert regret columns are written for panels of at most this many experts.
MAX_EXPERT_COLUMNS = 32


def _diff(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a - b elementwise with inf - inf = 0 (both lost everything)."""
    with np.errstate(invalid="ignore"):
        d = a - b
    return np.where(np.isnan(d) & (a == b), 0.0, d)


def _regrets(Lp, Le) -> np.ndarray:
    """Cumulative regret L_p - L_j; an expert whose loss is +inf is never regretted (-inf), and a
    forecaster at +inf against an expert with a finite loss has +inf regret."""
    Lp = np.asarray(Lp, float)
    Lp = Lp[..., None] if Lp.ndim == np.ndim(Le) - 1 else Lp
    with np.errstate(invalid="ignore"):
        d = Lp - Le
    return np.where(np.isinf(Le), -np.inf, d)


def _logsumexp_rows(Z: np.ndarray) -> np.ndarray:
    m = np.max(Z, axis=1)
    safe = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # rows of -inf: log 0, replaced below
        s = np.sum(np.exp(Z - safe[:, None]), axis=1)
        out = safe + np.log(s)
    return np.where(np.isfinite(m), out, m)


def _log_softmax_rows(Z: np.ndarray) -> np.ndarray:
    """Row-wise log-softmax; a row of -inf gives the uniform weights (as the forecasters do)."""
    lse = _logsumexp_rows(Z)
    uniform = -math.log(Z.shape[1])
    with np.errstate(invalid="ignore"):
        out = Z - lse[:, None]
    return np.where(np.isfinite(lse)[:, None], out, uniform)


class ExpertsRun:
    """The arrays of one experts run and the quantities several metrics share (computed once)."""

    def __init__(self, game, rec, forecaster):
        self.game, self.forecaster = game, forecaster
        self.loss = str(game.loss)
        self.X, self.p, self.y = rec.X, rec.p, rec.y
        self.T, self.N = len(self.y), rec.X.shape[1]

    def losses(self, loss: str | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(forecaster's per-round loss (T,), experts' per-round losses (T, N)) under ``loss``."""
        ell = LOSS_FUNCTIONS[loss or self.loss]
        return ell(self.p, self.y), ell(self.X, self.y[:, None])

    @cached_property
    def own(self) -> tuple[np.ndarray, np.ndarray]:
        return self.losses()

    @cached_property
    def cum_expert_losses(self) -> np.ndarray:
        """(T + 1, N): row k holds each expert's loss over rounds 1..k (row 0: zeros)."""
        _, le = self.own
        return np.vstack((np.zeros((1, self.N)), np.cumsum(le, axis=0)))

    @cached_property
    def gaps(self) -> np.ndarray:
        """(T, N): ℓ(p_t, y_t) - ℓ(f_tj, y_t) under the game's loss (inf - inf = 0)."""
        lp, le = self.own
        return _diff(lp[:, None], le)

    @cached_property
    def cum_gaps(self) -> np.ndarray:
        """(T, N): the regret to every expert after each round (see :func:`_regrets`)."""
        lp, le = self.own
        return _regrets(np.cumsum(lp), np.cumsum(le, axis=0))

    def regret(self, loss: str | None = None) -> np.ndarray:
        """Regret to every expert at the end, under ``loss`` (default the game's)."""
        if not self.T:
            return np.zeros(self.N)
        if loss is None or loss == self.loss:
            return self.cum_gaps[-1]
        lp, le = self.losses(loss)
        return _regrets(np.sum(lp), np.sum(le, axis=0))

    @cached_property
    def rate(self) -> float | None:
        r = getattr(self.forecaster, "rate", None)
        return float(r) if isinstance(r, (int, float)) and r > 0 else None

    @cached_property
    def potential_terms(self) -> np.ndarray:
        """log sum_j α_tj exp(F_tj) per round, with α_t ∝ exp(sum_{s<t} F_s) and F = rate * gaps."""
        F = self.rate * self.gaps
        # sum_{s<t} F_s = rate (L_p - L_j) before round t: -inf once the expert lost +inf (weight 0)
        before = self.rate * np.vstack((np.zeros((1, self.N)), self.cum_gaps[:-1]))
        with np.errstate(invalid="ignore"):
            Z = _log_softmax_rows(np.where(np.isnan(before), -np.inf, before)) + F
        return _logsumexp_rows(np.where(np.isnan(Z), -np.inf, Z))

    @cached_property
    def slack(self) -> np.ndarray:
        return np.maximum(0.0, self.potential_terms)

    @cached_property
    def float_allowance(self) -> np.ndarray:
        """Per round: 64 eps times the magnitudes summed so far (the potential's rounding)."""
        lp, le = self.own
        mag = np.abs(np.where(np.isfinite(lp), lp, 0.0)) + np.max(np.abs(np.where(np.isfinite(le), le, 0.0)), axis=1)
        return 64 * _EPS * (1.0 + np.cumsum((self.rate or 1.0) * mag) + math.log(max(self.N, 1)))


# ------------------------------------------------------------------------------ certificates
def cert_experts_regret(run: ExpertsRun) -> Certificate:
    """§9: regret to every expert <= (log N + σ) / rate (see the module docstring)."""
    if run.rate is None:
        return Certificate("experts_regret", math.nan, math.nan, None,
                           note=f"forecaster {run.forecaster.name!r} has no rate (λ or η) to certify")
    value = float(np.max(run.regret()))
    sigma = float(np.sum(run.slack))
    bound = (math.log(run.N) + sigma) / run.rate
    tol = run.float_allowance[-1] / run.rate
    return Certificate("experts_regret", value, bound, bool(value <= bound + tol),
                       extra={"sigma": sigma, "printed_bound": math.log(run.N) / run.rate, "rate": run.rate})


def _precision_allowance(run: ExpertsRun) -> np.ndarray:
    tol = float(getattr(run.forecaster, "tol", 0.0))
    lip = float(getattr(run.forecaster, "advice_lipschitz", 0.0))
    if run.loss == "log":
        own = np.where(run.y == 1.0, run.p, 1.0 - run.p)
        with np.errstate(divide="ignore"):
            per = (1.0 + lip) * (tol / 2) / own
    else:
        per = np.full(run.T, run.rate * (1.0 + 2.0 * lip) * tol)
    return per + run.float_allowance


def cert_experts_precision(run: ExpertsRun) -> Certificate:
    """σ_t <= what a search of width tol leaves, in every round (value: worst ratio; bound 1)."""
    if run.rate is None:
        return Certificate("experts_search_precision", math.nan, 1.0, None, note="no rate to certify")
    allowance = _precision_allowance(run)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(run.slack > 0, run.slack / allowance, 0.0)
    worst = float(np.max(ratio)) if run.T else 0.0
    return Certificate("experts_search_precision", worst, 1.0, bool(worst <= 1.0),
                       extra={"sigma": float(np.sum(run.slack)), "worst_round": int(np.argmax(ratio)) + 1 if run.T
                              else 0})


def hedge_bound(run: ExpertsRun, t: int | None = None) -> tuple[float, str]:
    """The textbook regret bound of the Hedge forecaster after t rounds (NaN, reason when none)."""
    fc, T = run.forecaster, run.T if t is None else t
    n = run.N
    logn = math.log(n)
    if run.loss == "log":
        if isinstance(fc.eta, float) and fc.eta <= 1.0:
            return logn / fc.eta, ""
        return math.nan, "Hedge has a log-loss guarantee only for a fixed eta <= 1 (exp-concavity)"

    def one(eta: float, rounds: int) -> float:
        b = logn / eta + eta * rounds / 8.0
        return min(b, logn / eta) if eta <= 0.5 else b

    if fc.eta == "doubling":
        total, m = 0.0, 0
        while (1 << m) <= T:
            start, stop = 1 << m, min((1 << (m + 1)) - 1, T)
            total += one(fc.rate_at(start, n), stop - start + 1)
            m += 1
        return total, ""
    return one(fc.rate_at(1, n), T), ""


def _hedge_slack(run: ExpertsRun) -> np.ndarray:
    """Per round: how much more p_t lost than the mixture sum_j w_tj f_tj (a fixed-point search's slack)."""
    fc, cum = run.forecaster, run.cum_expert_losses
    W = np.array([fc.weights_after(cum, t) for t in range(run.T)]) if run.T else np.zeros((0, run.N))
    mix = np.clip(np.sum(W * run.X, axis=1), 0.0, 1.0)
    ell = LOSS_FUNCTIONS[run.loss]
    return np.maximum(0.0, _diff(ell(run.p, run.y), ell(mix, run.y)))


def cert_hedge(run: ExpertsRun) -> Certificate:
    """Hedge's textbook bound plus the fixed-point slack (see the module docstring)."""
    bound, why = hedge_bound(run)
    value = float(np.max(run.regret()))
    if why:
        return Certificate("hedge_regret", value, math.nan, None, note=why)
    slack = float(np.sum(_hedge_slack(run)))
    tol = run.float_allowance[-1] if run.T else 0.0
    return Certificate("hedge_regret", value, bound + slack, bool(value <= bound + slack + tol),
                       extra={"textbook_bound": bound, "sigma": slack})


# ------------------------------------------------------------------------------ metrics, curves
def experts_metrics(run: ExpertsRun) -> dict[str, float]:
    lp, le = run.own
    out = {"loss": float(np.mean(lp)) if run.T else 0.0,
           "loss_best_expert": float(np.min(np.mean(le, axis=0))) if run.T else 0.0,
           "n_experts": float(run.N)}
    reg = run.regret()
    out["regret_experts"] = float(np.max(reg))
    out["regret_experts_over_T"] = out["regret_experts"] / run.T if run.T else 0.0
    out["best_expert"] = float(np.argmin(np.sum(le, axis=0))) if run.T else 0.0
    for loss in ("squared", "log"):
        out[f"regret_experts_{loss}"] = float(np.max(run.regret(loss)))
    if run.N <= MAX_EXPERT_COLUMNS:
        out.update({f"regret_expert_{j}": float(r) for j, r in enumerate(reg)})
    return out


def experts_curves(run: ExpertsRun, n_checkpoints: int) -> pd.DataFrame:
    fc = run.forecaster
    claims = getattr(fc, "claims", ())
    rows = []
    if not run.T:
        return pd.DataFrame(rows, columns=["t", "metric", "value"])
    cum_slack = np.cumsum(run.slack) if "experts_regret" in claims and run.rate else None
    weights = getattr(fc, "weights_after", None)
    cum_loss = np.cumsum(run.own[0])
    hedge_slack = np.cumsum(_hedge_slack(run)) if "hedge_regret" in claims else None
    for t in checkpoints(run.T, n_checkpoints):
        m = {"regret_experts": float(np.max(run.cum_gaps[t - 1])), "loss": float(cum_loss[t - 1] / t)}
        if cum_slack is not None:
            m["regret_experts_bound"] = (math.log(run.N) + cum_slack[t - 1]) / run.rate
        if hedge_slack is not None:
            b, why = hedge_bound(run, int(t))
            if not why:
                m["regret_experts_bound"] = b + hedge_slack[t - 1]
        w = weights(run.cum_expert_losses, int(t)) if callable(weights) else None
        if w is not None and run.N <= MAX_EXPERT_COLUMNS:
            m.update({f"weight:{j}": float(v) for j, v in enumerate(w)})
        rows += [(int(t), k, float(v)) for k, v in m.items()]
    return pd.DataFrame(rows, columns=["t", "metric", "value"])


def score_experts(referee, game, rec, forecaster):
    """The referee's scorer of the experts game: (summary, certificates, curves)."""
    run = ExpertsRun(game, rec, forecaster)
    summary = referee.metrics(rec.X, rec.p, rec.y, rec.y_prob)
    summary.update(experts_metrics(run))
    certs = referee.certificates(rec, forecaster, game_run=run, own=EXPERTS_CERTIFICATES)
    return summary, certs, experts_curves(run, referee.n_checkpoints)


EXPERTS_CERTIFICATES = {
    "experts_regret": cert_experts_regret,
    "experts_search_precision": cert_experts_precision,
    "hedge_regret": cert_hedge,
}


CERTIFICATES.update({name: run_only(fn) for name, fn in EXPERTS_CERTIFICATES.items()})
SCORERS["experts"] = score_experts

__all__ = [
    "ExpertsRun",
    "cert_experts_precision",
    "cert_experts_regret",
    "cert_hedge",
    "experts_curves",
    "experts_metrics",
    "hedge_bound",
    "score_experts",
]
