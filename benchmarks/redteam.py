"""The red team's acceptance run: each forecaster's worst case searched at full budget, beside what the
shipped natures reach against it and beside its certificate.

Usage (from the repository root, in the project's environment with the ``redteam`` extra)::

    python benchmarks/redteam.py                     # every case, T = 1000, the default budget
    python benchmarks/redteam.py --only running_mean window_mean --budget 2000000
    python benchmarks/redteam.py --quick             # T = 200, 200,000 rounds a search: a smoke test

For every case it runs :func:`arena.redteam.search.search` (both searchers) and measures the
search's process CPU time (``time.process_time``: the machine may be shared, wall time is not
the budget). It plays every non-red-team nature of the game's shipped tournament (with their
grids and seeds) against the forecaster at the same T, and reports the largest value any of them
reaches. It prints a Markdown table, writes ``benchmarks/results/redteam.csv``, and stores the
attacks under ``--out`` (replayable as ``nature=redteam nature.path=FILE``).
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

#: (game, forecaster, metric, shipped tournament); the experts cases try each panel of PANELS.
CASES = [
    ("binary", f, "smce_over_T", "calibration")
    for f in ("running_mean", "window_mean", "ogd", "constant", "last_outcome", "k29", "k29_rounded", "kernel_df")
]
CASES += [("binary", "linear_df", "regret_linear", "calibration")]
CASES += [("experts", f, "regret_experts", "experts") for f in ("ftl", "hedge", "linf_df")]
CASES += [
    ("quantile", f, "coverage_error", "quantile")
    for f in (
        "aci",
        "quantile_ogd",
        "running_quantile",
        "window_quantile",
        "marginal_quantile_df",
        "conditional_quantile_df",
    )
]
PANELS = [{"name": "expert_constants", "params": {}}, {"name": "expert_constants", "params": {"grid": [0.0, 1.0]}}]


def _config(kind: str, name: str, params: dict | None = None):
    from hydra.utils import instantiate
    from omegaconf import OmegaConf

    cfg = OmegaConf.merge(OmegaConf.load(ROOT / "conf" / kind / f"{name}.yaml"), params or {})
    return instantiate(cfg, _convert_="all")


def _game(name: str):
    from omegaconf import OmegaConf

    from arena.games import get_game

    params = OmegaConf.to_container(OmegaConf.load(ROOT / "conf" / "game" / f"{name}.yaml"))
    return get_game(params.pop("name"), **params)


def shipped_natures(tournament: str) -> tuple[list[tuple[str, str, dict]], list[int]]:
    """(label, name, params) of every nature of a shipped tournament but the red team's, and its seeds."""
    from omegaconf import OmegaConf

    t = OmegaConf.to_container(OmegaConf.load(ROOT / "conf" / "tournament" / f"{tournament}.yaml"))["tournament"]
    out = []
    for e in t["natures"]:
        e = {"name": e} if isinstance(e, str) else e
        if e["name"] == "redteam":
            continue
        grid = e.get("grid") or {}
        for values in itertools.product(*grid.values()):
            params = {**(e.get("params") or {}), **dict(zip(grid, values, strict=True))}
            label = e.get("label") or e["name"] + "".join(f"_{k}{v}" for k, v in zip(grid, values, strict=True))
            out.append((label, e["name"], params))
    return out, list(t["seeds"])


def shipped_max(game, forecaster: str, metric: str, tournament: str, T: int) -> tuple[float, str]:
    """The largest mean over seeds of ``metric`` that a shipped nature reaches against the forecaster."""
    from arena.redteam.objective import value
    from arena.runner import play

    natures, seeds = shipped_natures(tournament)
    best, who = -np.inf, ""
    for label, name, params in natures:
        vals = [
            value(
                play(
                    game, _config("forecaster", forecaster), _config("nature", name, params), T, s, keep_forecasts=False
                ),
                metric,
                game,
            )
            for s in seeds
        ]
        if np.mean(vals) > best:
            best, who = float(np.mean(vals)), label
    return best, who


def own_bound(forecaster: str, game, T: int) -> float | None:
    """A forecaster's own deterministic bound on the metric, where the arena does not certify it.

    ACI (Gibbs & Candès 2021, Prop. 4.1): over the rounds after its burn-in, |miscoverage - alpha|
    <= (max(alpha_1, 1 - alpha_1) + gamma)/(gamma (T - burn_in)); counting the burn-in rounds as
    errors of at most 1 each bounds the coverage error over all T rounds by
    ((max(alpha_1, 1 - alpha_1) + gamma)/gamma + burn_in)/T.
    """
    if forecaster != "aci":
        return None
    fc = _config("forecaster", "aci")
    alpha = 1.0 - game.q
    return ((max(alpha, 1 - alpha) + fc.gamma) / fc.gamma + fc.burn_in) / T


def run_case(game_name, forecaster, metric, tournament, T, budget, seed, out: Path) -> dict:
    from arena.redteam.policy import save_attack
    from arena.redteam.search import MAX_CPU, search

    game = _game(game_name)
    start = time.process_time()
    panels = PANELS if game_name == "experts" else [None]
    attacks = []
    for panel in panels:
        attacks += search(
            game,
            _config("forecaster", forecaster),
            metric,
            T,
            seed,
            budget // len(panels),
            panel=panel,
            forecaster_params={},
            max_cpu=MAX_CPU / len(panels),
        )
    cpu = time.process_time() - start
    attacks.sort(key=lambda a: -a["value"])
    for a in attacks:
        a["forecaster"] = forecaster
    best = attacks[0]
    out.mkdir(parents=True, exist_ok=True)
    for i, a in enumerate(attacks):
        save_attack(a, out / f"{forecaster}__{metric}__T{T}__s{seed}__{a['searcher']}{i}.json")
    ship, who = shipped_max(game, forecaster, metric, tournament, T)
    cert = best["certificate"] or {}
    row = {
        "game": game_name,
        "forecaster": forecaster,
        "metric": metric,
        "T": T,
        "attack": best["value"],
        "searcher": best["searcher"],
        "other_searcher": attacks[1]["value"] if len(attacks) > 1 else np.nan,
        "shipped_max": ship,
        "shipped_nature": who,
        "attack_over_shipped": best["value"] / ship if ship > 0 else np.inf,
        "certificate": cert.get("name"),
        "cert_bound": cert.get("bound"),
        "own_bound": own_bound(forecaster, game, T),
        "search_cpu_s": round(cpu, 1),
    }
    print(" | ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()), flush=True)
    return row


def main() -> None:
    from arena.plots.tables import _md_table
    from arena.redteam.search import BUDGET

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--T", type=int, default=1000)
    ap.add_argument("--budget", type=int, default=BUDGET, help="rounds a search may simulate, per forecaster")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", nargs="*", help="forecasters to run (default: every case)")
    ap.add_argument("--quick", action="store_true", help="T = 200 and a budget of 200,000 rounds per search")
    ap.add_argument("--out", default=str(ROOT / "results" / "redteam-benchmark"))
    args = ap.parse_args()
    T, budget = (200, 200_000) if args.quick else (args.T, args.budget)
    rows = [
        run_case(g, f, m, t, T, budget, args.seed, Path(args.out))
        for g, f, m, t in CASES
        if not args.only or f in args.only
    ]
    df = pd.DataFrame(rows)
    dest = ROOT / "benchmarks" / "results" / ("redteam_quick.csv" if args.quick else "redteam.csv")
    dest.parent.mkdir(exist_ok=True)
    if not args.quick and args.only and dest.is_file():  # a partial rerun updates its rows
        old = pd.read_csv(dest)
        df = pd.concat([old.loc[~old["forecaster"].isin(df["forecaster"])], df], ignore_index=True)
    df.to_csv(dest, index=False)
    shown = df.drop(columns=["T"])
    rows = [[f"{v:.4g}" if isinstance(v, float) else v for v in r] for r in shown.itertuples(index=False)]
    print("\n".join(_md_table(list(shown.columns), rows, "l" * len(shown.columns))))


if __name__ == "__main__":
    main()
