"""Tables of results: LaTeX (booktabs, best in bold) and the Markdown summary of a results directory.

Pure functions of the ``summary`` table of :mod:`arena.results`; the statistics are those of
:mod:`arena.aggregate` (means over seeds, then over natures, with 95% Student-t intervals).
Forecasters come in :func:`arena.plots.style.order`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pandas as pd

from arena.aggregate import direction, leaderboard, paired, seed_stats, single_matchup
from arena.answer import headline_metrics, measured, verdicts
from arena.plots.common import _last_T, _of_game
from arena.plots.style import METRIC_LABELS, _fmt, _pm, order

#: LaTeX's ten special characters (and < > |, which text fonts without T1 encoding print as other glyphs) as text.
_TEX = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "#": r"\#",
    "$": r"\$",
    "%": r"\%",
    "&": r"\&",
    "_": r"\_",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
}
_TEX_RE = re.compile("|".join(map(re.escape, _TEX)))


def tex_escape(s) -> str:
    r"""``s`` as LaTeX text: every special character printed as itself, so a label never runs a command.

    Examples
    --------
    >>> print(tex_escape("\\input{/etc/passwd} 50% a_b"))
    \textbackslash{}input\{/etc/passwd\} 50\% a\_b
    """
    return _TEX_RE.sub(lambda m: _TEX[m.group()], " ".join(str(s).split()))


def _tex_head(metric: str) -> str:
    """A column head: the metric's own LaTeX label (with math) when it has one, else its name as text."""
    label = METRIC_LABELS.get(metric)
    return label if label is not None and "$" in label else tex_escape(label or metric)


def md_escape(s) -> str:
    r"""``s`` as Markdown text: no HTML (< and > as entities), no table cell break, code span or link.

    Examples
    --------
    >>> md_escape("<b>x</b> | [a](b) `c`")
    '&lt;b&gt;x&lt;/b&gt; \\| [a]\\(b) \\`c\\`'
    """
    s = " ".join(str(s).split()).replace("\\", "\\\\")
    for a, b in (("<", "&lt;"), (">", "&gt;"), ("|", "\\|"), ("`", "\\`"), ("](", "]\\(")):
        s = s.replace(a, b)
    return s


def md_code(s) -> str:
    """``s`` as a Markdown code span (shown literally), fenced by more backticks than it holds in a row.

    Examples
    --------
    >>> md_code("a`b")
    '``a`b``'
    """
    s = " ".join(str(s).split())
    fence = "`" * (max((len(r) for r in re.findall("`+", s)), default=0) + 1)
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def latex_table(
    summary: pd.DataFrame,
    metrics: Sequence[str] = ("smce_over_T", "brier", "bias"),
    by_nature: bool = False,
    caption: str | None = None,
    label: str | None = None,
) -> str:
    """A booktabs table of one game's forecasters, the best entry of each column in bold.

    An entry is the forecaster's mean over natures of its seed means
    (:func:`arena.aggregate.leaderboard`) or, ``by_nature``, its mean over seeds on each nature
    (:func:`arena.aggregate.seed_stats`), then ``$\\pm$`` the half-width of the 95% interval
    where there are several seeds, in one format per column (the decimals that give its smallest mean three
    significant digits). Rows by rank on the first metric (best first). Bold: the best in the metric's direction
    (:func:`arena.aggregate.direction`; none for a metric that is not ranked), and every
    entry that ties with it at the shown precision. Forfeited matchups are left out;
    metrics absent from ``summary`` are skipped; with several horizons T, the largest.

    Parameters
    ----------
    summary : one row per matchup (forecaster, nature, seed, metrics..., status) of one game.
    metrics : columns of the table.
    by_nature : one row per forecaster x nature instead (best per nature in bold).
    caption, label : wrap the tabular in a ``table`` environment with these.

    Examples
    --------
    >>> s = pd.DataFrame({"forecaster": ["a", "a", "b"], "nature": "n", "brier": [0.2, 0.4, 0.25]})
    >>> print(latex_table(s, ["brier"]))  # doctest: +NORMALIZE_WHITESPACE
    \\begin{tabular}{lr}
    \\toprule
    forecaster & Brier \\\\
    \\midrule
    b & \\textbf{0.250} \\\\
    a & 0.300 $\\pm$ 1.271 \\\\
    \\bottomrule
    \\end{tabular}
    """
    metrics = [m for m in metrics if summary is not None and m in summary]
    keys = ["nature", "forecaster"] if by_nature else ["forecaster"]
    head = [*("forecaster", "nature")[: len(keys)], *(_tex_head(m) for m in metrics)]
    lines = [
        f"\\begin{{tabular}}{{{'l' * len(keys)}{'r' * len(metrics)}}}",
        "\\toprule",
        " & ".join(head) + " \\\\",
        "\\midrule",
    ]
    stats = pd.DataFrame()
    if metrics and not summary.empty:
        df = _last_T(summary)
        stats = seed_stats(df, metrics) if by_nature else leaderboard(df, metrics)
        stats = stats.loc[np.isfinite(stats["mean"])]
    if not stats.empty:
        table = stats.set_index([*keys, "metric"])[["mean", "half"]].unstack("metric")
        groups = table.groupby(level="nature", sort=True) if by_nature else [(None, table)]
        # one format per column, every nature's block alike
        places = {m: _decimals(table["mean"][m]) if m in table["mean"] else 2 for m in metrics}
        for g, (_, part) in enumerate(groups):
            if by_nature and g:
                lines.append("\\midrule")
            best = {m: _best(part["mean"][m], m) if m in part["mean"] else np.nan for m in metrics}
            for idx in _sorted_index(part, by_nature, metrics):
                row = [tex_escape(idx[1]), tex_escape(idx[0])] if by_nature else [tex_escape(idx)]
                for m in metrics:
                    v, h = (part.loc[idx, (c, m)] if m in part[c] else np.nan for c in ("mean", "half"))
                    shown, top = (_fixed(x, places[m]) for x in (v, best[m]))
                    bold = np.isfinite(v) and np.isfinite(best[m]) and shown == top
                    shown += f" $\\pm$ {_fixed(h, places[m])}" if np.isfinite(h) else ""
                    row.append(f"\\textbf{{{shown}}}" if bold else shown)
                lines.append(" & ".join(row) + " \\\\")
    lines += ["\\bottomrule", "\\end{tabular}"]
    out = "\n".join(lines)
    if caption is not None or label is not None:
        extra = ([f"\\caption{{{caption}}}"] if caption else []) + ([f"\\label{{{label}}}"] if label else [])
        out = "\n".join(["\\begin{table}", "\\centering", out, *extra, "\\end{table}"])
    return out


def _best(values: pd.Series, metric: str) -> float:
    """The best of ``values`` in the metric's direction (NaN when it is not ranked)."""
    way = direction(metric)
    return values.min() if way == "min" else values.max() if way == "max" else np.nan


def _decimals(means: pd.Series) -> int:
    """The decimals of a table's column: one format for every entry, three significant digits for the smallest.

    Examples
    --------
    >>> _decimals(pd.Series([0.27, 0.0195, 0.2])), _decimals(pd.Series([120.0, 5.0])), _decimals(pd.Series([0.0]))
    (4, 2, 2)
    """
    a = np.abs(means.to_numpy(float))
    a = a[np.isfinite(a) & (a > 0)]
    return int(np.clip(2 - np.floor(np.log10(a.min())), 0, 6)) if a.size else 2


def _fixed(v: float, places: int) -> str:
    """``v`` with ``places`` decimals ("--" when not finite)."""
    return f"{v:.{places}f}" if np.isfinite(v) else "--"


def _sorted_index(part: pd.DataFrame, by_nature: bool, metrics: Sequence[str] = ()) -> list:
    """Index entries of ``part`` by rank on the first ranked metric (best first; ties and unranked: by name)."""
    names = order(part.index.get_level_values("forecaster"))
    ranked = [m for m in metrics if direction(m) is not None and m in part["mean"]]
    if ranked:
        m = ranked[0]
        mean = part["mean"][m].groupby(level="forecaster").first()
        sign = -1.0 if direction(m) == "max" else 1.0
        names = sorted(names, key=lambda n: (not np.isfinite(mean.get(n, np.nan)), sign * mean.get(n, np.inf), n))
    if not by_nature:
        return names
    nature = part.index.get_level_values("nature")[0]
    return [(nature, n) for n in names]


def _md_table(header: Sequence[str], rows: Iterable[Sequence], align: str) -> list[str]:
    """A Markdown table (``align``: one of l, r per column); every cell is Markdown text (:func:`md_escape`)."""

    sep = ["---:" if a == "r" else "---" for a in align]
    return [
        "| " + " | ".join(map(md_escape, header)) + " |",
        "| " + " | ".join(sep) + " |",
        *("| " + " | ".join(md_escape(v) for v in row) + " |" for row in rows),
        "",
    ]


def _md_leaderboard(board: pd.DataFrame, metric: str, mix: pd.DataFrame) -> list[str]:
    """One metric's leaderboard: mean ± interval (or "exact"), the worst case over natures and the
    minimax weight (``mix``: :func:`arena.minimax.minimax_table` rows of this metric)."""
    way = {"min": "lower is better", "max": "higher is better"}.get(direction(metric), "not ranked")
    weight = mix.loc[mix["side"] == "forecaster"].set_index("name")["weight"] if not mix.empty else pd.Series()
    rows = [
        (
            r["rank"],
            r["forecaster"],
            _pm(r["mean"], r["half"], " ± ") + (" (exact)" if r["exact"] else ""),
            f"{r['mean_rank']:.2f}",
            r["n_natures"],
            _fmt(r["worst"]),
            r["worst_nature"] if pd.notna(r["worst"]) else "",
            _fmt(weight.get(r["forecaster"], np.nan), 2),
        )
        for _, r in board.iterrows()
    ]
    head = [f"#### {md_escape(METRIC_LABELS.get(metric, metric))} ({md_code(metric)}, {way})", ""]
    table = _md_table(
        [
            "rank",
            "forecaster",
            "mean ± 95% CI",
            "mean rank over natures",
            "natures",
            "worst case",
            "worst nature",
            "minimax weight",
        ],
        rows,
        "rlrrrrlr",
    )
    if mix.empty:
        return [*head, *table]
    natures = mix.loc[(mix["side"] == "nature") & (mix["weight"] > 1e-9)].sort_values("weight", ascending=False)
    worst = ", ".join(f"{md_escape(n)} {w:.2f}" for n, w in zip(natures["name"], natures["weight"], strict=False))
    return [
        *head,
        *table,
        f"Value of the forecaster x nature game: {_fmt(mix['value'].iloc[0])}; worst mixture of natures: {worst}.",
        "",
    ]


def _md_top_paired(
    summary: pd.DataFrame, metric: str, board: pd.DataFrame, pairs: pd.DataFrame | None = None, top: int = 2
) -> list[str]:
    """The best forecaster against the next ``top`` of the leaderboard, nature by nature: where the
    best is better, where worse (95% paired interval over seeds excludes 0, or an exact difference,
    marked "exact"), and how many natures are undecided. ``summary``: the rows of one game and T;
    ``pairs``: the :func:`~arena.aggregate.paired` table of every game, T and metric, when there is one."""
    names = board["forecaster"].tolist()
    if len(names) < 2 or direction(metric) is None:  # better and worse need a direction
        return []
    best, lower, shown = names[0], direction(metric) == "min", names[: 1 + top]
    if pairs is None:  # the pairs of these forecasters only: each pair's differences are its two forecasters' rows
        pairs = paired(summary.loc[summary["forecaster"].isin(shown)], metric)
    p = pairs.loc[(pairs["metric"] == metric) & pairs["forecaster_a"].isin(shown) & pairs["forecaster_b"].isin(shown)]
    for key in ("game", "T"):  # this game and T's
        if key in p and key in summary and len(summary):
            p = p.loc[p[key] == summary[key].iloc[0]]
    rows = []
    for other in names[1 : 1 + top]:
        pair = p.loc[
            ((p["forecaster_a"] == best) & (p["forecaster_b"] == other))
            | ((p["forecaster_a"] == other) & (p["forecaster_b"] == best))
        ]
        diff = np.where(pair["forecaster_a"] == best, 1.0, -1.0) * pair["mean_diff"]  # best - other
        better = pair["significant"] & ((diff < 0) == lower)
        worse = pair["significant"] & ~better

        def names_of(mask, pair=pair) -> str:
            part = pair.loc[mask].sort_values("nature") if "nature" in pair else pair.loc[mask]
            natures = part["nature"] if "nature" in part else [""] * len(part)
            return ", ".join(f"{n}" + (" (exact)" if e else "") for n, e in zip(natures, part["exact"], strict=False))

        rows.append((other, names_of(better) or "none", names_of(worse) or "none", int((~pair["significant"]).sum())))
    return [
        f"Top comparisons: {md_code(best)} against the next {len(rows)} (paired by seed; 95% interval over seeds "
        "excluding 0, or an exact difference of seed-invariant matchups; every pair, nature and metric: "
        "`paired.csv`):",
        "",
        *_md_table(
            ["forecaster", f"natures where {best} is better", f"natures where {best} is worse", "undecided"],
            rows,
            "lllr",
        ),
    ]


def _md_sequential(comparisons: pd.DataFrame | None, game: str | None, T) -> list[str]:
    """The anytime-valid comparison of the top pair (:func:`arena.compare.top_pairs`) at this game and T."""
    if comparisons is None or comparisons.empty or "game" not in comparisons:
        return []
    c = comparisons.loc[(comparisons["game"] == game) & (comparisons["T"] == T)]
    if c.empty:
        return []
    first = c.iloc[0]
    if "error" in c and isinstance(first.get("error"), str) and first["error"]:
        return [
            f"Anytime-valid comparison of {md_code(first['forecaster_a'])} and {md_code(first['forecaster_b'])}: "
            f"not available ({md_escape(first['error'])}).",
            "",
        ]
    rows = [
        (
            r["nature"],
            r["seed"],
            _fmt(r["mean"]),
            f"[{_fmt(r['low'])}, {_fmt(r['high'])}]",
            _fmt(r["e_a_better"]),
            _fmt(r["e_b_better"]),
            r["verdict"] + (f" at t = {int(r['decided_at'])}" if np.isfinite(r["decided_at"]) else ""),
            r["pairing"],
        )
        for _, r in c.iterrows()
    ]
    return [
        f"#### Anytime-valid: {md_code(first['forecaster_a'])} (A) vs {md_code(first['forecaster_b'])} (B), "
        f"{md_escape(first['metric'])} per round",
        "",
        "Confidence sequence (95%, valid at every round at once) for the running mean of A's score minus "
        'B\'s, and e-values against "A is no better than B" and the reverse, at the last round (a verdict '
        "at the first round where one reaches 20); "
        "all natures and seeds, curves and figure: "
        + md_code(f"arena-compare DIR {first['forecaster_a']} {first['forecaster_b']}")
        + ".",
        "",
        *_md_table(
            ["nature", "seed", "A - B", "95% CS", "e(A better)", "e(B better)", "verdict", "pairing"], rows, "lrrrrrll"
        ),
    ]


def _md_certificates(summary: pd.DataFrame) -> list[str]:
    """Per forecaster and certificate: how many runs it holds, fails and does not apply to, the natures
    where it fails with the worst value/bound, and why it does not apply."""

    rows = []
    for col in (c for c in summary.columns if str(c).startswith("cert.") and str(c).endswith(".holds")):
        name = str(col)[5:-6]
        verdict = verdicts(summary, name)
        read = ["forecaster", "nature", *(f"cert.{name}.{k}" for k in ("value", "bound", "reason"))]
        done = summary.loc[verdict.notna(), [c for c in read if c in summary]]  # the runs whose forecaster claimed it
        verdict = verdict.loc[done.index]
        for fc in order(done["forecaster"].unique()):
            mine = done["forecaster"] == fc
            fails = done.loc[mine & (verdict == "fails")]
            na = done.loc[mine & (verdict == "n/a")]
            worst = ""
            if len(fails) and f"cert.{name}.value" in fails and f"cert.{name}.bound" in fails:
                with np.errstate(divide="ignore", invalid="ignore"):
                    r = pd.to_numeric(fails[f"cert.{name}.value"], errors="coerce") / pd.to_numeric(
                        fails[f"cert.{name}.bound"], errors="coerce"
                    )
                worst = _fmt(float(r.max())) if r.notna().any() else ""
            why = (
                str(na[f"cert.{name}.reason"].dropna().iloc[0])
                if len(na) and f"cert.{name}.reason" in na and na[f"cert.{name}.reason"].notna().any()
                else ""
            )
            rows.append(
                (
                    fc,
                    name,
                    int((mine & (verdict == "holds")).sum()),
                    len(fails),
                    len(na),
                    ", ".join(sorted(fails["nature"].astype(str).unique())) if "nature" in fails else "",
                    worst,
                    why,
                )
            )
    if not rows:
        return ["No certificates.", ""]
    rows.sort(key=lambda r: (order(summary["forecaster"].unique()).index(r[0]), r[1]))
    total = [
        f"{sum(r[2] for r in rows)} hold, {sum(r[3] for r in rows)} fail, {sum(r[4] for r in rows)} not applicable.",
        "",
    ]
    if not any(r[4] for r in rows):  # no certificate was not applicable: keep the table narrow
        rows = [r[:4] + r[5:7] for r in rows]
        return [
            *total,
            *_md_table(
                ["forecaster", "certificate", "holds", "fails", "natures where it fails", "worst value/bound"],
                rows,
                "llrrlr",
            ),
        ]
    return [
        *total,
        *_md_table(
            [
                "forecaster",
                "certificate",
                "holds",
                "fails",
                "n/a",
                "natures where it fails",
                "worst value/bound",
                "why not applicable",
            ],
            rows,
            "llrrrlrl",
        ),
    ]


def _md_forfeits(summary: pd.DataFrame) -> list[str]:
    cols = ["forecaster", "nature", "seed", "T", "forfeit_who", "forfeit_step", "forfeit_reason"]
    # the columns first, then the rows: rows of the whole table would gather each type's columns into one block
    f = summary.reindex(columns=cols)
    f = f.loc[summary["status"] == "forfeit"] if "status" in summary else f.iloc[:0]
    if f.empty:
        return ["None.", ""]
    rows = f.fillna("").astype(str).itertuples(index=False)
    return _md_table(["forecaster", "nature", "seed", "T", "who", "step", "reason"], rows, "llrrlrl")


def game_stats(
    summary: pd.DataFrame, game: str | None, metrics: Sequence[str], stats: pd.DataFrame | None = None
) -> pd.DataFrame:
    """:func:`~arena.aggregate.seed_stats` of ``metrics`` of one game's ``summary``: the rows of the game and
    metrics in ``stats`` (the whole summary's, as a results directory holds it), else computed."""
    if not metrics:
        return pd.DataFrame()
    if stats is None:
        return seed_stats(summary, metrics)
    st = _of_game(stats, game) if game is not None else stats
    return st.loc[st["metric"].isin(list(metrics))].reset_index(drop=True)


def markdown_summary(
    summary: pd.DataFrame,
    files: Sequence[Path] = (),
    root: Path | str | None = None,
    leaderboard_metrics: Sequence[str] = ("smce_over_T", "brier", "bias"),
    comparisons: pd.DataFrame | None = None,
) -> str:
    """A Markdown summary of a results table that reads in a minute, per game and horizon T:

    - the leaderboard of each headline metric (:data:`arena.answer.HEADLINE_METRICS`,
      :func:`arena.aggregate.leaderboard`): mean over natures ± the half-width of its 95%
      interval ("exact" when every nature's matchup is seed-invariant), the worst case over
      natures with the nature attaining it, and the weight of the forecaster in the minimax
      mixture of the forecaster x nature game (:func:`arena.minimax.minimax_table`), with the
      value of the game and the worst mixture of natures;
    - the top comparisons: the best forecaster against the next two, nature by nature
      (:func:`arena.aggregate.paired`; the full table is ``paired.csv``);
    - the anytime-valid comparison of the top pair (``comparisons``: rows of
      :func:`arena.compare.top_pairs`), when given;

    then, per game, the certificates' verdict counts and the forfeits, and links to ``files``
    (figures as PDF and PNG, tables), relative to ``root``. In two steps: :func:`markdown_body` (the
    tables: a report makes it while its comparison is under way) and :func:`markdown_page`.

    Examples
    --------
    >>> s = pd.DataFrame({"game": "binary", "forecaster": ["a", "b"], "nature": "n", "seed": 0, "T": 10,
    ...                   "status": ["ok", "forfeit"], "forfeit_who": ["", "forecaster"], "forfeit_step": [-1, 3],
    ...                   "forfeit_reason": ["", "p = 2 out of [0, 1]"], "brier": [0.2, np.nan]})
    >>> md = markdown_summary(s)
    >>> "| 1 | a | 0.2 | 1.00 | 1 | 0.2 | n | 1 |" in md
    True
    >>> "| b | n | 0 | 10 | forecaster | 3 | p = 2 out of [0, 1] |" in md
    True
    """
    return markdown_page(markdown_body(summary, leaderboard_metrics), files, root, comparisons)


def markdown_body(
    summary: pd.DataFrame,
    leaderboard_metrics: Sequence[str] = ("smce_over_T", "brier", "bias"),
    stats: pd.DataFrame | None = None,
    pairs: pd.DataFrame | None = None,
) -> list[str | tuple]:
    """The lines of :func:`markdown_summary` but its files, with a ``(game, T)`` in place of each anytime-valid
    comparison of the top pair (:func:`markdown_page` fills them in). ``stats`` and ``pairs``: the summary's
    :func:`~arena.aggregate.seed_stats` and :func:`~arena.aggregate.paired` tables as a results directory holds
    them (``seed_stats`` and ``paired``), when they are; else they are computed from ``summary``."""
    from arena.minimax import minimax_table

    n_forfeit = int((summary["status"] == "forfeit").sum()) if "status" in summary else 0
    lines = [
        "# Results summary",
        "",
        (
            f"{len(summary)} matchups ({n_forfeit} forfeited, left out of the statistics). Means are over "
            "seeds, then over natures; ± is the half-width of the 95% Student-t interval across seeds "
            "(natures fixed, seeds random; none with one seed). A matchup whose every seed gave the same "
            "values (seed-invariant: e.g. a deterministic forecaster against a deterministic nature or a "
            "replayed series) counts once: its value is exact, with no interval. Worst case: the largest "
            "(for higher-is-better metrics, smallest) seed mean over natures. Minimax weight: the "
            "forecaster's probability in the mixture that minimizes the worst case over mixtures of "
            "natures. Paired comparisons pair runs by seed: the same outcomes from an oblivious nature, "
            "the same random numbers from an adaptive one."
        ),
        "",
    ]
    games = sorted(summary["game"].dropna().astype(str).unique()) if "game" in summary else [None]
    for game in games:
        s = _of_game(summary, game)
        metrics = headline_metrics(game, measured(s), leaderboard_metrics)
        st = game_stats(s, game, metrics, stats)
        board = leaderboard(s, metrics, stats=st) if metrics else pd.DataFrame(columns=["T", "metric"])
        # a single matchup's forecaster x nature game is one by one: no minimax table (as write_aggregates)
        mix = (
            minimax_table(st, metrics, {m: direction(m) for m in metrics})
            if metrics and not single_matchup(s)
            else pd.DataFrame()
        )
        natures = s["nature"].nunique() if "nature" in s else 0
        seeds = sorted(s["seed"].unique().tolist()) if "seed" in s else "?"
        invariant = (
            st.drop_duplicates([k for k in ("forecaster", "nature", "T") if k in st])
            if "seed_invariant" in st
            else pd.DataFrame()
        )
        counts = f"{s['forecaster'].nunique()} forecasters, {natures} natures, seeds {seeds}."
        if not invariant.empty and invariant["seed_invariant"].any():
            counts += f" Seed-invariant (exact) matchups: {int(invariant['seed_invariant'].sum())} of {len(invariant)}."
        lines += [f"## {game or 'results'}", "", counts, ""]
        for T, b in board.groupby("T", sort=True):
            lines += [f"### T = {T}", ""]
            at_T = s.loc[s["T"] == T] if "T" in s else s
            for metric in metrics:
                bm = b.loc[b["metric"] == metric]
                if bm.empty:
                    continue
                mm = (
                    mix.loc[(mix["metric"] == metric) & (mix["T"] == T)]
                    if "T" in mix
                    else mix.loc[mix.get("metric", pd.Series(dtype=str)) == metric]
                    if not mix.empty
                    else mix
                )
                lines += _md_leaderboard(bm, metric, mm)
                lines += _md_top_paired(at_T, metric, bm, pairs)
            lines.append((game, T))  # the comparison of the top pair, when there is one
        lines += ["### Certificates", "", *_md_certificates(s), "### Forfeits", "", *_md_forfeits(s)]
    return lines


def markdown_page(
    body: Sequence[str | tuple],
    files: Sequence[Path] = (),
    root: Path | str | None = None,
    comparisons: pd.DataFrame | None = None,
) -> str:
    """:func:`markdown_summary` from its :func:`markdown_body`: each ``(game, T)`` the anytime-valid comparison of
    the top pair there (``comparisons``; none when not given), then the links to ``files``."""
    lines = [x for line in body for x in (_md_sequential(comparisons, *line) if isinstance(line, tuple) else [line])]
    if files:
        root = Path(root) if root is not None else Path(".")
        stems: dict[Path, list[Path]] = {}
        for f in files:
            stems.setdefault(Path(f).with_suffix(""), []).append(Path(f))
        lines += ["## Files", ""]
        for stem, paths in stems.items():
            links = " · ".join(f"[{md_escape(p.suffix[1:].upper())}]({quote(_rel(p, root))})" for p in paths)
            lines.append(f"- {md_code(_rel(stem, root))}: {links}")
        lines.append("")
    return "\n".join(lines)


def _rel(path: Path, root: Path) -> str:
    try:
        return Path(path).relative_to(root).as_posix()
    except ValueError:
        return Path(path).as_posix()
