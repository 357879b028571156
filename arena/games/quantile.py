"""The quantile game (§10): its rules, coverage and pinball loss, and the certificates of §10.

Rules: forecast the q-quantile of y in (ymin, ymax] (see :class:`QuantileGame`).

Metrics (realized, and expected over the announced two-point forecast and nature's law,
which the arena records as the law's CDF at both atoms; a plain outcome is a point mass):

- marginal coverage mean 1{y_t <= p_t} and its error |coverage - q|;
- coverage per group (the last ``group_dim`` context coordinates are group indicators,
  declared by the nature) and the largest group error;
- pinball loss rho_q(y - p) = (y - p)(q - 1{y < p}).

Certificates (a forecaster claims them by name):

- ``quantile_marginal`` (§10 Prop.): |coverage - q| <= max(q, 1 - q)/T, the tight form
  (docs/ERRATA.md); the printed max(q, 1 - q)/(T - 1) is reported beside it.
- ``quantile_round`` (§10 Alg. 6, deterministic): in every round,
  E_t[(1{y <= p} - q) S_t(p_t)] <= L_t/(10 t^2), computed exactly from nature's CDF at the two
  atoms, with S_t recomputed from the run and the forecaster's kernel. The value is the
  worst ratio of the two sides over the rounds (after a floating-point allowance of
  64 eps times the magnitudes summed), the bound is 1. A round whose law is a point mass or
  declares no Lipschitz constant (L = inf: a plain outcome, a replay) has no premise and is
  not checked (``extra``: ``rounds_checked``, ``point_mass_rounds``); when no round is
  checked the certificate is not applicable, never a vacuous pass.
- ``quantile_group`` (§10 Theorem, probabilistic: judged on the average over seeds): for the
  indicator f of each group (and f = 1 when the kernel represents it),
  |sum_t E_t[f (1{y_t <= p_t} - q)]| <= ||f|| sqrt(L + sum_t E_t k(z_t, z_t)), with ||f||
  the smallest norm of a v with <v, Phi> = f on the run's points and L nature's largest
  Lipschitz constant. The value is the worst |sum|/||f||; ``extra`` carries the realized
  counterpart and the tighter sqrt(sum_t E_t[k (1{y <= p} - q)^2] + 2 sum_t L_t/(10 t^2)).
- ``aci_coverage`` (Gibbs & Candès 2021, Prop. 4.1): ACI's |coverage - q| over the rounds after
  its burn-in <= (max(alpha_1, 1 - alpha_1) + gamma)/(gamma n), :func:`arena.certificates.cert_aci`.

References
----------
Perdomo & Recht, "In Defense of Defensive Forecasting", §10; errata: docs/ERRATA.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from arena.certificates import Certificate, cert_aci, checkpoints, judged, not_applicable, quantile_marginal_bound
from arena.games.base import Game, GameScore, bind
from arena.lazy import LazyModule
from arena.protocols import OutcomeLaw, ProtocolError

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = LazyModule("pandas")  # imported when a table is built: playing a game does not load pandas

_EPS = np.finfo(float).eps
#: Rolling coverage uses a window of max(10, T // ROLLING_FRACTION) rounds.
ROLLING_FRACTION = 20
#: Points of the rolling-coverage curve (evenly spaced in t).
ROLLING_POINTS = 50


@dataclass(frozen=True)
class QuantileGame(Game):
    """Forecast the q-quantile of y in (ymin, ymax]: forecast p in [ymin, ymax] (a point or a
    two-point distribution), scored by the pinball loss rho_q(y - p) = (y - p)(q - 1{y < p}).

    Outcomes must satisfy ymin < y <= ymax strictly (docs/ERRATA.md: predicting ymin must
    guarantee y > p). A context may carry group ids: by convention a nature puts the
    one-hot indicators of its groups in the *last* ``group_dim`` coordinates of x_t and
    declares ``group_dim`` (see ``adversaries/quantile.py``); the referee then reports
    coverage per group.

    Examples
    --------
    >>> g = QuantileGame(q=0.9, ymin=0.0, ymax=10.0)
    >>> g.forecast_low, g.forecast_high, g.loss(5.0, 7.0), round(g.loss(5.0, 3.0), 12)
    (0.0, 10.0, 1.8, 0.2)
    >>> QuantileGame(q=1.5)
    Traceback (most recent call last):
    ...
    ValueError: quantile game: q=1.5 is outside (0, 1); give a quantile level strictly between 0 and 1, e.g. game.q=0.9

    References
    ----------
    Perdomo & Recht, §10; errata: docs/ERRATA.md.
    """

    name: str = "quantile"
    forecast_low: float = field(init=False, default=-50.0)
    forecast_high: float = field(init=False, default=50.0)
    q: float = 0.9
    ymin: float = -50.0
    ymax: float = 50.0

    #: The arena records the announced atoms and nature's CDF at them (exact expected coverage).
    records_atoms: ClassVar[bool] = True

    def __post_init__(self):
        for key in ("q", "ymin", "ymax"):
            v = getattr(self, key)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise ValueError(
                    f"quantile game: {key}={v!r} is not a finite number; set e.g. game.{key}="
                    f"{ {'q': 0.9, 'ymin': -50.0, 'ymax': 50.0}[key] }"
                )
        if not 0.0 < self.q < 1.0:
            raise ValueError(
                f"quantile game: q={self.q!r} is outside (0, 1); give a quantile level strictly "
                "between 0 and 1, e.g. game.q=0.9"
            )
        if not self.ymin < self.ymax:
            raise ValueError(
                f"quantile game: the outcome range (ymin, ymax] = ({self.ymin}, {self.ymax}] is empty; "
                "give ymin < ymax, e.g. game.ymin=-50 game.ymax=50"
            )
        for key in ("q", "ymin", "ymax"):
            object.__setattr__(self, key, float(getattr(self, key)))
        object.__setattr__(self, "forecast_low", self.ymin)
        object.__setattr__(self, "forecast_high", self.ymax)

    def check_outcome(self, y, who, t):
        try:
            y = float(y)
        except (TypeError, ValueError):
            raise ProtocolError(
                f"{who} returned outcome {y!r} at t={t}; the quantile game needs a number in ({self.ymin}, {self.ymax}]"
            ) from None
        if not (self.ymin < y <= self.ymax):
            raise ProtocolError(
                f"{who} returned outcome {y!r} at t={t}, outside the quantile game's range "
                f"(ymin, ymax] = ({self.ymin}, {self.ymax}] (ymin excluded); widen the range "
                "(game.ymin, game.ymax) or fix the nature"
            )
        return y

    def loss(self, p, y):
        u = y - p
        return u * (self.q - (1.0 if u < 0 else 0.0))

    def outcome_prob(self, law) -> float:
        return math.nan

    def score(self, referee, rec, forecaster):
        run = QuantileRun(self, rec, forecaster)
        return GameScore(
            quantile_metrics(run), quantile_curves(run, referee.n_checkpoints), bind(CERTIFICATES, run, referee)
        )

    def law_at_atoms(self, answer, forecast, y: float) -> tuple[float, float, float, float]:
        """(F(lo), F(hi), L, expected pinball loss) of this round for the referee.

        ``answer`` is nature's law or its plain outcome (then a point mass at y: F is a step
        and L is recorded as NaN, "no law"); lo and hi are the announced atoms (equal for a
        point forecast). The expected loss averages over the two atoms and the law.
        """
        lo, hi = forecast.points[0], forecast.points[-1]
        w = forecast.probs[0] if len(forecast.points) == 2 else 1.0
        if isinstance(answer, OutcomeLaw):
            F_lo = float(answer.cdf(lo))
            F_hi = F_lo if hi == lo else float(answer.cdf(hi))
            lip = float(answer.lipschitz)  # inf (the protocol's default): no Lipschitz law, no round certificate
            pin = answer.expected_pinball  # NaN (the default) when the law gives no mean or cdf_integral
            loss = pin(lo, self.q) if w == 1.0 else w * pin(lo, self.q) + (1 - w) * pin(hi, self.q)
            return F_lo, F_hi, lip, float(loss)
        return (float(y <= lo), float(y <= hi), math.nan, w * self.loss(lo, y) + (1 - w) * self.loss(hi, y))


def coverage_error(p: np.ndarray, y: np.ndarray, q: float) -> float:
    """|mean 1{y_t <= p_t} - q| (0 for an empty run).

    Examples
    --------
    >>> coverage_error(np.array([1.0, 1.0]), np.array([0.5, 2.0]), 0.9)
    0.4
    """
    return float(abs(np.mean(y <= p) - q)) if len(p) else 0.0


def pinball(p: np.ndarray, y: np.ndarray, q: float) -> np.ndarray:
    """Per-round pinball loss rho_q(y - p) = (y - p)(q - 1{y < p}).

    Examples
    --------
    >>> pinball(np.array([0.0, 0.0]), np.array([1.0, -1.0]), 0.9).round(12).tolist()
    [0.9, 0.1]
    """
    u = y - p
    return u * (q - (u < 0))


class QuantileRun:
    """The arrays of one quantile run and the quantities the certificates share."""

    def __init__(self, game, rec, forecaster):
        self.q, self.ymin, self.ymax = game.q, game.ymin, game.ymax
        self.X, self.p, self.y = rec.X, rec.p, rec.y
        self.T = len(self.y)
        self.forecaster = forecaster
        self.atoms = rec.atoms if rec.atoms is not None else np.column_stack([rec.p, rec.p])
        self.tau = rec.prob_lo if rec.prob_lo is not None else np.ones(self.T)
        self.F = rec.cdf_at_atoms if rec.cdf_at_atoms is not None else np.full((self.T, 2), np.nan)
        self.lip = rec.law_lip if rec.law_lip is not None else np.full(self.T, np.nan)
        self.expected_loss = rec.expected_loss if rec.expected_loss is not None else np.full(self.T, np.nan)
        G = int(getattr(rec, "group_dim", 0))
        self.G = G if 0 < G <= self.X.shape[1] else 0
        self.groups = self.X[:, self.X.shape[1] - self.G :] if self.G else np.zeros((self.T, 0))
        self.kernel = forecaster.kernel_object

    @cached_property
    def covered(self) -> np.ndarray:
        return (self.y <= self.p).astype(float)

    @cached_property
    def expected_cov(self) -> np.ndarray:
        """E_t 1{y_t <= p_t} = tau F(lo) + (1 - tau) F(hi) (NaN where nothing was recorded)."""
        return self.tau * self.F[:, 0] + (1 - self.tau) * self.F[:, 1]

    @property
    def has_expected(self) -> bool:
        return self.T > 0 and bool(np.all(np.isfinite(self.expected_cov)))

    @property
    def lip_or_inf(self) -> np.ndarray:
        """Nature's Lipschitz constant per round; a plain outcome (NaN) is a point mass: inf."""
        return np.where(np.isnan(self.lip), np.inf, self.lip)

    @cached_property
    def feature_sums(self):
        """(Phi at the first atoms, Phi at the second atoms, C_{t-1} = sum_{s<t} w_s Phi(z_s)) (finite kernels)."""
        k = self.kernel
        w = self.covered - self.q
        C = np.cumsum(w[:, None] * k.features(self.X, self.p), axis=0)
        C_prev = np.vstack([np.zeros((1, C.shape[1])), C[:-1]])
        return k.features(self.X, self.atoms[:, 0]), k.features(self.X, self.atoms[:, 1]), C_prev

    @cached_property
    def S_atoms(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """S_t at both atoms and a floating-point allowance per round."""
        if self.kernel.finite:
            F_lo, F_hi, C = self.feature_sums
            s_lo, s_hi = np.einsum("ij,ij->i", F_lo, C), np.einsum("ij,ij->i", F_hi, C)
            mag = np.einsum("ij,ij->i", np.abs(F_lo), np.abs(C)) + np.einsum("ij,ij->i", np.abs(F_hi), np.abs(C))
            return s_lo, s_hi, 64 * _EPS * (mag + np.abs(s_lo) + np.abs(s_hi))
        return self._S_direct()

    def _S_direct(self, block: int = 1024):
        k, T, w = self.kernel, self.T, self.covered - self.q
        out = [np.zeros(T), np.zeros(T)]
        mag = np.zeros(T)
        for a in range(0, T, block):
            b = min(T, a + block)
            mask = np.arange(b)[None, :] < np.arange(a, b)[:, None]
            for j in (0, 1):
                K = np.where(mask, k.gram(self.X[a:b], self.atoms[a:b, j], self.X[:b], self.p[:b]), 0.0)
                out[j][a:b] = K @ w[:b]
                mag[a:b] += np.abs(K) @ np.abs(w[:b])
        return out[0], out[1], 64 * _EPS * (mag + np.abs(out[0]) + np.abs(out[1]))

    @cached_property
    def expected_k(self) -> np.ndarray:
        """E_t k(z_t, z_t) over the two atoms."""
        k = self.kernel
        return self.tau * k.diag(self.X, self.atoms[:, 0]) + (1 - self.tau) * k.diag(self.X, self.atoms[:, 1])

    def functions(self) -> dict[str, np.ndarray]:
        """The group functions f(x): every group indicator, and the constant 1."""
        out = {"all": np.ones(self.T)}
        for j in range(self.G):
            out[f"group{j}"] = self.groups[:, j]
        return out


# ------------------------------------------------------------------------------- metrics
def _group_metrics(run: QuantileRun) -> dict[str, float]:
    out: dict[str, float] = {}
    errs, exp_errs = [], []
    for j in range(run.G):
        g = run.groups[:, j] > 0.5
        n = int(g.sum())
        out[f"group_count.{j}"] = float(n)
        if n == 0:
            out[f"group_coverage.{j}"] = math.nan
            continue
        cov = float(run.covered[g].mean())
        out[f"group_coverage.{j}"] = cov
        errs.append(abs(cov - run.q))
        if run.has_expected:
            ecov = float(run.expected_cov[g].mean())
            out[f"expected_group_coverage.{j}"] = ecov
            exp_errs.append(abs(ecov - run.q))
    if errs:
        out["group_coverage_error_max"] = max(errs)
        out["group_coverage_error_mean"] = float(np.mean(errs))
    if exp_errs:
        out["expected_group_coverage_error_max"] = max(exp_errs)
    return out


def quantile_metrics(run: QuantileRun) -> dict[str, float]:
    """Every metric of a quantile run (realized; expected where the arena recorded the law)."""
    if run.T == 0:
        return {"coverage": math.nan, "coverage_error": math.nan, "pinball": math.nan}
    cov = float(run.covered.mean())
    out = {
        "q": run.q,
        "coverage": cov,
        "coverage_error": abs(cov - run.q),
        "pinball": float(pinball(run.p, run.y, run.q).mean()),
        "mean_forecast": float(run.p.mean()),
        "randomized_rounds": float(np.mean(run.atoms[:, 0] != run.atoms[:, 1])),
        "law_exposed": float(np.mean(np.isfinite(run.lip) | np.isposinf(run.lip))),
        "law_lipschitz_max": float(np.max(run.lip_or_inf)),
    }
    if run.has_expected:
        ecov = float(run.expected_cov.mean())
        out["expected_coverage"] = ecov
        out["expected_coverage_error"] = abs(ecov - run.q)
    if np.all(np.isfinite(run.expected_loss)):
        out["expected_pinball"] = float(run.expected_loss.mean())
    out.update(_group_metrics(run))
    return out


# -------------------------------------------------------------------------- certificates
def cert_marginal(run: QuantileRun) -> Certificate:
    """§10 Prop.: |coverage - q| <= max(q, 1 - q)/T (tight, docs/ERRATA.md); the printed /(T - 1) in ``extra``."""
    m = max(run.q, 1 - run.q)
    err = coverage_error(run.p, run.y, run.q)
    printed = m / (run.T - 1) if run.T > 1 else math.inf
    return judged(
        "quantile_marginal",
        err,
        quantile_marginal_bound(run.q, run.T),
        atol=1e-15,
        extra={"printed_bound": printed, "coverage": float(run.covered.mean())},
    )


def round_terms(run: QuantileRun) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per round: E_t[(1{y <= p} - q) S_t(p_t)], its bound L_t/(10 t^2) and the float allowance."""
    s_lo, s_hi, allow = run.S_atoms
    e = run.tau * s_lo * (run.F[:, 0] - run.q) + (1 - run.tau) * s_hi * (run.F[:, 1] - run.q)
    t = np.arange(1, run.T + 1, dtype=float)
    return e, run.lip_or_inf / (10 * t * t), allow


def cert_round(run: QuantileRun) -> Certificate:
    """§10 Alg. 6 per round: E_t[(1{y<=p} - q) S_t(p_t)] <= L_t/(10 t^2), exactly from the CDF at the atoms."""
    name = "quantile_round"
    if run.kernel is None:
        return not_applicable(name, "the forecaster exposes no kernel_object")
    if not np.all(np.isfinite(run.F)):
        return not_applicable(name, "the arena recorded no CDF at the forecast atoms")
    e, bound, allow = round_terms(run)
    finite = np.isfinite(bound)
    if not finite.any():
        return not_applicable(
            name,
            "no round has an L-Lipschitz law (a point mass, a plain outcome or a law "
            "without a finite lipschitz): nothing to check",
            bound=1.0,
            extra={"rounds_checked": 0, "point_mass_rounds": int(run.T)},
        )
    excess = np.maximum(e - allow, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(finite & (excess > 0), excess / bound, 0.0)
    worst = int(np.argmax(ratio))
    value = float(ratio[worst])
    return judged(
        name,
        value,
        1.0,
        rtol=0.0,
        atol=0.0,
        note="value: max over the rounds with a Lipschitz law of E_t / (L_t/(10 t^2))",
        extra={
            "worst_round": worst + 1,
            "sum_expected": float(e[finite].sum()),
            "sum_bound": float(bound[finite].sum()),
            "max_allowance": float(allow.max()),
            "rounds_checked": int(finite.sum()),
            "point_mass_rounds": int((~finite).sum()),
        },
    )


def _min_norms(A: np.ndarray, fs: np.ndarray) -> np.ndarray:
    """For each column f of ``fs``: ||v|| of the least-norm v with A v = f, or inf when no v fits f.

    One eigendecomposition of the small D x D matrix A^T A serves every f (v = V S^-2 V^T A^T f on
    the non-null eigenvectors), which is much quicker than a least-squares solve per f."""
    evals, V = np.linalg.eigh(A.T @ A)
    keep = evals > 1e-10 * max(float(evals.max(initial=0.0)), 1.0)
    V, evals = V[:, keep], evals[keep]
    Vs = (V.T @ (A.T @ fs)) / evals[:, None]
    v = V @ Vs
    resid = np.max(np.abs(A @ v - fs), axis=0, initial=0.0)
    scale = np.maximum(1.0, np.max(np.abs(fs), axis=0, initial=0.0))
    return np.where(resid <= 1e-8 * scale, np.linalg.norm(v, axis=0), np.inf)


def cert_group(run: QuantileRun) -> Certificate:
    """§10 Theorem, per group function f: |sum_t E_t[f (1{y<=p} - q)]| <= ||f|| sqrt(L + sum_t E_t k)."""
    name = "quantile_group"
    if run.kernel is None or not run.kernel.finite:
        return not_applicable(name, "needs a kernel with a finite feature map (to compute ||f||)", True)
    if not run.has_expected:
        return not_applicable(name, "the arena recorded no CDF at the forecast atoms", True)
    F_lo, F_hi, _ = run.feature_sums
    A = np.vstack([F_lo, F_hi])
    lip = run.lip_or_inf
    L = float(np.max(lip))
    bound = math.sqrt(L + float(run.expected_k.sum()))
    t = np.arange(1, run.T + 1, dtype=float)
    eps_sum = float(np.sum(lip / (10 * t * t)))
    w2 = run.tau * (run.F[:, 0] * (1 - run.q) ** 2 + (1 - run.F[:, 0]) * run.q**2) + (1 - run.tau) * (
        run.F[:, 1] * (1 - run.q) ** 2 + (1 - run.F[:, 1]) * run.q**2
    )
    k_lo, k_hi = run.kernel.diag(run.X, run.atoms[:, 0]), run.kernel.diag(run.X, run.atoms[:, 1])
    tight = math.sqrt(float(np.sum(run.tau * k_lo * w2 + (1 - run.tau) * k_hi * w2)) + 2 * eps_sum)
    values: dict[str, float] = {}
    realized: list[float] = []
    extra: dict[str, object] = {}
    functions = run.functions()
    norms = _min_norms(A, np.column_stack([np.concatenate([f, f]) for f in functions.values()]))
    for (fname, f), norm in zip(functions.items(), map(float, norms), strict=True):
        if not math.isfinite(norm) or norm == 0:
            continue
        signed = float(np.sum(f * (run.expected_cov - run.q))) / norm
        values[fname] = abs(signed)
        realized.append(abs(float(np.sum(f * (run.covered - run.q)))) / norm)
        extra[f"signed.{fname}"] = signed
    if not values:
        return not_applicable(name, "the kernel represents no group function", True)
    worst = max(values, key=lambda name: values[name])
    value = values[worst]
    extra.update(
        {"realized": max(realized), "tight_bound": tight, "L": L, "functions": len(values), "worst_function": worst}
    )
    if not math.isfinite(bound):
        return not_applicable(
            name,
            "nature exposed no Lipschitz law (L = inf): the bound is vacuous",
            True,
            value=value,
            bound=bound,
            extra=extra,
        )
    return judged(name, value, bound, atol=0.0, probabilistic=True, extra=extra)


def group_certificate_over_seeds(certs: list[Certificate]) -> Certificate:
    """Judge ``quantile_group`` on the seed average (docs/ERRATA.md, certificates): for each group function f,
    |mean over seeds of sum_t E_t[f (1{y<=p} - q)]/||f||| <= mean over seeds of the bound.

    Examples
    --------
    >>> c = [Certificate("quantile_group", 3.0, 2.0, False, True, extra={"signed.all": s}) for s in (3.0, -3.0)]
    >>> group_certificate_over_seeds(c).holds
    True
    """
    certs = [c for c in certs if c.holds is not None]
    if not certs:
        return not_applicable("quantile_group", "no seed has an applicable certificate", True)
    names = sorted({k for c in certs for k in c.extra if k.startswith("signed.")})
    means = {k[len("signed.") :]: float(np.mean([c.extra.get(k, 0.0) for c in certs])) for k in names}
    worst = max(means, key=lambda k: abs(means[k]))
    value, bound = abs(means[worst]), float(np.mean([c.bound for c in certs]))
    return Certificate(
        "quantile_group",
        value,
        bound,
        bool(value <= bound),
        probabilistic=True,
        note=f"seed average over {len(certs)} seeds",
        extra={"worst_function": worst, "seeds": len(certs)},
    )


def group_certificate_table(summary: pd.DataFrame) -> pd.DataFrame:
    """:func:`group_certificate_over_seeds` on a results summary: one row per forecaster x nature
    (and T) with the worst |seed mean of signed sum/||f|||, the mean bound, and whether it holds.

    Examples
    --------
    >>> s = pd.DataFrame({"forecaster": "df", "nature": "n", "T": 10, "cert.quantile_group.bound": [2.0, 2.0],
    ...                   "cert.quantile_group.holds": [False, True], "cert.quantile_group.signed.all": [3.0, -2.0]})
    >>> group_certificate_table(s)[["value", "bound", "holds", "seeds"]].values.tolist()
    [[0.5, 2.0, True, 2]]
    """
    prefix = "cert.quantile_group."
    cols = [c for c in summary.columns if c.startswith(prefix + "signed.")]
    if not cols or prefix + "bound" not in summary:
        return pd.DataFrame(columns=["forecaster", "nature", "T", "value", "bound", "holds", "seeds"])
    rows = []
    keys = [k for k in ("forecaster", "nature", "T") if k in summary]
    ok = summary.loc[summary[prefix + "holds"].notna()] if prefix + "holds" in summary else summary
    for key, part in ok.groupby(keys):
        means = part[cols].mean()
        value, bound = float(means.abs().max()), float(part[prefix + "bound"].mean())
        rows.append(
            {
                **dict(zip(keys, key if isinstance(key, tuple) else (key,), strict=True)),
                "value": value,
                "bound": bound,
                "holds": bool(value <= bound),
                "seeds": len(part),
                "worst_function": str(means.abs().idxmax())[len(prefix + "signed.") :],
            }
        )
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------- curves
def quantile_curves(run: QuantileRun, n_checkpoints: int = 20) -> pd.DataFrame:
    """Coverage, coverage error (and its certified bound), pinball loss at log-spaced checkpoints,
    and rolling coverage at evenly spaced rounds (long format: t, metric, value)."""
    rows: list[tuple[int, str, float]] = []
    if run.T == 0:
        return pd.DataFrame(rows, columns=["t", "metric", "value"])
    cum_cov = np.cumsum(run.covered)
    cum_pin = np.cumsum(pinball(run.p, run.y, run.q))
    cum_exp = np.cumsum(run.expected_cov) if run.has_expected else None
    claims = run.forecaster.claims
    for t in checkpoints(run.T, n_checkpoints):
        i = t - 1
        vals = {"coverage": cum_cov[i] / t, "coverage_error": abs(cum_cov[i] / t - run.q), "pinball": cum_pin[i] / t}
        if cum_exp is not None:
            vals["expected_coverage_error"] = abs(cum_exp[i] / t - run.q)
        if "quantile_marginal" in claims:
            vals["coverage_error_bound"] = quantile_marginal_bound(run.q, t)
        if run.G:
            errs = [abs(run.covered[:t][g].mean() - run.q) for g in (run.groups[:t] > 0.5).T if g.any()]
            if errs:
                vals["group_coverage_error_max"] = max(errs)
        rows += [(int(t), k, float(v)) for k, v in vals.items()]
    W = max(10, run.T // ROLLING_FRACTION)
    if run.T >= W:
        ends = np.unique(np.linspace(W, run.T, ROLLING_POINTS).astype(int))
        for t in ends:
            rows.append(
                (int(t), "rolling_coverage", float((cum_cov[t - 1] - (cum_cov[t - W - 1] if t > W else 0)) / W))
            )
    return pd.DataFrame(rows, columns=["t", "metric", "value"])


#: Metric name -> one-line description of the metrics this game adds (names ending in ``<j>``:
#: one column per expert or group).
METRICS = {
    "q": "the quantile level",
    "coverage": "marginal coverage mean_t 1{y_t <= p_t}",
    "coverage_error": "|coverage - q| (§10)",
    "expected_coverage": "coverage in expectation over the forecast's atoms and nature's law",
    "expected_coverage_error": "|expected_coverage - q|",
    "pinball": "mean pinball loss (y - p)(q - 1{y < p})",
    "expected_pinball": "pinball in expectation over the forecast's atoms and nature's law",
    "mean_forecast": "mean forecast",
    "randomized_rounds": "fraction of rounds with a two-point (randomized) forecast",
    "law_exposed": "fraction of rounds in which nature gave its outcome law",
    "law_lipschitz_max": "largest Lipschitz constant of nature's CDF (inf: a point mass)",
    "group_count.<j>": "rounds in group j (natures with group ids in the context)",
    "group_coverage.<j>": "coverage in group j",
    "expected_group_coverage.<j>": "expected coverage in group j",
    "group_coverage_error_max": "largest |coverage - q| over the groups",
    "group_coverage_error_mean": "mean |coverage - q| over the groups",
    "expected_group_coverage_error_max": "largest |expected coverage - q| over the groups",
}
#: Certificate name -> one-line description.
CERTIFICATE_DESCRIPTIONS = {
    "quantile_marginal": "§10: |coverage - q| <= max(q, 1 - q) / T",
    "quantile_round": "§10 Alg. 6: every round, E_t[(1{y <= p} - q) S_t(p_t)] <= L / (10 t^2)",
    "quantile_group": "§10 Thm: per group f, |sum_t E_t[f (1{y <= p} - q)]| <= ||f|| sqrt(L + sum_t E_t k)",
    "aci_coverage": "Gibbs & Candes: after the burn-in, |coverage - q| <= (max(a_1, 1 - a_1) + gamma)/(gamma n)",
}
#: Certificate name -> function(run, referee) -> Certificate.
CERTIFICATES = {
    "quantile_marginal": lambda run, ref: cert_marginal(run),
    "quantile_round": lambda run, ref: cert_round(run),
    "quantile_group": lambda run, ref: cert_group(run),
    "aci_coverage": lambda run, ref: cert_aci(
        run.covered,
        run.q,
        getattr(run.forecaster, "gamma", math.nan),
        getattr(run.forecaster, "burn_in", 0),
        run.forecaster.name,
    ),
}
QuantileGame.certificates = CERTIFICATES
QuantileGame.metric_descriptions = METRICS
QuantileGame.certificate_descriptions = CERTIFICATE_DESCRIPTIONS

__all__ = ["QuantileRun", "QuantileGame", "cert_group", "cert_marginal", "cert_round", "coverage_error"]
__all__ += ["group_certificate_over_seeds", "pinball", "quantile_curves", "quantile_metrics", "round_terms"]
