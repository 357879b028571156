"""Do the baselines' ``play_oblivious`` paths pay for themselves? The step loop against the
all-rounds-at-once path, side by side, for every baseline forecaster that offers one.

Usage (from the repository root, in the project's environment)::

    python benchmarks/oblivious.py            # T = 10^4 and 10^5
    python benchmarks/oblivious.py --quick    # T = 10^3 and 10^4

For each forecaster and T it prints the median seconds of the game alone (no referee) with
the step loop and with ``play_oblivious``, their ratio, and the share of a whole matchup
(game plus referee, step loop) the oblivious path saves. Both paths record the same game
(the conformance suite checks it); this measures only what the second copy of each
forecaster buys.
"""

from __future__ import annotations

import argparse

from run import median_time  # benchmarks/run.py: the suite's timer (this script's folder is on sys.path)

FORECASTERS = ("constant", "running_mean", "last_outcome", "window_mean")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)

    import numpy as np

    from arena import play
    from arena.referee import Referee

    class GameOnly(Referee):
        """Scores nothing: the timing is the game's alone."""

        def score(self, game, rec, forecaster):
            return {}, {}, None

    sizes = (1_000, 10_000) if args.quick else (10_000, 100_000)
    print(
        f"{'forecaster':<14} {'T':>8} {'step loop s':>12} {'oblivious s':>12} {'ratio':>8} {'matchup s':>10} "
        f"{'saved':>7}"
    )
    for name in FORECASTERS:
        for T in sizes:

            def game(fast: bool, name=name, T=T):
                return play(
                    "binary",
                    name,
                    "iid_bernoulli",
                    T=T,
                    seed=0,
                    fast_path=fast,
                    referee=GameOnly(),
                    keep_forecasts=False,
                )

            a, b = game(False), game(True)  # warm-up, and the two paths record the same game
            assert np.array_equal(a.recorder.p, b.recorder.p) and np.array_equal(a.recorder.y, b.recorder.y)
            step = median_time(lambda: game(False), args.repeats)
            fast = median_time(lambda: game(True), args.repeats)

            def matchup(name=name, T=T):
                return play("binary", name, "iid_bernoulli", T=T, seed=0, fast_path=False, keep_forecasts=False)

            matchup()  # warm-up: the referee's compiled code
            whole = median_time(matchup, args.repeats)
            print(
                f"{name:<14} {T:>8} {step:>12.4f} {fast:>12.4f} {step / fast:>7.1f}x {whole:>10.3f} "
                f"{(step - fast) / whole:>6.0%}",
                flush=True,
            )


if __name__ == "__main__":
    main()
