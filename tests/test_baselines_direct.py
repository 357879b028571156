"""OGD and Hedge against straightforward implementations written here: the same forecasts, to a few ulps.

The forecasters avoid building arrays each round (speed); these direct versions build them as the
formulas read (concatenate [1, x], np.linalg.norm, the mixture of the advice under exp(-eta L)).
The two are not the same floating-point operations: the direct versions call numpy's dot and norm,
which run in BLAS (OpenBLAS picks its kernel, and with it the summation order, by CPU: SkylakeX,
Haswell and Prescott kernels give results some ulps apart), while OGD sums short vectors in Python.
So the forecasts are compared to a tolerance (:data:`OGD_TOL`, :data:`HEDGE_TOL`: 1e-12 at most on forecasts
of order 1), orders of magnitude below what a change of the formulas (a step, a projection, a weight) moves.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena import play

#: OGD's forecasts feed its weights, so rounding differences add up over the rounds (measured: at most 8e-15
#: on forecasts of size <= 4, over SkylakeX, Haswell and Prescott kernels); nature is oblivious and the clip
#: and projection are continuous, so no branch amplifies them. Forecasts are O(1): an absolute tolerance.
OGD_TOL = {"rtol": 1e-12, "atol": 1e-12}
#: Hedge's weights depend on the advice and outcomes only: each forecast is one short dot product apart (1 ulp
#: measured), not an accumulation.
HEDGE_TOL = {"rtol": 1e-12, "atol": 1e-14}


def direct_ogd(X, y, lr, schedule, M, intercept, clip, paper):
    """Projected OGD on the squared loss, one round at a time, as the formula reads (``paper``: the
    paper's method, no intercept, fixed step, no projection, forecasts announced clipped)."""
    w, out = None, []
    for t in range(len(y)):
        z = np.concatenate(([1.0], X[t])) if intercept and not paper else np.asarray(X[t], float)
        if w is None:
            w = np.zeros(z.size)
        raw = float(w @ z)
        out.append(min(max(raw, 0.0), 1.0) if clip or paper else raw)
        step = lr if schedule == "fixed" or paper else lr / np.sqrt(t + 1)
        w = w - step * (float(w @ z) - y[t]) * z
        if paper:
            continue
        norm = np.linalg.norm(w)
        if norm > M:
            w *= M / norm
    return np.array(out)


@pytest.mark.parametrize(
    "nature, params",
    [
        ("logistic", {}),
        ("sinusoid", {}),
        ("logistic", {"lr": 0.5, "schedule": "fixed", "M": 0.3}),
        ("sinusoid", {"lr": 0.5, "schedule": "fixed", "M": 0.3}),
        ("logistic", {"intercept": False, "clip": False, "lr": 0.05}),  # no intercept: it needs a context
        ("logistic", {"paper": True, "lr": 0.3}),
    ],
)
def test_ogd_matches_direct(nature, params):
    r = play("binary", "ogd", nature, T=600, seed=3, forecaster_params=params, fast_path=False)
    full = {"lr": 0.1, "schedule": "sqrt", "M": 10.0, "intercept": True, "clip": True, "paper": False, **params}
    expected = direct_ogd(r.recorder.X, r.recorder.y, **full)
    # BLAS picks its kernel (summation order) by CPU: a few ulps apart, accumulated through the weights
    np.testing.assert_allclose(r.recorder.p, expected, **OGD_TOL)
    assert np.unique(expected).size > 10  # the forecasts move: the comparison means something


def direct_hedge(A, y, eta, n_rounds):
    """Hedge on the squared loss as the formula reads: w_j ∝ exp(-η (L_j - L_j at the epoch's start)),
    p = sum_j w_j f_j; η fixed, tuned to the horizon, or doubling (epochs of rounds 2^m .. 2^(m+1) - 1)."""
    N = A.shape[1]
    L, start, out = np.zeros(N), np.zeros(N), []
    for t in range(1, len(y) + 1):
        if eta == "doubling":
            first = 1 << (t.bit_length() - 1)
            if first == t:
                start = L.copy()
            rate, since = math.sqrt(8.0 * math.log(N) / first), L - start
        else:
            rate = math.sqrt(8.0 * math.log(N) / n_rounds) if eta == "tuned" else eta
            since = L
        z = -rate * since
        z = z - np.max(z)
        logw = z - math.log(np.sum(np.exp(z)))
        out.append(float(np.clip(float(np.exp(logw) @ A[t - 1]), 0.0, 1.0)))
        L = L + (A[t - 1] - y[t - 1]) ** 2
    return np.array(out)


@pytest.mark.parametrize("eta", [0.7, "tuned", "doubling"])
@pytest.mark.parametrize("nature", ["expert_constants", "expert_switching"])
def test_hedge_matches_direct(eta, nature):
    T = 700
    params = {"eta": eta, "horizon": T} if eta == "tuned" else {"eta": eta}
    r = play("experts", "hedge", nature, T=T, seed=1, forecaster_params=params, fast_path=False)
    expected = direct_hedge(r.recorder.X, r.recorder.y, eta, T)
    # the direct mixture is a BLAS dot (its kernel, so its summation order, depends on the CPU): a few ulps apart
    np.testing.assert_allclose(r.recorder.p, expected, **HEDGE_TOL)
    assert np.unique(expected).size > 10


@pytest.mark.parametrize("d", [0, 1, 3, 14, 15, 16, 40])  # weights kept in a list up to 15, an array above
@pytest.mark.parametrize(
    "params",
    [
        {},
        {"lr": 0.5, "schedule": "fixed", "M": 0.3},
        {"lr": 2.0, "schedule": "sqrt", "M": 1.0},
        {"intercept": False, "clip": False, "lr": 0.05},
        {"paper": True, "lr": 0.02},
        {"paper": True, "lr": 0.005},
    ],
)
def test_ogd_steps_match_direct_on_random_data(d, params):
    """The forecaster driven by hand (predict, then update with the same context; every fifth round a
    copy of it, and every seventh a list) on random contexts of several dimensions: the same forecasts,
    to a few ulps, as the direct version (numpy's dot and norm, as OGD computed before its list path)."""
    from forecasters.baselines import OGD

    if d == 0 and (params.get("paper") or not params.get("intercept", True)):
        pytest.skip("no intercept and no context: nothing to learn")
    rng = np.random.default_rng(d)
    T = 400
    X = rng.standard_normal((T, d)) * rng.uniform(0.2, 3.0, size=d)
    y = (rng.random(T) < 0.3 + 0.4 * (X[:, 0] > 0 if d else 0.5)).astype(float)
    fc = OGD(**params)
    fc.reset(np.random.default_rng(0))
    got = []
    for t in range(T):
        x = X[t].tolist() if t % 7 == 3 else X[t]
        got.append(fc.predict(x))
        fc.update(X[t].copy() if t % 5 == 1 else x, got[-1], y[t])
    full = {"lr": 0.1, "schedule": "sqrt", "M": 10.0, "intercept": True, "clip": True, "paper": False, **params}
    expected = direct_ogd(X, y, **full)
    # OGD sums short vectors in Python, the direct version in BLAS (summation order by CPU): a few ulps apart
    np.testing.assert_allclose(np.array(got), expected, **OGD_TOL)
    assert np.unique(expected).size > 5  # the forecasts move (at d = 0, lr = 0.5 halves: few values)
