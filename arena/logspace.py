"""Log-space sums and weights: log sum exp and log-softmax, stable at -inf (shared by the experts
forecasters and the experts game's referee).

An entry -inf is an expert with weight 0; a row of -inf gives -inf (log sum exp) or the
uniform weights (log-softmax), as the exponential-weights forecasters start.

References
----------
Perdomo & Recht, §9; Cesa-Bianchi & Lugosi (2006), §2.1.
"""

from __future__ import annotations

import math

import numpy as np


def logsumexp(z: np.ndarray) -> float:
    """log sum exp(z), stable (plain array methods: this runs inside every search step).

    Examples
    --------
    >>> logsumexp(np.array([0.0, 0.0])) == math.log(2), logsumexp(np.array([-np.inf]))
    (True, -inf)
    """
    m = float(z.max())
    if not math.isfinite(m):
        return m
    return m + math.log(float(np.exp(z - m).sum()))


def logsumexp_rows(Z: np.ndarray) -> np.ndarray:
    """Row-wise log sum exp (rows of -inf give -inf).

    Examples
    --------
    >>> logsumexp_rows(np.array([[0.0, 0.0], [-np.inf, -np.inf]])).tolist() == [math.log(2), -np.inf]
    True
    """
    m = np.max(Z, axis=1)
    safe = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # rows of -inf: log 0, replaced below
        out = safe + np.log(np.sum(np.exp(Z - safe[:, None]), axis=1))
    return np.where(np.isfinite(m), out, m)


def log_softmax(z: np.ndarray) -> np.ndarray:
    """log of softmax(z), stable; entries -inf get weight 0; all -inf gives the uniform weights.

    Examples
    --------
    >>> np.exp(log_softmax(np.array([0.0, -np.inf, 0.0]))).tolist()
    [0.5, 0.0, 0.5]
    """
    z = np.asarray(z, float)
    # the methods, not np.max / np.sum: the same reductions without their wrappers (Hedge calls this every round)
    m = z.max() if z.size else 0.0
    if not math.isfinite(m):
        return np.full(z.shape, -math.log(z.size))
    shifted = z - m
    return shifted - math.log(np.exp(shifted).sum())


def log_softmax_rows(Z: np.ndarray) -> np.ndarray:
    """Row-wise :func:`log_softmax` (a row of -inf gives the uniform weights), through :func:`logsumexp_rows`.

    Examples
    --------
    >>> np.exp(log_softmax_rows(np.array([[0.0, -np.inf], [-np.inf, -np.inf]]))).tolist()
    [[1.0, 0.0], [0.5, 0.5]]
    """
    lse = logsumexp_rows(Z)
    uniform = -math.log(Z.shape[1])
    with np.errstate(invalid="ignore"):
        out = Z - lse[:, None]
    return np.where(np.isfinite(lse)[:, None], out, uniform)
