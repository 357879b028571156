"""The binary game (§2-§8): forecast p in [0, 1], outcome y in {0, 1}; its metrics, curves, certificates.

A certificate is a guarantee of the paper evaluated on the run's own data (see
:mod:`arena.certificates`). With w_t = y_t - p_t and S_t the forecaster's summary function,
the identity ||sum_t w_t Phi(z_t)||^2 = sum_t w_t^2 k(z_t, z_t) + 2 sum_t w_t S_t(p_t) holds
exactly; a finite search precision leaves the last sum slightly positive, so bounds include
the slack sigma = 2 sum_t max(0, w_t S_t(p_t)) computed here from the kernel (SPEC §6), and
the ``search_precision`` certificate checks that sigma is no larger than the search
tolerance explains. Kernel certificates use the forecast the forecaster's state is built on
(``p_internal``: the unrounded K29 forecast behind a rounded one).

References
----------
Perdomo & Recht, §2, §4, §6-§8; SPEC §3, §6-§7.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from arena.certificates import (Certificate, bit_bound, checkpoints, judged, linear_regret_bound,
                                rounded_calibration_bound, smce_bound)
from arena.games.base import Game, bind
from arena.kernels import FermiSobolev, Kernel, cross_sums, kernel_gap
from arena.metrics import calibration as cal
from arena.metrics.regret import regret_constant, regret_linear
from arena.metrics.smce import smce, smce_both
from arena.protocols import ProtocolError

# Floating-point allowance per kernel evaluation in the search-precision certificate.
_FLOAT_EPS = 1e-12


@dataclass(frozen=True)
class BinaryGame(Game):
    """Forecast p in [0, 1], outcome y in {0, 1}, scored by the squared loss (Brier)."""

    name: str = "binary"
    forecast_low: float = 0.0
    forecast_high: float = 1.0

    def check_outcome(self, y, who, t):
        try:
            y = float(y)
        except (TypeError, ValueError):
            raise ProtocolError(f"{who} returned outcome {y!r} at t={t}; the binary game needs 0 or 1") from None
        if y != 0.0 and y != 1.0:
            raise ProtocolError(f"{who} returned outcome {y!r} at t={t}; the binary game needs 0 or 1"
                                + (" (NaN)" if math.isnan(y) else ""))
        return y

    def loss(self, p, y):
        return (p - y) ** 2

    def score(self, referee, rec, forecaster):
        summary = metrics(referee, rec.X, rec.p, rec.y, rec.y_prob, grid=forecaster.N)
        run = BinaryRun(rec, forecaster)  # shared by certificates and curves: S_t is computed once
        run.smce_whole = summary["smce"]
        if run.same_p:
            run.smce_internal = summary["smce"]
        return summary, curves(referee, rec, forecaster.claims, run), bind(CERTIFICATES, run, referee)


class BinaryRun:
    """The arrays of one run and the quantities several certificates share (computed once)."""

    def __init__(self, rec, forecaster):
        self.X, self.y = rec.X, rec.y
        self.p, self.p_int = rec.p, rec.p_internal
        self.w = self.y - self.p_int
        self.T = len(self.y)
        self.forecaster = forecaster
        self.kernel: Kernel | None = forecaster.kernel_object
        self.smce_whole: float | None = None  # smce(p, y, "paper") of the whole run, once the summary has it

    @cached_property
    def S(self) -> np.ndarray:
        return cross_sums(self.kernel, self.X, self.p_int, self.w)

    @cached_property
    def diag(self) -> np.ndarray:
        return self.w**2 * self.kernel.diag(self.X, self.p_int)

    @cached_property
    def slack(self) -> np.ndarray:
        return 2.0 * np.maximum(0.0, self.w * self.S)

    @cached_property
    def same_p(self) -> bool:
        """Whether the internal forecasts are the realized ones (all but rounded forecasters)."""
        return bool(np.array_equal(self.p_int, self.p))

    @cached_property
    def smce_internal(self) -> float:
        return smce(self.p_int, self.y, "paper")

    @cached_property
    def fs_diag(self) -> float:
        return float(np.sum(self.w**2 * FermiSobolev().diag(self.X, self.p_int)))


# ------------------------------------------------------------------------------ certificates
def cert_bit(run: BinaryRun) -> Certificate:
    """§2: |sum_t (p_t - y_t)| <= 1."""
    return judged("bit", abs(np.sum(run.p - run.y)), bit_bound())


def cert_kernel(run: BinaryRun) -> Certificate:
    """§4/§7: sum_{s,t} w_s w_t k(z_s, z_t) <= sum_t w_t^2 k(z_t, z_t) + sigma (gap computed directly)."""
    gap = kernel_gap(run.kernel, run.X, run.p_int, run.w)
    return judged("kernel", gap, run.diag.sum() + run.slack.sum(), extra={"sigma": float(run.slack.sum())})


def cert_search_precision(run: BinaryRun) -> Certificate:
    """sigma <= what a search of width tol can leave: 2 sum_t |w_t| (lip tol/2 + eps) sum_{s<t} |w_s|."""
    tol = float(run.forecaster.tol)
    k = run.kernel
    lip, sup = k.lip_p(run.X, run.p_int), k.sup_abs(run.X, run.p_int)
    past = np.concatenate(([0.0], np.cumsum(np.abs(run.w))[:-1]))
    allowance = 2.0 * np.sum(np.abs(run.w) * (lip * tol / 2 + _FLOAT_EPS * max(sup, 1.0)) * past)
    return judged("search_precision", run.slack.sum(), allowance)


def cert_smce(run: BinaryRun) -> Certificate:
    """§8: smCE <= sqrt(2) sqrt(sum_t w_t^2 k(z_t, z_t) + sigma), for any kernel with k_FS as a summand.

    ``extra`` reports the looser sqrt(8T/3 + 2 sigma) and, for information, the paper's
    printed sqrt(2T) (SPEC §7: the constants imply sqrt(8T/3))."""
    sigma = run.slack.sum()
    return judged("smce", run.smce_internal, smce_bound(run.diag.sum(), sigma),
                  extra={"bound_8T3": math.sqrt(8 * run.T / 3 + 2 * sigma), "printed_sqrt2T": math.sqrt(2 * run.T)})


def cert_linear_regret(run: BinaryRun, M: float) -> Certificate:
    """§6/§8: regret to ||w|| <= M linear predictors <= (sqrt 5 + sqrt(1 + 4M^2)) sqrt(sum w^2 k + sigma).

    Holds for any kernel with 1, p and x feature summands. ``extra`` reports the looser
    2 sqrt(T (5 + 4M^2)(2 + B^2)) with B = max ||x_t||."""
    regret = regret_linear(run.p_int, run.y, run.X, M)
    B = float(np.max(np.linalg.norm(run.X, axis=1))) if run.X.size else 0.0
    loose = 2 * math.sqrt(run.T * (5 + 4 * M * M) * (2 + B * B))
    return judged("linear_regret", regret, linear_regret_bound(M, run.diag.sum(), run.slack.sum()),
                  extra={"M": M, "bound_loose": loose})


def cert_rounded_calibration(run: BinaryRun) -> Certificate:
    """§8 Prop. rounded calibration, corrected (SPEC §7): with probability 1 - delta, for every n,
    |sum_t 1{p_t = n/N}(n/N - y_t)| <= sqrt(T)(sqrt((8N+2)/3) + sqrt(2 log(2(N+1)/delta))) + T/N.

    ``extra`` reports the printed bound (with T/(2N)) beside it."""
    N, delta, T = run.forecaster.N, run.forecaster.delta, run.T
    err = cal.grid_calibration(run.p, run.y, N).max()
    return judged("rounded_calibration", err, rounded_calibration_bound(T, N, delta), probabilistic=True,
                  extra={"printed_bound": rounded_calibration_bound(T, N, delta, printed=True), "delta": delta})


#: Metric name -> one-line description: what every game whose outcomes are bits reports (``arena-list
#: metrics``; a test checks the catalogue against what the referee computes).
METRICS = {
    "bias": "mean bias |sum_t (p_t - y_t)| / T (§2)",
    "brier": "mean squared error (p_t - y_t)^2",
    "log_loss": "mean log loss, forecasts clipped to [1e-6, 1 - 1e-6]",
    "ece": "binned expected calibration error (referee.ece_bins equal-width bins)",
    "smce": "exact smooth calibration error, test functions [0, 1] -> [0, 1] (§8)",
    "smce_over_T": "smce / T",
    "smce_pm": "exact smooth calibration error, test functions [0, 1] -> [-1, 1] (the usual smCE)",
    "smce_pm_over_T": "smce_pm / T",
    "oi_gap": "outcome-indistinguishability gap ||sum_t Phi(x_t, p_t)(y_t - p_t)|| for referee.oi_features",
    "regret_constant": "squared-loss regret to the best constant forecast",
    "regret_linear": "squared-loss regret to the best linear forecast <w, x_t>, ||w|| <= referee.M (§6)",
    'expected_bias': "mean bias against nature's P(y_t = 1) (natures that expose their law)",
    'expected_brier': "expected squared error under nature's P(y_t = 1) (natures that expose their law)",
}
#: Forecasters on a grid {0, 1/N, ..., 1} (``N``) add these in the binary and decision games.
GRID_METRICS = {
    "grid_calibration": "largest per-grid-point calibration error of the rounded forecasts (§8)",
    "grid_calibration_over_T": "grid_calibration / T",
}
#: Certificate name -> one-line description (a forecaster claims certificates by name).
CERTIFICATE_DESCRIPTIONS = {
    "bit": "§2: |sum_t (p_t - y_t)| <= 1",
    "kernel": "§4/§7: sum_{s,t} w_s w_t k(z_s, z_t) <= sum_t w_t^2 k(z_t, z_t) + sigma",
    "search_precision": "the search slack sigma is no larger than its tolerance explains",
    "smce": "§8: smCE <= sqrt(2) sqrt(sum_t w_t^2 k(z_t, z_t) + sigma)",
    "linear_regret": "§6/§8: regret to linear forecasts (||w|| <= M) <= (sqrt 5 + sqrt(1 + 4M^2))"
                     " sqrt(sum w^2 k + sigma)",
    "rounded_calibration": "§8 (corrected): per grid point, w.p. 1 - delta, <= sqrt(T)(...) + T/N",
}


#: Certificate name -> function(run, referee) -> Certificate.
CERTIFICATES = {
    "bit": lambda run, ref: cert_bit(run),
    "kernel": lambda run, ref: cert_kernel(run),
    "search_precision": lambda run, ref: cert_search_precision(run),
    "smce": lambda run, ref: cert_smce(run),
    "linear_regret": lambda run, ref: cert_linear_regret(run, ref.M),
    "rounded_calibration": lambda run, ref: cert_rounded_calibration(run),
}
BinaryGame.certificates = CERTIFICATES
BinaryGame.metric_descriptions = {**METRICS, **GRID_METRICS}
BinaryGame.certificate_descriptions = CERTIFICATE_DESCRIPTIONS


# ---------------------------------------------------------------------------- metrics, curves
def metrics(referee, X, p, y, y_prob=None, grid: int | None = None) -> dict[str, float]:
    """Every binary metric of a run under the referee's settings; ``grid`` = N adds the
    per-grid-point calibration error of forecasts rounded to {0, 1/N, ..., 1}."""
    T = len(y)
    smce_paper, smce_pm = smce_both(p, y)
    out = {
        "bias": cal.bias(p, y),
        "brier": cal.brier(p, y),
        "log_loss": cal.log_loss(p, y),
        "ece": cal.ece(p, y, referee.ece_bins),
        "smce": smce_paper,
        "smce_pm": smce_pm,
        "oi_gap": math.sqrt(max(kernel_gap(referee.oi_kernel, X, p, y - p), 0.0)),
        "regret_constant": regret_constant(p, y),
        "regret_linear": regret_linear(p, y, X, referee.M),
    }
    out["smce_over_T"] = out["smce"] / T if T else 0.0
    out["smce_pm_over_T"] = out["smce_pm"] / T if T else 0.0
    if grid is not None and T:
        out["grid_calibration"] = float(cal.grid_calibration(p, y, grid).max())
        out["grid_calibration_over_T"] = out["grid_calibration"] / T
    if y_prob is not None and T and np.all(np.isfinite(y_prob)):
        out["expected_bias"] = float(abs(np.sum(p - y_prob)) / T)
        out["expected_brier"] = float(np.mean(p**2 - 2 * p * y_prob + y_prob))
    return out


def curves(referee, rec, claims, run: BinaryRun) -> pd.DataFrame:
    """Metrics and the claimed certificates' bounds at log-spaced checkpoints (long format: t, metric, value)."""
    rows = []
    if run.kernel is not None and len(rec.y):
        diag_c, slack_c = np.cumsum(run.diag), np.cumsum(run.slack)
    for t in checkpoints(len(rec.y), referee.n_checkpoints):
        X, p, y = rec.X[:t], rec.p[:t], rec.y[:t]
        # the last checkpoint is the whole run: its smCE is the summary's (BinaryGame.score)
        whole = t == len(rec.y) and run.smce_whole is not None
        m = {"bias": cal.bias(p, y), "brier": cal.brier(p, y),
             "smce": run.smce_whole if whole else smce(p, y, "paper"),
             "regret_constant": regret_constant(p, y),
             "regret_linear": regret_linear(p, y, X, referee.M)}
        if "smce" in claims:
            m["smce_internal"] = m["smce"] if run.same_p else smce(rec.p_internal[:t], y, "paper")
            m["smce_bound"] = smce_bound(diag_c[t - 1], slack_c[t - 1])
        if "linear_regret" in claims:
            m["regret_linear_bound"] = linear_regret_bound(referee.M, diag_c[t - 1], slack_c[t - 1])
        if "bit" in claims:
            m["bit_bound"] = bit_bound()
        rows += [(int(t), k, float(v)) for k, v in m.items()]
    return pd.DataFrame(rows, columns=["t", "metric", "value"])
