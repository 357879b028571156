"""Small results directories for the report, plots and results-page tests: binary matchups played
with :func:`arena.play` and stored as the tournament stores them (:mod:`arena.store`); and the stored
records edited in place, as a damaged or tampered store would be."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path

import arena
from arena.results import matchup_id, reliability_table
from arena.store import frame, logs, save_matchup, scan


def store_binary_matchups(
    out: Path, forecasters: Iterable[str], natures: Iterable[str], seeds: Iterable[int], T: int
) -> Path:
    """Play every forecaster x nature x seed of the binary game at horizon ``T`` and store each
    matchup (row, curves, reliability) in ``out``; return ``out``."""
    for fc in forecasters:
        for nat in natures:
            for seed in seeds:
                r = arena.play("binary", fc, nat, T=T, seed=seed)
                row = r.row()
                row["matchup_id"] = matchup_id("binary", fc, nat, seed, T, {})
                save_matchup(out, row, r.curves, reliability_table(r.recorder.p, r.recorder.y))
    return out


def record(out: Path, mid: str) -> dict:
    """The stored JSON of matchup ``mid`` of ``out``, as a dict."""
    where = scan(out)[mid]
    with open(where.path, "rb") as f:
        f.seek(where.offset)
        return json.loads(f.read(where.length))


def put(out: Path, mid: str, line: bytes) -> None:
    """Replace the line of the record of ``mid`` in its log by ``line`` (a damaged record, or an edited one)."""
    where = scan(out)[mid]
    data = where.path.read_bytes()
    end = data.index(b"\n", where.start) + 1
    where.path.write_bytes(data[: where.start] + line + data[end:])


def rewrite(out: Path, mid: str, stored: dict) -> None:
    """Store ``stored`` as the record of ``mid`` (its checksum made anew: a tampered result, not a torn one)."""
    put(out, mid, frame(mid, json.dumps(stored).encode()))


def rewrite_all(out: Path, edit: Callable[[dict], dict]) -> None:
    """Every stored record of ``out`` replaced by ``edit`` of it."""
    for mid in scan(out):
        rewrite(out, mid, edit(record(out, mid)))
    assert logs(out)
