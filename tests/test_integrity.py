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
    assert report.returncode == 0, report.stderr[-2000:]
    assert "not a registered plugin" in (copy / "summary.md").read_text()
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
    proc = _run([str(BIN / "arena-redteam"), override, "T=20", f"results_root={tmp_path}"], tmp_path)
    assert override.split("=")[0] + "=" in _one_line_error(proc)
    assert not list(tmp_path.rglob("*.json"))  # no attack (Hydra makes its run folder before the job)


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
