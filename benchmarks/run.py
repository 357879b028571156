"""The arena's benchmark suite: every figure measured side by side in one run.

Usage (from the repository root, in the project's environment; river is optional)::

    python benchmarks/run.py            # everything (~5 minutes on a 2-core machine)
    python benchmarks/run.py --quick    # smaller sizes, for a smoke test

Prints a table and writes ``benchmarks/results/latest.csv`` (one row per measurement:
name, size, median seconds over repeats, derived figure and ratio). Timings are medians of
``--repeats`` runs (default 3); ratios compare two implementations measured in the same
process, one after the other, on the same data.
"""

from __future__ import annotations

import argparse
import csv
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
ROWS: list[dict] = []


def _cpu() -> str:
    """The CPU's model name (``platform.processor()`` is empty on most Linux systems)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def median_time(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def record(name: str, size, seconds: float, figure: str = "", ratio: float | None = None) -> None:
    row = {
        "name": name,
        "size": size,
        "median_seconds": round(seconds, 6),
        "figure": figure,
        "ratio": "" if ratio is None else round(ratio, 3),
    }
    ROWS.append(row)
    print(
        f"{name:<46} {str(size):>10} {seconds:>11.4f} s  {figure:<34} {'' if ratio is None else f'{ratio:.2f}x'}",
        flush=True,
    )


def bench_k29(repeats: int, quick: bool) -> None:
    import arena
    from forecasters.defensive import K29

    T = 2000 if quick else 5000
    arena.play("binary", K29(fast=True), "iid_bernoulli", T=100, seed=0)  # warm-up: load compiled code
    slow = arena.play("binary", K29(fast=False), "iid_bernoulli", T=T, seed=0)
    fasts = [arena.play("binary", K29(fast=True), "iid_bernoulli", T=T, seed=0) for _ in range(repeats)]
    steps = [
        arena.play("binary", K29(fast=True), "iid_bernoulli", T=T, seed=0, fast_path=False) for _ in range(repeats)
    ]
    same = max(float(np.max(np.abs(r.recorder.p - slow.recorder.p))) for r in (fasts[0], steps[0]))
    t_slow = slow.seconds["forecaster"]
    t_fast = statistics.median(r.seconds["forecaster"] for r in fasts)
    t_step = statistics.median(r.seconds["forecaster"] for r in steps)
    record("k29 straightforward: forecaster seconds", T, t_slow, "O(t) per evaluation")
    record("k29 fast, step loop: forecaster seconds", T, t_step, f"max |p_fast - p_slow| = {same:.1e}", t_slow / t_step)
    record("k29 fast, oblivious path: forecaster seconds", T, t_fast, "compiled loop over all rounds", t_slow / t_fast)
    sizes = [10_000, 100_000] if quick else [10_000, 100_000, 1_000_000]
    secs = []
    for n in sizes:
        s = median_time(
            lambda n=n: arena.play("binary", K29(), "iid_bernoulli", T=n, seed=0, keep_forecasts=False),
            1 if n >= 1_000_000 else repeats,
        )
        secs.append(s)
        record("k29 fast vs iid_bernoulli (whole play)", n, s, f"{n / s:,.0f} steps/s")
    exponent = np.polyfit(np.log(sizes), np.log(secs), 1)[0]
    record("k29 growth exponent (time ~ T^a)", f"{sizes[0]}..{sizes[-1]}", 0.0, f"a = {exponent:.3f}")
    n = 20_000 if quick else 100_000
    s = median_time(lambda: arena.play("binary", K29(), "anti_forecaster", T=n, seed=0, keep_forecasts=False), 1)
    record("k29 fast vs anti_forecaster (step loop)", n, s, f"{n / s:,.0f} steps/s")


def bench_smce(repeats: int, quick: bool) -> None:
    from arena.metrics.smce import smce, smce_lp

    rng = np.random.default_rng(0)
    n = 1000 if quick else 3000
    p, y = rng.random(n), (rng.random(n) < 0.4).astype(float)
    t_lp = median_time(lambda: smce_lp(p, y), repeats)
    t_dp = median_time(lambda: smce(p, y), repeats)
    record("smCE linear program (HiGHS)", n, t_lp)
    record("smCE exact near-linear", n, t_dp, f"|diff| = {abs(smce(p, y) - smce_lp(p, y)):.1e}", t_lp / t_dp)
    for n in [10**5] if quick else [10**5, 10**6]:
        p, y = rng.random(n), (rng.random(n) < 0.4).astype(float)
        record("smCE exact near-linear", n, median_time(lambda p=p, y=y: smce(p, y), repeats))


def _river_available() -> bool:
    try:
        import river  # noqa: F401
    except ImportError:
        return False
    return True


def bench_per_step(repeats: int, quick: bool) -> None:
    """Per-step cost of OGD and Hedge in the arena vs river's models on the same data, and the arena's
    own per-step overhead (the target: no larger than river's LinearRegression predict_one + learn_one)."""
    import arena
    from forecasters.baselines import OGD

    T = 5000 if quick else 20000
    r = arena.play("binary", OGD(), "logistic", T=T, seed=0)
    X, y = r.recorder.X, r.recorder.y
    ogd = OGD()
    ogd.reset(np.random.default_rng(0))

    def run_ogd() -> float:
        ogd.reset(np.random.default_rng(0))
        t0 = time.perf_counter()
        for t in range(T):
            x = X[t]  # one context object a round, as the arena's loop hands it to predict and update
            ogd.predict(x)
            ogd.update(x, 0.5, y[t])
        return (time.perf_counter() - t0) / T

    try:
        from forecasters.experts import Hedge  # noqa: F401

        has_hedge = True
    except ImportError:
        has_hedge = False

    def overhead(nature: str, seed: int, time_limit: float | None = None) -> float:
        """The arena's own per-step overhead: the whole step loop (environment, nature, recording)
        with a constant forecaster, minus the forecaster's own time, as ``play`` reports it."""
        res = arena.play(
            "binary", "constant", nature, T=T, seed=seed, keep_forecasts=False, fast_path=False, time_limit=time_limit
        )
        return res.seconds["arena"] / T

    rows = [{f"x{j}": float(v) for j, v in enumerate(x)} for x in X]
    river = _river_available()
    if river:
        from river import linear_model, optim

    def run_river() -> float:
        model = linear_model.LinearRegression(optimizer=optim.SGD(0.01), intercept_lr=0.01)
        t0 = time.perf_counter()
        for t in range(T):
            model.predict_one(rows[t])
            model.learn_one(rows[t], y[t])
        return (time.perf_counter() - t0) / T

    # river, ogd and the arena take turns (at least 5 rounds; medians), so that a change in the
    # machine's load hits all sides alike
    times: dict[str, list[float]] = {"logistic": [], "iid_bernoulli": [], "timed": [], "river": [], "ogd": []}
    for k in range(max(repeats, 5)):
        if river:
            times["river"].append(run_river())
        times["ogd"].append(run_ogd())
        for nature in ("logistic", "iid_bernoulli"):
            times[nature].append(overhead(nature, k))
        times["timed"].append(overhead("logistic", k, time_limit=60.0))  # the watchdog on
    over = {k: statistics.median(v) for k, v in times.items() if v}
    _record_per_step(over, T)
    if river and has_hedge:
        bench_hedge(repeats, T, X, y)


def _record_per_step(over: dict[str, float], T: int) -> None:
    """Record the per-step medians ``over`` (seconds a step; ``river`` only where river is installed)."""
    t_ogd = over["ogd"]
    record("ogd predict+update per step", T, t_ogd, f"{t_ogd * 1e6:.2f} us/step")
    record("arena overhead per step vs logistic", T, over["logistic"], f"{over['logistic'] * 1e6:.2f} us/step")
    record(
        "arena overhead per step vs iid_bernoulli",
        T,
        over["iid_bernoulli"],
        f"{over['iid_bernoulli'] * 1e6:.2f} us/step",
    )
    record(
        "arena overhead per step vs logistic, time limit",
        T,
        over["timed"],
        f"{over['timed'] * 1e6:.2f} us/step",
        over["logistic"] / over["timed"],
    )
    if "river" not in over:
        record("river comparison", T, 0.0, "skipped: pip install river")
        return
    t_river = over["river"]
    record("river LinearRegression predict_one+learn_one", T, t_river, f"{t_river * 1e6:.2f} us/step")
    record(
        "ratio river linear / arena overhead (logistic)", T, 0.0, "(>= 1 meets the target)", t_river / over["logistic"]
    )
    record("ratio river linear / arena overhead (iid_bernoulli)", T, 0.0, "", t_river / over["iid_bernoulli"])
    record("ratio river linear / ogd", T, 0.0, "(>= 1 meets the target)", t_river / t_ogd)


def bench_hedge(repeats, T, X, y):
    """Hedge over N fixed experts vs river's EWARegressor over N running-mean experts (both O(N) a step)."""
    from river import dummy, ensemble, stats

    from forecasters.experts import Hedge

    N = 10
    advice = np.tile(np.linspace(0.05, 0.95, N), (T, 1))
    h = Hedge()

    def run_hedge():
        h.reset(np.random.default_rng(0))
        for t in range(T):
            x = advice[t]
            h.predict(x)
            h.update(x, 0.5, y[t])

    rows = [{"x0": 0.0} for _ in range(T)]

    def run_ewa():
        ewa = ensemble.EWARegressor([dummy.StatisticRegressor(stats.Mean()) for _ in range(N)], learning_rate=0.5)
        for t in range(T):
            ewa.predict_one(rows[t])
            ewa.learn_one(rows[t], y[t])

    times: dict[str, list[float]] = {"hedge": [], "ewa": []}
    for _ in range(max(repeats, 5)):  # taking turns, as above
        times["hedge"].append(median_time(run_hedge, 1) / T)
        times["ewa"].append(median_time(run_ewa, 1) / T)
    t_h, t_e = (statistics.median(times[k]) for k in ("hedge", "ewa"))
    record(f"hedge predict+update per step (N={N})", T, t_h, f"{t_h * 1e6:.2f} us/step")
    record(
        f"river EWARegressor per step (N={N})", T, t_e, f"{t_e * 1e6:.2f} us/step (>= 1 meets the target)", t_e / t_h
    )


def bench_tournament(quick: bool, repeats: int = 3) -> None:
    """The benchmark tournament (6 forecasters x 6 natures x 5 seeds, T = 1e4), whole `arena` command
    (validation, jobs, summary tables; no figures) on 1 and 2 workers of the local launcher, taking turns
    ``repeats`` times; medians."""
    arena_bin = Path(sys.executable).parent / "arena"
    T = 2000 if quick else 10_000
    common = [str(arena_bin), "tournament=bench", f"tournament.T=[{T}]", "report=false"]
    times: dict[int, list[float]] = {1: [], 2: []}
    for _ in range(repeats):
        for n_jobs in (1, 2):  # the local launcher (the tournament's default)
            with tempfile.TemporaryDirectory() as tmp:
                t0 = time.perf_counter()
                subprocess.run(
                    [*common, f"results_root={tmp}", f"hydra.launcher.n_jobs={n_jobs}"],
                    check=True,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    cwd=tmp,
                )
                times[n_jobs].append(time.perf_counter() - t0)
    out = {n: statistics.median(v) for n, v in times.items()}
    for n_jobs, seconds in out.items():
        record(
            f"tournament 6x6x5 on {n_jobs} worker(s)", T, seconds, " ".join(f"{v:.1f}" for v in times[n_jobs]) + " s"
        )
    record("tournament parallel speed-up (1 worker / 2)", T, 0.0, "(>= 1.6 meets the target)", out[1] / out[2])
    # Amdahl: t(n) = S + P / n; two worker counts give the serial seconds S and the parallel work P
    parallel = 2.0 * (out[1] - out[2])
    serial = out[1] - parallel
    if parallel <= 0 or serial < 0:  # 1 worker runs in-process; 2 start their own processes
        record("tournament Amdahl estimate", T, 0.0, "n/a: 2 workers were no faster than 1 on this machine")
        return
    record(
        "tournament serial seconds S (Amdahl, from 1 and 2 workers)",
        T,
        serial,
        f"serial fraction {serial / out[1]:.2f}",
    )
    for n in (16, 64):
        record(
            f"tournament Amdahl estimate on {n} workers",
            T,
            serial + parallel / n,
            "speed-up over 1 worker",
            out[1] / (serial + parallel / n),
        )


def bench_memory(quick: bool) -> None:
    """Peak resident memory of one K29 run (a fresh process, measured by /usr/bin/time -v)."""
    T = 100_000 if quick else 1_000_000
    code = f"import arena; arena.play('binary', 'k29', 'iid_bernoulli', T={T}, seed=0, keep_forecasts=False)"
    cmd = ["/usr/bin/time", "-v", sys.executable, "-c", code]
    if not Path("/usr/bin/time").exists():
        record("peak memory", T, 0.0, "skipped: /usr/bin/time missing")
        return
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t0
    kb = next(int(line.split(":")[1]) for line in proc.stderr.splitlines() if "Maximum resident set size" in line)
    record("k29 peak RSS, whole process", T, wall, f"{kb / 1024:.0f} MiB")


def bench_import(quick: bool) -> None:
    """``python -c "import arena"`` against ``python -c "import pandas"``: fresh processes taking
    turns (A B A B ...), medians of the wall times and their ratio (target: at most 0.6)."""
    n = 10 if quick else 40
    codes = {"arena": "import arena", "pandas": "import pandas"}
    times: dict[str, list[float]] = {name: [] for name in codes}
    for _ in range(n):
        for name, code in codes.items():
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True, cwd=tempfile.gettempdir())
            times[name].append(time.perf_counter() - t0)
    med = {name: statistics.median(v) for name, v in times.items()}
    for name, seconds in med.items():
        record(f"python -c 'import {name}' (fresh process)", n, seconds, f"median of {n}, taking turns")
    record("import arena / import pandas", n, 0.0, "(<= 0.6 meets the target)", med["arena"] / med["pandas"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="smaller sizes (a smoke test, not the targets)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", nargs="*", default=None, help="subset of: k29 smce per_step tournament memory import")
    args = ap.parse_args()
    print(f"machine: {_cpu()}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}")
    print(f"{'benchmark':<46} {'size':>10} {'median':>13}  {'figure':<34} ratio")
    benches = {
        "k29": lambda: bench_k29(args.repeats, args.quick),
        "smce": lambda: bench_smce(args.repeats, args.quick),
        "per_step": lambda: bench_per_step(args.repeats, args.quick),
        "tournament": lambda: bench_tournament(args.quick, args.repeats),
        "memory": lambda: bench_memory(args.quick),
        "import": lambda: bench_import(args.quick),
    }
    for name, fn in benches.items():
        if args.only is None or name in args.only:
            fn()
    write_rows(ROWS, ROOT / "benchmarks" / "results" / "latest.csv")


def write_rows(rows: list[dict], out: Path) -> None:
    """The measurements as a CSV file (one row each)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
