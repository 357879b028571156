"""Exact smooth calibration error: the O(T log T) program against independent checks."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.metrics.smce import smce, smce_curve, smce_lp

KINDS = ("paper", "pm")


def _close(a: float, b: float, scale: float = 1.0) -> bool:
    # 1e-9 relative, plus HiGHS's own feasibility tolerance (1e-7 on each f value), which moves the LP's
    # objective by up to 1e-7 * sum |w| = 1e-7 * scale (hypothesis found p = [0, 1e-8], y = [0, 0], where the
    # LP says 1e-16 for the exact 1e-8; and p = [0, 0, 6e-8], y = [1, 1, 0], where it is 1.2e-7 above).
    return abs(a - b) <= 1e-9 * max(1.0, abs(b), scale) + 1e-7 * max(1.0, scale)


def _random_case(rng: np.random.Generator, T: int, style: str) -> tuple[np.ndarray, np.ndarray]:
    """Forecasts with ties, endpoints and continuous values; outcomes bits or probabilities."""
    if style == "grid":
        p = rng.choice(np.linspace(0.0, 1.0, int(rng.integers(1, 8))), T)
    elif style == "ends":
        p = rng.choice([0.0, 1.0, rng.random()], T)
    else:
        p = rng.random(T)
    q = rng.random()  # a miscalibrated law, so that the error is not always tiny
    y = (rng.random(T) < q).astype(float) if rng.random() < 0.8 else rng.random(T)
    return p, y


# ----------------------------------------------------------------- against the LP


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("style", ["grid", "ends", "continuous"])
def test_matches_lp_on_random_small_inputs(kind: str, style: str) -> None:
    rng = np.random.default_rng([KINDS.index(kind), len(style)])  # deterministic, unlike hash()
    for _ in range(60):
        T = int(rng.integers(1, 40))
        p, y = _random_case(rng, T, style)
        scale = float(np.abs(y - p).sum())
        assert _close(smce(p, y, kind), smce_lp(p, y, kind), scale)


@pytest.mark.parametrize("kind", KINDS)
def test_matches_lp_on_a_larger_input(kind: str) -> None:
    rng = np.random.default_rng(7)
    T = 2000
    p = np.round(rng.random(T), 3)  # about a thousand distinct values, many ties
    y = (rng.random(T) < np.clip(p + 0.1 * np.sin(12 * p), 0, 1)).astype(float)
    assert _close(smce(p, y, kind), smce_lp(p, y, kind), T)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from([0.0, 0.25, 0.5, 1.0]) | st.floats(0.0, 1.0), st.floats(0.0, 1.0)),
        min_size=1,
        max_size=25,
    ),
    st.sampled_from(KINDS),
)
def test_matches_lp_property(pairs: list[tuple[float, float]], kind: str) -> None:
    p, y = map(np.array, zip(*pairs, strict=False))
    assert _close(smce(p, y, kind), smce_lp(p, y, kind), float(np.abs(y - p).sum()))


# ----------------------------------------------------------------- brute force


def _grid_brute_force(p: np.ndarray, y: np.ndarray, kind: str, h: float) -> float:
    """Max over f on an h-grid at the distinct forecasts (exact when forecasts lie on it).

    With forecasts on the grid, every vertex of the feasible polytope has grid
    coordinates (sums of gaps and the bounds), so the grid search is exact.
    """
    v, inv = np.unique(p, return_inverse=True)
    W = np.bincount(inv.ravel(), weights=y - p, minlength=len(v))
    lo = 0.0 if kind == "paper" else -1.0
    levels = np.arange(lo, 1.0 + h / 2, h)
    best = 0.0
    for f in itertools.product(levels, repeat=len(v)):
        f = np.array(f)
        if np.all(np.abs(np.diff(f)) <= np.diff(v) + 1e-12):
            best = max(best, abs(float(f @ W)))
    return best


@pytest.mark.parametrize("kind", KINDS)
def test_matches_grid_brute_force(kind: str) -> None:
    rng = np.random.default_rng(11)
    grid = np.linspace(0.0, 1.0, 5)
    for _ in range(25):
        T = int(rng.integers(1, 9))
        p = rng.choice(grid[rng.permutation(5)[: rng.integers(1, 4)]], T)
        y = rng.random(T).round(2)
        assert _close(smce(p, y, kind), _grid_brute_force(p, y, kind, 0.25))


# ----------------------------------------------------------------- closed forms


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("v", [0.0, 0.3, 1.0])
def test_single_forecast_value_is_abs_total(kind: str, v: float) -> None:
    # f is a constant c in the range; |c W| is largest at |c| = 1.
    y = np.array([1.0, 0.0, 1.0, 1.0])
    p = np.full(4, v)
    assert smce(p, y, kind) == pytest.approx(abs(np.sum(y - p)), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("a,b", [(1.0, 0.5), (0.5, 1.0), (0.3, 0.3), (2.0, 0.0)])
def test_points_zero_and_one_with_opposite_weights(kind: str, a: float, b: float) -> None:
    # Weights +a at 0 and -b at 1, |f(0) - f(1)| <= 1.
    # paper: f(0)=1, f(1)=0 gives a; f(0)=0, f(1)=1 gives -b; a f0 - b f1 is
    # bilinear-free so a vertex is optimal: smCE = max(a, b).
    # pm: a g0 - b g1 with g1 >= g0 - 1 is at most (a - b) g0 + b <= a when a >= b
    # (symmetrically b), attained by (1, 0) or (0, -1): again max(a, b).
    p = np.array([0.0, 0.0, 1.0, 1.0])
    y = np.array([a / 2, a / 2, 1.0 - b / 2, 1.0 - b / 2])
    assert smce(p, y, kind) == pytest.approx(max(a, b), rel=1e-12)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("a,b", [(1.0, 0.5), (0.2, 1.0), (0.4, 0.3)])
def test_points_zero_and_half(kind: str, a: float, b: float) -> None:
    # Weights +a at 0 and -b at 1/2. For the paper form the feasible set
    # {f in [0,1]^2, |f0 - f1| <= 1/2} has vertices (0,0), (1/2,0), (1,1/2), (1,1),
    # (1/2,1), (0,1/2); the largest |a f0 - b f1| over them is the answer.
    expected = max(a / 2, abs(a - b / 2), abs(a - b), abs(a / 2 - b), b / 2)
    p = np.array([0.0, 0.5, 0.5])
    y = np.array([a, 0.5 - b / 2, 0.5 - b / 2])
    assert smce(p, y, kind) == pytest.approx(expected, rel=1e-12)


def test_same_sign_weights_use_the_constant_function() -> None:
    # All residuals positive: f = 1 gives sum w, and no f in range does better.
    p = np.array([0.1, 0.4, 0.9])
    y = np.ones(3)
    assert smce(p, y) == pytest.approx(np.sum(y - p), rel=1e-12)


# ----------------------------------------------------------------- structure


def test_paper_and_pm_forms_agree() -> None:
    # On [0, 1] a best [-1, 1] function lies in [0, 1] or [-1, 0] (see smce Notes);
    # the code computes the two with different Lipschitz constants, so this is a check.
    rng = np.random.default_rng(5)
    for _ in range(40):
        p, y = _random_case(rng, int(rng.integers(1, 300)), "continuous")
        a, b = smce(p, y, "paper"), smce(p, y, "pm")
        assert _close(a, b, float(np.abs(y - p).sum()))


def test_bounds_and_order_invariance() -> None:
    rng = np.random.default_rng(9)
    for _ in range(30):
        p, y = _random_case(rng, int(rng.integers(1, 200)), "grid")
        w = y - p
        value = smce(p, y)
        assert abs(w.sum()) - 1e-9 <= value <= np.abs(w).sum() + 1e-9
        perm = rng.permutation(len(p))
        assert _close(smce(p[perm], y[perm]), value)


def test_empty_and_single_round() -> None:
    assert smce([], []) == 0.0
    assert smce_lp([], [], "pm") == 0.0
    assert smce([0.25], [1.0]) == pytest.approx(0.75)
    assert smce([1.0], [0.0], "pm") == pytest.approx(1.0)


def test_curve_matches_prefixes() -> None:
    rng = np.random.default_rng(2)
    p, y = _random_case(rng, 500, "continuous")
    ts = [0, 1, 10, 100, 500]
    curve = smce_curve(p, y, ts, "pm")
    assert curve.dtype == float and curve.shape == (5,)
    np.testing.assert_allclose(curve, [smce(p[:t], y[:t], "pm") for t in ts], rtol=1e-12)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("style", ["grid", "ends", "continuous"])
def test_curve_is_exactly_the_smce_of_each_prefix(kind: str, style: str) -> None:
    # the curve sorts once and sums each prefix's residuals per value in one pass; every value must be
    # the very float that a separate smce of that prefix gives (ties, unsorted and repeated checkpoints)
    rng = np.random.default_rng([KINDS.index(kind), len(style), 3])
    for _ in range(25):
        T = int(rng.integers(1, 400))
        p, y = _random_case(rng, T, style)
        ts = rng.integers(0, T + 1, int(rng.integers(1, 12)))
        direct = [smce(p[:t], y[:t], kind) for t in ts.tolist()]
        assert smce_curve(p, y, ts, kind).tolist() == direct
        # given the whole run's stable order (as the binary game passes it): the same floats, the order untouched
        order = np.argsort(p, kind="stable")
        kept = order.copy()
        assert smce_curve(p, y, ts, kind, order=order).tolist() == direct
        assert np.array_equal(order, kept)


def test_curve_of_a_long_run_with_log_spaced_checkpoints() -> None:
    from arena.certificates import checkpoints

    rng = np.random.default_rng(11)
    p = np.round(rng.random(20_000), 4)
    y = (rng.random(20_000) < p).astype(float)
    ts = checkpoints(len(p), 20)
    assert smce_curve(p, y, ts).tolist() == [smce(p[:t], y[:t]) for t in ts.tolist()]


# ----------------------------------------------------------------- input checks


@pytest.mark.parametrize("fn", [smce, smce_lp])
@pytest.mark.parametrize("bad", [1.5, -0.1, np.nan, np.inf])
def test_rejects_forecasts_outside_unit_interval(fn, bad: float) -> None:
    with pytest.raises(ValueError, match=r"p\[1\].*outside \[0, 1\].*clip"):
        fn([0.5, bad], [1.0, 0.0])


def test_rejects_bad_shapes_kind_outcomes_and_checkpoints() -> None:
    with pytest.raises(ValueError, match="equal length"):
        smce([0.5, 0.5], [1.0])
    with pytest.raises(ValueError, match="kind"):
        smce([0.5], [1.0], kind="sup")
    with pytest.raises(ValueError, match=r"y\[0\]"):
        smce([0.5], [2.0])
    with pytest.raises(ValueError, match="checkpoints"):
        smce_curve([0.5], [1.0], [2])
    with pytest.raises(ValueError, match="integers"):
        smce_curve([0.5], [1.0], [0.5])


def test_interval_heap_pops_the_smallest_and_the_largest_key():
    # the double-ended queue of the smCE program, against a sorted list, through random pushes and pops
    from arena.metrics.smce import _ih_pop_max, _ih_pop_min, _ih_push

    rng = np.random.default_rng(4)
    for trial in range(150):
        h, cnt, ref = np.empty(600), 0, []  # element i: (key, weight) = (h[2i], h[2i + 1])
        for _ in range(250):
            r = rng.random()
            if r < 0.5 or cnt == 0:
                x = float(rng.integers(0, 12)) if trial % 2 else float(rng.random())  # with and without ties
                cnt = _ih_push(h, cnt, x, x + 1.0)
                ref.append(x)
            elif r < 0.75:
                assert h[0] == min(ref) and h[1] == h[0] + 1.0
                ref.remove(h[0])
                cnt = _ih_pop_min(h, cnt)
            else:
                top = 1 if cnt > 1 else 0
                assert h[2 * top] == max(ref) and h[2 * top + 1] == h[2 * top] + 1.0
                ref.remove(h[2 * top])
                cnt = _ih_pop_max(h, cnt)
            assert cnt == len(ref) and sorted(h[0 : 2 * cnt : 2].tolist()) == sorted(ref)
