"""Metrics and kernels against independent computations: closed forms on hand-made inputs,
plain-Python loops, and scipy's general-purpose optimizers.

References
----------
Perdomo & Recht, §2 (bias), §6 (linear comparators), §7-§8 (kernels); certificates: docs/ERRATA.md.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize, minimize_scalar

from arena.kernels import (
    RBF,
    FeatureKernel,
    FermiSobolev,
    Kernel,
    ProductKernel,
    SumKernel,
    cross_sums,
    kernel_gap,
    make_kernel,
)
from arena.metrics.calibration import LOG_LOSS_EPS, bias, bin_index, brier, ece, grid_calibration, log_loss
from arena.metrics.regret import best_linear_weights, regret_constant, regret_linear
from arena.metrics.smce import smce, smce_lp

# ============================================================ calibration: closed forms


def test_bias_hand_made() -> None:
    p = np.array([0.2, 0.7, 1.0])
    y = np.array([0.0, 1.0, 1.0])
    assert bias(p, y) == pytest.approx(abs(1.9 - 2.0) / 3, abs=1e-15)
    assert bias(np.array([0.0, 0.0]), np.array([1.0, 1.0])) == 1.0
    assert bias(np.zeros(0), np.zeros(0)) == 0.0


def test_bias_is_symmetric_in_sign() -> None:
    # |sum(p - y)|: over- and under-forecasting by the same total give the same value.
    assert bias(np.array([0.9, 0.9]), np.array([0.0, 1.0])) == pytest.approx(0.8 / 2)
    assert bias(np.array([0.1, 0.1]), np.array([1.0, 0.0])) == pytest.approx(0.8 / 2)


def test_brier_hand_made() -> None:
    p = np.array([0.2, 0.7, 1.0, 0.0])
    y = np.array([0.0, 1.0, 1.0, 1.0])
    assert brier(p, y) == pytest.approx((0.04 + 0.09 + 0.0 + 1.0) / 4, abs=1e-15)
    assert brier(np.zeros(0), np.zeros(0)) == 0.0


def _log_loss_loop(p, y, eps) -> float:
    total = 0.0
    for pi, yi in zip(p, y, strict=False):
        q = min(max(pi, eps), 1 - eps)
        total += -math.log(q) if yi == 1 else -math.log(1 - q)
    return total / len(p)


def test_log_loss_hand_made() -> None:
    assert log_loss(np.array([0.8]), np.array([1.0])) == pytest.approx(-math.log(0.8), rel=1e-14)
    assert log_loss(np.array([0.8]), np.array([0.0])) == pytest.approx(-math.log(0.2), rel=1e-14)
    p, y = np.array([0.25, 0.5, 0.9]), np.array([0.0, 1.0, 1.0])
    expected = -(math.log(0.75) + math.log(0.5) + math.log(0.9)) / 3
    assert log_loss(p, y) == pytest.approx(expected, rel=1e-14)
    assert log_loss(np.zeros(0), np.zeros(0)) == 0.0


def test_log_loss_clips_at_documented_eps() -> None:
    # A certain wrong forecast costs -log(eps), not infinity (LOG_LOSS_EPS is documented).
    assert LOG_LOSS_EPS == 1e-6
    assert log_loss(np.array([0.0]), np.array([1.0])) == pytest.approx(-math.log(LOG_LOSS_EPS), rel=1e-12)
    assert log_loss(np.array([1.0]), np.array([0.0])) == pytest.approx(-math.log(LOG_LOSS_EPS), rel=1e-9)
    # A certain right forecast costs -log(1 - eps) > 0.
    assert log_loss(np.array([1.0]), np.array([1.0])) == pytest.approx(-math.log1p(-LOG_LOSS_EPS), rel=1e-9)
    # A custom eps is honoured.
    assert log_loss(np.array([0.0]), np.array([1.0]), eps=1e-3) == pytest.approx(-math.log(1e-3), rel=1e-12)


def test_log_loss_matches_plain_loop_on_random_inputs() -> None:
    rng = np.random.default_rng(0)
    for _ in range(20):
        T = int(rng.integers(1, 50))
        p = rng.choice([0.0, 1.0, 1e-8, 0.5, rng.random()], T)
        y = (rng.random(T) < 0.5).astype(float)
        assert log_loss(p, y) == pytest.approx(_log_loss_loop(p, y, LOG_LOSS_EPS), rel=1e-12)


def _ece_loop(p, y, bins) -> float:
    sums = [0.0] * bins
    for pi, yi in zip(p, y, strict=False):
        b = max(k for k in range(bins) if k / bins <= pi)  # the last edge k/bins at or below p, compared as written
        sums[b] += yi - pi
    return sum(abs(s) for s in sums) / len(p)


def test_ece_hand_made() -> None:
    p = np.array([0.05, 0.15, 0.15, 1.0])
    y = np.array([1.0, 0.0, 1.0, 1.0])
    # bin 0: 0.95; bin 1: -0.15 + 0.85 = 0.7; bin 9 (closed, holds p = 1): 0
    assert ece(p, y, 10) == pytest.approx((0.95 + 0.7) / 4, abs=1e-15)
    # Errors of opposite signs cancel within a bin, not across bins.
    assert ece(np.array([0.31, 0.39]), np.array([1.0, 0.0]), 10) == pytest.approx(abs(0.69 - 0.39) / 2)
    assert ece(np.array([0.31, 0.39]), np.array([1.0, 0.0]), 20) == pytest.approx((0.69 + 0.39) / 2)
    assert ece(np.zeros(0), np.zeros(0)) == 0.0


def test_ece_bins_are_exact_at_their_edges() -> None:
    # k/bins lies in bin k for every bins <= 100 and every k (1 in the last, closed bin); int(p * bins) put
    # 148 of these edges one bin low (15/22 * 22 rounds to 14.999...)
    for bins in range(1, 101):
        k = np.arange(bins + 1)
        np.testing.assert_array_equal(bin_index(k / bins, bins), np.minimum(k, bins - 1), err_msg=f"bins={bins}")
        # the float just below an edge stays in the bin below it
        below = np.nextafter(k[1:] / bins, 0.0)
        np.testing.assert_array_equal(bin_index(below, bins), k[1:] - 1, err_msg=f"bins={bins}")
    # through ece: 15/22 and 0.7 share bin 15 of 22, so their residuals cancel within it
    assert ece(np.array([15 / 22, 0.7]), np.array([1.0, 0.0]), 22) == pytest.approx(abs(7 / 22 - 0.7) / 2)


@pytest.mark.parametrize("bins", [1, 3, 10, 15, 22])
def test_ece_matches_plain_loop(bins: int) -> None:
    rng = np.random.default_rng(bins)
    for _ in range(20):
        T = int(rng.integers(1, 60))
        p = rng.choice([0.0, 1.0, 0.5, rng.random(), rng.random(), int(rng.integers(bins + 1)) / bins], T)
        y = (rng.random(T) < 0.4).astype(float)
        assert ece(p, y, bins) == pytest.approx(_ece_loop(p, y, bins), abs=1e-12)


def test_smce_has_one_form_the_lp_over_minus_one_to_one_agrees() -> None:
    # A 1-Lipschitz f on [0, 1] spans at most 1. Let f in [-1, 1] maximise L(f) = sum_t f(p_t) w_t (the set is
    # symmetric, so this is the sup of |L|), f in [a, a + 1] with -1 <= a <= 0. If sum w >= 0, L(f) = L(f - a) +
    # a sum w <= L(f - a), and f - a maps into [0, 1]; else h = a + 1 - f maps into [0, 1] and L(f) = (a + 1) sum w
    # - L(h) <= |L(h)|. So the sup over [-1, 1] is at most the sup over [0, 1], which it contains: they are equal,
    # and the referee reports one column. The LP over [-1, 1] (an independent solver) agrees on random cases.
    rng = np.random.default_rng(33)
    for case in range(300):
        T = int(rng.integers(1, 40))
        p = rng.choice(np.r_[0.0, 1.0, rng.random(3)], T) if case % 2 else rng.random(T)
        y = (rng.random(T) < rng.random()).astype(float)
        scale = float(np.abs(y - p).sum()) + 1.0
        assert smce(p, y) == pytest.approx(smce_lp(p, y, "pm"), abs=1e-9 * scale)
        assert smce_lp(p, y, "paper") == pytest.approx(smce_lp(p, y, "pm"), abs=1e-9 * scale)


def test_grid_calibration_hand_made() -> None:
    p = np.array([0.0, 0.5, 0.5, 0.5, 1.0, 1.0])
    y = np.array([1.0, 1.0, 1.0, 0.0, 0.0, 1.0])
    # n=0: |0 - 1| = 1; n=1: |3 * 0.5 - 2| = 0.5; n=2: |2 - 1| = 1
    np.testing.assert_allclose(grid_calibration(p, y, 2), [1.0, 0.5, 1.0], atol=1e-15)
    # Grid points that never occur report 0.
    np.testing.assert_allclose(grid_calibration(np.array([0.25]), np.array([0.0]), 4), [0, 0.25, 0, 0, 0])


def test_grid_calibration_matches_plain_loop() -> None:
    rng = np.random.default_rng(3)
    for N in (1, 2, 7, 10, 20):
        n = rng.integers(0, N + 1, 200)
        p = n / N
        y = (rng.random(200) < 0.5).astype(float)
        expected = [abs(sum(k / N - y[t] for t in range(200) if n[t] == k)) for k in range(N + 1)]
        np.testing.assert_allclose(grid_calibration(p, y, N), expected, atol=1e-12)


def test_grid_calibration_rejects_off_grid_forecasts() -> None:
    with pytest.raises(
        ValueError, match=r"forecast .*0\.33.* is not on the grid \{0, 1/10, \.\.\., 1\}; grid calibration"
    ):
        grid_calibration(np.array([0.3, 0.33]), np.array([1.0, 0.0]), 10)


def test_grid_calibration_error_shows_the_plain_value() -> None:
    with pytest.raises(ValueError, match=r"^forecast 0\.33 is not on the grid"):
        grid_calibration(np.array([0.3, 0.33]), np.array([1.0, 0.0]), 10)


# ================================================================= regret


def test_regret_constant_hand_made() -> None:
    # best constant for y = (1, 0, 1, 1) is 3/4 with loss 3/16 * 4 ... = 0.75
    y = np.array([1.0, 0.0, 1.0, 1.0])
    p = np.array([0.5, 0.5, 0.5, 0.5])
    assert regret_constant(p, y) == pytest.approx(4 * 0.25 - 0.75, abs=1e-15)
    assert regret_constant(np.full(4, 0.75), y) == pytest.approx(0.0, abs=1e-15)
    assert regret_constant(np.zeros(0), np.zeros(0)) == 0.0


def test_regret_constant_matches_scalar_minimization() -> None:
    rng = np.random.default_rng(1)
    for _ in range(10):
        T = int(rng.integers(1, 80))
        p, y = rng.random(T), (rng.random(T) < rng.random()).astype(float)
        best = minimize_scalar(
            lambda c, y=y: float(np.sum((c - y) ** 2)), bounds=(0, 1), method="bounded", options={"xatol": 1e-12}
        ).fun
        assert regret_constant(p, y) == pytest.approx(float(np.sum((p - y) ** 2)) - best, abs=1e-8)


def _objective(X, y, w) -> float:
    return float(np.sum((X @ w - y) ** 2))


def _slsqp(X, y, M) -> np.ndarray:
    """min ||Xw - y||^2 s.t. ||w||^2 <= M^2, by scipy's SLSQP (a general-purpose solver)."""
    d = X.shape[1]
    res = minimize(
        lambda w: _objective(X, y, w),
        np.zeros(d),
        jac=lambda w: 2 * X.T @ (X @ w - y),
        method="SLSQP",
        constraints=[{"type": "ineq", "fun": lambda w: M * M - w @ w, "jac": lambda w: -2 * w}],
        options={"ftol": 1e-13, "maxiter": 1000},
    )
    # SLSQP may stop with "positive directional derivative in linesearch" once it cannot improve
    # further; the callers check feasibility and the objective, which is what matters.
    assert res.status in (0, 8), res.message
    return res.x


def _projected_gradient(X, y, M, iters: int = 20000) -> np.ndarray:
    """Accelerated projected gradient (FISTA) on the ball ||w|| <= M: no linear algebra shared with the code."""
    G, b = X.T @ X, X.T @ y
    L = 2 * np.linalg.norm(X, 2) ** 2 + 1e-12
    w = z = np.zeros(X.shape[1])
    tk = 1.0
    for _ in range(iters):
        v = z - 2 * (G @ z - b) / L
        n = math.sqrt(v @ v)
        w_new = v if n <= M else v * (M / n)
        if np.abs(w_new - w).max() < 1e-14:
            return w_new
        t_new = (1 + math.sqrt(1 + 4 * tk * tk)) / 2
        z = w_new + (tk - 1) / t_new * (w_new - w)
        w, tk = w_new, t_new
    return w


def _random_problem(rng, T, d, rank=None):
    X = rng.standard_normal((T, d))
    if rank is not None:  # columns in a rank-`rank` subspace: X^T X is singular
        X = X[:, :rank] @ rng.standard_normal((rank, d))
    y = (rng.random(T) < 0.5).astype(float)
    return X, y


def _unconstrained_norm(X, y) -> float:
    return float(np.linalg.norm(np.linalg.lstsq(X, y, rcond=None)[0]))  # minimum-norm least squares


@pytest.mark.parametrize("rank", [None, 1, 2])
@pytest.mark.parametrize("active", [True, False])
def test_best_linear_weights_against_slsqp_and_projected_gradient(rank, active) -> None:
    rng = np.random.default_rng([0 if rank is None else rank, int(active)])
    for _ in range(6):
        T, d = int(rng.integers(8, 40)), int(rng.integers(3, 5))
        X, y = _random_problem(rng, T, d, rank)
        free = _unconstrained_norm(X, y)
        M = free * (0.3 if active else 2.0)
        w = best_linear_weights(X, y, M)
        assert np.linalg.norm(w) <= M * (1 + 1e-9)
        f = _objective(X, y, w)
        for ref in (_slsqp(X, y, M), _projected_gradient(X, y, M)):
            assert np.linalg.norm(ref) <= M * (1 + 1e-6)
            # The exact solution is at least as good as each solver's (up to their tolerance) ...
            assert f <= _objective(X, y, ref) + 1e-7 * max(1.0, f)
            # ... and not better than the true optimum, which both solvers reach to about 1e-6.
            assert f == pytest.approx(_objective(X, y, ref), rel=1e-6, abs=1e-8)
        if active:
            # The constrained minimizer is unique (ridge with a positive multiplier) and on the sphere.
            assert np.linalg.norm(w) == pytest.approx(M, rel=1e-9)
            np.testing.assert_allclose(w, _projected_gradient(X, y, M), atol=1e-5 * max(1.0, M))
        else:
            # Interior: the minimum-norm least-squares solution.
            np.testing.assert_allclose(w, np.linalg.lstsq(X, y, rcond=None)[0], atol=1e-8)


def test_best_linear_weights_with_a_zero_and_a_duplicated_column() -> None:
    rng = np.random.default_rng(5)
    base = rng.standard_normal((30, 2))
    X = np.column_stack([base[:, 0], np.zeros(30), base[:, 1], base[:, 1]])
    y = (rng.random(30) < 0.5).astype(float)
    for M in (0.05, 0.2, 10.0):
        w = best_linear_weights(X, y, M)
        assert w[1] == pytest.approx(0.0, abs=1e-12)  # a zero column gets no weight (minimum norm)
        assert w[2] == pytest.approx(w[3], abs=1e-9)  # duplicated columns share the weight (minimum norm)
        assert _objective(X, y, w) == pytest.approx(_objective(X, y, _slsqp(X, y, M)), rel=1e-6, abs=1e-8)


def test_best_linear_weights_edge_cases() -> None:
    X, y = np.ones((4, 1)), np.array([1.0, 1.0, 1.0, 0.0])
    assert best_linear_weights(X, y, 0.0).tolist() == [0.0]
    assert best_linear_weights(np.zeros((4, 0)), y, 1.0).shape == (0,)
    assert best_linear_weights(X, y, 10.0) == pytest.approx([0.75])  # the mean, inside the ball
    assert best_linear_weights(X, y, 0.5) == pytest.approx([0.5])  # clipped to the ball
    assert best_linear_weights(-X, y, 0.5) == pytest.approx([-0.5])
    with pytest.raises(ValueError, match=r"M=-1\.0: the comparator norm bound must be >= 0"):
        best_linear_weights(X, y, -1.0)


def test_regret_linear_with_a_constant_feature_is_regret_to_a_clipped_constant() -> None:
    y = np.array([1.0, 0.0, 1.0, 1.0])
    p = np.array([0.5, 0.2, 0.9, 0.6])
    X = np.ones((4, 1))
    loss = float(np.sum((p - y) ** 2))
    # M >= mean: the comparator is the best constant.
    assert regret_linear(p, y, X, 1.0) == pytest.approx(regret_constant(p, y), abs=1e-12)
    # M < mean: the comparator is the constant M = 0.5.
    assert regret_linear(p, y, X, 0.5) == pytest.approx(loss - float(np.sum((0.5 - y) ** 2)), abs=1e-12)
    assert regret_linear(np.zeros(0), np.zeros(0), np.zeros((0, 1)), 1.0) == 0.0


def test_regret_linear_against_slsqp() -> None:
    rng = np.random.default_rng(9)
    for M in (0.1, 1.0, 5.0):
        X, y = _random_problem(rng, 50, 3)
        p = rng.random(50)
        expected = float(np.sum((p - y) ** 2)) - _objective(X, y, _slsqp(X, y, M))
        assert regret_linear(p, y, X, M) == pytest.approx(expected, abs=1e-6)


# ================================================================= kernels

# Plain-Python kernels, written from the formulas (no numpy broadcasting, no code shared with arena.kernels).


def _fs(p: float, q: float) -> float:
    return 0.5 * min(p, q) ** 2 + 0.5 * min(1 - p, 1 - q) ** 2 + 5 / 6


def _rbf(gamma):
    return lambda x, p, xx, q: math.exp(-gamma * sum((a - b) ** 2 for a, b in zip(x, xx, strict=False)))


def _phi(terms):
    """The feature vector of named terms, written out by hand."""

    def phi(x, p):
        out = []
        for term in terms:
            scale, _, name = term.rpartition("*")
            c = float(scale) if scale else 1.0
            out += {"1": [c], "p": [c * p], "p2": [c * p * p], "x": [c * v for v in x], "px": [c * p * v for v in x]}[
                name
            ]
        return out

    return phi


def _feature_kernel(terms):
    phi = _phi(terms)
    return lambda x, p, xx, q: sum(a * b for a, b in zip(phi(x, p), phi(xx, q), strict=False))


def _fs_k(x, p, xx, q):
    return _fs(p, q)


def _sum_k(*ks):
    return lambda x, p, xx, q: sum(k(x, p, xx, q) for k in ks)


def _prod_k(a, b):
    return lambda x, p, xx, q: a(x, p, xx, q) * b(x, p, xx, q)


TERMS = ("1", "p", "2*p2", "x", "0.5*px")

# (arena kernel, plain-Python reference)
KERNELS = {
    "fs": (FermiSobolev(), _fs_k),
    "rbf": (RBF(0.7), _rbf(0.7)),
    "features": (FeatureKernel(TERMS), _feature_kernel(TERMS)),
    "linear": (make_kernel("linear"), _feature_kernel(("p", "x"))),
    "sum_fs_features": (
        make_kernel(["fs", {"features": ["1", "p", "x"]}]),
        _sum_k(_fs_k, _feature_kernel(("1", "p", "x"))),
    ),
    "sum_fs_rbf": (FermiSobolev() + RBF(2.0), _sum_k(_fs_k, _rbf(2.0))),
    "product_fs_rbf": (make_kernel({"product": ["fs", {"rbf": 0.5}]}), _prod_k(_fs_k, _rbf(0.5))),
}


def _points(rng, T, d=2):
    X = rng.standard_normal((T, d))
    P = rng.choice([0.0, 1.0, 0.5, rng.random(), rng.random(), rng.random()], T)
    return X, P


def _gram_loop(k, X1, P1, X2, P2):
    return np.array(
        [[k(list(X1[i]), float(P1[i]), list(X2[j]), float(P2[j])) for j in range(len(P2))] for i in range(len(P1))]
    )


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_gram_and_diag_match_the_formula(name) -> None:
    kernel, ref = KERNELS[name]
    rng = np.random.default_rng(len(name))
    X1, P1 = _points(rng, 7)
    X2, P2 = _points(rng, 5)
    np.testing.assert_allclose(kernel.gram(X1, P1, X2, P2), _gram_loop(ref, X1, P1, X2, P2), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(kernel.diag(X1, P1), np.diag(_gram_loop(ref, X1, P1, X1, P1)), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_gram_is_symmetric_positive_semidefinite(name) -> None:
    kernel, _ = KERNELS[name]
    X, P = _points(np.random.default_rng(4), 40)
    K = kernel.gram(X, P, X, P)
    np.testing.assert_allclose(K, K.T, atol=1e-12)
    assert np.linalg.eigvalsh(K).min() >= -1e-9 * max(1.0, np.abs(K).max())


def test_fermi_sobolev_hand_values() -> None:
    k = FermiSobolev()
    g = lambda p, q: float(k.gram(np.zeros((1, 0)), np.array([p]), np.zeros((1, 0)), np.array([q]))[0, 0])
    assert g(0.0, 0.0) == pytest.approx(0.5 + 5 / 6)  # = 4/3
    assert g(1.0, 1.0) == pytest.approx(4 / 3)
    assert g(0.0, 1.0) == pytest.approx(5 / 6)
    assert g(0.5, 0.5) == pytest.approx(0.125 + 0.125 + 5 / 6)
    assert g(0.2, 0.6) == pytest.approx(0.02 + 0.08 + 5 / 6)


def test_feature_kernel_gram_is_explicit_feature_dot_products() -> None:
    rng = np.random.default_rng(2)
    X, P = _points(rng, 6, d=3)
    phi = _phi(TERMS)
    F = np.array([phi(list(X[i]), float(P[i])) for i in range(6)])
    k = FeatureKernel(TERMS)
    np.testing.assert_allclose(k.features(X, P), F, rtol=1e-14)
    np.testing.assert_allclose(k.gram(X, P, X, P), F @ F.T, rtol=1e-12)
    assert k.finite


def test_sum_and_product_kernels() -> None:
    rng = np.random.default_rng(6)
    X, P = _points(rng, 8)
    a, b = FeatureKernel(("1", "p")), FeatureKernel(("x",))
    s = a + b
    assert isinstance(s, SumKernel) and s.finite
    np.testing.assert_allclose(s.gram(X, P, X, P), a.gram(X, P, X, P) + b.gram(X, P, X, P), rtol=1e-13)
    np.testing.assert_allclose(s.features(X, P), np.hstack([a.features(X, P), b.features(X, P)]))
    mixed = SumKernel((a, FermiSobolev()))
    assert not mixed.finite
    prod = ProductKernel(FermiSobolev(), RBF(1.0))
    np.testing.assert_allclose(prod.gram(X, P, X, P), FermiSobolev().gram(X, P, X, P) * RBF(1.0).gram(X, P, X, P))
    np.testing.assert_allclose(prod.diag(X, P), np.diag(prod.gram(X, P, X, P)))
    with pytest.raises(NotImplementedError, match="ProductKernel has no finite feature map"):
        prod.features(X, P)


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_lip_p_bounds_the_derivative_in_p(name) -> None:
    # The search-precision certificate relies on |d/dp k((x, p), z_s)| <= lip_p for p in [0, 1]
    # and z_s, x among the run's points.
    kernel, ref = KERNELS[name]
    rng = np.random.default_rng(8)
    X, P = _points(rng, 12)
    lip = kernel.lip_p(X, P)
    h = 1e-6
    for t in range(12):
        for s in range(12):
            for p in np.linspace(h, 1 - h, 21):
                dk = (
                    ref(list(X[t]), p + h, list(X[s]), float(P[s])) - ref(list(X[t]), p - h, list(X[s]), float(P[s]))
                ) / (2 * h)
                assert abs(dk) <= lip + 1e-6


def test_make_kernel_builds_what_it_names() -> None:
    assert make_kernel("fs") == FermiSobolev() == make_kernel("fermi_sobolev")
    assert make_kernel("rbf") == RBF(1.0)
    assert make_kernel({"rbf": 2.5}) == RBF(2.5)
    assert make_kernel("linear") == FeatureKernel(("p", "x"))
    assert make_kernel("constant") == FeatureKernel(("1",))
    assert make_kernel({"features": ["1", "p", "x"]}) == FeatureKernel(("1", "p", "x"))
    assert make_kernel(["fs"]) == FermiSobolev()  # a one-element list is that kernel
    assert make_kernel(["fs", "rbf"]) == SumKernel((FermiSobolev(), RBF(1.0)))
    assert make_kernel({"product": ["fs", {"rbf": 3.0}]}) == ProductKernel(FermiSobolev(), RBF(3.0))
    k = RBF(0.1)
    assert make_kernel(k) is k


@pytest.mark.parametrize(
    "spec, message",
    [
        ("fz", r"unknown kernel 'fz'; expected one of \['constant', 'fermi_sobolev', 'fs', 'linear', 'rbf'\]"),
        ({"rbf": 1.0, "features": ["1"]}, r"kernel spec .*: give exactly one of 'features', 'rbf', .*'product'"),
        ({"poly": 2}, r"unknown kernel key 'poly'; expected 'features', 'rbf', .*'product'"),
        ([], r"an empty kernel list; give at least one kernel"),
        ({"features": ["1", "q"]}, r"unknown feature term 'q'; expected one of \['1', 'p', 'p2', 'x', 'px'\]"),
        ({"features": ["a*p"]}, r"feature term 'a\*p': the scale before '\*' must be a number"),
        ({"features": []}, r"a feature map needs at least one term"),
        ({"rbf": 0.0}, r"RBF gamma=0\.0 must be > 0"),
        ({"rbf": -1.0}, r"RBF gamma=-1\.0 must be > 0"),
        (["fs", "nope"], r"unknown kernel 'nope'"),
    ],
)
def test_make_kernel_errors_are_clear_value_errors(spec, message) -> None:
    with pytest.raises(ValueError, match=message):
        make_kernel(spec)


def test_base_kernel_has_no_features_and_no_lipschitz_bound() -> None:
    class Bare(Kernel):
        pass

    with pytest.raises(NotImplementedError, match="Bare has no finite feature map"):
        Bare().features(np.zeros((1, 0)), np.zeros(1))
    assert Bare().lip_p(np.zeros((1, 0)), np.zeros(1)) == math.inf


# ====================================================== cross sums and gap vs O(T^2) loops


def _cross_sums_loop(k, X, P, W) -> list[float]:
    T = len(P)
    return [sum(W[s] * k(list(X[t]), float(P[t]), list(X[s]), float(P[s])) for s in range(t)) for t in range(T)]


def _gap_loop(k, X, P, W) -> float:
    T = len(P)
    return sum(W[s] * W[t] * k(list(X[s]), float(P[s]), list(X[t]), float(P[t])) for s in range(T) for t in range(T))


@pytest.mark.parametrize("name", sorted(KERNELS))
@pytest.mark.parametrize("block", [3, 2048])
def test_cross_sums_and_kernel_gap_match_double_loops(name, block) -> None:
    kernel, ref = KERNELS[name]
    rng = np.random.default_rng([len(name), block])
    for T in (1, 2, 11, 30):
        X, P = _points(rng, T)
        W = (rng.random(T) < 0.5) - P  # residuals y - p
        S = cross_sums(kernel, X, P, W, block=block)
        np.testing.assert_allclose(S, _cross_sums_loop(ref, X, P, W), rtol=1e-10, atol=1e-10)
        assert S[0] == 0.0  # nothing before the first round
        assert kernel_gap(kernel, X, P, W, block=block) == pytest.approx(_gap_loop(ref, X, P, W), rel=1e-10, abs=1e-10)


def test_cross_sums_with_no_context_columns() -> None:
    # K29 runs have X of shape (T, 0).
    rng = np.random.default_rng(12)
    P = rng.random(25)
    W = (rng.random(25) < 0.5) - P
    X = np.zeros((25, 0))
    np.testing.assert_allclose(
        cross_sums(FermiSobolev(), X, P, W), _cross_sums_loop(_fs_k, X, P, W), rtol=1e-12, atol=1e-12
    )
    assert kernel_gap(FermiSobolev(), X, P, W) == pytest.approx(_gap_loop(_fs_k, X, P, W), rel=1e-12)


def test_bit_prediction_gap_is_the_squared_bias() -> None:
    # With the constant feature, the gap is (sum w)^2 (§2).
    rng = np.random.default_rng(13)
    P, W = rng.random(20), rng.standard_normal(20)
    assert kernel_gap(make_kernel("constant"), np.zeros((20, 0)), P, W) == pytest.approx(W.sum() ** 2, rel=1e-12)
