"""Fermi-Sobolev fast sums against direct O(T^2) numpy formulas."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.fastfs import fs_cross_sums, fs_diag, fs_quadratic


def _gram(P: np.ndarray) -> np.ndarray:
    a, b = P[:, None], P[None, :]
    return 0.5 * np.minimum(a, b) ** 2 + 0.5 * np.minimum(1 - a, 1 - b) ** 2 + 5.0 / 6.0


def _direct_cross(P: np.ndarray, W: np.ndarray) -> np.ndarray:
    return np.tril(_gram(P), k=-1) @ W  # row t sums over s < t only


def _case(rng: np.random.Generator, T: int, style: str) -> tuple[np.ndarray, np.ndarray]:
    if style == "ties":
        P = rng.choice(np.linspace(0.0, 1.0, 6), T)
    elif style == "ends":
        P = rng.choice([0.0, 1.0, 0.5], T)
    else:
        P = rng.random(T)
    W = rng.normal(size=T) if rng.random() < 0.5 else (rng.random(T) < 0.5) - rng.random(T)
    return P, W


@pytest.mark.parametrize("style", ["ties", "ends", "continuous"])
@pytest.mark.parametrize("T", [1, 2, 3, 17, 400, 1500])
def test_cross_sums_match_direct(style: str, T: int) -> None:
    rng = np.random.default_rng(T * 7 + len(style))
    P, W = _case(rng, T, style)
    scale = np.r_[0.0, np.cumsum(np.abs(W))[:-1]] * 4.0 / 3.0  # bound on |S_t|
    got = fs_cross_sums(P, W)
    assert got.shape == (T,) and got[0] == 0.0
    np.testing.assert_allclose(got, _direct_cross(P, W), rtol=1e-9, atol=1e-12 * (1 + scale.max()))


@pytest.mark.parametrize("style", ["ties", "ends", "continuous"])
@pytest.mark.parametrize("T", [1, 2, 5, 300, 1500])
def test_quadratic_matches_direct(style: str, T: int) -> None:
    rng = np.random.default_rng(T * 13 + len(style))
    P, W = _case(rng, T, style)
    direct = float(W @ _gram(P) @ W)
    atol = 1e-12 * (1 + np.abs(W).sum() ** 2)
    assert fs_quadratic(P, W) == pytest.approx(direct, rel=1e-9, abs=atol)


def test_quadratic_agrees_with_cross_sums_identity() -> None:
    # W^T K W = sum_t W_t^2 k(P_t, P_t) + 2 sum_t W_t S_t; the two sides are computed
    # by independent code (sorting versus a Fenwick tree in time order).
    rng = np.random.default_rng(0)
    P, W = _case(rng, 20000, "continuous")
    via_cross = float(np.sum(W**2 * fs_diag(P)) + 2.0 * np.sum(W * fs_cross_sums(P, W)))
    assert fs_quadratic(P, W) == pytest.approx(via_cross, rel=1e-9, abs=1e-12 * np.abs(W).sum() ** 2)


def test_time_order_matters_only_for_cross_sums() -> None:
    rng = np.random.default_rng(1)
    P, W = _case(rng, 200, "continuous")
    perm = rng.permutation(200)
    assert fs_quadratic(P[perm], W[perm]) == pytest.approx(fs_quadratic(P, W), rel=1e-12)
    np.testing.assert_allclose(fs_cross_sums(P[perm], W[perm]), _direct_cross(P[perm], W[perm]), rtol=1e-9, atol=1e-10)


def test_quadratic_is_nonnegative_and_empty_inputs() -> None:
    rng = np.random.default_rng(3)
    for _ in range(20):
        P, W = _case(rng, 50, "ties")
        assert fs_quadratic(P, W) >= -1e-12
    assert fs_quadratic([], []) == 0.0
    assert fs_cross_sums([], []).shape == (0,)


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from([0.0, 0.5, 1.0]) | st.floats(0.0, 1.0), st.floats(-3.0, 3.0)),
        min_size=1,
        max_size=30,
    )
)
def test_property_against_direct(pairs: list[tuple[float, float]]) -> None:
    P, W = map(np.array, zip(*pairs, strict=False))
    atol = 1e-12 * (1 + np.abs(W).sum() ** 2)
    np.testing.assert_allclose(fs_cross_sums(P, W), _direct_cross(P, W), rtol=1e-9, atol=atol)
    assert fs_quadratic(P, W) == pytest.approx(float(W @ _gram(P) @ W), rel=1e-9, abs=atol)


@pytest.mark.parametrize("fn", [fs_cross_sums, fs_quadratic])
def test_rejects_bad_input(fn) -> None:
    with pytest.raises(ValueError, match=r"P\[1\].*outside \[0, 1\]"):
        fn([0.2, 1.2], [1.0, 1.0])
    with pytest.raises(ValueError, match=r"P\[0\]"):
        fn([np.nan], [1.0])
    with pytest.raises(ValueError, match=r"W\[0\].*not finite"):
        fn([0.2], [np.inf])
    with pytest.raises(ValueError, match="equal length"):
        fn([0.2, 0.3], [1.0])


def _fs_quadratic_on_sorted_copies(P, W):
    """The formula of fs_quadratic on sorted copies of P and W, with numpy (its earlier code)."""
    order = np.argsort(P, kind="stable")
    p, w = P[order], W[order]
    before_w, before_wp2 = (np.concatenate(([0.0], np.cumsum(a[:-1]))) for a in (w, 0.5 * w * p**2))
    off = np.sum(w * before_wp2) + np.sum(w * 0.5 * (1.0 - p) ** 2 * before_w) + 5.0 / 6.0 * np.sum(w * before_w)
    return float(np.sum(w * w * fs_diag(p)) + 2.0 * off)


@pytest.mark.parametrize("T", [1, 2, 7, 8, 9, 127, 128, 129, 1000, 20_000])
def test_fs_quadratic_is_the_formula_on_sorted_copies(T):
    # fs_quadratic sums its terms a sum at a time in one buffer (no copies of P and W): the same floats, to a
    # few ulps of the terms' size
    rng = np.random.default_rng(T)
    P = np.round(rng.random(T), 3)  # ties
    W = (rng.random(T) < 0.5) - P
    # a compiled kernel replaying numpy's cumsum and pairwise np.sum, whose order is numpy's to choose: a few ulps
    want = _fs_quadratic_on_sorted_copies(P, W)
    assert fs_quadratic(P, W) == pytest.approx(want, rel=1e-12, abs=1e-14 * float(np.abs(W).sum()) ** 2)


@pytest.mark.parametrize("T", [1, 5, 8, 100, 128, 129, 1000, 4097, 30_000])
def test_fs_slack_sum_is_the_sum_of_the_slack_array(T):
    # the referee's sigma without the array of T slacks: numpy's pairwise sum replayed term by term
    from arena.fastfs import fs_slack_sum

    rng = np.random.default_rng(T)
    P = np.round(rng.random(T), 3)
    W = (rng.random(T) < 0.5) - P
    # a compiled replay of np.sum's pairwise order, which is numpy's to choose; the terms are >= 0 (no
    # cancellation): a few ulps apart at most
    assert fs_slack_sum(P, W) == pytest.approx(np.sum(2.0 * np.maximum(0.0, W * fs_cross_sums(P, W))), rel=1e-12)
    y = (rng.random(T) < P).astype(float)
    want = np.sum(2.0 * np.maximum(0.0, (y - P) * fs_cross_sums(P, y - P)))
    assert fs_slack_sum(P, y=y) == pytest.approx(want, rel=1e-12)
    with pytest.raises(ValueError, match="one of them"):
        fs_slack_sum(P, W, y=y)


@pytest.mark.parametrize("T", [0, 1, 2, 3, 10, 1000, 50_000])
def test_dense_ranks_are_numpys_inverse_of_unique(T):
    # the ranks the Fenwick trees are indexed by, turned in place in the array of one argsort
    from arena.fastfs import _dense_ranks

    rng = np.random.default_rng(T)
    for P in (np.round(rng.random(T), 2), rng.random(T), np.full(T, 0.5)):
        assert _dense_ranks(P).tolist() == np.unique(P, return_inverse=True)[1].ravel().tolist()
