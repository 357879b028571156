"""How a tournament scales with its number of matchups: play, rerun, report, memory, files and disk.

Usage (from the repository root, in the project's environment)::

    python benchmarks/scale.py                                   # 10^4 and 10^5 matchups
    python benchmarks/scale.py --matchups 10000 --base-python /work/base732/.venv/bin/python
    python benchmarks/scale.py --matchups 100000 --replicate 10  # and 10^6 simulated from the 10^5 rows

Each size is the calibration tournament (11 forecasters x 12 natures = 132 matchups a seed) at
``'tournament.T=[10]'`` with as many seeds as the size asks (10^4: 76 seeds, 10,032 matchups;
10^5: 758 seeds, 100,056 matchups), in a fresh results folder, on the default launcher and shards
(one per core). Three commands are timed, each in a process of its own whose peak resident memory
(the largest of the process and its workers, ``wait4``) is read as it ends:

- ``play``: ``arena ... report=false`` (play every matchup, then aggregate the tables);
- ``rerun``: the same command again (nothing new: every matchup found stored, the tables kept);
- ``report``: ``arena-report DIR`` (the results page: tables, comparisons, figures).

The table also gives the files in the results directory and its bytes. ``--base-python`` runs the
same commands with another environment's ``arena`` (an earlier commit, installed there) beside
today's. ``--replicate K`` then copies the stored matchups of the largest size K times (new seeds,
so new ids) into a scratch results directory without a plan, aggregates them
(:func:`arena.aggregate.write_tables`, the first step of ``arena-report``) in a process of its own, then
draws their report (``arena-report``): K x 10^5 matchups without playing them.

It names the machine and writes ``benchmarks/results/scale.csv``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from run import _cpu, write_rows  # benchmarks/run.py (this script's folder is on sys.path)

from arena.supervise import cores

ROOT = Path(__file__).resolve().parent.parent
#: Matchups a seed of the calibration tournament.
PER_SEED = 132


def measured(cmd: list[str], cwd: Path, env: dict | None = None) -> dict:
    """Wall seconds and peak resident memory (MB, the largest of the process and its workers) of a command."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env or _env())
    out = proc.stdout.read() if proc.stdout else b""
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) not in (0, 3):  # 3: finished with forfeits
        raise RuntimeError(f"{' '.join(cmd[:3])} ... failed:\n{out.decode(errors='replace')[-3000:]}")
    return {"seconds": round(seconds, 2), "peak_rss_mb": round(usage.ru_maxrss / 1024, 1)}


def _env(base: bool = False) -> dict:
    """The commands' environment; for the base, without a PYTHONPATH that would import today's code there."""
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONUNBUFFERED": "1"}
    if base:
        env.pop("PYTHONPATH", None)
    return env


def load() -> float:
    """The machine's load average over the last minute (beside each measurement: the machine is shared)."""
    return round(os.getloadavg()[0], 2)


def tree(path: Path) -> tuple[int, int]:
    """(files, bytes) under ``path``."""
    files = size = 0
    for dirpath, _, names in os.walk(path):
        for name in names:
            files += 1
            size += os.lstat(os.path.join(dirpath, name)).st_size
    return files, size


def one_size(python: Path, side: str, matchups: int, tmp: Path) -> tuple[list[dict], Path]:
    """The three commands at one size with the ``arena`` of ``python``; the rows and the results directory."""
    seeds = max(1, round(matchups / PER_SEED))
    root = Path(tempfile.mkdtemp(prefix=f"{side}_{matchups}_", dir=tmp))
    args = [
        "tournament=calibration",
        "tournament.T=[10]",
        f"tournament.seeds=[{','.join(map(str, range(seeds)))}]",
        "report=false",
        f"results_root={root}",
    ]
    arena, report = Path(python).parent / "arena", Path(python).parent / "arena-report"
    out = root / "calibration"
    rows = []
    for step, cmd in (
        ("play", [str(arena), *args]),
        ("rerun", [str(arena), *args]),
        ("report", [str(report), str(out)]),
    ):
        before = load()
        row = {"side": side, "matchups": seeds * PER_SEED, "shards": cores(), "step": step, "load_before": before}
        row.update(measured(cmd, root, _env(side == "base")))
        files, size = tree(out)
        row.update({"files": files, "mb_on_disk": round(size / 2**20, 1), "load_after": load()})
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows, out


def replicate(out: Path, times: int, tmp: Path) -> list[dict]:
    """Aggregate ``times`` copies of the stored matchups of ``out`` (each copy's seeds shifted: new ids) in a
    process of its own, then draw their report (``arena-report``); the rows of both: wall seconds, peak memory
    and the number of matchups."""
    dest = Path(tempfile.mkdtemp(prefix="replicated_", dir=tmp))
    script = f"""
import json, sys
from pathlib import Path
from arena.store import append, read_many, scan
from arena.results import matchup_id
out, dest, times = Path({str(out)!r}), Path({str(dest)!r}), {times}
index = scan(out)
shift = 1 + max(int(m.rsplit("__", 3)[1][1:]) for m in index)
n = 0
for k in range(times):
    for where, data in read_many(index.values()):
        stored = json.loads(data)
        row = stored["row"]
        row["seed"] += k * shift
        mid = matchup_id(row["game"], row["forecaster"], row["nature"], row["seed"], row["T"], {{}})[:-10]
        row["matchup_id"] = mid + row["matchup_id"][-10:]
        append(dest, where.path.stem, row["matchup_id"], json.dumps(stored).encode())
        n += 1
print(n)
"""
    subprocess.run([sys.executable, "-c", script], check=True, env=_env(), capture_output=True)
    n = len(__import__("arena.store", fromlist=["scan"]).scan(dest))
    rows = []
    aggregate = [sys.executable, "-c", f"from arena.aggregate import write_tables; write_tables({str(dest)!r})"]
    report = [str(Path(sys.executable).parent / "arena-report"), str(dest)]
    for step, cmd in (("aggregate (replicated)", aggregate), ("report (replicated)", report)):
        row = {"side": "today", "matchups": n, "shards": cores(), "step": step, "load_before": load()}
        row.update(measured(cmd, dest))
        files, size = tree(dest)
        row.update({"files": files, "mb_on_disk": round(size / 2**20, 1), "load_after": load()})
        print(json.dumps(row), flush=True)
        rows.append(row)
    shutil.rmtree(dest, ignore_errors=True)
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matchups", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--base-python", type=Path, help="the Python of an environment with an earlier arena")
    parser.add_argument("--base-matchups", type=int, nargs="+", default=[10_000], help="sizes run with the base")
    parser.add_argument("--replicate", type=int, default=0, help="aggregate K copies of the largest size's rows")
    parser.add_argument("--scratch", type=Path, default=Path(tempfile.gettempdir()))
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "scale.csv")
    args = parser.parse_args(argv)
    machine = f"{_cpu()}, {os.cpu_count()} cores"
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(dir=args.scratch) as tmp:
        last = None
        for n in args.matchups:
            if args.base_python and n in args.base_matchups:
                rows += one_size(args.base_python, "base", n, Path(tmp))[0]
            got, last = one_size(Path(sys.executable), "today", n, Path(tmp))
            rows += got
        if args.replicate and last is not None:
            rows += replicate(last, args.replicate, Path(tmp))
    write_rows([{"machine": machine, **r} for r in rows], args.out)


if __name__ == "__main__":
    main()
