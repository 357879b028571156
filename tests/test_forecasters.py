"""Forecasters against the rules printed in the paper and direct reimplementations.

The forecasters are driven here by hand (reset, predict, update), without the arena loop,
so that each test sees exactly the history the forecaster saw. Summary functions are
recomputed from that history by plain-Python double loops, independent of arena.kernels.

References
----------
Perdomo & Recht, §2 (bit prediction), §3 Alg. 2, §4, §6, §7 Alg. 4, §8; errata: docs/ERRATA.md.
"""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.protocols import Forecast
from forecasters.baselines import OGD, Constant, LastOutcome, RunningMean, WindowMean
from forecasters.defensive import DMM, K29, BitPrediction, K29Rounded, KernelDF, LinearDF

# ----------------------------------------------------------------------------- helpers


def _drive(fc, T: int, outcome, context=None, seed: int = 0):
    """Play ``fc`` for T rounds; ``outcome(t, p, rng)`` may look at the announced forecast.

    Returns contexts, announced forecasts (point value or Forecast), the value the
    forecaster updated with (the unrounded one for K29Rounded) and the outcomes."""
    rng = np.random.default_rng(seed)
    fc.reset(np.random.default_rng(seed + 1))
    xs, fs, ps, ys = [], [], [], []
    for t in range(1, T + 1):
        x = np.zeros(0) if context is None else context(t, rng)
        f = fc.predict(x)
        p = f.mean if isinstance(f, Forecast) else float(f)
        y = float(outcome(t, p, rng))
        fc.update(x, p, y)
        xs.append(x)
        fs.append(f)
        ps.append(p)
        ys.append(y)
    return xs, fs, np.array(ps), np.array(ys)


def _coin(q: float):
    return lambda t, p, rng: float(rng.random() < q)


def _contrarian(t, p, rng):  # the adaptive worst case of §5: y_t = 1{p_t < 1/2}
    return float(p < 0.5)


def _gauss2(t, rng):
    return rng.standard_normal(2)


# ------------------------------------------------------------------ bit prediction (§2)


def _bit_rule(y: list[float]) -> list[float]:
    """The rule as printed: p_1 = 0, then p_t = 1 if sum_{s<t}(y_s - p_s) >= 0 else 0."""
    p, s = [], 0.0
    for t, yt in enumerate(y):
        pt = 0.0 if t == 0 else (1.0 if s >= 0 else 0.0)
        p.append(pt)
        s += yt - pt
    return p


def _bit_forecasts(y: list[float]) -> list[float]:
    fc = BitPrediction()
    fc.reset(np.random.default_rng(0))
    out = []
    for yt in y:
        p = float(fc.predict(np.zeros(0)))
        fc.update(np.zeros(0), p, yt)
        out.append(p)
    return out


def test_bit_prediction_follows_the_printed_rule_on_random_sequences() -> None:
    rng = np.random.default_rng(0)
    for _ in range(30):
        T = int(rng.integers(1, 300))
        y = (rng.random(T) < rng.random()).astype(float).tolist()
        assert _bit_forecasts(y) == _bit_rule(y)


def test_bit_prediction_does_not_always_repeat_the_last_bit() -> None:
    # the paper's remark that the rule "predicts the last bit" does not hold for it.
    y = [1.0, 1.0, 0.0, 1.0]
    p = _bit_forecasts(y)
    assert p == [0.0, 1.0, 1.0, 1.0]  # p_4 = 1 although y_3 = 0
    assert p[3] != y[2]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([0.0, 1.0]), min_size=1, max_size=200))
def test_bit_prediction_bias_is_at_most_one(y: list[float]) -> None:
    p = _bit_forecasts(y)
    assert p == _bit_rule(y)
    prefix = np.cumsum(np.array(p) - np.array(y))
    assert np.all(np.abs(prefix) <= 1.0)  # every prefix is itself a run of the game


# ------------------------------------------------------------ randomized rounding (§8)


def _rounding_law(p: float, N: int) -> list[float]:
    """docs/ERRATA.md: P(round to n/N) = max(0, 1 - N |p - n/N|)."""
    return [max(0.0, 1.0 - N * abs(p - n / N)) for n in range(N + 1)]


def _as_grid_probs(f: Forecast, N: int) -> list[float]:
    probs = [0.0] * (N + 1)
    for point, w in zip(f.points, f.probs, strict=False):
        n = round(point * N)
        assert abs(point - n / N) <= 1e-12, f"atom {point} is off the grid 1/{N}"
        probs[n] += w
    return probs


def test_rounding_erratum_example() -> None:
    f = K29Rounded(N=20).round(0.89)
    probs = dict(zip(f.points, f.probs, strict=False))
    assert sorted(probs) == pytest.approx([0.85, 0.90])
    assert probs[0.9] == pytest.approx(0.8, abs=1e-12)
    assert probs[0.85] == pytest.approx(0.2, abs=1e-12)
    assert f.internal == 0.89


@pytest.mark.parametrize("N", [1, 2, 3, 7, 10, 20])
def test_rounding_law_and_unbiasedness(N: int) -> None:
    rng = np.random.default_rng(N)
    fc = K29Rounded(N=N)
    for p in [0.0, 1.0, 0.5, 1e-12, 1 - 1e-12, *rng.random(300)]:
        f = fc.round(float(p))
        np.testing.assert_allclose(_as_grid_probs(f, N), _rounding_law(float(p), N), atol=1e-12)
        assert math.fsum(a * w for a, w in zip(f.points, f.probs, strict=False)) == pytest.approx(
            p, abs=1e-12
        )  # unbiased
        assert len(f.points) <= 2
        assert all(abs(a - p) < 1 / N + 1e-12 for a in f.points)  # at most one grid step away
        assert f.internal == p


@pytest.mark.parametrize("N", [1, 2, 5, 10, 20])
def test_grid_points_map_to_themselves(N: int) -> None:
    fc = K29Rounded(N=N)
    for n in range(N + 1):
        f = fc.round(n / N)
        assert f.is_point and f.points[0] == pytest.approx(n / N, abs=1e-15)


@pytest.mark.parametrize("N, n", [(22, 15), (100, 7)])
def test_grid_points_map_to_themselves_despite_rounding_of_p_times_N(N: int, n: int) -> None:
    f = K29Rounded(N=N).round(n / N)
    assert f.is_point and f.points[0] == n / N


def test_rounded_forecaster_updates_with_the_unrounded_forecast() -> None:
    # the protocol's step 5 (arena/protocols.py): K29 with rounding keeps K29's state;
    # its internal forecasts equal plain K29's.
    T = 80
    rounded, plain = K29Rounded(N=10), K29()
    rounded.reset(np.random.default_rng(0))
    plain.reset(np.random.default_rng(0))
    rng = np.random.default_rng(1)
    for _ in range(T):
        f = rounded.predict(np.zeros(0))
        p = plain.predict(np.zeros(0))
        assert f.internal == p
        y = float(rng.random() < 0.3)
        realized = f.sample(rng.random())  # what the arena would reveal
        rounded.update(np.zeros(0), realized, y)
        plain.update(np.zeros(0), p, y)


# --------------------------------------------------- anticorrelation of the DF forecasters


def _fs(p, q):
    return 0.5 * min(p, q) ** 2 + 0.5 * min(1 - p, 1 - q) ** 2 + 5 / 6


def _dot(a, b):
    return sum(u * v for u, v in zip(a, b, strict=False))


# name -> (make forecaster, plain-Python kernel on ((x, p), (x', p')), Lipschitz constant in p, context)
DF_CASES = {
    "dmm": (lambda **kw: DMM(features=["1", "p"], **kw), lambda x, p, xx, q: 1 + p * q, 1.0, None),
    "dmm_p2": (lambda **kw: DMM(features=["1", "p2"], **kw), lambda x, p, xx, q: 1 + p * p * q * q, 2.0, None),
    "linear_df": (LinearDF, lambda x, p, xx, q: 1 + p * q + _dot(x, xx), 1.0, _gauss2),
    "k29": (K29, lambda x, p, xx, q: _fs(p, q), 1.0, None),
    "kernel_df": (
        lambda **kw: KernelDF(kernel=["fs", {"features": ["1", "p", "x"]}], **kw),
        lambda x, p, xx, q: _fs(p, q) + 1 + p * q + _dot(x, xx),
        2.0,
        _gauss2,
    ),
    "kernel_df_rbf": (
        lambda **kw: KernelDF(kernel={"product": ["fs", {"rbf": 0.5}]}, **kw),
        lambda x, p, xx, q: _fs(p, q) * math.exp(-0.5 * sum((a - b) ** 2 for a, b in zip(x, xx, strict=False))),
        1.0,
        _gauss2,
    ),
}


# Both search paths when the forecasters offer a choice (``fast=False`` forces the direct sums).
PATHS = [{}, {"fast": False}] if "fast" in inspect.signature(KernelDF.__init__).parameters else [{}]


@pytest.mark.parametrize("path", PATHS, ids=lambda kw: "direct" if kw else "default")
@pytest.mark.parametrize("outcomes", ["coin", "contrarian"])
@pytest.mark.parametrize("name", sorted(DF_CASES))
def test_df_forecasts_are_anticorrelated_with_the_next_residual(name: str, outcomes: str, path: dict) -> None:
    make, k, lip, context = DF_CASES[name]
    fc = make(**path)
    T = 120
    xs, _, p, y = _drive(fc, T, _coin(0.3) if outcomes == "coin" else _contrarian, context, seed=len(name))
    w = y - p
    bisected = 0
    for t in range(T):
        S = lambda q: sum(w[s] * k(list(xs[t]), q, list(xs[s]), p[s]) for s in range(t))  # noqa: B023
        past = float(np.sum(np.abs(w[:t])))
        eps = 1e-12 * (1 + past)  # my recomputation vs the forecaster's own sums
        allowance = lip * fc.tol / 2 * past + eps
        St = S(p[t])
        # The defensive property: the cross term w_t S_t(p_t) is (nearly) non-positive whatever y_t is.
        assert w[t] * St <= abs(w[t]) * allowance, (t, p[t], St)
        if p[t] == 1.0:
            assert S(1.0) >= -eps  # Alg. 2: predict 1 only when S(1) >= 0
        elif p[t] == 0.0:
            assert S(0.0) <= eps  # ... and 0 only when S(0) <= 0
        else:
            bisected += 1
            assert abs(St) <= allowance  # a root up to the search width
            assert S(0.0) > -eps and S(1.0) < eps  # bisection only when S(0) > 0 > S(1)
    assert bisected > 0  # the bisection branch was exercised


@pytest.mark.parametrize("path", PATHS, ids=lambda kw: "direct" if kw else "default")
def test_linear_df_equals_the_closed_form_root(path: dict) -> None:
    # Phi = [1, p, x] makes S_t(p) = <Phi(x_t, p), V> = a + b p with V = sum_{s<t} w_s Phi_s.
    fc = LinearDF(**path)
    for outcome in (_coin(0.6), _contrarian):
        xs, _, p, y = _drive(fc, 200, outcome, _gauss2, seed=3)
        V = [0.0, 0.0, 0.0, 0.0]
        checked = 0
        for t in range(200):
            x = list(xs[t])
            a, b = V[0] + x[0] * V[2] + x[1] * V[3], V[1]
            scale = 1e-12 * (1 + sum(abs(v) for v in V) * (1 + sum(abs(u) for u in x)))
            if b < 0:
                expected = min(max(-a / b, 0.0), 1.0)  # the root of a + b p, clipped to [0, 1]
                assert abs(p[t] - expected) <= fc.tol / 2 + scale / abs(b), (t, a, b)
                checked += 0.0 < expected < 1.0
            elif abs(a + b) > scale:  # S increasing (or flat): Alg. 2 returns an end point
                assert p[t] == (1.0 if a + b >= 0 else 0.0)
            w = y[t] - p[t]
            V = [V[0] + w, V[1] + w * p[t], V[2] + w * x[0], V[3] + w * x[1]]
        assert checked > 10


def test_first_forecast_of_kernel_df_is_one() -> None:
    # S_1 = 0 identically, and Alg. 2 returns 1 when S(1) >= 0.
    for make, *_ in DF_CASES.values():
        fc = make()
        fc.reset(np.random.default_rng(0))
        assert fc.predict(np.zeros(2)) == 1.0


# ---------------------------------------------------------------------------- baselines


def _ogd_reference(xs, ys, lr, schedule, M, intercept):
    """Projected OGD written out: p_t = clip(<w_t, z_t>), w_{t+1} = Proj(w_t - lr_t (<w_t, z_t> - y_t) z_t)."""
    d = len(xs[0]) + (1 if intercept else 0)
    w = [0.0] * d
    out = []
    for t, (x, y) in enumerate(zip(xs, ys, strict=False), start=1):
        z = ([1.0] if intercept else []) + list(x)
        raw = _dot(w, z)
        out.append(min(max(raw, 0.0), 1.0))
        step = lr if schedule == "fixed" else lr / math.sqrt(t)
        w = [wi - step * (raw - y) * zi for wi, zi in zip(w, z, strict=False)]
        norm = math.sqrt(_dot(w, w))
        if norm > M:
            w = [wi * M / norm for wi in w]
    return out


@pytest.mark.parametrize("schedule", ["fixed", "sqrt"])
@pytest.mark.parametrize("M", [0.3, 10.0])
@pytest.mark.parametrize("intercept", [True, False])
def test_ogd_matches_projected_ogd(schedule: str, M: float, intercept: bool) -> None:
    fc = OGD(lr=0.5, schedule=schedule, M=M, intercept=intercept)
    xs, _, p, y = _drive(fc, 300, lambda t, p, rng: float(rng.random() < 0.7), _gauss2, seed=4)
    np.testing.assert_allclose(p, _ogd_reference(xs, y, 0.5, schedule, M, intercept), atol=1e-12)


def test_ogd_projection_is_active_with_a_small_ball() -> None:
    fc = OGD(lr=1.0, schedule="fixed", M=0.3)
    _drive(fc, 50, lambda t, p, rng: 1.0, _gauss2)
    assert np.linalg.norm(fc._w) == pytest.approx(0.3, rel=1e-12)


def test_running_mean_window_mean_last_outcome_constant() -> None:
    rng = np.random.default_rng(5)
    ys = (rng.random(150) < 0.4).astype(float)
    outcome = lambda t, p, r: ys[t - 1]
    _, _, p, _ = _drive(RunningMean(), 150, outcome)
    np.testing.assert_allclose(p, [(1 + sum(ys[:t])) / (2 + t) for t in range(150)], rtol=1e-14)
    for window in (1, 7, 50):
        _, _, p, _ = _drive(WindowMean(window), 150, outcome)
        expected = [0.5 if t == 0 else sum(ys[max(0, t - window) : t]) / min(t, window) for t in range(150)]
        np.testing.assert_allclose(p, expected, atol=1e-12)
    _, _, p, _ = _drive(LastOutcome(), 150, outcome)
    np.testing.assert_array_equal(p, [0.5, *ys[:-1]])
    _, _, p, _ = _drive(Constant(0.3), 150, outcome)
    np.testing.assert_array_equal(p, np.full(150, 0.3))


def test_reset_clears_state() -> None:
    for make in (
        RunningMean,
        lambda: WindowMean(5),
        LastOutcome,
        lambda: OGD(lr=0.3),
        BitPrediction,
        K29,
        LinearDF,
        lambda: K29Rounded(N=5),
    ):
        fc = make()
        first = _drive(fc, 30, _coin(0.5), _gauss2 if isinstance(fc, (OGD, LinearDF)) else None, seed=7)[2]
        again = _drive(fc, 30, _coin(0.5), _gauss2 if isinstance(fc, (OGD, LinearDF)) else None, seed=7)[2]
        np.testing.assert_array_equal(first, again)


# ---------------------------------------------------------------- constructor messages


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: KernelDF(tol=0), r"kernel_df: tol=0 must be in \[2\*\*-52, 1\), e\.g\. tol: 1e-10"),
        (lambda: KernelDF(tol=1.0), r"kernel_df: tol=1\.0 must be in \[2\*\*-52, 1\)"),
        (lambda: KernelDF(tol="small"), r"kernel_df: tol='small' must be in \[2\*\*-52, 1\)"),
        (lambda: K29(tol=-1e-3), r"k29: tol=-0\.001 must be in \[2\*\*-52, 1\)"),
        (lambda: DMM(tol=2), r"dmm: tol=2 must be in \[2\*\*-52, 1\)"),
        (lambda: LinearDF(tol=0.0), r"linear_df: tol=0\.0 must be in \[2\*\*-52, 1\)"),
        (lambda: K29Rounded(tol=0), r"k29_rounded: tol=0 must be in \[2\*\*-52, 1\)"),
        (lambda: K29(tol=1e-300), r"k29: tol=1e-300 must be in \[2\*\*-52, 1\)"),
        (
            lambda: K29Rounded(N=0),
            (
                r"k29_rounded: N=0 must be an integer >= 1 \(the grid is \{0, 1/N, \.\.\., 1\}\), "
                r"e\.g\. N: 10"
            ),
        ),
        (lambda: K29Rounded(N=2.5), r"k29_rounded: N=2\.5 must be an integer >= 1"),
        (lambda: K29Rounded(delta=0), r"k29_rounded: delta=0 must be in \(0, 1\), e\.g\. delta: 0\.05"),
        (lambda: K29Rounded(delta=1.0), r"k29_rounded: delta=1\.0 must be in \(0, 1\)"),
        (lambda: KernelDF(kernel="fz"), r"unknown kernel 'fz'"),
        (lambda: DMM(features=["1", "q"]), r"unknown feature term 'q'"),
        (lambda: WindowMean(0), r"window_mean: window=0 must be an integer >= 1, e\.g\. window: 50"),
        (lambda: WindowMean(2.5), r"window_mean: window=2\.5 must be an integer >= 1"),
        (lambda: OGD(lr=0), r"ogd: lr=0 must be > 0, e\.g\. lr: 0\.1"),
        (lambda: OGD(lr=-0.1), r"ogd: lr=-0\.1 must be > 0"),
        (lambda: OGD(schedule="exp"), r"ogd: schedule='exp'; expected 'fixed' or 'sqrt'"),
        (lambda: OGD(M=0), r"ogd: M=0 must be > 0 \(the radius of the projection ball\)"),
        (lambda: Constant(1.5), r"constant: c=1\.5 is outside \[0, 1\]; give a probability such as c: 0\.5"),
        (lambda: Constant(-0.1), r"constant: c=-0\.1 is outside \[0, 1\]"),
        (lambda: Constant(float("nan")), r"constant: c=nan is outside \[0, 1\]"),
    ],
)
def test_constructor_errors_name_the_value_and_the_fix(make, message) -> None:
    with pytest.raises(ValueError, match=message):
        make()


def test_kernel_claims_follow_the_kernel() -> None:
    assert K29().claims == ("kernel", "search_precision", "smce")
    assert LinearDF().claims == ("kernel", "search_precision", "linear_regret")
    assert DMM().claims == ("kernel", "search_precision")
    assert KernelDF(kernel=["fs", {"features": ["1", "p", "x"]}]).claims == (
        "kernel",
        "search_precision",
        "smce",
        "linear_regret",
    )
    assert K29Rounded().claims == ("kernel", "search_precision", "smce", "rounded_calibration")
    assert BitPrediction().claims == ("bit",)
    assert RunningMean().claims == ()
