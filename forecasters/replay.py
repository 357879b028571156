"""Replayed forecasts: a published forecast stream (a column of a CSV or Parquet file) as a forecaster.

``replay`` announces, in round t, the forecast recorded for that round: a probability in the
binary game, a q-quantile of the outcome in the quantile game (the game's level q). It plays
against ``nature=replay`` on the outcome column of the same file (rows aligned by position), or
of another file whose rows are matched by a key column (``key``, ``outcomes``). The file is read
and every forecast checked when the command checks its matchups (``length``), so that a missing or
out-of-range forecast stops it with one line naming its row and value before any matchup runs. With
``on_missing: skip`` the rows with a missing value are dropped instead, by the forecast replay and by
``nature=replay`` alike (the same rows of the same file), so that every forecaster meets the same outcomes.

References
----------
Perdomo & Recht, §2 (any forecast sequence is judged on the same outcomes); Choe & Ramdas,
"Comparing sequential forecasters" (forecast streams compared on one outcome sequence).
"""

from __future__ import annotations

import os

import numpy as np

from adversaries.replay import check_on_missing, read_keys, read_series
from arena.protocols import Context, Forecaster, ProtocolError
from arena.registry import register
from arena.validators import check_count

#: The kinds of forecast a column can hold, and the game each plays.
KINDS = {"probability": "binary", "quantile": "quantile"}


def _check_path(who: str, name: str, path) -> str:
    if not isinstance(path, (str, os.PathLike)) or not os.fspath(path):
        raise ValueError(f"{who}: {name}={path!r} is not a file path; give one, e.g. {name}: forecasts.csv")
    return os.fspath(path)


@register
class ForecastReplay(Forecaster):
    """The forecasts recorded in a column of a CSV or Parquet file, one row per round.

    Round t announces row ``start + t - 1`` (rows are counted from 0, header excluded), or, with
    ``key``, the row of the forecast file whose ``key`` equals the key of row ``outcomes_start + t - 1``
    of the ``outcomes`` file (the file the nature replays). The forecaster never reads an outcome.

    Parameters
    ----------
    path : str
        The forecast file (``.csv``, ``.tsv``, ``.txt``, also compressed, ``.parquet``, ``.pq``; ``pkg:`` for a
        shipped file).
    column : str
        The forecast column: probabilities in [0, 1] for the binary game, numbers (q-quantiles of
        the outcome, q the quantile game's level) for the quantile game.
    start : int, default 0
        First row (position alignment).
    key : str or None, default None
        A column present in both files; rows are matched by its value (each key at most once in the
        forecast file, every key of the outcomes file present).
    outcomes : str or None, default None
        With ``key``: the file the nature replays. outcomes_start : int, its first row.
    kind : str, default "probability"
        ``probability`` (the binary game; every value must lie in [0, 1]) or ``quantile`` (the quantile game).
    on_missing : {"error", "skip"}, default "error"
        ``error``: a missing forecast stops the command with one line naming its row. ``skip``: the rows with
        a missing value in any of ``missing_columns`` (default: every column of the file) are not played;
        the nature (``replay`` on the same file, with the same settings) skips the same rows, which the
        arena checks (``skipped_rows``). Position alignment only. An out-of-range forecast is always refused.
    missing_columns : list of str or None, default None
        With ``on_missing: skip``: the columns whose missing values drop a row (None: every column).

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "f.csv")
    >>> _ = open(path, "w").write("y,p\\n1,0.7\\n0,0.2\\n1,0.9\\n")
    >>> f = ForecastReplay(path, column="p"); f.reset(None)
    >>> f.predict(None), f.update(None, 0.7, 1.0), f.predict(None)
    (0.7, None, 0.2)
    >>> _ = open(path, "w").write("y,p\\n1,0.7\\n0,\\n")
    >>> ForecastReplay(path, column="p").length  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: replay: file '...', column 'p', row 1 (0-based, header not counted; line 3 of the file): the value ...
    """

    name = "replay"
    games = ("binary",)  # an instance plays the game of its kind (kind: quantile, the quantile game)

    def __init__(
        self,
        path: str | os.PathLike,
        column: str,
        start: int = 0,
        key: str | None = None,
        outcomes: str | os.PathLike | None = None,
        outcomes_start: int = 0,
        kind: str = "probability",
        on_missing: str = "error",
        missing_columns: list[str] | None = None,
    ):
        self.path = _check_path(self.name, "path", path)
        if not isinstance(column, str) or not column:
            raise ValueError(f"{self.name}: column={column!r} is not a column name; give one, e.g. column: p")
        self.column = column
        self.start = check_count(self.name, "start", start, 0, minimum=0)
        self.outcomes_start = check_count(self.name, "outcomes_start", outcomes_start, 0, minimum=0)
        if (key is None) != (outcomes is None):
            raise ValueError(
                f"{self.name}: key={key!r}, outcomes={outcomes!r}: give both (rows matched by the key column of the "
                "outcomes file) or neither (rows matched by position)"
            )
        self.key = key
        self.outcomes = None if outcomes is None else _check_path(self.name, "outcomes", outcomes)
        if kind not in KINDS:
            raise ValueError(
                f"{self.name}: kind={kind!r} is not one of {', '.join(KINDS)}: probability (the binary game) or "
                "quantile (the quantile game, q-quantile forecasts at its level q)"
            )
        self.kind = kind
        self.games = (KINDS[kind],)  # type: ignore[misc,assignment]  # an instance plays its kind's game
        self._missing = check_on_missing(self.name, on_missing, missing_columns)
        if self._missing is not None and key is not None:
            raise ValueError(
                f"{self.name}: on_missing: skip drops rows by position; with key alignment drop the rows "
                f"from the outcomes file {self.outcomes!r} instead (nature=replay ... on_missing: skip)"
            )
        self.on_missing = on_missing
        self.missing_columns = None if missing_columns is None else list(missing_columns)

    @property
    def _values(self) -> np.ndarray:
        """The forecasts of the rounds, read and checked once (the file is read when first needed: when the
        command checks its matchups, through ``length``, before anything runs)."""
        values = self.__dict__.get("_cache")
        if values is None:
            values = self._read()
            if self.kind == "probability":
                self._check_range(values, 0.0, 1.0, "the binary game")
            self._cache = values
        return values

    @property
    def _series(self):
        """The forecast column as read (position alignment): its values and file rows, once per file version."""
        return read_series(self.path, self.column, (), self.start, binary=False, missing=self._missing)

    @property
    def skipped_rows(self) -> tuple[int, ...]:  # type: ignore[override]
        """The file rows from ``start`` on that are not played (``on_missing: skip``)."""
        return self._series.skipped if self._missing is not None else ()

    def _read(self) -> np.ndarray:
        """The forecasts of the rounds, in order (position or key alignment), every one a finite number."""
        values = self._series.y
        if self.key is None:
            return values
        rows: dict = {}
        for i, k in enumerate(read_keys(self.path, self.key, self.start)):
            if k in rows:
                raise ValueError(
                    f"{self.name}: file {self.path!r}, key column {self.key!r}: the key {k!r} is on rows "
                    f"{self.start + rows[k]} and {self.start + i}; give each key one forecast"
                )
            rows[k] = i
        order = []
        for i, k in enumerate(read_keys(str(self.outcomes), self.key, self.outcomes_start)):
            if k not in rows:
                raise ValueError(
                    f"{self.name}: file {self.outcomes!r}, row {self.outcomes_start + i}: key {k!r} has no forecast "
                    f"in file {self.path!r} (column {self.key!r}); add it or start after that row"
                )
            order.append(rows[k])
        out = values[np.asarray(order, dtype=np.int64)]
        out.flags.writeable = False
        return out

    @property
    def length(self) -> int:
        """The number of rounds with a forecast."""
        return int(self._values.size)

    def _check_range(self, values: np.ndarray, low: float, high: float, where: str) -> None:
        """Refuse a forecast outside the forecast space [low, high], naming its row and value."""
        bad = np.flatnonzero((values < low) | (values > high))
        if bad.size:
            i = int(bad[0])
            raise ValueError(
                f"{self.name}: {self._row_name(i)}: forecast {float(values[i])!r} is outside the forecast "
                f"space [{low:g}, {high:g}] of {where}; fix that row"
            )

    def _row_name(self, i: int) -> str:
        where = f"file {self.path!r}, column {self.column!r}"
        if self.key is None:
            return f"{where}, row {int(self._series.rows[i])}"
        return f"{where}, the forecast of row {self.outcomes_start + i} of file {self.outcomes!r}"

    def reset(self, rng):
        super().reset(rng)
        game = getattr(self, "game", None)
        if game is not None:  # the quantile game's range is its own
            self._check_range(self._values, game.forecast_low, game.forecast_high, f"the {game.name} game")
        self._t = 0

    def predict(self, x: Context) -> float:
        if self._t >= self._values.size:
            raise ProtocolError(
                f"{self.name}: round {self._t + 1} has no forecast: {self._row_name(self._values.size - 1)} is the "
                f"last; play at most T={self._values.size} rounds"
            )
        return float(self._values[self._t])

    def update(self, x, p, y):
        self._t += 1

    def play_oblivious(self, X, y, u):
        """Every round at once: the recorded forecasts of the rounds played."""
        n = len(y)
        if self._t + n > self._values.size:
            return None  # the round loop names the first round without a forecast
        p = np.array(self._values[self._t : self._t + n], dtype=float)
        self._t += n
        return p, p, p

    def clone(self) -> ForecastReplay:
        """A copy sharing the (read-only) forecasts."""
        twin = object.__new__(type(self))
        twin.__dict__.update(self.__dict__)
        return twin

    def __deepcopy__(self, memo) -> ForecastReplay:
        return self.clone()
