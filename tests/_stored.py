"""Small results directories for the report, plots and results-page tests: binary matchups played
with :func:`arena.play` and stored as the tournament stores them (one matchup file each)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import arena
from arena.results import matchup_id, reliability_table, save_matchup


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
