"""The ``arena`` command line, run as a user runs it (a subprocess in a scratch directory).

Each subprocess pays a few seconds of imports, so the file keeps to a handful of runs.

References
----------
The results layout; loud errors (one message, nothing written on bad input).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from arena import play
from arena.seeding import derive_seed

ARENA = Path(sys.executable).parent / "arena"
if not ARENA.exists():  # pragma: no cover (a non-venv interpreter)
    ARENA = Path(shutil.which("arena") or "arena")


def _arena(args: list[str], cwd: Path, timeout: int = 180) -> subprocess.CompletedProcess:
    env = {**os.environ, "MPLBACKEND": "Agg", "HYDRA_FULL_ERROR": "0"}
    return subprocess.run(
        [str(ARENA), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def _run_dirs(root: Path) -> list[Path]:
    """<results_root>/<tournament_name>/<timestamp>/ directories."""
    return sorted(p for p in root.glob("*/*") if p.is_dir())


def _assert_clean_error(proc: subprocess.CompletedProcess, *needles: str) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr  # one line
    assert lines[0].startswith("arena: error: ")
    assert "Traceback" not in proc.stderr + proc.stdout
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


def _assert_nothing_written(cwd: Path, before: set[str]) -> None:
    assert not (cwd / "res").exists()  # the results_root of every error case
    assert {p.name for p in cwd.iterdir()} == before  # nor Hydra's outputs/ or multirun/


# ------------------------------------------------------------------------------- one run


def test_one_run_writes_a_one_row_summary_equal_to_play(tmp_path: Path) -> None:
    proc = _arena(
        [
            "tournament=none",
            "forecaster=k29",
            "nature=iid_bernoulli",
            "T=200",
            "seed=3",
            "results_root=res",
            "report=false",
        ],
        tmp_path,
    )  # figures: tests/test_plots.py
    assert proc.returncode == 0, proc.stderr
    (run_dir,) = _run_dirs(tmp_path / "res")
    assert run_dir.parent.name == "single"
    assert str(run_dir.resolve()) in proc.stdout  # says where the results are
    pq, csv = pd.read_parquet(run_dir / "summary.parquet"), pd.read_csv(run_dir / "summary.csv")
    assert len(pq) == 1 and len(csv) == 1
    assert list(pq.columns) == list(csv.columns)
    columns = set(pq.columns)
    for col in (
        "game",
        "forecaster",
        "nature",
        "seed",
        "T",
        "smce",
        "smce_over_T",
        "brier",
        "bias",
        "log_loss",
        "ece",
        "regret_linear",
        "cert.smce.holds",
        "cert.kernel.holds",
        "cert.search_precision.holds",
        "seconds_forecaster",
        "seconds_referee",
        "arena_version",
        "config",
        "seed_nature",
        "seed_outcome",
        "seed_forecaster",
        "seed_draw",
    ):
        assert col in columns, col
    row = pq.iloc[0]
    assert (row["game"], row["forecaster"], row["nature"], row["seed"], row["T"]) == (
        "binary",
        "k29",
        "iid_bernoulli",
        3,
        200,
    )
    assert row["seed_nature"] == derive_seed(3, "nature", "iid_bernoulli")
    assert bool(row["cert.smce.holds"]) and bool(row["cert.kernel.holds"])
    config = json.loads(row["config"])
    assert config["T"] == 200 and config["seed"] == 3 and config["nature"]["p"] == 0.3
    # The same matchup in-process gives the same numbers (conf/ defaults equal the class defaults).
    r = play("binary", "k29", "iid_bernoulli", T=200, seed=3)
    for key in ("smce", "brier", "bias", "log_loss", "regret_linear", "oi_gap"):
        assert row[key] == pytest.approx(r.summary[key], rel=1e-12, abs=1e-15), key
        assert csv.iloc[0][key] == pytest.approx(r.summary[key], rel=1e-12, abs=1e-15), key
    assert row["cert.smce.bound"] == pytest.approx(r.certificates["smce"].bound, rel=1e-12)
    # Per-matchup parts and the aggregated curves land beside the summary.
    from arena.store import stored_ids

    assert len(stored_ids(run_dir)) == 1
    assert (run_dir / "curves.parquet").is_file() and (run_dir / "curves.csv").is_file()
    curves = pd.read_parquet(run_dir / "curves.parquet")
    assert curves["t"].max() == 200 and set(curves["forecaster"]) == {"k29"}
    # One matchup: statistics across seeds, but no tables across matchups (nothing to pair, a 1 x 1 game), said so.
    assert (run_dir / "seed_stats.parquet").is_file() and (run_dir / "leaderboard.csv").is_file()
    assert not list(run_dir.glob("paired.*")) and not list(run_dir.glob("minimax.*"))
    assert "paired, minimax: not written for a single matchup" in proc.stdout


def test_a_parallel_sweep_yields_one_row_per_matchup(tmp_path: Path) -> None:
    proc = _arena(
        [
            "-m",
            "forecaster=k29,bit",
            "nature=iid_bernoulli",
            "T=100",
            "results_root=res",
            "hydra/launcher=joblib",
            "hydra.launcher.n_jobs=2",
            "report=false",
        ],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    (run_dir,) = _run_dirs(tmp_path / "res")
    summary = pd.read_parquet(run_dir / "summary.parquet")
    assert len(summary) == 2 and len(pd.read_csv(run_dir / "summary.csv")) == 2
    assert sorted(summary["forecaster"]) == ["bit", "k29"]
    assert set(summary["nature"]) == {"iid_bernoulli"} and set(summary["T"]) == {100}
    assert not (run_dir / "figures").exists()  # report=false
    paired = pd.read_parquet(run_dir / "paired.parquet")  # two forecasters: their comparisons and their game
    assert set(zip(paired["forecaster_a"], paired["forecaster_b"], strict=False)) == {("bit", "k29")}
    assert set(pd.read_parquet(run_dir / "minimax.parquet")["name"]) == {"bit", "k29", "iid_bernoulli"}


def test_hydra_reads_the_mode_that_prepare_composed_and_only_inside_the_run() -> None:
    """``arena`` answers Hydra's get_mode with the mode prepare composed (saving a composition), only where
    Hydra composes the same config, and leaves Hydra as it was afterwards."""
    from hydra._internal.hydra import Hydra
    from hydra.types import RunMode

    from arena import cli

    original = Hydra.get_mode
    with cli._known_mode(RunMode.MULTIRUN):
        assert Hydra.get_mode(None, "config", []) is RunMode.MULTIRUN
    assert Hydra.get_mode is original
    with cli._known_mode(cli._UNKNOWN):
        assert Hydra.get_mode is original
    assert cli._same_composition(["-m", "forecaster=k29,ogd", "hydra.launcher.n_jobs=2"])
    assert not cli._same_composition(["--config-name=mine", "forecaster=k29"])
    assert not cli._same_composition(["forecaster=k29", "hydra.mode=MULTIRUN"])
    assert not cli._same_composition(["--cfg", "job"])


# ---------------------------------------------------------------------------- bad input


def test_unknown_forecaster_suggests_the_closest_name(tmp_path: Path) -> None:
    before = {p.name for p in tmp_path.iterdir()}
    proc = _arena(["forecaster=k2", "nature=iid_bernoulli", "results_root=res"], tmp_path)
    _assert_clean_error(proc, "unknown forecaster 'k2'", "Did you mean 'k29'")
    _assert_nothing_written(tmp_path, before)


@pytest.mark.parametrize("T", ["0", "-5"])
def test_non_positive_horizon_is_refused(tmp_path: Path, T: str) -> None:
    before = {p.name for p in tmp_path.iterdir()}
    proc = _arena(["forecaster=k29", "nature=iid_bernoulli", f"T={T}", "results_root=res"], tmp_path)
    _assert_clean_error(proc, f"T={T}", "positive integer")
    _assert_nothing_written(tmp_path, before)


def test_replay_of_a_csv_without_the_column(tmp_path: Path) -> None:
    (tmp_path / "days.csv").write_text("date,rainy\n1,1\n2,0\n3,1\n")
    before = {p.name for p in tmp_path.iterdir()}
    proc = _arena(
        ["forecaster=bit", "nature=replay", "nature.path=days.csv", "nature.column=rain", "T=3", "results_root=res"],
        tmp_path,
    )
    _assert_clean_error(proc, "days.csv", "'rain'", "Did you mean 'rainy'")
    _assert_nothing_written(tmp_path, before)


def test_replay_of_a_csv_with_a_value_outside_0_1(tmp_path: Path) -> None:
    (tmp_path / "days.csv").write_text("rain\n1\n0\n2\n1\n")
    before = {p.name for p in tmp_path.iterdir()}
    proc = _arena(
        ["forecaster=bit", "nature=replay", "nature.path=days.csv", "nature.column=rain", "T=4", "results_root=res"],
        tmp_path,
    )
    _assert_clean_error(proc, "days.csv", "'rain'", "row 2", "not 0 or 1")
    _assert_nothing_written(tmp_path, before)


# ----------------------------------------------------------------------- validation only


def test_the_default_tournament_validates_to_its_matchup_count() -> None:
    from arena.config import validate

    # conf/tournament/calibration.yaml: 11 forecasters x 12 natures (3 of them red-team) x 3 seeds, one horizon.
    assert validate([], multirun=True) == 11 * 12 * 3
