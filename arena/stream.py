"""Stored matchups -> the summary, curves and reliability tables, streamed in bounded memory.

:func:`stream_tables` reads the store (:func:`arena.store.stored_matchups`, one record at a time)
in batches of :data:`BATCH` matchups. No table stays in memory: each batch becomes a Parquet file
per table in a scratch folder (in the system's temp folder: the results directory keeps its few
files), and the batches are then streamed into one table each (Parquet, with the key columns
dictionary-encoded, and CSV) through :mod:`pyarrow`, with the schema that is the union of theirs (a
column some games lack is null there, as :func:`collect` makes it). The summary (one row a matchup)
is written sorted as :func:`collect` sorts it, by an external merge sort of runs of :data:`RUN` rows.
The tables equal those of :func:`collect` written to Parquet, row for row.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from arena.moments import BIN_KEYS, CURVE_KEYS, combine, moments, pool_bins
from arena.results import KEY_COLUMNS, atomic_write, csv_writer, write_table
from arena.store import FOLDER, _long, selected_ids, stored_matchups

#: Matchups a batch: a few MB of curves, read and written at once.
BATCH = 1024
#: The long tables streamed to files beside the summary.
LONG = ("curves", "reliability")
#: The order of the summary's rows (as :func:`collect` sorts them).
ORDER = ("game", "forecaster", "nature", "seed", "T")
#: Summary rows sorted at once, then merged (about 1 KB each in Arrow).
RUN = 1 << 15


class Streamed(NamedTuple):
    """What :func:`stream_tables` made: the number of matchups in the summary and the Parquet paths of the
    tables written (``summary``, sorted as :func:`collect` sorts it, and the long tables), by name."""

    rows: int
    written: dict[str, Path]


def stream_tables(out_dir: Path | str, only: set[str] | None = None) -> Streamed:
    """Read every whole stored matchup (of ``only``, when given) in batches; write ``summary``, ``curves`` and
    ``reliability`` (Parquet and CSV, each atomically), ``curve_stats`` (the moments over seeds of every point of
    the curves, :mod:`arena.moments`) and ``reliability_pooled`` (the bins pooled over seeds, with ``n_seeds``: the
    matchups pooled). Raises FileNotFoundError when no matchup reads back whole."""
    out_dir = Path(out_dir)
    scratch = Path(tempfile.mkdtemp(prefix="arena-tables."))  # local disk, not the results' shared filesystem
    try:
        batches: dict[str, list[Path]] = {name: [] for name in ("summary", *LONG)}
        rows: list[dict] = []
        parts: dict[str, list] = {name: [] for name in LONG}
        # over the seeds read so far: the moments of the curves, the pooled reliability bins, the matchups behind them
        stats: dict[str, pd.DataFrame] = {}
        for stored in stored_matchups(out_dir, only):
            rows.append(stored["row"])
            keys = {k: stored["row"][k] for k in KEY_COLUMNS}
            for name in LONG:
                if stored.get(name) is not None:
                    parts[name].append((stored[name], keys))
            if len(rows) == BATCH:
                _flush(scratch, rows, parts, batches, stats)
        _flush(scratch, rows, parts, batches, stats)
        if not batches["summary"]:
            raise FileNotFoundError(f"no readable matchups under {out_dir / FOLDER}; rerun the tournament")
        n, summary = _sorted(batches.pop("summary"), scratch)
        written = {"summary": _join(summary, out_dir, "summary")}
        written.update({name: _join(files, out_dir, name) for name, files in batches.items() if files})
        if "curves" in stats:
            written["curve_stats"] = write_table(stats["curves"], out_dir, "curve_stats")
        if "reliability" in stats:
            pooled = stats["reliability"].merge(stats["matchups"].reset_index(), on=list(BIN_KEYS), how="left")
            written["reliability_pooled"] = write_table(pooled, out_dir, "reliability_pooled")
        return Streamed(n, written)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _flush(scratch: Path, rows: list[dict], parts: dict[str, list], batches: dict, stats: dict) -> None:
    """Write the batch read so far as a Parquet file per table (its summary rows, its long tables), add its
    curves and reliability bins to ``stats`` (:func:`_add`); empty the batch."""
    if not rows:
        return
    path = scratch / f"summary.{len(batches['summary']):06d}.parquet"
    pq.write_table(pa.Table.from_pandas(pd.DataFrame(rows), preserve_index=False), path)
    batches["summary"].append(path)
    for name, tables in parts.items():
        table = _long(tables)
        if not table.empty:
            path = scratch / f"{name}.{len(batches[name]):06d}.parquet"
            pq.write_table(pa.Table.from_pandas(table, preserve_index=False), path)
            batches[name].append(path)
            _add(stats, name, table)
        tables.clear()
    rows.clear()


def _add(stats: dict[str, pd.DataFrame], name: str, table: pd.DataFrame) -> None:
    """Add a batch's long table ``name`` to ``stats``, the statistics over seeds of the batches before: its curves'
    moments (:func:`arena.moments.combine`; ``stats["curves"]``), its reliability bins pooled
    (:func:`arena.moments.pool_bins`; ``stats["reliability"]``) and the number of matchups behind them, per
    (game, T, forecaster, nature) (``stats["matchups"]``, column ``n_seeds``)."""
    # a long table has the matchup's keys on every row (arena.store._long)
    if name == "curves":
        keys = list(CURVE_KEYS)
        stats["curves"] = combine([p for p in (stats.get("curves"), moments(table, keys)) if p is not None], keys)
    elif name == "reliability":
        keys = list(BIN_KEYS)
        pooled = pool_bins(table, keys)
        old = stats.get("reliability")
        stats["reliability"] = pooled if old is None else pool_bins(pd.concat([old, pooled], ignore_index=True), keys)
        seeds = table.groupby(keys, dropna=False)["matchup_id"].nunique().rename("n_seeds")
        if "matchups" in stats:
            seeds = pd.concat([stats["matchups"], seeds]).groupby(level=keys, dropna=False).sum()
        stats["matchups"] = seeds


def _union(files: list[Path]) -> pa.Schema:
    """The schema of the batches ``files`` together: every column of each, types promoted to hold them all."""
    schemas = [pq.read_schema(f).remove_metadata() for f in files]
    return pa.unify_schemas(schemas, promote_options="permissive")


def _read(file: Path, schema: pa.Schema, columns: list[str] | None = None) -> pa.Table:
    """One batch file with the columns of ``schema`` (null where it has none), or only ``columns``."""
    return ds.dataset(file, schema=schema, format="parquet").to_table(columns=columns)


def _sorted(files: list[Path], scratch: Path) -> tuple[int, list[Path]]:
    """The summary batches ``files`` as files of :data:`RUN` rows or so, in turn sorted by :data:`ORDER` (stably;
    nulls last, as pandas sorts them), and the number of rows: an external merge sort. Runs of about
    :data:`RUN` rows are each sorted in memory; then the keys of every row give the order, and each stretch of
    it takes the next rows of each run (a run's rows come in its order). Only the keys of every row and a
    stretch of whole rows are in memory at once."""
    schema = _union(files)
    groups: list[list[Path]] = [[]]
    rows = 0  # in the last group
    for f in files:
        if rows >= RUN:
            groups.append([])
            rows = 0
        groups[-1].append(f)
        rows += pq.ParquetFile(f).metadata.num_rows
    runs = []
    for group in groups:
        table = pa.concat_tables([_read(f, schema) for f in group])
        runs.append(scratch / f"summary.run.{len(runs):06d}.parquet")
        pq.write_table(table.take(_order(table)), runs[-1], row_group_size=BATCH)
    readers = [pq.ParquetFile(r) for r in runs]
    order = _order(pa.concat_tables([r.read(columns=list(ORDER)) for r in readers]))
    run_of = np.searchsorted(np.cumsum([r.metadata.num_rows for r in readers]), order, side="right")
    taken = np.zeros(len(readers), dtype=np.int64)  # rows of each run placed so far
    out = []
    for i in range(0, len(order), RUN):
        which = run_of[i : i + RUN]
        parts, placed = [], []
        for r in np.unique(which):
            mine = np.flatnonzero(which == r)
            parts.append(_rows(readers[r], taken[r], taken[r] + len(mine)))
            placed.append(mine)
            taken[r] += len(mine)
        out.append(scratch / f"summary.sorted.{len(out):06d}.parquet")
        pq.write_table(pa.concat_tables(parts).take(np.argsort(np.concatenate(placed), kind="stable")), out[-1])
    return len(order), out


def _order(table: pa.Table) -> np.ndarray:
    """The positions of ``table``'s rows sorted by :data:`ORDER`, stably, nulls last."""
    return pc.sort_indices(table, sort_keys=[(k, "ascending") for k in ORDER]).to_numpy().astype(np.int64)


def _rows(reader: pq.ParquetFile, lo: int, hi: int) -> pa.Table:
    """Rows ``lo`` to ``hi`` (excluded) of a Parquet file, reading only the row groups that hold them."""
    ends = np.cumsum([reader.metadata.row_group(g).num_rows for g in range(reader.num_row_groups)])
    first, last = int(np.searchsorted(ends, lo, side="right")), int(np.searchsorted(ends, hi - 1, side="right"))
    skip = lo - (int(ends[first - 1]) if first else 0)
    return reader.read_row_groups(list(range(first, last + 1))).slice(skip, hi - lo)


def _join(files: list[Path], out_dir: Path, name: str) -> Path:
    """The batches ``files`` of one table as ``out_dir/name.parquet`` and ``.csv``, streamed."""
    schema = _union(files)
    path = out_dir / f"{name}.parquet"
    keys = [k for k in KEY_COLUMNS if k in schema.names and pa.types.is_string(schema.field(k).type)]

    def batches():  # one batch file at a time, in order, with the columns of the union
        for f in files:
            yield _read(f, schema)

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
