"""Same seed, same result, on any launcher: one small tournament run as a user runs it (an ``arena``
subprocess) on Hydra's basic launcher, the arena's local launcher (the tournaments' default), the joblib
launcher, submitit's local executor (what the SLURM launcher runs, without SLURM) and Ray, with identical summaries
(:func:`arena.results.summary_digest`: everything but timing and memory).

The Ray tests need the ray extra (``pip install -e '.[ray]'``) and are skipped without it; with
it they run by default, and ``pytest -m ray`` selects them. One starts a private local Ray
instance through the launcher (``hydra/launcher=ray_local``), the other starts a Ray head node
with ``ray start --head`` and runs the tournament on it as on an existing cluster
(``hydra/launcher=ray_cluster``); both instances are stopped before the test ends.

References
----------
conf/hydra/launcher/ (the arena's cluster configs).
"""

from __future__ import annotations

import importlib.util
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from arena.results import MACHINE_COLUMNS, MACHINE_PREFIXES, summary_digest

BIN = Path(sys.executable).parent
#: 2 forecasters x 2 natures x 2 seeds = 8 short matchups dealt to 2 shards (2 launcher jobs).
TOURNAMENT = [
    "tournament=bench",
    "tournament.T=[200]",
    "tournament.seeds=[0,1]",
    "tournament.forecasters=[k29,ogd]",
    "tournament.natures=[iid_bernoulli,logistic]",
    "tournament.shards=2",
    "report=false",
]  # bench sweeps shard over range(0,${tournament.shards})
MATCHUPS = 8

HAS_RAY = all(importlib.util.find_spec(m) is not None for m in ("ray", "hydra_plugins.hydra_ray_launcher"))
HAS_SUBMITIT = all(
    importlib.util.find_spec(m) is not None for m in ("submitit", "hydra_plugins.hydra_submitit_launcher")
)


def _env() -> dict:
    # One thread per job, as on a cluster node's single CPU; results must not depend on it anyway.
    return {
        **os.environ,
        "MPLBACKEND": "Agg",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "HYDRA_FULL_ERROR": "1",
        "RAY_USAGE_STATS_ENABLED": "0",
        # A test cluster on this machine alone: no auth token (recent `ray start` makes one in ~/.ray).
        "RAY_AUTH_MODE": "disabled",
    }


#: Hydra's INFO lines (off by default) say which launcher ran.
INFO = "hydra.hydra_logging.root.level=INFO"


def run_tournament(root: Path, *launcher: str) -> tuple[subprocess.CompletedProcess, pd.DataFrame]:
    """Run the tournament into ``root`` (an absolute results_root, as on a shared filesystem)."""
    root.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        [str(BIN / "arena"), *TOURNAMENT, f"results_root={root}", *launcher, INFO],
        cwd=root,
        capture_output=True,
        text=True,
        env=_env(),
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, f"{launcher}: exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
    summaries = list(root.rglob("summary.parquet"))
    assert len(summaries) == 1, f"{launcher}: {len(summaries)} summaries\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    table = pd.read_parquet(summaries[0])
    assert len(table) == MATCHUPS and table["matchup_id"].is_unique
    assert (table["status"] == "ok").all()
    return proc, table


def assert_same_summary(table: pd.DataFrame, reference: pd.DataFrame, launcher: str) -> None:
    """Equal digests; otherwise name the columns that differ."""
    if summary_digest(table) == summary_digest(reference):
        return
    versions = set(table["code_version"]) | set(reference["code_version"])
    assert len(versions) == 1, f"the source changed between the runs ({versions}): rerun the test"
    a, b = (t.sort_values("matchup_id").reset_index(drop=True) for t in (table, reference))
    keep_a, keep_b = (
        {c for c in t.columns if c not in MACHINE_COLUMNS and not c.startswith(MACHINE_PREFIXES)} for t in (a, b)
    )
    differ = sorted(keep_a ^ keep_b) + [
        c for c in sorted(keep_a & keep_b) if not a[c].astype(str).equals(b[c].astype(str))
    ]
    pytest.fail(f"the {launcher} launcher's summary differs from the basic launcher's in {differ}")


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> pd.DataFrame:
    """The tournament on Hydra's basic launcher: its jobs one after another, in the arena's process."""
    proc, table = run_tournament(tmp_path_factory.mktemp("basic"), "hydra/launcher=basic")
    assert "Launching 2 jobs locally" in proc.stdout + proc.stderr
    return table


def test_local_launcher_gives_the_basic_launchers_summary(tmp_path, reference):
    proc, table = run_tournament(tmp_path, "hydra.launcher.n_jobs=2")  # the tournament's default launcher
    assert "Local launcher: 2 jobs on 2 worker process(es)" in proc.stdout + proc.stderr
    assert_same_summary(table, reference, "local")


def test_local_launcher_runs_from_a_source_tree_that_is_not_installed(tmp_path):
    """Without the installed ``hydra_plugins.arena_searchpath`` (a checkout on sys.path, no install), the
    tournaments' default launcher is still found (arena.config.use_search_path_plugin)."""
    root = Path(__file__).resolve().parent.parent
    code = (
        "import sys\n"
        "sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in repr(f).lower()]\n"
        f"sys.path.insert(0, {str(root)!r})\n"
        "import arena.cli\n"
        f"arena.cli.main({[*TOURNAMENT, f'results_root={tmp_path}', 'hydra.launcher.n_jobs=2', INFO]!r})\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, env=_env(), timeout=600, check=False
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Local launcher: 2 jobs on 2 worker process(es)" in proc.stdout + proc.stderr
    assert len(pd.read_parquet(tmp_path / "bench" / "summary.parquet")) == MATCHUPS


def test_joblib_launcher_gives_the_basic_launchers_summary(tmp_path, reference):
    proc, table = run_tournament(tmp_path, "hydra/launcher=joblib", "hydra.launcher.n_jobs=2")
    assert "Joblib.Parallel(n_jobs=2" in proc.stdout + proc.stderr  # the launcher really was joblib
    assert_same_summary(table, reference, "joblib")


@pytest.mark.skipif(not HAS_SUBMITIT, reason="needs hydra-submitit-launcher: pip install -e '.[test]'")
def test_submitit_local_launcher_gives_the_basic_launchers_summary(tmp_path, reference):
    proc, table = run_tournament(tmp_path, "hydra/launcher=submitit_local", "hydra.launcher.timeout_min=10")
    assert "Submitit 'local' sweep output dir" in proc.stdout + proc.stderr
    assert list(tmp_path.rglob(".submitit/*")), "submitit's job folders are missing"
    assert_same_summary(table, reference, "submitit_local")
    # Rerun on another launcher into the same results: every matchup is found stored, none is played again.
    stored = {f: f.stat().st_size for f in tmp_path.rglob("matchups/*.jsonl")}
    _, again = run_tournament(tmp_path, "hydra/launcher=basic")
    assert stored and {f: f.stat().st_size for f in tmp_path.rglob("matchups/*.jsonl")} == stored  # nothing added
    assert_same_summary(again, reference, "basic (resumed)")


def test_slurm_config_makes_the_sbatch_script_its_keys_say(tmp_path, monkeypatch):
    """``hydra/launcher=slurm`` (conf/hydra/launcher/slurm.yaml) overrides a tournament's default launcher
    (local), and submitit turns its keys into the sbatch options they name (no SLURM here: a fake ``srun`` on
    the PATH)."""
    pytest.importorskip("hydra_plugins.hydra_submitit_launcher", reason="needs pip install -e '.[slurm]'")
    import submitit
    from hydra import compose, initialize_config_module
    from hydra_plugins.hydra_submitit_launcher.config import BaseQueueConf
    from omegaconf import OmegaConf

    with initialize_config_module("arena.conf", version_base="1.3"):
        cfg = compose(
            "config",
            overrides=[
                "tournament=calibration",
                "hydra/launcher=slurm",
                "hydra.launcher.partition=cpu",
                "hydra.launcher.timeout_min=30",
                "hydra.launcher.setup=[module load python/3.11]",
                "+hydra.launcher.additional_parameters.mail-type=END",
            ],
            return_hydra_config=True,
        )
    launcher = OmegaConf.to_container(cfg.hydra.launcher, resolve=False)
    assert launcher.pop("_target_").endswith("submitit_launcher.SlurmLauncher")
    # As hydra-submitit-launcher's launch() hands them to submitit (folder and name resolve per run).
    (tmp_path / "srun").write_text("#!/bin/sh\n")
    (tmp_path / "srun").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    executor = submitit.AutoExecutor(
        cluster="slurm", folder=tmp_path / "%j", slurm_max_num_timeout=launcher.pop("max_num_timeout")
    )
    del launcher["submitit_folder"]
    launcher["name"] = "arena"
    generic = set(OmegaConf.structured(BaseQueueConf).keys())
    executor.update_parameters(**{k if k in generic else f"slurm_{k}": v for k, v in launcher.items()})
    script = executor._executor._make_submission_file_text("python -m arena_job", "uid")
    for line in (
        "#SBATCH --partition=cpu",
        "#SBATCH --time=30",
        "#SBATCH --cpus-per-task=1",
        "#SBATCH --mem=4GB",
        "#SBATCH --mail-type=END",
        "module load python/3.11",
    ):
        assert line in script.splitlines(), (line, script)


@pytest.mark.ray
@pytest.mark.parametrize("name", ["ray_local", "ray_cluster"])
@pytest.mark.skipif(not HAS_RAY, reason="needs the ray extra: pip install -e '.[ray]'")
def test_ray_configs_compose(name):
    from hydra import compose, initialize_config_module

    with initialize_config_module("arena.conf", version_base="1.3"):
        cfg = compose(
            "config", overrides=["tournament=calibration", f"hydra/launcher={name}"], return_hydra_config=True
        )
    assert cfg.hydra.launcher._target_.endswith("ray_launcher.RayLauncher")
    assert cfg.hydra.launcher.ray.init.address == {"ray_local": "local", "ray_cluster": "auto"}[name]
    assert cfg.hydra.launcher.ray.remote.num_cpus == 1


@pytest.mark.ray
@pytest.mark.skipif(not HAS_RAY, reason="needs the ray extra: pip install -e '.[ray]'")
def test_ray_local_launcher_gives_the_basic_launchers_summary(tmp_path, reference):
    """The launcher starts a private Ray instance in the ``arena`` process, which stops it on exit."""
    proc, table = run_tournament(tmp_path, "hydra/launcher=ray_local", "hydra.launcher.ray.init.num_cpus=2")
    assert "Ray Launcher is launching 2 jobs" in proc.stdout + proc.stderr
    assert_same_summary(table, reference, "ray_local")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def ray_head(tmp_path):
    """A one-node Ray cluster (``ray start --head --block``) in its own session; stopped afterwards."""
    port, log_path = _free_port(), tmp_path / "ray_head.log"
    with log_path.open("w") as log:
        head = subprocess.Popen(
            [
                str(BIN / "ray"),
                "start",
                "--head",
                "--block",
                f"--port={port}",
                "--num-cpus=2",
                "--include-dashboard=false",
                "--disable-usage-stats",
            ],
            cwd=tmp_path,
            env=_env(),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 180
        while "ray start --address=" not in log_path.read_text():
            assert head.poll() is None, f"`ray start --head` failed:\n{log_path.read_text()[-3000:]}"
            assert time.monotonic() < deadline, f"the Ray head did not start in 180 s:\n{log_path.read_text()[-3000:]}"
            time.sleep(0.5)
        # The address the head announces (Ray binds to the node's IP, not to 127.0.0.1).
        yield re.search(r"ray start --address='([^']+)'", log_path.read_text()).group(1)
    finally:
        head.terminate()  # `ray start --block` stops the node's processes on SIGTERM
        try:
            head.wait(timeout=90)
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(head.pid, signal.SIGKILL)  # whatever of its session is left
        except ProcessLookupError:
            pass
        head.wait()


@pytest.mark.ray
@pytest.mark.skipif(not HAS_RAY, reason="needs the ray extra: pip install -e '.[ray]'")
def test_ray_cluster_launcher_gives_the_basic_launchers_summary(tmp_path, reference, ray_head):
    """As on an existing cluster: the head runs apart from ``arena``, which connects to its address."""
    results = tmp_path / "results"
    proc, table = run_tournament(results, "hydra/launcher=ray_cluster", f"hydra.launcher.ray.init.address={ray_head}")
    assert "Ray Launcher is launching 2 jobs" in proc.stdout + proc.stderr
    assert_same_summary(table, reference, "ray_cluster")
