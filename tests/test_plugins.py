"""Plugins from outside the project, as a user adds them (docs/plugins.md, "A nature").

A user's Nature subclass in their own module and a YAML file in their own config folder run
in a tournament through Hydra's search path; a pip-installed plugin package does the same
through two entry points (``arena.plugins``, ``arena.configs``) and the arena's one Hydra
search-path plugin; the conformance checks run on the user's class. The commands are the
page's, run in a shell in a scratch directory (each pays a few seconds of imports).

References
----------
The plugins page (docs/plugins.md): nothing in the project needs editing to add a plugin; the public
conformance suite; one-line errors.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from arena import Bernoulli, Nature
from arena.checks import CheckFailure, check_oblivious_ignores_forecast, check_plugin
from arena.cli import main as arena_main

BIN = Path(sys.executable).parent

# ------------------------------------------------------------------ README: your own adversary


def readme_files() -> dict[str, str]:
    """The plugins page's code blocks that name their file in a comment among their first two lines, as printed:
    file name -> the block's text (a user copies the whole block)."""
    import re

    text = (Path(__file__).resolve().parent.parent / "docs" / "plugins.md").read_text()
    files = {}
    for block in re.findall(r"```(?:python|yaml|toml)\n(.*?)```", text, flags=re.S):
        for line in block.splitlines()[:2]:
            named = re.fullmatch(r"# ([\w./-]+\.(?:py|yaml|toml))", line.strip())
            if named:
                files[named[1]] = block
    return files


README_FILES = readme_files()
MY_NATURES = README_FILES["my_natures.py"]
MY_NATURE_YAML = README_FILES["my_conf/nature/my_nature.yaml"]
MINE_YAML = README_FILES["my_conf/tournament/mine.yaml"]

TOURNAMENT = 'arena "hydra.searchpath=[file://$PWD/my_conf]" tournament=mine'
MATCHUP = 'arena "hydra.searchpath=[file://$PWD/my_conf]" forecaster=k29 nature=my_nature nature.period=25 T=100'
CHECK = (
    'python -c "from arena.checks import check_plugin; from my_natures import MyNature; '
    'print(check_plugin(MyNature()))"'
)
LIST = 'arena-list natures tournaments "hydra.searchpath=[file://$PWD/my_conf]"'

# --------------------------------------------------------------------- README: ship it as a package

PYPROJECT = """\
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "my-arena-plugin"
version = "0.1.0"
dependencies = ["defensive-forecasting-arena"]

[project.entry-points."arena.plugins"]
my_arena_plugin = "my_arena_plugin.natures"   # imported by the arena: registers the classes

[project.entry-points."arena.configs"]
my_arena_plugin = "my_arena_plugin.conf"      # its folder joins the arena's config search path

[tool.setuptools]
packages = ["my_arena_plugin", "my_arena_plugin.conf"]

[tool.setuptools.package-data]
"my_arena_plugin.conf" = ["*/*.yaml"]
"""

STREAKY = '''\
"""Natures of my plugin package."""
from arena import Bernoulli, Nature, register


@register
class Streaky(Nature):
    """Repeats the last outcome with probability `stick` (adaptive)."""

    name = "streaky"
    adaptive = True

    def __init__(self, stick: float = 0.9) -> None:
        self.stick = stick

    def reset(self, rng):
        super().reset(rng)
        self._last = 0.0

    def respond(self, t, x, forecast):
        return Bernoulli(self.stick if self._last else 1 - self.stick)

    def observe(self, t, p, y):
        self._last = y
'''

STREAKY_YAML = """\
# Sticky outcomes: the last one again with probability stick.
_target_: my_arena_plugin.natures.Streaky
stick: 0.9
"""

STREAKS_YAML = """\
# @package _global_
# Streaky outcomes against two built-in forecasters.
tournament_name: streaks
tournament:
  name: streaks
  forecasters: [k29, running_mean]
  natures: [streaky]
  seeds: [0]
  T: [100]
  shards: 1
hydra:
  mode: MULTIRUN
  sweeper:
    params:
      shard: range(0,${tournament.shards})
"""

#: The plugins page's `pip install ./my-arena-plugin`, into a scratch folder instead of the environment.
PIP_INSTALL = f'"{BIN / "pip"}" install -q --no-deps --no-build-isolation --target site ./my-arena-plugin'
PACKAGE_TOURNAMENT = "arena tournament=streaks"
PACKAGE_LIST = "arena-list natures tournaments"


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_the_readme_shows_the_files_and_commands_these_tests_use() -> None:
    readme = (Path(__file__).resolve().parent.parent / "docs" / "plugins.md").read_text()
    assert MINE_YAML.startswith("# @package _global_\n")  # Hydra reads the directive only there
    assert "_target_: my_natures.MyNature" in MY_NATURE_YAML and "class MyNature(Nature)" in MY_NATURES
    for command in (TOURNAMENT, MATCHUP, CHECK, LIST):
        assert command in readme, command


def _user_folder(root: Path) -> Path:
    _write(
        root,
        {
            "my_natures.py": MY_NATURES,
            "my_conf/nature/my_nature.yaml": MY_NATURE_YAML,
            "my_conf/tournament/mine.yaml": MINE_YAML,
        },
    )
    return root


def _shell(command: str, cwd: Path, pythonpath: Path | None = None, timeout: int = 300):
    """Run a README command as a user does: in a shell, with this environment's scripts on the PATH."""
    env = {
        **os.environ,
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "MPLBACKEND": "Agg",
        "HYDRA_FULL_ERROR": "0",
    }
    if pythonpath is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(pythonpath), os.environ.get("PYTHONPATH")]))
    return subprocess.run(
        command, shell=True, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def _summary(results: Path) -> pd.DataFrame:
    (path,) = results.glob("**/summary.parquet")
    return pd.read_parquet(path)


# ----------------------------------------------------------------------- a user's search path


def test_your_own_adversary_plays_a_tournament_and_a_matchup_from_a_search_path(tmp_path: Path) -> None:
    root = _user_folder(tmp_path)
    proc = _shell(TOURNAMENT, root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = _summary(root / "results" / "mine")
    assert len(summary) == 4  # 2 forecasters x 2 natures x 1 seed
    assert set(summary["forecaster"]) == {"k29", "running_mean"}
    assert set(summary["nature"]) == {"my_nature", "iid_bernoulli"}
    mine = summary[summary["nature"] == "my_nature"]
    assert set(mine["nature_plugin"]) == {"my_nature"} and set(mine["status"]) == {"ok"}
    assert json.loads(mine["config"].iloc[0])["nature"] == {
        "_target_": "my_natures.MyNature",
        "p": 0.2,
        "q": 0.8,
        "period": 50,
    }
    assert list((root / "results" / "mine").glob("**/figures/*.png"))  # the report, as for a built-in tournament

    proc = _shell(MATCHUP, root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (row,) = _summary(root / "results" / "single").itertuples()
    assert (row.forecaster, row.nature, row.T) == ("k29", "my_nature", 100)
    assert json.loads(row.config)["nature"]["period"] == 25  # a parameter overridden on the command line


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (
            ["hydra.searchpath=[file://{root}/no_such_dir]", "tournament=mine"],
            "config folder file://{root}/no_such_dir",
        ),
        (
            ["hydra.searchpath=[file://{root}/my_conf]", "forecaster=k29", "nature=my_natur"],
            "unknown nature 'my_natur'. Did you mean 'my_nature'?",
        ),
        (
            ["hydra.searchpath=[file://{root}/my_conf]", "tournament=min"],
            "unknown tournament 'min'. Did you mean 'mine'?",
        ),
        (["forecaster=k29", "nature=my_nature"], "unknown nature 'my_nature'"),  # the folder is not on the search path
    ],
)
def test_search_path_mistakes_stop_with_one_line_and_write_nothing(
    args: list[str], needle: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    root = _user_folder(tmp_path)
    monkeypatch.chdir(root)
    monkeypatch.setattr(sys, "path", list(sys.path))  # `arena` makes the current directory importable
    before = {p.name for p in root.iterdir()}
    with pytest.raises(SystemExit) as exit_info:
        arena_main([a.format(root=root) for a in args])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("arena: error: "), err
    assert needle.format(root=root) in err[0], err[0]
    assert {p.name for p in root.iterdir()} == before


# ---------------------------------------------------------------------------- conformance checks


class _Peeking(Nature):
    """Declares itself oblivious but reads the forecast: the conformance checks must say so."""

    name = "peeking"

    def respond(self, t, x, forecast):
        return Bernoulli(0.9 if float(np.mean(forecast.points)) < 0.5 else 0.1)


def test_the_conformance_checks_are_public_and_run_on_a_users_class(tmp_path: Path) -> None:
    proc = _shell(CHECK, _user_folder(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    verdicts = proc.stdout.strip()
    for check in (
        "check_outcomes_valid",
        "check_same_seed_same_game",
        "check_reset_clears_state",
        "check_oblivious_ignores_forecast",
        "check_constructor_stores_only",
    ):
        assert f"'{check}': 'passed'" in verdicts, verdicts
    with pytest.raises(CheckFailure, match=r"check_oblivious_ignores_forecast: nature 'peeking'"):
        check_oblivious_ignores_forecast(_Peeking())
    with pytest.raises(CheckFailure, match=r"1 check\(s\) failed for .*peeking"):
        check_plugin(_Peeking())


def test_arena_list_shows_the_users_options(tmp_path: Path) -> None:
    root = _user_folder(tmp_path)
    proc = _shell(LIST, root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "  my_nature " in proc.stdout and "Two coins taking turns every `period` rounds." in proc.stdout
    assert "p=0.2 q=0.8 period=50" in proc.stdout and f"from file://{root}/my_conf" in proc.stdout
    assert "  mine " in proc.stdout and "My nature against two built-in forecasters." in proc.stdout


# ------------------------------------------------------------------------------- a plugin package


def _search_path(primary: str) -> list[tuple[str, str]]:
    from hydra._internal.utils import create_config_search_path  # what hydra.main and compose call

    return [(e.provider, e.path) for e in create_config_search_path(primary).get_path()]


def test_the_search_path_plugin_adds_folders_to_the_arena_only(monkeypatch: pytest.MonkeyPatch) -> None:
    from arena.config import use_search_path_plugin

    plugin = sys.modules.get("hydra_plugins.arena_searchpath") or importlib.import_module(
        "hydra_plugins.arena_searchpath"
    )
    monkeypatch.setattr(plugin, "declared_config_paths", lambda: [("arena.configs:x", "pkg://x.conf")])
    try:
        use_search_path_plugin(["T=5", "hydra.searchpath=[file:///a/b,pkg://c]"])
        arena = _search_path("pkg://arena.conf")
        assert arena[1] == ("main", "pkg://arena.conf") and arena[-1][0] == "schema"
        assert arena[2:-1] == [
            ("arena.configs:x", "pkg://x.conf"),
            ("hydra.searchpath in command-line", "file:///a/b"),
            ("hydra.searchpath in command-line", "pkg://c"),
        ]
        assert _search_path("pkg://another_app.conf")[2:-1] == []  # other Hydra apps are left alone
        use_search_path_plugin()  # a later command without the override
        assert _search_path("pkg://arena.conf")[2:-1] == [("arena.configs:x", "pkg://x.conf")]
    finally:
        use_search_path_plugin()


def _can_build_wheels() -> bool:
    import setuptools

    version = tuple(int(v) for v in setuptools.__version__.split(".")[:2])
    return importlib.util.find_spec("wheel") is not None or version >= (70, 1)


@pytest.mark.skipif(
    not _can_build_wheels(),
    reason="pip install --no-build-isolation needs the `wheel` package with setuptools < 70.1: pip install wheel",
)
def test_a_plugin_package_needs_only_two_entry_points(tmp_path: Path) -> None:
    _write(
        tmp_path / "my-arena-plugin",
        {
            "pyproject.toml": PYPROJECT,
            "my_arena_plugin/__init__.py": "",
            "my_arena_plugin/natures.py": STREAKY,
            "my_arena_plugin/conf/__init__.py": "",
            "my_arena_plugin/conf/nature/streaky.yaml": STREAKY_YAML,
            "my_arena_plugin/conf/tournament/streaks.yaml": STREAKS_YAML,
        },
    )
    proc = _shell(PIP_INSTALL, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    site = tmp_path / "site"
    assert (site / "my_arena_plugin" / "conf" / "nature" / "streaky.yaml").is_file()
    run = tmp_path / "run"  # elsewhere: the package is found as installed, not from the source folder
    run.mkdir()

    proc = _shell(PACKAGE_TOURNAMENT, run, pythonpath=site)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = _summary(run / "results" / "streaks")
    assert sorted(summary["forecaster"]) == ["k29", "running_mean"] and set(summary["nature"]) == {"streaky"}
    assert set(summary["status"]) == {"ok"}

    proc = _shell(PACKAGE_LIST, run, pythonpath=site)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "  streaky " in proc.stdout and "Sticky outcomes: the last one again with probability stick." in proc.stdout
    assert "from pkg://my_arena_plugin.conf (arena.configs:my_arena_plugin)" in proc.stdout
    assert "  streaks " in proc.stdout
