"""The store of finished matchups: append-only logs under ``matchups/``, read back whole or not at all.

Each job of a tournament appends the matchups it finishes to a log of its own,
``matchups/<log>.jsonl`` (one per shard: :func:`log_name`), so that a results directory holds a
few files per shard whatever the number of matchups. A record is one line::

    <crc32, 8 hex digits> TAB <matchup id> TAB <the stored matchup as JSON> NEWLINE

written with a single ``write`` call on the log opened for appending: a reader sees a record whole
or not at all, and two processes appending to one log (two runs of one plan sharing its work)
never interleave their records. The checksum covers the id and the JSON, so a damaged record is
found without parsing it (:func:`scan`). A process killed mid-``write`` leaves at most one torn
record at the end of its log; the next writer starts a new line after it, the next scan
quarantines it (:func:`quarantine_record`: copied to ``corrupt/<log>.jsonl``, its checksum
overwritten by :data:`QUARANTINED` in place), and the matchup is played again.

A matchup stored twice (played again with ``retry_crashed``, or by two runs sharing a plan) is read
from its last record: logs are scanned in order of their last change, each from its start.
Results directories written before the logs hold one ``matchups/<matchup id>.json`` per matchup
(the same JSON): they are read as they are, and quarantined by moving the file.

Examples
--------
>>> import tempfile
>>> out = Path(tempfile.mkdtemp())
>>> crc = append(out, "shard-0-of-1", "m1", b'{"row": {}}')
>>> where = scan(out)["m1"]
>>> where.path.name, read(where)
('shard-0-of-1.jsonl', b'{"row": {}}')
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import sys
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import NamedTuple

import numpy as np

from arena.errors import printable
from arena.lazy import LazyModule
from arena.results import KEY_COLUMNS, is_safe_name, matchup_id, write_atomic

try:
    import fcntl
except ImportError:  # not on POSIX: quarantine without a lock
    fcntl = None  # type: ignore[assignment]

pd = LazyModule("pandas")
pq = LazyModule("pyarrow.parquet")

FOLDER = "matchups"
SUFFIX = ".jsonl"
_HEX = b"0123456789abcdef"
#: What replaces the checksum of a quarantined record: never a valid one (not hex), read past in silence.
QUARANTINED = b"--------"
_CRC = 8


class Where(NamedTuple):
    """Where a stored matchup's record lies: ``length`` bytes of JSON at ``offset`` of ``path``, the
    record's line starting at ``start``; a whole file (a results directory of one file per matchup) has
    ``length`` -1."""

    path: Path
    start: int
    offset: int
    length: int
    crc: int = 0


def log_name(shard: int, shards: int) -> str:
    """The log of one shard of a tournament (its jobs on every launcher append there).

    >>> log_name(3, 16)
    'shard-3-of-16'
    """
    return f"shard-{shard}-of-{shards}"


def frame(mid: str, payload: bytes) -> bytes:
    """The line of one record (see the module's docstring).

    >>> frame("m", b"{}")
    b'05a666f1\\tm\\t{}\\n'
    """
    body = mid.encode() + b"\t" + payload
    return b"%08x\t" % zlib.crc32(body) + body + b"\n"


def append(out_dir: Path | str, log: str, mid: str, payload: bytes) -> int:
    """Append the record of matchup ``mid`` (``payload``: its JSON) to ``matchups/<log>.jsonl`` in one
    ``write``; after a torn record (a writer killed mid-line) it starts a new line first. Returns the record's
    checksum."""
    path = Path(out_dir) / FOLDER / f"{log}{SUFFIX}"
    path.parent.mkdir(parents=True, exist_ok=True)
    line = frame(mid, payload)
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            line = b"\n" + line
        written = os.write(fd, line)
        if written != len(line):  # a full disk part-way: the torn line is quarantined by the next scan
            raise OSError(28, os.strerror(28), str(path))
    finally:
        os.close(fd)
    return int(line.lstrip(b"\n")[:_CRC], 16)


def logs(out_dir: Path | str) -> list[Path]:
    """The logs of a results directory, in order of their last change (ties by name)."""
    folder = Path(out_dir) / FOLDER
    if not folder.is_dir():
        return []
    found = []
    for entry in os.scandir(folder):
        if entry.name.endswith(SUFFIX) and not entry.name.startswith("."):
            try:
                found.append((entry.stat().st_mtime_ns, entry.name, Path(entry.path)))
            except OSError:
                continue
    return [p for *_, p in sorted(found)]


def legacy_files(out_dir: Path | str) -> list[Path]:
    """The one-file-a-matchup results (``matchups/<id>.json``) of a directory written before the logs."""
    folder = Path(out_dir) / FOLDER
    if not folder.is_dir():
        return []
    return sorted(Path(e.path) for e in os.scandir(folder) if e.name.endswith(".json") and not e.name.startswith("."))


def scan(out_dir: Path | str) -> dict[str, Where]:
    """Every stored matchup's record by id (the last one, for a matchup stored twice), checksums verified.

    A damaged record (a torn line, a flipped byte: :func:`damaged`) is left out; so is a last line
    without its newline (it may be being written right now). The answer is kept while no file of the
    store changes (the caller must not modify it): reading many matchups one by one scans once.
    """
    return _scan_of(out_dir).found


class Damaged(NamedTuple):
    """A record whose checksum does not match: where it lies, and the id it names, if it still reads."""

    where: Where
    mid: str


class _Scan(NamedTuple):
    found: dict[str, Where]
    damaged: list[Damaged]


def damaged(out_dir: Path | str) -> list[Damaged]:
    """The damaged records of the store's logs (see :func:`scan`), not quarantined yet."""
    return _scan_of(out_dir).damaged


def _scan_of(out_dir: Path | str) -> _Scan:
    paths, legacy = logs(out_dir), legacy_files(out_dir)
    stamp = tuple((str(p), (st := p.stat()).st_size, st.st_mtime_ns) for p in paths) + tuple(map(str, legacy))
    return _scan(stamp, tuple(paths), tuple(legacy))


@functools.lru_cache(maxsize=4)
def _scan(stamp: tuple, paths: tuple[Path, ...], legacy: tuple[Path, ...]) -> _Scan:
    """:func:`scan` of these files (``stamp``: their sizes and modification times, the key of the cache)."""
    found = {p.name[:-5]: Where(p, 0, 0, -1) for p in legacy}
    bad: list[Damaged] = []
    for path in paths:
        try:
            with open(path, "rb") as f:
                bad.extend(_read_log(f, path, found))
        except OSError:
            continue
    return _Scan(found, bad)


def _read_log(f, path: Path, found: dict[str, Where]) -> Iterable[Damaged]:
    """Record every whole record of the open log ``f`` in ``found``; yield the damaged ones."""
    start = 0
    for line in f:
        here, start = start, start + len(line)
        if not line.endswith(b"\n") or line == b"\n" or line.startswith(QUARANTINED[:1]):
            continue
        body = line[_CRC + 1 : -1]
        tab = body.find(b"\t")
        try:
            ok = tab > 0 and line[_CRC : _CRC + 1] == b"\t" and int(line[:_CRC], 16) == zlib.crc32(body)
        except ValueError:
            ok = False
        mid = body[:tab].decode("utf-8", "replace") if tab > 0 else ""
        if not ok:
            yield Damaged(Where(path, here, here, len(line) - 1), mid if is_safe_name(mid) else "")
            continue
        found[mid] = Where(path, here, here + _CRC + 1 + tab + 1, len(body) - tab - 1, int(line[:_CRC], 16))


def read(where: Where) -> bytes:
    """The JSON of one stored matchup (raises OSError when it cannot be read)."""
    data = next(iter(read_many([where])))[1]
    if isinstance(data, OSError):
        raise data
    return data


def read_many(wheres: Iterable[Where]) -> Iterable[tuple[Where, bytes | OSError]]:
    """:func:`read` of each of ``wheres`` (in their order), keeping each log open while it is read in a row;
    an error is yielded in place of the bytes."""
    handle, name = None, None
    try:
        for where in wheres:
            try:
                if where.length < 0:
                    yield where, where.path.read_bytes()
                    continue
                if where.path != name:
                    if handle is not None:
                        handle.close()
                    handle, name = open(where.path, "rb"), where.path
                handle.seek(where.offset)
                data = handle.read(where.length)
                yield where, data if len(data) == where.length else OSError(f"{where.path} ends inside a record")
            except OSError as exc:
                yield where, exc
    finally:
        if handle is not None:
            handle.close()


def quarantine_record(out_dir: Path | str, where: Where, reason: str, mid: str = "") -> bool:
    """Keep a damaged record for inspection under ``corrupt/`` and take it out of the store, saying so on
    stderr: a log's line is copied to ``corrupt/<log>.jsonl`` and its checksum overwritten in place by
    :data:`QUARANTINED` (the offsets of the other records stay); a one-matchup file is moved to
    ``corrupt/matchups/``. False when another process quarantined it first (it then says nothing)."""
    dest = Path(out_dir) / "corrupt"
    if where.length < 0:
        (dest / FOLDER).mkdir(parents=True, exist_ok=True)
        try:
            os.replace(where.path, dest / FOLDER / where.path.name)
        except FileNotFoundError:
            return False
    elif not _mark(where, dest):
        return False
    what = mid or f"the matchup of a record at byte {where.start} of {where.path.name}"
    print(
        printable(f"[arena] corrupt result ({reason}): moved to {dest}; playing {what} again"),
        file=sys.stderr,
        flush=True,
    )
    return True


def _mark(where: Where, dest: Path) -> bool:
    """Copy the line of ``where`` to ``dest/<log>`` and mark it :data:`QUARANTINED`, unless it is marked already
    (checked and marked under an exclusive lock of the log: two jobs may find one damaged line)."""
    dest.mkdir(parents=True, exist_ok=True)
    fd = os.open(where.path, os.O_RDWR)  # not appending: the mark goes where the record is
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        line = os.pread(fd, where.offset - where.start + where.length + 1, where.start)
        if line.startswith(QUARANTINED[:1]) or not line:
            return False
        with open(dest / where.path.name, "ab") as kept:
            kept.write(line if line.endswith(b"\n") else line + b"\n")
        os.pwrite(fd, QUARANTINED[: max(1, min(_CRC, len(line) - 1))], where.start)
        return True
    finally:
        os.close(fd)  # and the lock with it


# ----------------------------------------------------------------------------- stored matchups, checked whole


def _plain(v):
    """A JSON-ready scalar (numpy scalars as Python numbers)."""
    return v.item() if isinstance(v, np.generic) else v


def save_matchup(
    out_dir: Path | str,
    row: dict,
    curves: pd.DataFrame | dict,
    reliability: pd.DataFrame | dict | None,
    trace: pd.DataFrame | Path | None = None,
    rounds: dict | None = None,
    log: str = "matchups",
) -> None:
    """Store one finished matchup as a record of ``matchups/<log>.jsonl`` (:func:`append`: whole or not at
    all, so it marks completion), after its trace (optional) in ``traces/<matchup_id>.parquet``. ``rounds``:
    the realized forecasts and outcomes (``{"p": ..., "y": ...}``) that the pairs' comparisons read instead
    of replaying.

    The record holds the row, the curves and the reliability table as JSON (column -> values; floats
    round-trip exactly, NaN included). ``trace`` is a per-round table, or the path of a trace already
    streamed to its place. ``curves`` and ``reliability`` are tables or their columns (column -> list or
    array: :meth:`arena.runner.Result.curves_columns`, :func:`arena.results.reliability_columns`).
    """
    mid, out_dir = row["matchup_id"], Path(out_dir)
    trace_path = out_dir / "traces" / f"{mid}.parquet"
    if trace is not None and not isinstance(trace, (str, os.PathLike)):  # a table
        write_atomic(trace.assign(**{k: row[k] for k in KEY_COLUMNS}), trace_path)
    elif trace is not None and Path(trace) != trace_path:
        raise ValueError(f"a streamed trace must be at {trace_path}, not {trace}")
    stored = {"row": {k: _plain(v) for k, v in row.items()}, "trace": trace is not None}
    for part, table in (("curves", curves), ("reliability", reliability), ("rounds", rounds)):
        stored[part] = None if table is None else _columns(table)
    crc = append(out_dir, log, mid, json.dumps(stored).encode())
    if trace is None:  # written whole from this process's own tables: the rerun's check need not parse it again
        _remember(out_dir, [b"%08x\t%s\n" % (crc, mid.encode())])


def _columns(table) -> dict[str, list]:
    """column -> list of plain values, of a table (DataFrame) or of its columns (lists, arrays or Series)."""
    columns = table if isinstance(table, dict) else {c: table[c] for c in table.columns}
    return {c: v.tolist() if hasattr(v, "tolist") else list(v) for c, v in columns.items()}


_PLAIN = {type(None), str, int, float, bool}  # the types of a stored table's values (JSON's plain values)


class CorruptResult(ValueError):
    """A stored result that cannot be read back whole; it is never aggregated and is played again."""


def stored_ids(out_dir: Path | str) -> set[str]:
    """The ids of the matchups stored in a results directory (their records' checksums verified)."""
    return set(scan(out_dir))


#: The fields every stored result row has, with their types (a row has more: its game's metrics and
#: certificates, all plain numbers, strings or booleans).
ROW_SCHEMA = {
    "matchup_id": str,
    "game": str,
    "forecaster": str,
    "nature": str,
    "seed": int,
    "T": int,
    "rounds": int,
    "status": str,
    "forfeit_who": str,
    "forfeit_step": int,
    "forfeit_reason": str,
    "adaptive": bool,
    "forecaster_params": str,
    "nature_params": str,
}


def _row_problem(row: object, mid: str) -> str | None:
    """What is wrong with a stored row, or None: every field of :data:`ROW_SCHEMA` present with its type
    (a bool is no int), every other value a plain scalar, the game a safe name and the id the row's own."""
    if not isinstance(row, dict):
        return f"its row is a {type(row).__name__}, not a mapping"
    missing = [k for k in ROW_SCHEMA if k not in row]
    if missing:
        return f"it lacks {missing}; a result row has {list(ROW_SCHEMA)}"
    for key, kind in ROW_SCHEMA.items():
        value = row[key]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            return f"its {key} is {value!r}, not a {kind.__name__}"
    for key, value in row.items():
        if not (value is None or isinstance(value, (str, int, float, bool))):
            return f"its {key} is a {type(value).__name__}, not a plain value"
    if not is_safe_name(row["game"]):
        return f"its game {row['game']!r} is not a plain name"
    if row["status"] not in ("ok", "forfeit") or row["seed"] < 0 or row["T"] < 1 or not 0 <= row["rounds"] <= row["T"]:
        return (
            f"its status, seed, T or rounds are out of range ({row['status']!r}, {row['seed']}, {row['T']}, "
            f"{row['rounds']})"
        )
    if row["matchup_id"] != mid:
        return f"it holds matchup {row['matchup_id']}, not {mid}"
    if not mid.startswith(matchup_id(row["game"], row["forecaster"], row["nature"], row["seed"], row["T"], {})[:-10]):
        return "its id does not match its game, names, seed and T"
    return None


def _where(where: Where) -> str:
    """A record's place, for a message: its log and byte, or its file."""
    return str(where.path) if where.length < 0 else f"{where.path} (the record at byte {where.start})"


def _load(out_dir: Path, mid: str, where: Where | None, data: bytes | OSError | None = None) -> dict:
    """The stored dict of one matchup (row; curves and reliability as column -> values) from its record
    ``where`` (``data``: its bytes, when already read), checked whole: the JSON parses, its row has every
    field of :data:`ROW_SCHEMA` with its type and its own id, its tables have columns of equal length, and
    its trace, when it has one, reads back whole with as many rounds as the row. Raises CorruptResult."""
    if where is None:
        raise CorruptResult(f"matchup {mid} is not stored in {out_dir / FOLDER}")
    path = _where(where)
    try:
        if isinstance(data, OSError):
            raise data
        stored = json.loads(read(where) if data is None else data)
        row = stored["row"]
    except FileNotFoundError:
        raise CorruptResult(f"{path} is missing") from None
    except (OSError, ValueError, KeyError, TypeError, RecursionError) as exc:  # a directory in its place too
        raise CorruptResult(f"{path} is unreadable ({type(exc).__name__}: {str(exc)[:120]})") from None
    if problem := _row_problem(row, mid):
        raise CorruptResult(f"{path}: {problem}")
    for part in ("curves", "reliability"):
        columns = stored.get(part)
        if columns is not None and (
            not isinstance(columns, dict)
            or not all(isinstance(v, list) for v in columns.values())
            or len({len(v) for v in columns.values()}) > 1
            or not {type(x) for v in columns.values() for x in v} <= _PLAIN
        ):
            raise CorruptResult(
                f"{path}: its {part} table is malformed (columns of unequal length, not lists or not of plain values)"
            )
    if stored.get("trace"):
        trace = out_dir / "traces" / f"{mid}.parquet"
        try:  # read whole (page checksums verified): a damaged page under an intact footer is found too
            rounds = pq.read_table(trace, page_checksum_verification=True).num_rows
        except Exception as exc:  # noqa: BLE001 (pyarrow raises several types for a damaged file)
            raise CorruptResult(f"{trace} is missing or unreadable ({type(exc).__name__})") from None
        if rounds != row["rounds"]:
            raise CorruptResult(f"{trace} holds {rounds} rounds, its row {row['rounds']}")
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
    stored = _load(Path(out_dir), mid, scan(out_dir).get(mid))
    keys = {k: stored["row"][k] for k in KEY_COLUMNS}
    tables = {"summary": pd.DataFrame([stored["row"]])}
    for part in ("curves", "reliability"):
        if stored.get(part) is not None:
            tables[part] = _long([(stored[part], keys)])
    return tables


def stored_rounds(out_dir: Path | str, ids: Iterable[str]) -> dict[str, dict]:
    """The realized forecasts and outcomes (``{"p": ..., "y": ...}``) stored with the results of ``ids``
    (:func:`save_matchup`), by id, for those that have them; each log is read once, in its order."""
    index = scan(out_dir)
    wanted = sorted({m for m in ids if m in index}, key=lambda m: _place(index[m]))
    out = {}
    for mid, (_, data) in zip(wanted, read_many(index[m] for m in wanted), strict=True):
        try:
            rounds = json.loads(data).get("rounds")  # type: ignore[arg-type]  (an OSError: caught below)
        except (OSError, ValueError, TypeError, AttributeError):
            continue
        if isinstance(rounds, dict) and {"p", "y"} <= set(rounds):
            try:  # arrays: half the memory of lists of floats, for the many matchups of a report
                out[mid] = {**rounds, **{k: np.asarray(rounds[k], dtype=float) for k in ("p", "y")}}
            except (TypeError, ValueError):
                continue
    return out


def _quarantine(out_dir: Path, mid: str, where: Where | None, reason: str) -> Path:
    """:func:`quarantine_record` of the record of ``mid`` and its trace moved to ``corrupt/traces/``."""
    dest = out_dir / "corrupt"
    trace = out_dir / "traces" / f"{mid}.parquet"
    if trace.exists():
        (dest / "traces").mkdir(parents=True, exist_ok=True)
        os.replace(trace, dest / "traces" / trace.name)
    if where is not None:
        quarantine_record(out_dir, where, reason, mid)
    else:
        print(printable(f"[arena] corrupt result ({reason}): moved to {dest}; playing {mid} again"), file=sys.stderr)
    return dest


def quarantine(out_dir: Path | str, mid: str, reason: str) -> Path:
    """Take the corrupt result of ``mid`` out of the store (kept under ``corrupt/``), saying so: it is played again."""
    return _quarantine(Path(out_dir), mid, scan(out_dir).get(mid), reason)


def done_ids(out_dir: Path | str, ids: Iterable[str]) -> set[str]:
    """Those of ``ids`` whose whole result is stored (read once, in the order of the logs); each corrupt one
    is quarantined (:func:`quarantine`) and so not done."""
    out_dir = Path(out_dir)
    index, checked = scan(out_dir), _checked(out_dir)
    stored = [(m, index[m]) for m in set(ids) if m in index]
    done = {m for m, w in stored if (w.crc, m) in checked}
    todo = sorted(((m, w) for m, w in stored if m not in done), key=lambda item: _place(item[1]))
    corrupt, whole = [], []
    for (mid, _), (where, data) in zip(todo, read_many(w for _, w in todo), strict=True):
        try:
            if not _load(out_dir, mid, where, data).get("trace") and where.length >= 0:
                whole.append(b"%08x\t%s\n" % (where.crc, mid.encode()))  # a trace is checked every time
            done.add(mid)
        except CorruptResult as exc:
            corrupt.append((mid, where, str(exc)))
    _remember(out_dir, whole)
    for mid, where, reason in corrupt:
        _quarantine(out_dir, mid, where, reason)
    for bad in damaged(out_dir):  # torn or damaged lines: the matchups they held are not done
        quarantine_record(out_dir, bad.where, "its record is torn or damaged", bad.mid)
    return done


#: In ``matchups/``: the checksum and id of each record already read back whole (the next run does not parse it).
CHECKED = ".checked"


def _checked(out_dir: Path) -> set[tuple[int, str]]:
    """(checksum, id) of the records read back whole before (:data:`CHECKED`); a damaged line is left out."""
    try:
        lines = (out_dir / FOLDER / CHECKED).read_bytes().split(b"\n")
    except OSError:
        return set()
    pairs = (line.split(b"\t") for line in lines if len(line) > _CRC + 1)
    return {(int(c, 16), m.decode(errors="replace")) for c, m, *_ in pairs if len(c) == _CRC and not c.strip(_HEX)}


def _remember(out_dir: Path, lines: list[bytes]) -> None:
    """Add ``checksum\tid`` lines to :data:`CHECKED` (one append: the shards of a run add theirs side by side; a
    cache, best effort: a line lost or torn only means that record is read and checked again)."""
    if lines:
        with contextlib.suppress(OSError), open(out_dir / FOLDER / CHECKED, "ab") as f:
            f.write(b"".join(lines))


def _place(where: Where) -> tuple[str, int]:
    return str(where.path), where.offset


def is_done(out_dir: Path | str, mid: str) -> bool:
    """Whether a whole result of matchup ``mid`` is stored; a corrupt one is quarantined (and so not done)."""
    return mid in done_ids(out_dir, [mid])


def selected_ids(out_dir: Path, only: set[str] | None = None) -> list[str]:
    """The ids of the stored matchups (of ``only``, when given) that :func:`collect` reads, sorted."""
    return sorted(stored_ids(out_dir) if only is None else stored_ids(out_dir) & set(only))


def stored_matchups(out_dir: Path | str, only: set[str] | None = None) -> Iterator[dict]:
    """Every whole stored matchup (of ``only``, when given), in the order of their ids, as stored dicts (row;
    curves, reliability and rounds as column -> values), one at a time.

    A corrupt or partial result is reported on stderr and left out, never aggregated; the next
    run of its tournament plays it again.
    """
    out_dir = Path(out_dir)
    index = scan(out_dir)
    for bad in (d for d in damaged(out_dir) if only is None or d.mid in only or not d.mid):
        what = f"at byte {bad.where.start} of {bad.where.path} ({bad.mid or 'its id unreadable'}) is torn or damaged"
        print(printable(f"[arena] left out of the summary: a record {what}; rerun the tournament"), file=sys.stderr)
    ids = sorted(index if only is None else set(index) & set(only))
    for mid, (where, data) in zip(ids, read_many(index[m] for m in ids), strict=True):
        try:
            yield _load(out_dir, mid, where, data)
        except CorruptResult as exc:
            print(
                printable(f"[arena] left out of the summary: {exc}; rerun the tournament to play it again"),
                file=sys.stderr,
                flush=True,
            )


__all__ = [
    "CorruptResult",
    "Where",
    "append",
    "done_ids",
    "is_done",
    "log_name",
    "quarantine",
    "read_stored",
    "save_matchup",
    "scan",
    "selected_ids",
    "stored_ids",
    "stored_matchups",
    "stored_rounds",
]
