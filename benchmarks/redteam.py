"""The red team's acceptance run: each forecaster's worst case searched at full budget, beside what the
shipped natures reach against it and beside its certificate.

Usage (from the repository root, in the project's environment with the ``redteam`` extra)::

    python benchmarks/redteam.py                     # every case, T = 1000, the default budget
    python benchmarks/redteam.py --only running_mean window_mean --budget 2000
    python benchmarks/redteam.py --quick             # T = 200, 500 evaluations a searcher: a smoke test

For every case it runs :func:`arena.redteam.search.search` (both searchers; the budget counts
evaluations, so the numbers do not depend on the machine) and reports the held-out value of each
searcher's attack, whether the planner beat CMA-ES and whether it fell below the best of its base
policies (all measured on the same held-out seeds), and the search's process CPU time. It plays
every non-red-team nature of the game's shipped tournament (with their
grids and seeds) against the forecaster at the same T, and reports the largest value any of them
reaches. It prints a Markdown table, writes ``benchmarks/results/redteam.csv``, and stores the
attacks under ``--out`` (replayable as ``nature=redteam nature.path=FILE``).
"""

from __future__ import annotations

import argparse
import itertools
import json
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
#: Values closer than this (relative) are a tie, not a win.
TIE = 1e-9
#: The forecasters whose CMA-ES attack ships in adversaries/data/redteam/ (``--ship``).
SHIPPED = ("running_mean", "window_mean", "ogd", "k29")


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
    """A forecaster's own deterministic bound on the metric over the whole run (the arena's ``aci_coverage``
    certifies the rounds after the burn-in; this counts the burn-in too).

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


def _base_values(best_of: dict, game, forecaster: str, metric: str, panel) -> float:
    """The best held-out value of the planner's base policies: the CMA-ES policy and every fixed policy."""
    from arena.redteam.search import _policy, fixed_policies, measure

    cma, seeds = best_of["cma"], best_of["cma"]["held_out"]["seeds"]
    values = [cma["value"]]
    for theta in fixed_policies(game.name).values():
        a = _policy(game, theta, cma["T"], 1.0, panel)
        values.append(measure(a, _config("forecaster", forecaster), metric, seeds, {}, game)["value"])
    return max(values)


def run_case(game_name, forecaster, metric, tournament, T, budget, seed, out: Path, ship: bool) -> list[dict]:
    """One row per search (the experts cases: one per panel) with both searchers' held-out values."""
    from arena.redteam.policy import save_attack
    from arena.redteam.search import search
    from arena.redteam.table import limit

    game = _game(game_name)
    panels = PANELS if game_name == "experts" else [None]
    ship_value, ship_who = shipped_max(game, forecaster, metric, tournament, T)
    rows = []
    for k, panel in enumerate(panels):
        start = time.process_time()
        attacks = search(
            game,
            _config("forecaster", forecaster),
            metric,
            T,
            seed,
            budget // len(panels),
            "both",
            panel=panel,
            forecaster_params={},
        )
        cpu = time.process_time() - start
        by = {a["searcher"]: a for a in attacks}
        folder = out / game_name / "attacks"
        folder.mkdir(parents=True, exist_ok=True)
        for a in attacks:
            a["forecaster"] = forecaster
            save_attack(a, folder / f"{forecaster}__{metric}__T{T}__s{seed}__{a['searcher']}__p{k}.json")
        if ship and game_name == "binary" and forecaster in SHIPPED:
            save_attack(by["cma"], ROOT / "adversaries" / "data" / "redteam" / f"{forecaster}.json")
        best, cert = attacks[0], attacks[0]["certificate"] or {}
        base = _base_values(by, game, forecaster, metric, panel)
        row = {
            "game": game_name,
            "forecaster": forecaster,
            "panel": "" if panel is None else json.dumps(panel["params"].get("grid", "default")),
            "metric": metric,
            "T": T,
            "attack": best["value"],
            "search_value": best["search_value"],
            "searcher": best["searcher"],
            "randomized": best["randomized"],
            "cma": by["cma"]["value"],
            "planner": by["planner"]["value"],
            "planner_best_base": base,
            "planner_wins": by["planner"]["value"] > by["cma"]["value"] + TIE * abs(by["cma"]["value"]),
            "planner_below_base": by["planner"]["value"] < base - TIE * abs(base),
            "shipped_max": ship_value,
            "shipped_nature": ship_who,
            "attack_over_shipped": best["value"] / ship_value if ship_value > 0 else np.inf,
            "certificate": cert.get("name"),
            "cert_bound": cert.get("bound"),
            "own_bound": own_bound(forecaster, game, T),
            "limit_cma": limit(by["cma"]),
            "limit_planner": limit(by["planner"]),
            "search_cpu_s": round(cpu, 1),
        }
        print(" | ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()), flush=True)
        rows.append(row)
    return rows


def main() -> None:
    from arena.plots.tables import _md_table
    from arena.redteam.search import BUDGET

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--T", type=int, default=1000)
    ap.add_argument("--budget", type=int, default=BUDGET, help="evaluations (games of T rounds) per searcher")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", nargs="*", help="forecasters to run (default: every case)")
    ap.add_argument("--quick", action="store_true", help="T = 200 and a budget of 500 evaluations per searcher")
    ap.add_argument("--ship", action="store_true", help="store the CMA-ES attacks of SHIPPED in adversaries/")
    ap.add_argument("--out", default=str(ROOT / "results" / "redteam-benchmark"))
    ap.add_argument("--csv", help="the table to write (default: benchmarks/results/redteam.csv)")
    args = ap.parse_args()
    T, budget = (200, 500) if args.quick else (args.T, args.budget)
    rows = [
        row
        for g, f, m, t in CASES
        if not args.only or f in args.only
        for row in run_case(g, f, m, t, T, budget, args.seed, Path(args.out), args.ship)
    ]
    df = pd.DataFrame(rows)
    dest = Path(args.csv) if args.csv else ROOT / "benchmarks" / "results" / f"redteam{'_quick' * args.quick}.csv"
    dest.parent.mkdir(exist_ok=True)
    if not args.quick and args.only and dest.is_file():  # a partial rerun updates its rows
        old = pd.read_csv(dest)
        df = pd.concat([old.loc[~old["forecaster"].isin(df["forecaster"])], df], ignore_index=True)
    df.to_csv(dest, index=False)
    shown = df.drop(columns=["T"])
    rows = [[f"{v:.4g}" if isinstance(v, float) else v for v in r] for r in shown.itertuples(index=False)]
    print("\n".join(_md_table(list(shown.columns), rows, "l" * len(shown.columns))))
    wins, below = int(df["planner_wins"].sum()), int(df["planner_below_base"].sum())
    print(f"planner above CMA-ES (held out) in {wins} of {len(df)} searches; below its best base in {below}")


if __name__ == "__main__":
    main()
