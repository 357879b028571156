"""Rows -> tidy tables (Parquet and CSV): the one results schema of the project.

A results directory holds, per matchup (written atomically as soon as it finishes)::

    matchups/<matchup_id>.parquet     one row: config, seeds, metrics, certificates, timing
    curves/<matchup_id>.parquet       long table: t, metric, value
    reliability/<matchup_id>.parquet  bins: bin, lo, hi, count, mean_p, mean_y
    traces/<matchup_id>.parquet       optional per-round trace

and, once aggregated, ``summary.parquet``/``summary.csv`` (one row per matchup),
``curves.parquet``/``curves.csv`` and ``reliability.parquet`` (every matchup, with the
matchup's game, forecaster, nature and seed as columns).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

KEY_COLUMNS = ["matchup_id", "game", "forecaster", "nature", "seed", "T"]
PARTS = ("matchups", "curves", "reliability", "traces")
#: Columns of a summary row that measure the machine, not the game (left out of :func:`summary_digest`).
MACHINE_COLUMNS = ("peak_rss_mb",)
MACHINE_PREFIXES = ("seconds_",)
#: The packages whose source makes up the code version of a result.
CODE_PACKAGES = ("arena", "forecasters", "adversaries")


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    """The package version plus a digest of the source of the arena, forecasters and adversaries.

    Stored in every result row and hashed into every matchup id, so a stored result is reused
    only by the same code (a changed line in any plugin gives new ids, and the matchups are
    played again).

    Examples
    --------
    >>> v = code_version()
    >>> v.split("+")[0] == __import__("arena").__version__.split("+")[0], len(v.split("+")[-1])
    (True, 12)
    """
    import importlib.util

    from arena import __version__

    digest = hashlib.sha256()
    for package in CODE_PACKAGES:
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            continue
        root = Path(list(spec.submodule_search_locations)[0])
        for f in sorted(root.rglob("*.py")):
            digest.update(str(f.relative_to(root)).encode())
            digest.update(f.read_bytes())
    return f"{__version__.split('+')[0]}+{digest.hexdigest()[:12]}"


def summary_digest(summary: pd.DataFrame) -> str:
    """A hash of everything in a summary table that the game determines (timing and memory left out).

    Two runs of the same tournament with the same code give the same digest on any launcher, in
    any order of completion.
    """
    keep = [c for c in summary.columns if c not in MACHINE_COLUMNS and not c.startswith(MACHINE_PREFIXES)]
    table = summary[sorted(keep)].sort_values("matchup_id").reset_index(drop=True)
    return hashlib.sha256(table.to_csv(index=False, float_format="%.17g").encode()).hexdigest()


def matchup_id(game: str, forecaster: str, nature: str, seed: int, T: int, config: dict) -> str:
    """Readable and unique: names, seed and T, plus a hash of the full resolved config.

    Examples
    --------
    >>> matchup_id("binary", "k29", "iid_bernoulli", 0, 100, {"a": 1})[:30]
    'binary__k29__iid_bernoulli__s0'
    """
    digest = hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode()).hexdigest()[:10]
    return f"{game}__{forecaster}__{nature}__s{seed}__T{T}__{digest}"


def write_atomic(df: pd.DataFrame, path: Path) -> None:
    """Write a Parquet file so that a reader never sees it half-written (temp file + rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        df.to_parquet(tmp, index=False)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def reliability_table(p: np.ndarray, y: np.ndarray, bins: int = 10) -> pd.DataFrame:
    """Equal-width bins of the forecasts with their counts, mean forecast and outcome frequency."""
    idx = np.minimum((np.asarray(p) * bins).astype(int), bins - 1)
    count = np.bincount(idx, minlength=bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_p = np.bincount(idx, weights=p, minlength=bins) / count
        mean_y = np.bincount(idx, weights=y, minlength=bins) / count
    edges = np.linspace(0, 1, bins + 1)
    return pd.DataFrame({"bin": np.arange(bins), "lo": edges[:-1], "hi": edges[1:], "count": count,
                         "mean_p": mean_p, "mean_y": mean_y})


def save_matchup(out_dir: Path, row: dict, curves: pd.DataFrame, reliability: pd.DataFrame,
                 trace: pd.DataFrame | None = None) -> None:
    """Store one finished matchup; the row is written last so that it marks completion."""
    mid = row["matchup_id"]
    keys = {k: row[k] for k in KEY_COLUMNS}
    for part, df in (("curves", curves), ("reliability", reliability), ("traces", trace)):
        if df is not None:
            write_atomic(df.assign(**keys), Path(out_dir) / part / f"{mid}.parquet")
    write_atomic(pd.DataFrame([row]), Path(out_dir) / "matchups" / f"{mid}.parquet")


def _concat(files: list[Path]) -> pd.DataFrame:
    frames = [pd.read_parquet(f) for f in sorted(files)]
    frames = [f for f in frames if not f.empty]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def collect(out_dir: Path | str) -> dict[str, pd.DataFrame]:
    """Read every finished matchup of a results directory into one table per part."""
    out_dir = Path(out_dir)
    rows = sorted((out_dir / "matchups").glob("*.parquet"))
    if not rows:
        raise FileNotFoundError(f"no finished matchups under {out_dir / 'matchups'}; run a tournament first")
    done = {f.stem for f in rows}
    tables = {"summary": _concat(rows)}
    for part in ("curves", "reliability"):
        tables[part] = _concat([f for f in (out_dir / part).glob("*.parquet") if f.stem in done])
    summary = tables["summary"]
    tables["summary"] = summary.sort_values(["game", "forecaster", "nature", "seed", "T"]).reset_index(drop=True)
    return tables


def write_tables(out_dir: Path | str) -> dict[str, Path]:
    """Aggregate a results directory into summary/curves/reliability Parquet and CSV files."""
    out_dir = Path(out_dir)
    written = {}
    for name, df in collect(out_dir).items():
        if df.empty:
            continue
        write_atomic(df, out_dir / f"{name}.parquet")
        csv = out_dir / f"{name}.csv"
        tmp = csv.with_suffix(".csv.tmp")
        df.to_csv(tmp, index=False)
        os.replace(tmp, csv)
        written[name] = out_dir / f"{name}.parquet"
    return written


def aggregate_seeds(summary: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Mean and 95% normal confidence half-width of ``metric`` per forecaster x nature across seeds."""
    g = summary.groupby(["forecaster", "nature"])[metric]
    out = g.agg(["mean", "std", "count"]).reset_index()
    out["ci95"] = 1.96 * out["std"].fillna(0.0) / np.sqrt(out["count"])
    return out
