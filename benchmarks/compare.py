"""Today's code against an earlier commit, side by side: the speed targets of the README's table.

Usage (from the repository root, in the project's environment)::

    python benchmarks/compare.py                   # against commit 66466cc, every measurement
    python benchmarks/compare.py --base abc1234    # against another commit
    python benchmarks/compare.py --only k29 cli    # a subset (k29 adaptive cli cold tournament)
    python benchmarks/compare.py --rounds 5        # more turns (default 3)
    python benchmarks/compare.py --only tournament --amdahl   # + the serial fraction at T = 10^4

The base commit is built once in a scratch virtual environment (``git archive BASE`` unpacked
under ``--scratch``, default ``$TMPDIR/arena-bench-BASE``, then ``python -m venv`` and
``pip install -e``; later runs reuse it). Every measurement runs in fresh processes, today's and
the base's taking turns (A B A B ...) so that a change in the machine's load hits both alike;
the table gives the medians and their ratio (base / today: above 1, today is faster), the peak
resident memory of the whole process where it matters, and the machine. It writes
``benchmarks/results/compare.csv`` (with ``--only``, the rows of the measurements it ran; the others stay).

Measurements:

- ``k29``: ``arena.play("binary", "k29", "iid_bernoulli", T=10**6)``, the whole play (forecasts,
  referee, recorder), after a warm-up play that loads the compiled code; peak RSS of the process.
- ``adaptive``: K29 against ``anti_forecaster`` (the step loop), T = 10^5, same warm-up.
- ``cli``: ``arena forecaster=k29 nature=iid_bernoulli T=1000`` (with its report, and without)
  against ``python -c "import pandas, hydra"``, wall time of the whole command.
- ``cold``: a fresh install's first matchups (K29 against ``iid_bernoulli`` and ``anti_forecaster``,
  ``kernel_df`` against ``logistic``, T = 300) with an empty Numba cache (``NUMBA_CACHE_DIR`` a new
  folder), so that every compiled function they use is compiled: the wait before a first run's results.
- ``tournament``: the ``bench`` tournament at T = 10 (no work: only the serial, fixed costs),
  whole ``arena`` command on the default launcher settings, no figures; then the same in one
  process (``hydra.launcher.n_jobs=1``) with its jobs timed: the serial part is the rest.
- floors (in ``cli`` and ``tournament``, taking turns with the rest): a fresh process that loads only the
  libraries the command loads and runs nothing (:data:`_LIBRARIES`): pandas, Hydra, PyArrow's Parquet and
  Numba with its CPU target (loaded by calling one of the project's compiled functions on three numbers),
  and for a single matchup with its report matplotlib's Agg canvas too. A command cannot be quicker than
  its libraries: the single matchup's floor is printed against 2x ``import pandas, hydra``, the tournament's
  (the libraries, plus the jobs' time of the one-process run spread over this machine's cores) against a
  third of the base's command.
- ``--amdahl``: the same one-process run of ``bench`` at T = 10^4: its serial fraction and Amdahl's
  bound on the speed-up on 16 and 64 cores, today's and the base's (:func:`amdahl`).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from run import _cpu, write_rows  # benchmarks/run.py (this script's folder is on sys.path)

from arena.supervise import cores  # the cores this process may use

ROOT = Path(__file__).resolve().parent.parent

# A snippet prints one JSON line: the seconds it timed and the process's peak RSS (MiB).
_PLAY = """
import json, resource, time
import arena
arena.play("binary", "k29", {nature!r}, T=1000, seed=0, keep_forecasts=False)  # load the compiled code
t0 = time.perf_counter()
arena.play("binary", "k29", {nature!r}, T={T}, seed=0, keep_forecasts=False)
print(json.dumps({{"seconds": time.perf_counter() - t0,
                  "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))
"""


# The serial part of a tournament: the whole command in one process (``n_jobs=1``) minus its jobs' time.
_SERIAL = """
import functools, importlib, json, sys, time
t0 = time.perf_counter()
import arena.cli as cli
# the Hydra task function, where arena.cli.main finds it: arena.cli's own name for it where it has one (run_job;
# 66466cc: _job), else arena.tournament.run_job, which main imports when it runs
mod, name = next(((cli, n) for n in ("run_job", "_job") if hasattr(cli, n)),
                 (importlib.import_module("arena.tournament"), "run_job"))
job, spent = getattr(mod, name), [0.0]

@functools.wraps(job)
def timed(*args, **kwargs):
    t = time.perf_counter()
    try:
        return job(*args, **kwargs)
    finally:
        spent[0] += time.perf_counter() - t

setattr(mod, name, timed)
sys.argv = ["arena", "tournament=bench", "tournament.T=[{T}]", "report=false", "results_root=r",
            "hydra.launcher.n_jobs=1"]
cli.main()
total = time.perf_counter() - t0
print(json.dumps({{"seconds": total - spent[0], "total": total, "jobs": spent[0]}}))
"""


# What a command loads before it can do anything: every library it needs, and nothing run (arena.fastfs is
# the project's module of compiled referee functions: one call on three numbers loads Numba's CPU target,
# as the first compiled call of any run does). {figures}: matplotlib's Agg canvas, for a command that draws.
_LIBRARIES = """
import pandas, hydra, omegaconf, pyarrow.parquet
{figures}
import numpy as np
from arena.fastfs import fs_quadratic
fs_quadratic(np.zeros(3), np.zeros(3))
"""
_FIGURES = "import matplotlib.figure, matplotlib.backends.backend_agg"


def build_base(base: str, scratch: Path) -> Path:
    """The python of a virtual environment holding commit ``base`` installed in editable mode."""
    python = scratch / ".venv" / "bin" / "python"
    if (scratch / ".venv" / "bin" / "arena").exists():
        return python
    src = scratch / "src"
    src.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", base], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
    subprocess.run([sys.executable, "-m", "venv", str(scratch / ".venv")], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", "-e", str(src)], check=True)
    return python


def run_snippet(python: Path, code: str, cwd: Path) -> dict:
    out = subprocess.run([str(python), "-c", code], check=True, capture_output=True, text=True, cwd=cwd)
    return json.loads(out.stdout.strip().splitlines()[-1])


def wall_and_cpu(cmd: list[str], cwd: Path | None, env: dict | None = None) -> tuple[float, float]:
    """Wall-clock seconds of ``cmd`` and the CPU seconds (user + system) of it and its worker processes: on a
    machine shared with other work the CPU time varies less than the wall time."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(
        cmd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
        env=None if env is None else {**os.environ, **env},
    )
    seconds = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:  # what the command said, before the traceback that stops the benchmark
        sys.stderr.write(done.stderr[-4000:])
        done.check_returncode()
    return seconds, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def wall(cmd: list[str], cwd: Path, env: dict | None = None) -> float:
    return wall_and_cpu(cmd, cwd, env)[0]


def turns(sides: dict, rounds: int) -> dict[str, list]:
    """Call every side once per round, in turn; each call returns a number or a dict of numbers."""
    out: dict[str, list] = {name: [] for name in sides}
    for _ in range(rounds):
        for name, fn in sides.items():
            out[name].append(fn())
    return out


ROWS: list[dict] = []


def report(name: str, today: list, base: list, unit: str = "s", key: str = "seconds") -> None:
    a = statistics.median(v[key] if isinstance(v, dict) else v for v in today)
    b = statistics.median(v[key] if isinstance(v, dict) else v for v in base)
    ROWS.append(
        {
            "measurement": name,
            "today": round(a, 4),
            "base": round(b, 4),
            "unit": unit,
            "ratio_base_over_today": round(b / a, 3),
            "n": len(today),
        }
    )
    print(f"{name:<58} {a:>9.3f} {b:>9.3f} {unit:<4} {b / a:>6.2f}x", flush=True)


def bench_play(python_today: Path, python_base: Path, rounds: int, nature: str, T: int, tmp: Path) -> None:
    code = _PLAY.format(nature=nature, T=T)
    res = turns(
        {"today": lambda: run_snippet(python_today, code, tmp), "base": lambda: run_snippet(python_base, code, tmp)},
        rounds,
    )
    report(f"k29 vs {nature}, whole play, T={T:.0e}", res["today"], res["base"])
    report(f"  peak RSS of the process (T={T:.0e})", res["today"], res["base"], "MiB", "rss_mib")


def bench_cli(python_today: Path, python_base: Path, rounds: int, tmp: Path) -> None:
    def arena(python: Path, *extra: str):
        cmd = [str(python.parent / "arena"), "forecaster=k29", "nature=iid_bernoulli", "T=1000", *extra]

        def go() -> float:
            with tempfile.TemporaryDirectory(dir=tmp) as d:
                return wall([*cmd, f"results_root={d}"], Path(d))

        return go

    def imports() -> float:
        return wall([str(python_today), "-c", "import pandas, hydra"], tmp)

    def floor() -> float:
        return wall([str(python_today), "-c", _LIBRARIES.format(figures=_FIGURES)], tmp)

    res = turns(
        {
            "imports": imports,
            "floor": floor,
            "today": arena(python_today),
            "base": arena(python_base),
            "today_nr": arena(python_today, "report=false"),
            "base_nr": arena(python_base, "report=false"),
        },
        rounds,
    )
    report("arena forecaster=k29 nature=iid_bernoulli T=1000", res["today"], res["base"])
    report("  the same, report=false", res["today_nr"], res["base_nr"])
    report("  python -c 'import pandas, hydra' (base column: the command)", res["imports"], res["today"])
    report("  floor: its libraries loaded, nothing run (base: the command)", res["floor"], res["today"])
    ref, low = (statistics.median(res[k]) for k in ("imports", "floor"))
    print(
        f"  the libraries alone take {low / ref:.2f}x 'import pandas, hydra' (the target: the command "
        f"within 2x); the command {statistics.median(res['today']) / ref:.2f}x",
        flush=True,
    )


# A fresh install's first matchups: every compiled function they use is compiled (Numba's cache is empty).
_COLD = """
import arena
for f, n in (("k29", "iid_bernoulli"), ("k29", "anti_forecaster"), ("kernel_df", "logistic")):
    arena.play("binary", f, n, T=300, seed=0)
"""


def bench_cold(python_today: Path, python_base: Path, rounds: int, tmp: Path) -> None:
    def side(python: Path):
        def go() -> float:
            with tempfile.TemporaryDirectory(dir=tmp) as cache:  # an empty cache: everything compiles
                return wall([str(python), "-c", _COLD], tmp, {"NUMBA_CACHE_DIR": cache})

        return go

    res = turns({"today": side(python_today), "base": side(python_base)}, rounds)
    report("first matchups of a fresh install (empty Numba cache)", res["today"], res["base"])


def bench_tournament(python_today: Path, python_base: Path, rounds: int, tmp: Path) -> None:
    def arena(python: Path):
        def go() -> float:
            with tempfile.TemporaryDirectory(dir=tmp) as d:
                return wall(
                    [
                        str(python.parent / "arena"),
                        "tournament=bench",
                        "tournament.T=[10]",
                        "report=false",
                        f"results_root={d}",
                    ],
                    Path(d),
                )

        return go

    def floor() -> float:
        return wall([str(python_today), "-c", _LIBRARIES.format(figures="")], tmp)

    whole = turns({"today": arena(python_today), "base": arena(python_base), "floor": floor}, rounds)
    report("tournament=bench at T=10 (serial, fixed costs)", whole["today"], whole["base"])
    report("  floor: its libraries loaded, nothing run (base: the command)", whole["floor"], whole["today"])

    def serial(python: Path):
        def go() -> dict:
            with tempfile.TemporaryDirectory(dir=tmp) as d:
                return run_snippet(python, _SERIAL.format(T=10), Path(d))

        return go

    res = turns({"today": serial(python_today), "base": serial(python_base)}, rounds)
    report("  its serial part: one process, minus the jobs' time", res["today"], res["base"])
    report("  the jobs' time in that process (the parallel part)", res["today"], res["base"], key="jobs")
    n = cores()
    low = statistics.median(whole["floor"]) + statistics.median(r["jobs"] for r in res["today"]) / n
    print(
        f"  the command's floor, its libraries plus its jobs spread over {n} cores: {low:.3f} s, against a "
        f"third of the base's command, {statistics.median(whole['base']) / 3:.3f} s; today "
        f"{statistics.median(whole['today']):.3f} s",
        flush=True,
    )


def amdahl(
    python_today: Path, python_base: Path, rounds: int, tmp: Path, T: int = 10_000, cores: tuple[int, ...] = (16, 64)
) -> None:
    """The ``bench`` tournament at T (default 10^4) in one process, today's and the base's in turns: its serial
    part S (the whole command minus its jobs) and its jobs' time W give the serial fraction f = S / (S + W)
    and Amdahl's bound on the speed-up on n cores, 1 / (f + (1 - f) / n). S counts Hydra's composition of
    each shard's config, which a launcher's workers do in parallel: the bound is conservative on that count,
    and optimistic in that it leaves out each worker's start-up (its imports) and any imbalance of shards."""

    def side(python: Path):
        def go() -> dict:
            with tempfile.TemporaryDirectory(dir=tmp) as d:
                r = run_snippet(python, _SERIAL.format(T=T), Path(d))
            return {**r, "fraction": r["seconds"] / r["total"]}

        return go

    res = turns({"today": side(python_today), "base": side(python_base)}, rounds)
    report(f"bench at T={T:.0e} in one process: serial part", res["today"], res["base"])
    report("  its jobs' time", res["today"], res["base"], key="jobs")
    report("  serial fraction f = serial / (serial + jobs)", res["today"], res["base"], "", "fraction")
    for name, runs in res.items():
        f = statistics.median(r["fraction"] for r in runs)
        print(
            f"  Amdahl, {name}: speed-up " + ", ".join(f"on {n} cores <= {1 / (f + (1 - f) / n):.1f}x" for n in cores),
            flush=True,
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", default="66466cc", help="the commit to compare against (default 66466cc)")
    ap.add_argument("--scratch", type=Path, default=None, help="where to build it (reused when present)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", nargs="*", default=None, help="subset of: k29 adaptive cli cold tournament")
    ap.add_argument(
        "--amdahl",
        action="store_true",
        help="also play the bench tournament at T=10^4 in one "
        "process (today's and the base's, in turns) and print its serial fraction and Amdahl's bound "
        "for 16 and 64 cores",
    )
    args = ap.parse_args()
    scratch = args.scratch or Path(tempfile.gettempdir()) / f"arena-bench-{args.base}"
    python_base = build_base(args.base, scratch)
    python_today = Path(sys.executable)
    print(f"machine: {_cpu()}, {os.cpu_count()} cores; today = {ROOT} vs base = {args.base} ({scratch})")
    print(
        f"{'measurement (medians of ' + str(args.rounds) + ', taking turns)':<58} {'today':>9} {'base':>9} "
        f"{'':<4} base/today"
    )
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        benches = {
            "k29": lambda: bench_play(python_today, python_base, args.rounds, "iid_bernoulli", 10**6, tmp),
            "adaptive": lambda: bench_play(python_today, python_base, args.rounds, "anti_forecaster", 10**5, tmp),
            "cli": lambda: bench_cli(python_today, python_base, args.rounds, tmp),
            "cold": lambda: bench_cold(python_today, python_base, args.rounds, tmp),
            "tournament": lambda: bench_tournament(python_today, python_base, args.rounds, tmp),
        }
        for name, fn in benches.items():
            if args.only is None or name in args.only:
                fn()
        if args.amdahl:
            amdahl(python_today, python_base, args.rounds, tmp)
    out = ROOT / "benchmarks" / "results" / "compare.csv"
    if args.only is not None and out.is_file():  # a subset: the other measurements' rows stay as they were
        with out.open(newline="") as fh:
            ran = {r["measurement"] for r in ROWS}
            ROWS[:0] = [r for r in csv.DictReader(fh) if r["measurement"] not in ran]
    write_rows(ROWS, out)


if __name__ == "__main__":
    main()
