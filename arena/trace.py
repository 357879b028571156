"""The per-round trace of a game: its columns, and a Parquet file of them written a chunk at a time."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from arena.env import Recorder
from arena.results import atomic_write


def trace_columns(rec: Recorder, start: int, stop: int) -> dict[str, np.ndarray | list]:
    """The trace's columns for rounds ``start + 1 .. stop`` (views of the recorder's arrays)."""
    s = slice(start, stop)
    cols = {"t": np.arange(start + 1, stop + 1)}
    for j in range(rec.X.shape[1]):
        cols[f"x_{j}"] = rec.X[s, j]
    if rec.forecasts is not None:
        cols["forecast"] = [str(f) for f in rec.forecasts[s]]
    cols.update(p_announced=rec.p_mean[s], p=rec.p[s], p_internal=rec.p_internal[s], y=rec.y[s], y_prob=rec.y_prob[s])
    if rec.atoms is not None:  # two-point games (quantile): atoms and nature's CDF there
        cols.update(
            atom_0=rec.atoms[s, 0],
            atom_1=rec.atoms[s, 1],
            prob_atom_0=rec.prob_lo[s],
            cdf_atom_0=rec.cdf_at_atoms[s, 0],
            cdf_atom_1=rec.cdf_at_atoms[s, 1],
            law_lipschitz=rec.law_lip[s],
            expected_loss=rec.expected_loss[s],
        )
    return cols


def write_trace(rec: Recorder, path: str | os.PathLike, rows: int = 65_536) -> Path:
    """Write the per-round trace (the columns of :attr:`arena.runner.Result.trace`) to a Parquet file.

    The rounds go ``rows`` at a time, one row group each, so memory stays bounded by a
    chunk whatever T; the file is written under a temporary name in the same folder and
    renamed when complete, so ``path`` never holds half a trace.

    Examples
    --------
    >>> import tempfile, pandas as pd
    >>> from arena.runner import play
    >>> r = play("binary", "running_mean", "iid_bernoulli", T=100, seed=0)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = write_trace(r.recorder, f"{tmp}/trace.parquet", rows=32)
    ...     pd.read_parquet(path).equals(r.trace)
    True
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    def write(tmp: str) -> None:
        schema = pa.Table.from_pydict(trace_columns(rec, 0, min(rec.n, 1))).schema
        with pq.ParquetWriter(tmp, schema, write_page_checksum=True) as writer:  # damage is found on reading
            for start in range(0, rec.n, rows):
                writer.write_table(pa.Table.from_pydict(trace_columns(rec, start, min(start + rows, rec.n))))

    path = Path(path)
    atomic_write(path, write)
    return path


__all__ = ["trace_columns", "write_trace"]
