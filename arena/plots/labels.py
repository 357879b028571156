"""What figures write: a user's names as they are, and what a title says of its rows (game, T, seeds).

Examples
--------
>>> heading(pd.DataFrame({"game": ["binary"], "T": [1000]}), "bias per round", "iid_bernoulli")
'binary, T = 1000: bias per round, iid bernoulli'
"""

from __future__ import annotations

import pandas as pd


def display_name(name: object) -> str:
    r"""A user's name (a forecaster, a nature) as figures write it: underscores as spaces, and a dollar sign
    as itself, not the start of mathtext.

    Examples
    --------
    >>> display_name("k29_rounded"), display_name("p$_1$")
    ('k29 rounded', 'p\\$ 1\\$')
    """
    return str(name).replace("_", " ").replace("$", "\\$")


def run_note(df: pd.DataFrame | None, seeds: bool = True) -> str:
    """What a figure's rows are: their game, horizon T and (with ``seeds``) how many seeds, for its title.

    Examples
    --------
    >>> run_note(pd.DataFrame({"game": "binary", "T": [200, 400], "seed": [0, 1]}))
    'binary, T = 200, 400, 2 seeds'
    >>> run_note(pd.DataFrame({"game": ["binary"], "T": [1000], "seed": [0]}), seeds=False)
    'binary, T = 1000'
    """
    if df is None or df.empty:
        return ""
    parts = []
    if "game" in df:
        parts += [" and ".join(sorted(df["game"].dropna().astype(str).unique()))]
    if "T" in df:
        Ts = sorted(pd.to_numeric(df["T"], errors="coerce").dropna().astype(int).unique())
        parts += ["T = " + ", ".join(map(str, Ts))] if Ts else []
    if seeds and ("seed" in df or "n_seeds" in df):  # a row per seed, or pooled over ``n_seeds`` of them
        n = df["seed"].nunique() if "seed" in df else pd.to_numeric(df["n_seeds"], errors="coerce").max()
        parts += [f"{int(n)} seed" + ("s" if n != 1 else "")] if pd.notna(n) else []
    return ", ".join(p for p in parts if p)


#: What a figure of curves against t shows, in its title.
CURVE_TITLES = {
    "smce": "smCE\u209c / t",
    "bias": "bias per round",
    "regret_linear": "regret to the best linear forecast",
    "regret_constant": "regret to the best constant forecast",
    "regret_experts": "regret to the best expert",
    "regret_decision_expected": "expected decision regret",
}


def heading(df: pd.DataFrame | None, what: str, nature: str | None = None) -> str:
    """A figure's title: the game and T of its rows, what it shows and on which nature (its seeds: the note
    that goes with it, :func:`_seed_note`)."""
    run = run_note(df, seeds=False)
    return (f"{run}: " if run else "") + what + (f", {display_name(nature)}" if nature else "")


__all__ = ["CURVE_TITLES", "display_name", "heading", "run_note"]
