"""Every kind of figure is ready for a paper: no text runs off the figure, and the title says the game, the
metric, the horizon T and the seeds. Drawn from a small tournament (the report's own plan of figures), and from
small tables for the comparison, the red team and the pair matrix."""

from __future__ import annotations

import importlib
from pathlib import Path
from unittest import mock

import numpy as np
import pandas as pd
import pytest
from _stored import store_binary_matchups  # tests/_stored.py
from matplotlib.figure import Figure
from matplotlib.text import Text

from arena.plots.draw import FIGURES
from arena.plots.plan import game_jobs, game_styles, paper_jobs
from arena.plots.style import DPI, _save

FORECASTERS = ("bit", "k29", "linear_df", "ogd", "running_mean", "window_mean")
NATURES = ("iid_bernoulli", "sinusoid")
T = 120


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    out = tmp_path_factory.mktemp("results")
    store_binary_matchups(out, FORECASTERS, NATURES, (0, 1), T)
    return importlib.import_module("arena.summarize").read_tables(out)


def _clipped(fig: Figure, tmp_path: Path) -> list[str]:
    """The texts of ``fig`` that run off it, drawn as a paper gets it (laid out and saved): every text drawn,
    none of those a figure keeps undrawn (the labels of ticks out of view)."""
    seen = []
    real = Text.draw

    def draw(self, renderer):
        real(self, renderer)
        if self.get_visible() and self.get_text().strip():
            seen.append((self.get_text(), self.get_window_extent(renderer)))

    with mock.patch.object(Text, "draw", draw):
        _save(fig, tmp_path / "fig", ("png",))
    width, height = fig.get_figwidth() * DPI, fig.get_figheight() * DPI  # the pixels of the file saved
    return [
        f"{text!r} at {[round(v) for v in box.bounds]} in {round(width)} x {round(height)}"
        for text, box in seen
        if box.x0 < -1 or box.y0 < -1 or box.x1 > width + 1 or box.y1 > height + 1
    ]


def _title(fig: Figure) -> str:
    """The figure's title (its own, else its first panel's), on one line."""
    title = fig.get_suptitle() or (fig.axes[0].get_title() if fig.axes else "")
    return " ".join(title.split())


#: What the title of each kind of figure names as its metric.
METRIC_WORDS = {
    "by_nature": ("smCE", "bias", "regret"),
    "smce_vs_T": ("smCE",),
    "bias": ("bias",),
    "regret_linear": ("regret",),
    "reliability": ("reliability",),
    "leaderboard": ("smCE/T", "Brier", "bias"),
    "certificates": ("certificates",),
}


def _pairs(names: list[str]) -> pd.DataFrame:
    """Every ordered pair of ``names``: e-value 10^(j - i), claimed by e-BH two places or more apart."""
    rows = [
        {"forecaster_a": a, "forecaster_b": b, "e_value": 10.0 ** (j - i), "e_bh": j - i > 1, "mean": 0.01 * (i - j)}
        for i, a in enumerate(names)
        for j, b in enumerate(names)
        if a != b
    ]
    return pd.DataFrame(rows)


@pytest.mark.parametrize("facet", [True, False], ids=["report", "per nature"])
def test_every_figure_of_a_report_and_its_paper_is_unclipped_and_says_game_metric_T_and_seeds(tables, tmp_path, facet):
    s, c, r = tables["summary"], tables["curves"], tables["reliability"]
    styles = game_styles({"k29": "defensive", "linear_df": "defensive", "bit": "defensive"}, s, c, r)
    jobs = game_jobs(s, c, r, tmp_path, ("png",), styles, ("smce_over_T", "brier", "bias"), facet=facet)
    if not facet:
        jobs = paper_jobs("binary", s, jobs) + [j for j in jobs if j.kind in ("bias", "regret_linear")]
    kinds = {j.kind for j in jobs}
    assert kinds >= ({"by_nature", "reliability", "leaderboard"} if facet else {"smce_vs_T", "reliability"})
    for job in jobs:
        fig = FIGURES[job.kind](*job.args)
        title = _title(fig)
        assert "binary" in title and f"T = {T}" in title and "2 seeds" in title, (job.stem.name, title)
        assert any(w in title for w in METRIC_WORDS[job.kind]), (job.stem.name, title)
        assert not _clipped(fig, tmp_path), (job.stem.name, _clipped(fig, tmp_path))


def _comparison_curves(natures: int, seeds: int) -> pd.DataFrame:
    t = np.array([10, 100, 1000])
    rows = [
        {
            "game": "binary",
            "T": 1000,
            "metric": "brier",
            "forecaster_a": "k29",
            "forecaster_b": "window_mean",
            "nature": f"nature_{k}",
            "seed": seed,
            "t": tt,
            "mean": -0.01 * k,
            "low": -0.01 * k - 0.5 / tt**0.5,
            "high": -0.01 * k + 0.5 / tt**0.5,
            "e_a_better": 1.0 + k * tt / 10,
            "e_b_better": 1.0 / (1 + k * tt / 10),
        }
        for k in range(natures)
        for seed in range(seeds)
        for tt in t
    ]
    return pd.DataFrame(rows)


@pytest.mark.parametrize(
    ("natures", "seeds", "metric"), [(1, 2, "brier"), (1, 2, "calibration"), (6, 3, "brier"), (6, 3, "calibration")]
)
def test_the_comparison_figure_is_unclipped_and_says_which_seeds_it_draws(tmp_path, natures, seeds, metric):
    from arena.plots.compare import comparison_figure

    curves = _comparison_curves(natures, seeds).assign(metric=metric)
    if metric == "calibration":  # no e-process: no panel of them, empty or not
        curves = curves.assign(e_a_better=np.nan, e_b_better=np.nan)
    fig = comparison_figure(curves)
    title = _title(fig)
    assert "binary" in title and "T = 1000" in title and "k29 (A) vs window mean (B)" in title, title
    assert "first seed" not in title or seeds == 1
    assert (f"{seeds} seeds" if natures == 1 else "seed 0 of each nature") in title, title
    assert not [t for t in fig.findobj(Text) if "no e-process" in t.get_text()]
    assert not _clipped(fig, tmp_path), _clipped(fig, tmp_path)


def test_red_team_figures_are_unclipped_and_say_game_metric_T_and_seeds(tmp_path):
    from arena.plots.redteam import attack_vs_certificate, cross_attack_heatmap

    one_T = pd.DataFrame(
        {
            "game": "binary",
            "metric": "smce_over_T",
            "forecaster": ["k29", "ogd"],
            "T": 200,
            "seed": 0,
            "value": [0.04, 0.3],
            "certificate": ["smce", None],
            "cert_bound": [0.056, np.nan],
        }
    )
    fig = attack_vs_certificate(one_T)
    ax = fig.axes[0]
    drawn = {ln.get_gid() for ln in ax.get_lines()}
    assert {"attack:k29", "bound:k29", "attack:ogd"} <= drawn
    assert [t.get_text() for t in ax.get_xticklabels()] == ["k29", "ogd"]  # one T: a point per forecaster
    title = _title(fig)
    assert "binary, T = 200, search seed 0" in title and "smCE/T" in title and "dashed" not in title, title
    assert not _clipped(fig, tmp_path)
    several_T = pd.concat([one_T, one_T.assign(T=1000, value=[0.017, 0.2], cert_bound=[0.023, np.nan])])
    fig = attack_vs_certificate(several_T)
    assert "binary, T = 200, 1000, search seed 0" in _title(fig) and "certified bound" in _title(fig)
    assert not _clipped(fig, tmp_path)
    fig = cross_attack_heatmap(_cross_attack_matrix())
    title = _title(fig)
    assert "binary, T = 60, seeds 1-2" in title and "cross-attack" in title and "smCE/T" in title, title
    assert not _clipped(fig, tmp_path)


def _cross_attack_matrix() -> pd.DataFrame:
    """The shipped attacks found against k29 and ogd, each played against both at a short T on two held-out
    seeds: the table the red team's report draws."""
    from arena.redteam.table import cross_attack, read_attacks

    shipped = Path(__file__).resolve().parents[1] / "adversaries" / "data" / "redteam"
    attacks = [
        {**a, "T": 60, "held_out": {"seeds": [1, 2]}}
        for a in read_attacks(shipped)
        if a["forecaster"] in ("k29", "ogd") and a["kind"] == "policy"
    ]
    matrix = cross_attack(attacks, ["k29", "ogd"])
    assert len(matrix) == 4 and set(matrix["game"]) == {"binary"} and set(matrix["seeds"]) == {"1-2"}, matrix
    return matrix


def test_the_pair_matrix_is_unclipped_and_says_game_metric_and_T(tmp_path):
    from arena.plots.pairs import pair_matrix

    names = ["k29", "linear_df", "window_mean", "running_mean"]
    pairs = _pairs(names).assign(game="binary", T=1000, metric="brier", alpha=0.05, m=12)
    pairs.loc[pairs["e_value"].idxmax(), "e_value"] = 1e30  # one pair decided by far
    fig = pair_matrix(pairs)
    title = _title(fig)
    assert "binary, T = 1000" in title and "Brier" in title and "every nature and seed" in title, title
    assert not _clipped(fig, tmp_path)
    norm = fig.axes[0].images[0].norm  # the outlier sets no limit: a claim's e-value (m / alpha) is dark
    assert norm.vmax == pytest.approx(1e4) and norm(12 / 0.05) > 0.5


def test_labels_with_dollars_and_underscores_are_written_as_they_are(tmp_path):
    """A forecaster named ``p$_1$`` is no mathtext: its dollar signs are escaped, the figure draws."""
    from arena.plots.leaderboards import leaderboard_heatmap

    s = pd.DataFrame(
        {"forecaster": ["p$_1$", "q_2"], "nature": "n", "seed": 0, "brier": [0.2, 0.3], "status": "ok", "T": 10}
    )
    fig = leaderboard_heatmap(s, "brier")
    fig.canvas.draw()
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels == ["p\\$ 1\\$", "q 2"]


def test_a_latex_table_per_nature_has_one_number_format_per_column_and_rows_by_rank():
    """Each nature's block is ranked on the first metric, and a column's decimals are the same in every block (a
    nature of small values wrote 0.00667 above another's 0.0156)."""
    import re

    from arena.plots.tables import latex_table

    s = pd.DataFrame(
        {
            "forecaster": ["a", "b", "c"] * 2,
            "nature": ["n1"] * 3 + ["n2"] * 3,
            "seed": 0,
            "smce_over_T": [0.00667, 0.00675, 0.0126, 0.0169, 0.0156, 0.0181],
        }
    )
    rows = [
        [c.strip() for c in line.rstrip("\\ ").split("&")]
        for line in latex_table(s, ["smce_over_T"], by_nature=True).splitlines()
        if line.count("&") == 2
    ][1:]  # the header left out
    assert [r[0] for r in rows] == ["a", "b", "c", "b", "a", "c"]  # by rank within each nature
    decimals = {len(x.partition(".")[2]) for r in rows for x in re.findall(r"\d+\.\d+", r[2])}
    assert decimals == {5}, rows


def test_the_report_draws_the_pair_matrix_of_every_family_and_links_it(tables, tmp_path):
    """The pairs table beside the summary (every ordered pair's e-value) is drawn on the page, a matrix per game, T
    and score; a table of errors only (rounds not stored) draws none."""
    from arena.plots.report import report

    names = ["k29", "linear_df", "ogd"]
    pairs = _pairs(names).assign(game="binary", T=T, metric="brier", alpha=0.05, m=6)
    pairs.to_parquet(tmp_path / "pairs.parquet")
    paths = report(tmp_path, tables, quiet=True)
    drawn = tmp_path / "figures" / f"pairs__brier__T{T}.png"
    assert drawn in paths and drawn.stat().st_size
    assert f"figures/pairs__brier__T{T}.png" in (tmp_path / "index.html").read_text()
    assert f"figures/pairs__brier__T{T}.png" in (tmp_path / "summary.md").read_text()
    pd.DataFrame({"game": ["binary"], "T": [T], "error": ["no rounds stored"]}).to_parquet(tmp_path / "pairs.parquet")
    assert not [p for p in report(tmp_path, tables, quiet=True) if p.name.startswith("pairs__")]


def _label_on_ticks(fig: Figure) -> list[str]:
    """The y labels of ``fig`` (its own, shared by the panels, and each panel's) that overlap a y tick label, or that
    take more than two lines, drawn as a paper gets them."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    own = [t for t in fig.texts if fig.get_supylabel() and t.get_text() == fig.get_supylabel()]
    labels = [t for t in [*own, *(ax.yaxis.label for ax in fig.axes)] if t.get_text()]
    bad = [
        f"{t.get_text()!r} in {t.get_text().count(chr(10)) + 1} lines" for t in labels if t.get_text().count("\n") > 1
    ]
    for label in labels:
        box = label.get_window_extent(renderer)
        bad += [
            f"{label.get_text()!r} on tick {tick.get_text()!r}"
            for ax in fig.axes
            for tick in ax.get_yticklabels()
            if tick.get_visible() and tick.get_text() and box.overlaps(tick.get_window_extent(renderer))
        ]
    return bad


@pytest.mark.parametrize("facet", [True, False], ids=["report", "per nature"])
def test_the_y_label_of_every_curve_figure_is_two_lines_at_most_and_clear_of_the_ticks(tables, tmp_path, facet):
    """One row of small multiples is about an inch tall: a long y label wrapped over three lines ran onto the tick
    labels ("0.1", "0.01")."""
    s, c, r = tables["summary"], tables["curves"], tables["reliability"]
    styles = game_styles({"k29": "defensive", "linear_df": "defensive", "bit": "defensive"}, s, c, r)
    jobs = game_jobs(s, c, r, tmp_path, ("png",), styles, ("smce_over_T", "brier", "bias"), facet=facet)
    jobs = [j for j in jobs if j.kind in ("by_nature", "smce_vs_T", "bias", "regret_linear")]
    assert {j.kind for j in jobs} >= ({"by_nature"} if facet else {"smce_vs_T", "bias", "regret_linear"})
    for job in jobs:
        fig = FIGURES[job.kind](*job.args)
        assert not _label_on_ticks(fig), (job.stem.name, _label_on_ticks(fig))
