"""How a tournament scales with worker processes: the ``bench`` tournament on 1, 2, 4, ... workers.

Usage (from the repository root, in the project's environment)::

    python benchmarks/scaling.py                       # T = 10^4, 1 2 4 ... up to every core, local launcher
    python benchmarks/scaling.py --launchers local joblib --repeats 3 --T 10000

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


def one_run(launcher: str, n_jobs: int, T: int, tmp: Path) -> dict:
    """Wall time of one tournament command, split at its first and last matchup line."""
    arena = Path(sys.executable).parent / "arena"
    arena = arena if arena.exists() else Path(shutil.which("arena") or "arena")
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with tempfile.TemporaryDirectory(dir=tmp) as d:
        cmd = [str(arena), "tournament=bench", f"tournament.T=[{T}]", "report=false", f"results_root={d}",
               f"hydra/launcher={launcher}", f"hydra.launcher.n_jobs={n_jobs}"]
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--T", type=int, default=10_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--workers", type=int, nargs="*", default=None,
                    help="worker counts (default 1 2 4 ... up to the cores, and the cores)")
    ap.add_argument("--launchers", nargs="*", default=["local"], help="Hydra launchers (local, joblib)")
    args = ap.parse_args()
    n_cores = cores()
    workers = args.workers or sorted({*(2 ** k for k in range(n_cores.bit_length()) if 2 ** k <= n_cores), n_cores})
    print(f"machine: {_cpu()}, {n_cores} cores; bench tournament (180 matchups) at T={args.T}, "
          f"medians of {args.repeats}, taking turns", flush=True)
    runs: dict[tuple[str, int], list[dict]] = {(lc, n): [] for lc in args.launchers for n in workers}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for launcher in args.launchers:  # fills Numba's cache (and the OS's) for every later run
            one_run(launcher, 1, min(args.T, 1000), tmp)
        for k in range(args.repeats):
            for key, rs in runs.items():
                rs.append(one_run(*key, args.T, tmp))
                print(f"  run {k + 1}/{args.repeats}: {key[0]} on {key[1]} worker(s): {rs[-1]['seconds']:.2f} s",
                      flush=True)  # as it goes: a run cut short by a time limit still says something
    rows = []
    print(f"{'launcher':<8} {'workers':>7} {'seconds':>8} {'speed-up':>8} {'start':>6} {'play':>6} {'tail':>6}  runs")
    for (launcher, n), rs in runs.items():
        med = {k: statistics.median(r[k] for r in rs) for k in ("seconds", "start", "play", "tail")}
        base = statistics.median(r["seconds"] for r in runs[(launcher, workers[0])])
        speedup = base / med["seconds"]
        print(f"{launcher:<8} {n:>7} {med['seconds']:>8.2f} {speedup:>7.2f}x {med['start']:>6.2f} {med['play']:>6.2f} "
              f"{med['tail']:>6.2f}  " + " ".join(f"{r['seconds']:.2f}" for r in rs), flush=True)
        rows.append({"machine": _cpu(), "cores": n_cores, "T": args.T, "launcher": launcher, "workers": n,
                     **{k: round(v, 4) for k, v in med.items()}, "speedup": round(speedup, 3)})
    write_rows(rows, ROOT / "benchmarks" / "results" / "scaling.csv")


if __name__ == "__main__":
    main()
