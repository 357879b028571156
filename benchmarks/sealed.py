"""What does ``sealed=true`` cost? The same matchups played sealed and unsealed, side by side in one run.

Usage (from the repository root, in the project's environment)::

    python benchmarks/sealed.py            # T = 10 (the start and end of the child alone) and 10^4
    python benchmarks/sealed.py --quick    # T = 10 and 10^3

For each matchup and T it prints and writes to ``benchmarks/results/sealed.csv`` the median
seconds of the whole matchup (game and referee) unsealed as a user runs it (the oblivious fast
path where it applies), unsealed round by round (``fast_path=False``: what a sealed game plays),
and sealed; then the extra microseconds a round costs sealed over the unsealed step loop and
the ratio to the unsealed run. The machine is named in every row. Sealed and unsealed record
the same game (asserted here).
"""

from __future__ import annotations

import argparse
import csv
import os
import platform
from pathlib import Path

from run import _cpu, median_time  # benchmarks/run.py: the suite's timer (this script's folder is on sys.path)

MATCHUPS = (
    ("binary", "k29", "iid_bernoulli"),
    ("binary", "ogd", "logistic"),
    ("experts", "hedge", "expert_constants"),
    ("quantile", "marginal_quantile_df", "iid_normal"),
)
OUT = Path(__file__).parent / "results" / "sealed.csv"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)

    import numpy as np

    from arena import play

    machine = (_cpu(), os.cpu_count(), platform.python_version())
    sizes = (10, 1_000) if args.quick else (10, 10_000)
    rows = []
    print(f"machine: {machine[0]}, {machine[1]} cores, Python {machine[2]}")
    print(
        f"{'matchup':<44} {'T':>6} {'unsealed s':>11} {'step loop s':>12} {'sealed s':>9} "
        f"{'extra us/round':>15} {'ratio':>7}"
    )
    for game, forecaster, nature in MATCHUPS:
        for T in sizes:

            def run(game=game, forecaster=forecaster, nature=nature, T=T, **how):
                return play(game, forecaster, nature, T=T, seed=0, keep_forecasts=False, **how)

            a, b = run(), run(sealed=True)  # warm-up, and the same game
            assert np.array_equal(a.recorder.p, b.recorder.p) and a.certificates == b.certificates
            plain = median_time(run, args.repeats)
            step = median_time(lambda run=run: run(fast_path=False), args.repeats)
            sealed = median_time(lambda run=run: run(sealed=True), args.repeats)
            extra = (sealed - step) / T * 1e6
            label = f"{forecaster} vs {nature} ({game})"
            print(
                f"{label:<44} {T:>6} {plain:>11.4f} {step:>12.4f} {sealed:>9.4f} {extra:>15.1f} "
                f"{sealed / plain:>6.1f}x",
                flush=True,
            )
            rows.append(
                {
                    "machine": machine[0],
                    "cores": machine[1],
                    "python": machine[2],
                    "game": game,
                    "forecaster": forecaster,
                    "nature": nature,
                    "T": T,
                    "unsealed_s": round(plain, 4),
                    "unsealed_step_loop_s": round(step, 4),
                    "sealed_s": round(sealed, 4),
                    "extra_us_per_round": round(extra, 1),
                    "ratio_sealed_over_unsealed": round(sealed / plain, 2),
                }
            )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    print(f"written: {args.out}")


if __name__ == "__main__":
    main()
