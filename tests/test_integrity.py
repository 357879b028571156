"""Results from elsewhere never run code or write outside their folder, and bad values are refused at once.

A results directory, a stored attack or a label is someone else's input: replaying a stored matchup builds
only registered plugins with plain values (``--trust`` to run a config as it is), every file name is made by
one function and every write stays inside the results folder, bad values are one line and exit status 2
before anything is written, and labels reach the terminal with their control characters escaped.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _stored import rewrite_all  # tests/_stored.py

import arena
from arena.errors import ConfigError
from arena.protocols import Forecaster

BIN = Path(sys.executable).parent


def _run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "MPLBACKEND": "Agg", "OPENBLAS_NUM_THREADS": "1"}
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env, timeout=600)


def _one_line_error(proc: subprocess.CompletedProcess) -> str:
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    assert len(lines) == 1 and "error:" in lines[0] and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    return lines[0]


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    """A tournament of two forecasters against one nature (no traces: a comparison replays)."""
    root = tmp_path_factory.mktemp("results")
    proc = _run(
        [
            str(BIN / "arena"),
            "tournament=calibration",
            "tournament.forecasters=[running_mean,constant]",
            "tournament.natures=[iid_bernoulli]",
            "tournament.seeds=[0]",
            "tournament.T=[50]",
            "tournament.shards=1",
            "report=false",
            f"results_root={root}",
        ],
        root,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return root / "calibration"


def _copy(results: Path, where: Path, label: dict | None = None, config: dict | None = None) -> Path:
    """A copy of ``results`` in ``where``/deep/er/copy whose rows are relabelled (old -> new) and whose
    constant row's config has the keys of ``config`` (in its summary and its stored matchup), without per-round
    records: a comparison replays them."""
    dest = where / "deep" / "er" / "copy"
    shutil.copytree(results, dest)

    def edit(row: dict) -> dict:
        if config and row["forecaster"] == "constant":
            row["config"] = json.dumps({**json.loads(row["config"]), **config})
        if label and row["forecaster"] in label:
            row["forecaster"] = label[row["forecaster"]]
        return row

    summary = pd.read_parquet(dest / "summary.parquet")
    summary = pd.DataFrame([edit(dict(r)) for _, r in summary.iterrows()])
    summary.to_parquet(dest / "summary.parquet")

    def edit_stored(stored: dict) -> dict:
        stored["row"] = edit(stored["row"])
        stored.pop("rounds", None)  # as a long game's result: its rounds are replayed from its config
        return stored

    rewrite_all(dest, edit_stored)
    return dest


# ----------------------------------------------------------------------------- one safe replay path


def test_comparing_results_from_elsewhere_never_runs_their_code(results, tmp_path):
    proof = tmp_path / "ran"
    popen = {"_target_": "subprocess.Popen", "args": ["sh", "-c", f"id > {proof}"]}
    copy = _copy(results, tmp_path, config={"forecaster": popen})
    line = _one_line_error(_run([str(BIN / "arena-compare"), str(copy), "running_mean", "constant"], tmp_path))
    assert "subprocess.Popen" in line and "--trust" in line
    report = _run([str(BIN / "arena-report"), str(copy)], tmp_path)
    assert report.returncode == 2 and "--trust" in _one_line_error(report), report.stderr[-2000:]
    assert "not a registered plugin" in (copy / "summary.md").read_text()  # the rest of the report is written
    assert (copy / "index.html").is_file()
    summary = pd.read_parquet(copy / "summary.parquet")
    mid = summary.loc[summary["forecaster"] == "constant", "matchup_id"].iloc[0]
    rerun = _run([str(BIN / "arena-rerun"), str(copy), "--matchup", mid], tmp_path)
    assert rerun.returncode == 2 and not proof.exists()


def test_a_stored_interpolation_is_never_resolved_unless_trusted(results, monkeypatch):
    from arena.matchup import matchup_from_stored

    monkeypatch.setenv("ARENA_TEST_SECRET", "50")
    row = pd.read_parquet(results / "summary.parquet").iloc[0]
    config = {**json.loads(row["config"]), "T": "${oc.env:ARENA_TEST_SECRET}"}
    with pytest.raises(ConfigError, match="interpolation") as refused:
        matchup_from_stored(json.dumps(config))
    assert "50" not in str(refused.value).replace("T50", "")
    config["T"] = "${oc.decode:'50'}"
    assert matchup_from_stored(json.dumps(config), trust=True).T == 50
    for bad in (
        '{"forecaster": {"_target_": "forecasters.baselines.OGD", "lr": {"_target_": "os.getcwd"}}}',
        "[" * 100_000 + "]" * 100_000,
        "{not json",
    ):
        with pytest.raises(ConfigError):
            matchup_from_stored(bad)


# ----------------------------------------------------------------------------- nothing written outside


def test_labels_and_links_never_write_outside_the_results(results, tmp_path):
    copy = _copy(results, tmp_path, label={"constant": "../../../ESCAPED", "running_mean": "rm\x1b]0;owned\x07"})
    (copy / "compare" / "compare__..").mkdir(parents=True)  # a folder shipped with the results: `..` then leads up
    proc = _run([str(BIN / "arena-compare"), str(copy), "../../../ESCAPED", "rm\x1b]0;owned\x07"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert not [p for p in tmp_path.rglob("*ESCAPED*") if copy not in p.parents]
    assert len(list((copy / "compare").glob("compare__*ESCAPED*"))) == 4
    assert "\x1b" not in proc.stdout and "rm\\x1b]0;owned\\x07" in proc.stdout

    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.rmtree(copy / "compare")
    (copy / "compare").symlink_to(outside)
    line = _one_line_error(
        _run([str(BIN / "arena-compare"), str(copy), "../../../ESCAPED", "rm\x1b]0;owned\x07"], tmp_path)
    )
    assert "outside the results directory" in line and not list(outside.iterdir())


def test_a_red_team_label_never_writes_outside_its_attacks_folder(tmp_path):
    root = tmp_path / "a" / "b" / "c"
    proc = _run(
        [
            str(BIN / "arena-redteam"),
            "forecaster_label=../../../ESCAPED_rt",
            "T=20",
            "budget=40",
            "max_seconds=5",
            "searcher=cma",
            "cross_attack=false",
            f"results_root={root}",
        ],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    written = list(tmp_path.rglob("*ESCAPED_rt*"))
    assert written and all(p.parent == root / "redteam" / "binary" / "attacks" for p in written)


# ----------------------------------------------------------------------------- bad values: one line, exit 2


@pytest.mark.parametrize(
    "overrides",
    [
        ["referee.M=inf"],
        ["nature=logit_walk", "nature.bound=inf"],
        ["referee.oi_features=[1,p,p]"],
        ["results_root=/proc"],
        ["results_root=FILE/x"],
    ],
)
def test_bad_values_are_refused_before_anything_is_written(tmp_path, overrides):
    (tmp_path / "FILE").write_text("a file")
    overrides = [o.replace("FILE", str(tmp_path / "FILE")) for o in overrides]
    root = [] if any(o.startswith("results_root") for o in overrides) else [f"results_root={tmp_path / 'out'}"]
    proc = _run([str(BIN / "arena"), "forecaster=k29", "nature=iid_bernoulli", "T=20", *root, *overrides], tmp_path)
    _one_line_error(proc)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["FILE"]


@pytest.mark.parametrize(
    ("override", "named"),
    [("tournament.forecasters=[k29,{name: ogd, label: ''}]", "label=''"), ("hydra.launcher.n_jobs=0", "n_jobs=0")],
    ids=["empty label", "no workers"],
)
def test_bad_tournament_values_are_refused(tmp_path, override, named):
    proc = _run(
        [
            str(BIN / "arena"),
            "tournament=calibration",
            "tournament.forecasters=[k29,ogd]",
            "tournament.natures=[iid_bernoulli]",
            "tournament.seeds=[0]",
            "tournament.T=[20]",
            override,
            f"results_root={tmp_path / 'out'}",
        ],
        tmp_path,
    )
    assert named in _one_line_error(proc) and not (tmp_path / "out").exists()


@pytest.mark.parametrize("override", ["L=nan", "L=0", "depth=-1"])
def test_bad_red_team_settings_are_refused(tmp_path, override):
    proc = _run([str(BIN / "arena-redteam"), override, "T=20", f"results_root={tmp_path / 'out'}"], tmp_path)
    assert override.split("=")[0] + "=" in _one_line_error(proc)
    assert not (tmp_path / "out").exists()  # refused before Hydra makes its run folder


def _attack(**fields) -> dict:
    return {
        "format": "arena.redteam/1",
        "kind": "sequence",
        "game": "binary",
        "T": 3,
        "answers": [0.2, 0.5, 0.9],
        **fields,
    }


@pytest.mark.parametrize(
    "content",
    [
        json.dumps(_attack(T=-10)),
        json.dumps(_attack(answers=[0.2, 1.5, 0.9])),
        json.dumps(_attack(kind="policy", theta=[True, 0, 0, 0, 0, 0, 0])),
        json.dumps(_attack(L=float("inf"))),
        "[" * 100_000 + "]" * 100_000,
        b"\xff\xfe not text",
    ],
    ids=["T", "answers", "boolean-weights", "L", "nested", "unreadable"],
)
def test_a_bad_stored_attack_is_refused_before_the_run_folder_exists(tmp_path, content):
    path = tmp_path / "attack.json"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    proc = _run(
        [
            str(BIN / "arena"),
            "forecaster=k29",
            "nature=redteam",
            f"nature.path={path}",
            "T=3",
            f"results_root={tmp_path / 'out'}",
        ],
        tmp_path,
    )
    assert "redteam" in _one_line_error(proc) and not (tmp_path / "out").exists()


class _Returns(Forecaster):
    """Announces one fixed object every round."""

    name = "returns"
    games = ("binary",)

    def __init__(self, value=0.5):
        self.value = value

    def predict(self, x):
        return self.value

    def update(self, x, p, y):
        pass


@pytest.mark.parametrize("value", ["0.5", True, np.array(0.4)], ids=["text", "bool", "0-d array"])
def test_a_forecast_that_is_not_a_number_forfeits(value):
    row = arena.play("binary", _Returns(value), "iid_bernoulli", T=5).row()
    assert row["status"] == "forfeit" and "ProtocolError" in row["forfeit_reason"]
    assert arena.play("binary", _Returns(0.5), "iid_bernoulli", T=5).row()["status"] == "ok"


def test_a_deeply_nested_plan_is_one_line(results, tmp_path):
    copy = _copy(results, tmp_path)
    (copy / "plan.json").write_text("[" * 100_000 + "]" * 100_000)
    assert "plan.json is damaged" in _one_line_error(_run([str(BIN / "arena-report"), str(copy)], tmp_path))


# ----------------------------------------------------------------------------- the terminal


def test_printable_escapes_every_control_character():
    from arena.errors import printable

    assert printable("k29\x1b[31m\x9b\u202e\n") == "k29\\x1b[31m\\x9b\\u202e\\n"
    assert printable("k29[lr=0.1] é") == "k29[lr=0.1] é"


# ============================================================================= every plugin crash is a forfeit
# A plugin that ends its process, raises any BaseException or breaks the referee forfeits its matchup; the run goes
# on, the row names who, the round and why, and the exit status says so. A plugin cannot change another matchup.

CRASHING = '''
import ctypes
import os
import threading
import time

import numpy as np

import arena.referee
from arena import Bernoulli, Nature, register
from forecasters.baselines import RunningMean


class PluginTrouble(BaseException):
    """Not an Exception: a plugin's own BaseException."""


def spoiled_score(score):
    def score_all(self, game, rec, fc):  # every later matchup of the process gets Brier 0.999
        summary, certs, curves = score(self, game, rec, fc)
        return {**summary, "brier": 0.999}, certs, curves

    return score_all


def broken_score(self, game, rec, fc):
    raise TypeError("score() takes 2 positional arguments but 4 were given")


TROUBLE = {
    "keyboard": KeyboardInterrupt,
    "generator_exit": GeneratorExit,
    "own": PluginTrouble,
}


def trouble(how):
    if how in TROUBLE:
        raise TROUBLE[how]("plugin trouble")
    if how == "os_exit":
        os._exit(0)
    if how == "sleep":
        time.sleep(60)
    if how == "segfault":
        ctypes.string_at(0)
    if how == "thread":
        threading.Thread(target=time.sleep, args=(600,)).start()  # not a daemon: it would keep the process
    if how == "break_referee":
        arena.referee.Referee.score = broken_score
    if how == "spoil":
        arena.referee.Referee.score = spoiled_score(arena.referee.Referee.score)
    if how == "spoil_numpy":
        np.mean = lambda *a, **k: 0.999


@register
class Crashing(RunningMean):
    """A running mean that misbehaves as ``how`` says in ``where`` (reset, predict or update) at round ``at``."""

    name = "crashing"
    can_play_oblivious = False  # every round through predict

    def __init__(self, how: str = "none", where: str = "predict", at: int = 3):
        super().__init__()
        self.how, self.where, self.at = how, where, at
        if where == "__init__":
            trouble(how)

    def reset(self, rng):
        super().reset(rng)
        self.t = 0
        if self.where == "reset":
            trouble(self.how)

    def predict(self, x):
        self.t += 1
        if self.where == "predict" and self.t == self.at:
            trouble(self.how)
        return super().predict(x)

    def update(self, x, p, y):
        if self.where == "update" and self.t == self.at:
            trouble(self.how)
        super().update(x, p, y)


@register
class CrashingNature(Nature):
    """Fair coins; ``how`` goes wrong in respond at round ``at``."""

    name = "crashing_nature"
    games = ("binary",)

    def __init__(self, how: str = "none", at: int = 4):
        self.how, self.at = how, at

    def respond(self, t, x, forecast):
        if t == self.at:
            trouble(self.how)
        return Bernoulli(0.5)
'''


def _crashing(tmp_path: Path) -> list[str]:
    """The crashing plugins as a user's module and config folder; the start of an ``arena`` command using them."""
    (tmp_path / "crashing.py").write_text(CRASHING)
    for group, name, text in (
        ("forecaster", "crashing", "_target_: crashing.Crashing\nhow: none\nwhere: predict\nat: 3\n"),
        ("nature", "crashing_nature", "_target_: crashing.CrashingNature\nhow: none\nat: 4\n"),
    ):
        (tmp_path / "conf" / group).mkdir(parents=True, exist_ok=True)
        (tmp_path / "conf" / group / f"{name}.yaml").write_text(text)
    return [str(BIN / "arena"), f"hydra.searchpath=[file://{tmp_path / 'conf'}]", "report=false"]


def _tournament(tmp_path: Path, forecasters: list, natures: list, name: str = "crashes") -> list[str]:
    """``arena`` overrides of a one-shard tournament (every matchup played by one process, one after another)."""
    text = f"""
# @package _global_
tournament_name: {name}
tournament:
  name: {name}
  forecasters: {json.dumps(forecasters)}
  natures: {json.dumps(natures)}
  seeds: [0]
  T: [20]
  shards: 1
hydra:
  mode: MULTIRUN
  sweeper:
    params:
      shard: range(0,${{tournament.shards}})
"""
    (tmp_path / "conf" / "tournament").mkdir(parents=True, exist_ok=True)
    (tmp_path / "conf" / "tournament" / f"{name}.yaml").write_text(text)
    return [f"tournament={name}", f"results_root={tmp_path / 'results'}"]


def _crasher(label: str, **params) -> dict:
    return {"name": "crashing", "label": label, "params": params}


def _in_dir(tmp_path: Path, cmd: list[str]) -> subprocess.CompletedProcess:
    env = {**os.environ, "MPLBACKEND": "Agg", "OPENBLAS_NUM_THREADS": "1", "PYTHONPATH": str(tmp_path)}
    return subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, env=env, timeout=300)


def _rows(out: Path) -> pd.DataFrame:
    return pd.read_parquet(out / "summary.parquet").set_index(["forecaster", "nature"])


def _says_forfeited(proc: subprocess.CompletedProcess, n: int, of: int) -> None:
    assert proc.returncode == 3, (proc.returncode, proc.stderr[-3000:])
    assert f"{n} of {of} matchups forfeited" in proc.stderr and "exit status 3" in proc.stderr, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="supervision forks")
def test_os_exit_in_a_plugin_is_a_forfeit_naming_who_and_the_tournament_goes_on(tmp_path):
    cmd = _crashing(tmp_path)
    overrides = _tournament(tmp_path, [_crasher("exits", how="os_exit"), "ogd"], ["iid_bernoulli", "markov"])
    proc = _in_dir(tmp_path, [*cmd, *overrides])
    _says_forfeited(proc, 2, 4)
    rows = _rows(tmp_path / "results" / "crashes")
    assert len(rows) == 4 and (rows.loc["ogd", "status"] == "ok").all()
    for nature in ("iid_bernoulli", "markov"):
        row = rows.loc[("exits", nature)]
        assert (row["status"], row["forfeit_who"], row["forfeit_step"]) == ("forfeit", "forecaster", 3)
        assert "predict called os._exit(0)" in row["forfeit_reason"], row["forfeit_reason"]
    again = _in_dir(tmp_path, [*cmd, *overrides])  # stored: the rerun plays nothing and says the same
    _says_forfeited(again, 2, 4)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="supervision forks")
@pytest.mark.parametrize("how", ["os_exit", "segfault"])
def test_a_single_matchup_that_ends_its_process_is_stored_as_a_forfeit(tmp_path, how):
    cmd = _crashing(tmp_path)
    root = tmp_path / "results"
    proc = _in_dir(tmp_path, [*cmd, "forecaster=crashing", f"forecaster.how={how}", "T=20", f"results_root={root}"])
    _says_forfeited(proc, 1, 1)
    stored = list(root.glob("single/*/summary.parquet"))
    assert len(stored) == 1, proc.stderr[-2000:]
    row = pd.read_parquet(stored[0]).iloc[0]
    assert row["status"] == "forfeit" and "FORFEIT" in proc.stdout, proc.stdout
    if how == "os_exit":
        assert (row["forfeit_who"], row["forfeit_step"]) == ("forecaster", 3)
    else:
        assert "killed by signal 11" in row["forfeit_reason"], row["forfeit_reason"]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="supervision forks")
def test_a_segfault_in_a_tournament_is_a_forfeit(tmp_path):
    cmd = _crashing(tmp_path)
    proc = _in_dir(tmp_path, [*cmd, *_tournament(tmp_path, [_crasher("segfaults", how="segfault"), "ogd"], ["markov"])])
    _says_forfeited(proc, 1, 2)
    rows = _rows(tmp_path / "results" / "crashes")
    assert rows.loc[("ogd", "markov"), "status"] == "ok"
    assert "killed by signal 11" in rows.loc[("segfaults", "markov"), "forfeit_reason"]


def test_any_base_exception_a_plugin_raises_is_a_forfeit_naming_who(tmp_path):
    """A plugin's KeyboardInterrupt, GeneratorExit or own BaseException, in any call: only a Ctrl-C the arena
    receives interrupts a run (tests/test_hardening.py)."""
    cmd = _crashing(tmp_path)
    forecasters = [
        _crasher("interrupts", how="keyboard", where="predict"),
        _crasher("closes", how="generator_exit", where="reset"),
        _crasher("troubles", how="own", where="update", at=5),
        "ogd",
    ]
    nature = {"name": "crashing_nature", "label": "interrupting_nature", "params": {"how": "keyboard", "at": 4}}
    proc = _in_dir(tmp_path, [*cmd, *_tournament(tmp_path, forecasters, ["iid_bernoulli", nature])])
    _says_forfeited(proc, 7, 8)
    rows = _rows(tmp_path / "results" / "crashes")
    expected = {
        "interrupts": ("forecaster", 3, "predict raised KeyboardInterrupt: plugin trouble"),
        "closes": ("forecaster", 0, "reset raised GeneratorExit: plugin trouble"),
        "troubles": ("forecaster", 5, "update raised PluginTrouble: plugin trouble"),
    }
    for fc, (who, step, reason) in expected.items():
        row = rows.loc[(fc, "iid_bernoulli")]
        assert (row["status"], row["forfeit_who"], row["forfeit_step"]) == ("forfeit", who, step), fc
        assert reason in row["forfeit_reason"], row["forfeit_reason"]
    assert rows.loc[("ogd", "iid_bernoulli"), "status"] == "ok"
    row = rows.loc[("ogd", "interrupting_nature")]
    assert (row["forfeit_who"], row["forfeit_step"]) == ("nature", 4) and "KeyboardInterrupt" in row["forfeit_reason"]


@pytest.mark.skipif(not hasattr(os, "killpg"), reason="sends Ctrl-C to a process group")
def test_a_ctrl_c_the_arena_receives_interrupts_a_single_matchup(tmp_path):
    """The user's Ctrl-C, while a plugin's call runs (it sleeps in predict), is an interrupt, not a forfeit."""
    import signal

    cmd = _crashing(tmp_path)
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONPATH": str(tmp_path)}
    proc = subprocess.Popen(
        [*cmd, "forecaster=crashing", "forecaster.how=sleep", "T=20", f"results_root={tmp_path / 'results'}"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # as in a terminal
    )
    time.sleep(8)
    os.killpg(proc.pid, signal.SIGINT)  # as a terminal does: the whole foreground group
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err[-2000:]
    assert err.strip().splitlines()[-1] == "interrupted: 0 of 1 stored; run the same command to resume", err
    assert "Traceback" not in err and "FORFEIT" not in out


def test_a_base_exception_a_constructor_raises_is_a_config_error(tmp_path):
    """A plugin is built (and checked) before anything runs: one line, exit status 2, not an interrupt."""
    cmd = _crashing(tmp_path)
    overrides = ["forecaster=crashing", "forecaster.how=keyboard", "forecaster.where=__init__", "T=20"]
    proc = _in_dir(tmp_path, [*cmd, *overrides, f"results_root={tmp_path / 'results'}"])
    assert "forecaster: __init__ raised KeyboardInterrupt: plugin trouble" in _one_line_error(proc)
    assert not (tmp_path / "results").exists()


def test_a_base_exception_in_a_notebook_is_a_forfeit_too():
    """``arena.play`` without the command line: a plugin's KeyboardInterrupt forfeits (a Ctrl-C would interrupt)."""

    class Interrupting(Forecaster):
        name = "interrupting"

        def predict(self, x):
            raise KeyboardInterrupt

        def update(self, x, p, y):
            pass

    result = arena.play("binary", Interrupting(), "iid_bernoulli", T=10)
    assert (result.forfeit.who, result.forfeit.step) == ("forecaster", 1)
    assert result.forfeit.reason == "predict raised KeyboardInterrupt: "


def _same_rows(a: pd.DataFrame, b: pd.DataFrame) -> None:
    """The rows of ``b`` have the same numbers and status in ``a`` (ids and configs name their tournament)."""
    machine = ("seconds", "peak_rss", "time")
    cols = [c for c in b.columns if (b[c].dtype.kind in "fiub" or c == "status") and not c.startswith(machine)]
    assert len(cols) > 10
    pd.testing.assert_frame_equal(a.loc[b.index, cols], b[cols])


@pytest.mark.skipif(not hasattr(os, "fork"), reason="supervision forks")
def test_a_plugin_that_breaks_the_referee_forfeits_its_matchup_only(tmp_path):
    cmd = _crashing(tmp_path)
    broken = _in_dir(
        tmp_path,
        [*cmd, *_tournament(tmp_path, [_crasher("breaks", how="break_referee"), "ogd", "running_mean"], ["markov"])],
    )
    _says_forfeited(broken, 1, 3)
    rows = _rows(tmp_path / "results" / "crashes")
    row = rows.loc[("breaks", "markov")]
    assert row["status"] == "forfeit" and "arena.referee.Referee" in row["forfeit_reason"], row["forfeit_reason"]
    assert "TypeError" in row["forfeit_reason"]
    clean = _in_dir(tmp_path, [*cmd, *_tournament(tmp_path, ["ogd", "running_mean"], ["markov"], name="clean")])
    assert clean.returncode == 0, clean.stderr[-2000:]
    _same_rows(rows, _rows(tmp_path / "results" / "clean"))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="supervision forks")
@pytest.mark.parametrize("how", ["spoil", "spoil_numpy"])
def test_a_plugin_cannot_change_another_matchups_result(tmp_path, how):
    """A forecaster that patches the referee (or numpy) from predict, so that every later matchup of its process
    would get Brier 0.999: every other row is identical to a run without it."""
    cmd = _crashing(tmp_path)
    natures = ["iid_bernoulli", "markov"]
    spoiled = _in_dir(tmp_path, [*cmd, *_tournament(tmp_path, [_crasher("spoils", how=how), "ogd", "k29"], natures)])
    assert spoiled.returncode == 0, spoiled.stderr[-2000:]
    clean = _in_dir(tmp_path, [*cmd, *_tournament(tmp_path, ["ogd", "k29"], natures, name="clean")])
    assert clean.returncode == 0, clean.stderr[-2000:]
    rows = _rows(tmp_path / "results" / "crashes")
    assert len(rows) == 6 and (rows["brier"] < 0.5).sum() >= 4
    _same_rows(rows, _rows(tmp_path / "results" / "clean"))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="supervision forks")
def test_a_leftover_thread_does_not_keep_a_single_matchup_alive(tmp_path):
    cmd = _crashing(tmp_path)
    root = tmp_path / "results"
    start = time.monotonic()
    proc = _in_dir(tmp_path, [*cmd, "forecaster=crashing", "forecaster.how=thread", "T=20", f"results_root={root}"])
    assert proc.returncode == 0 and time.monotonic() - start < 120, proc.stderr[-2000:]
    assert pd.read_parquet(next(root.glob("single/*/summary.parquet")))["status"].tolist() == ["ok"]


class _Peeking(arena.Nature):
    """Says it is oblivious (``adaptive`` False) but answers with the forecast it is shown."""

    name = "peeking"
    games = ("binary",)

    def respond(self, t, x, forecast):
        return arena.Bernoulli(forecast.mean)


class _Honest(arena.Nature):
    name = "honest"
    games = ("binary",)

    def respond(self, t, x, forecast):
        return arena.Bernoulli(0.3)


def test_an_oblivious_nature_that_reads_the_forecast_is_an_error_naming_it():
    # k29 plays every round at once against oblivious natures (when no Forecast object is kept)
    result = arena.play("binary", "k29", _Peeking(), T=50, keep_forecasts=False)
    assert result.forfeit is not None and result.forfeit.who == "nature", result.forfeit
    assert "nature 'peeking' says it is oblivious but read the forecast" in result.forfeit.reason
    assert "adaptive = True" in result.forfeit.reason
    fast, steps = (
        arena.play("binary", "k29", _Honest(), T=200, seed=4, keep_forecasts=False, fast_path=f) for f in (True, False)
    )
    assert fast.forfeit is None and fast.summary == steps.summary
