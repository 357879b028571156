"""Replay natures: the outcomes (and optional contexts) of a recorded series.

``replay`` reads a column of a user's CSV or Parquet file; ``seattle_rain`` replays the
shipped Seattle daily weather extract (``adversaries/data``, see its PROVENANCE.md).
Both are oblivious and deterministic. Constructors only store parameters; the file is
read on the first ``reset`` (or ``length``) and cached per file version. Every problem
with the file raises an error that names the file, the column and the row.

References
----------
Perdomo & Recht, "In Defense of Defensive Forecasting", §2 (any outcome sequence); SPEC §5.
"""

from __future__ import annotations

import difflib
import functools
import os
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from adversaries.iid import _check_count
from arena.protocols import EMPTY_CONTEXT, Context, Forecast, Nature
from arena.registry import register

_COMPRESSION = (".gz", ".bz2", ".zip", ".xz", ".zst")
_FORMATS = {".csv": ",", ".txt": ",", ".tsv": "\t", ".parquet": None, ".pq": None}


@dataclass(frozen=True)
class _Series:
    y: np.ndarray  # outcomes from row `start` on
    x: np.ndarray  # contexts, shape (len(y), number of context columns)
    groups: np.ndarray | None = None  # codes of the group columns, shape (len(y), number of group columns)
    levels: tuple = ()  # per group column, its sorted distinct labels (code i is levels[c][i])


def _check_columns(who: str, column, context_columns) -> tuple[str, tuple[str, ...]]:
    if not isinstance(column, str) or not column:
        raise ValueError(f"{who}: column={column!r} is not a column name; give the outcome column, e.g. column: rain")
    if isinstance(context_columns, (str, bytes)) or not isinstance(context_columns, Iterable):
        raise ValueError(  # noqa: TRY004 (one error type for bad parameters)
            f"{who}: context_columns={context_columns!r} is not a list of column names; "
            f"give a list, e.g. context_columns: [{context_columns}]"
        )
    ctx = tuple(context_columns)
    for c in ctx:
        if not isinstance(c, str) or not c:
            raise ValueError(f"{who}: context_columns holds {c!r}, not a column name; give names, e.g. [temp, wind]")
    if column in ctx:
        raise ValueError(
            f"{who}: context_columns contains the outcome column {column!r}: the forecaster would see y_t "
            "before forecasting; remove it (use a lagged copy of the column instead)"
        )
    if len(set(ctx)) != len(ctx):
        raise ValueError(f"{who}: context_columns={list(ctx)!r} repeats a column; list each column once")
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
    sep = _format(path, label, column)
    try:
        return pd.read_parquet(path) if sep is None else pd.read_csv(path, sep=sep)
    except pd.errors.EmptyDataError:
        raise ValueError(
            f"replay: file {label!r} is empty (no header, no rows, so no column {column!r} at row 0); "
            "give a file with a header line and at least one row"
        ) from None
    except OSError:
        raise
    except Exception as err:  # a file boundary: any parse failure becomes one clear message
        kind = "Parquet" if sep is None else "CSV"
        raise ValueError(
            f"replay: cannot read file {label!r} as {kind} (looking for column {column!r}; the row is unknown "
            f"because parsing failed): {type(err).__name__}: {err}"
        ) from err


def _numeric(values: pd.Series, label: str, column: str, start: int) -> np.ndarray:
    """``values`` as finite floats; a message names the first bad row (0-based, header excluded)."""
    if pd.api.types.is_bool_dtype(values) or pd.api.types.is_numeric_dtype(values):
        num = values.astype(float)
        not_number = pd.Series(False, index=values.index)
    elif pd.api.types.is_object_dtype(values) or pd.api.types.is_string_dtype(values):
        try:
            num = pd.to_numeric(values, errors="coerce").astype(float)
        except (TypeError, ValueError):  # objects that are neither numbers nor strings (Parquet lists, ...)
            num = pd.Series([_as_float(v) for v in values], index=values.index, dtype=float)
        not_number = num.isna() & values.notna()
    else:  # dates, timedeltas, categories: not numbers even though pandas can cast some
        num = pd.Series(np.nan, index=values.index)
        not_number = pd.Series(True, index=values.index)
    arr = num.to_numpy(dtype=float)
    for i in range(arr.size):
        if not_number.iat[i]:
            reason = f"value {values.iat[i]!r} is not a number"
        elif np.isnan(arr[i]):
            reason = "the value is missing (empty or NaN)"
        elif not np.isfinite(arr[i]):
            reason = f"value {arr[i]!r} is not finite"
        else:
            continue
        raise ValueError(
            f"replay: file {label!r}, column {column!r}, row {start + i} (0-based, header not counted): "
            f"{reason}; fix or drop that row, or pass start: {start + i + 1} to skip it"
        )
    return arr


def _as_float(v) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return np.nan


@functools.lru_cache(maxsize=16)
def _load(path: str, stamp: tuple, label: str, column: str, context_columns: tuple, start: int,
          binary: bool = True, group_columns: tuple = ()) -> _Series:
    """Read and check a file once per (file version, columns, start); ``stamp`` is (mtime, size).

    ``binary=False`` accepts any finite outcome (the quantile game checks its range);
    ``group_columns`` are label columns coded by their sorted distinct values."""
    df = _read(Path(path), label, column)
    available = [str(c) for c in df.columns]
    for name in (column, *context_columns, *group_columns):
        if name not in available:
            close = difflib.get_close_matches(name, available, n=1, cutoff=0.5)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise ValueError(
                f"replay: file {label!r} has no column {name!r} (asked for every row).{hint} "
                f"Available columns: {', '.join(map(repr, available)) or 'none'}"
            )
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
    y = _numeric(df[column].iloc[start:], label, column, start)
    bad = np.flatnonzero((y != 0.0) & (y != 1.0)) if binary else np.zeros(0, int)
    if bad.size:
        i = int(bad[0])
        raise ValueError(
            f"replay: file {label!r}, column {column!r}, row {start + i} (0-based, header not counted): "
            f"value {y[i]:g} is not 0 or 1, and the binary game needs outcomes in {{0, 1}}; "
            "recode the column (e.g. 1 if the event happened, else 0)"
        )
    x = (
        np.column_stack([_numeric(df[c].iloc[start:], label, c, start) for c in context_columns])
        if context_columns
        else np.zeros((y.size, 0))
    )
    y.flags.writeable = False
    x.flags.writeable = False
    if not group_columns:
        return _Series(y, x)
    codes, levels = _group_codes(df.iloc[start:], label, group_columns, start)
    return _Series(y, x, codes, levels)


def _group_codes(df: pd.DataFrame, label: str, group_columns: tuple, start: int) -> tuple[np.ndarray, tuple]:
    """Integer codes of label columns (sorted distinct labels); a missing label names its row."""
    codes, levels = [], []
    for c in group_columns:
        values = df[c]
        missing = np.flatnonzero(values.isna().to_numpy())
        if missing.size:
            raise ValueError(
                f"replay: file {label!r}, column {c!r}, row {start + int(missing[0])} (0-based, header not counted): "
                "the group label is missing; fill it or drop that row"
            )
        uniq = list(pd.unique(values))
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
    Perdomo & Recht, §2 (guarantees for any outcome sequence); SPEC §5.
    """

    name = "replay"
    games = ("binary",)
    adaptive = False

    def __init__(self, path: str | os.PathLike, column: str, context_columns: Iterable[str] = (), start: int = 0):
        if not isinstance(path, (str, os.PathLike)) or not os.fspath(path):
            raise ValueError(f"{self.name}: path={path!r} is not a file path; give one, e.g. path: data/rain.csv")
        self.path = os.fspath(path)
        self.column, self.context_columns = _check_columns(self.name, column, context_columns)
        self.start = _check_count(self.name, "start", start, 0, minimum=0)

    @property
    def context_dim(self) -> int:
        return len(self.context_columns)

    @property
    def length(self) -> int:
        """Number of rounds the series can play (rows from ``start`` on); reads the file once."""
        return int(self._series().y.size)

    def _file(self) -> AbstractContextManager[Path]:
        """A context manager yielding the file's path on disk."""
        return _given(Path(self.path).expanduser())

    def _series(self) -> _Series:
        series = getattr(self, "_cache", None)
        if series is None:
            with self._file() as path:
                stat = path.stat() if path.is_file() else None
                stamp = (stat.st_mtime_ns, stat.st_size) if stat else (None, None)
                series = _load(str(path), stamp, self.path, self.column, self.context_columns, self.start)
            self._cache = series
        return series

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
            return EMPTY_CONTEXT
        return self._series().x[self._row(t)].copy()

    def respond(self, t: int, x: Context, forecast: Forecast) -> float:
        return float(self._series().y[self._row(t)])


@contextmanager
def _given(path: Path) -> Iterator[Path]:
    yield path


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
    Perdomo & Recht, §2 and §8 (calibration on a real sequence); SPEC §5 and §10.
    """

    name = "seattle_rain"
    games = ("binary",)
    adaptive = False

    #: Shown in messages; the file is found with importlib.resources (works when installed).
    path = "adversaries/data/seattle_weather.csv"
    column = "rain_tomorrow"

    def __init__(self, context_columns: Iterable[str] = (), start: int = 0) -> None:
        _, ctx = _check_columns(self.name, self.column, context_columns)
        for c in ctx:
            if c not in SEATTLE_CONTEXTS:
                close = difflib.get_close_matches(c, SEATTLE_CONTEXTS, n=1, cutoff=0.5)
                hint = f" Did you mean {close[0]!r}?" if close else ""
                raise ValueError(
                    f"{self.name}: context column {c!r} is not available.{hint} "
                    f"Choose from {', '.join(SEATTLE_CONTEXTS)}"
                )
        self.context_columns = ctx
        self.start = _check_count(self.name, "start", start, 0, minimum=0)

    def _file(self) -> AbstractContextManager[Path]:
        return resources.as_file(resources.files("adversaries").joinpath("data/seattle_weather.csv"))
