"""Fuzz tests of the two input boundaries: the replay readers and the config layer.

Readers (``replay``, ``seattle_rain``, ``quantile_replay``): a generated CSV or Parquet file
either loads, with exactly the outcomes and contexts it holds, or fails with a ValueError
or OSError that names the file; where one value is at fault the message names its column,
its row (0-based, header not counted, as ``start`` counts) and, for a CSV, the line an
editor shows, and that value really is the first bad one. A file whose every value is fine
must load. (tests/test_adversaries.py fuzzes raw CSV text against pandas itself.)

Config (``arena.config.validate`` and the ``arena`` command): generated overrides either
validate or raise a ConfigError with a one-line message; the command then exits with
status 2, one ``arena: error:`` line, no traceback, and writes nothing.

References
----------
The replay natures (adversaries/replay.py); loud errors at the boundaries.
"""

from __future__ import annotations

import itertools
import math
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from adversaries import Replay, SeattleRain
from adversaries.quantile import QuantileReplay
from arena.games import QuantileGame
from arena.protocols import Forecast

# ------------------------------------------------------------------------------ readers

YMIN, YMAX = -50.0, 50.0  # the quantile game's range in these tests
NAN = math.nan


@dataclass(frozen=True)
class Cell:
    """One generated value and what the reader must make of it."""

    text: str  # as written in a CSV
    kind: str  # "num" (a finite number), "missing", "inf" (not finite), "word" (not a number)
    value: float = NAN


NUM_CELLS = st.one_of(
    st.sampled_from([0, 1]).map(lambda v: Cell(str(v), "num", float(v))),
    st.integers(-60, 60).map(lambda v: Cell(str(v), "num", float(v))),
    st.integers(-(10**30), 10**30).map(lambda v: Cell(str(v), "num", float(v))),
    st.floats(-1e6, 1e6, allow_nan=False, allow_subnormal=False).map(lambda v: Cell(repr(v), "num", v)),
)
BAD_CELLS = st.one_of(
    st.sampled_from(["", "nan", "NA"]).map(lambda t: Cell(t, "missing")),
    st.sampled_from(["inf", "-inf", "1e400"]).map(lambda t: Cell(t, "inf", math.inf)),
    st.sampled_from(["x", "abc", "é"]).map(lambda t: Cell(t, "word")),
)
BITS = st.sampled_from([0, 1]).map(lambda v: Cell(str(v), "num", float(v)))
LABELS = st.sampled_from(["a", "b", "7", "2.5"]).map(lambda t: Cell(t, "num"))


@dataclass
class Table:
    """A generated table: named columns of cells, and per data row the line it sits on (CSV)."""

    columns: dict[str, list[Cell]]
    lines: list[int | None]  # None for Parquet: no lines

    @property
    def n(self) -> int:
        return len(self.lines)


MESSAGE = re.compile(
    r"column '(?P<column>[^']+)', row (?P<row>\d+) \(0-based, header not counted(?:; line (?P<line>\d+) of the file)?\)"
)


def _fine(cell: Cell, binary: bool) -> bool:
    return cell.kind == "num" and (not binary or cell.value in (0.0, 1.0))


def _first(cells: list[Cell], start: int, ok) -> int | None:
    return next((i for i in range(start, len(cells)) if not ok(cells[i])), None)


def _expected_error(table: Table, spec: dict, binary: bool, game: QuantileGame | None) -> tuple[str, int] | None:
    """The (column, row) the reader must name first, or None when every value is fine.

    Order of the checks: the outcome column's values, then (binary game) its range, each
    context column, each group column, then (quantile game) the outcome range."""
    start = spec["start"]
    y = table.columns[spec["column"]]
    checks = [(spec["column"], lambda c: c.kind == "num")]
    if binary:
        checks.append((spec["column"], lambda c: c.value in (0.0, 1.0)))
    checks += [(c, lambda c: c.kind == "num") for c in spec["context_columns"]]
    checks += [(c, lambda c: c.kind != "missing") for c in spec.get("group_columns", ())]
    if game is not None:
        checks.append((spec["column"], lambda c: game.ymin < c.value <= game.ymax))
    for column, ok in checks:
        i = _first(table.columns[column], start, ok)
        if i is not None:
            return column, i
    assert len(y) > start
    return None


def _load(make, path: Path, spec: dict, game: QuantileGame | None):
    nature = make(path, **spec)
    if game is not None:
        nature.game = game
    nature.reset(np.random.default_rng(0))
    return nature


def _check_load(make, path: Path, table: Table, spec: dict, binary: bool, game: QuantileGame | None) -> None:
    """The property: load or name the first bad value (file, column, row, line)."""
    start = spec["start"]
    if table.n <= start:
        with pytest.raises(ValueError, match=r"no rows|empty") as info:
            _load(make, path, spec, game)
        assert repr(str(path)) in str(info.value)
        return
    expected = _expected_error(table, spec, binary, game)
    try:
        nature = _load(make, path, spec, game)
    except ValueError as err:
        message = str(err)
        assert "\n" not in message and repr(str(path)) in message, message
        assert expected is not None, f"a file of good values was refused: {message}"
        reason = re.search(r"not a number|missing|not finite|not 0 or 1|outside the quantile|not a single", message)
        event(f"refused: {reason[0] if reason else message}")
        where = MESSAGE.search(message)
        assert where, f"the message does not name the column and row: {message}"
        column, row = where["column"], int(where["row"])
        assert (column, row) == expected, message
        line = table.lines[row]
        assert where["line"] == (None if line is None else str(line)), message
        return
    assert expected is None, f"loaded a file with a bad value at {expected}"
    event("loaded")
    ys = [nature.respond(t, nature.context(t), Forecast.point(0.5)) for t in range(1, nature.length + 1)]
    assert nature.length == table.n - start
    np.testing.assert_allclose(ys, [c.value for c in table.columns[spec["column"]][start:]], rtol=1e-12)
    if spec["context_columns"]:
        xs = np.array([nature.context(t)[: len(spec["context_columns"])] for t in range(1, nature.length + 1)])
        want = [[c.value for c in table.columns[k][start:]] for k in spec["context_columns"]]
        np.testing.assert_allclose(xs, np.array(want).T, rtol=1e-12)


@st.composite
def csv_tables(draw, binary: bool):
    """Columns y (outcome), x (context), g (group labels) in a random order, rows with blank
    lines between them; returns the file's text and the table."""
    names = draw(st.permutations(["y", "x", "g"]))
    n = draw(st.integers(0, 8))
    y_cells = BITS if binary and draw(st.booleans()) else NUM_CELLS  # often a loadable binary series
    columns = {
        "y": draw(st.lists(y_cells, min_size=n, max_size=n)),
        "x": draw(st.lists(NUM_CELLS, min_size=n, max_size=n)),
        "g": draw(st.lists(LABELS, min_size=n, max_size=n)),
    }
    # a few bad values, so that many files load and the checks run deep into the others
    for _ in range(draw(st.integers(0, 2)) if n else 0):
        name, row = draw(st.sampled_from(names)), draw(st.integers(0, n - 1))
        columns[name][row] = Cell("", "missing") if name == "g" else draw(BAD_CELLS)
    blanks = draw(st.lists(st.sampled_from(["", " "]), max_size=2))
    text, line = [], 0
    for row in [list(names), *([columns[c][i].text for c in names] for i in range(n))]:
        for b in blanks if line > 0 and draw(st.booleans()) else []:
            text.append(b)
            line += 1
        text.append(",".join(row))
        line += 1
    lines, seen = [], 0
    for i, t in enumerate(text):
        if t.strip():
            seen += 1
            if seen > 1:
                lines.append(i + 1)
    return "\n".join(text) + "\n", Table(columns, lines)


def _spec(draw, quantile: bool) -> dict:
    spec = {"column": "y", "context_columns": draw(st.sampled_from([[], ["x"]])), "start": draw(st.integers(0, 3))}
    if quantile:
        spec["group_columns"] = draw(st.sampled_from([[], ["g"]]))
    return spec


_counter = itertools.count()


def _fresh(directory: Path, suffix: str) -> Path:
    # a new name per example: the readers cache per (file, mtime, size), and a rewrite within one
    # clock tick with the same size would hit the cache
    return directory / f"fuzz{next(_counter)}{suffix}"


@pytest.fixture(scope="module")
def workdir():
    with tempfile.TemporaryDirectory() as d:
        yield Path(d)


@settings(max_examples=100)
@given(data=st.data(), quantile=st.booleans())
def test_fuzzed_csv_loads_or_names_the_first_bad_value(workdir, data, quantile):
    text, table = data.draw(csv_tables(binary=not quantile))
    spec = _spec(data.draw, quantile)
    path = _fresh(workdir, data.draw(st.sampled_from([".csv", ".txt"])))
    path.write_text(text, encoding="utf-8")
    make = QuantileReplay if quantile else Replay
    game = QuantileGame(q=0.5, ymin=YMIN, ymax=YMAX) if quantile else None
    _check_load(make, path, table, spec, binary=not quantile, game=game)


@settings(max_examples=60)
@given(
    data=st.data(),
    damage=st.sampled_from(["long_row", "bad_byte", "header_only", "empty", "only_blank"]),
)
def test_fuzzed_broken_csv_names_the_file_and_line(workdir, data, damage):
    text, table = data.draw(csv_tables(binary=True))
    path = _fresh(workdir, ".csv")
    lines = text.splitlines()
    header = next(i for i, t in enumerate(lines) if t.strip())
    if damage in ("long_row", "bad_byte") and table.n == 0:
        damage = "header_only"
    if damage == "long_row":
        row = data.draw(st.integers(0, table.n - 1))
        line = table.lines[row]
        lines[line - 1] += ",1" * data.draw(st.integers(1, 3))
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        pattern = (
            rf"row {row} \(0-based, header not counted; line {line} of the file\) has \d+ fields, but the header has 3"
        )
    elif damage == "bad_byte":
        row = data.draw(st.integers(0, table.n - 1))
        line = table.lines[row]
        raw = [t.encode() for t in lines]
        raw[line - 1] += data.draw(st.sampled_from([b"\xff", b"\xc3", b"\x80\x80"]))
        path.write_bytes(b"\n".join(raw) + b"\n")
        pattern = rf"is not UTF-8 text: byte 0x[0-9a-f]{{2}} on line {line} is not UTF-8; save the file as UTF-8"
    elif damage == "header_only":
        path.write_text("\n".join(lines[: header + 1]) + "\n", encoding="utf-8")
        pattern = r"is empty: it has a header but no rows, so column 'y' has no row 0"
    else:
        path.write_text("" if damage == "empty" else "\n \n", encoding="utf-8")
        pattern = r"is empty \(no header, no rows, so no column 'y' at row 0\)"
    with pytest.raises(ValueError, match=re.escape(repr(str(path))) + ".*" + pattern) as info:
        Replay(path, column="y").reset(np.random.default_rng(0))
    assert "\n" not in str(info.value)


# Parquet: typed columns. Each strategy gives (values, dtype or None, cells).
def _parquet_column(kind: str, n: int, draw, labels: bool = False):
    if kind == "float":
        floats = st.floats(allow_subnormal=False) | st.floats(-60, 60) | st.sampled_from([0.0, 1.0])
        vals = draw(st.lists(floats, min_size=n, max_size=n))
        cells = [
            Cell("", "missing") if math.isnan(v) else Cell("", "inf", v) if math.isinf(v) else Cell("", "num", v)
            for v in vals
        ]
        return vals, "float64", cells
    if kind == "int":
        ints = st.integers(-(2**62), 2**62) | st.integers(-60, 60) | st.sampled_from([0, 1])
        vals = draw(st.lists(ints, min_size=n, max_size=n))
        return vals, "int64", [Cell("", "num", float(v)) for v in vals]
    if kind == "bool":
        vals = draw(st.lists(st.booleans(), min_size=n, max_size=n))
        return vals, "bool", [Cell("", "num", float(v)) for v in vals]
    if kind == "nullable":
        vals = draw(st.lists(st.none() | st.sampled_from([0, 1, -3, 99]), min_size=n, max_size=n))
        return vals, "Int64", [Cell("", "missing") if v is None else Cell("", "num", float(v)) for v in vals]
    if kind == "category":
        vals = draw(st.lists(st.sampled_from([0, 1, 5]), min_size=n, max_size=n))
        cells = [Cell("", "num", float(v)) for v in vals]
        return vals, "category", cells
    if kind == "string":
        pool = {
            "0": Cell("", "num", 0.0),
            "1": Cell("", "num", 1.0),
            "2.5": Cell("", "num", 2.5),
            "1e30": Cell("", "num", 1e30),
            "x": Cell("", "word"),
            "inf": Cell("", "inf", math.inf),
            None: None,
        }
        vals = draw(st.lists(st.sampled_from(list(pool)), min_size=n, max_size=n))
        cells = [Cell("", "missing") if v is None else pool[v] for v in vals]
        if labels:  # as group labels every text is fine
            cells = [Cell("", "missing") if v is None else Cell("", "num") for v in vals]
        return vals, "object", cells
    if kind == "list":
        vals = draw(st.lists(st.lists(st.integers(0, 1), max_size=2), min_size=n, max_size=n))
        return vals, None, [Cell("", "word") for _ in vals]
    if kind == "datetime":
        vals = pd.date_range("2020-01-01", periods=n, freq="D")
        return vals, None, [Cell("", "word") for _ in range(n)]
    raise AssertionError(kind)


PARQUET_KINDS = ["float", "int", "bool", "nullable", "category", "string", "list", "datetime"]


@settings(max_examples=70)
@given(data=st.data(), quantile=st.booleans())
def test_fuzzed_parquet_loads_or_names_the_first_bad_value(workdir, data, quantile):
    n = data.draw(st.integers(0, 6))
    frame, columns = {}, {}
    for name in ("y", "x", "g"):
        kinds = ["string", "int", "list"] if name == "g" else PARQUET_KINDS + ["float", "int", "int", "bool"]
        kind = data.draw(st.sampled_from(kinds))
        vals, dtype, cells = _parquet_column(kind, n, data.draw, labels=name == "g")
        if name == "g" and kind == "list":
            cells = [Cell("", "missing") for _ in cells]  # a list is not a label: the reader names the first one
        frame[name] = pd.Series(vals, dtype=dtype) if dtype else pd.Series(vals)
        columns[name] = cells
    path = _fresh(workdir, data.draw(st.sampled_from([".parquet", ".pq"])))
    pd.DataFrame(frame).to_parquet(path)
    spec = _spec(data.draw, quantile)
    make = QuantileReplay if quantile else Replay
    game = QuantileGame(q=0.5, ymin=YMIN, ymax=YMAX) if quantile else None
    _check_load(make, path, Table(columns, [None] * n), spec, binary=not quantile, game=game)


@settings(max_examples=30)
@given(raw=st.binary(max_size=64), suffix=st.sampled_from([".parquet", ".csv.gz", ".csv"]))
def test_fuzzed_bytes_never_escape_as_another_error(workdir, raw, suffix):
    path = _fresh(workdir, suffix)
    path.write_bytes(raw)
    for nature in (Replay(path, column="y"), QuantileReplay(path, column="y")):
        try:
            nature.reset(np.random.default_rng(0))
        except (ValueError, OSError) as err:
            assert repr(str(path)) in str(err) and "\n" not in str(err), str(err)


def test_a_missing_or_unreadable_file_is_an_os_error_naming_it(workdir, monkeypatch):
    with pytest.raises(FileNotFoundError, match=r"absent\.parquet' not found .*column 'y'"):
        _ = QuantileReplay(workdir / "absent.parquet", column="y").length
    path = _fresh(workdir, ".csv")
    path.write_text("y\n1\n")

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(pd, "read_csv", refuse)  # chmod does not stop root, who may run the tests
    with pytest.raises(
        PermissionError,
        match=r"replay: cannot open file .*fuzz\d+\.csv' \(looking for column 'y'\): "
        r"Permission denied$",
    ):
        _ = Replay(path, column="y").length


@settings(max_examples=25)
@given(
    start=st.integers(0, 2000),
    contexts=st.lists(
        st.sampled_from(["precipitation", "temp_max", "temp_min", "wind", "tmp_max", "rain"]), max_size=3
    ),
)
def test_fuzzed_seattle_rain_parameters(start, contexts):
    try:
        nature = SeattleRain(context_columns=contexts, start=start)
        n = nature.length
    except ValueError as err:
        message = str(err)
        assert "\n" not in message
        assert (
            len(set(contexts)) < len(contexts)
            or not set(contexts) <= {"precipitation", "temp_max", "temp_min", "wind"}
            or start >= 1460
        ), message
        return
    assert n == 1460 - start and nature.context_dim == len(contexts)


# ------------------------------------------------------------------------------- config

ROOT = Path(__file__).resolve().parents[1]
CONF = ROOT / "conf"


def _options(group: str) -> dict[str, list[str]]:
    """option -> its parameter names, read from conf/<group>/*.yaml."""
    import yaml

    out = {}
    for path in sorted((CONF / group).glob("*.yaml")):
        node = yaml.safe_load(path.read_text()) or {}
        out[path.stem] = sorted(k for k in node if not k.startswith("_") and k != "defaults")
    return out


def _matchups() -> dict[str, tuple[list[str], list[str]]]:
    """game -> (forecasters, natures) that play it and have a config."""
    from arena.registry import FORECASTERS, NATURES, load_plugins

    load_plugins()
    games = _options("game")
    forecasters, natures = _options("forecaster"), _options("nature")
    return {
        g: (
            sorted(f for f in forecasters if f in FORECASTERS and g in FORECASTERS[f].games),
            sorted(n for n in natures if n in NATURES and g in NATURES[n].games),
        )
        for g in games
    }


MATCHUPS = _matchups()
PARAMS = {
    "forecaster": _options("forecaster"),
    "nature": _options("nature"),
    "game": _options("game"),
    "referee": ["M", "ece_bins", "oi_features", "n_checkpoints"],
}
REPLAY_CSV = ROOT / "adversaries" / "data" / "seattle_weather.csv"


def _float(x: float) -> str:
    return repr(x)  # nan, inf, -inf, 1e+300: all Hydra floats


# Override values as a user would type them: numbers of every size and sign, nan/inf, bools,
# null, strings, lists, dicts, and a few that do not parse or resolve.
VALUES = st.one_of(
    st.sampled_from(["0", "-1", "1", "2", "3", "0.5", "1.5", "2.0", "-0.5", "1e400", "nan", "inf", "-inf"]),
    st.integers(-(10**20), 10**20).map(str),
    st.floats(allow_subnormal=False).map(_float),
    st.sampled_from(
        [
            "true",
            "false",
            "null",
            "''",
            "abc",
            "[]",
            "[1,2]",
            "[nan]",
            "[[1]]",
            "{a:1}",
            "'1'",
            "[a,b]",
            "${T}",
            "${oops}",
            "[",
            "'",
            "a b",
            "???",
            "fs",
            "push",
            "sqrt",
            "${now:%Y}",
        ]
    ),
    st.text(alphabet="abcxyz_019.", min_size=1, max_size=6),
)
BROKEN = st.sampled_from(
    [
        "T==",
        "=1",
        "T",
        "forecaster=",
        "nature=''",
        "nope=1",
        "forecaster.nope=1",
        "+forecaster.nope=1",
        "~T",
        "T=1,2",
        "T=range(1,3)",
        "seed=${oops}",
        "game.q=[",
        "referee.M=abc",
        "+nope.x=1",
    ]
)


def _misspell(name: str, draw) -> str:
    i = draw(st.integers(0, len(name) - 1))
    return name[:i] + draw(st.sampled_from("aeiou0123_")) + name[i + 1 :]


@st.composite
def config_overrides(draw) -> tuple[list[str], str | None]:
    """A matchup's overrides with one or two fuzzed entries; and the misspelled option, if one is."""
    game = draw(st.sampled_from(sorted(g for g, (f, n) in MATCHUPS.items() if f and n)))
    forecasters, natures = MATCHUPS[game]
    chosen = {"game": game, "forecaster": draw(st.sampled_from(forecasters)), "nature": draw(st.sampled_from(natures))}
    args = ["tournament=none", *(f"{k}={v}" for k, v in chosen.items()), "T=20"]
    if chosen["nature"] == "replay":
        args += [f"nature.path={REPLAY_CSV}", "nature.column=rain_tomorrow"]
    misspelled, entries = None, draw(st.integers(1, 2))
    for _ in range(entries):
        what = draw(
            st.sampled_from(
                ["forecaster", "nature", "game", "forecaster", "nature", "T", "seed", "referee", "misspell", "broken"]
            )
        )
        if what in ("T", "seed"):
            args.append(f"{what}={draw(VALUES)}")
        elif what == "broken":
            args.append(draw(BROKEN))
        elif what == "misspell":
            group = draw(st.sampled_from(["forecaster", "nature", "game"]))
            name = _misspell(chosen[group], draw)
            if name not in PARAMS[group] and entries == 1:  # with a second entry, that one may fail first
                misspelled = f"unknown {group} {name!r}"
            args = [a for a in args if not a.startswith(f"{group}=")] + [f"{group}={name}"]
        else:
            names = PARAMS[what] if what == "referee" else PARAMS[what][chosen[what]]
            if names:
                args.append(f"{what}.{draw(st.sampled_from(names))}={draw(VALUES)}")
    return args, misspelled


def _one_clear_line(message: str) -> None:
    assert message and "\n" not in message and "Traceback" not in message, message


@settings(max_examples=25)
@given(case=config_overrides())
def test_fuzzed_overrides_validate_or_raise_one_config_error(case):
    from arena.config import validate
    from arena.errors import ConfigError

    args, misspelled = case
    try:
        assert validate(args) == 1
    except ConfigError as err:
        _one_clear_line(str(err))
        event(f"ConfigError: {str(err).split(':')[0][:30]}")
        if misspelled:
            assert misspelled in str(err)
        return
    assert misspelled is None, f"{misspelled} was accepted"
    event("valid")


def test_misspelled_options_suggest_the_closest():
    from arena.config import validate
    from arena.errors import ConfigError

    for group, wrong, right in [
        ("forecaster", "k28", "k29"),
        ("nature", "iid_bernouli", "iid_bernoulli"),
        ("game", "binray", "binary"),
    ]:
        with pytest.raises(ConfigError, match=rf"unknown {group} '{wrong}'\. Did you mean '{right}'\?") as info:
            validate(["tournament=none", f"{group}={wrong}"])
        _one_clear_line(str(info.value))


# The issue's out-of-range values, each with a generated bad value: (overrides, text the error names).
QUANTILE = ["game=quantile", "forecaster=marginal_quantile_df"]
EXPERTS = ["game=experts", "forecaster=hedge", "nature=expert_constants"]
BAD_RUNS = st.one_of(
    st.integers(-(10**6), 0).map(lambda v: (["forecaster=k29", f"T={v}"], f"T={v}")),
    st.sampled_from(["0.0", "1.0", "1.5", "-0.1", "nan"]).map(
        lambda v: ([*QUANTILE, "nature=iid_normal", f"game.q={v}"], "q=")
    ),
    st.sampled_from(["0", "-1", "2.5", "nan", "inf"]).map(
        lambda v: (["game=experts", "forecaster=linf_df", "nature=expert_constants", f"forecaster.lam={v}"], "lam=")
    ),
    st.integers(-5, 0).map(lambda v: (["forecaster=k29_rounded", f"forecaster.N={v}"], f"N={v}")),
    st.integers(-5, 0).map(lambda v: ([*EXPERTS, f"nature.N={v}"], f"N={v}")),
    st.sampled_from(["-1", "-0.5", "0"]).map(lambda v: ([*QUANTILE, "nature=lipschitz_cdf", f"nature.L={v}"], "L=")),
    st.text(alphabet="abxyz_", min_size=1, max_size=6).map(
        lambda v: (["forecaster=bit", "nature=replay", f"nature.path={v}.csv", "nature.column=y"], f"{v}.csv")
    ),
)


@settings(max_examples=3)
@given(case=BAD_RUNS)
def test_fuzzed_bad_runs_exit_2_with_one_line_and_write_nothing(case):
    import os
    import subprocess
    import sys

    overrides, needle = case
    arena = Path(sys.executable).parent / "arena"
    with tempfile.TemporaryDirectory() as cwd:
        root = Path(cwd) / "res"
        env = {**os.environ, "MPLBACKEND": "Agg", "HYDRA_FULL_ERROR": "0"}
        horizon = [] if any(o.startswith("T=") for o in overrides) else ["T=20"]
        proc = subprocess.run(
            [str(arena), *overrides, *horizon, f"results_root={root}"],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert proc.returncode == 2, (proc.returncode, proc.stderr)
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("arena: error: "), proc.stderr
        assert needle in lines[0] and "Traceback" not in proc.stderr + proc.stdout, proc.stderr
        assert not root.exists() and list(Path(cwd).iterdir()) == []  # no results, no Hydra outputs/


# Minimal forms of what the fuzzer found in the config layer: each must give one ConfigError line.
FOUND = {
    "parse_error": ["T=="],
    "empty_key": ["=1"],
    "unknown_interpolation": ["seed=${oops}"],
    "recursive_interpolation": ["T=${T}"],
    "unknown_key": ["nope=1"],
    "append_twice": ["+forecaster.nope=1", "+forecaster.nope=1"],
    "missing_mandatory": ["forecaster=bit", "nature=replay"],
    "mandatory_marker": ["forecaster.tol=???"],
    "sweep_without_m": ["forecaster=bit", "nature=anti_forecaster", "T=20", "T=1,2"],  # Hydra refused it later
    "null_horizon": ["forecaster=bit", "nature=anti_forecaster", "T=20", "T=null"],  # read before it was checked
}


@pytest.mark.parametrize("name", sorted(FOUND))
def test_found_config_cases_give_one_config_error_line(name):
    from arena.config import validate
    from arena.errors import ConfigError

    with pytest.raises(ConfigError) as info:
        validate(["tournament=none", *FOUND[name]])
    _one_clear_line(str(info.value))


# Constructor values the fuzzer found accepted, or failing with another error type (or hanging:
# expert_second_guessing with N=1e20 built an N-list in its constructor).
@pytest.mark.parametrize(
    ("name", "params", "pattern"),
    [
        ("bias_pusher", {"bins": 10**20}, r"bias_pusher: bins=100000000000000000000 is above 1000000"),
        ("expert_second_guessing", {"N": 10**20}, r"expert_second_guessing: N=\d+ is above 1000000"),
        ("expert_constants", {"outcomes": "abc"}, r"expert_constants: outcomes: unknown nature 'abc'"),
        (
            "expert_constants",
            {"outcomes": {"name": "iid_bernoulli", "params": {"nope": 1}}},
            r"expert_constants: outcomes=.*unexpected keyword argument 'nope'",
        ),
        ("expert_logistic", {"weights": 0}, r"expert_logistic: weights=0 is not a list of weight vectors"),
        ("iid_bernoulli", {"p": True}, r"iid_bernoulli: p=True is true/false, not a number"),
        ("iid_normal", {"scale": True}, r"iid_normal: scale=True is true/false, not a number"),
        ("logit_walk", {"bound": True}, r"logit_walk: bound=True is true/false, not a number"),
        (
            "replay",
            {"path": "a.csv", "column": "y", "context_columns": {"a": 1}},
            r"replay: context_columns=\{'a': 1\} is not a list of column names",
        ),
        ("quantile_replay", {"group_columns": "hour"}, r"quantile_replay: group_columns='hour' is not a list"),
        ("k29_rounded", {"N": True}, r"k29_rounded: N=True must be an integer >= 1"),
        ("k29_rounded", {"N": 10**20}, r"k29_rounded: N=100000000000000000000 is above 1000000"),
        ("k29_rounded", {"delta": "abc"}, r"k29_rounded: delta='abc' must be in \(0, 1\)"),
        ("constant", {"c": True}, r"constant: c=True is not a number"),
        ("constant", {"c": "abc"}, r"constant: c='abc' is not a number"),
        ("window_mean", {"window": True}, r"window_mean: window=True must be an integer >= 1"),
        ("window_mean", {"window": 10**20}, r"window_mean: window=100000000000000000000 is above 1000000000"),
        ("ogd", {"lr": "abc"}, r"ogd: lr='abc' is not a finite number"),
        ("ogd", {"lr": math.inf}, r"ogd: lr=inf is not a finite number"),
        ("ogd", {"M": True}, r"ogd: M=True is not a finite number"),
        ("ogd", {"intercept": "no"}, r"ogd: intercept='no' must be true or false"),
        ("ogd", {"clip": 0.5}, r"ogd: clip=0\.5 must be true or false"),
        ("hedge", {"horizon": math.inf}, r"hedge: horizon=inf must be an integer >= 1 .* or null"),
        ("hedge", {"horizon": -1}, r"hedge: horizon=-1 must be an integer >= 1"),
        ("dmm", {"features": 0}, r"dmm: features=0 is not a list of feature names"),
        ("kernel_df", {"kernel": 0}, r"kernel_df: kernel=0 is not a kernel spec .*give e\.g\. kernel: fs"),
        ("kernel_df", {"kernel": {"rff": 3}}, r"kernel_df: kernel=\{'rff': 3\} is not a kernel spec"),
        ("conditional_quantile_df", {"kernel": 0}, r"conditional_quantile_df: kernel=0 is not a kernel spec"),
        ("conditional_quantile_df", {"bins": 10**20}, r"conditional_quantile_df: bins=\d+ must be an integer in \[0, "),
    ],
    ids=lambda v: "-".join(f"{k}={v!r}"[:20] for k, v in v.items()) if isinstance(v, dict) else None,
)
def test_found_plugin_parameters_are_refused_by_name(name, params, pattern):
    from arena.registry import FORECASTERS, NATURES, make_forecaster, make_nature

    make = make_forecaster if name in FORECASTERS and name not in NATURES else make_nature  # replay: the nature
    with pytest.raises(ValueError, match=pattern) as info:
        make(name, **params)
    _one_clear_line(str(info.value))


def test_logistic_with_a_huge_norm_bound_resets():
    from adversaries import Logistic

    nature = Logistic(B=1e300)  # reset computed B**2 - 1 and overflowed
    nature.reset(np.random.default_rng(0))
    assert np.isfinite(nature.context(1)).all()


# What the hardening review found passing validation (then a traceback after the game, a Hydra warning
# with exit status 0, or a value silently coerced): each must fail validation with one line naming it.
ONE = ["tournament=none", "forecaster=bit", "nature=iid_bernoulli", "T=10"]
TOURNEY = ["tournament=bench", "tournament.T=[10]", "tournament.natures=[iid_bernoulli]"]
HARDENING = {
    "seed_2_64": ([*ONE, "seed=18446744073709551616"], "seed=18446744073709551616: the seed must be"),
    "seed_1e23": ([*ONE, "seed=1e23"], "seed=1e+23: the seed must be"),
    "tournament_seed": ([*TOURNEY, "tournament.seeds=[0,18446744073709551616]"], "tournament.seeds: seed="),
    "tournament_seed_float": ([*TOURNEY, "tournament.seeds=[1e23]"], "tournament.seeds: seed=1e+23"),
    "shards_0": ([*TOURNEY, "tournament.shards=0"], "tournament.shards=0: give a positive whole number"),
    "shards_negative": ([*TOURNEY, "tournament.shards=-1"], "tournament.shards=-1"),
    "shards_abc": ([*TOURNEY, "tournament.shards=abc"], "tournament.shards='abc'"),
    "no_forecasters": ([*TOURNEY, "tournament.forecasters=[]"], "tournament.forecasters=[]: give a non-empty list"),
    "twice": ([*TOURNEY, "tournament.forecasters=[k29,k29]"], "lists the same matchup twice (k29 vs iid_bernoulli"),
    "ece_bins_0": ([*ONE, "referee.ece_bins=0"], "referee.ece_bins=0: give a whole number from 1 to 1000000"),
    "ece_bins_huge": ([*ONE, "referee.ece_bins=1000000000000"], "referee.ece_bins=1000000000000"),
    "ece_bins_fraction": ([*ONE, "referee.ece_bins=1.5"], "referee.ece_bins=1.5"),
    "checkpoints_negative": ([*ONE, "referee.n_checkpoints=-1"], "referee.n_checkpoints=-1"),
    "oi_features_string": ([*ONE, "referee.oi_features=px"], "referee.oi_features='px': give a list"),
    "oi_features_p2": ([*ONE, "referee.oi_features=p2"], "referee.oi_features='p2': give a list"),
    "keep_trace_maybe": ([*ONE, "keep_trace=maybe"], "keep_trace='maybe': give true or false"),
    "keep_trace_quoted": ([*ONE, "keep_trace='false'"], "keep_trace='false': give true or false"),
    "report_string": ([*ONE, "report=yes"], "report='yes': give true or false"),
    "name_is_a_path": (["tournament=none", "forecaster=../nature/iid_bernoulli"], "not a path"),
    "results_root_empty": ([*ONE, "results_root="], "results_root='': give the folder"),
    "tournament_name_path": ([*ONE, "tournament_name=../../escaped"], "tournament_name='../../escaped'"),
    "parameter_typo": (
        [*ONE, "forecaster=k29", "forecaster.lr=0.1"],
        "has no parameter 'lr'. Its parameters: tol, fast",
    ),
    "parameter_typo_appended": (
        [*ONE, "forecaster=ogd", "+forecaster.lrr=0.1"],
        "no parameter 'lrr'. Did you mean 'lr'?",
    ),
    "seattle_rain_too_long": (
        ["tournament=none", "forecaster=bit", "nature=seattle_rain", "T=2000"],
        "T=2000 exceeds the 1460 rounds nature 'seattle_rain' can play",
    ),
}


@pytest.mark.parametrize("name", sorted(HARDENING))
def test_hardening_cases_fail_validation_with_one_line(name):
    from arena.config import validate
    from arena.errors import ConfigError

    overrides, needle = HARDENING[name]
    with pytest.raises(ConfigError) as info:
        validate(overrides)
    _one_clear_line(str(info.value))
    assert needle in str(info.value), str(info.value)


@pytest.mark.parametrize("name", ["twice", "seed_2_64", "shards_0"])
def test_hardening_cases_exit_2_and_write_nothing(name, tmp_path):
    """Formerly a Hydra UserWarning and exit status 0 (or an overflow after the game)."""
    import os
    import subprocess
    import sys

    overrides, needle = HARDENING[name]
    env = {**os.environ, "MPLBACKEND": "Agg"}
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "arena"), *overrides, f"results_root={tmp_path / 'r'}"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and needle in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("header, message", [("y,y", "column name 'y' twice"), ("y,x,x", "column name 'x' twice")])
def test_a_csv_header_with_a_repeated_name_is_refused(tmp_path, header, message):
    from adversaries.replay import Replay

    path = tmp_path / "d.csv"
    path.write_text(f"{header}\n" + "1," * (header.count(",")) + "0\n")
    with pytest.raises(ValueError, match=message):
        Replay(str(path), "y").reset(np.random.default_rng(0))


def test_a_replay_path_that_is_a_named_pipe_is_refused_at_once(tmp_path):
    import os

    from adversaries.replay import Replay

    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)  # opening it for reading would wait forever for a writer
    with pytest.raises(ValueError, match="not a regular file"):
        Replay(str(fifo), "y").reset(np.random.default_rng(0))
