"""The conformance suite: every registered plugin × every applicable check of arena.checks.

Each plugin is built from its own config file (``conf/forecaster/<name>.yaml``,
``conf/nature/<name>.yaml``) with Hydra's ``instantiate``, so the suite also checks the
configs. Test ids read ``<kind>-<plugin>[<variant>]-<check>``, so ``pytest -k
anti_forecaster`` runs every check on one plugin and ``pytest -k no_lookahead`` one
check on every forecaster. Known failures come from ``arena.checks.KNOWN_FAILURES``
and are strict xfails with their reason; a check that does not apply is skipped with
the reason the check gives.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hydra.utils import instantiate
from omegaconf import OmegaConf

from arena import checks
from arena.games import GAMES, get_game, plays
from arena.registry import FORECASTERS, NATURES, load_plugins
from forecasters import controls

load_plugins()
#: The known failures: arena.checks' own, and the negative controls', which must fail check_claims_hold.
KNOWN_FAILURES = {**checks.KNOWN_FAILURES, **controls.KNOWN_FAILURES}

ROOT = Path(__file__).resolve().parents[1]
CONF = ROOT / "conf"
REPLAY_ROWS = 300

#: The plugins the project ships; the registries must hold at least these.
REQUIRED = {
    "forecaster": {
        "bit",
        "dmm",
        "linear_df",
        "kernel_df",
        "k29",
        "k29_rounded",
        "ogd",
        "constant",
        "running_mean",
        "last_outcome",
        "window_mean",
    },
    "nature": {
        "iid_bernoulli",
        "logistic",
        "sinusoid",
        "logit_walk",
        "changepoints",
        "markov",
        "anti_forecaster",
        "bias_pusher",
        "replay",
        "seattle_rain",
    },
}
TABLES = {"forecaster": FORECASTERS, "nature": NATURES}

#: Extra test parameters per plugin, on top of its config file: (variant id, overrides). A
#: config with ``fast: true`` also gets the variant ``direct`` (``fast: false``: the O(t)
#: reference sums), run through the checks of what it changes: the forecasts.
VARIANTS = {
    ("nature", "replay"): [("ctx", {"context_columns": ["temp"]})],
    ("nature", "seattle_rain"): [("ctx", {"context_columns": ["temp_max", "wind"]})],
    ("nature", "changepoints"): [("short", {"every": 7})],
}

#: Horizons: short enough for the whole file to run in well under a minute.
T_CHECK = 60

#: The checks the ``direct`` variant runs (its state handling and constructor are the fast one's).
DIRECT_CHECKS = {"check_forecasts_in_range", "check_no_lookahead", "check_same_seed_same_game", "check_claims_hold"}
T_CLAIMS = 100


#: Values the test supplies for configs' mandatory ``???`` fields (``{csv}``: the test's CSV file).
MANDATORY = {
    ("nature", "replay"): {"path": "{csv}", "column": "y"},
    ("forecaster", "replay"): {"path": "{csv}", "column": "p"},
}


def _config(kind: str, name: str, overrides: dict, csv: Path | None):
    cfg = OmegaConf.load(CONF / kind / f"{name}.yaml")
    for k, v in {**MANDATORY.get((kind, name), {}), **overrides}.items():
        cfg[k] = str(csv) if v == "{csv}" else v
    return cfg


def build(kind: str, name: str, overrides: dict | None = None, csv: Path | None = None):
    """The plugin as its config file (plus overrides) instantiates it.

    A registered plugin without a config file is built with its defaults here so that its
    checks still run; ``test_every_registered_plugin_has_a_config`` fails for it.
    """
    if not (CONF / kind / f"{name}.yaml").is_file():
        return TABLES[kind][name](**(overrides or {}))
    return instantiate(_config(kind, name, overrides or {}, csv), _convert_="all")


def game_of(plugin):
    """The plugin's game (its first game the arena knows), with the parameters of conf/game/<name>.yaml."""
    name = next((g for g in plugin.games if g in GAMES), None)
    if name is None:
        return None  # the checks say why they do not apply
    file = CONF / "game" / f"{name}.yaml"
    params = (
        {k: v for k, v in OmegaConf.to_container(OmegaConf.load(file)).items() if k != "name"} if file.is_file() else {}
    )
    return get_game(name, **params)


@pytest.fixture
def replay_csv(tmp_path) -> Path:
    rng = np.random.default_rng(7)
    path = tmp_path / "bits.csv"
    y, temp, p = rng.integers(0, 2, REPLAY_ROWS), rng.normal(size=REPLAY_ROWS), rng.uniform(size=REPLAY_ROWS)
    pd.DataFrame({"y": y, "temp": temp, "p": p}).to_csv(path, index=False)
    return path


def _suite_natures(game, csv: Path) -> list | None:
    """The natures the claims check plays against: every registered nature of the game, from its
    config (None: the check's own default opponents, when no nature of the game is registered)."""
    natures = [build("nature", name, csv=csv) for name in sorted(NATURES) if plays(game, NATURES[name])]
    return natures or None


def _variants(kind: str, name: str) -> list[tuple[str, dict]]:
    """The config as is, the extra variants, and the direct (slow) path of a plugin with a ``fast`` switch."""
    out = [("", {}), *VARIANTS.get((kind, name), [])]
    file = CONF / kind / f"{name}.yaml"
    if file.is_file() and OmegaConf.load(file).get("fast") is True:
        out.append(("direct", {"fast": False}))
    return out


#: Plugins that need an optional extra: their checks are skipped where it is not installed.
EXTRAS = {("forecaster", "river"): "river", ("forecaster", "sklearn"): "sklearn"}


def _cases(kind: str):
    out = []
    for name in sorted(TABLES[kind]):
        extra = EXTRAS.get((kind, name))
        missing = extra is not None and importlib.util.find_spec(extra) is None
        for variant, overrides in _variants(kind, name):
            label = f"{name}[{variant}]" if variant else name
            for check in checks.all_checks(kind):
                if variant == "direct" and check.__name__ not in DIRECT_CHECKS:
                    continue
                reason = KNOWN_FAILURES.get((name, check.__name__))
                marks = [pytest.mark.xfail(reason=reason, strict=True, raises=AssertionError)] if reason else []
                if missing:
                    marks.append(pytest.mark.skip(reason=f"the optional extra {extra!r} is not installed"))
                out.append(pytest.param(name, overrides, check, marks=marks, id=f"{kind}-{label}-{check.__name__}"))
    return out


def _run(check, plugin, **kw):
    try:
        return check(plugin, **kw)
    except checks.NotApplicable as exc:
        pytest.skip(f"not applicable: {exc}")


# --------------------------------------------------------------------------- not vacuous


@pytest.mark.parametrize("kind", ["forecaster", "nature"])
def test_registry_is_not_vacuous(kind):
    table = TABLES[kind]
    assert table, f"no {kind} is registered: load_plugins() found nothing, so the suite would test nothing"
    missing = REQUIRED[kind] - set(table)
    assert not missing, f"registered {kind}s lack {sorted(missing)} (have {sorted(table)})"
    assert len(_cases(kind)) >= len(REQUIRED[kind]) * len(checks.all_checks(kind))


def test_known_failures_name_real_plugins_and_checks():
    names = {c.__name__ for kind in TABLES for c in checks.all_checks(kind)}
    for (plugin, check), reason in KNOWN_FAILURES.items():
        assert plugin in FORECASTERS or plugin in NATURES, f"KNOWN_FAILURES names unknown plugin {plugin!r}"
        assert check in names, f"KNOWN_FAILURES names unknown check {check!r}"
        assert reason.strip(), f"KNOWN_FAILURES[({plugin!r}, {check!r})] needs a reason"


# --------------------------------------------------------------------------- configs


@pytest.mark.parametrize("kind", ["forecaster", "nature"])
def test_every_registered_plugin_has_a_config(kind):
    missing = [name for name in TABLES[kind] if not (CONF / kind / f"{name}.yaml").is_file()]
    assert not missing, f"registered {kind}s without conf/{kind}/<name>.yaml: {missing}"


@pytest.mark.parametrize("kind", ["forecaster", "nature"])
def test_every_config_instantiates_to_its_registered_class(kind, replay_csv):
    files = sorted((CONF / kind).glob("*.yaml"))
    assert files, f"conf/{kind} holds no config"
    for file in files:
        name = file.stem
        assert name in TABLES[kind], f"conf/{kind}/{file.name} has no registered {kind} named {name!r}"
        plugin = build(kind, name, csv=replay_csv)
        assert type(plugin) is TABLES[kind][name], (
            f"conf/{kind}/{file.name} instantiates {type(plugin).__qualname__}, not {TABLES[kind][name].__qualname__}"
        )
        assert plugin.name == name


# --------------------------------------------------------------------------- the checks


@pytest.mark.parametrize(("name", "overrides", "check"), _cases("forecaster"))
def test_forecaster(name, overrides, check, replay_csv):
    plugin = build("forecaster", name, overrides, csv=replay_csv)
    game = game_of(plugin)
    if check is checks.check_claims_hold:
        report = _run(check, plugin, T=T_CLAIMS, seeds=(0,), game=game, natures=_suite_natures(game, replay_csv))
        failed = [r for r in report if r["probabilistic"] and r["holds"] is False]
        if failed:  # reported, not asserted: judged by their rate across seeds (docs/ERRATA.md, certificates)
            print(f"{name}: probabilistic certificates failed on {len(failed)}/{len(report)} runs: {failed}")
    elif check is checks.check_constructor_stores_only:
        _run(check, plugin)
    else:
        _run(check, plugin, T=T_CHECK, game=game)


@pytest.mark.parametrize(("name", "overrides", "check"), _cases("nature"))
def test_nature(name, overrides, check, replay_csv):
    plugin = build("nature", name, overrides, csv=replay_csv)
    game = game_of(plugin)
    if check is checks.check_constructor_stores_only:
        _run(check, plugin)
    elif check is checks.check_env_with_nature:
        _run(check, plugin, game=game)
    else:
        _run(check, plugin, T=T_CHECK, game=game)
