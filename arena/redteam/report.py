"""The red team's report: the attack table, the attack-versus-certificate figures and the cross-attack matrix.

:func:`report` reads every attack stored under a folder (``<results_root>/redteam/<game>/attacks``)
and writes, beside it, ``table.parquet`` / ``.csv`` / ``.md`` (:func:`arena.redteam.table.attack_table`),
``cross_attack`` (the same three) and ``figures/`` (PDF and PNG).

References
----------
The red team (README, "Red team").
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from arena.redteam.table import attack_table, cross_attack, read_attacks, worst_found

#: The columns of the Markdown attack table.
MD_COLUMNS = [
    "forecaster",
    "metric",
    "T",
    "seed",
    "searcher",
    "held_out",
    "value",
    "search_value",
    "certificate",
    "cert_bound",
    "cert_value",
    "cert_over_bound",
    "evaluations",
    "limit",
]


def _cell(v) -> str:
    if isinstance(v, float):
        return "—" if math.isnan(v) else f"{v:.4g}"  # NaN: no certificate
    return "—" if v is None else str(v)


def _write(df: pd.DataFrame, folder: Path, stem: str, columns: list[str] | None = None) -> None:
    """``stem`` as Parquet and CSV (:func:`arena.results.write_table`) and as Markdown."""
    from arena.plots.tables import _md_table
    from arena.results import write_table, write_text_atomic

    write_table(df, folder, stem)
    shown = df[columns] if columns else df
    rows = [[_cell(v) for v in row] for row in shown.itertuples(index=False)]
    align = "".join("r" if pd.api.types.is_numeric_dtype(shown[c]) else "l" for c in shown.columns)
    write_text_atomic("\n".join(_md_table(list(shown.columns), rows, align)), folder / f"{stem}.md")


def report(folder: str | Path, cross: bool = True, seeds=None) -> dict[str, Path]:
    """Write the tables and figures of the attacks stored under ``folder``; return the paths by name.
    The cross-attack matrix plays each attack on ``seeds`` (None: its held-out seeds)."""
    from arena.plots.redteam import attack_vs_certificate, cross_attack_heatmap
    from arena.plots.style import _save
    from arena.results import inside, safe_name

    folder = Path(folder)
    attacks = read_attacks(folder / "attacks")
    table = attack_table(attacks)
    out = {}
    if table.empty:
        return out
    _write(table, folder, "table", MD_COLUMNS)
    out["table"] = folder / "table.parquet"
    figs = inside(folder, folder / "figures")  # a figures/ link does not lead elsewhere
    figs.mkdir(exist_ok=True)
    for metric in sorted(table["metric"].astype(str).unique()):  # a stored attack's metric: a file name
        stem = figs / f"attack_vs_certificate__{safe_name(metric)}"
        _save(attack_vs_certificate(table, metric), stem, ("pdf", "png"))
        out[stem.name] = Path(f"{stem}.png")
    if cross:
        best = worst_found(table)
        parts = []
        for _, g in best.groupby(["metric", "T"]):
            if g["forecaster"].nunique() > 1:
                chosen = [a for a in attacks if a["file"] in set(g["file"])]
                parts.append(cross_attack(chosen, sorted(g["forecaster"].unique()), seeds))
        if parts:
            matrix = pd.concat(parts, ignore_index=True)
            _write(matrix, folder, "cross_attack")
            for (metric, T), g in matrix.groupby(["metric", "T"]):
                stem = figs / f"cross_attack__{safe_name(metric)}__T{safe_name(T)}"
                _save(cross_attack_heatmap(g), stem, ("pdf", "png"))
                out[stem.name] = Path(f"{stem}.png")
    return out
