"""Real forecasts: comparecast's experiment in the arena, against comparecast's own code.

1. ``k29_comparecast`` and ``laplace`` fed the outcomes of comparecast's ``forecasts/default.csv``
   (shipped: adversaries/data/comparecast_default.csv.gz): rounds that differ from the published
   columns (by more than 1e-12; by more than one bisection cell, 2^-10), and seconds at T = 10^4.
2. With ``--comparecast DIR`` (``pip install --no-deps --target DIR comparecast==1.0.0``), comparecast's
   own ``forecast_k29`` on the first ``--own-T`` rounds (its sums are pure Python: O(t) interpreted
   kernel calls per evaluation), with its time extrapolated to 10^4 (quadratic in T), and its forecasts
   compared with the arena's. Its ``confseq`` dependency (a C++ extension that needs Boost) is replaced
   by pure-Python boundaries (``comparecast_cs.confseq_shim``, confseq's formulas).
3. The comparison k29_poly3 vs laplace on Brier: the arena's confidence sequence (empirical Bernstein,
   stitching) beside comparecast's ``confseq_eb`` with ``boundary_type="stitching"``, at T = 10^4
   (``benchmarks/comparecast_cs.py`` adds comparecast's default, the mixture boundary, and the figure).

4. With ``--river`` (river installed): river's LogisticRegression as ``forecaster=river`` in the arena
   (``arena.play``, referee included) against the same model in river's bare loop (predict, learn) and
   in river's own evaluation loop (``evaluate.progressive_val_score`` with the log loss), on the same
   20,000 rounds (a replayed file with two context columns); best of ``--repeats``, taking turns, with
   the load average; the row goes to benchmarks/results/real_river.csv.

Usage: python benchmarks/real.py [--comparecast DIR] [--own-T 1000] [--river | --only-river] [--repeats 7]
"""

from __future__ import annotations

import argparse
import sys
import time
import types
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from arena.sequential import confidence_sequence  # noqa: E402
from forecasters.comparecast import K29Comparecast, Laplace  # noqa: E402

DATA = ROOT / "adversaries" / "data" / "comparecast_default.csv.gz"


def forecasts(forecaster, ys) -> np.ndarray:
    forecaster.reset(None)
    out = []
    for y in ys:
        p = forecaster.predict(None)
        out.append(p)
        forecaster.update(None, p, float(y))
    return np.array(out)


def reproduce(d: pd.DataFrame) -> dict[str, np.ndarray]:
    ours = {}
    for column, f in (
        ("laplace", Laplace()),
        ("k29_poly3", K29Comparecast("poly")),
        ("k29_rbf0.01", K29Comparecast("rbf")),
    ):
        start = time.perf_counter()
        ours[column] = forecasts(f, d.y.to_numpy())
        seconds = time.perf_counter() - start
        diff = np.abs(ours[column] - d[column].to_numpy())
        print(
            f"{column:12s} T={len(d)}: {seconds:6.1f} s in the arena; rounds differing from the published column "
            f"by > 1e-12: {int((diff > 1e-12).sum())}, by > 2^-10: {int((diff > 2**-10 + 1e-12).sum())} "
            f"(max {diff.max():.3g})",
            flush=True,
        )
    return ours


def comparecast_modules(source: Path):
    """comparecast's forecasters and confseq modules, imported from ``source`` without its package __init__
    (which imports plotting libraries), with shims for tqdm and the C++ confseq."""
    from comparecast_cs import confseq_shim  # this folder: the boundaries comparecast calls, in pure Python

    confseq = confseq_shim()
    boundaries = confseq.boundaries
    tqdm = types.ModuleType("tqdm")
    tqdm.trange = lambda *a, **k: range(*a)
    tqdm.tqdm = lambda it, *a, **k: it
    package = types.ModuleType("comparecast")
    package.__path__ = [str(source / "comparecast")]
    sys.modules.update({"confseq": confseq, "confseq.boundaries": boundaries, "tqdm": tqdm, "comparecast": package})
    import comparecast.confseq as cc_confseq
    import comparecast.forecasters as cc_forecasters

    return cc_forecasters, cc_confseq


def own_code(d: pd.DataFrame, source: Path, T: int, ours: dict[str, np.ndarray]):
    cc_forecasters, cc_confseq = comparecast_modules(source)
    ys = d.y.to_numpy()[:T]
    for column, kernel in (("k29_poly3", ("poly", 3)), ("k29_rbf0.01", ("rbf", 0.01))):
        start = time.perf_counter()
        theirs = cc_forecasters.forecast_k29(ys, kernel, verbose=False)
        seconds = time.perf_counter() - start
        arena_seconds = timed(lambda k=kernel[0]: forecasts(K29Comparecast(k), ys))
        print(
            f"{column:12s} T={T}: comparecast's own code {seconds:6.1f} s "
            f"(about {seconds * (10_000 / T) ** 2 / 3600:.1f} h "
            f"at T=10^4, quadratic), the arena's {arena_seconds:.2f} s; rounds where they differ: "
            f"{int((np.abs(theirs - ours[column][:T]) > 1e-12).sum())}",
            flush=True,
        )
    return cc_confseq


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def confidence_sequences(d: pd.DataFrame, cc_confseq=None) -> None:
    y = d.y.to_numpy(float)
    delta = (d["k29_poly3"].to_numpy() - y) ** 2 - (d["laplace"].to_numpy() - y) ** 2
    cs = confidence_sequence(delta, -1.0, 1.0, alpha=0.05)
    line = (
        f"k29_poly3 - laplace, Brier, T={len(d)}: mean {cs['mean'][-1]:.5f}; "
        f"arena 95% CS [{cs['low'][-1]:.5f}, {cs['high'][-1]:.5f}]"
    )
    if cc_confseq is not None:
        lo, hi = cc_confseq.confseq_eb(delta, 0.05, -1.0, 1.0, boundary_type="stitching")
        ratio = (cs["high"][-1] - cs["low"][-1]) / (hi[-1] - lo[-1])
        line += f"; comparecast's (stitching) [{lo[-1]:.5f}, {hi[-1]:.5f}]; width ratio arena/comparecast {ratio:.3f}"
    print(line, flush=True)


def river_data(T: int) -> tuple[np.ndarray, np.ndarray]:
    """T rounds of a logistic law of two features (the same data for every contestant)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(T, 2))
    y = (rng.random(T) < 1 / (1 + np.exp(-(X @ [1.5, -1.0])))).astype(int)
    return X, y


def bare_loop(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """river's LogisticRegression, predict then learn, round by round: nothing but the model's calls."""
    from river import linear_model

    model, ps = linear_model.LogisticRegression(), []
    for xi, yi in zip(X.tolist(), y.tolist(), strict=True):
        features = dict(enumerate(xi))
        ps.append(model.predict_proba_one(features)[True])
        model.learn_one(features, bool(yi))
    return np.array(ps)


def river_evaluate(X: np.ndarray, y: np.ndarray) -> float:
    """river's own evaluation loop, progressive validation with the log loss; the loss."""
    from river import evaluate, linear_model, metrics, stream

    return evaluate.progressive_val_score(stream.iter_array(X, y), linear_model.LogisticRegression(), metrics.LogLoss())


def river_loop(T: int = 20_000, repeats: int = 7) -> None:
    """forecaster=river against nature=replay on a file of the data, ``arena.play`` (referee included), against
    the same model in river's loops on the same data: best of ``repeats``, the three taking turns."""
    import os
    import platform
    import tempfile

    from run import _cpu  # benchmarks/run.py (this script's folder is on sys.path)

    from arena import play

    X, y = river_data(T)
    path = os.path.join(tempfile.mkdtemp(), "rounds.csv")
    pd.DataFrame({"y": y, "a": X[:, 0], "b": X[:, 1]}).to_csv(path, index=False)
    nature = {"path": path, "column": "y", "context_columns": ["a", "b"]}
    play("binary", "river", "replay", T=100, seed=0, nature_params=nature)  # warm up: imports, the file's cache
    load = os.getloadavg()[0]
    best = {"arena": float("inf"), "bare": float("inf"), "evaluate": float("inf")}
    parts: dict = {}
    for _ in range(repeats):
        start = time.perf_counter()
        r = play("binary", "river", "replay", T=T, seed=0, nature_params=nature)
        seconds = time.perf_counter() - start
        if seconds < best["arena"]:
            best["arena"], parts = seconds, dict(r.seconds)
        best["bare"] = min(best["bare"], timed(lambda: bare_loop(X, y)))
        best["evaluate"] = min(best["evaluate"], timed(lambda: river_evaluate(X, y)))
    load = max(load, os.getloadavg()[0])
    same = np.array_equal(r.recorder.p, bare_loop(X, y))
    ratio_bare, ratio_evaluate = best["arena"] / best["bare"], best["arena"] / best["evaluate"]
    print(
        f"river LogisticRegression T={T}, best of {repeats} (load average {load:.2f}): in the arena "
        f"{best['arena']:.3f} s (the model's loop {parts['forecaster']:.3f} s, the referee {parts['referee']:.3f} s, "
        f"the rest {best['arena'] - parts['forecaster'] - parts['referee']:.3f} s); river's bare loop "
        f"{best['bare']:.3f} s, ratio {ratio_bare:.2f}; river's evaluate.progressive_val_score (LogLoss) "
        f"{best['evaluate']:.3f} s, ratio {ratio_evaluate:.2f}; forecasts identical to the bare loop's: {same}",
        flush=True,
    )
    row = {
        "machine": _cpu(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "load_1min": round(load, 2),
        "T": T,
        "repeats": repeats,
        "arena_s": round(best["arena"], 4),
        "arena_model_loop_s": round(parts["forecaster"], 4),
        "arena_referee_s": round(parts["referee"], 4),
        "river_bare_loop_s": round(best["bare"], 4),
        "river_evaluate_s": round(best["evaluate"], 4),
        "ratio_arena_over_bare": round(ratio_bare, 3),
        "ratio_arena_over_evaluate": round(ratio_evaluate, 3),
        "forecasts_identical": same,
    }
    pd.DataFrame([row]).to_csv(ROOT / "benchmarks" / "results" / "real_river.csv", index=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--comparecast", type=Path, help="a folder holding comparecast's package (pip --target)")
    parser.add_argument("--own-T", type=int, default=1000, help="rounds for comparecast's own (slow) K29")
    parser.add_argument("--river", action="store_true", help="time forecaster=river against river's own loop")
    parser.add_argument("--only-river", action="store_true", help="only the river timing")
    parser.add_argument("--repeats", type=int, default=7, help="turns of the river timing (the best counts)")
    args = parser.parse_args()
    if args.river or args.only_river:
        river_loop(repeats=args.repeats)
    if args.only_river:
        return
    d = pd.read_csv(DATA)
    ours = reproduce(d)
    cc_confseq = own_code(d, args.comparecast, args.own_T, ours) if args.comparecast else None
    confidence_sequences(d, cc_confseq)


if __name__ == "__main__":
    main()
