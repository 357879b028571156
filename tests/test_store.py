"""The store of finished matchups: a few append-only logs per results directory, whatever the number of
matchups; records whole or not at all; a torn record quarantined and its matchup played again; results
directories of one file per matchup still read; the tables streamed in batches equal to those read at once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from _stored import record, rewrite, store_binary_matchups  # tests/_stored.py

from arena import store
from arena.results import summary_digest
from arena.store import append, damaged, done_ids, frame, quarantine_record, scan, stored_ids
from arena.stream import collect

BIN = Path(sys.executable).parent
#: 2 forecasters x 2 natures x 6 seeds = 24 matchups in 3 shards.
TOURNAMENT = [
    "tournament=bench",
    "tournament.T=[20]",
    "tournament.seeds=[0,1,2,3,4,5]",
    "tournament.forecasters=[running_mean,ogd]",
    "tournament.natures=[iid_bernoulli,logistic]",
    "tournament.shards=3",
    "hydra/launcher=basic",
    "report=false",
]
TOTAL = 24


def arena(root: Path, *extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONHASHSEED": "0"}
    proc = subprocess.run(
        [str(BIN / "arena"), *TOURNAMENT, f"results_root={root}", *extra],
        cwd=root,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def played(out: Path) -> int:
    return (out / ".progress").stat().st_size // 16  # one 16-byte record per matchup played (arena.jobs)


@pytest.fixture(scope="module")
def tournament(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("store")
    arena(root)
    return root / "bench"


def test_a_tournament_keeps_one_log_per_shard_and_a_bounded_number_of_files(tournament):
    logs = sorted(p.name for p in (tournament / "matchups").iterdir())
    assert logs == [store.CHECKED, *(f"shard-{k}-of-3.jsonl" for k in range(3))]
    assert len(stored_ids(tournament)) == TOTAL
    files = [p for p in tournament.rglob("*") if p.is_file()]
    assert len(files) <= 4 * 3 + 50, len(files)


def test_records_are_whole_lines_with_a_checksum_of_the_id_and_the_json(tmp_path):
    append(tmp_path, "a", "m1", b'{"row": 1}')
    append(tmp_path, "a", "m2", b'{"row": 2}')
    data = (tmp_path / "matchups" / "a.jsonl").read_bytes()
    assert data == frame("m1", b'{"row": 1}') + frame("m2", b'{"row": 2}')
    assert {m: store.read(w) for m, w in scan(tmp_path).items()} == {"m1": b'{"row": 1}', "m2": b'{"row": 2}'}


def test_a_torn_record_is_left_out_then_quarantined_and_the_next_record_starts_a_new_line(tmp_path):
    log = tmp_path / "matchups" / "a.jsonl"
    append(tmp_path, "a", "m1", b'{"row": 1}')
    whole = frame("m2", b'{"row": 2}')
    with open(log, "ab") as f:  # a writer killed mid-line
        f.write(whole[:15])
    assert set(scan(tmp_path)) == {"m1"} and not damaged(tmp_path)  # a last line may be being written
    append(tmp_path, "a", "m3", b'{"row": 3}')
    assert set(scan(tmp_path)) == {"m1", "m3"}
    (bad,) = damaged(tmp_path)
    assert bad.mid == "m2"  # its id still reads
    assert quarantine_record(tmp_path, bad.where, "torn") and not quarantine_record(tmp_path, bad.where, "torn")
    assert not damaged(tmp_path) and set(scan(tmp_path)) == {"m1", "m3"}  # the other records stay where they were
    assert (tmp_path / "corrupt" / "a.jsonl").read_bytes() == whole[:15] + b"\n"


def test_a_flipped_byte_is_found_by_the_checksum(tmp_path):
    append(tmp_path, "a", "m1", b'{"value": 0.25}')
    log = tmp_path / "matchups" / "a.jsonl"
    log.write_bytes(log.read_bytes().replace(b"0.25", b"0.35"))
    assert not scan(tmp_path) and [d.mid for d in damaged(tmp_path)] == ["m1"]


def _append_many(out: str, log: str, who: int, n: int) -> None:
    for i in range(n):
        append(out, log, f"m{who}_{i}", json.dumps({"row": "x" * (100 + 37 * i % 5000)}).encode())


def test_processes_appending_to_one_log_never_interleave(tmp_path):
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_append_many, args=(str(tmp_path), "shared", k, 150)) for k in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    assert len(scan(tmp_path)) == 600 and not damaged(tmp_path)


def test_a_tournament_killed_mid_record_replays_only_that_matchup(tmp_path, tournament):
    import shutil

    out = tmp_path / "bench"
    shutil.copytree(tournament, out)
    victim = sorted(scan(out))[7]
    where = scan(out)[victim]
    data = where.path.read_bytes()
    end = data.index(b"\n", where.start) + 1
    where.path.write_bytes(data[: where.start] + data[end:] + data[where.start : end - 40])  # the last, torn
    assert len(stored_ids(out)) == TOTAL - 1
    proc = arena(tmp_path)
    assert played(out) == 1 and proc.stderr.count("corrupt result") <= 1  # the torn line: quarantined once, if found
    assert len(stored_ids(out)) == TOTAL  # written after it, on a line of its own
    assert summary_digest(pd.read_parquet(out / "summary.parquet")) == summary_digest(
        pd.read_parquet(tournament / "summary.parquet")
    )
    proc = arena(tmp_path)
    assert played(out) == 0 and not damaged(out)


def test_a_record_read_back_whole_is_not_parsed_again_unless_it_changes(tmp_path, tournament):
    import shutil

    out = tmp_path / "bench"
    shutil.copytree(tournament, out)
    ids = sorted(stored_ids(out))
    assert done_ids(out, ids) == set(ids)  # read and checked once
    assert len((out / "matchups" / store.CHECKED).read_text().splitlines()) == TOTAL
    tampered = record(out, ids[3])
    tampered["row"]["seed"] = -1  # a valid checksum over an invalid row: checked again, quarantined
    rewrite(out, ids[3], tampered)
    assert done_ids(out, ids) == set(ids) - {ids[3]}
    assert ids[3] not in stored_ids(out)


def test_a_matchup_stored_by_its_run_is_known_whole_without_parsing_it_again(tmp_path, tournament, monkeypatch):
    """The run that stores a record (no trace) notes its checksum at once: the first rerun's done check reads no
    record; a record changed since (another checksum) is parsed and checked."""
    import shutil

    out = tmp_path / "bench"
    shutil.copytree(tournament, out)
    ids = sorted(stored_ids(out))
    noted = (out / "matchups" / store.CHECKED).read_text().splitlines()
    assert sorted(line.split("\t")[1] for line in noted) == ids  # one line a matchup, written as it was stored
    parsed = []
    load = store._load
    monkeypatch.setattr(store, "_load", lambda out_dir, mid, *a: parsed.append(mid) or load(out_dir, mid, *a))
    assert done_ids(out, ids) == set(ids) and parsed == []
    tampered = record(out, ids[5])
    tampered["row"]["seed"] = -1
    rewrite(out, ids[5], tampered)
    assert done_ids(out, ids) == set(ids) - {ids[5]} and parsed == [ids[5]]


def _old_layout(out: Path) -> None:
    """Turn a results directory into the layout of one file per matchup (``matchups/<id>.json``, the JSON the
    record holds), as stored before the logs."""
    for mid in scan(out):
        (out / "matchups" / f"{mid}.json").write_text(json.dumps(record(out, mid)))
    for log in (out / "matchups").glob("*.jsonl"):
        log.unlink()


def test_a_results_directory_of_one_file_per_matchup_is_still_read_and_resumed(tmp_path, tournament):
    import shutil

    out = tmp_path / "bench"
    shutil.copytree(tournament, out)
    _old_layout(out)
    assert stored_ids(out) == stored_ids(tournament) and done_ids(out, stored_ids(out)) == stored_ids(out)
    pd.testing.assert_frame_equal(collect(out)["curves"], collect(tournament)["curves"])
    (out / "summary.parquet").unlink()
    arena(tmp_path)
    assert played(out) == 0  # every matchup found stored
    assert summary_digest(pd.read_parquet(out / "summary.parquet")) == summary_digest(
        pd.read_parquet(tournament / "summary.parquet")
    )
    bad = next((out / "matchups").glob("*.json"))
    bad.write_text("{")  # a damaged old file: moved to corrupt/, played again into a log
    arena(tmp_path)
    assert played(out) == 1 and (out / "corrupt" / "matchups" / bad.name).is_file()
    assert bad.stem in stored_ids(out)


def test_the_summary_is_sorted_a_stretch_at_a_time_as_pandas_sorts_it_at_once(tmp_path, monkeypatch):
    from arena import stream

    rng = np.random.default_rng(3)
    n = 50
    whole = pd.DataFrame(
        {
            "game": rng.choice(["binary", "quantile"], n),
            "forecaster": rng.choice(["k29", "ogd", "hedge"], n),
            "nature": pd.Series(rng.choice(["a", "b", "c"], n), dtype=object).where(rng.random(n) > 0.1, None),
            "seed": rng.integers(0, 4, n),
            "T": rng.choice([10, 100], n),
            "brier": rng.random(n),
            "row": np.arange(n),  # ties keep their order: the sort is stable
        }
    )
    files = []
    for i, part in enumerate(np.array_split(np.arange(n), 4)):  # batches in the store's order, not sorted
        batch = whole.iloc[part].reset_index(drop=True)
        if i == 2:
            batch = batch.assign(extra=1.5)  # a column only some batches have: null in the others
        files.append(tmp_path / f"summary.{i:06d}.parquet")
        pq.write_table(pa.Table.from_pandas(batch, preserve_index=False), files[-1])
    monkeypatch.setattr(stream, "RUN", 8)  # a run per batch file, merged eight rows at a time
    rows, stretches = stream._sorted(files, tmp_path)
    got = pd.concat([pd.read_parquet(f) for f in stretches], ignore_index=True)
    want = pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)
    want = want.sort_values(list(stream.ORDER), kind="stable").reset_index(drop=True)
    assert rows == n and len(stretches) == 7
    assert not want["row"].is_monotonic_increasing  # the batches were not in order
    pd.testing.assert_frame_equal(got[list(want.columns)], want)


def test_tables_streamed_in_batches_equal_the_tables_read_at_once(tmp_path, monkeypatch):
    from arena import stream

    out = store_binary_matchups(tmp_path, ["k29", "running_mean"], ["iid_bernoulli", "sinusoid"], [0, 1, 2], T=40)
    monkeypatch.setattr(stream, "BATCH", 5)  # 12 matchups: three batches
    monkeypatch.setattr(stream, "RUN", 7)  # and the summary sorted in runs of seven rows or so, then merged
    rows, written = stream.stream_tables(out)
    whole = collect(out)
    assert rows == len(whole["summary"]) == 12
    # the summary file is the summary read at once, written to Parquet: the same rows in the same order
    once = pa.Table.from_pandas(whole["summary"], preserve_index=False).to_pandas()
    pd.testing.assert_frame_equal(pd.read_parquet(written["summary"]), once)
    for name in ("curves", "reliability"):
        pd.testing.assert_frame_equal(pd.read_parquet(written[name]), whole[name])
        assert pd.read_csv(written[name].with_suffix(".csv")).shape == whole[name].shape
    # the curves' moments over seeds, combined batch by batch: those of the whole table at once, to 1e-12
    # (another summation order), each point's count and first seed exactly
    from arena.moments import CURVE_KEYS, moments, pool_bins

    stats, once = pd.read_parquet(written["curve_stats"]), moments(whole["curves"], CURVE_KEYS)
    pd.testing.assert_frame_equal(stats, once, check_exact=False, rtol=1e-12)
    assert (stats["n"] == 3).all() and (stats["first_seed"] == 0).all()  # three seeds a point, in three batches
    # the reliability bins pooled over seeds, batch by batch: those of the whole table at once
    pooled = pd.read_parquet(written["reliability_pooled"])
    once = pool_bins(whole["reliability"], ["game", "T", "forecaster", "nature"])
    pd.testing.assert_frame_equal(pooled.drop(columns="n_seeds"), once, check_exact=False, rtol=1e-12)
    assert (pooled["n_seeds"] == 3).all()
    assert sorted(p.name for p in out.iterdir() if p.name != "matchups") == [
        "curve_stats.csv",
        "curve_stats.parquet",
        "curves.csv",
        "curves.parquet",
        "reliability.csv",
        "reliability.parquet",
        "reliability_pooled.csv",
        "reliability_pooled.parquet",
        "summary.csv",
        "summary.parquet",
    ]  # the scratch batches lie elsewhere, and are gone
