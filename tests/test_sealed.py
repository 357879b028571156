"""Sealed matchups (:mod:`arena.sealed`): the forecaster plays in a process of its own, so that what it does to
its interpreter changes no score; an honest forecaster's result is the same sealed or not; a child that dies,
hangs or sends what the arena does not take forfeits."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import arena
from arena.kernels import FermiSobolev
from arena.matchup import build_matchup, matchup_from_config
from arena.referee import Referee
from arena.sealed import Sealed, SealedError, seal
from forecasters.baselines import Constant

ROOT = Path(__file__).resolve().parents[1]


class SaysOne(Constant):
    """Always 1.0, claiming the smCE certificate: against Bernoulli(0.3), Brier about 0.7 and smce fails."""

    name = "fake_says_one"
    claims = ("smce",)
    kernel_object = FermiSobolev()  # the kernel K29 certifies smCE with

    def __init__(self, c: float = 1.0):
        super().__init__(c)


def _forge_referee() -> None:
    """Wrap ``Referee.score`` so that it stores Brier 0, smCE/T 0 and every certificate holding."""
    real = Referee.score
    if getattr(real, "forged", False):
        return

    def score(self, game, rec, forecaster):
        s = real(self, game, rec, forecaster)
        forged = {k: replace(c, holds=True) for k, c in s.certificates.items()}
        return s._replace(summary={**s.summary, "brier": 0.0, "smce_over_T": 0.0}, certificates=forged)

    score.forged = True
    Referee.score = score


def _spoil_numpy() -> None:
    """Make numpy's means and sums say 0 in this interpreter."""
    np.mean = lambda *a, **k: 0.0
    np.sum = lambda *a, **k: 0.0
    np.add.reduce  # noqa: B018 (the ufunc itself cannot be replaced; the functions can)


class Forger(SaysOne):
    """SaysOne that, from inside ``predict``, patches the interpreter it runs in (``how``)."""

    def __init__(self, c: float = 1.0, how: str = "referee"):
        super().__init__(c)
        self.how = how

    def predict(self, x):
        {"referee": _forge_referee, "numpy": _spoil_numpy}[self.how]()
        return super().predict(x)


@pytest.fixture
def restored():
    """Whatever a plugin patched in this process is put back after the test."""
    score, mean, total = Referee.score, np.mean, np.sum
    yield
    Referee.score, np.mean, np.sum = score, mean, total


def test_unsealed_a_plugin_forges_its_own_score(restored):
    r = arena.play("binary", Forger(), "iid_bernoulli", T=300, seed=0)
    assert r.summary["brier"] == 0.0 and r.summary["smce_over_T"] == 0.0
    assert r.certificates["smce"].holds


@pytest.mark.parametrize("how", ["referee", "numpy"])
def test_sealed_the_forger_is_scored_with_its_true_numbers_and_fails_smce(restored, how):
    honest = arena.play("binary", SaysOne(), "iid_bernoulli", T=300, seed=0)
    r = arena.play("binary", Forger(how=how), "iid_bernoulli", T=300, seed=0, sealed=True)
    assert r.forfeit is None and r.recorder.n == 300
    assert Referee.score is not None and not getattr(Referee.score, "forged", False)  # this process untouched
    assert math.isclose(r.summary["brier"], 0.7, abs_tol=0.06)
    assert r.summary["smce_over_T"] > 0.3
    assert r.certificates["smce"].holds is False
    assert _same(r.summary, honest.summary)
    assert r.certificates["smce"] == honest.certificates["smce"]


def _same(a: dict, b: dict) -> bool:
    """Equal summaries (NaN equal to NaN)."""
    return a.keys() == b.keys() and all(
        a[k] == b[k] or (isinstance(a[k], float) and math.isnan(a[k]) and math.isnan(b[k])) for k in a
    )


HONEST = [
    ("binary", "k29", "iid_bernoulli"),
    ("binary", "ogd", "logistic"),
    ("binary", "k29_rounded", "iid_bernoulli"),
    ("binary", "defended", "sinusoid"),
    ("experts", "hedge", "expert_constants"),
    ("experts", "linf_df", "expert_second_guessing"),
    ("quantile", "marginal_quantile_df", "iid_normal"),
    ("decision", "decision_df", "iid_bernoulli"),
]


@pytest.mark.parametrize("game, forecaster, nature", HONEST, ids=[f"{g}-{f}" for g, f, _ in HONEST])
def test_an_honest_forecaster_scores_the_same_sealed_or_not(game, forecaster, nature):
    plain = arena.play(game, forecaster, nature, T=200, seed=3)
    sealed = arena.play(game, forecaster, nature, T=200, seed=3, sealed=True)
    assert sealed.forfeit is None and plain.forfeit is None
    assert _same(sealed.summary, plain.summary)
    assert sealed.certificates == plain.certificates
    assert np.array_equal(sealed.recorder.p, plain.recorder.p)
    assert sealed.row()["forecaster_params"] == plain.row()["forecaster_params"]
    assert sealed.row()["forecaster"] == plain.row()["forecaster"]


def test_the_experts_weight_curves_are_the_same_sealed():
    # weights_after(cum, t) for every t, with one (T + 1, N) array: sent once (arena.sealed.BIG)
    plain = arena.play("experts", "hedge", "expert_constants", T=1500, seed=1)
    sealed = arena.play("experts", "hedge", "expert_constants", T=1500, seed=1, sealed=True)
    assert _same(sealed.summary, plain.summary)
    assert sealed.curves.equals(plain.curves) and sealed.curves.metric.str.startswith("weight:").any()


def test_the_proxy_has_the_game_hooks_of_its_class_and_is_driven_round_by_round():
    from arena.protocols import ExpertsForecaster, RoundedForecaster

    m = build_matchup("binary", "k29_rounded", "iid_bernoulli", T=10, sealed=True)
    assert isinstance(m.forecaster, Sealed) and isinstance(m.forecaster, RoundedForecaster)
    assert not isinstance(m.forecaster, ExpertsForecaster)
    assert (m.forecaster.N, m.forecaster.play_oblivious) == (10, None)
    with pytest.raises(TypeError, match="cannot be cloned"):
        m.forecaster.clone()
    assert seal(m.forecaster) is m.forecaster


class Exits(SaysOne):
    def __init__(self, c: float = 1.0, at: int = 5, how: str = "exit"):
        super().__init__(c)
        self.at, self.how, self.t = at, how, 0

    def predict(self, x):
        self.t += 1
        if self.t == self.at:
            if self.how == "exit":
                os._exit(3)
            if self.how == "kill":
                os.kill(os.getpid(), 9)
            if self.how == "interrupt":
                raise KeyboardInterrupt("from the plugin")
            if self.how == "exit_call":
                sys.exit("bye")
            if self.how == "sleep":
                import time

                time.sleep(30)
        return super().predict(x)


@pytest.mark.parametrize(
    "how, reason",
    [
        ("exit", "predict raised SealedError: the forecaster's process ended during predict (exit status 3)"),
        ("kill", "predict raised SealedError: the forecaster's process ended during predict (killed by signal 9)"),
        ("interrupt", "predict raised KeyboardInterrupt: from the plugin"),
        ("exit_call", "predict raised SystemExit: bye"),
    ],
)
def test_a_sealed_forecaster_that_dies_or_raises_forfeits_with_the_reason(how, reason):
    r = arena.play("binary", Exits(at=5, how=how), "iid_bernoulli", T=20, seed=0, sealed=True)
    assert (r.forfeit.who, r.forfeit.step, r.forfeit.reason) == ("forecaster", 5, reason)
    assert r.recorder.n == 4 and "smce" in r.certificates  # the rounds played are scored


def test_a_sealed_forecaster_that_hangs_past_the_time_limit_forfeits():
    r = arena.play("binary", Exits(at=3, how="sleep"), "iid_bernoulli", T=10, seed=0, sealed=True, time_limit=0.3)
    assert (r.forfeit.who, r.forfeit.step) == ("forecaster", 3)
    assert r.forfeit.reason == "predict exceeded the time limit of 0.3 s"
    assert r.recorder.n == 2 and r.forecaster.name == "fake_says_one"


class Evil:
    """Unpickling it would run a command."""

    def __init__(self, path: str):
        self.path = path

    def __reduce__(self):
        return (os.system, (f"touch {self.path}",))


class Returns(SaysOne):
    def __init__(self, c: float = 1.0, value=None):
        super().__init__(c)
        self.value = value

    def predict(self, x):
        return self.value


def test_a_reply_that_names_other_code_is_never_rebuilt_and_forfeits(tmp_path):
    target = tmp_path / "ran"
    r = arena.play("binary", Returns(value=Evil(str(target))), "iid_bernoulli", T=5, sealed=True)
    assert not target.exists()
    assert (r.forfeit.who, r.forfeit.step) == ("forecaster", 1)
    assert r.forfeit.reason == (
        "predict raised SealedError: the forecaster's process answered predict with UnpicklingError: a reply "
        "naming posix.system, which the arena does not accept"
    )


@pytest.mark.parametrize("value", ["0.5", True, np.array(0.4), 1.5, math.nan, [0.2, 0.3]])
def test_a_sealed_forecast_is_checked_as_any_forecast(value):
    plain = arena.play("binary", Returns(value=value), "iid_bernoulli", T=5)
    sealed = arena.play("binary", Returns(value=value), "iid_bernoulli", T=5, sealed=True)
    assert plain.forfeit is not None and sealed.forfeit == plain.forfeit


def test_a_reply_that_is_not_a_pickle_forfeits():
    from arena.sealed import answer, loads

    assert loads(answer(SaysOne(), ("call", "predict", (np.zeros(0),)))) == ("ok", 1.0)
    with pytest.raises(Exception, match="pickle data was truncated|invalid load key"):
        loads(b"\x80\x05garbage")


def test_sealed_is_a_config_switch():
    cfg = {
        "game": {"name": "binary"},
        "forecaster": {"_target_": "forecasters.defensive.K29"},
        "nature": {"_target_": "adversaries.iid.IidBernoulli", "p": 0.3},
        "referee": {},
        "T": 20,
        "seed": 0,
        "sealed": True,
    }
    assert isinstance(matchup_from_config(cfg).forecaster, Sealed)
    assert not isinstance(matchup_from_config({**cfg, "sealed": False}).forecaster, Sealed)
    with pytest.raises(ValueError, match="sealed='yes': give true or false"):
        matchup_from_config({**cfg, "sealed": "yes"})


def test_the_arena_command_plays_sealed_with_the_same_numbers(tmp_path):
    def run(*overrides):
        cmd = [str(Path(sys.executable).parent / "arena"), "tournament=none", "forecaster=k29", "nature=iid_bernoulli"]
        cmd += ["T=300", "report=false", f"results_root={tmp_path}", *overrides]
        out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        return out.stdout

    run("tournament_name=plain")
    run("tournament_name=sealed", "sealed=true")
    rows = {}
    for name in ("plain", "sealed"):
        (summary,) = (tmp_path / name).rglob("summary.csv")
        rows[name] = pd.read_csv(summary).iloc[0]
    for col in ("brier", "smce_over_T", "cert.smce.holds"):
        assert rows["plain"][col] == rows["sealed"][col]
    assert rows["plain"]["matchup_id"] != rows["sealed"]["matchup_id"]  # a sealed result is stored apart


def test_a_sealed_tournament_stores_the_numbers_of_an_unsealed_one(tmp_path):
    def run(name, *overrides):
        cmd = [str(Path(sys.executable).parent / "arena"), "tournament=calibration", "tournament.T=[200]"]
        cmd += ["tournament.forecasters=[k29_rounded,ogd]", "tournament.natures=[iid_bernoulli,anti_forecaster]"]
        cmd += ["tournament.seeds=[0]", "report=false", f"results_root={tmp_path}", f"tournament_name={name}"]
        out = subprocess.run([*cmd, *overrides], cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        keys = ["forecaster", "nature", "seed"]
        return pd.read_csv(tmp_path / name / "summary.csv").sort_values(keys).reset_index(drop=True)

    plain, sealed = run("plain"), run("sealed", "sealed=true")
    assert len(sealed) == 4 and (sealed["status"] == "ok").all()
    for col in ("brier", "smce_over_T", "cert.smce.value", "cert.rounded_calibration.holds"):
        pd.testing.assert_series_equal(sealed[col], plain[col])


def test_sealed_error_is_a_protocol_error():
    assert issubclass(SealedError, arena.ProtocolError)
