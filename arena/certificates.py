"""Certificates: a guarantee of the paper evaluated on one run, and each guarantee's bound.

A :class:`Certificate` holds the observed quantity, the bound the theory gives for this
very run, and its verdict: ``holds``, ``fails`` or ``n/a`` (not applicable: the guarantee's
premise is absent, with the reason; never a vacuous pass). :func:`judged` applies the
tolerance rule (:func:`within`) and turns a non-number into ``n/a``.

Bounds are fixed before the game (docs/ERRATA.md, certificates): a finite root-finding precision leaves a slack
σ = 2 Σ_t max(0, w_t S_t(p_t)) in the kernel identity, and every bound adds the *allowance*
A(T, tol) that the largest tolerance the referee accepts (:data:`MAX_TOL`) can explain
(:func:`search_allowance`), never the σ measured in the run, which is reported beside it.
Each bound formula is written once here, as a function of the run's sums, and used both by
the certificate (at the end of the run) and by its curve (at every checkpoint), so a
correction reaches both. The games (:mod:`arena.games`) compute the sums; this module
imports nothing else from the project.

References
----------
Perdomo & Recht, §2, §5, §6, §8-§10; errata: docs/ERRATA.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

#: The largest search tolerance the referee accepts by default (``referee.max_tol``): the width of
#: the last bisection interval of the shipped defensive forecasters.
MAX_TOL = 2.0**-34
#: The three verdicts of a certificate.
VERDICTS = ("holds", "fails", "n/a")

#: The tolerance rule's default allowances: value <= bound (1 + RTOL) + ATOL counts as holding
#: (the floating-point rounding of sums over T rounds).
RTOL = 1e-12
ATOL = 1e-12
#: Floating-point allowance per kernel evaluation (relative to sup |k|) in the search allowance.
_FLOAT_EPS = 1e-12


@dataclass(frozen=True)
class Certificate:
    """One guarantee checked on one run.

    Parameters
    ----------
    name : the certificate's name (a forecaster claims it by this name).
    value : the observed quantity.
    bound : the bound the theory gives for this run.
    holds : True or False; None when the certificate does not apply (``note`` says why).
    probabilistic : True for a guarantee in expectation or with high probability (judged on
        the average over seeds, not on one run).
    note : why it does not apply, or how to read the value.
    extra : further numbers (looser or printed bounds, slacks), written as
        ``cert.<name>.<key>`` columns.

    Examples
    --------
    >>> c = Certificate("bit", 0.5, 1.0, True)
    >>> c.holds, c.verdict, c.probabilistic, c.extra
    (True, 'holds', False, {})
    >>> n = Certificate("quantile_round", 0.0, 1.0, None, note="every round was a point mass")
    >>> n.verdict, n.reason
    ('n/a', 'every round was a point mass')
    """

    name: str
    value: float
    bound: float
    holds: bool | None
    probabilistic: bool = False
    note: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def verdict(self) -> str:
        """``"holds"``, ``"fails"`` or ``"n/a"`` (not applicable)."""
        return "n/a" if self.holds is None else ("holds" if self.holds else "fails")

    @property
    def reason(self) -> str:
        """Why the certificate does not apply ("" when it does)."""
        return (self.note or "not applicable") if self.holds is None else ""


def within(value: float, bound: float, rtol: float = RTOL, atol: float = ATOL) -> bool:
    """The tolerance rule: whether ``value <= bound (1 + rtol) + atol``.

    Examples
    --------
    >>> within(1.0 + 1e-13, 1.0), within(1.001, 1.0), within(2.0, 1.0, atol=1.0)
    (True, False, True)
    """
    return bool(value <= bound * (1 + rtol) + atol)


def judged(name: str, value: float, bound: float, rtol: float = RTOL, atol: float = ATOL, **kw) -> Certificate:
    """A certificate whose verdict is the tolerance rule :func:`within`; not applicable when the
    value or the bound is not a number (an overflow of the inputs) or the bound is infinite
    (nothing is certified), never a NaN verdict.

    Examples
    --------
    >>> judged("bit", 0.5, 1.0).holds, judged("bit", 2.0, 1.0).verdict
    (True, 'fails')
    >>> c = judged("kernel", float("nan"), 1.0)
    >>> c.verdict, c.reason.startswith("the value is not a number")
    ('n/a', True)
    """
    value, bound = float(value), float(bound)
    why = _not_a_verdict(value, bound)
    if why:
        kw["note"] = why + (f"; {kw['note']}" if kw.get("note") else "")
        return Certificate(name, value, bound, None, **kw)
    return Certificate(name, value, bound, within(value, bound, rtol, atol), **kw)


def _not_a_verdict(value: float, bound: float) -> str:
    """Why (value, bound) gives no verdict: a NaN (an overflow) or an infinite bound; "" otherwise."""
    if math.isnan(value):
        return "the value is not a number (the run's inputs overflow floating point)"
    if math.isnan(bound):
        return "the bound is not a number (the run's inputs overflow floating point)"
    if bound == math.inf:
        return "the bound is infinite (nothing to certify)"
    return ""


def not_applicable(
    name: str, note: str, probabilistic: bool = False, value: float = math.nan, bound: float = math.nan, **kw
) -> Certificate:
    """A certificate that does not apply to this run (``holds`` None), with the reason.

    Examples
    --------
    >>> not_applicable("quantile_round", "no kernel").holds
    """
    return Certificate(name, value, bound, None, probabilistic=probabilistic, note=note, **kw)


def no_rounds(name: str) -> Certificate:
    """The certificate of an empty run: nothing to check."""
    return Certificate(name, 0.0, 0.0, None, note="no rounds")


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


# ---------------------------------------------------------------------------- bound formulas
def search_allowance(T: int, tol: float, lip: float, sup: float) -> float:
    """A(T, tol): the most slack σ = 2 Σ_t max(0, w_t S_t(p_t)) a bisection of width ``tol`` can leave
    in T rounds, fixed before the game.

    The search returns an exact end point (w_t S_t(p_t) <= 0) or the midpoint of an interval of
    width <= tol around a root, so |S_t(p_t)| <= Lip(S_t) tol/2 with Lip(S_t) <= lip Σ_{s<t} |w_s|,
    ``lip`` a bound on |dk/dp| over p in [0, 1]; with |w| <= 1 and a floating-point allowance
    of 1e-12 max(sup |k|, 1) per kernel evaluation,
    σ <= (lip tol + 2e-12 max(sup, 1)) T (T - 1)/2.

    Examples
    --------
    >>> search_allowance(1, 2.0**-34, 1.0, 4 / 3)
    0.0
    >>> round(search_allowance(10**4, 2.0**-34, 1.0, 4 / 3), 6)
    0.003043
    """
    return (lip * tol + 2.0 * _FLOAT_EPS * max(sup, 1.0)) * T * (T - 1) / 2.0


def decision_allowance(T: int, B: float, tol: float) -> float:
    """A(T, tol) of the §5 decision search, fixed before the game: 2 Σ_t of what round t may leave,
    1/(10 t^2) for a two-point forecast (the width rule of the randomized search), B (t - 1) tol for a
    point forecast of the deterministic search (|C_t| <= B (t - 1)), and the floating-point rounding
    of the sums (64 eps times their largest magnitudes).

    Examples
    --------
    >>> 0 < decision_allowance(100, 1.0, 2.0**-34) < 0.4
    True
    """
    t = np.arange(1, int(T) + 1, dtype=float)
    eps = np.finfo(float).eps
    per = (
        1.0 / (10.0 * t * t)
        + 8 * eps * B * B * (t - 1)
        + B * (t - 1) * tol
        + 64 * eps * (1 + 4 * B * B * (t - 1)) * (1 + (B + B * B) * (t - 1))
    )
    return float(2.0 * per.sum())


def bit_bound() -> float:
    """§2: |sum_t (p_t - y_t)| <= 1."""
    return 1.0


def smce_bound(diag: float, sigma: float) -> float:
    """§8: smCE <= sqrt(2) sqrt(sum_t w_t^2 k(z_t, z_t) + A), for a kernel with k_FS as a summand
    (``sigma``: the allowance A).

    Examples
    --------
    >>> round(smce_bound(1.5, 0.5), 12)
    2.0
    """
    return math.sqrt(2.0) * math.sqrt(diag + sigma)


def linear_regret_bound(M: float, diag: float, sigma: float, intercept: bool = False) -> float:
    """§6/§8: regret to ||w|| <= M linear predictors <= (sqrt 5 + sqrt(1 + 4M^2)) sqrt(sum w^2 k + A)
    (``sigma``: the allowance A).

    With an intercept, h(x) = <w, x> + a with ||(w, a)|| <= M: the comparator's v in
    l(h, 1) - l(h, 0) = 1 - 2h = <v, Phi> for Phi = [1, p, x] is (1 - 2a, 0, -2w), of norm
    sqrt((1 - 2a)^2 + 4||w||^2) <= 1 + 2M, which replaces sqrt(1 + 4M^2).

    Examples
    --------
    >>> round(linear_regret_bound(1.0, 1.0, 0.0), 6) == round(2 * math.sqrt(5), 6)
    True
    >>> linear_regret_bound(1.0, 1.0, 0.0, intercept=True) == math.sqrt(5) + 3
    True
    """
    v = 1.0 + 2.0 * M if intercept else math.sqrt(1.0 + 4.0 * M * M)
    return (math.sqrt(5.0) + v) * math.sqrt(diag + sigma)


def ogd_regret_bound(M: float, lr: float, grad2: float) -> float:
    """§6, the online gradient method w_t = w_{t-1} - α (p_{t-1} - y_{t-1}) x_{t-1} (no projection, w_1 = 0):
    regret to ||u|| <= M linear predictors <= M^2/α + α sum_t (p_t - y_t)^2 ||x_t||^2 (``grad2`` the sum).

    Zinkevich's argument on the half squared loss f_t(w) = (<w, x_t> - y_t)^2/2 (convex, gradient
    (p_t - y_t) x_t): sum_t f_t(w_t) - f_t(u) <= ||u||^2/(2α) + (α/2) sum_t ||grad_t||^2; times 2.

    Examples
    --------
    >>> ogd_regret_bound(1.0, 0.5, 4.0)
    4.0
    """
    return M * M / lr + lr * grad2


def rounded_calibration_bound(T: int, N: int, delta: float, printed: bool = False) -> float:
    """§8 Prop. rounded calibration, corrected (docs/ERRATA.md): per grid point, with probability 1 - delta,
    sqrt(T)(sqrt((8N+2)/3) + sqrt(2 log(2(N+1)/delta))) + T/N; ``printed``: the paper's T/(2N).

    Examples
    --------
    >>> rounded_calibration_bound(100, 1, 0.5) > rounded_calibration_bound(100, 1, 0.5, printed=True)
    True
    """
    core = math.sqrt(T) * (math.sqrt((8 * N + 2) / 3) + math.sqrt(2 * math.log(2 * (N + 1) / delta)))
    return core + (T / (2 * N) if printed else T / N)


def quantile_marginal_bound(q: float, T: int) -> float:
    """§10 Prop.: |coverage - q| <= max(q, 1 - q)/T (tight, docs/ERRATA.md).

    Examples
    --------
    >>> quantile_marginal_bound(0.9, 10)
    0.09
    """
    return max(q, 1 - q) / T


def aci_coverage_bound(q: float, gamma: float, n: int) -> float:
    """Gibbs & Candès (2021, Prop. 4.1): adaptive conformal inference with step ``gamma``, its recursion
    alpha_{t+1} = alpha_t + gamma (alpha - err_t) run for n rounds from alpha_1 = alpha = 1 - q, keeps
    |coverage - q| over those rounds <= (max(alpha_1, 1 - alpha_1) + gamma) / (gamma n), plus
    :func:`aci_allowance`.

    Deterministic: alpha_t <= 0 predicts the whole range (err_t = 0, alpha rises) and alpha_t >= 1 the
    empty set (err_t = 1, alpha falls), so alpha_t stays in [-gamma, 1 + gamma], and the recursion
    telescopes to alpha_{n+1} - alpha_1 = gamma sum_t (alpha - err_t).

    Examples
    --------
    >>> round(aci_coverage_bound(0.9, 0.005, 1000), 12)
    0.181
    """
    a1 = 1.0 - q
    return (max(a1, 1.0 - a1) + gamma) / (gamma * n) + aci_allowance(gamma)


def cert_aci(covered: np.ndarray, q: float, gamma: float, burn_in: int, who: str = "aci") -> Certificate:
    """ACI's guarantee (:func:`aci_coverage_bound`) over the n = T - burn_in rounds where its update runs, with
    the forecaster's (``who``) step ``gamma`` and ``burn_in``, and alpha_1 = 1 - q. The burn-in rounds (alpha
    frozen) are not counted; ``extra`` has the whole run's coverage error and what the bound gives for it when
    each burn-in round counts at its worst, max(q, 1 - q).

    Examples
    --------
    >>> c = cert_aci(np.array([0, 0, 1, 0, 1, 0]), 0.5, gamma=1.0, burn_in=2)
    >>> c.verdict, c.value, round(c.bound, 6), c.extra["rounds_counted"]
    ('holds', 0.0, 0.375, 4)
    >>> cert_aci(np.array([0, 0, 1, 1, 1, 1]), 0.5, 1.0, 2).verdict  # alpha_t = 1 would have emptied the set
    'fails'
    """
    gamma, burn = float(gamma), int(burn_in)
    if not gamma > 0:
        return not_applicable("aci_coverage", f"forecaster {who!r} has no step size gamma > 0")
    T = len(covered)
    if T <= burn:
        return not_applicable("aci_coverage", f"no round after the burn-in ({burn} rounds, T = {T})")
    n, m = T - burn, max(q, 1.0 - q)
    extra = {"gamma": gamma, "burn_in": burn, "rounds_counted": n, "allowance": aci_allowance(gamma)}
    extra.update(whole_run_value=abs(float(np.mean(covered)) - q), whole_run_bound=((m + gamma) / gamma + burn * m) / T)
    err = abs(float(np.mean(covered[burn:])) - q)
    return judged("aci_coverage", err, aci_coverage_bound(q, gamma, n), atol=0.0, extra=extra)


def aci_allowance(gamma: float) -> float:
    """The rounding of ACI's float recursion in |coverage - q|, fixed before the game: each update
    rounds alpha (|alpha| <= 1 + gamma) and gamma (alpha - err) by at most 2 eps (1 + gamma), and 1 - q is
    rounded once (eps/2 per round in the count); over n rounds, divided by gamma n.

    Examples
    --------
    >>> 0 < aci_allowance(0.005) < 1e-13
    True
    """
    eps = float(np.finfo(float).eps)
    return eps * (2.0 * (1.0 + gamma) / gamma + 1.0)


def experts_regret_bound(N: int, sigma: float, rate: float) -> float:
    """§9: regret to every expert <= (log N + sigma) / rate.

    Examples
    --------
    >>> experts_regret_bound(1, 2.0, 4.0)
    0.5
    """
    return (math.log(N) + sigma) / rate


def decision_regret_bound(B: float, T: int, sigma: float = 0.0) -> float:
    """§5: regret of the actions <= 2 sqrt(2 B^2 T + A), A the allowance of the search (``sigma``).

    Examples
    --------
    >>> decision_regret_bound(1.0, 2)
    4.0
    """
    return 2.0 * math.sqrt(2.0 * B * B * T + sigma)
