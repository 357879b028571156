"""The compiled K29 search (forecasters.fastk29, forecasters.fstrie) and the oblivious fast path of arena.play.

The fast forecasters are checked against the direct O(t) implementation (``fast=False``)
over thousands of rounds, against oblivious and adaptive natures; the trie's sums
against numpy brute force; and the oblivious fast path against the step loop
(``fast_path=False``), array for array.

References
----------
Perdomo & Recht §3 (Alg. 2), §7 (Alg. 4), §8 (K29, rounding).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena import play
from arena.kernels import make_kernel
from arena.protocols import Bernoulli, Forecast, Nature, OutcomeLaw
from arena.referee import Referee
from arena.search import anticorrelation_search
from forecasters.defensive import DMM, K29, K29Rounded, KernelDF, LinearDF
from forecasters.fastk29 import K29Engine
from forecasters.fstrie import FSTrie, search_depth

SUM_KERNEL = ["fs", {"features": ["1", "p", "x"]}]
RECORDED = ("X", "p_mean", "p", "p_internal", "y", "y_prob")

# ----------------------------------------------------------------------------- helpers


def _k_fs(p, P):
    return 0.5 * np.minimum(p, P) ** 2 + 0.5 * np.minimum(1 - p, 1 - P) ** 2 + 5.0 / 6.0


def _dyadic(rng, n: int, depth: int) -> np.ndarray:
    """Points on the grid 2^-depth Z of [0, 1], with ties and both ends."""
    P = rng.integers(0, 2**depth + 1, n) / 2.0**depth
    P[rng.random(n) < 0.1] = 0.0
    P[rng.random(n) < 0.1] = 1.0
    return P


def _filled(P, W, depth) -> FSTrie:
    trie = FSTrie(depth, capacity=4)  # small, so that reserve() has to grow it
    for p, w in zip(P, W, strict=False):
        trie.insert(p, w)
    return trie


class _Bits(Nature):
    """Replays a fixed bit sequence (oblivious); answers plain floats."""

    name = "test_bits"
    adaptive = False

    def __init__(self, bits):
        self.bits = [float(b) for b in bits]
        self.length = len(self.bits)

    def respond(self, t, x, forecast):
        return self.bits[t - 1]


class _TwoCoins(OutcomeLaw):
    """A law that spends two uniforms per sample: the fast path must draw it in round order."""

    def __init__(self, q):
        self.q = q

    def sample(self, rng):
        return 1.0 if rng.random() < self.q and rng.random() < 0.9 else 0.0

    def cdf(self, v):
        return 0.0 if v < 0 else (1.0 - 0.9 * self.q if v < 1 else 1.0)


class _Mixed(Nature):
    """Oblivious, with a 2-d context, mixing Bernoulli laws, another law and plain outcomes."""

    name = "test_mixed"
    adaptive = False
    context_dim = 2

    def context(self, t):
        return self.rng.normal(size=2)

    def respond(self, t, x, forecast):
        if t % 7 == 0:
            return _TwoCoins(0.6)
        if t % 5 == 0:
            return float(t % 2)
        return Bernoulli(1.0 / (1.0 + np.exp(-x[0])))


class _Phases(Nature):
    """Oblivious, no context: one Bernoulli law for rounds 1..20000 (a whole chunk of answers and part of the
    next), then a law per round, then another law and plain outcomes among them from round 30001."""

    name = "test_phases"
    adaptive = False

    def reset(self, rng):
        super().reset(rng)
        self.law = Bernoulli(0.3)

    def respond(self, t, x, forecast):
        if t <= 20_000:
            return self.law
        if t > 30_000 and t % 7 == 0:
            return _TwoCoins(0.6)
        if t > 30_000 and t % 5 == 0:
            return float(t % 2)
        return Bernoulli((t % 10) / 10)


class _BadAt(Nature):
    """Oblivious; breaks the protocol (outcome 2) at round ``t_bad``."""

    name = "test_bad_at"
    adaptive = False

    def __init__(self, t_bad):
        self.t_bad = t_bad

    def respond(self, t, x, forecast):
        return 2.0 if t == self.t_bad else Bernoulli(0.4)


def _internal(r) -> np.ndarray:
    return r.recorder.p_internal


class _NoReferee(Referee):
    """Skips scoring (the O(T^2) kernel sums) where a test compares recorded games only."""

    def score(self, game, rec, forecaster):
        return {}, {}, pd.DataFrame()


# ----------------------------------------------------------------------------- the trie


@pytest.mark.parametrize("depth", [3, 12, 35])
def test_trie_sums_match_brute_force(depth: int) -> None:
    rng = np.random.default_rng(depth)
    n = 600
    P, W = _dyadic(rng, n, depth), rng.normal(size=n)
    trie = _filled(P, W, depth)
    assert trie.n_nodes <= 2 * len(np.unique(P)) - 1
    np.testing.assert_allclose(trie.totals(), [W.sum(), (W * P**2).sum(), (W * (1 - P) ** 2).sum()], atol=1e-9)
    thresholds = np.r_[rng.random(40), rng.choice(P, 40), 0.0, 1.0, -0.5, 1.5, 2.0**-depth, 1 - 2.0**-depth]
    for q in thresholds:
        below = P < q
        want = [W[below].sum(), (W * P**2)[below].sum(), (W * (1 - P) ** 2)[below].sum()]
        np.testing.assert_allclose(trie.sums_below(q), want, atol=1e-9, err_msg=f"threshold {q!r}")
        if 0 <= q <= 1:
            assert trie.value(q) == pytest.approx(float(W @ _k_fs(q, P)), abs=1e-9)


@pytest.mark.parametrize("tol", [2.0**-34, 1e-3, 0.3])
def test_trie_search_takes_the_path_of_anticorrelation_search(tol: float) -> None:
    n, depth = search_depth(tol)
    rng = np.random.default_rng(1)
    for trial in range(60):
        size = int(rng.integers(0, 40))
        P, W = _dyadic(rng, size, depth), rng.normal(size=size)
        trie = _filled(P, W, depth)
        c_fs, (a, b, c) = float(trial % 3 != 0), rng.normal(size=3) * (trial % 2)

        def S(p, c_fs=c_fs, W=W, P=P, a=a, b=b, c=c):
            return c_fs * float(W @ _k_fs(p, P)) + a + b * p + c * p * p

        direct = anticorrelation_search(S, tol=tol)
        assert trie.search(n, c_fs, a, b, c) == pytest.approx(direct, abs=1e-9)


def test_trie_refuses_points_off_its_grid() -> None:
    trie = FSTrie(10)
    with pytest.raises(ValueError, match=r"p=0\.3 is not a multiple of 2\*\*-10"):
        trie.insert(0.3, 1.0)
    with pytest.raises(ValueError, match="depth=60 must be an integer in"):
        FSTrie(60)
    with pytest.raises(ValueError, match="needs keys of depth"):
        FSTrie.for_tol(1e-300)


def test_fast_must_be_a_boolean() -> None:
    with pytest.raises(ValueError, match=r"k29: fast='yes' must be true or false"):
        K29(fast="yes")


def test_kernels_without_the_quadratic_form_use_the_direct_sums() -> None:
    assert not KernelDF(kernel={"rbf": 1.0}).uses_fast_path
    assert not KernelDF(kernel={"product": ["fs", {"rbf": 1.0}]}).uses_fast_path
    assert KernelDF(kernel=["fs", "fs", {"features": ["p2", "2*px"]}]).uses_fast_path
    assert not K29(fast=False).can_play_oblivious


def test_search_depth_rounds_tol_down_to_a_power_of_two() -> None:
    assert search_depth(2.0**-34) == search_depth(1e-10) == (34, 35)
    assert search_depth(0.5) == (1, 2) and search_depth(0.7) == (1, 2)


def test_node_count_is_linear_in_the_rounds() -> None:
    T = 3000
    r = play("binary", K29(), "iid_bernoulli", T=T, seed=2, keep_forecasts=False, referee=_NoReferee())
    assert r.forecaster.engine.trie.n_nodes <= 2 * T + 1


# ----------------------------------------------------------------------------- fast == direct


@pytest.mark.parametrize(
    ("make", "nature", "T"),
    [
        (K29, "anti_forecaster", 3000),
        (K29, "bias_pusher", 2000),
        (K29, "iid_bernoulli", 1000),
        (K29Rounded, "bias_pusher", 1500),
        (K29Rounded, "iid_bernoulli", 1000),
        (lambda fast: KernelDF(kernel=SUM_KERNEL, fast=fast), "logistic", 1200),
    ],
    ids=["k29-anti", "k29-pusher", "k29-iid", "rounded-pusher", "rounded-iid", "sumkernel-logistic"],
)
def test_fast_forecasts_equal_the_direct_ones(make, nature, T) -> None:
    fast, direct = (
        play(
            "binary",
            make(fast=f),
            nature,
            T=T,
            seed=3,
            keep_forecasts=False,
            fast_path=False,
            referee=None if f else _NoReferee(),
        )
        for f in (True, False)
    )
    assert fast.forecaster.uses_fast_path and not direct.forecaster.uses_fast_path
    np.testing.assert_allclose(_internal(fast), _internal(direct), atol=1e-9, rtol=0)
    np.testing.assert_allclose(fast.recorder.p, direct.recorder.p, atol=1e-9, rtol=0)
    # bits: the direct sums (BLAS dots) move a forecast by rounding only, so an adaptive nature's answer could
    # differ only for a forecast within 1e-9 of its threshold; exact
    np.testing.assert_array_equal(fast.recorder.y, direct.recorder.y)
    assert all(c.holds for c in fast.certificates.values() if not c.probabilistic), fast.certificates


@pytest.mark.parametrize(
    "make",
    [lambda f: LinearDF(fast=f), lambda f: DMM(features=["1", "2*p", "p2", "px"], fast=f)],
    ids=["linear_df", "dmm"],
)
def test_fast_finite_kernels_equal_the_direct_ones(make) -> None:
    runs = [
        play(
            "binary",
            make(f),
            "logistic",
            T=1000,
            seed=4,
            keep_forecasts=False,
            fast_path=False,
            referee=None if f else _NoReferee(),
        )
        for f in (True, False)
    ]
    np.testing.assert_allclose(runs[0].recorder.p, runs[1].recorder.p, atol=1e-9, rtol=0)
    assert all(c.holds for c in runs[0].certificates.values())


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(0, 1), min_size=1, max_size=250), st.sampled_from([2.0**-34, 2.0**-20, 1e-7]))
def test_fast_equals_direct_on_arbitrary_bits(bits, tol) -> None:
    forecasts = []
    for fc in (K29(tol=tol), K29(tol=tol, fast=False)):
        fc.reset(np.random.default_rng(0))
        ps = []
        for y in bits:
            p = fc.predict(np.zeros(0))
            fc.update(np.zeros(0), p, float(y))
            ps.append(p)
        forecasts.append(ps)
    np.testing.assert_allclose(forecasts[0], forecasts[1], atol=1e-9, rtol=0)
    # the same game through the oblivious fast path
    # (a referee that accepts this tolerance: the default one refuses tol > 2^-34 since issue 12)
    fast = play(
        "binary",
        K29(tol=tol),
        _Bits(bits),
        T=len(bits),
        seed=0,
        keep_forecasts=False,
        referee=Referee(max_tol=max(tol, 2.0**-34)),
    )
    # exact: the same compiled search and trie updates in the same order, in one loop or called round by round
    np.testing.assert_array_equal(fast.recorder.p, forecasts[0])


def test_an_outside_update_off_the_grid_switches_to_the_direct_sums() -> None:
    fast, direct = K29(), K29(fast=False)
    for fc in (fast, direct):
        fc.reset(np.random.default_rng(0))
        for p, y in [(0.5, 1.0), (0.3, 0.0), (0.25, 1.0)]:  # 0.3 is no forecast of the search
            fc.update(np.zeros(0), p, y)
    assert not fast.uses_fast_path and not fast.can_play_oblivious
    assert fast.predict(np.zeros(0)) == pytest.approx(direct.predict(np.zeros(0)), abs=1e-9)
    for fc in (fast, direct):  # and on: the trie keeps the grid points, a list the others
        for y in (0.0, 1.0, 1.0):
            fc.update(np.zeros(0), fc.predict(np.zeros(0)), y)
    assert fast.predict(np.zeros(0)) == pytest.approx(direct.predict(np.zeros(0)), abs=1e-9)
    assert fast.engine.trie.n_nodes > 0 and fast.engine.off_grid == [(0.3, -0.3)]


def test_summary_function_of_the_fast_path_is_the_direct_one() -> None:
    rng = np.random.default_rng(5)
    fast, direct = KernelDF(kernel=SUM_KERNEL), KernelDF(kernel=SUM_KERNEL, fast=False)
    for fc in (fast, direct):
        fc.reset(np.random.default_rng(0))
    for _ in range(50):
        x = rng.normal(size=2)
        p = fast.predict(x)
        y = float(rng.random() < 0.5)
        fast.update(x, p, y)
        direct.update(x, p, y)
    x = rng.normal(size=2)
    for p in (0.0, 0.123, 0.5, 1.0):
        assert fast.summary_function(x)(p) == pytest.approx(direct.summary_function(x)(p), abs=1e-9)


def test_the_engine_forecasts_as_algorithm_4_on_the_direct_sums() -> None:
    """K29Engine.forecast is the anticorrelation search on the direct summary function, round by round."""
    engine, direct = K29Engine(make_kernel(SUM_KERNEL), tol=2.0**-34), KernelDF(kernel=SUM_KERNEL, fast=False)
    direct.reset(np.random.default_rng(0))
    rng = np.random.default_rng(8)
    for _ in range(300):
        x = rng.normal(size=2)
        p = engine.forecast(x)
        assert p == pytest.approx(anticorrelation_search(direct.summary_function(x), tol=2.0**-34), abs=1e-9)
        y = float(rng.random() < 1.0 / (1.0 + np.exp(-x[0])))
        engine.update(x, p, y - p)
        direct.update(x, p, y)


# ----------------------------------------------------------------------------- the oblivious fast path


def test_batched_uniforms_equal_single_draws() -> None:
    a, b = np.random.default_rng(7), np.random.default_rng(7)
    np.testing.assert_array_equal(a.random(1000), [b.random() for _ in range(1000)])


@pytest.mark.parametrize(
    ("forecaster", "params", "nature", "T"),
    [
        ("k29", {}, "iid_bernoulli", 5000),
        ("k29_rounded", {"N": 7}, "logistic", 3000),
        ("k29_rounded", {}, "seattle_rain", 1460),
        ("kernel_df", {"kernel": SUM_KERNEL}, "logistic", 2000),
        ("linear_df", {}, "sinusoid", 2000),
        ("k29", {}, _Mixed(), 2000),
        ("kernel_df", {"kernel": SUM_KERNEL}, _Mixed(), 1000),
        ("k29", {}, _Phases(), 40_000),
    ],
)
def test_oblivious_fast_path_records_the_same_game(forecaster, params, nature, T) -> None:
    runs = [
        play(
            "binary",
            forecaster,
            nature,
            T=T,
            seed=11,
            forecaster_params=params,
            keep_forecasts=False,
            fast_path=fast_path,
            referee=_NoReferee(),
        )
        for fast_path in (True, False)
    ]
    assert runs[0].recorder.forecasts is None  # the fast path keeps no Forecast objects
    # exact: the fast path runs the step loop's compiled functions and scalar formulas in the same order (no
    # BLAS, no reordered sums), and both draw the same uniforms
    for name in RECORDED:
        np.testing.assert_array_equal(getattr(runs[0].recorder, name), getattr(runs[1].recorder, name), err_msg=name)
    assert len(runs[0].trace) == T


def test_oblivious_fast_path_is_scored_like_the_step_loop() -> None:
    runs = [
        play("binary", "k29", "iid_bernoulli", T=400, seed=1, keep_forecasts=False, fast_path=f) for f in (True, False)
    ]
    assert runs[0].summary == pytest.approx(runs[1].summary, nan_ok=True)
    assert {k: c.value for k, c in runs[0].certificates.items()} == {
        k: c.value for k, c in runs[1].certificates.items()
    }


def test_oblivious_fast_path_leaves_the_forecaster_in_the_step_loops_state() -> None:
    runs = [
        play(
            "binary",
            "kernel_df",
            "logistic",
            T=500,
            seed=1,
            forecaster_params={"kernel": SUM_KERNEL},
            keep_forecasts=False,
            fast_path=f,
        )
        for f in (True, False)
    ]
    x = np.array([1.0, 0.2, -0.3])
    # exact: the same operations in the same order on either path (see above)
    assert runs[0].forecaster.predict(x) == runs[1].forecaster.predict(x)
    np.testing.assert_array_equal(runs[0].forecaster.engine.v, runs[1].forecaster.engine.v)
    tries = [r.forecaster.engine.trie for r in runs]
    assert tries[0].n_nodes == tries[1].n_nodes
    np.testing.assert_array_equal(tries[0].nodes[: tries[0].n_nodes], tries[1].nodes[: tries[1].n_nodes])


def test_kept_forecasts_and_adaptive_natures_use_the_step_loop() -> None:
    kept = play("binary", "k29_rounded", "iid_bernoulli", T=300, seed=0)  # keep_forecasts defaults to T <= 10^4
    assert len(kept.recorder.forecasts) == 300 and "forecast" in kept.trace
    fast = play("binary", "k29_rounded", "iid_bernoulli", T=300, seed=0, keep_forecasts=False)
    for name in RECORDED:
        np.testing.assert_array_equal(getattr(kept.recorder, name), getattr(fast.recorder, name), err_msg=name)


def test_a_protocol_break_is_reported_at_its_round_with_the_fast_path_on() -> None:
    for fast_path in (True, False):
        r = play(
            "binary", "k29", _BadAt(37), T=100, seed=0, keep_forecasts=False, fast_path=fast_path, referee=_NoReferee()
        )
        assert r.forfeit is not None and r.forfeit.step == 37 and r.forfeit.who == "nature"
        assert r.recorder.n == 36


def test_rounded_two_point_means_match_forecast_mean() -> None:
    fc = K29Rounded(N=20)
    r = play("binary", fc, "iid_bernoulli", T=2000, seed=9, keep_forecasts=False, referee=_NoReferee())
    want = [fc.round(p).mean for p in r.recorder.p_internal]
    # exact: the fast path rounds each internal forecast with this same K29Rounded.round (same code, same input)
    np.testing.assert_array_equal(r.recorder.p_mean, want)
    assert isinstance(fc.round(0.3), Forecast)
