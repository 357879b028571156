"""Results and configs from elsewhere are untrusted: ``arena-rerun`` plays only registered plugins with
plain parameters unless ``--trust`` (a ``_target_`` names any Python callable), never imports from the
working directory for it, and no label, name or stored value writes outside the results directory."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

BIN = Path(sys.executable).parent


def _env() -> dict:
    return {**os.environ, "MPLBACKEND": "Agg", "OPENBLAS_NUM_THREADS": "1"}


def _run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=_env(), timeout=600)


class Payload:
    """Unpickling it creates a file: proof that code from a results directory ran."""

    def __init__(self, path: str):
        self.path = path

    def __reduce__(self):
        return (Path(self.path).touch, ())


@pytest.fixture(scope="module")
def one_row(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("one")
    proc = _run(
        [
            str(BIN / "arena"),
            "forecaster=running_mean",
            "nature=iid_bernoulli",
            "T=50",
            "report=false",
            f"results_root={root}",
        ],
        root,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return next(root.glob("single/*/summary.parquet"))


def _tampered(one_row: Path, where: Path, forecaster: dict) -> Path:
    summary = pd.read_parquet(one_row)
    config = json.loads(summary.loc[0, "config"])
    config["forecaster"] = forecaster
    summary.loc[0, "config"] = json.dumps(config)
    summary.to_csv(where / "summary.csv", index=False)
    return where / "summary.csv"


@pytest.mark.parametrize("target", ["pandas.read_pickle", "joblib.load"])
def test_rerun_refuses_a_config_that_names_any_callable(one_row, tmp_path, target):
    proof = tmp_path / "ran"
    with open(tmp_path / "payload.pkl", "wb") as f:
        pickle.dump(Payload(str(proof)), f)
    key = "filepath_or_buffer" if target.startswith("pandas") else "filename"
    table = _tampered(one_row, tmp_path, {"_target_": target, key: str(tmp_path / "payload.pkl")})
    proc = _run([str(BIN / "arena-rerun"), str(table), "--row", "0"], tmp_path)
    assert proc.returncode == 2 and not proof.exists()
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert f"names {target}, which is not a registered plugin" in proc.stderr and "--trust" in proc.stderr


def test_rerun_never_imports_from_the_working_directory(one_row, tmp_path):
    proof = tmp_path / "imported"
    (tmp_path / "evil_mod.py").write_text(f"open({str(proof)!r}, 'w').close()\nclass X: pass\n")
    table = _tampered(one_row, tmp_path, {"_target_": "evil_mod.X"})
    proc = _run([str(BIN / "arena-rerun"), str(table), "--row", "0"], tmp_path)
    assert proc.returncode == 2 and not proof.exists() and "evil_mod.X" in proc.stderr
    nested = _tampered(
        one_row, tmp_path, {"_target_": "forecasters.baselines.RunningMean", "window": {"_target_": "evil_mod.X"}}
    )
    proc = _run([str(BIN / "arena-rerun"), str(nested), "--row", "0"], tmp_path)
    assert proc.returncode == 2 and not proof.exists() and "'_target_' at forecaster.window" in proc.stderr
    trusted = _run([str(BIN / "arena-rerun"), str(table), "--row", "0", "--trust"], tmp_path)
    assert proof.exists() and trusted.returncode != 0  # --trust runs it (and X is no forecaster)


def test_the_registered_plugins_of_a_row_still_rerun(one_row, tmp_path):
    proc = _run([str(BIN / "arena-rerun"), str(one_row), "--row", "0"], tmp_path)
    assert proc.returncode == 0 and "identical to the stored row" in proc.stdout, proc.stdout + proc.stderr


def test_labels_and_names_never_write_outside_the_results_directory(tmp_path):
    root = tmp_path / "deep" / "er" / "results"
    proc = _run(
        [
            str(BIN / "arena"),
            "forecaster=running_mean",
            "nature=iid_bernoulli",
            "T=20",
            "report=false",
            "forecaster_label=../../../../escaped",
            f"results_root={root}",
        ],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    inside = {p.resolve() for p in root.rglob("*")}
    assert not [
        p
        for p in tmp_path.rglob("*")
        if p.resolve() not in inside
        and root not in [p, *p.parents]
        and p.resolve() not in [q.resolve() for q in root.parents]
    ]
    summary = pd.read_parquet(next(root.glob("single/*/summary.parquet")))
    assert summary.loc[0, "forecaster"] == "../../../../escaped"  # the label is kept as written, in the table
    for bad, message in (
        ("tournament_name=../../escaped", "tournament_name='../../escaped': give a plain folder"),
        ("results_root=", "results_root='': give the folder"),
    ):
        proc = _run([str(BIN / "arena"), bad], tmp_path)
        assert proc.returncode == 2 and message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_a_slash_in_a_tournament_label_is_a_file_name_and_reaches_the_summary(tmp_path):
    conf = tmp_path / "conf" / "tournament"
    conf.mkdir(parents=True)
    (conf / "slashed.yaml").write_text(
        "# @package _global_\ntournament_name: slashed\ntournament:\n  name: slashed\n"
        "  forecasters: [{name: ogd, label: my/ogd}]\n  natures: [iid_bernoulli]\n  seeds: [0]\n  T: [20]\n"
        "  shards: 1\nhydra:\n  mode: MULTIRUN\n  sweeper:\n    params:\n      shard: range(0,${tournament.shards})\n"
    )
    cmd = [
        str(BIN / "arena"),
        f"hydra.searchpath=[file://{tmp_path / 'conf'}]",
        "tournament=slashed",
        "report=false",
        "hydra/launcher=basic",
        f"results_root={tmp_path / 'results'}",
    ]
    proc = _run(cmd, tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = tmp_path / "results" / "slashed"
    from arena.store import CHECKED, stored_ids

    assert [m.startswith("binary__my_ogd__") for m in stored_ids(out)] == [True]
    logs = [p for p in (out / "matchups").iterdir() if p.name != CHECKED]  # beside the checksums' cache
    assert logs and all(p.suffix == ".jsonl" for p in logs)  # the logs: no file named by a label
    assert pd.read_parquet(out / "summary.parquet")["forecaster"].tolist() == ["my/ogd"]


def test_a_stored_game_that_is_a_path_is_never_a_folder(tmp_path, one_row):
    import shutil

    out = tmp_path / "results"
    shutil.copytree(one_row.parent, out)
    from _stored import record, rewrite

    from arena.store import stored_ids

    (mid,) = stored_ids(out)
    data = record(out, mid)
    data["row"]["game"] = "../../X"
    rewrite(out, mid, data)
    for f in out.glob("summary.*"):
        f.unlink()
    proc = _run([str(BIN / "arena-report"), str(out)], tmp_path)
    assert proc.returncode == 2 and "not a plain name" in proc.stderr, proc.stderr
    assert not (tmp_path / "X").exists() and not (out.parent / "X").exists()
