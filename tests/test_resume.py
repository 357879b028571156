"""Tournaments resume: a killed run finishes on rerun with the same summary; corrupt results are
detected, never aggregated, and played again; any result row can be rerun exactly (arena-rerun)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from arena.results import collect, read_stored, summary_digest

BIN = Path(sys.executable).parent
#: 2 forecasters x 2 natures x 3 seeds = 12 matchups in 2 shards, each long enough to kill the run midway.
TOURNAMENT = ["tournament=bench", "tournament.T=[1500]", "tournament.seeds=[0,1,2]",
              "tournament.forecasters=[linear_df,ogd]", "tournament.natures=[iid_bernoulli,logistic]",
              "tournament.shards=2", "hydra.launcher.n_jobs=2",
              "report=false"]
TOTAL = 12


def _env() -> dict:
    return {**os.environ, "MPLBACKEND": "Agg", "OPENBLAS_NUM_THREADS": "1", "PYTHONHASHSEED": "0"}


def arena(root: Path, *extra: str, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(BIN / "arena"), *TOURNAMENT, f"results_root={root}", *extra], cwd=root,
                          capture_output=True, text=True, env=_env(), timeout=600)
    if check:
        assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def stored(out: Path) -> list[Path]:
    return sorted((out / "matchups").glob("*.json")) if (out / "matchups").is_dir() else []


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("whole")
    proc = arena(root)
    assert f"{TOTAL}/{TOTAL} (100%)" in proc.stdout  # the progress display counts the whole tournament
    return root / "bench"


def test_killed_tournament_resumes_to_the_same_summary(tmp_path, uninterrupted):
    out = tmp_path / "bench"
    proc = subprocess.Popen([str(BIN / "arena"), *TOURNAMENT, f"results_root={tmp_path}"], cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_env(),
                            start_new_session=True)
    deadline = time.monotonic() + 300
    while len(stored(out)) < 2 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)  # the launcher and its workers, mid-write or not
    proc.wait()
    killed_with = len(stored(out))
    assert 2 <= killed_with < TOTAL, f"the run was not killed midway ({killed_with} of {TOTAL} stored)"
    assert not (out / "summary.parquet").exists()

    again = arena(tmp_path)
    assert "resuming bench:" in again.stdout
    played = [ln for ln in again.stdout.splitlines() if ln.startswith("[arena] ") and " vs " in ln]
    assert len(played) <= TOTAL - killed_with + 2  # at most the two matchups in flight at the kill are redone
    assert f"{TOTAL}/{TOTAL} (100%)" in again.stdout
    ours, whole = pd.read_parquet(out / "summary.parquet"), pd.read_parquet(uninterrupted / "summary.parquet")
    assert len(ours) == TOTAL
    assert summary_digest(ours) == summary_digest(whole)

    third = arena(tmp_path)  # nothing left to play: no matchup line, the same summary
    assert not [ln for ln in third.stdout.splitlines() if " vs " in ln]
    assert summary_digest(pd.read_parquet(out / "summary.parquet")) == summary_digest(whole)


def test_corrupt_results_are_reported_left_out_and_played_again(tmp_path, uninterrupted):
    out = tmp_path / "bench"
    arena(tmp_path)
    rows = stored(out)
    truncated, garbled, foreign = rows[0], rows[1], rows[2]
    truncated.write_bytes(truncated.read_bytes()[:100])  # a half-written result
    whole = json.loads(garbled.read_text())
    whole["curves"]["value"] = whole["curves"]["value"][:-1]  # a damaged table: columns of unequal length
    garbled.write_text(json.dumps(whole))
    foreign.write_bytes(rows[3].read_bytes())  # another matchup's result under this id
    (out / "matchups" / ".x.json.123.tmp").write_bytes(b"half")  # a temp file left by a kill

    tables = collect(out)
    assert len(tables["summary"]) == TOTAL - 3  # the three damaged results are never aggregated
    proc = arena(tmp_path)
    assert proc.stderr.count("corrupt result") == 3, proc.stderr
    for f in (truncated, garbled, foreign):
        assert (out / "corrupt" / f.parent.name / f.name).is_file()  # kept for inspection
    assert not (out / "matchups" / ".x.json.123.tmp").exists()
    assert len([ln for ln in proc.stdout.splitlines() if " vs " in ln]) == 3  # exactly those are played again
    assert summary_digest(pd.read_parquet(out / "summary.parquet")) == summary_digest(
        pd.read_parquet(uninterrupted / "summary.parquet"))
    for f in rows:
        read_stored(out, f.stem)  # every result reads back whole


def test_collect_reports_what_it_leaves_out(tmp_path, uninterrupted, capsys):
    import shutil

    out = tmp_path / "copy"
    shutil.copytree(uninterrupted, out)
    victim = stored(out)[5]
    victim.write_bytes(b"")
    tables = collect(out)
    err = capsys.readouterr().err
    assert victim.name in err and "left out of the summary" in err
    assert victim.stem not in set(tables["summary"]["matchup_id"])
    assert len(tables["summary"]) == TOTAL - 1


@pytest.mark.parametrize("table", ["summary.parquet", "summary.csv"])
def test_any_row_reruns_exactly(uninterrupted, table, tmp_path):
    summary = pd.read_parquet(uninterrupted / "summary.parquet")
    k = int(summary.index[summary["forecaster"] == "linear_df"][-1])
    proc = subprocess.run([str(BIN / "arena-rerun"), str(uninterrupted / table), "--row", str(k)],
                          capture_output=True, text=True, env=_env(), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "identical to the stored row" in proc.stdout
    assert summary.loc[k, "matchup_id"] in proc.stdout


def test_rerun_reports_a_value_that_differs(uninterrupted, tmp_path):
    summary = pd.read_csv(uninterrupted / "summary.csv")
    summary.loc[0, "brier"] += 1e-9  # a tampered metric
    summary.to_csv(tmp_path / "tampered.csv", index=False)
    mid = summary.loc[0, "matchup_id"]
    proc = subprocess.run([str(BIN / "arena-rerun"), str(tmp_path / "tampered.csv"), "--matchup", mid],
                          capture_output=True, text=True, env=_env(), cwd=tmp_path)
    assert proc.returncode == 1
    assert "differs: brier" in proc.stdout
    assert proc.stdout.count("differs:") == 1


@pytest.mark.parametrize("args, message", [
    (["--row", "99"], "outside 0..11"),
    (["--matchup", "nope"], "no row has matchup_id 'nope'"),
])
def test_rerun_bad_input_is_one_line_and_status_2(uninterrupted, args, message, tmp_path):
    proc = subprocess.run([str(BIN / "arena-rerun"), str(uninterrupted), *args], capture_output=True, text=True,
                          env=_env(), cwd=tmp_path)
    assert proc.returncode == 2
    assert message in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_rerun_of_a_malformed_table_names_the_file(tmp_path):
    bad = tmp_path / "summary.csv"
    bad.write_bytes(b'a,b\n1,"unterminated\n')
    proc = subprocess.run([str(BIN / "arena-rerun"), str(bad), "--row", "0"], capture_output=True, text=True,
                          env=_env(), cwd=tmp_path)
    assert proc.returncode == 2
    assert str(bad) in proc.stderr and "Traceback" not in proc.stderr
