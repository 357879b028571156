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

from arena.jobs import PROGRESS_FILE
from arena.results import summary_digest
from arena.store import frame, read_stored, scan
from arena.stream import collect

BIN = Path(sys.executable).parent
#: 2 forecasters x 2 natures x 3 seeds = 12 matchups in 2 shards, each long enough to kill the run midway.
TOURNAMENT = [
    "tournament=bench",
    "tournament.T=[1500]",
    "tournament.seeds=[0,1,2]",
    "tournament.forecasters=[linear_df,ogd]",
    "tournament.natures=[iid_bernoulli,logistic]",
    "tournament.shards=2",
    "hydra.launcher.n_jobs=2",
    "report=false",
]
TOTAL = 12


def _env() -> dict:
    return {**os.environ, "MPLBACKEND": "Agg", "OPENBLAS_NUM_THREADS": "1", "PYTHONHASHSEED": "0"}


def arena(root: Path, *extra: str, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [str(BIN / "arena"), *TOURNAMENT, f"results_root={root}", *extra],
        cwd=root,
        capture_output=True,
        text=True,
        env=_env(),
        timeout=600,
    )
    if check:
        assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def played(out: Path) -> int:
    """The matchups that the last run of ``out`` played (one 16-byte record each in its progress file)."""
    return (out / PROGRESS_FILE).stat().st_size // 16


def stored(out: Path) -> list[str]:
    """The ids of the matchups stored whole (their records' checksums verified), sorted."""
    return sorted(scan(out))


def put(out: Path, mid: str, line: bytes) -> None:
    """Replace the line of the record of ``mid`` in its log by ``line`` (a damaged record, for a test)."""
    where = scan(out)[mid]
    data = where.path.read_bytes()
    end = data.index(b"\n", where.start) + 1
    where.path.write_bytes(data[: where.start] + line + data[end:])


def record(out: Path, mid: str) -> dict:
    """The stored JSON of ``mid``, as a dict."""
    where = scan(out)[mid]
    with open(where.path, "rb") as f:
        f.seek(where.offset)
        return json.loads(f.read(where.length))


def corrupt_text(out: Path) -> str:
    """Everything quarantined under ``corrupt/`` (the damaged records' lines)."""
    return "".join(f.read_text(errors="replace") for f in sorted((out / "corrupt").glob("*.jsonl")))


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("whole")
    proc = arena(root)
    assert f"{TOTAL}/{TOTAL} (100%)" in proc.stdout  # the progress display counts the whole tournament
    counts = [
        int(ln.split()[2].split("/")[0])
        for ln in proc.stdout.splitlines()
        if ln.startswith("[arena] matchups: ") and f"/{TOTAL} (" in ln
    ]
    assert len(set(counts)) == len(counts) <= 5 and TOTAL in counts  # a few lines (a pipe), each count once
    return root / "bench"


def test_killed_tournament_resumes_to_the_same_summary(tmp_path, uninterrupted):
    for attempt in range(3):  # a matchup takes some 0.1 s: on a loaded machine the run may end before the kill
        root = tmp_path / str(attempt)
        root.mkdir()
        out = root / "bench"
        proc = subprocess.Popen(
            [str(BIN / "arena"), *TOURNAMENT, f"results_root={root}"],
            cwd=root,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=_env(),
            start_new_session=True,
        )
        deadline = time.monotonic() + 300
        while len(stored(out)) < 2 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)  # the launcher and its workers, mid-write or not
        proc.wait()
        killed_with = len(stored(out))
        if killed_with < TOTAL:
            break
    assert 2 <= killed_with < TOTAL, f"the run was not killed midway ({killed_with} of {TOTAL} stored)"
    assert not (out / "summary.parquet").exists()

    again = arena(root)
    assert "resuming bench:" in again.stdout
    assert played(out) <= TOTAL - killed_with + 2  # at most the two matchups in flight at the kill are redone
    assert f"{TOTAL}/{TOTAL} (100%)" in again.stdout
    ours, whole = pd.read_parquet(out / "summary.parquet"), pd.read_parquet(uninterrupted / "summary.parquet")
    assert len(ours) == TOTAL
    assert summary_digest(ours) == summary_digest(whole)

    arena(root)  # nothing left to play, the same summary
    assert played(out) == 0
    assert summary_digest(pd.read_parquet(out / "summary.parquet")) == summary_digest(whole)


def test_corrupt_results_are_reported_left_out_and_played_again(tmp_path, uninterrupted):
    out = tmp_path / "bench"
    arena(tmp_path)
    rows = stored(out)
    truncated, garbled, foreign = rows[0], rows[1], rows[2]
    whole = record(out, garbled)
    whole["curves"]["value"] = whole["curves"]["value"][:-1]  # a damaged table: columns of unequal length
    put(out, garbled, frame(garbled, json.dumps(whole).encode()))
    put(out, foreign, frame(foreign, json.dumps(record(out, rows[3])).encode()))  # another matchup's result
    where = scan(out)[truncated]
    put(out, truncated, where.path.read_bytes()[where.start : where.start + 100] + b"\n")  # a half-written result
    (out / "matchups" / ".x.json.123.tmp").write_bytes(b"half")  # a temp file left by a kill

    tables = collect(out)
    assert len(tables["summary"]) == TOTAL - 3  # the three damaged results are never aggregated
    proc = arena(tmp_path)
    assert proc.stderr.count("corrupt result") == 3, proc.stderr
    for mid in (truncated, garbled, foreign):
        assert mid in corrupt_text(out)  # kept for inspection
    assert not (out / "matchups" / ".x.json.123.tmp").exists()
    assert played(out) == 3  # exactly those are played again
    assert summary_digest(pd.read_parquet(out / "summary.parquet")) == summary_digest(
        pd.read_parquet(uninterrupted / "summary.parquet")
    )
    for mid in rows:
        read_stored(out, mid)  # every result reads back whole


def test_collect_reports_what_it_leaves_out(tmp_path, uninterrupted, capsys):
    import shutil

    out = tmp_path / "copy"
    shutil.copytree(uninterrupted, out)
    victim = stored(out)[5]
    where = scan(out)[victim]
    put(out, victim, where.path.read_bytes()[where.start : where.start + 80] + b"\n")  # torn
    tables = collect(out)
    err = capsys.readouterr().err
    assert victim in err and "left out of the summary" in err
    assert victim not in set(tables["summary"]["matchup_id"])
    assert len(tables["summary"]) == TOTAL - 1


@pytest.mark.parametrize("table", ["summary.parquet", "summary.csv"])
def test_any_row_reruns_exactly(uninterrupted, table, tmp_path):
    summary = pd.read_parquet(uninterrupted / "summary.parquet")
    k = int(summary.index[summary["forecaster"] == "linear_df"][-1])
    proc = subprocess.run(
        [str(BIN / "arena-rerun"), str(uninterrupted / table), "--row", str(k)],
        capture_output=True,
        text=True,
        env=_env(),
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "identical to the stored row" in proc.stdout
    assert summary.loc[k, "matchup_id"] in proc.stdout


def test_rerun_reports_a_value_that_differs(uninterrupted, tmp_path):
    summary = pd.read_csv(uninterrupted / "summary.csv")
    summary.loc[0, "brier"] += 1e-9  # a tampered metric
    summary.to_csv(tmp_path / "tampered.csv", index=False)
    mid = summary.loc[0, "matchup_id"]
    proc = subprocess.run(
        [str(BIN / "arena-rerun"), str(tmp_path / "tampered.csv"), "--matchup", mid],
        capture_output=True,
        text=True,
        env=_env(),
        cwd=tmp_path,
    )
    assert proc.returncode == 1
    assert "differs: brier" in proc.stdout
    assert proc.stdout.count("differs:") == 1


@pytest.mark.parametrize(
    "args, message",
    [
        (["--row", "99"], "outside 0..11"),
        (["--matchup", "nope"], "no row has matchup_id 'nope'"),
    ],
)
def test_rerun_bad_input_is_one_line_and_status_2(uninterrupted, args, message, tmp_path):
    proc = subprocess.run(
        [str(BIN / "arena-rerun"), str(uninterrupted), *args], capture_output=True, text=True, env=_env(), cwd=tmp_path
    )
    assert proc.returncode == 2
    assert message in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_rerun_of_a_malformed_table_names_the_file(tmp_path):
    bad = tmp_path / "summary.csv"
    bad.write_bytes(b'a,b\n1,"unterminated\n')
    proc = subprocess.run(
        [str(BIN / "arena-rerun"), str(bad), "--row", "0"], capture_output=True, text=True, env=_env(), cwd=tmp_path
    )
    assert proc.returncode == 2
    assert str(bad) in proc.stderr and "Traceback" not in proc.stderr


# ----------------------------------------------------------------------------- hardening: damaged and shared results


def _copy(uninterrupted: Path, tmp_path: Path) -> Path:
    import shutil

    out = tmp_path / "bench"
    shutil.copytree(uninterrupted, out)
    return out


def test_a_result_cut_to_its_key_columns_or_a_directory_is_quarantined_and_played_again(tmp_path, uninterrupted):
    from arena.results import KEY_COLUMNS
    from arena.store import is_done

    out = _copy(uninterrupted, tmp_path)
    rows = stored(out)
    cut, dirred = rows[4], rows[7]
    whole = record(out, cut)
    whole["row"] = {k: whole["row"][k] for k in KEY_COLUMNS}  # the 6 key columns only
    put(out, cut, frame(cut, json.dumps(whole).encode()))
    put(out, dirred, b"\n")
    (out / "matchups" / f"{dirred}.json").mkdir()  # a directory where a one-file result would be
    assert len(collect(out)["summary"]) == TOTAL - 2  # never aggregated as a row of NaN
    assert not is_done(out, cut) and cut in corrupt_text(out)
    proc = arena(tmp_path)
    assert "corrupt result" in proc.stderr and "Traceback" not in proc.stderr
    assert (out / "corrupt" / "matchups" / f"{dirred}.json").is_dir()
    assert played(out) == 2
    assert summary_digest(pd.read_parquet(out / "summary.parquet")) == summary_digest(
        pd.read_parquet(uninterrupted / "summary.parquet")
    )


def test_a_damaged_plan_is_one_line_under_arena_report(tmp_path, uninterrupted):
    out = _copy(uninterrupted, tmp_path)
    (out / "plan.json").write_text('{"ids": [1, 2')
    proc = subprocess.run(
        [str(BIN / "arena-report"), str(out)], capture_output=True, text=True, env=_env(), cwd=tmp_path
    )
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert str(out / "plan.json") in proc.stderr and "rerun the tournament" in proc.stderr


def test_another_plan_never_replaces_the_stored_one_silently(tmp_path, uninterrupted):
    out = _copy(uninterrupted, tmp_path)
    plan, summary = (out / "plan.json").read_bytes(), (out / "summary.parquet").read_bytes()
    proc = arena(tmp_path, "tournament.seeds=[0]", check=False)
    assert proc.returncode != 0 and "holds another plan" in proc.stderr and "tournament_name=" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert (out / "plan.json").read_bytes() == plan and (out / "summary.parquet").read_bytes() == summary
    arena(tmp_path, "tournament.seeds=[0]", "replace_plan=true")
    assert played(out) == 0  # its 4 matchups were stored already
    assert len(pd.read_parquet(out / "summary.parquet")) == 4 and len(stored(out)) == TOTAL  # nothing deleted


def test_concurrent_runs_share_one_plan_and_refuse_another(tmp_path, uninterrupted):
    first = subprocess.Popen(
        [str(BIN / "arena"), *TOURNAMENT, f"results_root={tmp_path}"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
        start_new_session=True,
    )
    out = tmp_path / "bench"
    deadline = time.monotonic() + 300
    while len(stored(out)) < 1 and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    os.killpg(first.pid, signal.SIGSTOP)  # the first run holds the directory, mid-tournament
    try:
        other = arena(tmp_path, "tournament.seeds=[0]", check=False)
        same = arena(tmp_path, check=False)  # plays what is left while the first run is stopped
    finally:
        os.killpg(first.pid, signal.SIGCONT)
    first.communicate(timeout=600)
    assert first.returncode == 0
    assert other.returncode != 0 and f"is in use by arena pid {first.pid}" in other.stderr, other.stderr
    assert len(other.stderr.strip().splitlines()) == 1
    assert same.returncode == 0 and "same plan: sharing its work" in same.stdout, same.stdout + same.stderr
    assert summary_digest(pd.read_parquet(out / "summary.parquet")) == summary_digest(
        pd.read_parquet(uninterrupted / "summary.parquet")
    )


def test_a_trace_with_damaged_pages_is_detected(tmp_path):
    import arena
    from arena.results import matchup_id
    from arena.store import is_done, save_matchup

    r = arena.play("binary", "running_mean", "iid_bernoulli", T=5000, seed=0)
    row = r.row() | {"matchup_id": matchup_id("binary", "running_mean", "iid_bernoulli", 0, 5000, {})}
    save_matchup(tmp_path, row, r.curves, None, r.trace)
    mid = row["matchup_id"]
    assert is_done(tmp_path, mid)
    trace = tmp_path / "traces" / f"{mid}.parquet"
    data = bytearray(trace.read_bytes())
    for i in range(200, 1200, 7):  # inside the data pages, far from the footer at the end
        data[i] ^= 0x55
    trace.write_bytes(bytes(data))
    import pyarrow.parquet as pq

    pq.read_metadata(trace)  # the footer is intact
    assert not is_done(tmp_path, mid)
    assert (tmp_path / "corrupt" / "traces" / trace.name).is_file()
