"""Tests of the binary-game natures in ``adversaries`` (without the arena loop)."""

from __future__ import annotations

import inspect
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import adversaries
from adversaries import (
    AntiForecaster,
    BiasPusher,
    Changepoints,
    IidBernoulli,
    Logistic,
    LogitWalk,
    Markov,
    Replay,
    SeattleRain,
    Sinusoid,
)
from arena.protocols import Bernoulli, Forecast, Nature, OutcomeLaw
from arena.registry import NATURES

ROOT = Path(__file__).resolve().parents[1]
T = 300
SEATTLE_CSV = ROOT / "adversaries" / "data" / "seattle_weather.csv"


@pytest.fixture(scope="module")
def bits_csv(tmp_path_factory) -> Path:
    """A replayable file of T rows with one context column."""
    rng = np.random.default_rng(7)
    path = tmp_path_factory.mktemp("replay") / "bits.csv"
    pd.DataFrame({"y": rng.integers(0, 2, T), "temp": rng.normal(size=T)}).to_csv(path, index=False)
    return path


FACTORIES = {
    "iid_bernoulli": lambda _: IidBernoulli(p=0.3),
    "logistic": lambda _: Logistic(),
    "sinusoid": lambda _: Sinusoid(amp=0.4, period=50),
    "logit_walk": lambda _: LogitWalk(sigma=0.3),
    "changepoints": lambda _: Changepoints(every=40),
    "markov": lambda _: Markov(switch=0.1),
    "anti_forecaster": lambda _: AntiForecaster(),
    "bias_pusher": lambda _: BiasPusher(),
    "replay": lambda csv: Replay(csv, column="y", context_columns=["temp"]),
    "seattle_rain": lambda _: SeattleRain(context_columns=["temp_max", "wind"]),
}
ADAPTIVE = {"anti_forecaster", "bias_pusher"}
OBLIVIOUS = sorted(set(FACTORIES) - ADAPTIVE)


def test_every_nature_is_registered_with_its_metadata():
    assert set(FACTORIES) <= set(NATURES), "importing adversaries must register every nature"
    for name in FACTORIES:
        cls = NATURES[name]
        assert issubclass(cls, Nature) and cls.name == name and cls.games == ("binary",)
        assert cls.adaptive == (name in ADAPTIVE)
        assert cls.__module__.startswith("adversaries.") and cls.__doc__ and "References" in cls.__doc__


def play(nature: Nature, forecasts, seed: int | None = 0, *, reset: bool = True):
    """A minimal arena loop: contexts, outcome laws (or outcomes) and realized outcomes."""
    if reset:
        nature.reset(np.random.default_rng([seed, 1]))
    coin = np.random.default_rng([seed, 2])
    xs, answers, ys = [], [], []
    for t, f in enumerate(forecasts, start=1):
        x = nature.context(t)
        assert isinstance(x, np.ndarray) and x.ndim == 1 and x.shape == (nature.context_dim,)
        answer = nature.respond(t, x, f)
        y = answer.sample(coin) if isinstance(answer, OutcomeLaw) else answer
        assert y in (0.0, 1.0)
        nature.observe(t, f.sample(coin.random()), y)
        xs.append(x.copy())
        answers.append(answer)
        ys.append(y)
    return np.array(xs), answers, np.array(ys)


def point_forecasts(seed: int, n: int = T) -> list[Forecast]:
    return [Forecast.point(p) for p in np.random.default_rng(seed).random(n)]


def assert_same_game(a, b):
    np.testing.assert_array_equal(a[0], b[0])
    assert a[1] == b[1]
    np.testing.assert_array_equal(a[2], b[2])


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_same_seed_same_outcomes(name, bits_csv):
    forecasts = point_forecasts(1)
    assert_same_game(play(FACTORIES[name](bits_csv), forecasts, 3), play(FACTORIES[name](bits_csv), forecasts, 3))


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_reset_clears_state(name, bits_csv):
    nature, forecasts = FACTORIES[name](bits_csv), point_forecasts(2)
    first = play(nature, forecasts, 5)
    play(nature, point_forecasts(9), 11)  # move every bit of state elsewhere
    assert_same_game(play(nature, forecasts, 5), first)


@pytest.mark.parametrize("name", OBLIVIOUS)
def test_oblivious_natures_ignore_the_forecast(name, bits_csv):
    a = play(FACTORIES[name](bits_csv), point_forecasts(1), 4)
    b = play(FACTORIES[name](bits_csv), [Forecast.two_point(0.1, 0.9, 0.5)] * T, 4)
    assert_same_game(a, b)


@pytest.mark.parametrize("name", sorted(ADAPTIVE))
def test_adaptive_natures_react_to_the_forecast(name):
    low = play(FACTORIES[name](None), [Forecast.point(0.2)] * 20)[2]
    high = play(FACTORIES[name](None), [Forecast.point(0.8)] * 20)[2]
    assert not np.array_equal(low, high)


def test_seeds_matter_for_random_natures():
    for make in (Logistic, lambda: LogitWalk(sigma=0.3), lambda: Markov(switch=0.2)):
        a, b = play(make(), point_forecasts(1), 1), play(make(), point_forecasts(1), 2)
        assert a[1] != b[1]


def test_iid_bernoulli_returns_its_law():
    assert play(IidBernoulli(p=0.7), point_forecasts(0, 5))[1] == [Bernoulli(0.7)] * 5


def test_logistic_contexts_and_law():
    nature = Logistic(w=[0.5, 2.0, -1.0], B=2.0)
    xs, laws, _ = play(nature, point_forecasts(0, 2000))
    assert nature.context_dim == 3 and np.all(xs[:, 0] == 1.0)
    assert np.linalg.norm(xs, axis=1).max() <= 2.0
    assert np.linalg.norm(xs, axis=1).max() > 1.99  # the clip is active
    np.testing.assert_allclose([law.p for law in laws], 1 / (1 + np.exp(-xs @ [0.5, 2.0, -1.0])), rtol=1e-12)


def test_drifting_laws():
    f = point_forecasts(0, 1000)
    ps = [law.p for law in play(Sinusoid(amp=0.4, period=500), f)[1]]
    np.testing.assert_allclose(ps, 0.5 + 0.4 * np.sin(2 * np.pi * np.arange(1, 1001) / 500))
    ps = [law.p for law in play(Changepoints(probs=[0.2, 0.8, 0.5], every=100), f)[1]]
    assert ps[0] == ps[99] == 0.2 and ps[100] == 0.8 and ps[200] == 0.5 and ps[300] == 0.2
    ps = np.array([law.p for law in play(LogitWalk(sigma=0.5, bound=2.0), f * 5)[1]])
    logits = np.log(ps / (1 - ps))
    assert ps[0] == 0.5 and np.abs(logits).max() <= 2.0 + 1e-12 and np.abs(np.diff(logits)).max() > 0
    ps = np.array([law.p for law in play(Markov(probs=[0.2, 0.8], switch=0.05), f * 5)[1]])
    assert set(ps) == {0.2, 0.8} and 0.03 < np.mean(ps[1:] != ps[:-1]) < 0.07


def test_anti_forecaster_answers_one_iff_the_mean_is_below_half():
    forecasts = [
        *point_forecasts(3, 200),
        Forecast.point(0.5),
        Forecast.two_point(0.2, 0.9, 0.5),
        Forecast.two_point(0.2, 0.7, 0.5),
    ]
    ys = play(AntiForecaster(), forecasts)[2]
    np.testing.assert_array_equal(ys, [1.0 if f.mean < 0.5 else 0.0 for f in forecasts])


def binned_error(p: np.ndarray, y: np.ndarray, bins: int = 10) -> float:
    """Binned calibration error: sum over bins of |sum (y - p)|, divided by T."""
    k = np.minimum((p * bins).astype(int), bins - 1)
    return float(np.abs(np.bincount(k, weights=y - p, minlength=bins)).sum() / len(p))


def test_bias_pusher_maximizes_the_error_of_a_constant_forecaster():
    forecasts = [Forecast.point(0.5)] * 1000
    p = np.full(1000, 0.5)
    pushed = binned_error(p, play(BiasPusher(), forecasts)[2])
    fair = binned_error(p, play(IidBernoulli(p=0.5), forecasts)[2])
    assert pushed == 0.5  # the most a constant 0.5 can be off
    assert fair < 0.1 < pushed


def test_bias_pusher_never_decreases_the_worst_binned_error():
    # it grows the worst bin when the forecast is in it and steers the forecaster back to it
    # otherwise (a bin the steering passes through may lose error: the worst one never does)
    nature, rng = BiasPusher(bins=10), np.random.default_rng(0)
    nature.reset(rng)
    sums = np.zeros(10)
    steered = 0
    for t in range(1, 2001):
        p = float(rng.choice([0.05, 0.31, 0.35, 0.5, 0.77, rng.random()]))
        y = nature.respond(t, nature.context(t), Forecast.point(p))
        nature.observe(t, p, y)
        before = sums.copy()
        k = min(int(p * 10), 9)
        sums[k] += y - p
        assert np.abs(sums).max() >= np.abs(before).max() - 1e-12
        worst = int(np.argmax(np.abs(before)))
        if before.any() and k != worst:  # outside the worst bin: an outcome towards it
            steered += 1
            assert y == (1.0 if k < worst else 0.0)
    assert steered > 100


def test_replay_round_trips_csv_and_parquet(tmp_path):
    df = pd.DataFrame(
        {"y": [1, 0, 0, 1, 1], "a": [0.5, 1.5, 2.5, 3.5, 4.5], "b": [1, 2, 3, 4, 5], "label": list("vwxyz")}
    )
    df.to_csv(tmp_path / "s.csv", index=False)
    df.to_parquet(tmp_path / "s.parquet")
    for name in ("s.csv", "s.parquet"):
        nature = Replay(tmp_path / name, column="y", context_columns=["a", "b"], start=1)
        assert nature.length == 4 and nature.context_dim == 2
        xs, answers, _ = play(nature, point_forecasts(0, 4))
        assert answers == [0.0, 0.0, 1.0, 1.0] and all(type(a) is float for a in answers)
        np.testing.assert_array_equal(xs, df[["a", "b"]].to_numpy(float)[1:])
        with pytest.raises(ValueError, match=r"round t=5 .*s\.(csv|parquet).*'y'.*at most T=4"):
            nature.respond(5, np.zeros(2), Forecast.point(0.5))
    assert Replay(tmp_path / "s.csv", column="y").context(1).shape == (0,)


def test_replay_params_are_its_constructor_arguments(bits_csv):
    nature = Replay(bits_csv, column="y", context_columns=["temp"], start=2)
    nature.reset(np.random.default_rng(0))
    # intercept: issue 12's constant 1 appended to replay contexts (a new constructor argument)
    assert nature.params() == {
        "path": str(bits_csv),
        "column": "y",
        "context_columns": ("temp",),
        "start": 2,
        "intercept": False,
        "on_missing": "error",
        "missing_columns": None,
    }
    assert Replay(**nature.params()).length == T - 2
    assert SeattleRain(start=3).params() == {"context_columns": (), "start": 3, "intercept": False}
    with_one = Replay(bits_csv, column="y", context_columns=["temp"], intercept=True)
    with_one.reset(np.random.default_rng(0))
    assert with_one.context_dim == 2 and with_one.context(1)[-1] == 1.0
    plain = Replay(bits_csv, column="y", context_columns=["temp"])
    plain.reset(np.random.default_rng(0))
    assert with_one.context(1).tolist() == [*plain.context(1).tolist(), 1.0]


BAD_FILES = {
    # name: (file contents, column, pattern that names the file, the column and the row)
    "nonnumeric": ("y,x\n1,0\n0,1\nrain,2\n", "y", r"bad\.csv'.*column 'y'.*row 2 .*'rain' is not a number"),
    "nan": ("y,x\n1,0\n,1\n", "y", r"bad\.csv'.*column 'y'.*row 1 .*missing"),
    "nan_text": ("y,x\n1,0\n0,1\nNaN,2\n", "y", r"bad\.csv'.*column 'y'.*row 2 .*missing"),
    "two": (
        "y,x\n1,0\n0,1\n1,3\n2,4\n",
        "y",
        r"bad\.csv', column 'y', row 3 \(0-based, header not counted; line 5 of the file\): value 2 is not 0 or 1",
    ),
    # blank lines are skipped (as pandas does): the row counts data rows, the line is the editor's
    "blank_lines": ("y\n1\n\n0\n\n7\n", "y", r"column 'y', row 2 \(0-based, header not counted; line 6 of the file\)"),
    # a first row longer than the header used to become pandas' index, shifting every column silently
    "short_header": (
        "y\n1,0\n0,1\n",
        "y",
        (
            r"bad\.csv', row 0 \(0-based, header not counted; line 2 of the file\) has 2 fields, but the "
            r"header has 1 \(looking for column 'y'\); remove the extra fields or name every column"
        ),
    ),
    "long_row": ("y,x\n1,0\n0,1,5\n", "y", r"row 1 \(0-based, header not counted; line 3 of the file\) has 3 fields"),
    "infinite": ("y,x\n1,0\n0,inf\n", "x", r"bad\.csv'.*column 'x'.*row 1 .*not finite"),
    "empty": ("", "y", r"bad\.csv' is empty.*column 'y'.*row 0"),
    "header_only": ("y,x\n", "y", r"bad\.csv' is empty.*column 'y'.*row 0"),
    "missing_column": ("rain,x\n1,0\n", "rian", r"bad\.csv' has no column 'rian'.*Did you mean 'rain'\?.*'x'"),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_replay_bad_files_name_the_file_column_and_row(case, tmp_path):
    text, column, pattern = BAD_FILES[case]
    (tmp_path / "bad.csv").write_text(text)
    context = ["x"] if column == "x" else []
    nature = Replay(tmp_path / "bad.csv", column="y" if column == "x" else column, context_columns=context)
    with pytest.raises(ValueError, match=pattern):
        nature.reset(np.random.default_rng(0))
    with pytest.raises(ValueError, match=pattern):  # `length` reads the file too, for the arena's horizon check
        _ = nature.length


def test_replay_names_the_line_of_a_byte_that_is_not_utf8(tmp_path):
    (tmp_path / "latin1.csv").write_bytes("y,city\n1,Paris\n0,Zürich\n".encode("latin-1"))
    with pytest.raises(
        ValueError,
        match=r"latin1\.csv' \(column 'y'\) is not UTF-8 text: byte 0xfc on line 3 is not "
        r"UTF-8; save the file as UTF-8",
    ):
        _ = Replay(tmp_path / "latin1.csv", column="y").length


def test_replay_reads_parquet_dictionary_and_nullable_columns(tmp_path):
    df = pd.DataFrame({"y": pd.Series([1, 0, 1], dtype="category"), "x": pd.Series([1, None, 3], dtype="Int64")})
    df.to_parquet(tmp_path / "s.parquet")
    assert Replay(tmp_path / "s.parquet", column="y").length == 3  # categories of numbers are numbers
    with pytest.raises(
        ValueError,
        match=r"s\.parquet', column 'x', row 1 \(0-based, header not counted\): the value "
        r"is missing",
    ):
        _ = Replay(tmp_path / "s.parquet", column="y", context_columns=["x"]).length


def test_replay_missing_file_and_bad_start(tmp_path, bits_csv):
    with pytest.raises(FileNotFoundError, match=r"nope\.csv' not found .*column 'y'"):
        Replay(tmp_path / "nope.csv", column="y").reset(np.random.default_rng(0))
    with pytest.raises(ValueError, match=rf"start={T} leaves no rows.*bits\.csv.*'y'.*rows 0\.\.{T - 1}"):
        _ = Replay(bits_csv, column="y", start=T).length
    (tmp_path / "data.xlsx").write_text("y\n1\n")
    with pytest.raises(ValueError, match=r"data\.xlsx'.*'y'.*unknown extension"):
        _ = Replay(tmp_path / "data.xlsx", column="y").length


@pytest.mark.parametrize(
    ("make", "pattern"),
    [
        (lambda: IidBernoulli(p=1.5), r"iid_bernoulli: p=1\.5 is outside \[0, 1\]; give a probability such as p: 0\.3"),
        (lambda: IidBernoulli(p="a"), r"iid_bernoulli: p='a' is not a number"),
        (lambda: Logistic(B=0.5), r"logistic: B=0\.5 is below 1"),
        (lambda: Logistic(w=[]), r"logistic: w is empty"),
        (lambda: Logistic(w=[1.0, float("nan")]), r"logistic: w\[1\]=nan is not finite"),
        (lambda: Sinusoid(amp=0.6), r"sinusoid: amp=0\.6 is outside \[0, 0\.5\]"),
        (lambda: Sinusoid(period=0), r"sinusoid: period=0 must be > 0"),
        (lambda: LogitWalk(sigma=-1), r"logit_walk: sigma=-1 is negative"),
        (lambda: LogitWalk(p0=1.0), r"logit_walk: p0=1\.0 has an infinite logit"),
        (lambda: LogitWalk(p0=0.999, bound=1.0), r"logit_walk: p0=0\.999 lies outside the barrier"),
        (lambda: Changepoints(probs=[0.2, 2]), r"changepoints: probs\[1\]=2 is outside \[0, 1\]"),
        (lambda: Changepoints(every=0), r"changepoints: every=0 is not an integer >= 1"),
        (lambda: Markov(probs=[0.3]), r"markov: probs=\[0\.3\] has one state"),
        (lambda: Markov(switch=-0.1), r"markov: switch=-0\.1 is outside \[0, 1\]"),
        (lambda: BiasPusher(bins=2.5), r"bias_pusher: bins=2\.5 is not an integer >= 1"),
        (lambda: Replay(3, column="y"), r"replay: path=3 is not a file path"),
        (lambda: Replay("a.csv", column=None), r"replay: column=None is not a column name"),
        (lambda: Replay("a.csv", column="y", context_columns="t"), r"replay: context_columns='t' is not a list"),
        (lambda: Replay("a.csv", column="y", context_columns=["y"]), r"contains the outcome column 'y'"),
        (lambda: Replay("a.csv", column="y", start=-1), r"replay: start=-1 is not an integer >= 0"),
        (lambda: SeattleRain(context_columns=["tmp_max"]), r"'tmp_max' is not available\. Did you mean 'temp_max'"),
    ],
)
def test_constructor_errors_name_the_parameter_and_the_fix(make, pattern):
    with pytest.raises(ValueError, match=pattern):
        make()


CELLS = st.sampled_from(
    [
        "0",
        "1",
        "1.0",
        "0.0",
        "2",
        "-1",
        "",
        "nan",
        "NA",
        "inf",
        "x",
        "0.5",
        "1e0",
        '"',
        "'",
        " 1",
        "True",
        "false",
        ",",
        ";",
        "\t",
        "é",
        "0x1",
    ]
)
LINES = st.lists(st.lists(CELLS, min_size=0, max_size=4).map(",".join), min_size=0, max_size=6)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    header=st.sampled_from(["y", "y,x", "x,y", "y,y", "", "x", "y,"]),
    lines=LINES,
    raw=st.one_of(st.none(), st.binary(max_size=40)),
)
def test_replay_fuzzed_csv_loads_or_raises_value_error(tmp_path, header, lines, raw):
    path = tmp_path / "fuzz.csv"
    if raw is None:
        path.write_text("\n".join([header, *lines]) + "\n", encoding="utf-8")
    else:
        path.write_bytes(raw)
    nature = Replay(path, column="y")
    try:
        nature.reset(np.random.default_rng(0))
    except ValueError as err:
        assert "fuzz.csv" in str(err) and "'y'" in str(err)
        return
    ys = [nature.respond(t, nature.context(t), Forecast.point(0.5)) for t in range(1, nature.length + 1)]
    assert nature.length >= 1 and set(ys) <= {0.0, 1.0}
    expected = pd.read_csv(path, index_col=False)["y"].astype(float).tolist()
    assert ys == expected


def test_seattle_rain_matches_the_shipped_csv(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # found through importlib.resources, not the working directory
    nature = SeattleRain(context_columns=["precipitation", "temp_max", "temp_min", "wind"])
    xs, ys, _ = play(nature, [Forecast.point(0.5)] * 1460)
    df = pd.read_csv(SEATTLE_CSV)
    assert nature.length == 1460 == len(df)
    assert np.mean(ys) == df["rain_tomorrow"].mean() == 623 / 1460
    # the derived column is next day's rain (the file's last day has no next day in the file)
    rain_next = (df["precipitation"].shift(-1) > 0).astype(int)
    np.testing.assert_array_equal(ys[:-1], rain_next[:-1])
    np.testing.assert_array_equal(xs, df[["precipitation", "temp_max", "temp_min", "wind"]].to_numpy())
    assert SeattleRain(start=1000).length == 460


def test_seattle_provenance_records_the_shipped_checksum():
    import hashlib

    digest = hashlib.sha256(SEATTLE_CSV.read_bytes()).hexdigest()
    assert digest in (SEATTLE_CSV.parent / "PROVENANCE.md").read_text()


def test_every_nature_has_a_config_with_its_defaults():
    omegaconf = pytest.importorskip("omegaconf")
    instantiate = pytest.importorskip("hydra.utils").instantiate
    for name in FACTORIES:
        cfg = omegaconf.OmegaConf.load(ROOT / "conf" / "nature" / f"{name}.yaml")
        cls = NATURES[name]
        assert cfg._target_ == f"{cls.__module__}.{cls.__qualname__}"
        signature = inspect.signature(cls).parameters
        values = omegaconf.OmegaConf.to_container(cfg)  # mandatory values stay "???"
        assert set(values) - {"_target_"} == set(signature)
        for key, parameter in signature.items():
            default = parameter.default
            if default is inspect.Parameter.empty:
                assert values[key] == "???", f"{name}.{key} is mandatory: write ???"
            else:
                assert values[key] == (list(default) if isinstance(default, tuple) else default), (name, key)
        if name == "replay":
            cfg.path, cfg.column = str(SEATTLE_CSV), "rain_tomorrow"
        nature = instantiate(cfg)
        assert isinstance(nature, cls)
        play(nature, point_forecasts(0, 3))


def test_package_exports_every_nature():
    exported = {getattr(adversaries, n).name for n in adversaries.__all__ if isinstance(getattr(adversaries, n), type)}
    assert exported == set(FACTORIES)
    assert math.isclose(IidBernoulli().p, 0.3)
