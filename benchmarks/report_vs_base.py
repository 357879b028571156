"""`arena-report` of the default run, this tree against an older commit, side by side on this machine.

Usage (from the repository root, in the project's environment)::

    python benchmarks/report_vs_base.py 66466cc            # the base commit to compare with
    python benchmarks/report_vs_base.py 66466cc --repeats 3 --scratch /tmp/arena-base

The base commit is exported with ``git archive`` (no worktree is added to the repository) into
``--scratch/<commit>`` and installed there in a virtual environment of its own (once; reused
after). The default run (the calibration tournament) is played once by this tree with
``report=false``; then, turn about, each version's ``arena-report`` draws it in a fresh copy
(cold: no figures there), and this tree's report runs once more on its own output (warm:
nothing changed, the figures' manifest keeps them all). Prints the medians and their ratios and
appends rows to ``benchmarks/results/latest.csv``'s neighbour ``report_vs_base.csv``.
"""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from compare import build_base  # noqa: E402  (the one way the base commit is built)
from run import _cpu  # noqa: E402  (the benchmark suite's CPU name)


def _timed(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env={**os.environ, "MPLBACKEND": "Agg"})
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("base", help="the commit to compare with, e.g. 66466cc")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--scratch", type=Path, default=Path(tempfile.gettempdir()) / "arena-bench-base")
    ap.add_argument("--results", type=Path, help="a default run's results directory (default: play one)")
    args = ap.parse_args(argv)
    base = build_base(args.base, args.scratch / args.base).parent / "arena-report"
    ours = Path(sys.executable).parent / "arena-report"
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        run = args.results
        if run is None:
            subprocess.run([str(Path(sys.executable).parent / "arena"), f"results_root={tmp / 'run'}", "report=false"],
                           check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
            run = tmp / "run" / "calibration"
        times: dict[str, list[float]] = {"base": [], "ours": [], "ours_png": [], "ours_warm": []}
        for k in range(args.repeats):
            for who, exe, extra in (("base", base, []), ("ours", ours, []), ("ours_png", ours, ["--format", "png"])):
                copy = tmp / f"{who}{k}"
                shutil.copytree(run, copy, ignore=shutil.ignore_patterns("figures", "paper", "summary.md",
                                                                           "index.html"))
                times[who].append(_timed([str(exe), str(copy), *extra]))
            times["ours_warm"].append(_timed([str(ours), str(tmp / f"ours{k}")]))
    med = {k: statistics.median(v) for k, v in times.items()}
    cpu = _cpu()
    rows = [{"name": f"arena-report default run: {who}", "base": args.base, "median_seconds": round(s, 3),
             "ratio_base_over_this": round(med["base"] / s, 2), "cpu": cpu, "cpus": os.cpu_count()}
            for who, s in med.items()]
    for r in rows:
        print(f"{r['name']:<42} {r['median_seconds']:>8.2f} s   base/this = {r['ratio_base_over_this']:.2f}x")
    print(f"machine: {cpu}, {os.cpu_count()} CPUs; {args.repeats} repeats each, turn about")
    out = ROOT / "benchmarks" / "results" / "report_vs_base.csv"
    with out.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    main()
