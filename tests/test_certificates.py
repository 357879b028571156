"""The certificates module and the shape of the house: each bound is written once (the curve at
T equals the certificate's bound), ``arena.certificates`` imports nothing else from the
project, every game and Gymnasium id is registered in one place, and every hook the framework
reads on a plugin is declared on the protocol with its default.

References
----------
Perdomo & Recht, §2-§10; certificates: docs/ERRATA.md.
"""

from __future__ import annotations

import ast
import inspect
import math
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import arena.certificates as certificates
from arena import play
from arena.games import ENV_IDS, GAMES, get_game, register_envs
from arena.games import certificates as all_certificates
from arena.protocols import (
    DecisionForecaster,
    ExpertsForecaster,
    ExpertsNature,
    Forecaster,
    GroupNature,
    Nature,
    RoundedForecaster,
)
from arena.referee import CERTIFICATES

ROOT = Path(__file__).resolve().parents[1]


def test_the_certificates_module_imports_nothing_else_from_the_project():
    tree = ast.parse(Path(certificates.__file__).read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert imported and not {m for m in imported if m and m.split(".")[0] in ("arena", "forecasters", "adversaries")}


def test_the_tolerance_rule_allows_rounding_and_nothing_more():
    assert certificates.within(1.0 + 1e-13, 1.0) and not certificates.within(1.0 + 1e-9, 1.0)
    assert certificates.judged("x", 2.0, 1.0).holds is False
    assert certificates.not_applicable("x", "why").holds is None


@pytest.mark.parametrize(
    ("game", "forecaster", "nature", "cert", "curve", "params"),
    [
        ("binary", "k29", "anti_forecaster", "smce", "smce_bound", {}),
        ("binary", "linear_df", "logistic", "linear_regret", "regret_linear_bound", {}),
        ("binary", "bit", "anti_forecaster", "bit", "bit_bound", {}),
        ("quantile", "marginal_quantile_df", "iid_normal", "quantile_marginal", "coverage_error_bound", {}),
        ("experts", "linf_df", "expert_constants", "experts_regret", "regret_experts_bound", {}),
        ("decision", "decision_df", "anti_forecaster", "decision_regret", "regret_decision_bound", {}),
    ],
)
def test_a_certificates_curve_ends_at_its_bound(game, forecaster, nature, cert, curve, params):
    """The bound formula is one function: the curve's last point is the certificate's bound."""
    T = 150
    r = play(game, forecaster, nature, T=T, seed=3, forecaster_params=params)
    c = r.certificates[cert]
    last = r.curves.loc[(r.curves["metric"] == curve) & (r.curves["t"] == T), "value"]
    assert len(last) == 1 and last.iloc[0] == pytest.approx(c.bound, rel=1e-9)


def test_the_bound_formulas_match_the_papers_closed_forms():
    # independent computations of the printed forms (§2, §5, §8, §9, §10)
    assert certificates.smce_bound(4.0, 0.0) == pytest.approx(math.sqrt(8.0))
    assert certificates.linear_regret_bound(2.0, 1.0, 0.0) == pytest.approx(math.sqrt(5) + math.sqrt(17))
    assert certificates.decision_regret_bound(0.5, 8) == pytest.approx(2 * 0.5 * math.sqrt(16))
    assert certificates.experts_regret_bound(math.e**2, 0.0, 2.0) == pytest.approx(1.0)
    assert certificates.quantile_marginal_bound(0.2, 4) == pytest.approx(0.2)
    T, N, d = 100, 4, 0.1
    core = math.sqrt(T) * (math.sqrt(34 / 3) + math.sqrt(2 * math.log(10 / d)))
    assert certificates.rounded_calibration_bound(T, N, d) == pytest.approx(core + 25)


def test_every_game_and_every_gymnasium_id_is_registered_in_one_place():
    assert set(GAMES) == {"binary", "quantile", "experts", "decision"}
    assert set(CERTIFICATES) == set(all_certificates())
    register_envs()  # again: a no-op
    for env_id, kwargs in ENV_IDS.items():
        assert gym.spec(env_id).kwargs == kwargs and gym.spec(env_id).entry_point == "arena.env:ForecastEnv"
    env = gym.make("arena/Experts-v0", T=3)
    assert env.reset(seed=0)[0].shape == (env.unwrapped.nature.N,)


def test_the_games_import_no_engine_and_register_by_no_import_chain():
    """A game module imports the rules it needs, never the environment, the runner or the referee; the
    games are registered by ``arena/games/__init__.py`` itself, not as a side effect of a module."""
    for path in (ROOT / "arena" / "games").glob("*.py"):
        tree = ast.parse(path.read_text())
        imported = {n.module for n in tree.body if isinstance(n, ast.ImportFrom)}
        assert not imported & {"arena.env", "arena.runner", "arena.referee", "arena"}, path.name
        if path.name != "__init__.py":
            assert "register_game(" not in path.read_text().replace("def register_game(", ""), path.name
    code = "import arena.games.experts as e, arena.games as g; print(sorted(g.GAMES))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "['binary', 'decision', 'experts', 'quantile']"


def test_game_configs_name_their_class():
    import yaml

    for name in GAMES:
        cfg = yaml.safe_load((ROOT / "conf" / "game" / f"{name}.yaml").read_text())
        cls = GAMES[name]
        assert cfg["_target_"] == f"{cls.__module__}.{cls.__qualname__}"
        params = {k: v for k, v in cfg.items() if k != "name"}
        assert get_game(name, **params).name == name
    with pytest.raises(ValueError, match=r"_target_='arena.games.binary.BinaryGame' is not the class of that game"):
        get_game("quantile", _target_="arena.games.binary.BinaryGame")


def _hook_reads():
    """(object, hook) pairs the framework reads with getattr(..., "name", ...) on a plugin."""
    reads = set()
    for path in (ROOT / "arena").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "getattr"
                and len(node.args) >= 2
                and isinstance(node.args[1], ast.Constant)
                and isinstance(node.args[0], ast.Name)
                and node.args[0].id in ("forecaster", "fc", "nature", "plugin", "n", "source")
            ):
                reads.add((node.args[0].id, node.args[1].value))
    return reads


def test_every_hook_the_framework_reads_is_declared_on_the_protocol():
    declared = set(dir(Forecaster)) | set(dir(Nature))
    undeclared = {hook for _, hook in _hook_reads() if hook not in declared}
    assert not undeclared, f"hooks read with getattr but not declared in arena.protocols: {sorted(undeclared)}"
    for hook in ("kernel_object", "tol", "play_oblivious", "predict_many", "weights_after", "claims"):
        assert hasattr(Forecaster, hook)
    for hook in ("context_dim", "length"):
        assert hasattr(Nature, hook)


def test_the_hooks_of_one_game_sit_on_that_games_protocol():
    """A hook that one game reads is declared on that game's protocol class, not on the shared base classes."""
    one_game = {
        RoundedForecaster: ("N", "delta"),
        DecisionForecaster: ("randomized",),
        ExpertsForecaster: ("rate", "advice_lipschitz"),
        ExpertsNature: ("second_guessing", "advice_lipschitz", "advice"),
        GroupNature: ("group_dim",),
    }
    for cls, hooks in one_game.items():
        base = Forecaster if issubclass(cls, Forecaster) else Nature
        for hook in hooks:
            assert hook in cls.__annotations__ or hasattr(cls, hook), (cls.__name__, hook)
            assert not hasattr(base, hook), (base.__name__, hook)


def test_params_come_from_the_constructors_signature():
    from forecasters.defensive import DMM, K29, LinearDF

    assert K29(tol=1e-6).params() == {"tol": 1e-6, "fast": True}
    assert DMM(features=["1"]).params() == {"features": ["1"], "tol": DMM().tol, "fast": True}
    assert set(LinearDF().params()) == {"tol", "fast"}
    for cls in (K29, DMM, LinearDF):
        assert set(cls().params()) == set(inspect.signature(cls).parameters)

    class Renamed(Forecaster):
        def __init__(self, c: float = 0.5):
            self.level = c

        def predict(self, x):
            return 0.5

        def update(self, x, p, y):
            pass

    with pytest.raises(AttributeError, match=r"must store the parameter 'c' as self.c"):
        Renamed().params()
    assert np.isclose(
        play("binary", K29(), "iid_bernoulli", T=20, seed=0).certificates["smce"].value,
        play("binary", "k29", "iid_bernoulli", T=20, seed=0).certificates["smce"].value,
    )
