"""What searches leave, as tables: attack versus certificate, and the cross-attack matrix.

Pure functions of stored attacks (the JSON files ``arena-redteam`` writes) and data frames:

- :func:`attack_table`: one row per attack: the value reached on held-out seeds (a lower bound on
  the forecaster's worst case at that T) beside the value on the search seeds and the certified
  upper bound of the same held-out runs where the forecaster claims one, and ``cert_over_bound``,
  the certified quantity over its bound (means over those runs; at most 1; the same as value /
  bound, except where the certificate is about another quantity: ``k29_rounded``'s smCE
  certificate is about its unrounded forecasts);
- :func:`cross_attack`: the attack found against A played against every B (same game, metric,
  T, on the attack's held-out seeds): how much of a worst case transfers.

References
----------
The red team (README, "Red team"); certificates: docs/ERRATA.md.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from arena.redteam.policy import check_attack

#: The columns of :func:`attack_table`.
COLUMNS = [
    "game",
    "forecaster",
    "metric",
    "T",
    "seed",
    "searcher",
    "kind",
    "value",
    "search_value",
    "certificate",
    "cert_value",
    "cert_bound",
    "cert_over_bound",
    "held_out",
    "evaluations",
    "limit",
    "cpu_seconds",
    "file",
]

#: The columns of :func:`cross_attack`.
CROSS_COLUMNS = ["game", "attacker", "searcher", "victim", "metric", "T", "seeds", "value"]


def limit(attack: dict) -> str:
    """Which limit stopped the search: ``time`` (the wall-clock cap), ``budget``, or ``none``."""
    return "time" if attack.get("time_bound") else "budget" if attack.get("budget_bound") else "none"


def _seeds(seeds: list[int] | None) -> str | None:
    """Seeds as text: a run of consecutive seeds as a range, others listed; None for none.

    Examples
    --------
    >>> _seeds([1, 2, 3]), _seeds([4]), _seeds([0, 5]), _seeds([])
    ('1-3', '4', '0, 5', None)
    """
    if not seeds:
        return None
    if len(seeds) > 1 and list(seeds) == list(range(seeds[0], seeds[-1] + 1)):
        return f"{seeds[0]}-{seeds[-1]}"
    return ", ".join(map(str, seeds))


def read_attacks(folder: str | Path) -> list[dict]:
    """Every stored attack under ``folder`` (recursively), each with its ``file``."""
    out = []
    for file in sorted(Path(folder).rglob("*.json")):
        try:
            attack = check_attack(json.loads(file.read_text()), str(file))
        except (ValueError, RecursionError, OSError):
            continue  # not an attack (a plan, a config): skipped
        out.append({**attack, "file": str(file)})
    return out


def attack_table(attacks: list[dict]) -> pd.DataFrame:
    """One row per attack (:data:`COLUMNS`), sorted by game, metric, forecaster, T, value (held out).

    Examples
    --------
    >>> a = {"game": "binary", "forecaster": "k29", "metric": "smce_over_T", "T": 1000, "seed": 0,
    ...      "searcher": "cma", "kind": "policy", "value": 0.02, "search_value": 0.021,
    ...      "certificate": {"name": "smce", "value": 0.02, "bound": 0.08}}
    >>> attack_table([a])[["forecaster", "value", "cert_bound", "cert_over_bound"]].values.tolist()
    [['k29', 0.02, 0.08, 0.25]]
    """
    rows = []
    for a in attacks:
        cert = a.get("certificate") or {}
        bound = cert.get("bound")
        rows.append(
            {
                "game": a.get("game"),
                "forecaster": a.get("forecaster"),
                "metric": a.get("metric"),
                "T": a.get("T"),
                "seed": a.get("seed"),
                "searcher": a.get("searcher"),
                "kind": a.get("kind"),
                "value": a.get("value"),
                "search_value": a.get("search_value"),
                "certificate": cert.get("name"),
                "cert_value": cert.get("value"),
                "cert_bound": bound,
                "cert_over_bound": cert["value"] / bound if bound else np.nan,
                "held_out": _seeds((a.get("held_out") or {}).get("seeds")),
                "evaluations": a.get("evaluations"),
                "limit": limit(a),
                "cpu_seconds": a.get("cpu_seconds"),
                "file": a.get("file"),
            }
        )
    df = pd.DataFrame(rows, columns=COLUMNS)
    return df.sort_values(
        ["game", "metric", "forecaster", "T", "value"], ascending=[True, True, True, True, False], ignore_index=True
    )


def worst_found(table: pd.DataFrame) -> pd.DataFrame:
    """Per (metric, forecaster, T): the attack that reached the most (the best lower bound)."""
    if table.empty:
        return table
    idx = table.groupby(["metric", "forecaster", "T"])["value"].idxmax()
    return table.loc[idx].reset_index(drop=True)


def cross_attack(attacks: list[dict], victims: list[str], seeds=None) -> pd.DataFrame:
    """Each attack played against every forecaster in ``victims`` (same game, metric and T), mean over ``seeds``
    (None: the attack's held-out seeds, or its seed where it has none).

    Columns: :data:`CROSS_COLUMNS`: ``attacker`` (the forecaster the attack was found against),
    ``searcher``, ``victim``, ``seeds`` (the seeds played, as text: "1-8"), ``value``. A victim that does not
    play the attack's game is left out.
    """
    from arena.games import get_game, plays
    from arena.redteam.search import evaluate
    from arena.registry import forecaster_class

    rows = []
    for a in attacks:
        game = get_game(a["game"], **(a.get("game_params") or {}))
        for v in victims:
            if not plays(game, forecaster_class(v)):
                continue
            held = (a.get("held_out") or {}).get("seeds") or [a.get("seed", 0)]
            played = [int(s) for s in (held if seeds is None else seeds)]
            vals = [evaluate(a, v, a["metric"], s, game=game)[0] for s in played]
            rows.append(
                {
                    "game": a["game"],
                    "attacker": a["forecaster"],
                    "searcher": a["searcher"],
                    "victim": v,
                    "metric": a["metric"],
                    "T": a["T"],
                    "seeds": _seeds(played),
                    "value": float(np.mean(vals)),
                }
            )
    return pd.DataFrame(rows, columns=CROSS_COLUMNS)
