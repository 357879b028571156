"""The referee: turns a recorded game into metrics, curves and certificates.

A certificate is a guarantee of the paper evaluated on the run's own data: the
observed quantity, the bound the theory gives for this very run, and whether it holds.
With w_t = y_t - p_t and S_t the forecaster's summary function, the identity
||sum_t w_t Phi(z_t)||^2 = sum_t w_t^2 k(z_t, z_t) + 2 sum_t w_t S_t(p_t) holds exactly; a finite
search precision leaves the last sum slightly positive, so bounds include the slack
sigma = 2 sum_t max(0, w_t S_t(p_t)) computed here from the kernel (SPEC §6), and the
``search_precision`` certificate checks that sigma is no larger than the search
tolerance explains. Kernel certificates use the forecast the forecaster's state is
built on (``p_internal``: the unrounded K29 forecast behind a rounded one).

References
----------
Perdomo & Recht, §2, §4, §6-§8; SPEC §6-§7.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

from arena.kernels import FermiSobolev, Kernel, cross_sums, kernel_gap, make_kernel
from arena.metrics import calibration as cal
from arena.metrics.regret import regret_constant, regret_linear
from arena.metrics.smce import smce

# Floating-point allowance per kernel evaluation in the search-precision certificate.
_FLOAT_EPS = 1e-12


@dataclass(frozen=True)
class Certificate:
    """One guarantee checked on one run. ``holds`` is None when it does not apply."""

    name: str
    value: float
    bound: float
    holds: bool | None
    probabilistic: bool = False
    note: str = ""
    extra: dict = field(default_factory=dict)


def checkpoints(T: int, n: int = 20) -> np.ndarray:
    """About ``n`` log-spaced rounds from 10 (or 1) to T, always including T.

    Examples
    --------
    >>> checkpoints(1000, 4).tolist()
    [10, 46, 215, 1000]
    """
    if T <= 10:
        return np.arange(1, T + 1)
    return np.unique(np.round(np.geomspace(10, T, n)).astype(int))


class _Run:
    """The arrays of one run and the quantities several certificates share (computed once)."""

    def __init__(self, rec, forecaster):
        self.X, self.y = rec.X, rec.y
        self.p, self.p_int = rec.p, rec.p_internal
        self.w = self.y - self.p_int
        self.T = len(self.y)
        self.forecaster = forecaster
        self.kernel: Kernel | None = getattr(forecaster, "kernel_object", None)

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


def _cert(name, value, bound, **kw) -> Certificate:
    return Certificate(name, float(value), float(bound), bool(value <= bound * (1 + 1e-12) + 1e-12), **kw)


def cert_bit(run: _Run) -> Certificate:
    """§2: |sum_t (p_t - y_t)| <= 1."""
    return _cert("bit", abs(np.sum(run.p - run.y)), 1.0)


def cert_kernel(run: _Run) -> Certificate:
    """§4/§7: sum_{s,t} w_s w_t k(z_s, z_t) <= sum_t w_t^2 k(z_t, z_t) + sigma (gap computed directly)."""
    gap = kernel_gap(run.kernel, run.X, run.p_int, run.w)
    return _cert("kernel", gap, run.diag.sum() + run.slack.sum(), extra={"sigma": float(run.slack.sum())})


def cert_search_precision(run: _Run) -> Certificate:
    """sigma <= what a search of width tol can leave: 2 sum_t |w_t| (lip tol/2 + eps) sum_{s<t} |w_s|."""
    tol = float(getattr(run.forecaster, "tol", 0.0))
    k = run.kernel
    lip, sup = k.lip_p(run.X, run.p_int), k.sup_abs(run.X, run.p_int)
    past = np.concatenate(([0.0], np.cumsum(np.abs(run.w))[:-1]))
    allowance = 2.0 * np.sum(np.abs(run.w) * (lip * tol / 2 + _FLOAT_EPS * max(sup, 1.0)) * past)
    return _cert("search_precision", run.slack.sum(), allowance)


def cert_smce(run: _Run) -> Certificate:
    """§8: smCE <= sqrt(2) sqrt(sum_t w_t^2 k(z_t, z_t) + sigma), for any kernel with k_FS as a summand.

    ``extra`` reports the looser sqrt(8T/3 + 2 sigma) and, for information, the paper's
    printed sqrt(2T) (SPEC §7: the constants imply sqrt(8T/3))."""
    sigma = run.slack.sum()
    bound = math.sqrt(2.0) * math.sqrt(run.diag.sum() + sigma)
    return _cert("smce", run.smce_internal, bound,
                 extra={"bound_8T3": math.sqrt(8 * run.T / 3 + 2 * sigma), "printed_sqrt2T": math.sqrt(2 * run.T)})


def cert_linear_regret(run: _Run, M: float) -> Certificate:
    """§6/§8: regret to ||w|| <= M linear predictors <= (sqrt 5 + sqrt(1 + 4M^2)) sqrt(sum w^2 k + sigma).

    Holds for any kernel with 1, p and x feature summands. ``extra`` reports the looser
    2 sqrt(T (5 + 4M^2)(2 + B^2)) with B = max ||x_t||."""
    regret = regret_linear(run.p_int, run.y, run.X, M)
    c = math.sqrt(5.0) + math.sqrt(1.0 + 4.0 * M * M)
    B = float(np.max(np.linalg.norm(run.X, axis=1))) if run.X.size else 0.0
    loose = 2 * math.sqrt(run.T * (5 + 4 * M * M) * (2 + B * B))
    return _cert("linear_regret", regret, c * math.sqrt(run.diag.sum() + run.slack.sum()),
                 extra={"M": M, "bound_loose": loose})


def cert_rounded_calibration(run: _Run) -> Certificate:
    """§8 Prop. rounded calibration, corrected (SPEC §7): with probability 1 - delta, for every n,
    |sum_t 1{p_t = n/N}(n/N - y_t)| <= sqrt(T)(sqrt((8N+2)/3) + sqrt(2 log(2(N+1)/delta))) + T/N.

    ``extra`` reports the printed bound (with T/(2N)) beside it."""
    N, delta, T = run.forecaster.N, run.forecaster.delta, run.T
    err = cal.grid_calibration(run.p, run.y, N).max()
    core = math.sqrt(T) * (math.sqrt((8 * N + 2) / 3) + math.sqrt(2 * math.log(2 * (N + 1) / delta)))
    return _cert("rounded_calibration", err, core + T / N, probabilistic=True,
                 extra={"printed_bound": core + T / (2 * N), "delta": delta})


def run_only(fn):
    """A CERTIFICATES entry for a certificate that needs only the run: (run, referee) -> fn(run)."""
    return lambda run, ref: fn(run)


#: Certificate name -> function(run, referee) -> Certificate. Games add theirs.
CERTIFICATES = {
    "bit": lambda run, ref: cert_bit(run),
    "kernel": lambda run, ref: cert_kernel(run),
    "search_precision": lambda run, ref: cert_search_precision(run),
    "smce": lambda run, ref: cert_smce(run),
    "linear_regret": lambda run, ref: cert_linear_regret(run, ref.M),
    "rounded_calibration": lambda run, ref: cert_rounded_calibration(run),
}

#: Game name -> function(referee, game, recorder, forecaster) -> (summary, certificates, curves),
#: for games other than the binary one (registered by their metric modules).
SCORERS: dict = {}


class Referee:
    """Scores binary games: metrics, log-spaced curves and the forecaster's certificates.

    Parameters
    ----------
    M : norm bound of the linear comparators (regret and its certificate).
    ece_bins : bins of the binned ECE.
    oi_features : the declared Phi of the outcome-indistinguishability gap.
    n_checkpoints : about how many log-spaced rounds the curves have.
    """

    def __init__(self, M: float = 1.0, ece_bins: int = 10, oi_features=("1", "p", "x"), n_checkpoints: int = 20):
        if not M > 0:
            raise ValueError(f"referee: M={M!r} must be > 0 (the comparator norm bound)")
        self.M, self.ece_bins, self.n_checkpoints = float(M), int(ece_bins), int(n_checkpoints)
        self.oi_kernel = make_kernel({"features": list(oi_features)})

    def metrics(self, X, p, y, y_prob=None, grid: int | None = None) -> dict[str, float]:
        """Every binary metric of a run; ``grid`` = N adds the per-grid-point calibration error
        of forecasts rounded to {0, 1/N, ..., 1}."""
        T = len(y)
        out = {
            "bias": cal.bias(p, y),
            "brier": cal.brier(p, y),
            "log_loss": cal.log_loss(p, y),
            "ece": cal.ece(p, y, self.ece_bins),
            "smce": smce(p, y, "paper"),
            "smce_pm": smce(p, y, "pm"),
            "oi_gap": math.sqrt(max(kernel_gap(self.oi_kernel, X, p, y - p), 0.0)),
            "regret_constant": regret_constant(p, y),
            "regret_linear": regret_linear(p, y, X, self.M),
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

    def certificates(self, rec, forecaster, run: _Run | None = None, game_run=None,
                     own=()) -> dict[str, Certificate]:
        """The forecaster's claimed certificates. Names in ``own`` are a game's own certificates,
        scored on ``game_run``; the others are binary ones, scored on the binary run."""
        run = run or _Run(rec, forecaster)
        out = {}
        for name in forecaster.claims:
            if name not in CERTIFICATES:
                raise ValueError(f"forecaster {forecaster.name!r} claims an unknown certificate {name!r}; "
                                 f"known: {sorted(CERTIFICATES)}")
            if not len(rec.y):
                out[name] = Certificate(name, 0.0, 0.0, None, note="no rounds")
            else:
                out[name] = CERTIFICATES[name](game_run if name in own else run, self)
        return out

    def score(self, game, rec, forecaster) -> tuple[dict[str, float], dict[str, Certificate], pd.DataFrame]:
        """Metrics, certificates and curves of a recorded game (dispatching on the game)."""
        if game.name in SCORERS:
            return SCORERS[game.name](self, game, rec, forecaster)
        summary = self.metrics(rec.X, rec.p, rec.y, rec.y_prob, grid=getattr(forecaster, "N", None))
        run = _Run(rec, forecaster)  # shared by certificates and curves: S_t is computed once
        if run.same_p:
            run.smce_internal = summary["smce"]
        return summary, self.certificates(rec, forecaster, run), self.curves(rec, forecaster, run)

    def curves(self, rec, forecaster, run: _Run | None = None) -> pd.DataFrame:
        """Metrics and certificate bounds at log-spaced checkpoints (long format: t, metric, value)."""
        rows = []
        claims = forecaster.claims
        kernel = getattr(forecaster, "kernel_object", None)
        if kernel is not None and len(rec.y):
            run = run or _Run(rec, forecaster)
            diag_c, slack_c = np.cumsum(run.diag), np.cumsum(run.slack)
        for t in checkpoints(len(rec.y), self.n_checkpoints):
            X, p, y = rec.X[:t], rec.p[:t], rec.y[:t]
            m = {"bias": cal.bias(p, y), "brier": cal.brier(p, y), "smce": smce(p, y, "paper"),
                 "regret_constant": regret_constant(p, y),
                 "regret_linear": regret_linear(p, y, X, self.M)}
            if "smce" in claims:
                m["smce_internal"] = m["smce"] if run.same_p else smce(rec.p_internal[:t], y, "paper")
                m["smce_bound"] = math.sqrt(2.0) * math.sqrt(diag_c[t - 1] + slack_c[t - 1])
            if "linear_regret" in claims:
                m["regret_linear_bound"] = (math.sqrt(5) + math.sqrt(1 + 4 * self.M**2)) * math.sqrt(
                    diag_c[t - 1] + slack_c[t - 1])
            if "bit" in claims:
                m["bit_bound"] = 1.0
            rows += [(int(t), k, float(v)) for k, v in m.items()]
        return pd.DataFrame(rows, columns=["t", "metric", "value"])


from arena.metrics import coverage as _coverage  # noqa: E402,F401  (registers the quantile scorer and certificates)
from arena.metrics import decision as _decision, experts as _experts  # noqa: E402,F401  (experts, decision games)
