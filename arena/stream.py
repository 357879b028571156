"""Stored matchups -> the summary, curves and reliability tables, streamed in bounded memory.

:func:`stream_tables` reads the store (:func:`arena.store.stored_matchups`, one record at a time)
in batches of :data:`BATCH` matchups. The curves and the reliability bins (tens of rows a
matchup: most of the bytes) never stay in memory: each batch becomes a Parquet file of a scratch
folder (in the system's temp folder: the results directory keeps its few files), and the batches
are then streamed into one table (Parquet, with the key columns dictionary-encoded, and CSV)
through a :mod:`pyarrow.dataset` over each, whose schema is the union of theirs (a column some
games lack is null there, as :func:`collect` makes it). The summary (one row a
matchup) is kept, one frame per batch, and returned for the statistics across seeds. The tables
equal those of :func:`collect`, row for row.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import NamedTuple

import pandas as pd
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from arena.results import KEY_COLUMNS, atomic_write, csv_writer
from arena.store import FOLDER, _long, selected_ids, stored_matchups

#: Matchups a batch: a few MB of curves, read and written at once.
BATCH = 1024
#: The long tables streamed to files (the summary is returned).
LONG = ("curves", "reliability")


class Streamed(NamedTuple):
    """What :func:`stream_tables` made: the summary (sorted as :func:`collect` sorts it) and the
    Parquet paths of the long tables written, by name."""

    summary: pd.DataFrame
    written: dict[str, Path]


def stream_tables(out_dir: Path | str, only: set[str] | None = None) -> Streamed:
    """Read every whole stored matchup (of ``only``, when given) in batches; write ``curves`` and
    ``reliability`` (Parquet and CSV, each atomically) and return them with the summary. Raises
    FileNotFoundError when no matchup reads back whole."""
    out_dir = Path(out_dir)
    scratch = Path(tempfile.mkdtemp(prefix="arena-tables."))  # local disk, not the results' shared filesystem
    try:
        frames: list[pd.DataFrame] = []
        batches: dict[str, list[Path]] = {name: [] for name in LONG}
        rows: list[dict] = []
        parts: dict[str, list] = {name: [] for name in LONG}
        for stored in stored_matchups(out_dir, only):
            rows.append(stored["row"])
            keys = {k: stored["row"][k] for k in KEY_COLUMNS}
            for name in LONG:
                if stored.get(name) is not None:
                    parts[name].append((stored[name], keys))
            if len(rows) == BATCH:
                _flush(scratch, rows, parts, frames, batches)
        _flush(scratch, rows, parts, frames, batches)
        if not frames:
            raise FileNotFoundError(f"no readable matchups under {out_dir / FOLDER}; rerun the tournament")
        summary = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
        summary = summary.sort_values(["game", "forecaster", "nature", "seed", "T"]).reset_index(drop=True)
        written = {name: _join(files, out_dir, name) for name, files in batches.items() if files}
        return Streamed(summary, written)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _flush(scratch: Path, rows: list[dict], parts: dict[str, list], frames: list, batches: dict) -> None:
    """Turn the batch read so far into a summary frame and a Parquet file per long table; empty the batch."""
    if not rows:
        return
    frames.append(pd.DataFrame(rows))
    for name, tables in parts.items():
        table = _long(tables)
        if not table.empty:
            path = scratch / f"{name}.{len(batches[name]):06d}.parquet"
            pq.write_table(pa.Table.from_pandas(table, preserve_index=False), path)
            batches[name].append(path)
        tables.clear()
    rows.clear()


def _join(files: list[Path], out_dir: Path, name: str) -> Path:
    """The batches ``files`` of one long table as ``out_dir/name.parquet`` and ``.csv``, streamed."""
    schemas = [pq.read_schema(f) for f in files]
    schema = pa.unify_schemas([s.remove_metadata() for s in schemas], promote_options="permissive")
    path = out_dir / f"{name}.parquet"
    keys = [k for k in KEY_COLUMNS if k in schema.names and pa.types.is_string(schema.field(k).type)]

    def batches():  # one batch file at a time, in order, with the columns of the union
        for f in files:
            yield ds.dataset(f, schema=schema, format="parquet").to_table()

    def parquet(tmp: str) -> None:
        with pq.ParquetWriter(tmp, schema, use_dictionary=keys or True, write_page_checksum=True) as writer:
            for table in batches():
                writer.write_table(table)

    def csv(tmp: str) -> None:
        with csv_writer(tmp, schema) as writer:
            for table in batches():
                writer.write_table(table)

    atomic_write(path, parquet)
    atomic_write(path.with_suffix(".csv"), csv)
    return path


def collect(out_dir: Path | str, only: set[str] | None = None) -> dict[str, pd.DataFrame]:
    """Read every whole stored matchup (of ``only``, when given) into one table per part, in memory
    (:func:`stored_matchups`; :func:`arena.aggregate.write_tables` streams them to files instead).

    A corrupt or partial result is reported on stderr and left out, never aggregated; the next
    run of its tournament plays it again.
    """
    out_dir = Path(out_dir)
    if not selected_ids(out_dir, only):
        raise FileNotFoundError(f"no finished matchups under {out_dir / FOLDER}; run a tournament first")
    rows, parts = [], {"curves": [], "reliability": []}
    for stored in stored_matchups(out_dir, only):
        rows.append(stored["row"])
        keys = {k: stored["row"][k] for k in KEY_COLUMNS}
        for part, tables in parts.items():
            if stored.get(part) is not None:
                tables.append((stored[part], keys))
    if not rows:
        raise FileNotFoundError(f"no readable matchups under {out_dir / FOLDER}; rerun the tournament")
    summary = pd.DataFrame(rows).sort_values(["game", "forecaster", "nature", "seed", "T"]).reset_index(drop=True)
    return {"summary": summary, **{name: _long(tables) for name, tables in parts.items()}}


__all__ = ["BATCH", "Streamed", "collect", "stream_tables"]
