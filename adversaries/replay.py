"""Replay natures: the outcomes (and optional contexts) of a recorded series.

``replay`` reads a column of a user's CSV or Parquet file; ``seattle_rain`` replays the
shipped Seattle daily weather extract (``adversaries/data``, see its PROVENANCE.md).
Both are oblivious and deterministic. Constructors only store parameters; the file is
read on the first ``reset`` (or ``length``) and cached per file version. One reader
(``_load``) serves these and the quantile game's replays (``adversaries/quantile.py``).
Every problem with the file raises a one-line ValueError (OSError when the file cannot
be opened) that names the file and, where one value is at fault, its column and row.
Rows count data rows from 0, header not counted, as ``start`` does; for a CSV the
message adds the line an editor shows (blank lines are skipped, as pandas does).

References
----------
Perdomo & Recht, "In Defense of Defensive Forecasting", §2 (any outcome sequence).
"""

from __future__ import annotations

import csv
import functools
import os
import sys
import warnings
from collections.abc import Hashable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import ClassVar

import numpy as np

from arena.errors import did_you_mean
from arena.lazy import LazyModule
from arena.protocols import EMPTY_CONTEXT, Context, Forecast, Nature
from arena.registry import register
from arena.validators import check_count

pd = LazyModule("pandas", keep=False)  # imported when a file is read, not when natures are registered

_COMPRESSION = (".gz", ".bz2", ".zip", ".xz", ".zst")
_FORMATS = {".csv": ",", ".txt": ",", ".tsv": "\t", ".parquet": None, ".pq": None}


#: ``on_missing``: refuse a missing value (one line naming its row), or skip the rows that have one.
ON_MISSING = ("error", "skip")


@dataclass(frozen=True)
class _Series:
    y: np.ndarray  # outcomes from row `start` on
    x: np.ndarray  # contexts, shape (len(y), number of context columns)
    rows: np.ndarray  # the file row (0-based, header not counted) of each round
    groups: np.ndarray | None = None  # codes of the group columns, shape (len(y), number of group columns)
    levels: tuple = ()  # per group column, its sorted distinct labels (code i is levels[c][i])
    skipped: tuple[int, ...] = ()  # the file rows from `start` on not played (on_missing: skip)


def check_columns(who: str, column, context_columns, what: str = "context_columns") -> tuple[str, tuple[str, ...]]:
    """The outcome column and a tuple of other columns (``what``: the parameter's name, for messages)."""
    if not isinstance(column, str) or not column:
        raise ValueError(f"{who}: column={column!r} is not a column name; give the outcome column, e.g. column: rain")
    if isinstance(context_columns, (str, bytes)) or not isinstance(context_columns, Sequence):  # nor sets, mappings
        raise ValueError(  # noqa: TRY004 (one error type for bad parameters)
            f"{who}: {what}={context_columns!r} is not a list of column names; give a list, e.g. {what}: [temp, wind]"
        )
    ctx = tuple(context_columns)
    for c in ctx:
        if not isinstance(c, str) or not c:
            raise ValueError(f"{who}: {what} holds {c!r}, not a column name; give names, e.g. {what}: [temp, wind]")
    if column in ctx:
        raise ValueError(
            f"{who}: {what} contains the outcome column {column!r}: the forecaster would see y_t "
            "before forecasting; remove it (use a lagged copy of the column instead)"
        )
    if len(set(ctx)) != len(ctx):
        raise ValueError(f"{who}: {what}={list(ctx)!r} repeats a column; list each column once")
    return column, ctx


def _format(path: Path, label: str, column: str) -> str | None:
    """The CSV separator for ``path``, or None for Parquet."""
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] in _COMPRESSION:
        suffixes = suffixes[:-1]
    if suffixes and suffixes[-1] in _FORMATS:
        return _FORMATS[suffixes[-1]]
    raise ValueError(
        f"replay: file {label!r} (column {column!r}) has an unknown extension; "
        f"rename it to one of {', '.join(_FORMATS)} (CSV may also be compressed: {', '.join(_COMPRESSION)})"
    )


def _one_line(err: BaseException, limit: int = 300) -> str:
    """A library's error as one line of at most ``limit`` characters (parsers write several)."""
    text = " ".join(f"{type(err).__name__}: {err}".split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _csv_rows(path: Path, sep: str) -> Iterator[tuple[int, list[str]]]:
    """(first line, fields) of every non-blank record of an uncompressed CSV, header first.

    Lines are 1-based as an editor shows them; a quoted field may span lines. Blank
    lines are skipped, as ``pandas.read_csv`` does."""
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.reader(f, delimiter=sep)
        end = 0
        for fields in reader:
            begin, end = end + 1, reader.line_num
            if fields and not (len(fields) == 1 and not fields[0].strip()):
                yield begin, fields


def _line_of(path: Path, row: int) -> int | None:
    """The line on which data row ``row`` (0-based) starts; None for Parquet or compressed files."""
    try:
        sep = _format(path, "", "")
        if sep is None or path.suffix.lower() in _COMPRESSION:
            return None
        for i, (line, _) in enumerate(_csv_rows(path, sep)):
            if i == row + 1:  # record 0 is the header
                return line
    except (OSError, ValueError, csv.Error):  # the location is a courtesy; never hide the real error
        return None
    return None


def _where(path: Path, label: str, column: str, row: int) -> str:
    """Where a value sits, for messages: the row as ``start`` counts it and, for a CSV, its line."""
    line = _line_of(path, row)
    editor = f"; line {line} of the file" if line is not None else ""
    return f"file {label!r}, column {column!r}, row {row} (0-based, header not counted{editor})"


def _read(path: Path, label: str, column: str) -> pd.DataFrame:
    """The whole table; errors name the file and the column that was asked for."""
    if not path.exists():
        raise FileNotFoundError(
            f"replay: file {label!r} not found (looked for column {column!r} at {path.absolute()}); "
            "give the path of an existing CSV or Parquet file (relative paths start at the working directory)"
        )
    if path.is_dir():
        raise ValueError(
            f"replay: {label!r} is a directory, not a file (column {column!r}); give a CSV or Parquet file"
        )
    if not path.is_file():  # a named pipe or a device would block or never end
        raise ValueError(f"replay: {label!r} is not a regular file (a pipe or a device?); give a CSV or Parquet file")
    sep = _format(path, label, column)
    table = _read_table(path, label, column, sep)
    if sep is not None:  # pandas renames a repeated name (y, y.1): find it in the header as written
        names = pd.read_csv(path, sep=sep, header=None, nrows=1, dtype=str, keep_default_na=False).iloc[0].tolist()
        twice = next((n for i, n in enumerate(names) if n in names[:i]), None)
        if twice is not None:
            raise ValueError(
                f"replay: file {label!r} has the column name {twice!r} twice in its header (looking "
                f"for column {column!r}); give every column its own name"
            )
    return table


def _read_table(path: Path, label: str, column: str, sep: str | None) -> pd.DataFrame:
    """The table of a regular file, CSV (``sep``) or Parquet (``sep`` None)."""
    kind = "Parquet" if sep is None else "CSV"
    try:
        if sep is None:
            return pd.read_parquet(path)
        with warnings.catch_warnings():
            # A first row longer than the header would silently become the index (index_col=None)
            # or lose its last fields (index_col=False, with this warning): refuse it.
            warnings.simplefilter("error", pd.errors.ParserWarning)
            return pd.read_csv(path, sep=sep, index_col=False)
    except pd.errors.EmptyDataError:
        raise ValueError(
            f"replay: file {label!r} is empty (no header, no rows, so no column {column!r} at row 0); "
            "give a file with a header line and at least one row"
        ) from None
    except (pd.errors.ParserWarning, pd.errors.ParserError) as err:
        message = _ragged(path, label, column, sep) or (
            f"replay: cannot read file {label!r} as CSV (looking for column {column!r}): {_one_line(err)}"
        )
        raise ValueError(message) from None
    except UnicodeDecodeError:
        raise ValueError(_undecodable(path, label, column)) from None
    except OSError as err:
        if err.errno is None:  # a parser's complaint (pyarrow raises OSError for a corrupt file), not the OS's
            raise ValueError(
                f"replay: cannot read file {label!r} as {kind} (looking for column {column!r}): {_one_line(err)}"
            ) from None
        kind_of_error = type(err) if type(err).__module__ == "builtins" else OSError  # PermissionError, ...
        raise kind_of_error(
            f"replay: cannot open file {label!r} (looking for column {column!r}): {err.strerror or _one_line(err)}"
        ) from None
    except Exception as err:  # noqa: BLE001 (a file boundary: any parse failure becomes one clear message)
        raise ValueError(
            f"replay: cannot read file {label!r} as {kind} (looking for column {column!r}): {_one_line(err)}"
        ) from None


def _ragged(path: Path, label: str, column: str, sep: str) -> str | None:
    """The message for the first CSV record with more fields than its header (None if there is none)."""
    try:
        rows = _csv_rows(path, sep)
        _, header = next(rows)
        for i, (line, fields) in enumerate(rows):
            if len(fields) > len(header):
                return (
                    f"replay: file {label!r}, row {i} (0-based, header not counted; line {line} of the file) has "
                    f"{len(fields)} fields, but the header has {len(header)} (looking for column {column!r}); "
                    "remove the extra fields or name every column in the header"
                )
    except (OSError, ValueError, csv.Error, StopIteration):
        pass
    return None


def _undecodable(path: Path, label: str, column: str) -> str:
    """The message for a CSV that is not UTF-8, with the line of the first bad byte when it can tell."""
    where = ""
    if path.suffix.lower() not in _COMPRESSION:
        try:
            raw = path.read_bytes()
            raw.decode("utf-8")
        except UnicodeDecodeError as err:
            line = raw.count(b"\n", 0, err.start) + 1
            where = f": byte {raw[err.start]:#04x} on line {line} is not UTF-8"
        except OSError:
            pass
    return f"replay: file {label!r} (column {column!r}) is not UTF-8 text{where}; save the file as UTF-8"


def _numeric(values: pd.Series, path: Path, label: str, column: str) -> np.ndarray:
    """``values`` as finite floats; a message names the first bad row (its index: the file row, 0-based, header
    excluded)."""
    if isinstance(values.dtype, pd.CategoricalDtype):  # a dictionary-encoded Parquet column: judge its labels
        values = values.astype(object)
    if pd.api.types.is_bool_dtype(values) or pd.api.types.is_numeric_dtype(values):
        num = values.astype(float)
        not_number = pd.Series(False, index=values.index)
    elif pd.api.types.is_object_dtype(values) or pd.api.types.is_string_dtype(values):
        try:
            num = pd.to_numeric(values, errors="coerce").astype(float)
        except (TypeError, ValueError, OverflowError):  # neither numbers nor strings (Parquet lists, ...)
            num = pd.Series([_as_float(v) for v in values], index=values.index, dtype=float)
        not_number = num.isna() & values.notna()
    else:  # dates, timedeltas: not numbers even though pandas can cast some
        num = pd.Series(np.nan, index=values.index)
        not_number = pd.Series(True, index=values.index)
    arr = num.to_numpy(dtype=float)
    for i in np.flatnonzero(~np.isfinite(arr)):
        if not_number.iat[i]:
            reason = f"value {_show(values.iat[i])} is not a number"
        elif np.isnan(arr[i]):
            reason = "the value is missing (empty or NaN)"
        else:
            reason = f"value {arr[i]!r} is not finite"
        row = int(values.index[i])
        raise ValueError(
            f"replay: {_where(path, label, column, row)}: {reason}; "
            f"fix or drop that row, or pass start: {row + 1} to skip it"
            + (", or on_missing: skip to drop every row with a missing value" if np.isnan(arr[i]) else "")
        )
    return arr


def _show(value, limit: int = 60) -> str:
    text = " ".join(repr(value).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _as_float(v) -> float:
    try:
        return float(v)
    except (TypeError, ValueError, OverflowError):
        return np.nan


@functools.lru_cache(maxsize=16)
def _load(
    path: str,
    stamp: tuple,
    label: str,
    column: str,
    context_columns: tuple,
    start: int,
    binary: bool = True,
    group_columns: tuple = (),
    missing: tuple | None = None,
) -> _Series:
    """Read and check a file once per (file version, columns, start); ``stamp`` is (mtime, size).

    The one reader of every replay nature. ``binary=False`` accepts any finite outcome
    (the quantile game checks its range); ``group_columns`` are label columns coded by
    their sorted distinct values. ``missing`` (on_missing: skip): the rows with a missing value in
    any of these columns (every column of the file when empty) are dropped before anything is checked."""
    file = Path(path)
    df = _read(file, label, column).reset_index(drop=True)  # the index is the file row
    available = [str(c) for c in df.columns]
    for name in (column, *context_columns, *group_columns, *(missing or ())):
        if name not in available:
            raise ValueError(
                f"replay: file {label!r} has no column {name!r} (asked for every row).{did_you_mean(name, available)} "
                f"Available columns: {', '.join(map(repr, available)) or 'none'}"
            )
    if len(set(available)) != len(available):
        twice = sorted({c for c in available if available.count(c) > 1})
        raise ValueError(f"replay: file {label!r} names the columns {twice} more than once; give each column one name")
    df.columns = available
    if len(df) == 0:
        raise ValueError(
            f"replay: file {label!r} is empty: it has a header but no rows, so column {column!r} has no row 0; "
            "give a file with at least one row"
        )
    if start >= len(df):
        raise ValueError(
            f"replay: start={start} leaves no rows: file {label!r}, column {column!r} has rows 0..{len(df) - 1}; "
            f"give start below {len(df)}"
        )
    part, skipped = df.iloc[start:], np.zeros(0, dtype=np.int64)
    if missing is not None:
        gone = part[list(missing or available)].isna().any(axis=1).to_numpy()
        skipped, part = part.index.to_numpy()[gone], part.loc[~gone]
        if part.empty:
            raise ValueError(
                f"replay: file {label!r}: every row from row {start} on has a missing value in "
                f"{', '.join(map(repr, missing or available))} (on_missing: skip leaves no round); fill them in"
            )
    rows = part.index.to_numpy(dtype=np.int64)
    y = _numeric(part[column], file, label, column)
    bad = np.flatnonzero((y != 0.0) & (y != 1.0)) if binary else np.zeros(0, int)
    if bad.size:
        i = int(bad[0])
        raise ValueError(
            f"replay: {_where(file, label, column, int(rows[i]))}: value {y[i]:g} is not 0 or 1, and the binary "
            "game needs outcomes in {0, 1}; recode the column (e.g. 1 if the event happened, else 0)"
        )
    x = (
        np.column_stack([_numeric(part[c], file, label, c) for c in context_columns])
        if context_columns
        else np.zeros((y.size, 0))
    )
    for a in (y, x, rows):
        a.flags.writeable = False
    kept = {"rows": rows, "skipped": tuple(int(r) for r in skipped)}
    if not group_columns:
        return _Series(y, x, **kept)
    codes, levels = _group_codes(part, file, label, group_columns)
    return _Series(y, x, groups=codes, levels=levels, **kept)


def _group_codes(df: pd.DataFrame, path: Path, label: str, group_columns: tuple) -> tuple[np.ndarray, tuple]:
    """Integer codes of label columns (sorted distinct labels); a missing label names its row."""
    codes, levels = [], []
    for c in group_columns:
        values = df[c]
        missing = np.flatnonzero(values.isna().to_numpy())
        if missing.size:
            raise ValueError(
                f"replay: {_where(path, label, c, int(values.index[missing[0]]))}: "
                "the group label is missing; fill it or drop that row"
            )
        try:
            uniq = list(pd.unique(values))
        except TypeError:  # unhashable cells (Parquet lists): not labels
            i = next((i for i, v in enumerate(values) if not isinstance(v, Hashable)), 0)
            raise ValueError(
                f"replay: {_where(path, label, c, int(values.index[i]))}: the group label {_show(values.iat[i])} "
                "is not a single value; give a text or number label"
            ) from None
        try:
            uniq = sorted(uniq)
        except TypeError:  # mixed label types: order by their text
            uniq = sorted(uniq, key=str)
        index = {v: i for i, v in enumerate(uniq)}
        codes.append(np.array([index[v] for v in values], dtype=np.int64))
        levels.append(tuple(v.item() if hasattr(v, "item") else v for v in uniq))
    out = np.column_stack(codes)
    out.flags.writeable = False
    return out, tuple(levels)


def data_file(path: str) -> AbstractContextManager[Path]:
    """A context manager yielding a data file's path on disk; ``pkg:<package>/<file>`` is a shipped file."""
    if path.startswith("pkg:"):
        package, _, rel = path[4:].partition("/")
        return resources.as_file(resources.files(package).joinpath(rel))
    return nullcontext(Path(path).expanduser())


def read_series(
    path: str,
    column: str,
    context_columns: tuple = (),
    start: int = 0,
    binary: bool = True,
    group_columns: tuple = (),
    missing: tuple | None = None,
) -> _Series:
    """The checked column ``column`` (``.y``) and ``context_columns`` (``.x``) of a data file from row
    ``start`` on, read once per file version; the one reader of the replay natures and forecasters.

    ``missing`` (on_missing: skip; None: refuse a missing value): the rows with a missing value in any of
    these columns (every column of the file when empty) are not played. Every player that reads the file
    with the same ``start`` and ``missing`` drops the same rows (``.skipped``), which one line on stderr
    counts."""
    with data_file(path) as file:
        stat = file.stat() if file.is_file() else None
        stamp = (stat.st_mtime_ns, stat.st_size) if stat else (None, None)
        missing = None if missing is None else tuple(missing)
        series = _load(
            str(file), stamp, path, column, tuple(context_columns), start, binary, tuple(group_columns), missing
        )
    if series.skipped:
        _say_skipped(path, start, missing, series.skipped, series.y.size)
    return series


#: The masks already announced, in the environment so that the worker processes a command starts stay quiet.
_SAID = "ARENA_REPLAY_SKIPPED_SAID"


def _say_skipped(label: str, start: int, missing: tuple, skipped: tuple, kept: int) -> None:
    """One line on stderr per file and mask and command (every reader of the same rows shares it)."""
    key = f"{label}|{start}|{missing}|{len(skipped)}"
    said = os.environ.get(_SAID, "").split("\n")
    if key in said:
        return
    os.environ[_SAID] = "\n".join([*said, key]).strip("\n")
    rows = ", ".join(map(str, skipped[:5])) + (", ..." if len(skipped) > 5 else "")
    where = f"in {', '.join(map(repr, missing))}" if missing else "in a column"
    n, s = len(skipped), "s" if len(skipped) > 1 else ""
    print(
        f"replay: file {label!r}: {n} row{s} with a missing value {where} skipped (on_missing: skip; "
        f"row{s} {rows}); every player on this file plays the {kept} others",
        file=sys.stderr,
    )


def check_on_missing(who: str, on_missing, missing_columns) -> tuple | None:
    """``missing`` for :func:`read_series`: None for ``on_missing: error``, else the columns (() = all).

    Examples
    --------
    >>> check_on_missing("replay", "error", None), check_on_missing("replay", "skip", None)
    (None, ())
    >>> check_on_missing("replay", "drop", None)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: replay: on_missing='drop' is not one of error, skip: error (refuse a missing value) or skip ...
    """
    if on_missing not in ON_MISSING:
        raise ValueError(
            f"{who}: on_missing={on_missing!r} is not one of {', '.join(ON_MISSING)}: error (refuse a missing "
            "value) or skip (drop its row for every player)"
        )
    if missing_columns is not None:
        if on_missing != "skip":
            raise ValueError(f"{who}: missing_columns={missing_columns!r} needs on_missing: skip")
        _, cols = check_columns(who, "-", missing_columns, "missing_columns")
        if not cols:
            raise ValueError(f"{who}: missing_columns=[] names no column; list some, or leave it out (every column)")
        return cols
    return () if on_missing == "skip" else None


def read_keys(path: str, key: str, start: int = 0) -> list:
    """The values of column ``key`` of a data file from row ``start`` on, as read (labels, not numbers);
    a missing value names its row."""
    with data_file(path) as file:
        df = _read(file, path, key)
        available = [str(c) for c in df.columns]
        if key not in available:
            raise ValueError(
                f"replay: file {path!r} has no key column {key!r}.{did_you_mean(key, available)} "
                f"Available columns: {', '.join(map(repr, available)) or 'none'}"
            )
        values = df[df.columns[available.index(key)]].iloc[start:]
        missing = np.flatnonzero(values.isna().to_numpy())
        if missing.size:
            raise ValueError(
                f"replay: {_where(file, path, key, start + int(missing[0]))}: the key is missing; "
                "fill it or drop that row"
            )
        return [v.item() if hasattr(v, "item") else v for v in values]


def check_intercept(who: str, intercept) -> bool:
    """``intercept`` as a bool, or a one-line error.

    Examples
    --------
    >>> check_intercept("replay", "yes")
    Traceback (most recent call last):
    ...
    ValueError: replay: intercept='yes' must be true or false, e.g. intercept: true
    """
    if not isinstance(intercept, (bool, np.bool_)):
        raise ValueError(f"{who}: intercept={intercept!r} must be true or false, e.g. intercept: true")
    return bool(intercept)


@register
class Replay(Nature):
    """Replays the outcomes (and optional contexts) recorded in a column of a CSV or Parquet file.

    Round t plays row ``start + t - 1`` (rows are counted from 0, header excluded); the
    context of round t is that row's ``context_columns``, revealed before the forecast,
    so they must not contain the outcome itself. The outcomes must be 0 or 1. The arena
    can read ``length`` (the rows from ``start`` on) to refuse a longer horizon.

    Parameters
    ----------
    path : str
        The file: ``.csv``, ``.tsv``, ``.txt`` (also compressed, e.g. ``.csv.gz``),
        ``.parquet`` or ``.pq``. A relative path starts at the working directory.
    column : str
        The outcome column.
    context_columns : list of str, default []
        Numeric columns that form the context x_t.
    start : int, default 0
        First row to replay.
    intercept : bool, default False
        Append a constant 1 to the context, x_t = (row's context_columns, 1), so that linear
        forecasters and the linear comparators <w, x> get an intercept.
    on_missing : {"error", "skip"}, default "error"
        ``error``: a missing value stops the command with one line naming its row. ``skip``: the rows
        with a missing value in any of ``missing_columns`` (default: every column of the file) are not
        played, so that a forecast replay of the same file with the same settings (``forecaster=replay``)
        drops the same rows and every forecaster meets the same outcomes; ``skipped_rows`` lists them.
    missing_columns : list of str or None, default None
        With ``on_missing: skip``: the columns whose missing values drop a row (None: every column).

    Examples
    --------
    >>> import numpy as np, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "bits.csv")
    >>> _ = open(path, "w").write("y,temp\\n1,20.5\\n0,18.0\\n1,19.0\\n")
    >>> nature = Replay(path, column="y", context_columns=["temp"], start=1)
    >>> nature.reset(np.random.default_rng(0))
    >>> nature.length, nature.context(1), nature.respond(1, nature.context(1), Forecast.point(0.5))
    (2, array([18.]), 0.0)

    References
    ----------
    Perdomo & Recht, §2 (guarantees for any outcome sequence).
    """

    name = "replay"
    games = ("binary",)
    adaptive = False

    def __init__(
        self,
        path: str | os.PathLike,
        column: str,
        context_columns: Iterable[str] = (),
        start: int = 0,
        intercept: bool = False,
        on_missing: str = "error",
        missing_columns: Iterable[str] | None = None,
    ):
        if not isinstance(path, (str, os.PathLike)) or not os.fspath(path):
            raise ValueError(f"{self.name}: path={path!r} is not a file path; give one, e.g. path: data/rain.csv")
        self.path = os.fspath(path)
        self.column, self.context_columns = check_columns(self.name, column, context_columns)
        self.start = check_count(self.name, "start", start, 0, minimum=0)
        self.intercept = check_intercept(self.name, intercept)
        self._missing = check_on_missing(self.name, on_missing, missing_columns)
        self.on_missing = on_missing
        self.missing_columns = None if missing_columns is None else list(missing_columns)

    #: Whether a constant 1 is appended to every context (the subclasses without the parameter: no).
    intercept: bool = False
    #: Missing values refused (the subclasses without the parameters).
    on_missing: str = "error"
    missing_columns: list[str] | None = None
    _missing: tuple | None = None

    @property
    def skipped_rows(self) -> tuple[int, ...]:  # type: ignore[override]
        """The file rows from ``start`` on that are not played (``on_missing: skip``; () reads nothing)."""
        return self._series().skipped if self._missing is not None else ()

    @property
    def context_dim(self) -> int:
        return len(self.context_columns) + int(self.intercept)

    @property
    def length(self) -> int:
        """Number of rounds the series can play (rows from ``start`` on); reads the file once."""
        return int(self._series().y.size)

    #: The binary game's replays need outcomes in {0, 1}; the quantile replays accept any finite number.
    binary_outcomes: ClassVar[bool] = True
    #: Label columns coded as groups (the quantile replays set them).
    group_columns: tuple[str, ...] = ()

    def _file(self) -> AbstractContextManager[Path]:
        return data_file(self.path)

    def _series(self) -> _Series:
        """The checked series, read once per nature (and cached per file version across natures)."""
        series = getattr(self, "_cache", None)
        if series is None:
            series = read_series(
                self.path,
                self.column,
                self.context_columns,
                self.start,
                self.binary_outcomes,
                self.group_columns,
                self._missing,
            )
            self._cache = series
        return series

    def _where(self, column: str, row: int) -> str:
        """``file ..., column ..., row ...`` (with the line of a CSV) for messages about one value."""
        with self._file() as path:
            return _where(path, self.path, column, row)

    def reset(self, rng: np.random.Generator) -> None:
        super().reset(rng)
        self._series()

    def _row(self, t: int) -> int:
        n = self._series().y.size
        if not 1 <= t <= n:
            raise ValueError(
                f"{self.name}: round t={t} is outside the series: file {self.path!r}, column {self.column!r} has "
                f"{n} rows from row {self.start} on; play at most T={n} rounds (or lower start)"
            )
        return t - 1

    def context(self, t: int) -> Context:
        if not self.context_columns:
            return np.ones(1) if self.intercept else EMPTY_CONTEXT
        x = self._series().x[self._row(t)]
        return np.append(x, 1.0) if self.intercept else x.copy()

    def respond(self, t: int, x: Context, forecast: Forecast) -> float:
        return float(self._series().y[self._row(t)])

    def series(self, T: int) -> tuple[np.ndarray, np.ndarray] | None:
        """The contexts (T, context_dim) and outcomes of rounds 1 .. T at once, as :meth:`context` and
        :meth:`respond` give them; None when a subclass plays its rounds otherwise or T passes the series (the
        rounds are asked one by one, and the round past the end names itself)."""
        cls = type(self)
        if cls.context is not Replay.context or cls.respond is not Replay.respond:
            return None
        data = self._series()
        if not 0 <= T <= data.y.size:
            return None
        columns = [data.x[:T]] if self.context_columns else []
        if self.intercept:
            columns.append(np.ones((T, 1)))
        X = np.hstack(columns) if columns else np.zeros((T, 0))
        return X, data.y[:T].astype(float)


#: Today's weather columns of the shipped extract that may serve as contexts.
SEATTLE_CONTEXTS = ("precipitation", "temp_max", "temp_min", "wind")


@register
class SeattleRain(Replay):
    """Will it rain tomorrow in Seattle? Replays NOAA daily weather, 2012-01-01 to 2015-12-30.

    The outcome of day t is ``rain_tomorrow`` (1 if day t+1 had precipitation > 0), so
    1460 rounds; today's weather can serve as the context. The data ship with the
    package (``adversaries/data/seattle_weather.csv``; source and checksum in
    ``adversaries/data/PROVENANCE.md``).

    Parameters
    ----------
    context_columns : list of str, default []
        Any of ``precipitation`` (mm), ``temp_max``, ``temp_min`` (deg C), ``wind`` (m/s) of today.
    start : int, default 0
        First day to replay (0 is 2012-01-01).

    Examples
    --------
    >>> import numpy as np
    >>> nature = SeattleRain(context_columns=["precipitation", "wind"])
    >>> nature.reset(np.random.default_rng(0))
    >>> nature.length, nature.context(2), nature.respond(2, nature.context(2), Forecast.point(0.5))
    (1460, array([10.9,  4.5]), 1.0)

    References
    ----------
    Perdomo & Recht, §2 and §8 (calibration on a real sequence).
    """

    name = "seattle_rain"
    games = ("binary",)
    adaptive = False

    #: A file shipped in the package, found with importlib.resources (works when installed).
    path = "pkg:adversaries/data/seattle_weather.csv"
    column = "rain_tomorrow"

    def __init__(self, context_columns: Iterable[str] = (), start: int = 0, intercept: bool = False) -> None:
        self.intercept = check_intercept(self.name, intercept)
        _, ctx = check_columns(self.name, self.column, context_columns)
        for c in ctx:
            if c not in SEATTLE_CONTEXTS:
                raise ValueError(
                    f"{self.name}: context column {c!r} is not available.{did_you_mean(c, SEATTLE_CONTEXTS)} "
                    f"Choose from {', '.join(SEATTLE_CONTEXTS)}"
                )
        self.context_columns = ctx
        self.start = check_count(self.name, "start", start, 0, minimum=0)
