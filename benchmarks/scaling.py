"""How a tournament scales with worker processes: the ``bench`` tournament on 1, 2, 4, ... workers.

Usage (from the repository root, in the project's environment)::

    python benchmarks/scaling.py                       # T = 10^4, 1 2 4 ... up to every core, local launcher
    python benchmarks/scaling.py --launchers local joblib --repeats 3 --T 10000
    python benchmarks/scaling.py --workers 1 16 --base 75a8cbd       # beside an earlier commit, taking turns
    python benchmarks/scaling.py --workers 1 16 --base-python /opt/base/.venv/bin/python   # an env you built

Each measurement is the whole ``arena tournament=bench tournament.T=[T] report=false
hydra/launcher=L hydra.launcher.n_jobs=N`` command in a fresh results folder (6 forecasters x 6
natures x 5 seeds = 180 matchups, dealt to two shards per core), the worker counts and launchers
taking turns (1 2 4 ... then again) so that a change in the machine's load hits all alike, after
one unmeasured run that fills Numba's compile cache. The table gives the median wall time, the
speed-up over 1 worker of the same launcher, and where the time went (medians), read off the
command's own output as it runs:

- ``start``: until the first matchup's line (imports, configuration, plan, worker start-up);
- ``play``: from the first matchup's line to the last;
- ``tail``: from the last matchup's line to the end (summary tables, exit).

With ``--base COMMIT`` the same runs are made with an earlier commit too, built once in a scratch
virtual environment as :mod:`compare` builds it (``git archive`` + ``python -m venv`` + ``pip install
-e``, under ``--scratch``); ``--base-python`` names the Python of an environment that holds the base
already (a machine without git or a package index). The two take turns run by run, and the table
gives the base's time over today's per launcher and worker count.

It names the machine and writes ``benchmarks/results/scaling.csv``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from run import _cpu, write_rows  # benchmarks/run.py (this script's folder is on sys.path)

from arena.supervise import cores

ROOT = Path(__file__).resolve().parent.parent


def arena_of(python: Path) -> Path:
    """The ``arena`` command of the environment of ``python`` (this one's: on the PATH where none is beside it)."""
    arena = Path(python).parent / "arena"
    return arena if arena.exists() else Path(shutil.which("arena") or "arena")


def one_run(launcher: str, n_jobs: int, T: int, tmp: Path, arena: Path | None = None) -> dict:
    """Wall time of one tournament command (``arena``: this environment's), split at its first and last
    matchup line."""
    arena = arena or arena_of(Path(sys.executable))
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with tempfile.TemporaryDirectory(dir=tmp) as d:
        cmd = [
            str(arena),
            "tournament=bench",
            f"tournament.T=[{T}]",
            "report=false",
            f"results_root={d}",
            f"hydra/launcher={launcher}",
            f"hydra.launcher.n_jobs={n_jobs}",
        ]
        t0 = time.perf_counter()
        first = last = None
        lines: list[str] = []
        with subprocess.Popen(cmd, cwd=d, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env) as p:
            for line in p.stdout:
                lines.append(line)
                if line.startswith("[arena]") and " vs " in line:
                    last = time.perf_counter()
                    first = first or last
        total = time.perf_counter() - t0
        if p.returncode != 0 or first is None:
            raise SystemExit(f"scaling: {' '.join(cmd)} failed (exit {p.returncode}):\n{''.join(lines[-30:])}")
    return {"seconds": total, "start": first - t0, "play": last - first, "tail": t0 + total - last}


def _sides(args) -> dict[str, Path]:
    """Side name -> its arena command: today's, and the base's when asked for."""
    sides = {"today": arena_of(Path(sys.executable))}
    if args.base:
        from compare import build_base  # the one way the base commit is built

        scratch = args.scratch or Path(tempfile.gettempdir()) / f"arena-bench-{args.base}"
        sides[args.base] = arena_of(build_base(args.base, scratch))
    elif args.base_python:
        sides["base"] = args.base_python.parent / "arena"  # its own: never today's from the PATH
        if not sides["base"].is_file():
            raise SystemExit(
                f"scaling: no arena command beside {args.base_python}: give the Python of an "
                "environment where the arena is installed"
            )
    return sides


def _table(runs: dict, sides: dict, workers: list[int], launchers: list[str], T: int, n_cores: int) -> list[dict]:
    """Print the medians of ``runs`` (side, launcher, workers) -> runs, their speed-ups and the sides' ratios;
    return them as rows."""
    rows = []
    print(
        f"{'side':<8} {'launcher':<8} {'workers':>7} {'seconds':>8} {'speed-up':>8} {'start':>6} {'play':>6} "
        f"{'tail':>6}  runs"
    )
    meds = {
        key: {k: statistics.median(r[k] for r in rs) for k in ("seconds", "start", "play", "tail")}
        for key, rs in runs.items()
    }
    for (side, launcher, n), rs in runs.items():
        med = meds[(side, launcher, n)]
        speedup = meds[(side, launcher, workers[0])]["seconds"] / med["seconds"]
        print(
            f"{side:<8} {launcher:<8} {n:>7} {med['seconds']:>8.2f} {speedup:>7.2f}x {med['start']:>6.2f} "
            f"{med['play']:>6.2f} {med['tail']:>6.2f}  " + " ".join(f"{r['seconds']:.2f}" for r in rs),
            flush=True,
        )
        rows.append(
            {
                "machine": _cpu(),
                "cores": n_cores,
                "T": T,
                "side": side,
                "launcher": launcher,
                "workers": n,
                **{k: round(v, 4) for k, v in med.items()},
                "speedup": round(speedup, 3),
            }
        )
    for side in list(sides)[1:]:
        for launcher in launchers:
            for n in workers:
                ratio = meds[(side, launcher, n)]["seconds"] / meds[("today", launcher, n)]["seconds"]
                print(f"{side} / today, {launcher} on {n} worker(s): {ratio:.2f}x", flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--T", type=int, default=10_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument(
        "--workers",
        type=int,
        nargs="*",
        default=None,
        help="worker counts (default 1 2 4 ... up to the cores, and the cores)",
    )
    ap.add_argument("--launchers", nargs="*", default=["local"], help="Hydra launchers (local, joblib)")
    base = ap.add_mutually_exclusive_group()
    base.add_argument("--base", help="an earlier commit to run beside today's, taking turns (built once)")
    base.add_argument("--base-python", type=Path, help="the Python of an environment holding the base already")
    ap.add_argument(
        "--scratch", type=Path, default=None, help="where --base is built (default $TMPDIR/arena-bench-BASE)"
    )
    args = ap.parse_args()
    n_cores = cores()
    workers = args.workers or sorted({*(2**k for k in range(n_cores.bit_length()) if 2**k <= n_cores), n_cores})
    sides = _sides(args)
    print(
        f"machine: {_cpu()}, {n_cores} cores; bench tournament (180 matchups) at T={args.T}, "
        f"medians of {args.repeats}, taking turns" + (f"; sides: {', '.join(sides)}" if len(sides) > 1 else ""),
        flush=True,
    )
    runs: dict[tuple[str, str, int], list[dict]] = {
        (side, lc, n): [] for lc in args.launchers for n in workers for side in sides
    }
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for arena in sides.values():  # fills Numba's cache (and the OS's) for every later run
            for launcher in args.launchers:
                one_run(launcher, 1, min(args.T, 1000), tmp, arena)
        for k in range(args.repeats):
            for (side, launcher, n), rs in runs.items():
                rs.append(one_run(launcher, n, args.T, tmp, sides[side]))
                print(
                    f"  run {k + 1}/{args.repeats}: {side}, {launcher} on {n} worker(s): {rs[-1]['seconds']:.2f} s",
                    flush=True,
                )  # as it goes: a run cut short by a time limit still says something
    rows = _table(runs, sides, workers, args.launchers, args.T, n_cores)
    write_rows(rows, ROOT / "benchmarks" / "results" / "scaling.csv")


if __name__ == "__main__":
    main()
