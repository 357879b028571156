"""The binary game (§2-§8): forecast p in [0, 1], outcome y in {0, 1}; its metrics, curves, certificates.

A certificate is a guarantee of the paper evaluated on the run's own data (see
:mod:`arena.certificates`). With w_t = y_t - p_t and S_t the forecaster's summary function,
the identity ||sum_t w_t Phi(z_t)||^2 = sum_t w_t^2 k(z_t, z_t) + 2 sum_t w_t S_t(p_t) holds
exactly; a finite search precision leaves the last sum slightly positive. Every bound adds the
allowance A(T, referee.max_tol) that the referee fixes before the game
(:func:`arena.certificates.search_allowance`), never the slack sigma = 2 sum_t max(0, w_t S_t(p_t))
measured in the run, which is reported beside it (``cert.<name>.sigma``); so each certificate
can fail, and ``search_precision`` checks sigma <= A itself. Kernel certificates use the
forecast the forecaster's state is built on (``p_internal``: the unrounded K29 forecast behind
a rounded one). A forecaster without a kernel, or a run whose inputs overflow floating point,
gets "not applicable" with the reason, never a vacuous pass.

References
----------
Perdomo & Recht, §2, §4, §6-§8; errata: docs/ERRATA.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from arena.certificates import (
    MAX_TOL,
    Certificate,
    bit_bound,
    checkpoints,
    judged,
    linear_regret_bound,
    not_applicable,
    ogd_regret_bound,
    rounded_calibration_bound,
    search_allowance,
    smce_bound,
)
from arena.fastfs import fs_quadratic, fs_slack_sum
from arena.games.base import Game, GameScore, bind
from arena.kernels import FermiSobolev, Kernel, cross_sums, kernel_gap
from arena.lazy import LazyModule
from arena.metrics import calibration as cal
from arena.metrics.regret import regret_constant, regret_linear
from arena.metrics.smce import smce, smce_curve
from arena.protocols import ProtocolError, RoundedForecaster

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = LazyModule("pandas")  # imported when a table is built: playing a game does not load pandas


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
            raise ProtocolError(
                f"{who} returned outcome {y!r} at t={t}; the binary game needs 0 or 1"
                + (" (NaN)" if math.isnan(y) else "")
            )
        return y

    def loss(self, p, y):
        return (p - y) ** 2

    def score(self, referee, rec, forecaster):
        # the forecasts sorted once, for both sums and the smCE curve
        order = np.argsort(rec.p, kind="stable") if len(rec.p) else None
        fs_q = fs_quadratic(rec.p, rec.y - rec.p, order) if len(rec.y) else 0.0  # fs_gap^2; K29's kernel gap too
        smce_whole = smce(rec.p, rec.y, order=order)
        summary = metrics(
            referee, rec.X, rec.p, rec.y, rec.y_prob, grid=rounding_grid(forecaster), fs_q=fs_q, smce_whole=smce_whole
        )
        run = BinaryRun(rec, forecaster, referee.max_tol)  # shared by certificates and curves: sigma is computed once
        run.smce_whole, run.fs_q = summary["smce"], fs_q
        if run.same_p:
            run.smce_internal = summary["smce"]
        rows = curve_rows(referee, rec, forecaster.claims, run, order)
        return GameScore(summary, rows, bind(CERTIFICATES, run, referee))


def rounding_grid(forecaster) -> int | None:
    """N of a forecaster whose forecasts are rounded to {0, 1/N, ..., 1}; None for the others."""
    return forecaster.N if isinstance(forecaster, RoundedForecaster) else None


class BinaryRun:
    """The arrays of one run and the quantities several certificates share (computed once)."""

    def __init__(self, rec, forecaster, max_tol: float = MAX_TOL):
        contexts = forecaster.kernel_contexts
        self.X, self.y = (rec.X if contexts is None else contexts(rec.X)), rec.y
        self.p, self.p_int = rec.p, rec.p_internal
        self.T = len(self.y)
        self.forecaster = forecaster
        self.kernel: Kernel | None = forecaster.kernel_object
        self.smce_whole: float | None = None  # smce(p, y, "paper") of the whole run, once the summary has it
        self.fs_q: float | None = None  # fs_quadratic(p, y - p) of the whole run, once the summary has it
        self.max_tol = float(max_tol)

    @property
    def known_kernel(self) -> Kernel:
        """The forecaster's kernel: the kernel certificates are scored only when it has one (see :attr:`premise`)."""
        if self.kernel is None:
            raise ValueError(f"forecaster {self.forecaster.name!r} has no kernel_object: no kernel certificate")
        return self.kernel

    @property
    def w(self) -> np.ndarray:
        """The residuals y_t - p_t of the internal forecasts (made when asked, not kept: 8 MB at a million rounds)."""
        return self.y - self.p_int

    @cached_property
    def kernel_constants(self) -> tuple[float, float]:
        """(lip, sup): bounds on |dk/dp| and |k| over p in [0, 1] and the run's contexts (a priori in p)."""
        ones = np.ones(self.T)
        with np.errstate(over="ignore", invalid="ignore"):
            return float(self.known_kernel.lip_p(self.X, ones)), float(self.known_kernel.sup_abs(self.X, ones))

    def allowance(self, t: int | None = None) -> float:
        """A(t, referee.max_tol): the slack the referee's largest tolerance explains in t rounds (fixed before
        the game)."""
        lip, sup = self.kernel_constants
        with np.errstate(over="ignore", invalid="ignore"):
            return search_allowance(self.T if t is None else int(t), self.max_tol, lip, sup)

    @cached_property
    def premise(self) -> str:
        """Why the kernel certificates do not apply to this run ("" when they do)."""
        if self.kernel is None:
            return (
                f"forecaster {self.forecaster.name!r} exposes no kernel_object: it has no summary function "
                "S_t to certify"
            )
        with np.errstate(over="ignore", invalid="ignore"):
            if math.isfinite(self.allowance()) and self._diag_stats[1]:
                return ""
            x2 = float(np.max(np.sum(self.X.astype(float) ** 2, axis=1))) if self.X.size else 0.0
        return (
            f"the kernel's values overflow floating point on this run (largest ||x_t||^2 = {x2:.3g}): the "
            "bound is not a number"
        )

    @property
    def diag(self) -> np.ndarray:
        """w_t^2 k(z_t, z_t) per round (made when asked, not kept: :attr:`diag_sum` is what most need)."""
        with np.errstate(over="ignore", invalid="ignore"):
            return self.w**2 * self.known_kernel.diag(self.X, self.p_int)

    @cached_property
    def _diag_stats(self) -> tuple[float, bool]:
        d = self.diag
        return float(d.sum()), bool(np.all(np.isfinite(d)))

    @property
    def diag_sum(self) -> float:
        """sum_t w_t^2 k(z_t, z_t)."""
        return self._diag_stats[0]

    @cached_property
    def sigma(self) -> float:
        """sigma = sum_t 2 max(0, w_t S_t(p_t)), S_t the cross sums of the kernel, keeping neither S nor the
        slack (at a million rounds each is 8 MB)."""
        if type(self.kernel) is FermiSobolev:  # K29: not even S is made
            return fs_slack_sum(self.p_int, y=self.y)  # w_t = y_t - p_t made round by round
        w = self.w
        x = w * cross_sums(self.known_kernel, self.X, self.p_int, w)
        np.maximum(0.0, x, out=x)
        np.multiply(2.0, x, out=x)  # in place: the numbers of 2.0 * np.maximum(0.0, w * S)
        return float(x.sum())

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


def _slack_columns(run: BinaryRun) -> dict:
    """The measured slack sigma and the allowance A it is held to (``cert.<name>.sigma``, ``.allowance``)."""
    return {"sigma": run.sigma, "allowance": run.allowance(), "max_tol": run.max_tol}


def cert_kernel(run: BinaryRun) -> Certificate:
    """§4/§7: sum_{s,t} w_s w_t k(z_s, z_t) <= sum_t w_t^2 k(z_t, z_t) + A (gap computed directly)."""
    if run.premise:
        return not_applicable("kernel", run.premise)
    if run.fs_q is not None and type(run.kernel) is FermiSobolev and run.same_p:
        gap = float(run.fs_q)  # kernel_gap of k_FS: fs_quadratic(p, y - p), computed for the summary's fs_gap
    else:
        gap = kernel_gap(run.known_kernel, run.X, run.p_int, run.w)
    return judged("kernel", gap, run.diag_sum + run.allowance(), extra=_slack_columns(run))


def cert_search_precision(run: BinaryRun) -> Certificate:
    """sigma <= A(T, referee.max_tol), what the referee's largest tolerance can leave (fixed before the game).

    ``extra`` reports the tighter allowance of the run's own residuals and declared tolerance,
    2 sum_t |w_t| (lip tol/2 + eps) sum_{s<t} |w_s|."""
    if run.premise:
        return not_applicable("search_precision", run.premise)
    tol = min(float(run.forecaster.tol), run.max_tol)
    lip, sup = run.kernel_constants
    abs_w = np.abs(run.w)
    past = np.concatenate(([0.0], np.cumsum(abs_w)[:-1]))
    declared = 2.0 * np.sum(abs_w * (lip * tol / 2 + 1e-12 * max(sup, 1.0)) * past)
    return judged(
        "search_precision",
        run.sigma,
        run.allowance(),
        extra={**_slack_columns(run), "allowance_declared_tol": float(declared)},
    )


def cert_smce(run: BinaryRun) -> Certificate:
    """§8: smCE <= sqrt(2) sqrt(sum_t w_t^2 k(z_t, z_t) + A), for any kernel with k_FS as a summand.

    ``extra`` reports the a-priori form sqrt(8T/3 + 2A) and, for information, the paper's
    printed sqrt(2T) (docs/ERRATA.md: the constants imply sqrt(8T/3))."""
    if run.premise:
        return not_applicable("smce", run.premise)
    A = run.allowance()
    return judged(
        "smce",
        run.smce_internal,
        smce_bound(run.diag_sum, A),
        extra={
            "bound_8T3": math.sqrt(8 * run.T / 3 + 2 * A),
            "printed_sqrt2T": math.sqrt(2 * run.T),
            **_slack_columns(run),
        },
    )


def cert_linear_regret(run: BinaryRun, M: float, intercept: bool = False) -> Certificate:
    """§6/§8: regret to linear predictors <w, x> (+ a with ``intercept``), ||(w, a)|| <= M, is at most
    (sqrt 5 + sqrt(1 + 4M^2)) sqrt(sum w^2 k + A) ((sqrt 5 + 1 + 2M) with an intercept).

    Holds for any kernel with 1, p and x feature summands. ``extra`` reports the looser
    2 sqrt(T (5 + 4M^2)(2 + B^2)) with B = max ||x_t||."""
    if run.premise:
        return not_applicable("linear_regret", run.premise)
    if not linear_applies(run.X, intercept):
        return not_applicable("linear_regret", _NO_LINEAR)
    regret = regret_linear(run.p_int, run.y, run.X, M, intercept)
    B = float(np.max(np.linalg.norm(run.X, axis=1))) if run.X.size else 0.0
    loose = 2 * math.sqrt(run.T * (5 + 4 * M * M) * (2 + B * B))
    return judged(
        "linear_regret",
        regret,
        linear_regret_bound(M, run.diag_sum, run.allowance(), intercept),
        extra={"M": M, "intercept": intercept, "bound_loose": loose, **_slack_columns(run)},
    )


def ogd_iterates(X: np.ndarray, y: np.ndarray, lr: float) -> np.ndarray:
    """p_t = <w_t, x_t> of the paper's online gradient method (§6): w_1 = 0, w_{t+1} = w_t - lr (p_t - y_t) x_t
    (no projection, no intercept, no clipping), recomputed from the run.

    Examples
    --------
    >>> ogd_iterates(np.ones((3, 1)), np.ones(3), 0.5).tolist()
    [0.0, 0.5, 0.75]
    """
    w, out = np.zeros(X.shape[1]), np.empty(len(y))
    with np.errstate(over="ignore", invalid="ignore"):
        for t in range(len(y)):
            out[t] = w @ X[t]
            w = w - lr * (out[t] - y[t]) * X[t]
    return out


def cert_ogd_regret(run: BinaryRun, M: float) -> Certificate:
    """§6, the paper's online gradient method (``ogd`` with ``paper: true``): regret of the announced
    forecasts to ||u|| <= M linear predictors <= M^2/α + α sum_t (p_t - y_t)^2 ||x_t||^2, with p_t the
    method's unclipped iterates recomputed from the run (:func:`ogd_iterates`; clipping into [0, 1]
    only lowers the loss). ``extra``: the printed M^2/(2α) + α M^2 B^4 T/2 with B = max ||x_t||, which
    assumes |p_t - y_t| <= M B."""
    lr = float(getattr(run.forecaster, "lr", math.nan))
    if not lr > 0:
        return not_applicable("ogd_regret", f"forecaster {run.forecaster.name!r} has no step size lr > 0")
    X = run.X.astype(float).reshape(run.T, -1)
    with np.errstate(over="ignore", invalid="ignore"):
        x2 = np.sum(X**2, axis=1)
        grad2 = float(np.sum((ogd_iterates(X, run.y, lr) - run.y) ** 2 * x2))
        B = math.sqrt(float(np.max(x2))) if run.T else 0.0
        printed = M * M / (2 * lr) + lr * M * M * B**4 * run.T / 2
    regret = regret_linear(run.p, run.y, X, M)
    return judged(
        "ogd_regret", regret, ogd_regret_bound(M, lr, grad2), extra={"lr": lr, "M": M, "printed_bound": printed}
    )


def cert_rounded_calibration(run: BinaryRun) -> Certificate:
    """§8 Prop. rounded calibration, corrected (docs/ERRATA.md): with probability 1 - delta, for every n,
    |sum_t 1{p_t = n/N}(n/N - y_t)| <= sqrt(T)(sqrt((8N+2)/3) + sqrt(2 log(2(N+1)/delta))) + T/N.

    ``extra`` reports the printed bound (with T/(2N)) beside it."""
    if not isinstance(run.forecaster, RoundedForecaster):
        return not_applicable("rounded_calibration", f"forecaster {run.forecaster.name!r} declares no grid N")
    N, delta, T = run.forecaster.N, run.forecaster.delta, run.T
    err = cal.grid_calibration(run.p, run.y, N).max()
    return judged(
        "rounded_calibration",
        err,
        rounded_calibration_bound(T, N, delta),
        probabilistic=True,
        extra={"printed_bound": rounded_calibration_bound(T, N, delta, printed=True), "delta": delta},
    )


#: Metric name -> one-line description: what every game whose outcomes are bits reports (``arena-list
#: metrics``; a test checks the catalogue against what the referee computes).
METRICS = {
    "bias": "mean bias |sum_t (p_t - y_t)| / T (§2)",
    "brier": "mean squared error (p_t - y_t)^2",
    "log_loss": "mean log loss, forecasts clipped to [1e-6, 1 - 1e-6]",
    "ece": "binned expected calibration error (referee.ece_bins equal-width bins)",
    "smce": "exact smooth calibration error, test functions [0, 1] -> [0, 1] (§8); equal to the usual form, "
    "f: [0, 1] -> [-1, 1], since a 1-Lipschitz function on [0, 1] spans at most 1",
    "smce_over_T": "smce / T",
    "oi_gap": "outcome-indistinguishability gap ||sum_t Phi(x_t, p_t)(y_t - p_t)|| for referee.oi_features",
    "regret_constant": "squared-loss regret to the best constant forecast",
    "regret_linear": "squared-loss regret to the best linear forecast <w, x_t> + a (a = 0 with "
    "referee.intercept=false), ||(w, a)|| <= referee.M (§6); NaN (not applicable) with no context and no intercept",
    "fs_gap": "Fermi-Sobolev kernel gap ||sum_t w_t k_FS(p_t, .)|| with w_t = y_t - p_t (§7), for every forecaster",
    "hat_calibration": "|sum_t h(p_t)(y_t - p_t)| for the hat h(p) = w_eps(p - alpha), referee.hat_eps and "
    "referee.hat_alpha (§8)",
    "expected_bias": "mean bias against nature's P(y_t = 1) (natures that expose their law)",
    "expected_brier": "expected squared error under nature's P(y_t = 1) (natures that expose their law)",
}
#: Forecasters on a grid {0, 1/N, ..., 1} (``N``) add these in the binary and decision games.
GRID_METRICS = {
    "grid_calibration": "largest per-grid-point calibration error of the rounded forecasts (§8)",
    "grid_calibration_over_T": "grid_calibration / T",
}
#: Certificate name -> one-line description (a forecaster claims certificates by name).
CERTIFICATE_DESCRIPTIONS = {
    "bit": "§2: |sum_t (p_t - y_t)| <= 1",
    "kernel": "§4/§7: sum_{s,t} w_s w_t k(z_s, z_t) <= sum_t w_t^2 k(z_t, z_t) + A",
    "search_precision": "the search slack sigma <= A(T, referee.max_tol), the allowance fixed before the game",
    "smce": "§8: smCE <= sqrt(2) sqrt(sum_t w_t^2 k(z_t, z_t) + A) <= sqrt(8T/3 + 2A)",
    "linear_regret": "§6/§8: regret to linear forecasts (||w|| <= M) <= (sqrt 5 + sqrt(1 + 4M^2)) sqrt(sum w^2 k + A)",
    "rounded_calibration": "§8 (corrected): per grid point, w.p. 1 - delta, <= sqrt(T)(...) + T/N",
    "ogd_regret": (
        "§6, the paper's OGD: regret to ||u|| <= M linear forecasts <= M^2/lr + lr sum_t (p_t - y_t)^2 ||x_t||^2"
    ),
}


#: Certificate name -> function(run, referee) -> Certificate.
CERTIFICATES = {
    "bit": lambda run, ref: cert_bit(run),
    "kernel": lambda run, ref: cert_kernel(run),
    "search_precision": lambda run, ref: cert_search_precision(run),
    "smce": lambda run, ref: cert_smce(run),
    "linear_regret": lambda run, ref: cert_linear_regret(run, ref.M, ref.intercept),
    "rounded_calibration": lambda run, ref: cert_rounded_calibration(run),
    "ogd_regret": lambda run, ref: cert_ogd_regret(run, ref.M),
}
BinaryGame.certificates = CERTIFICATES
BinaryGame.metric_descriptions = {**METRICS, **GRID_METRICS}
BinaryGame.certificate_descriptions = CERTIFICATE_DESCRIPTIONS


# ---------------------------------------------------------------------------- metrics, curves
#: Why regret_linear and its certificate are not applicable: the only comparator is the zero forecast.
_NO_LINEAR = "no context and no intercept (referee.intercept=false): the only linear forecast is 0"


def linear_applies(X, intercept: bool) -> bool:
    """Whether regret to linear forecasts means something: the nature gives a context, or the comparators have an
    intercept (else the only comparator <w, x> is the zero forecast).

    Examples
    --------
    >>> linear_applies(np.zeros((3, 0)), False), linear_applies(np.zeros((3, 0)), True)
    (False, True)
    """
    return bool(intercept) or np.asarray(X).reshape(len(X), -1).shape[1] > 0


def _regret_linear(referee, X, p, y) -> float:
    """regret_linear under the referee's M and intercept; NaN where it does not apply (:func:`linear_applies`)."""
    if not linear_applies(X, referee.intercept):
        return math.nan
    return regret_linear(p, y, X, referee.M, referee.intercept)


def metrics(
    referee,
    X,
    p,
    y,
    y_prob=None,
    grid: int | None = None,
    fs_q: float | None = None,
    smce_whole: float | None = None,
) -> dict[str, float]:
    """Every binary metric of a run under the referee's settings; ``grid`` = N adds the
    per-grid-point calibration error of forecasts rounded to {0, 1/N, ..., 1}; ``fs_q``:
    ``fs_quadratic(p, y - p)`` and ``smce_whole``: ``smce(p, y)``, when the caller has them."""
    T = len(y)
    with np.errstate(over="ignore", invalid="ignore"):  # contexts whose ||x||^2 overflows: NaN, not a warning
        oi2 = kernel_gap(referee.oi_kernel, X, p, y - p)
    out = {
        "bias": cal.bias(p, y),
        "brier": cal.brier(p, y),
        "log_loss": cal.log_loss(p, y),
        "ece": cal.ece(p, y, referee.ece_bins),
        "smce": smce(p, y) if smce_whole is None else smce_whole,
        "oi_gap": math.sqrt(max(oi2, 0.0)) if not math.isnan(oi2) else math.nan,
        "regret_constant": regret_constant(p, y),
        "regret_linear": _regret_linear(referee, X, p, y),
        "fs_gap": math.sqrt(max(fs_quadratic(p, y - p) if fs_q is None else fs_q, 0.0)) if T else 0.0,
        "hat_calibration": cal.hat_calibration(p, y, referee.hat_eps, referee.hat_alpha),
    }
    out["smce_over_T"] = out["smce"] / T if T else 0.0
    if grid is not None and T:
        out["grid_calibration"] = float(cal.grid_calibration(p, y, grid).max())
        out["grid_calibration_over_T"] = out["grid_calibration"] / T
    if y_prob is not None and T and np.all(np.isfinite(y_prob)):
        out["expected_bias"] = float(abs(np.sum(p - y_prob)) / T)
        out["expected_brier"] = float(np.mean(p**2 - 2 * p * y_prob + y_prob))
    return out


def curves(referee, rec, claims, run: BinaryRun) -> pd.DataFrame:
    """Metrics and the claimed certificates' bounds at log-spaced checkpoints (long format: t, metric, value)."""
    return pd.DataFrame(curve_rows(referee, rec, claims, run), columns=["t", "metric", "value"])


def curve_rows(referee, rec, claims, run: BinaryRun, order=None) -> list[tuple[int, str, float]]:
    """The rows (t, metric, value) of :func:`curves` (a list: :class:`arena.runner.Result` builds the frame);
    ``order``: the stable sort of the forecasts, when the caller has it."""
    rows = []
    kernel_ok = run.kernel is not None and len(rec.y) and not run.premise
    ts = checkpoints(len(rec.y), referee.n_checkpoints)
    # smCE of every prefix at once (one sort); the whole run's is the summary's (BinaryGame.score)
    whole = (ts == len(rec.y)) & (run.smce_whole is not None)
    smce_t = smce_curve(rec.p, rec.y, np.where(whole, 0, ts), "paper", order)
    smce_t[whole] = run.smce_whole
    internal = "smce" in claims and kernel_ok and not run.same_p
    smce_int = smce_curve(rec.p_internal, rec.y, ts, "paper") if internal else smce_t
    if kernel_ok:  # sum_{s<=t} w_s^2 k(z_s, z_s) at the checkpoints (diag_c[i]: the i-th checkpoint's)
        diag_c = np.cumsum(run.diag)[ts - 1]
    linear = linear_applies(rec.X, referee.intercept)  # else no regret_linear curve (not applicable)
    for i, t in enumerate(ts.tolist()):
        X, p, y = rec.X[:t], rec.p[:t], rec.y[:t]
        m = {
            "bias": cal.bias(p, y),
            "brier": cal.brier(p, y),
            "smce": float(smce_t[i]),
            "regret_constant": regret_constant(p, y),
        }
        if linear:
            m["regret_linear"] = regret_linear(p, y, X, referee.M, referee.intercept)
        if "smce" in claims and kernel_ok:
            m["smce_internal"] = float(smce_int[i])
            m["smce_bound"] = smce_bound(diag_c[i], run.allowance(t))
        if "linear_regret" in claims and kernel_ok and linear:
            m["regret_linear_bound"] = linear_regret_bound(referee.M, diag_c[i], run.allowance(t), referee.intercept)
        if "bit" in claims:
            m["bit_bound"] = bit_bound()
        rows += [(int(t), k, float(v)) for k, v in m.items()]
    return rows
