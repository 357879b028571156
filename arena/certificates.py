"""Certificates: a guarantee of the paper evaluated on one run, and each guarantee's bound.

A :class:`Certificate` holds the observed quantity, the bound the theory gives for this
very run, and whether the first is within the second (:func:`within`, the tolerance rule).
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

#: The tolerance rule's default allowances: value <= bound (1 + RTOL) + ATOL counts as holding
#: (the floating-point rounding of sums over T rounds).
RTOL = 1e-12
ATOL = 1e-12


@dataclass(frozen=True)
class Certificate:
    """One guarantee checked on one run.

    Parameters
    ----------
    name : the certificate's name (a forecaster claims it by this name).
    value : the observed quantity.
    bound : the bound the theory gives for this run.
    holds : True or False; None when the certificate does not apply (see ``note``).
    probabilistic : True for a guarantee in expectation or with high probability (judged on
        the average over seeds, not on one run).
    note : why it does not apply, or how to read the value.
    extra : further numbers (looser or printed bounds, slacks), written as
        ``cert.<name>.<key>`` columns.

    Examples
    --------
    >>> c = Certificate("bit", 0.5, 1.0, True)
    >>> c.holds, c.probabilistic, c.extra
    (True, False, {})
    """

    name: str
    value: float
    bound: float
    holds: bool | None
    probabilistic: bool = False
    note: str = ""
    extra: dict = field(default_factory=dict)


def within(value: float, bound: float, rtol: float = RTOL, atol: float = ATOL) -> bool:
    """The tolerance rule: whether ``value <= bound (1 + rtol) + atol``.

    Examples
    --------
    >>> within(1.0 + 1e-13, 1.0), within(1.001, 1.0), within(2.0, 1.0, atol=1.0)
    (True, False, True)
    """
    return bool(value <= bound * (1 + rtol) + atol)


def judged(name: str, value: float, bound: float, rtol: float = RTOL, atol: float = ATOL, **kw) -> Certificate:
    """A certificate whose verdict is the tolerance rule :func:`within`.

    Examples
    --------
    >>> judged("bit", 0.5, 1.0).holds
    True
    """
    return Certificate(name, float(value), float(bound), within(value, bound, rtol, atol), **kw)


def not_applicable(name: str, note: str, probabilistic: bool = False, value: float = math.nan,
                   bound: float = math.nan, **kw) -> Certificate:
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
def bit_bound() -> float:
    """§2: |sum_t (p_t - y_t)| <= 1."""
    return 1.0


def smce_bound(diag: float, sigma: float) -> float:
    """§8: smCE <= sqrt(2) sqrt(sum_t w_t^2 k(z_t, z_t) + sigma), for a kernel with k_FS as a summand.

    Examples
    --------
    >>> round(smce_bound(1.5, 0.5), 12)
    2.0
    """
    return math.sqrt(2.0) * math.sqrt(diag + sigma)


def linear_regret_bound(M: float, diag: float, sigma: float) -> float:
    """§6/§8: regret to ||w|| <= M linear predictors <= (sqrt 5 + sqrt(1 + 4M^2)) sqrt(sum w^2 k + sigma).

    Examples
    --------
    >>> round(linear_regret_bound(1.0, 1.0, 0.0), 6) == round(2 * math.sqrt(5), 6)
    True
    """
    return (math.sqrt(5.0) + math.sqrt(1.0 + 4.0 * M * M)) * math.sqrt(diag + sigma)


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


def experts_regret_bound(N: int, sigma: float, rate: float) -> float:
    """§9: regret to every expert <= (log N + sigma) / rate.

    Examples
    --------
    >>> experts_regret_bound(1, 2.0, 4.0)
    0.5
    """
    return (math.log(N) + sigma) / rate


def decision_regret_bound(B: float, T: int, sigma: float = 0.0) -> float:
    """§5: regret of the actions <= 2 sqrt(2 B^2 T + sigma), sigma the search's slack.

    Examples
    --------
    >>> decision_regret_bound(1.0, 2)
    4.0
    """
    return 2.0 * math.sqrt(2.0 * B * B * T + sigma)
