"""Rows -> tidy tables (Parquet and CSV): the one results schema of the project.

A results directory holds its finished matchups in a few files per shard (:mod:`arena.store`)::

    matchups/<log>.jsonl              one record a matchup, appended whole as soon as it finishes: the
                                      row (config, seeds, metrics, certificates, timing), the curves
                                      (t, metric, value) and the reliability bins
    traces/<matchup_id>.parquet       optional per-round trace (``keep_trace``)

and, once aggregated, ``summary.parquet``/``summary.csv`` (one row per matchup),
``curves.parquet``/``curves.csv`` and ``reliability.parquet`` (every matchup, with the
matchup's game, forecaster, nature and seed as columns).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import resource
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np

from arena.lazy import LazyModule
from arena.metrics.calibration import bin_edges, bin_index
from arena.seeding import stream_seeds

# imported when a table is built or read: a worker that plays and stores matchups (JSON) loads neither
pd = LazyModule("pandas")
pa = LazyModule("pyarrow")
pq = LazyModule("pyarrow.parquet")
pacsv = LazyModule("pyarrow.csv")

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


@functools.cache
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


#: What may not appear in a file name the arena makes from a label: path separators, NUL, control characters.
_UNSAFE = re.compile(r"[/\\\x00-\x1f\x7f-\x9f]")


def safe_name(text: object, limit: int = 60) -> str:
    """``text`` as one file-name component: path separators and control characters become ``_``, a
    leading dot ``_.``, and it is cut to ``limit`` characters (the id's hash keeps ids unique).

    >>> safe_name("my/ogd"), safe_name("../../x"), safe_name("k29[lr=0.1]")
    ('my_ogd', '_.._.._x', 'k29[lr=0.1]')
    """
    name = _UNSAFE.sub("_", str(text))[:limit]
    return f"_{name}" if name.startswith(".") or not name else name


def is_safe_name(text: object) -> bool:
    """Whether ``text`` is already a safe file-name component (:func:`safe_name` leaves it alone)."""
    return isinstance(text, str) and safe_name(text, limit=200) == text


def inside(out_dir: Path | str, path: Path | str) -> Path:
    """``path``, checked to lie inside ``out_dir`` once both are resolved (links followed); raises
    ValueError otherwise, so that no name read from a config or a stored result writes elsewhere.

    >>> inside("results/x", "results/x/figures/binary").name
    'binary'
    >>> inside("results/x", "results/x/figures/../../../etc")
    Traceback (most recent call last):
    ...
    ValueError: refusing to write results/x/figures/../../../etc: it lies outside the results directory results/x
    """
    if Path(out_dir).resolve() not in [Path(path).resolve(), *Path(path).resolve().parents]:
        raise ValueError(f"refusing to write {path}: it lies outside the results directory {out_dir}")
    return Path(path)


def matchup_id(game: str, forecaster: str, nature: str, seed: int, T: int, config: dict) -> str:
    """Readable and unique: names, seed and T, plus a hash of the full resolved config. The names are
    made safe file names (:func:`safe_name`): the id names the matchup's files.

    Examples
    --------
    >>> matchup_id("binary", "k29", "iid_bernoulli", 0, 100, {"a": 1})[:30]
    'binary__k29__iid_bernoulli__s0'
    >>> matchup_id("binary", "../../up", "iid_bernoulli", 0, 100, {})[:30]
    'binary___.._.._up__iid_bernoul'
    """
    digest = hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode()).hexdigest()[:10]
    return f"{safe_name(game)}__{safe_name(forecaster)}__{safe_name(nature)}__s{seed}__T{T}__{digest}"


_UMASK = os.umask(0)
os.umask(_UMASK)


def atomic_write(path: Path, write) -> None:
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
    atomic_write(
        path, lambda tmp: pq.write_table(pa.Table.from_pandas(df, preserve_index=False), tmp, write_page_checksum=True)
    )


def csv_writer(path: str, schema: pa.Schema) -> pacsv.CSVWriter:
    """The writer of every results CSV: pyarrow's (ten times pandas' ``to_csv`` on a table of curves), strings
    quoted, numbers in their shortest round-trip form, nulls empty; ``pd.read_csv`` reads it back."""
    return pacsv.CSVWriter(path, schema)


def write_text_atomic(text: str, path: Path) -> None:
    """Write a text file atomically."""
    atomic_write(path, lambda tmp: Path(tmp).write_text(text))


def reliability_table(p: np.ndarray, y: np.ndarray, bins: int = 10) -> pd.DataFrame:
    """Equal-width bins of the forecasts with their counts, mean forecast and outcome frequency."""
    return pd.DataFrame(reliability_columns(p, y, bins))


def reliability_columns(p: np.ndarray, y: np.ndarray, bins: int = 10) -> dict[str, np.ndarray]:
    """The columns of :func:`reliability_table` (what :func:`arena.store.save_matchup` stores, without a frame)."""
    idx = bin_index(p, bins)  # the ECE's bins, exact at their edges
    count = np.bincount(idx, minlength=bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_p = np.bincount(idx, weights=p, minlength=bins) / count
        mean_y = np.bincount(idx, weights=y, minlength=bins) / count
    edges = bin_edges(bins)
    return {
        "bin": np.arange(bins),
        "lo": edges[:-1],
        "hi": edges[1:],
        "count": count,
        "mean_p": mean_p,
        "mean_y": mean_y,
    }


#: ``forfeit_who`` of a matchup that ended the process playing it (:mod:`arena.supervise`): no plugin is named.
CRASH = "unknown"


@dataclass
class Forfeit:
    """A matchup ended early because a plugin misbehaved at round ``step``: ``who`` is the forecaster, nature,
    or :data:`CRASH`; ``reason`` says what happened."""

    who: str
    step: int
    reason: str


class Provenance(NamedTuple):
    """What a tournament's row adds to a result: the plan's labels of the plugins, the matchup's id, its
    resolved config and the digest of any plugin code outside the project (:func:`plugin_code`)."""

    forecaster_label: str
    nature_label: str
    matchup_id: str
    config: dict
    plugin_code: str


def result_row(result, provenance: Provenance | None = None) -> dict:
    """One flat row of the results table from a :class:`arena.runner.Result` (this module never imports the
    runner): config, seeds, metrics, certificates, timing; with ``provenance``
    (a tournament's matchup) the plan's labels name the plugins, whose own names go to ``*_plugin``."""
    from arena import __version__

    fc, nature, forfeit = result.forecaster, result.nature, result.forfeit
    row = {
        "game": result.game,
        "forecaster": fc.name if provenance is None else provenance.forecaster_label,
        "nature": nature.name if provenance is None else provenance.nature_label,
        "forecaster_family": str(getattr(fc, "family", "baseline")),
        "seed": result.seed,
        "T": result.T,
        "rounds": result.recorder.n,
        "status": "forfeit" if forfeit else "ok",
        "forfeit_who": forfeit.who if forfeit else "",
        "forfeit_step": forfeit.step if forfeit else -1,
        "forfeit_reason": forfeit.reason if forfeit else "",
        "adaptive": bool(nature.adaptive),
        "forecaster_params": json.dumps(_jsonable(fc.params()), sort_keys=True),
        "nature_params": json.dumps(_jsonable(nature.params()), sort_keys=True),
    }
    row.update(stream_seeds(result.seed, fc.name, nature.name))
    row.update(result.summary)
    for name, c in result.certificates.items():
        row[f"cert.{name}.value"] = c.value
        row[f"cert.{name}.bound"] = c.bound
        row[f"cert.{name}.holds"] = c.holds
        row[f"cert.{name}.verdict"] = c.verdict
        row[f"cert.{name}.reason"] = c.reason
        for k, v in c.extra.items():
            row[f"cert.{name}.{k}"] = v
    row.update({f"seconds_{k}": v for k, v in result.seconds.items()})
    row["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    row["arena_version"] = __version__
    if provenance is not None:
        row["forecaster_plugin"], row["nature_plugin"] = fc.name, nature.name
        row["matchup_id"] = provenance.matchup_id
        row["config"] = json.dumps(provenance.config, sort_keys=True, default=str)
        row["code_version"] = code_version()
        row["plugin_code"] = provenance.plugin_code
    return row


def _jsonable(d: dict) -> dict:
    """A plugin's parameters as JSON values (numpy scalars as numbers, tuples as lists, anything else as its repr)."""
    out = {}
    for k, v in d.items():
        if isinstance(v, (np.integer, np.floating)):
            v = v.item()
        elif isinstance(v, tuple):
            v = list(v)
        try:
            json.dumps(v)
        except TypeError:
            v = repr(v)
        out[k] = v
    return out


#: Written at the start of a tournament run: its matchup ids, start time and how many were already stored.
PLAN_FILE = "plan.json"


def read_plan(out_dir: Path | str) -> dict | None:
    """The plan of the last tournament run in ``out_dir`` (None when it holds no tournament); a damaged
    plan raises ValueError naming the file and what to do."""
    plan_file = Path(out_dir) / PLAN_FILE
    if not os.path.lexists(plan_file):
        return None
    try:
        info = json.loads(plan_file.read_bytes())
        if not (
            isinstance(info, dict)
            and isinstance(info.get("ids"), list)
            and all(isinstance(i, str) for i in info["ids"])
        ):
            raise ValueError("no list of matchup ids")
    except (OSError, ValueError, RecursionError) as exc:  # RecursionError: nested too deeply to read
        raise ValueError(
            f"{plan_file} is damaged ({type(exc).__name__}: {str(exc)[:80]}); rerun the tournament "
            "to write it again, or delete it to report every stored matchup"
        ) from None
    return info


def planned(out_dir: Path | str) -> set[str] | None:
    """The matchup ids of the last tournament run in ``out_dir`` (None when it holds no tournament)."""
    info = read_plan(out_dir)
    return None if info is None else set(info["ids"])


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
        raise ValueError(
            f"{path} is not a readable {path.suffix.lstrip('.') or 'results'} table "
            f"({type(exc).__name__}: {str(exc).splitlines()[0][:160] if str(exc) else ''}); "
            "regenerate it with `arena-report DIR`"
        ) from None


def write_table(df: pd.DataFrame, out_dir: Path, name: str) -> Path:
    """``out_dir/name.parquet`` and ``name.csv``, each written atomically; returns the Parquet path."""
    path = Path(out_dir) / f"{name}.parquet"
    table = pa.Table.from_pandas(df, preserve_index=False)
    atomic_write(path, lambda tmp: pq.write_table(table, tmp, write_page_checksum=True))

    def csv(tmp: str) -> None:
        with csv_writer(tmp, table.schema) as writer:
            writer.write_table(table)

    atomic_write(path.with_suffix(".csv"), csv)
    return path
