"""Rows -> tidy tables (Parquet and CSV): the one results schema of the project.

A results directory holds, per matchup (written atomically as soon as it finishes)::

    matchups/<matchup_id>.json        the row (config, seeds, metrics, certificates, timing), the
                                      curves (t, metric, value) and the reliability bins
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
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

KEY_COLUMNS = ["matchup_id", "game", "forecaster", "nature", "seed", "T"]
PARTS = ("matchups", "traces")
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


@functools.lru_cache(maxsize=None)
def _module_digest(module: str) -> str:
    import importlib.util

    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return ""
    if spec is None or not spec.origin or not Path(spec.origin).is_file():
        return ""
    return hashlib.sha256(Path(spec.origin).read_bytes()).hexdigest()[:12]


def plugin_code(targets: list[str]) -> str:
    """A digest of the source of the plugin classes (``_target_`` paths) that live outside this project,
    so that editing a user's own nature gives its matchups new ids; empty for the project's own.

    >>> plugin_code(["forecasters.defensive.K29", "adversaries.iid.IidBernoulli"])
    ''
    """
    parts = []
    for target in sorted(set(targets)):
        module = target.rpartition(".")[0]
        if module and module.split(".")[0] not in CODE_PACKAGES:
            parts.append(f"{module}:{_module_digest(module)}")
    return hashlib.sha256(";".join(parts).encode()).hexdigest()[:12] if parts else ""


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


_UMASK = os.umask(0)
os.umask(_UMASK)


def _atomic(path: Path, write) -> None:
    """Call ``write(tmp)`` on a temp file beside ``path``, then rename it into place, so that a reader
    never sees a half-written file (the temp file gets the umask's permissions, not mkstemp's 0600)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    os.chmod(tmp, 0o666 & ~_UMASK)  # results on a shared filesystem are for the group to read
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_atomic(df: pd.DataFrame, path: Path) -> None:
    """Write a Parquet file atomically (pyarrow directly: about twice as fast as pandas' to_parquet)."""
    _atomic(path, lambda tmp: pq.write_table(pa.Table.from_pandas(df, preserve_index=False), tmp))


def write_text_atomic(text: str, path: Path) -> None:
    """Write a text file atomically."""
    _atomic(path, lambda tmp: Path(tmp).write_text(text))


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


def _plain(v):
    """A JSON-ready scalar (numpy scalars as Python numbers)."""
    return v.item() if isinstance(v, np.generic) else v


def save_matchup(out_dir: Path, row: dict, curves: pd.DataFrame, reliability: pd.DataFrame | None,
                 trace: pd.DataFrame | Path | None = None) -> None:
    """Store one finished matchup as ``matchups/<matchup_id>.json``, written atomically (so it marks
    completion), after its trace (optional) in ``traces/<matchup_id>.parquet``.

    The JSON holds the row, the curves and the reliability table (column -> values; floats
    round-trip exactly, NaN included): one small file a matchup, written and read back in about
    a millisecond, where Parquet costs some 10 ms a file. ``trace`` is a per-round table, or
    the path of a trace already streamed to its place.
    """
    mid, out_dir = row["matchup_id"], Path(out_dir)
    trace_path = out_dir / "traces" / f"{mid}.parquet"
    if isinstance(trace, pd.DataFrame):
        write_atomic(trace.assign(**{k: row[k] for k in KEY_COLUMNS}), trace_path)
    elif trace is not None and Path(trace) != trace_path:
        raise ValueError(f"a streamed trace must be at {trace_path}, not {trace}")
    stored = {"row": {k: _plain(v) for k, v in row.items()}, "trace": trace is not None}
    for part, df in (("curves", curves), ("reliability", reliability)):
        stored[part] = None if df is None else {c: df[c].tolist() for c in df.columns}
    write_text_atomic(json.dumps(stored), out_dir / "matchups" / f"{mid}.json")


class CorruptResult(ValueError):
    """A stored result that cannot be read back whole; it is never aggregated and is played again."""


def stored_ids(out_dir: Path | str) -> set[str]:
    """The ids of the matchups stored in a results directory (whole or not)."""
    folder = Path(out_dir) / "matchups"
    return {f[:-5] for f in os.listdir(folder) if f.endswith(".json")} if folder.is_dir() else set()


def _load(out_dir: Path, mid: str) -> dict:
    """The stored dict of one matchup (row; curves and reliability as column -> values), checked whole:
    the file parses, holds its own id and the key columns, its tables have columns of equal length,
    and its trace, when it has one, has a readable Parquet footer. Raises CorruptResult."""
    path = out_dir / "matchups" / f"{mid}.json"
    try:
        stored = json.loads(path.read_bytes())
        row = stored["row"]
        missing = [k for k in KEY_COLUMNS if k not in row]
    except FileNotFoundError:
        raise CorruptResult(f"{path} is missing") from None
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
        raise CorruptResult(f"{path} is unreadable ({type(exc).__name__}: {str(exc)[:120]})") from None
    if missing:
        raise CorruptResult(f"{path} lacks {missing}; a result row has {KEY_COLUMNS}")
    if row["matchup_id"] != mid:
        raise CorruptResult(f"{path} holds matchup {row['matchup_id']}, not {mid}")
    for part in ("curves", "reliability"):
        columns = stored.get(part)
        if columns is not None and (not isinstance(columns, dict) or not all(isinstance(v, list) for v in
                                                                           columns.values())
                                    or len({len(v) for v in columns.values()}) > 1):
            raise CorruptResult(f"{path}: its {part} table is malformed (columns of unequal length or not lists)")
    if stored.get("trace"):
        try:
            pq.read_metadata(out_dir / "traces" / f"{mid}.parquet")
        except Exception as exc:  # noqa: BLE001 (pyarrow raises several types for a damaged file)
            raise CorruptResult(f"{out_dir / 'traces' / f'{mid}.parquet'} is missing or unreadable "
                                f"({type(exc).__name__})") from None
    return stored


def _long(parts: list[tuple[dict, dict]]) -> pd.DataFrame:
    """One table from (columns, key values) pairs: the columns' union, the keys repeated per row."""
    names = list(dict.fromkeys(c for columns, _ in parts for c in columns))
    out: dict[str, list] = {c: [] for c in [*names, *(k for k in KEY_COLUMNS if k not in names)]}
    for columns, keys in parts:
        n = len(next(iter(columns.values()), []))
        for c in out:
            out[c].extend(columns[c] if c in columns else [keys[c]] * n if c in keys else [None] * n)
    return pd.DataFrame(out) if names else pd.DataFrame()


def read_stored(out_dir: Path | str, mid: str) -> dict[str, pd.DataFrame]:
    """The stored row (as a one-row ``summary``), curves and reliability of one finished matchup;
    raises CorruptResult if it is not whole (see :func:`_load`)."""
    stored = _load(Path(out_dir), mid)
    keys = {k: stored["row"][k] for k in KEY_COLUMNS}
    tables = {"summary": pd.DataFrame([stored["row"]])}
    for part in ("curves", "reliability"):
        if stored.get(part) is not None:
            tables[part] = _long([(stored[part], keys)])
    return tables


def quarantine(out_dir: Path | str, mid: str, reason: str) -> Path:
    """Move every file of a corrupt result to ``corrupt/`` (kept for inspection) and say so."""
    out_dir = Path(out_dir)
    dest = out_dir / "corrupt"
    for f in (out_dir / "matchups" / f"{mid}.json", out_dir / "traces" / f"{mid}.parquet"):
        if f.exists():
            (dest / f.parent.name).mkdir(parents=True, exist_ok=True)
            os.replace(f, dest / f.parent.name / f.name)
    print(f"[arena] corrupt result ({reason}): moved to {dest}; playing {mid} again", file=sys.stderr, flush=True)
    return dest


def is_done(out_dir: Path | str, mid: str) -> bool:
    """Whether a whole result of matchup ``mid`` is stored; a corrupt one is quarantined (and so not done)."""
    if not (Path(out_dir) / "matchups" / f"{mid}.json").is_file():
        return False
    try:
        _load(Path(out_dir), mid)
    except CorruptResult as exc:
        quarantine(out_dir, mid, str(exc))
        return False
    return True


#: Written at the start of a tournament run: its matchup ids, start time and how many were already stored.
PLAN_FILE = "plan.json"


def planned(out_dir: Path | str) -> set[str] | None:
    """The matchup ids of the last tournament run in ``out_dir`` (None when it holds no tournament)."""
    plan_file = Path(out_dir) / PLAN_FILE
    return set(json.loads(plan_file.read_text())["ids"]) if plan_file.is_file() else None


def collect(out_dir: Path | str, only: set[str] | None = None) -> dict[str, pd.DataFrame]:
    """Read every whole stored matchup (of ``only``, when given) into one table per part.

    A corrupt or partial result is reported on stderr and left out, never aggregated; the next
    run of its tournament plays it again.
    """
    out_dir = Path(out_dir)
    ids = sorted(stored_ids(out_dir) if only is None else stored_ids(out_dir) & set(only))
    if not ids:
        raise FileNotFoundError(f"no finished matchups under {out_dir / 'matchups'}; run a tournament first")
    rows, parts = [], {"curves": [], "reliability": []}
    for mid in ids:
        try:
            stored = _load(out_dir, mid)
        except CorruptResult as exc:
            print(f"[arena] left out of the summary: {exc}; rerun the tournament to play it again",
                  file=sys.stderr, flush=True)
            continue
        rows.append(stored["row"])
        keys = {k: stored["row"][k] for k in KEY_COLUMNS}
        for part, tables in parts.items():
            if stored.get(part) is not None:
                tables.append((stored[part], keys))
    if not rows:
        raise FileNotFoundError(f"no readable matchups under {out_dir / 'matchups'}; rerun the tournament")
    summary = pd.DataFrame(rows).sort_values(["game", "forecaster", "nature", "seed", "T"]).reset_index(drop=True)
    return {"summary": summary, **{name: _long(tables) for name, tables in parts.items()}}


def read_table(path: Path | str) -> pd.DataFrame:
    """A results table from Parquet or CSV, with an error that names the file and what is wrong."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist; give a results table (.parquet or .csv)")
    try:
        if path.suffix == ".csv":
            return pd.read_csv(path)
        return pd.read_parquet(path)
    except Exception as exc:  # noqa: BLE001 (pandas and pyarrow raise many types for a damaged file)
        raise ValueError(f"{path} is not a readable {path.suffix.lstrip('.') or 'results'} table "
                         f"({type(exc).__name__}: {str(exc).splitlines()[0][:160] if str(exc) else ''}); "
                         "regenerate it with `arena-report DIR`") from None


def write_table(df: pd.DataFrame, out_dir: Path, name: str) -> Path:
    """``out_dir/name.parquet`` and ``name.csv``, each written atomically; returns the Parquet path."""
    path = Path(out_dir) / f"{name}.parquet"
    write_atomic(df, path)
    _atomic(path.with_suffix(".csv"), lambda tmp: df.to_csv(tmp, index=False))
    return path
