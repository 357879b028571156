"""What supervising matchups costs: this tree against a base tree, side by side on this machine.

Usage (from the repository root, in the project's environment)::

    git archive BASE | tar -x -C /tmp/base                  # the base's sources, run with this environment
    python benchmarks/supervision.py --base-tree /tmp/base --turns 3
    python benchmarks/supervision.py                         # this tree's per-matchup figures only

A supervised child plays a shard's matchups (:mod:`arena.supervise`); after each it compares the names bound in
the watched modules and classes with the supervisor's copy (:class:`arena.supervise.Pristine`) and hands the rest
of the shard to a fresh child when a matchup rebound one. The figures:

- ``fork``: forking a child from a process that has played a matchup, its exit and the wait for it (what a
  fresh process per matchup would cost each matchup);
- ``snapshot``: taking the supervisor's copy (once per shard job);
- ``check``: the comparison after a matchup (every matchup pays it);
- with ``--base-tree``, each turn runs in fresh processes, this tree and the base, taking turns to go first
  (the base's sources first on ``PYTHONPATH``, this environment's packages): ``default run``, ``arena`` end to
  end, its report included; and ``2016 x T=10``, the bench tournament at T=10 with 56 seeds (2016 matchups,
  ``report=false``). One unmeasured run of each tree first fills its Numba cache.

Prints the medians and writes ``benchmarks/results/supervision.csv``.
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

from run import _cpu, write_rows  # benchmarks/run.py (this script's folder is on sys.path)

ROOT = Path(__file__).resolve().parent.parent
BIG = [
    "tournament=bench",
    "tournament.T=[10]",
    f"tournament.seeds=[{','.join(map(str, range(56)))}]",
    "report=false",
]


def per_matchup(repeats: int = 200) -> dict[str, float]:
    """Milliseconds: fork + exit + wait, the supervisor's snapshot, one check after a matchup (medians)."""
    from arena.runner import play
    from arena.supervise import Pristine

    for fc in ("k29", "ogd"):
        play("binary", fc, "iid_bernoulli", T=10, seed=0)
    forks = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
        forks.append(time.perf_counter() - t0)
    snaps, checks = [], []
    for _ in range(20):
        t0 = time.perf_counter()
        pristine = Pristine(("forecasters", "adversaries"))
        snaps.append(time.perf_counter() - t0)
    for _ in range(repeats):
        t0 = time.perf_counter()
        assert not pristine.changed()
        checks.append(time.perf_counter() - t0)
    return {k: statistics.median(v) * 1e3 for k, v in (("fork", forks), ("snapshot", snaps), ("check", checks))}


def one_run(tree: Path, args: list[str], tmp: Path) -> float:
    """Wall seconds of one ``arena`` command run from the sources of ``tree`` in a new results folder."""
    env = {**os.environ, "PYTHONPATH": str(tree), "MPLBACKEND": "Agg"}
    with tempfile.TemporaryDirectory(dir=tmp) as out:
        t0 = time.perf_counter()
        proc = subprocess.run(
            [
                sys.executable,
                "-c",
                "import sys; from arena.cli import main; main(sys.argv[1:])",
                *args,
                f"results_root={out}",
            ],
            cwd=out,
            env=env,
            capture_output=True,
            text=True,
        )
        seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{tree}: arena {' '.join(args)} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return seconds


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base-tree", type=Path, help="the base's sources (e.g. git archive BASE | tar -x -C DIR)")
    ap.add_argument("--tree", type=Path, default=ROOT, help="this tree's sources (default: this checkout)")
    ap.add_argument("--turns", type=int, default=3)
    ap.add_argument("--only", help="only the figure whose name starts so (e.g. 2016)")
    args = ap.parse_args(argv)
    print(f"machine: {_cpu()}, {os.cpu_count()} cores", flush=True)
    figures = per_matchup()
    rows = [
        {"figure": f"{name} (ms)", "this": round(ms, 4), "base": "", "ratio_this_over_base": "", "turns": ""}
        for name, ms in figures.items()
    ]
    for row in rows:
        print(f"{row['figure']:<28} {row['this']:>10.4f}", flush=True)
    if args.base_tree is not None:
        trees = {"this": args.tree.resolve(), "base": args.base_tree.resolve()}
        runs = {"default run (s)": [], "2016 x T=10 (s)": BIG}
        runs = {name: overrides for name, overrides in runs.items() if not args.only or name.startswith(args.only)}
        with tempfile.TemporaryDirectory() as tmp:
            times: dict[tuple[str, str], list[float]] = {}
            for tree in trees.values():  # Numba's cache of each tree, unmeasured
                one_run(tree, ["tournament.T=[10]", "report=false"], Path(tmp))
            for turn in range(args.turns):
                for name, overrides in runs.items():
                    order = list(trees.items()) if turn % 2 == 0 else list(trees.items())[::-1]  # who goes first
                    for who, tree in order:
                        seconds = one_run(tree, overrides, Path(tmp))
                        times.setdefault((name, who), []).append(seconds)
                        print(f"turn {turn + 1}: {name} {who} {seconds:.2f} s", flush=True)
        for name in runs:
            this, base = (statistics.median(times[(name, who)]) for who in trees)
            rows.append(
                {
                    "figure": name,
                    "this": round(this, 2),
                    "base": round(base, 2),
                    "ratio_this_over_base": round(this / base, 3),
                    "turns": args.turns,
                }
            )
            print(f"{name:<28} {this:>10.2f} {base:>10.2f}  {this / base:.3f}x", flush=True)
    write_rows(rows, ROOT / "benchmarks" / "results" / "supervision.csv")


if __name__ == "__main__":
    main()
