"""``arena-list``: every option ``arena`` accepts, with a description and parameters, user plugins included.

The listing is built in-process (``arena.discover.main``, the console script's function);
``tests/test_plugins.py`` runs the ``arena-list`` script itself against installed plugins.

References
----------
A config per plugin; a user's plugin in a folder of their own; loud errors.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from arena import discover, play, registry
from arena.games import CERTIFICATE_DESCRIPTIONS, GAMES, METRICS
from arena.referee import CERTIFICATES

CONF = Path(__file__).resolve().parent.parent / "conf"

USER_MODULE = '''\
"""A user's natures, outside the project."""
from arena import Bernoulli, Nature, register


@register
class Listed(Nature):
    """A coin whose bias the user picks (oblivious)."""

    name = "listed_nature"

    def __init__(self, p: float = 0.4, flips: int = 3) -> None:
        self.p, self.flips = p, flips

    def respond(self, t, x, forecast):
        return Bernoulli(self.p)


@register
class Unlisted(Listed):
    """Registered in Python, no config file."""

    name = "unlisted_nature"
'''


@pytest.fixture
def user_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user's module and config folder in a scratch directory, imported from there; the registry
    and sys.modules are restored afterwards (the user's classes stay out of the other tests)."""
    (tmp_path / "listing_natures.py").write_text(USER_MODULE)
    (tmp_path / "my_conf" / "nature").mkdir(parents=True)
    (tmp_path / "my_conf" / "tournament").mkdir()
    (tmp_path / "my_conf" / "nature" / "listed_nature.yaml").write_text(
        "# A coin of my own.\n_target_: listing_natures.Listed\np: 0.25\n"
    )
    (tmp_path / "my_conf" / "tournament" / "listed.yaml").write_text(
        "# @package _global_\n# My coin against K29.\ntournament_name: listed\ntournament:\n  name: listed\n"
        "  forecasters: [k29]\n  natures: [listed_nature]\n  seeds: [0]\n  T: [50]\n  shards: 1\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [*sys.path, str(tmp_path)])
    monkeypatch.setattr(registry, "NATURES", dict(registry.NATURES))
    monkeypatch.setattr(registry, "FORECASTERS", dict(registry.FORECASTERS))
    yield tmp_path
    sys.modules.pop("listing_natures", None)


def _names(entries: list[dict]) -> set[str]:
    return {e["name"] for e in entries}


# ------------------------------------------------------------------------------- the listing


def test_the_listing_has_every_option_arena_accepts() -> None:
    cat = discover.catalogue()
    assert list(cat) == list(discover.SECTIONS)
    for section, group in (
        ("forecasters", "forecaster"),
        ("natures", "nature"),
        ("tournaments", "tournament"),
        ("games", "game"),
    ):
        options = {p.stem for p in (CONF / group).glob("*.yaml")}
        assert options and options <= _names(cat[section]), (section, options - _names(cat[section]))
    assert set(GAMES) <= _names(cat["games"])
    assert set(registry.FORECASTERS) <= _names(cat["forecasters"])  # every registered plugin has a config
    assert set(registry.NATURES) <= _names(cat["natures"])
    assert set(CERTIFICATES) == _names(cat["certificates"])
    for section, entries in cat.items():
        for e in entries:
            assert e["description"], (section, e["name"])  # every option says what it is
            assert "error" not in e, e
            assert "\n" not in e["description"]


def test_the_readme_commands(capsys: pytest.CaptureFixture) -> None:
    discover.main([])  # `arena-list`
    out = capsys.readouterr().out
    for section in discover.SECTIONS:
        assert re.search(rf"^{section} \(\d+\)$", out, re.MULTILINE), section
    k29 = r"^  k29 +Vovk's K29: kernel DF with the Fermi-Sobolev kernel and no context \(§8\)\.$"
    assert re.search(k29, out, re.MULTILINE)
    discover.main(["metrics", "--json"])  # `arena-list metrics --json`
    metrics = json.loads(capsys.readouterr().out)["metrics"]
    assert {"name": "coverage", "description": METRICS["quantile"]["coverage"], "games": ["quantile"]} in metrics


def test_an_option_shows_its_constructor_parameters_with_the_config_values() -> None:
    cat = discover.catalogue(["forecasters", "natures", "games", "tournaments", "certificates"])
    k29_rounded = next(e for e in cat["forecasters"] if e["name"] == "k29_rounded")
    assert k29_rounded["params"]["N"] == 10 and "tol" in k29_rounded["params"]  # YAML value, constructor default
    assert "rounded_calibration" in k29_rounded["claims"] and k29_rounded["games"] == ["binary"]
    replay = next(e for e in cat["natures"] if e["name"] == "replay")
    assert replay["params"]["path"] == "???"  # left to the user
    quantile = next(e for e in cat["games"] if e["name"] == "quantile")
    assert quantile["params"] == {"q": 0.9, "ymin": -50.0, "ymax": 50.0}
    assert next(e for e in cat["tournaments"] if e["name"] == "quantile")["params"]["game"] == "quantile"
    smce = next(e for e in cat["certificates"] if e["name"] == "smce")
    assert {"k29", "k29_rounded", "kernel_df"} <= set(smce["claimed_by"])


def test_a_user_plugin_on_the_search_path_is_listed(user_folder: Path, capsys: pytest.CaptureFixture) -> None:
    discover.main(["natures", "tournaments", f"hydra.searchpath=[file://{user_folder}/my_conf]"])
    out = capsys.readouterr().out
    assert re.search(r"^  listed_nature +A coin of my own\.$", out, re.MULTILINE), out
    assert re.search(r"^ +p=0\.25 flips=3$", out, re.MULTILINE)  # the YAML's value over the constructor's default
    assert f"from file://{user_folder}/my_conf" in out
    assert re.search(r"^  listed +My coin against K29\.$", out, re.MULTILINE)
    # Registered by the user's module but without a config: listed, usable from Python.
    assert re.search(r"^  unlisted_nature +Registered in Python, no config file\.$", out, re.MULTILINE)
    assert "registered; no config" in out
    for option in (p.stem for p in (CONF / "nature").glob("*.yaml")):
        assert re.search(rf"^  {option} ", out, re.MULTILINE), option

    discover.main(["natures", "--json", f"hydra.searchpath=[file://{user_folder}/my_conf]"])
    (entry,) = [e for e in json.loads(capsys.readouterr().out)["natures"] if e["name"] == "listed_nature"]
    assert entry["params"] == {"p": 0.25, "flips": 3} and entry["target"] == "listing_natures.Listed"


def test_without_the_search_path_the_user_plugin_is_not_listed(user_folder: Path) -> None:
    assert "listed_nature" not in _names(discover.catalogue(["natures"])["natures"])


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["natur"], "unknown section 'natur'. Did you mean 'natures'?"),
        (["T=5"], "unknown argument 'T=5'"),
        (["hydra.searchpath=[file:///no/such/dir]"], "config folder file:///no/such/dir"),
    ],
)
def test_bad_arguments_stop_with_one_line(argv: list[str], needle: str, capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as exit_info:
        discover.main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("arena-list: error: ") and needle in err[0], err


# --------------------------------------------------------------------------- the metric catalogue


#: Matchups that together produce every metric of each game (grid, expected, group and per-expert columns).
METRIC_MATCHUPS = {
    "binary": [("k29_rounded", "iid_bernoulli")],
    "decision": [("k29_rounded", "iid_bernoulli"), ("decision_df", "anti_forecaster")],
    "experts": [("linf_df", "expert_constants")],
    "quantile": [("conditional_quantile_df", "group_normal")],
}


@pytest.mark.parametrize("game", sorted(METRIC_MATCHUPS))
def test_the_metric_catalogue_is_what_the_referee_reports(game: str) -> None:
    assert set(METRIC_MATCHUPS) == set(GAMES) == set(METRICS)
    reported = set()
    for forecaster, nature in METRIC_MATCHUPS[game]:
        summary = play(game, forecaster, nature, T=30, seed=0).summary
        reported |= {re.sub(r"(?<=[._])\d+$", "<j>", key) for key in summary}  # regret_expert_3 -> <j>
    assert reported == set(METRICS[game])


def test_every_certificate_has_a_description() -> None:
    assert set(CERTIFICATE_DESCRIPTIONS) == set(CERTIFICATES)
