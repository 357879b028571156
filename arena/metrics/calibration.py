"""Calibration metrics of binary forecasts p_t against outcomes y_t.

References
----------
Perdomo & Recht, §2 (mean bias), §8 (smooth calibration, rounded calibration); certificates: docs/ERRATA.md.
"""

from __future__ import annotations

import numpy as np

#: Log loss clips forecasts to [LOG_LOSS_EPS, 1 - LOG_LOSS_EPS]: defensive forecasters
#: often predict exactly 0 or 1, where the unclipped log loss is infinite.
LOG_LOSS_EPS = 1e-6


def bias(p: np.ndarray, y: np.ndarray) -> float:
    """Mean bias |sum_t (p_t - y_t)| / T (§2).

    Examples
    --------
    >>> bias(np.array([0.5, 0.5]), np.array([1.0, 1.0]))
    0.5
    """
    return float(abs(np.sum(p - y)) / len(p)) if len(p) else 0.0


def brier(p: np.ndarray, y: np.ndarray) -> float:
    """Mean squared error (p_t - y_t)^2."""
    return float(np.mean((p - y) ** 2)) if len(p) else 0.0


def log_loss(p: np.ndarray, y: np.ndarray, eps: float = LOG_LOSS_EPS) -> float:
    """Mean log loss with forecasts clipped to [eps, 1 - eps] (see LOG_LOSS_EPS).

    Examples
    --------
    >>> round(log_loss(np.array([0.5]), np.array([1.0])), 6)
    0.693147
    """
    if not len(p):
        return 0.0
    q = np.clip(np.asarray(p, dtype=np.float64), eps, 1 - eps)  # a new array: the steps below write into it
    # -mean(y log q + (1 - y) log1p(-q)), the same operations in place (a million rounds: 8 MB an array)
    a = np.log(q)
    a *= y
    b = np.log1p(np.negative(q, out=q), out=q)
    b *= 1 - y
    a += b
    return float(-np.mean(a))


def bin_edges(bins: int) -> np.ndarray:
    """The edges k/bins (k = 0..bins) of equal-width bins of [0, 1], each the float ``k / bins``.

    ``np.linspace(0, 1, bins + 1)`` differs from k/bins in the last bit for some k, so a forecast
    written as k/bins could fall on the wrong side of its own edge.

    Examples
    --------
    >>> bin_edges(4).tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0]
    """
    return np.arange(bins + 1) / bins


def bin_index(p: np.ndarray, bins: int) -> np.ndarray:
    """The equal-width bin of each forecast: bin k is [k/bins, (k+1)/bins), the last one closed.

    A forecast equal to an edge k/bins lies in bin k: ``int(p * bins)`` puts 15/22 in bin 14,
    since the product rounds to 14.999...; comparing with the edges themselves does not round.

    Examples
    --------
    >>> bin_index(np.array([0.0, 15 / 22, 0.7, 1.0]), 22).tolist()
    [0, 15, 15, 21]
    """
    idx = np.searchsorted(bin_edges(bins), np.asarray(p, dtype=float), side="right") - 1
    return np.clip(idx, 0, bins - 1)


def ece(p: np.ndarray, y: np.ndarray, bins: int = 10) -> float:
    """Binned expected calibration error: sum over equal-width bins b of |sum_{t in b}(y_t - p_t)| / T.

    Bins as :func:`bin_index`: k/bins is in bin k, and the last bin is closed (p = 1 falls in it).

    Examples
    --------
    >>> round(ece(np.array([0.05, 0.95]), np.array([0.0, 1.0])), 12)
    0.05
    """
    if not len(p):
        return 0.0
    idx = bin_index(p, bins)
    sums = np.bincount(idx, weights=y - p, minlength=bins)
    return float(np.abs(sums).sum() / len(p))


def grid_calibration(p: np.ndarray, y: np.ndarray, N: int) -> np.ndarray:
    """Per grid point n/N (n = 0..N): |sum_t 1{p_t = n/N} (n/N - y_t)| (§8 Prop. rounded calibration).

    Forecasts off the grid raise: this metric is for rounded forecasts.

    Examples
    --------
    >>> grid_calibration(np.array([0.5, 0.5, 1.0]), np.array([1.0, 0.0, 0.0]), 2)
    array([0., 0., 1.])
    """
    n = np.rint(p * N)
    if len(p) and np.max(np.abs(n - p * N)) > 1e-9:
        bad = float(p[np.argmax(np.abs(n - p * N))])
        raise ValueError(
            f"forecast {bad!r} is not on the grid {{0, 1/{N}, ..., 1}}; grid calibration needs rounded forecasts"
        )
    n = n.astype(int)
    return np.abs(np.bincount(n, weights=n / N - y, minlength=N + 1))


def hat(p: np.ndarray, eps: float, alpha: float) -> np.ndarray:
    """The hat function h_{eps,alpha}(p) = w_eps(p - alpha) of §8: 1 - |p - alpha|/eps inside the
    hat, 0 outside (1/eps-Lipschitz, with ||h||_FS = sqrt(eps^2 + 2/eps) for eps <= min(alpha, 1 - alpha)).

    Examples
    --------
    >>> hat(np.array([0.5, 0.55, 0.6, 0.9]), 0.1, 0.5).round(12).tolist()
    [1.0, 0.5, 0.0, 0.0]
    """
    return np.maximum(0.0, 1.0 - np.abs(np.asarray(p, float) - alpha) / eps)


def hat_calibration(p: np.ndarray, y: np.ndarray, eps: float, alpha: float) -> float:
    """|sum_t h_{eps,alpha}(p_t)(y_t - p_t)|: the calibration error near alpha that §8 bounds through
    the Fermi-Sobolev norm of the hat (a K29 forecaster keeps it <= sqrt(eps^2 + 2/eps) times the
    kernel gap ||sum_t w_t k_FS(p_t, .)||).

    Examples
    --------
    >>> hat_calibration(np.array([0.5, 0.5]), np.array([1.0, 1.0]), 0.1, 0.5)
    1.0
    """
    if not len(p):
        return 0.0
    return float(abs(np.sum(hat(p, eps, alpha) * (np.asarray(y, float) - np.asarray(p, float)))))
