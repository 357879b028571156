"""`arena-report` of the default run, this tree against an older commit, side by side on this machine.

Usage (from the repository root, in the project's environment)::

    python benchmarks/report_vs_base.py 66466cc            # the base commit to compare with
    python benchmarks/report_vs_base.py 66466cc --repeats 3 --scratch /tmp/arena-base

The base commit is exported with ``git archive`` (no worktree is added to the repository) into
``--scratch/<commit>`` and installed there in a virtual environment of its own (once; reused after).
The default run (the calibration tournament) is played once by this tree with ``report=false``;
then, turn about, each version's ``arena-report`` draws it in a fresh copy (cold: no figures there),
by default (this tree: every figure as PNG, no paper folder: only ``--paper`` writes one) and, for
this tree, with every figure as PDF and PNG too (``--format pdf,png``, what the base writes); then
this tree's report runs once more on its own output (warm: nothing changed, the figures' manifest
keeps them all). Prints the medians of wall-clock and CPU seconds (the report's processes together)
and their ratios, and writes them to ``benchmarks/results/report_vs_base.csv``; then the most this
tree's default report could gain on this machine as it is: its CPU seconds spread perfectly over the
cores are a floor under its wall time.
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
from pathlib import Path

# the one way the base commit is built, and a command timed (this script's folder is on sys.path)
from compare import build_base, wall_and_cpu
from run import _cpu  # the benchmark suite's CPU name

from arena.supervise import cores  # the cores this process may use

ROOT = Path(__file__).resolve().parent.parent
_AGG = {"MPLBACKEND": "Agg"}


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
            subprocess.run(
                [str(Path(sys.executable).parent / "arena"), f"results_root={tmp / 'run'}", "report=false"],
                check=True,
                stdout=subprocess.DEVNULL,
                cwd=ROOT,
            )
            run = tmp / "run" / "calibration"
        times: dict[str, list[tuple[float, float]]] = {"base": [], "ours": [], "ours_all_formats": [], "ours_warm": []}
        for k in range(args.repeats):
            for who, exe, extra in (
                ("base", base, []),
                ("ours", ours, []),
                ("ours_all_formats", ours, ["--format", "pdf,png"]),
            ):
                copy = tmp / f"{who}{k}"
                shutil.copytree(
                    run,
                    copy,
                    ignore=shutil.ignore_patterns("figures", "paper", "summary.md", "index.html", "compare_top.*"),
                )
                times[who].append(wall_and_cpu([str(exe), str(copy), *extra], None, _AGG))
            times["ours_warm"].append(wall_and_cpu([str(ours), str(tmp / f"ours{k}")], None, _AGG))
    wall = {k: statistics.median(w for w, _ in v) for k, v in times.items()}
    cpu = {k: statistics.median(c for _, c in v) for k, v in times.items()}
    name = _cpu()
    rows = [
        {
            "name": f"arena-report default run: {who}",
            "base": args.base,
            "median_seconds": round(wall[who], 3),
            "ratio_base_over_this": round(wall["base"] / wall[who], 2),
            "median_cpu_seconds": round(cpu[who], 3),
            "cpu_ratio_base_over_this": round(cpu["base"] / cpu[who], 2),
            "repeats": args.repeats,
            "cpu": name,
            "cpus": os.cpu_count(),
        }
        for who in times
    ]
    for r in rows:
        print(
            f"{r['name']:<44} wall {r['median_seconds']:>7.2f} s (base/this {r['ratio_base_over_this']:.2f}x)"
            f"   cpu {r['median_cpu_seconds']:>7.2f} s (base/this {r['cpu_ratio_base_over_this']:.2f}x)"
        )
    print(f"machine: {name}, {os.cpu_count()} CPUs; {args.repeats} repeats each, turn about")
    # however well its processes share the cores, a report takes at least its CPU time over the cores
    n = cores()
    floor = cpu["ours"] / n
    print(
        f"this tree's report (default) cannot take less than its CPU time over {n} cores, "
        f"{floor:.2f} s: {wall['base'] / floor:.2f}x the base's wall time at most"
    )
    ours = next(r for r in rows if r["name"] == "arena-report default run: ours")
    rows.append(
        {
            **ours,
            "name": f"arena-report default run: ours, its CPU time over {n} cores (a floor)",
            "median_seconds": round(floor, 3),
            "ratio_base_over_this": round(wall["base"] / floor, 2),
        }
    )
    out = ROOT / "benchmarks" / "results" / "report_vs_base.csv"
    with out.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    main()
