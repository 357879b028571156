"""The two figures a user waits for, this tree against a base tree, side by side on this machine.

Usage (from the repository root, in the project's environment)::

    python benchmarks/house.py /path/to/base            # a checkout of the base with its own .venv
    python benchmarks/house.py 732d086 --turns 5        # a commit, built as benchmarks/compare.py builds it

The base is a checkout holding a virtual environment ``.venv`` in which it is installed (``pip install -e``), or
a commit, which :func:`compare.build_base` builds into such a folder (``$TMPDIR/arena-bench-<commit>``, reused).
Each turn runs, in fresh processes, this tree then the base:

- ``k29``: ``arena.play("binary", "k29", "iid_bernoulli", T=10**6, seed=0)`` in a new process (Numba's cache
  warm, as after any first run): the play call itself (wall-clock and CPU seconds), and the whole process
  (imports included);
- ``default run``: ``arena results_root=<a new folder>``, the default tournament end to end, its report included
  (wall-clock seconds, and the CPU seconds of its processes, which vary less on a machine shared with other work).

Prints each figure's median over the turns and the ratio this / base (below 1, this tree is faster), with the
machine, and writes them to ``benchmarks/results/house_<N>cpu.csv``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from compare import (
    build_base,
    run_snippet,
    turns,
    wall_and_cpu,
)  # benchmarks/compare.py (this script's folder is on sys.path)
from run import _cpu, write_rows

ROOT = Path(__file__).resolve().parent.parent

# one JSON line: the wall-clock and CPU seconds of the play call (the first in its process)
_PLAY = """
import json, time
import arena
t0, c0 = time.perf_counter(), time.process_time()
arena.play("binary", "k29", "iid_bernoulli", T=10**6, seed=0)
print(json.dumps({"play": time.perf_counter() - t0, "play_cpu": time.process_time() - c0}))
"""


def k29(python: Path, tmp: Path):
    """One turn of K29 at T = 10^6: the play call's seconds and the whole process's."""

    def go() -> dict:
        t0 = time.perf_counter()
        out = run_snippet(python, _PLAY, tmp)
        return {**out, "process": time.perf_counter() - t0}

    return go


def default_run(python: Path, tmp: Path):
    """One turn of the default run, ``arena`` in a fresh results root, report included: its wall-clock seconds
    and the CPU seconds of its processes."""

    def go() -> dict:
        with tempfile.TemporaryDirectory(dir=tmp) as d:
            seconds, cpu = wall_and_cpu([str(python.parent / "arena"), f"results_root={d}"], Path(d))
        return {"wall": seconds, "cpu": cpu}

    return go


def _commit(root: Path = ROOT) -> str:
    """The commit of the checkout ``root``, with ``+`` where its working tree differs from it."""
    head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(
        ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"], capture_output=True
    )
    return head.stdout.strip() + ("+" if dirty.stdout.strip() else "")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("base", help="a checkout of the base installed in its own .venv, or a commit")
    ap.add_argument("--turns", type=int, default=3)
    args = ap.parse_args(argv)
    if Path(args.base).is_dir():
        base_python = Path(args.base).resolve() / ".venv" / "bin" / "python"
    else:
        base_python = build_base(args.base, Path(tempfile.gettempdir()) / f"arena-bench-{args.base}")
    pythons = {"this": Path(sys.executable), "base": base_python}
    this_commit = _commit()  # before the turns: the tree may change while they run
    base_name = (_commit(Path(args.base)) or args.base) if Path(args.base).is_dir() else args.base
    print(f"machine: {_cpu()}, {os.cpu_count()} cores; this = {ROOT} ({this_commit}) vs base = {base_name}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        res = {
            "k29": turns({who: k29(py, tmp) for who, py in pythons.items()}, args.turns),
            "default run": turns({who: default_run(py, tmp) for who, py in pythons.items()}, args.turns),
        }
    figures = {
        "K29 play at T=1e6: the play call": ("k29", "play"),
        "K29 play at T=1e6: the play call's CPU seconds": ("k29", "play_cpu"),
        "K29 play at T=1e6: the whole process": ("k29", "process"),
        "arena (default run, report included)": ("default run", "wall"),
        "arena (default run): CPU seconds of its processes": ("default run", "cpu"),
    }
    rows = []
    for name, (bench, key) in figures.items():
        this, base = (statistics.median(v[key] for v in res[bench][who]) for who in pythons)
        rows.append(
            {
                "figure": name,
                "this_seconds": round(this, 3),
                "base_seconds": round(base, 3),
                "ratio_this_over_base": round(this / base, 3),
                "turns": args.turns,
                "this": this_commit,
                "base": base_name,
                "cpu": _cpu(),
                "cpus": os.cpu_count(),
            }
        )
    print(f"{'figure (medians of ' + str(args.turns) + ' turns)':<52} {'this':>9} {'base':>9}  this/base")
    for r in rows:
        print(
            f"{r['figure']:<52} {r['this_seconds']:>9.2f} {r['base_seconds']:>9.2f}  {r['ratio_this_over_base']:.2f}x"
        )
    write_rows(rows, ROOT / "benchmarks" / "results" / f"house_{os.cpu_count()}cpu.csv")


if __name__ == "__main__":
    main()
