"""Figures and tables: what is drawn equals what pandas computes from the results tables."""

from __future__ import annotations

import importlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _stored import put, store_binary_matchups  # tests/_stored.py
from matplotlib.colors import same_color
from matplotlib.figure import Figure
from scipy import stats

from arena import plots
from arena.aggregate import write_tables
from arena.moments import CURVE_KEYS, moments, pool_bins
from arena.store import scan
from arena.stream import collect

#: The report of a results directory (its comparison and families included; :func:`arena.plots.report` draws).
summarize = importlib.import_module("arena.summarize")

FORECASTERS = ("k29", "linear_df", "running_mean")
NATURES = ("iid_bernoulli", "sinusoid")
SEEDS = (0, 1)
T = 200


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """A small results directory: 3 forecasters x 2 natures x 2 seeds at T = 200."""
    out = tmp_path_factory.mktemp("results")
    store_binary_matchups(out, FORECASTERS, NATURES, SEEDS, T)
    return out, collect(out)


@pytest.fixture(scope="module")
def written(results):
    out, _ = results
    return out, summarize.report(out, paper_formats=("pdf",))  # the full report and paper/ in one call


def _line(ax, gid):
    found = [ln for ln in ax.get_lines() if ln.get_gid() == gid]
    assert len(found) == 1, f"expected one line {gid!r}, found {[ln.get_gid() for ln in ax.get_lines()]}"
    return found[0]


# ------------------------------------------------------------------------------- report
#: Curves drawn as small multiples (one panel per nature; the fixture's 3 forecasters in one group)
#: and figures drawn per nature.
FACETED = ("smce_vs_T", "regret_linear", "bias")
PER_NATURE = ("reliability",)
#: Figures of the fixture in figures/: the curves, reliability per nature, three leaderboards and the
#: certificates (PNG); in paper/ (PDF): smCE/T and reliability on one nature, a leaderboard, the certificates.
N_FIGURES = len(FACETED) + len(PER_NATURE) * len(NATURES) + 3 + 1
PAPER = [f"binary_{k}_{NATURES[0]}" for k in ("smce_vs_T", "reliability")] + [
    "binary_leaderboard_smce_over_T",
    "binary_certificates",
]
#: Every file of the report: the figures, the LaTeX table, summary.md and index.html; with paper/, its
#: figures, LaTeX table and example.tex too.
N_FILES = N_FIGURES + 3
N_FILES_WITH_PAPER = N_FILES + len(PAPER) + 2


def test_report_writes_every_expected_file(written):
    out, paths = written
    fig_dir = out / "figures"
    stems = [f"{kind}__all" for kind in FACETED] + [f"{kind}__{nat}" for nat in NATURES for kind in PER_NATURE]
    stems += [f"leaderboard__{m}" for m in ("smce_over_T", "brier", "bias")] + ["certificates"]
    expected = {fig_dir / f"{s}.png" for s in stems}  # PNG by default: what index.html shows
    expected |= {out / "paper" / f"{s}.pdf" for s in PAPER}
    expected |= {out / "paper" / n for n in ("binary_table.tex", "example.tex")}
    expected |= {fig_dir / "table.tex", out / "summary.md", out / "index.html"}
    assert set(paths) == expected and len(paths) == len(expected) == N_FILES_WITH_PAPER
    for p in expected:
        assert p.stat().st_size > 0, p
    for p in (out / "paper").glob("*.pdf"):
        assert p.read_bytes()[:4] == b"%PDF", p
    for p in fig_dir.glob("*.png"):
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", p
    assert "\\toprule" in (fig_dir / "table.tex").read_text()
    assert not list(fig_dir.glob(".*.tmp")), "temporary files left behind"
    md = (out / "summary.md").read_text()
    for p in expected - {out / "summary.md"}:  # the summary links every file
        assert f"({p.relative_to(out).as_posix()})" in md, p


def test_pdfs_embed_truetype_fonts_not_type3(written, results, tmp_path):
    """Fonts as Type 42 (TrueType, /FontFile2), whatever the caller's rcParams say: the paper's PDFs,
    and every figure's with ``formats`` asking for PDF."""
    out, _ = written
    pdfs = sorted((out / "paper").glob("*.pdf"))
    assert len(pdfs) == len(PAPER)
    pdfs += [
        p
        for p in summarize.report(tmp_path, tables=results[1], formats=("pdf",), paper_formats=())
        if p.suffix == ".pdf"
    ]
    assert len(pdfs) == len(PAPER) + N_FIGURES and not (tmp_path / "paper").exists()
    for p in pdfs:
        data = p.read_bytes()
        assert b"/FontFile2" in data, p.name
        assert b"/Type3" not in data and b"/FontType 3" not in data, p.name


def test_report_reads_the_tables_it_is_given(results, tmp_path):
    _, tables = results
    only = {"summary": tables["summary"], "curves": tables["curves"].iloc[:0], "reliability": pd.DataFrame()}
    paths = summarize.report(tmp_path, tables=only, formats=("png",))
    names = {p.name for p in paths}
    assert names == {f"leaderboard__{m}.png" for m in ("smce_over_T", "brier", "bias")} | {
        "certificates.png",
        "table.tex",
        "summary.md",
        "index.html",
    }  # paper/ only when asked


def test_report_is_the_same_in_worker_processes(results, tmp_path, monkeypatch):
    """Figures drawn by worker processes are byte for byte those drawn in this process, in the same order."""
    _, tables = results
    monkeypatch.setenv("ARENA_PLOT_JOBS", "1")
    one = tmp_path / "one"
    serial = summarize.report(one, tables=tables)
    monkeypatch.setenv("ARENA_PLOT_JOBS", "3")
    three = tmp_path / "three"
    parallel = summarize.report(three, tables=tables)
    assert len(serial) == N_FILES
    assert [p.relative_to(one) for p in serial] == [p.relative_to(three) for p in parallel]
    for a, b in zip(serial, parallel, strict=True):
        assert a.read_bytes() == b.read_bytes(), a.name
    assert not list((three / "figures").glob(".*.tmp"))


def test_an_error_in_a_worker_process_is_raised_here(tmp_path, monkeypatch):
    from arena.plots.draw import draw_all
    from arena.plots.jobs import Job

    monkeypatch.setenv("ARENA_PLOT_JOBS", "2")
    jobs = [Job("no_such_figure", (), tmp_path / f"x{i}", ("png",)) for i in range(4)]
    with pytest.raises(KeyError, match="no_such_figure"):
        draw_all(jobs, {}, quiet=True)


def test_report_without_workers_draws_everything_here(results, tmp_path, monkeypatch):
    _, tables = results
    monkeypatch.setenv("ARENA_PLOT_JOBS", "2")
    monkeypatch.delattr(os, "fork")  # no worker can start (as on Windows)
    paths = summarize.report(tmp_path, tables=tables, formats=("png",))
    assert len(paths) == N_FILES and all(p.stat().st_size > 0 for p in paths)


def test_report_reads_fresh_aggregates_and_not_stale_ones(results, tmp_path, monkeypatch):
    """Aggregates that write_tables left after the last matchup are read instead of every matchup file."""
    src, tables = results
    out = tmp_path / "results"
    shutil.copytree(src, out, ignore=shutil.ignore_patterns("figures"))
    write_tables(out)
    calls = []
    monkeypatch.setattr(summarize, "collect", lambda d, only=None: calls.append(d) or collect(d, only))
    fresh = summarize.read_tables(out)
    assert calls == []
    # the reliability bins pooled over seeds a batch at a time: those of the whole table pooled at once, with the
    # matchups behind each (its seeds)
    keys = ["game", "T", "forecaster", "nature"]
    once = pool_bins(tables["reliability"], keys)
    pd.testing.assert_frame_equal(fresh["reliability"].drop(columns="n_seeds"), once, check_exact=False, rtol=1e-12)
    assert (
        len(fresh["reliability"]) < len(tables["reliability"]) and (fresh["reliability"]["n_seeds"] == len(SEEDS)).all()
    )
    # the curves as the figures draw them: their moments over seeds, combined batch by batch as the store is
    # read, against those of the whole table at once (another summation order: to 1e-12)
    assert len(fresh["curves"]) < len(tables["curves"])
    pd.testing.assert_frame_equal(fresh["curves"], moments(tables["curves"], CURVE_KEYS), check_exact=False, rtol=1e-12)
    a, b = fresh["summary"], tables["summary"]
    assert list(a.columns) == list(b.columns) and (a.dtypes == b.dtypes).all()
    for col in a:  # equal, but for None against NaN in object columns (Parquet keeps no NaN there)
        assert ((a[col] == b[col]) | (a[col].isna() & b[col].isna())).all(), col
    # a matchup written after the aggregates: everything is read again
    some = next((out / "matchups").glob("*.jsonl"))
    before = some.stat().st_mtime_ns
    newer = (out / "summary.parquet").stat().st_mtime_ns + 10**9
    os.utime(some, ns=(newer, newer))
    summarize.read_tables(out)
    assert calls == [out]
    os.utime(some, ns=(before, before))
    summarize.read_tables(out)
    assert calls == [out]
    # a matchup removed: likewise
    calls.clear()
    put(out, min(scan(out)), b"\n")  # its record taken out
    stale = summarize.read_tables(out)
    assert calls == [out] and len(stale["summary"]) == len(tables["summary"]) - 1


# -------------------------------------------------------------------------------- curves
@pytest.mark.parametrize("nature", NATURES)
def test_smce_vs_T_lines_are_seed_means(results, nature):
    _, tables = results
    curves = tables["curves"]
    fig = plots.smce_vs_T(curves, nature=nature)
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    sel = curves[(curves["nature"] == nature) & (curves["metric"] == "smce")]
    expected = (sel["value"] / sel["t"]).groupby([sel["forecaster"], sel["t"]]).mean()
    for fc in FORECASTERS:
        line = _line(ax, f"mean:{fc}")
        want = expected.loc[fc]
        np.testing.assert_allclose(line.get_xdata(), want.index.to_numpy(float))
        np.testing.assert_allclose(line.get_ydata(), want.to_numpy(), rtol=1e-12)
        assert line.get_color() == plots.forecaster_styles(FORECASTERS)[fc]["color"]
    # the certified bound, dashed, only for the forecaster that claims smooth calibration
    b = curves[(curves["nature"] == nature) & (curves["metric"] == "smce_bound")]
    assert set(b["forecaster"]) == {"k29"}
    bound = _line(ax, "bound:k29")
    want = (b["value"] / b["t"]).groupby(b["t"]).mean()
    np.testing.assert_allclose(bound.get_ydata(), want.to_numpy(), rtol=1e-12)
    assert bound.get_linestyle() == "--"
    ref = _line(ax, "reference:k29")
    x = np.asarray(ref.get_xdata())
    np.testing.assert_allclose(ref.get_ydata(), np.sqrt(8 * x / 3) / x)
    assert any("K29 guarantee" in t.get_text() for t in fig.legends[0].get_texts())


def test_smce_vs_T_ignores_nan_and_draws_on_given_axes(results):
    _, tables = results
    curves = tables["curves"][tables["curves"]["nature"] == "sinusoid"]
    ref = plots.smce_vs_T(curves)
    junk = curves[curves["metric"] == "smce"].head(3).assign(value=np.nan)
    fig = Figure()
    ax = fig.add_subplot()
    assert plots.smce_vs_T(pd.concat([curves, junk]), ax=ax) is fig
    for fc in FORECASTERS:
        np.testing.assert_allclose(_line(ax, f"mean:{fc}").get_ydata(), _line(ref.axes[0], f"mean:{fc}").get_ydata())


def _more_seeds(c: pd.DataFrame, n: int = plots.style.MIN_BAND_SEEDS) -> pd.DataFrame:
    """``c``'s runs as ``n`` seeds: seed k's values are seed (k mod the seeds of c)'s times 1 + k/100
    (every point has a spread)."""
    seeds = sorted(c["seed"].unique())
    return pd.concat(
        [
            c.loc[c["seed"] == seeds[k % len(seeds)]].assign(seed=k, value=lambda d, k=k: d["value"] * (1 + k / 100))
            for k in range(n)
        ],
        ignore_index=True,
    )


def test_bands_only_from_enough_seeds(results):
    _, tables = results
    c = tables["curves"]
    fig = plots.smce_vs_T(c[(c["seed"] == 0) & (c["nature"] == "sinusoid")])
    assert not [col for col in fig.axes[0].collections if str(col.get_gid()).startswith("band:")]
    # two seeds: a 95% interval 12.7 standard errors wide says nothing; the figure says there is no band
    fig = plots.smce_vs_T(c[c["nature"] == "sinusoid"])
    assert not [col for col in fig.axes[0].collections if str(col.get_gid()).startswith("band:")]
    title = " ".join(fig.axes[0].get_title().split())  # wrapped to the column
    assert "no band" in title and "2 seeds" in title
    fig = plots.smce_vs_T(_more_seeds(c[c["nature"] == "sinusoid"]))
    assert len([col for col in fig.axes[0].collections if str(col.get_gid()).startswith("band:")]) == 3
    assert "band: 95% t-interval" in " ".join(fig.axes[0].get_title().split())


def test_regret_curves_mean_and_bound(results):
    _, tables = results
    c = tables["curves"]
    c = c[c["nature"] == "iid_bernoulli"]
    fig = plots.regret_curves(c, "regret_linear")
    ax = fig.axes[0]
    sel = c[c["metric"] == "regret_linear"]
    expected = sel.groupby(["forecaster", "t"])["value"].mean()
    for fc in FORECASTERS:
        np.testing.assert_allclose(_line(ax, f"mean:{fc}").get_ydata(), expected.loc[fc].to_numpy(), rtol=1e-12)
    b = c[c["metric"] == "regret_linear_bound"]
    certified = set(b["forecaster"])
    assert "linear_df" in certified and "running_mean" not in certified
    for fc in certified:
        want = b[b["forecaster"] == fc].groupby("t")["value"].mean()
        np.testing.assert_allclose(_line(ax, f"bound:{fc}").get_ydata(), want.to_numpy(), rtol=1e-12)
    assert not [ln for ln in ax.get_lines() if ln.get_gid() == "bound:running_mean"]


# --------------------------------------------------------------------------- reliability
def _pooled_by_pandas(rel, forecaster, nature):
    """Bins pooled over seeds, computed here independently: counts, centers, count-weighted means."""
    sel = rel[(rel["forecaster"] == forecaster) & (rel["nature"] == nature) & (rel["count"] > 0)]
    n = sel.groupby("bin")["count"].sum()
    mp = (sel["count"] * sel["mean_p"]).groupby(sel["bin"]).sum() / n
    my = (sel["count"] * sel["mean_y"]).groupby(sel["bin"]).sum() / n
    center = (sel.groupby("bin")["lo"].min() + sel.groupby("bin")["hi"].max()) / 2
    return n.to_numpy(float), center.to_numpy(float), np.column_stack([mp, my])


def _count_bars(ax):
    """(center, bottom, height) of each count bar: one collection of rectangles in the panel's own axes."""
    (bars,) = [c for c in ax.collections if c.get_gid() == "counts"]
    v = [path.vertices for path in bars.get_paths()]
    return (
        np.array([x[:, 0].min() + x[:, 0].max() for x in v]) / 2,
        np.array([x[:, 1].min() for x in v]),
        np.array([np.ptp(x[:, 1]) for x in v]),
    )


def _assert_share_scale(ax, height, n, label: bool) -> None:
    """The scale right of a reliability panel reads its bars' heights as the share of forecasts per bin."""
    (scale,) = [ln for ln in ax.get_lines() if ln.get_gid() == "count_axis"]
    ticks = [t for t in ax.texts if t.get_gid() == "count_tick"]
    (bottom, top), share = sorted(t.get_position()[1] for t in ticks), n / n.sum()
    assert set(scale.get_ydata()) == {bottom, top} and bottom == 0
    assert [t.get_text() for t in sorted(ticks, key=lambda t: t.get_position()[1])] == [
        "0",
        f"{100 * share.max():.0f}%",
    ]
    np.testing.assert_allclose(height / top * share.max(), share, rtol=1e-9)
    assert [t.get_text() for t in ax.texts if t.get_gid() == "count_label"] == (["forecasts"] if label else [])


def test_reliability_diagram_pools_seeds_by_count(results):
    _, tables = results
    rel = tables["reliability"]
    fig = plots.reliability_diagram(rel, "k29", "sinusoid")
    assert len(fig.axes) == 1  # the counts share the panel's axes (no twin axes)
    ax = fig.axes[0]
    pts = next(c for c in ax.collections if c.get_gid() == "bins").get_offsets()
    n, center, means = _pooled_by_pandas(rel, "k29", "sinusoid")
    np.testing.assert_allclose(np.asarray(pts), means, rtol=1e-12)
    x, bottom, height = _count_bars(ax)
    np.testing.assert_allclose(x, center, rtol=1e-12)
    np.testing.assert_array_equal(bottom, 0.0)
    _assert_share_scale(ax, height, n, label=True)
    assert 0 < height.max() < 0.5  # the bars stay in the lower part of the panel


def test_reliability_grid_panels_match_pandas(results):
    _, tables = results
    rel = tables["reliability"]
    fig = plots.reliability_grid(rel, "sinusoid")
    panels = {ax.get_title().replace(" ", "_"): ax for ax in fig.axes}
    assert set(panels) == set(FORECASTERS) and len(fig.axes) == len(FORECASTERS)  # one axes per panel
    for fc, ax in panels.items():
        n, center, means = _pooled_by_pandas(rel, fc, "sinusoid")
        pts = next(c for c in ax.collections if c.get_gid() == "bins").get_offsets()
        np.testing.assert_allclose(np.asarray(pts), means, rtol=1e-12)
        x, bottom, height = _count_bars(ax)
        np.testing.assert_allclose(x, center, rtol=1e-12)
        np.testing.assert_array_equal(bottom, 0.0)
        # each panel's bars on the scale right of it, named once per row, right of its last panel
        _assert_share_scale(ax, height, n, label=fc == max(FORECASTERS))
        bins = next(c for c in ax.collections if c.get_gid() == "bins")
        assert same_color(bins.get_facecolors()[0], plots.forecaster_styles(FORECASTERS)[fc]["color"])


def test_reliability_diagram_without_data_does_not_crash():
    assert isinstance(plots.reliability_diagram(pd.DataFrame(), "k29", "sinusoid"), Figure)


# --------------------------------------------------------------------------- leaderboard
@pytest.mark.parametrize("metric", ["smce_over_T", "brier", "bias"])
def test_heatmap_values_are_seed_means(results, metric):
    _, tables = results
    s = tables["summary"]
    fig = plots.leaderboard_heatmap(s, metric)
    ax = fig.axes[0]
    expected = s.groupby(["forecaster", "nature"])[metric].mean()
    texts = {t.get_gid(): t.get_text() for t in ax.texts if str(t.get_gid()).startswith("value:")}
    assert len(texts) == len(expected) == len(FORECASTERS) * len(NATURES)
    for (fc, nat), v in expected.items():
        assert float(texts[f"value:{fc}:{nat}"]) == pytest.approx(v, rel=5e-3, abs=1e-12)
    rows = [t.get_text().replace(" ", "_") for t in ax.get_yticklabels()]
    cols = [t.get_text().replace(" ", "_") for t in ax.get_xticklabels()]
    image = np.asarray(ax.images[0].get_array())  # colored by rank within the nature (lower is better)
    ranks = expected.unstack().loc[rows, cols].rank(axis=0, method="min")
    np.testing.assert_allclose(image, ranks.to_numpy(), rtol=1e-12)
    assert ax.images[0].get_cmap().name in ("viridis", "cividis")


def test_heatmap_marks_forfeits(results):
    _, tables = results
    s = tables["summary"].copy()
    hit = (s["forecaster"] == "running_mean") & (s["nature"] == "sinusoid") & (s["seed"] == 1)
    s.loc[hit, "status"] = "forfeit"
    gone = (s["forecaster"] == "linear_df") & (s["nature"] == "iid_bernoulli")
    s.loc[gone, "status"] = "forfeit"
    ax = plots.leaderboard_heatmap(s, "brier").axes[0]
    texts = {t.get_gid(): t.get_text() for t in ax.texts}
    part = texts["value:running_mean:sinusoid"]
    assert part.endswith("F")
    ok = s[(s["forecaster"] == "running_mean") & (s["nature"] == "sinusoid") & (s["status"] == "ok")]
    assert float(part.split()[0]) == pytest.approx(ok["brier"].mean(), rel=5e-3)
    assert texts["value:linear_df:iid_bernoulli"] == "F"
    hatched = {p.get_gid() for p in ax.patches if p.get_hatch()}
    assert hatched == {"forfeit:running_mean:sinusoid", "forfeit:linear_df:iid_bernoulli"}


def test_empty_inputs_give_figures_not_errors():
    empty = pd.DataFrame()
    for fig in (
        plots.smce_vs_T(empty),
        plots.regret_curves(empty),
        plots.leaderboard_heatmap(empty),
        plots.reliability_grid(empty, "sinusoid"),
    ):
        assert isinstance(fig, Figure)
    nan = pd.DataFrame(
        {"forecaster": ["k29"], "nature": ["n"], "seed": [0], "t": [10], "metric": ["smce"], "value": [np.nan]}
    )
    assert isinstance(plots.smce_vs_T(nan), Figure)
    assert plots.latex_table(empty).count("\\midrule") == 1


# ---------------------------------------------------------------------------------- table
def _cells(tex: str) -> list[list[str]]:
    body = tex.split("\\midrule", 1)[1].split("\\bottomrule")[0]
    return [[c.strip() for c in line.rstrip("\\ ").split("&")] for line in body.strip().splitlines()]


def _mean_and_half(s: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Per forecaster, the mean over natures of the seed means and the half-width of its 95%
    interval (Welch-Satterthwaite), computed here independently."""
    g = s.groupby(["forecaster", "nature"])[metric]
    per = pd.DataFrame({"mean": g.mean(), "v": g.var(ddof=1) / g.count(), "n": g.count()}).reset_index()
    out = {}
    for fc, part in per.groupby("forecaster"):
        dof = part["v"].sum() ** 2 / (part["v"] ** 2 / (part["n"] - 1)).sum()
        out[fc] = (part["mean"].mean(), stats.t.ppf(0.975, dof) * np.sqrt(part["v"].sum()) / len(part))
    return pd.DataFrame(out, index=["mean", "half"]).T


def _entry(cell: str) -> tuple[float, float, bool]:
    """(mean, half-width, bold) of a table entry such as ``\\textbf{0.123 $\\pm$ 0.0045}``."""
    bold = cell.startswith("\\textbf{")
    text = re.sub(r"\\textbf\{(.*)\}", r"\1", cell)
    mean, _, half = text.partition(" $\\pm$ ")
    return float(mean), float(half) if half else np.nan, bold


def test_latex_table_entries_are_mean_and_half_width_best_in_bold(results):
    _, tables = results
    s = tables["summary"]
    metrics = ["smce_over_T", "brier", "bias"]
    tex = plots.latex_table(s, metrics)
    assert tex.startswith("\\begin{tabular}{lrrr}") and "\\toprule" in tex and tex.endswith("\\end{tabular}")
    rows = _cells(tex)
    assert sorted(r[0].replace("\\_", "_") for r in rows) == sorted(FORECASTERS)
    for j, m in enumerate(metrics, start=1):
        want = _mean_and_half(s, m)
        bold = [r[0].replace("\\_", "_") for r in rows if _entry(r[j])[2]]
        assert bold == [want["mean"].idxmin()], (m, bold, want)
        for r in rows:
            mean, half, _ = _entry(r[j])
            assert mean == pytest.approx(want.loc[r[0].replace("\\_", "_"), "mean"], rel=5e-3)
            assert half == pytest.approx(want.loc[r[0].replace("\\_", "_"), "half"], rel=5e-2)


def test_latex_table_per_nature(results):
    _, tables = results
    s = tables["summary"]
    tex = plots.latex_table(s, ["brier"], by_nature=True, caption="Brier", label="tab:brier")
    assert tex.startswith("\\begin{table}") and "\\caption{Brier}" in tex and "\\label{tab:brier}" in tex
    means = s.groupby(["nature", "forecaster"])["brier"].mean()
    rows = [r for r in _cells(tex.split("\\begin{tabular}")[1]) if len(r) == 3]
    for nat in NATURES:
        bold = [r[0].replace("\\_", "_") for r in rows if r[1].replace("\\_", "_") == nat and "textbf" in r[2]]
        assert bold == [means.loc[nat].idxmin()]


# ---------------------------------------------------------------------------------- style
def test_forecaster_styles_are_stable_and_distinct_within_a_game():
    """Styles come from the data, not from names known in advance: the forecasters of each shipped
    tournament (its game) get distinct colors and markers, Okabe-Ito's first, in any order and process."""
    import yaml

    for conf in (Path(__file__).resolve().parents[1] / "conf" / "tournament").glob("*.yaml"):
        entries = (yaml.safe_load(conf.read_text()).get("tournament") or {}).get("forecasters", [])
        names = [f if isinstance(f, str) else f.get("label", f["name"]) for f in entries]
        if not names:
            continue
        styles = plots.forecaster_styles(names)
        assert set(styles) == set(names), conf.name
        assert styles == plots.forecaster_styles(list(reversed(names)))  # the order they come in is no matter
        assert len({s["color"] for s in styles.values()}) == len(names), conf.name
        assert len({s["marker"] for s in styles.values()}) == len(names), conf.name
        first = [styles[n]["color"] for n in sorted(names)][:7]
        assert first == list(plots.PALETTE[: len(first)]), conf.name  # Okabe-Ito's colors first
    many = [f"f{i:02d}" for i in range(len(plots.PALETTE))]
    assert len({(s["color"], s["marker"]) for s in plots.forecaster_styles(many).values()}) == len(many)
    # the same in another process, whatever its hash seed
    code = "from arena.plots import forecaster_styles as f; print(f(['my_plugin', 'k29']))"
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    other = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert other.stdout.strip() == str(plots.forecaster_styles(["my_plugin", "k29"]))


def test_no_forecaster_name_is_written_in_the_plots_package():
    """The framework knows no plugin: no forecaster's name appears in the code of arena/plots/."""
    from arena.registry import FORECASTERS as REGISTERED
    from arena.registry import load_plugins

    load_plugins()
    assert REGISTERED, "no forecaster registered: the check below would be vacuous"
    code = "\n".join(p.read_text() for p in Path(plots.__file__).parent.glob("*.py"))
    code = re.sub(r'"""[\s\S]*?"""', "", code)  # docstrings may name forecasters in their examples
    found = sorted(name for name in REGISTERED if re.search(rf"[\"']{re.escape(name)}[\"']", code))
    assert not found, found


def test_a_forecaster_has_one_style_in_every_figure_of_its_game(results, tmp_path, monkeypatch):
    """The report hands each figure its game's styles, also figures that show only some forecasters
    (the certificates: running_mean certifies nothing)."""
    _, tables = results
    monkeypatch.setenv("ARENA_PLOT_JOBS", "1")
    import arena.plots.draw

    seen, draw = [], arena.plots.draw.draw

    def record(job, rc):
        if job.kind != "compare":  # not a figure of the game's forecasters: the top pair's comparison
            # styles: the last argument (by_nature: before the shared log scale)
            kind, args = job.kind, job.args
            seen.append((kind, None if kind == "leaderboard" else args[3] if kind == "by_nature" else args[-1]))
        return draw(job, rc)

    monkeypatch.setattr(arena.plots.draw, "draw", record)
    summarize.report(tmp_path, tables=tables, formats=("png",))
    want = plots.forecaster_styles(FORECASTERS)
    assert {kind for kind, _ in seen} >= {"by_nature", "reliability", "certificates"}
    for kind, styles in seen:  # the report's styles also carry each forecaster's family
        assert styles is None or {n: {k: st[k] for k in ("color", "marker")} for n, st in styles.items()} == want, kind
    fig = plots.certificate_margins(tables["summary"], styles=want)
    for col in fig.axes[0].collections:
        if str(col.get_gid()).startswith("ratio:"):
            fc = col.get_gid().split(":")[1]
            assert same_color(col.get_facecolors()[0][:3], want[fc]["color"]), fc


# ------------------------------------------------------------------------ bands on every curve
def _two_seed_curves(
    metrics, forecasters=("aci", "linf_df"), t=(10, 30, 100), seeds=plots.style.MIN_BAND_SEEDS
) -> pd.DataFrame:
    """Curves of ``seeds`` seeds (enough for bands) that differ (so every point has a spread)."""
    rng = np.random.default_rng(0)
    rows = [
        {"forecaster": fc, "nature": "n", "seed": seed, "t": tt, "metric": m, "value": 0.5 + 0.1 * rng.random()}
        for fc in forecasters
        for seed in range(seeds)
        for tt in t
        for m in metrics
    ]
    return pd.DataFrame(rows)


def _bands(fig) -> dict[str, list]:
    ax = fig.axes[0]
    means = [ln.get_gid()[5:] for ln in ax.get_lines() if str(ln.get_gid()).startswith("mean:")]
    bands = [c.get_gid()[5:] for c in ax.collections if str(c.get_gid()).startswith("band:")]
    return {"means": sorted(means), "bands": sorted(bands)}


def test_every_curve_has_a_band_with_enough_seeds(results):
    _, tables = results
    c = _more_seeds(tables["curves"][tables["curves"]["nature"] == "sinusoid"])
    figures = [
        plots.smce_vs_T(c),
        plots.regret_curves(c, "regret_linear"),
        plots.regret_curves(c, "bias"),
        plots.regret_curves(_two_seed_curves(["regret_experts"]), "regret_experts"),
        plots.regret_curves(_two_seed_curves(["regret_decision_expected"]), "regret_decision_expected"),
        plots.rolling_coverage(_two_seed_curves(["rolling_coverage"]), q=0.9),
        plots.coverage_error_vs_T(_two_seed_curves(["coverage_error"]), q=0.9),
    ]
    s = pd.DataFrame(
        {
            "forecaster": ["aci", "aci", "qogd", "qogd"],
            "nature": "g",
            "seed": [0, 1, 0, 1],
            "nature_plugin": "lipschitz_cdf",
            "nature_params": '{"L": 1.0}',
            "group_coverage.0": [0.8, 0.9, 0.7, 0.75],
            "group_coverage.1": [0.95, 1.0, 0.9, 0.8],
            "coverage_error": [0.1, 0.05, 0.2, 0.1],
        }
    )
    s = pd.concat(
        [s.assign(seed=s["seed"] + 2 * k, coverage_error=s["coverage_error"] * (1 + k / 10)) for k in range(3)],
        ignore_index=True,
    )  # 6 seeds
    s2 = pd.concat([s, s.assign(nature_params='{"L": 10.0}', coverage_error=[0.02, 0.04, 0.1, 0.3] * 3)])
    figures += [plots.group_coverage(s, "g", q=0.9), plots.coverage_vs_L(s2)]
    for fig in figures:
        b = _bands(fig)
        assert b["means"] and b["means"] == b["bands"], b
    # expert weights: the first seed's, not a mean over seeds (the best expert can differ between seeds), so
    # no band: each line is that run's weights
    w = _two_seed_curves(["weight:0", "weight:1"])
    fig = plots.expert_weights(w)
    first = w.loc[w["seed"] == 0]
    for ax in fig.axes:
        if ax.get_visible():
            assert not ax.collections
            name = ax.get_title().replace(" ", "_")
            for ln in ax.get_lines():
                j = ln.get_gid().rsplit(":", 1)[1]
                want = first.loc[(first["forecaster"] == name) & (first["metric"] == f"weight:{j}")].sort_values("t")
                np.testing.assert_allclose(ln.get_ydata(), want["value"].to_numpy(float))
    assert "seed 0" in fig.get_suptitle()
    # a tournament of two horizons: the weights of the longer run, not both runs' points on one line
    two = pd.concat([w.assign(T=100), w.assign(T=30, value=w["value"] / 2).loc[lambda d: d["t"] <= 30]])
    fig = plots.expert_weights(two)
    checked = 0
    for ax in fig.axes:
        if ax.get_visible():
            name = ax.get_title().replace(" ", "_")
            for ln in ax.get_lines():
                j = ln.get_gid().rsplit(":", 1)[1]
                want = first.loc[(first["forecaster"] == name) & (first["metric"] == f"weight:{j}")].sort_values("t")
                np.testing.assert_array_equal(ln.get_xdata(), want["t"].to_numpy())
                np.testing.assert_allclose(ln.get_ydata(), want["value"].to_numpy(float))
                checked += 1
    assert checked == 4  # two forecasters, two experts


def test_band_is_the_student_t_interval(results):
    _, tables = results
    c = tables["curves"]
    c = _more_seeds(c[(c["nature"] == "sinusoid") & (c["metric"] == "regret_linear") & (c["forecaster"] == "k29")])
    fig = plots.regret_curves(c, "regret_linear")
    (band,) = [col for col in fig.axes[0].collections if col.get_gid() == "band:k29"]
    top = band.get_paths()[0].vertices
    for t, g in c.groupby("t"):
        v = g["value"].to_numpy(float)
        lo, hi = stats.t.interval(0.95, len(v) - 1, loc=v.mean(), scale=stats.sem(v))
        ys = top[np.isclose(top[:, 0], t), 1]
        assert min(ys) == pytest.approx(lo, rel=1e-9, abs=1e-12) and max(ys) == pytest.approx(hi, rel=1e-9)


def test_certificate_margins_are_value_over_bound(results):
    _, tables = results
    s = tables["summary"]
    ax = plots.certificate_margins(s).axes[0]
    drawn = {c.get_gid(): c for c in ax.collections if str(c.get_gid()).startswith(("ratio:", "fails:"))}
    want = set()
    for col in (c for c in s.columns if c.startswith("cert.") and c.endswith(".value")):
        name = col[5:-6]
        if f"cert.{name}.bound" not in s:
            continue
        # a not-applicable certificate is never drawn (issue 12: decision_df_deterministic was drawn as a pass)
        ok = s[s[col].notna() & s[f"cert.{name}.bound"].notna() & (s[f"cert.{name}.verdict"] != "n/a")]
        for fc, part in ok.groupby("forecaster"):
            want.add(f"ratio:{fc}:{name}")
            ratio = np.maximum(part[col] / part[f"cert.{name}.bound"], -1.0)
            got = np.concatenate(
                [
                    drawn[f"{kind}:{fc}:{name}"].get_offsets()[:, 0]
                    for kind in ("ratio", "fails")
                    if f"{kind}:{fc}:{name}" in drawn
                ]
            )
            np.testing.assert_allclose(np.sort(got), np.sort(ratio.to_numpy(float)), rtol=1e-12)
    assert want == {g for g in drawn if g.startswith("ratio:")} and want
    assert next(ln for ln in ax.get_lines() if ln.get_gid() == "bound").get_xdata()[0] == 1.0


# ------------------------------------------------------------------------------ summary.md
def _md_rows(md: str, after: str) -> list[list[str]]:
    """The rows of the first Markdown table after the line ``after``."""
    lines = md.split(after, 1)[1].splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("|"))
    rows = []
    for ln in lines[start + 2 :]:
        if not ln.startswith("|"):
            break
        rows.append([c.strip() for c in re.split(r"(?<!\\)\|", ln.strip().removeprefix("|").removesuffix("|"))])
    return rows


def _pm_value(text: str) -> tuple[float, float]:
    mean, _, half = text.partition(" ± ")
    return float(mean), float(half) if half else np.nan


def test_markdown_summary_has_the_right_numbers(written):
    out, _ = written
    s = collect(out)["summary"]
    md = (out / "summary.md").read_text()
    assert "## binary" in md and f"### T = {T}" in md
    for metric in ("smce_over_T", "brier", "bias"):
        want = _mean_and_half(s, metric).sort_values("mean")
        rows = _md_rows(md, f"(`{metric}`, lower is better)")
        assert [r[1] for r in rows] == list(want.index)
        for rank, (r, (_fc, w)) in enumerate(zip(rows, want.iterrows(), strict=False), start=1):
            mean, half = _pm_value(r[2])
            assert int(r[0]) == rank and r[4] == str(len(NATURES))
            assert mean == pytest.approx(w["mean"], rel=5e-3) and half == pytest.approx(w["half"], rel=5e-2)
        # the top comparisons: the best against the next two, nature by nature, by scipy (an exact
        # difference where every seed gives the same one)
        best, others = want.index[0], list(want.index[1:3])
        expected = {fc: ([], []) for fc in others}  # natures where the best is better, worse
        for nat in NATURES:
            x = s[(s["forecaster"] == best) & (s["nature"] == nat)].set_index("seed")[metric]
            for fc in others:
                y = s[(s["forecaster"] == fc) & (s["nature"] == nat)].set_index("seed")[metric]
                d = y - x.loc[y.index]  # other - best: positive where the best is better
                if len(d) >= 2 and d.nunique() == 1:
                    if d.iloc[0] != 0:
                        expected[fc][0 if d.iloc[0] > 0 else 1].append(f"{nat} (exact)")
                    continue
                ci = stats.ttest_rel(y, x.loc[y.index]).confidence_interval(0.95)
                if ci.low > 0 or ci.high < 0:
                    expected[fc][0 if ci.low > 0 else 1].append(nat)
        section = md.split(f"(`{metric}`, lower is better)", 1)[1]
        rows = _md_rows(section, f"Top comparisons: `{best}` against the next 2")
        got = {r[0]: (r[1], r[2]) for r in rows}
        assert set(got) == set(others)
        for fc, (better, worse) in expected.items():
            assert got[fc] == tuple(", ".join(sorted(v)) or "none" for v in (better, worse)), (fc, got[fc])


def test_markdown_summary_counts_certificates_and_lists_forfeits(results):
    _, tables = results
    s = tables["summary"].copy()
    hit = (s["forecaster"] == "running_mean") & (s["nature"] == "sinusoid") & (s["seed"] == 1)
    s.loc[hit, ["status", "forfeit_who", "forfeit_step", "forfeit_reason"]] = ["forfeit", "nature", 17, "a | b"]
    md = plots.markdown_summary(s)
    assert "1 forfeited" in md
    (row,) = _md_rows(md, "### Forfeits")
    assert row[:6] == ["running_mean", "sinusoid", "1", str(T), "nature", "17"] and row[6] == "a \\| b"
    rows = _md_rows(md, "### Certificates")
    for col in (c for c in s.columns if c.startswith("cert.") and c.endswith(".holds")):
        name = col[5:-6]
        for fc, part in s[s[col].notna()].groupby("forecaster"):
            holds = int(part[col].astype(bool).sum())
            (r,) = [r for r in rows if r[0] == fc and r[1] == name]
            assert (int(r[2]), int(r[3])) == (holds, len(part) - holds)


def test_failures_are_red_and_not_applicable_is_never_a_pass():
    """Issue 12: a failed certificate is drawn in red right of the bound; a not-applicable one is not drawn and
    summary.md counts it apart, with its reason."""
    s = pd.DataFrame(
        {
            "forecaster": ["k29", "k29", "broken", "det"],
            "nature": ["a", "b", "a", "a"],
            "seed": 0,
            "T": 100,
            "status": "ok",
            "game": "binary",
            "cert.smce.value": [1.0, 2.0, 30.0, 0.7],
            "cert.smce.bound": [10.0, 10.0, 10.0, 1.0],
            "cert.smce.holds": [True, True, False, None],
            "cert.smce.verdict": ["holds", "holds", "fails", "n/a"],
            "cert.smce.reason": ["", "", "", "a deterministic search against a discontinuous pi"],
        }
    )
    ax = plots.certificate_margins(s).axes[0]
    gids = {c.get_gid(): c for c in ax.collections}
    assert "ratio:det:smce" not in gids and "fails:det:smce" not in gids  # n/a: not drawn, least of all as a pass
    red = gids["fails:broken:smce"]
    assert red.get_offsets()[:, 0].tolist() == [3.0]
    assert same_color(red.get_facecolor()[0] if len(red.get_facecolor()) else red.get_edgecolor()[0], "#d62728")
    rows = _md_rows(plots.markdown_summary(s), "### Certificates")
    by = {r[0]: r for r in rows}
    assert by["k29"][2:5] == ["2", "0", "0"] and by["broken"][2:5] == ["0", "1", "0"]
    assert by["det"][2:5] == ["0", "0", "1"] and "discontinuous" in by["det"][7]
    assert float(by["broken"][6]) == pytest.approx(3.0)


def test_report_of_several_games_puts_each_in_its_folder(results, tmp_path, monkeypatch):
    monkeypatch.setenv("ARENA_PLOT_JOBS", "1")
    _, tables = results
    two = {k: pd.concat([df, df.assign(game="decision")], ignore_index=True) for k, df in tables.items()}
    paths = summarize.report(tmp_path, tables=two, formats=("png",))
    for game in ("binary", "decision"):
        d = tmp_path / "figures" / game
        assert (d / "table.tex").exists() and (d / "certificates.png").exists()
        assert {p.name for p in paths if p.parent == d} >= {"smce_vs_T__all.png"} | {
            f"reliability__{n}.png" for n in NATURES
        }
        tex = (d / "table.tex").read_text()
        assert "\\toprule" in tex and "\\textbf{" in tex
    md = (tmp_path / "summary.md").read_text()
    assert "## binary" in md and "## decision" in md and "figures/decision/table.tex" in md


def test_no_figure_worker_is_forked_beside_another_thread(tmp_path, monkeypatch):
    """Forking beside a running thread (a launcher's) is unsafe: the report then draws in its own process."""
    import threading

    import arena.supervise
    from arena.plots.draw import draw_all
    from arena.plots.jobs import Job

    def no_fork(*args, **kwargs):
        raise AssertionError("forked beside a thread")

    monkeypatch.setenv("ARENA_PLOT_JOBS", "2")
    monkeypatch.setattr(arena.supervise, "forked_pool", no_fork)
    c = pd.DataFrame(
        {"forecaster": "a", "nature": "n", "seed": 0, "t": [10, 100], "metric": "smce", "value": [1.0, 2.0]}
    )
    jobs = [Job("smce_vs_T", (c, "n", None), tmp_path / f"x{i}", ("png",)) for i in range(4)]
    stop = threading.Event()
    other = threading.Thread(target=stop.wait, daemon=True)
    other.start()
    try:
        draw_all(jobs, {}, quiet=True)
    finally:
        stop.set()
        other.join()
    assert all((tmp_path / f"x{i}.png").is_file() for i in range(4))


# ------------------------------------------------------------------------------ what a cold reader flagged
def test_values_under_the_log_floor_are_marked_on_it_not_joined_and_named_once():
    """Zeros (and values under the shared log floor) are no points of a curve: a line plunging to the floor at
    every zero hid the other curves, a line left out there fell apart into fragments, and a note in every panel
    ran into its neighbours. They are marked on the floor, in the curve's color, the line joins the values
    around them in one piece, and the figure's legend names the mark once."""
    t = np.array([10, 20, 50, 100, 200, 500, 1000])
    bias = np.array([0.1, 0.0, 0.02, 0.0, 0.0, 0.004, 0.002]) * t  # |sum(p - y)|: zero at t = 20, 100, 200
    rows = [
        {"forecaster": "bit", "nature": nat, "seed": 0, "t": int(tt), "metric": "bias", "value": v}
        for nat in ("a", "b")
        for tt, v in zip(t, bias, strict=False)
    ]
    rows += [
        {"forecaster": "k29", "nature": nat, "seed": 0, "t": int(tt), "metric": "bias", "value": 0.05 * tt**0.5}
        for nat in ("a", "b")
        for tt in t
    ]
    fig = plots.curves_by_nature(pd.DataFrame(rows), "bias")
    zero = bias == 0
    for ax in fig.axes:
        floor = ax.get_ylim()[0] * 1.25
        mean = _line(ax, "mean:bit")
        np.testing.assert_array_equal(mean.get_xdata(), t[~zero])  # one line through the values above the floor
        assert np.isfinite(np.asarray(mean.get_ydata(), float)).all()
        marks = _line(ax, "floored:bit")
        np.testing.assert_array_equal(marks.get_xdata(), t[zero])
        np.testing.assert_allclose(marks.get_ydata(), floor)
        assert not [ln for ln in ax.get_lines() if ln.get_gid() == "floored:k29"]  # k29 never under the floor
        assert not [tx for tx in ax.texts if tx.get_gid() == "floor_note"]
    labels = [tx.get_text() for tx in fig.legends[0].get_texts()]
    assert sum("(0 too), on the axis" in lab for lab in labels) == 1


def test_the_comparison_of_many_natures_is_one_row_each_colored_by_its_verdict():
    """With more natures than a few, the comparison's confidence sequences overlapped into one mass: each nature
    is one row (its final interval, colored by the verdict read from the final table, its round named), and only
    the natures with a verdict are drawn in color in the e-value panel."""
    from arena.plots.compare import _VERDICT_COLORS, comparison_figure

    natures = [f"n{i}" for i in range(6)]
    t = np.array([1, 10, 100, 1000])
    curves = pd.DataFrame(
        [
            {
                "nature": n,
                "seed": 0,
                "t": tt,
                "mean": 0.01 * (i - 2),
                "low": 0.01 * (i - 2) - 1 / tt,
                "high": 0.01 * (i - 2) + 1 / tt,
                "e_a_better": 1.0 + (30.0 * tt / 1000 if i == 0 else 0),
                "e_b_better": 1.0,
                "forecaster_a": "a",
                "forecaster_b": "b",
                "metric": "brier",
            }
            for i, n in enumerate(natures)
            for tt in t
        ]
    )
    final = pd.DataFrame(
        [
            {
                "nature": n,
                "seed": 0,
                "verdict": "A better" if i == 0 else "undecided",
                "decided_at": 640.0 if i == 0 else np.nan,
            }
            for i, n in enumerate(natures)
        ]
    )
    fig = comparison_figure(curves, final=final)
    rows, evalues = fig.axes
    labels = [tx.get_text() for tx in rows.get_yticklabels()]
    assert labels == ["n0 (t = 640)", "n1", "n2", "n3", "n4", "n5"]  # by final mean A - B, lowest first
    for i, n in enumerate(natures):
        interval = _line(rows, f"cs:{n}:0")
        np.testing.assert_allclose(interval.get_xdata(), [0.01 * (i - 2) - 1e-3, 0.01 * (i - 2) + 1e-3])
        assert same_color(interval.get_color(), _VERDICT_COLORS["A better" if i == 0 else "undecided"])
        assert same_color(_line(evalues, f"e_a:{n}:0").get_color(), _VERDICT_COLORS["A better"] if i == 0 else "0.75")
    assert [tx.get_text() for tx in evalues.texts if tx.get_text() == "n0"] == ["n0"]  # named at its end
    one = curves.loc[curves["nature"] == "n0"]
    seeds = pd.concat([one.assign(seed=k) for k in range(5)])  # one nature, five seeds: a row each, by seed
    names = [tx.get_text().split(" (")[0] for tx in comparison_figure(seeds).axes[0].get_yticklabels()]
    assert names == [f"seed {k}" for k in range(5)]
    calibration = curves.assign(metric="calibration", e_a_better=np.nan, e_b_better=np.nan)
    assert len(comparison_figure(calibration).axes) == 1  # no e-process: the rows only
    few = comparison_figure(curves.loc[curves["nature"].isin(natures[:2])], final=final)
    assert [ln.get_gid() for ln in few.axes[0].get_lines() if str(ln.get_gid()).startswith("mean:")] == [
        "mean:n0:0",
        "mean:n1:0",
    ]  # a few natures: the sequences against t, as before
    # a few curves of calibration (no e-process): one panel, not a second one that only says so
    few_calibration = comparison_figure(calibration.loc[calibration["nature"].isin(natures[:2])])
    assert len(few_calibration.axes) == 1 and few_calibration.axes[0].get_xlabel() == "round t (log scale)"
    assert not [tx for tx in few_calibration.texts if "no e-process" in tx.get_text()]


def test_captions_name_the_bounds_a_figure_draws(results):
    """A caption promised dashed bounds where the figure had none: it now names the forecasters whose
    certified bound is drawn, read from the curves, or says that none is."""
    from arena.plots.html import _bounds_text

    _, tables = results
    curves = tables["curves"]
    with_bound = sorted(curves.loc[curves["metric"] == "smce_bound", "forecaster"].unique())
    assert with_bound and set(with_bound) < set(FORECASTERS)
    text = _bounds_text(curves, "smce", list(FORECASTERS))
    assert all(name.replace("_", " ") in text for name in with_bound)
    assert not any(name.replace("_", " ") in text for name in set(FORECASTERS) - set(with_bound))
    assert (
        _bounds_text(curves, "smce", [f for f in FORECASTERS if f not in with_bound])
        == "no forecaster drawn certifies a bound on it"
    )


def test_a_heatmap_with_zeros_and_values_over_decades_keeps_them_apart_and_every_number_fits_its_cell():
    """The bias leaderboard: exact zeros beside values from 3e-4 to 0.5. A linear scale clipped at its outliers
    painted the defensive forecasters one color, and 0.000267 overran its cell: the colors are the ranks within
    each nature, and the numbers, in the data's own unit, are written small enough to fit (a power of ten in
    common misled a reader: 0.5 written 5.00)."""
    values = {"a": [0.0, 0.000267, 0.5], "b": [0.003, 0.03, 0.3]}
    s = pd.DataFrame(
        [
            {"forecaster": f, "nature": f"nature_{j}", "seed": 0, "bias": v, "status": "ok", "T": 100}
            for f, vs in values.items()
            for j, v in enumerate(vs)
        ]
    )
    fig = plots.leaderboard_heatmap(s, "bias")
    ax, cbar = fig.axes
    image = ax.images[0]
    np.testing.assert_array_equal(np.asarray(image.get_array()), [[1, 1, 2], [2, 2, 1]])  # a is better on n0, n1
    colors = image.cmap(image.norm(np.asarray(image.get_array())))
    assert not np.allclose(colors[0, 0], colors[1, 0])  # two values of a nature never share a color
    cells = [tx for tx in ax.texts if str(tx.get_gid()).startswith("value:")]
    texts = {tx.get_gid(): tx.get_text() for tx in cells}
    assert (
        texts["value:a:nature_1"] == "0.000267"
        and texts["value:a:nature_2"] == "0.500"
        and texts["value:a:nature_0"] == "0"
    )
    fig.canvas.draw()
    cell = ax.get_window_extent().width / 3  # 3 natures
    assert all(tx.get_window_extent().width < cell for tx in cells)  # every number inside its cell
    assert "rank" in cbar.get_ylabel() and "\u00d710" not in fig.get_suptitle()
    title = " ".join(fig.get_suptitle().split())  # wrapped to the figure's width
    assert "T = 100" in title and "lower is better" in title and "1 seed" in title


def test_the_figures_of_one_curve_share_their_log_scale_across_groups_of_forecasters(tmp_path):
    """A value sat at different heights in the smCE/T figures of the defensive forecasters and of the
    baselines (each figure scaled to its own curves): the figures of one curve now share one log scale,
    from the floor under every forecaster's curve to the top of them all."""
    from arena.plots import binary
    from arena.plots.common import _log_floor

    names = [f"d{i}" for i in range(4)] + [f"b{i}" for i in range(4)]
    styles = {
        n: {**st, "family": "defensive" if n[0] == "d" else "baseline"}
        for n, st in plots.forecaster_styles(names).items()
    }
    t = np.array([10, 100, 1000])
    curves = pd.DataFrame(
        [
            {
                "forecaster": n,
                "nature": nat,
                "seed": 0,
                "t": tt,
                "metric": "smce",
                "value": (0.5 if n[0] == "b" else 0.002) * tt * (1 + int(n[1]) / 10),
            }
            for n in names
            for nat in ("x", "y")
            for tt in t
        ]
    )
    summary = pd.DataFrame({"forecaster": names, "nature": "x", "seed": 0, "game": "binary"})
    jobs = [
        j for j in binary.jobs(summary, curves, None, tmp_path, ("png",), styles, metrics=()) if j.kind == "by_nature"
    ]
    assert len(jobs) == 2 and jobs[0].args[-1] == jobs[1].args[-1]
    floor, top = jobs[0].args[-1]
    k29 = np.sqrt(8 * np.geomspace(10, 1000, 50) / 3) / np.geomspace(10, 1000, 50)
    assert floor == _log_floor(np.r_[0.002 * np.array([1, 1.1, 1.2, 1.3]), 0.65, k29])  # all groups' curves
    assert top == pytest.approx(max(0.5 * 1.3, k29.max()))
    limits = [binary.FIGURES["by_nature"](*job.args).axes[0].get_ylim() for job in jobs]
    assert limits[0] == pytest.approx(limits[1]) and limits[0][0] < 0.002 and limits[0][1] > 0.65


def test_a_reliability_line_does_not_join_a_bin_of_a_handful_of_forecasts():
    """The first rounds' forecasts (p = 1/2 on every seed) fill a bin of their own whose observed frequency is
    noise: the line's kink to it was the largest feature of a panel. The line joins the bins holding at least
    0.5% of the forecasts (and 5); every bin keeps its marker."""
    rel = pd.DataFrame(
        {
            "forecaster": "f",
            "nature": "n",
            "seed": 0,
            "bin": [2, 5, 7],
            "lo": [0.2, 0.5, 0.7],
            "hi": [0.3, 0.6, 0.8],
            "count": [600, 3, 397],
            "mean_p": [0.25, 0.5, 0.75],
            "mean_y": [0.2, 1.0, 0.8],
        }
    )
    ax = plots.reliability_diagram(rel, "f", "n").axes[0]
    np.testing.assert_allclose(_line(ax, "line").get_xydata(), [[0.25, 0.2], [0.75, 0.8]])
    pts = next(c for c in ax.collections if c.get_gid() == "bins").get_offsets()
    np.testing.assert_allclose(np.asarray(pts), [[0.25, 0.2], [0.5, 1.0], [0.75, 0.8]])


def test_a_rolling_coverage_beyond_the_robust_limits_is_marked_on_the_edge():
    """Robust limits (the middle 98% of the values) left a forecaster's dip to 0.14 out of the figure unsaid:
    a value beyond them is a triangle on the axis' edge, in its forecaster's color, named in the legend."""
    t = np.arange(10, 1010, 10)
    rows = [{"forecaster": "a_steady", "seed": 0, "t": tt, "metric": "rolling_coverage", "value": 0.9} for tt in t]
    rows += [
        {"forecaster": "z_dips", "seed": 0, "t": tt, "metric": "rolling_coverage", "value": 0.14 if tt == 50 else 0.88}
        for tt in t
    ]
    fig = plots.rolling_coverage(pd.DataFrame(rows), q=0.9)  # no styles given: the default ones
    ax = fig.axes[0]
    lo = ax.get_ylim()[0]
    assert lo > 0.14  # the dip is outside the robust limits
    mark = _line(ax, "beyond:z_dips")
    np.testing.assert_array_equal(mark.get_xdata(), [50])
    np.testing.assert_allclose(mark.get_ydata(), [lo])
    assert same_color(mark.get_color(), _line(ax, "mean:z_dips").get_color())  # its forecaster's color
    assert not [ln for ln in ax.get_lines() if ln.get_gid() == "beyond:a_steady"]
    labels = [
        tx.get_text()
        for leg in [*fig.legends, *(a.get_legend() for a in fig.axes if a.get_legend())]
        for tx in leg.get_texts()
    ]
    assert any(lab.startswith("beyond the axis") for lab in labels)


def test_expert_weights_are_one_run_per_forecaster_whatever_seeds_and_natures_the_table_holds():
    """Each forecaster's panel is the weights of its own first seed on one nature: a forecaster whose seeds start
    at 1 keeps its panel, and a table of several natures is not averaged over them either."""
    rows = [
        {
            "forecaster": f,
            "nature": nat,
            "seed": seed,
            "t": t,
            "metric": f"weight:{j}",
            "value": (0.9 if j == (seed + k) % 2 else 0.1),
        }
        for f, seeds in (("a", (0, 1)), ("b", (1, 2)))
        for k, nat in enumerate(("n1", "n2", "n3"))
        for seed in seeds
        for t in (10, 100)
        for j in (0, 1)
    ]
    fig = plots.expert_weights(pd.DataFrame(rows))
    panels = {ax.get_title(): ax for ax in fig.axes if ax.get_visible()}
    assert set(panels) == {"a", "b"} and not any(ax.collections for ax in panels.values())  # no band
    for name, seed in (("a", 0), ("b", 1)):  # its first seed, on the first nature n1 (k = 0)
        for j in (0, 1):
            want = 0.9 if j == seed % 2 else 0.1
            np.testing.assert_allclose(_line(panels[name], f"weight:{name}:{j}").get_ydata(), [want, want])
    assert "n1" in fig.get_suptitle() and "first seed" in fig.get_suptitle()


def test_a_heatmap_with_forfeits_and_many_natures_keeps_every_text_in_its_cell():
    """A cell with a forfeit reads "-0.0415 F": its length, not only its number's, sets the font size."""
    natures = [f"nature_{j}" for j in range(17)]
    s = pd.DataFrame(
        [
            {
                "forecaster": f,
                "nature": nat,
                "seed": seed,
                "brier": -0.0415 - 0.001 * j,
                "status": "forfeit" if (seed == 1 and f == "a") else "ok",
                "T": 10,
            }
            for f in ("a", "b", "c")
            for j, nat in enumerate(natures)
            for seed in (0, 1)
        ]
    )
    s.loc[s["status"] == "forfeit", "brier"] = np.nan
    fig = plots.leaderboard_heatmap(s, "brier")
    ax = fig.axes[0]
    fig.canvas.draw()
    cells = [tx for tx in ax.texts if str(tx.get_gid()).startswith("value:")]
    assert any(tx.get_text().endswith(" F") for tx in cells)
    width = ax.get_window_extent().width / len(natures)
    assert all(tx.get_window_extent().width < width for tx in cells)


def test_a_scaled_heatmap_says_the_cells_unit():
    """Values all under 0.001 share a power of ten with their cells, and the title says which."""
    s = pd.DataFrame(
        [
            {"forecaster": f, "nature": f"n{j}", "seed": 0, "bias": v, "status": "ok", "T": 10}
            for f, vs in (("a", [0.0, 5e-6, 8e-4]), ("b", [0.0, 1e-5, 2e-4]))
            for j, v in enumerate(vs)
        ]
    )
    fig = plots.leaderboard_heatmap(s, "bias")
    ax = fig.axes[0]
    assert "(\u00d710\u207b\u2074)" in fig.get_suptitle()
    texts = {tx.get_gid(): tx.get_text() for tx in ax.texts if str(tx.get_gid()).startswith("value:")}
    assert texts["value:a:n2"] == "8.00" and texts["value:b:n1"] == "0.100"


@pytest.mark.parametrize("formats", [("png",), ("pdf", "png")])
def test_a_laid_out_figure_is_drawn_once_per_format_when_saved(tmp_path, monkeypatch, formats):
    """A figure with a layout engine is laid out once, then drawn once per format: no savefig draws it a
    second time first. ``set_layout_engine("none")`` left a placeholder engine, for which matplotlib's
    savefig draws the whole figure (every text measured) before drawing it again to save it."""
    from arena.plots.style import _new_figure, _save

    s = pd.DataFrame(
        [
            {"forecaster": f, "nature": f"n{j}", "seed": 0, "brier": 0.1 * (i + j + 1), "status": "ok", "T": 10}
            for i, f in enumerate("ab")
            for j in range(3)
        ]
    )
    fig = plots.leaderboard_heatmap(s, "brier")
    assert fig.get_layout_engine() is not None and _new_figure().get_layout_engine() is not None
    draws = []
    real = Figure.draw
    monkeypatch.setattr(Figure, "draw", lambda self, renderer: (draws.append(1), real(self, renderer))[1])
    paths = _save(fig, tmp_path / "heat", formats)
    assert [p.name for p in paths] == [f"heat.{ext}" for ext in formats] and all(p.stat().st_size for p in paths)
    assert len(draws) == len(formats)
    assert fig.get_layout_engine() is None  # laid out for good: a later savefig does not lay it out again


def test_a_laid_out_figure_saved_under_a_users_autolayout_is_drawn_once(tmp_path, monkeypatch):
    """A user's matplotlibrc asking for a layout engine on every figure does not bring one back once the figure
    is laid out."""
    import matplotlib as mpl

    from arena.plots.style import _save

    s = pd.DataFrame(
        [
            {"forecaster": f, "nature": f"n{j}", "seed": 0, "brier": 0.1 * (i + j + 1), "status": "ok", "T": 10}
            for i, f in enumerate("ab")
            for j in range(3)
        ]
    )
    draws, real = [], Figure.draw
    monkeypatch.setattr(Figure, "draw", lambda self, renderer: (draws.append(1), real(self, renderer))[1])
    for rc in ({"figure.autolayout": True}, {"figure.constrained_layout.use": True}):
        with mpl.rc_context(rc):
            fig = plots.leaderboard_heatmap(s, "brier")
            draws.clear()
            _save(fig, tmp_path / "heat", ("pdf", "png"))
            assert len(draws) == 2 and fig.get_layout_engine() is None, rc


def test_a_reliability_grid_has_ticks_and_labels_on_its_outer_panels_only():
    """Seven panels, three a row: the left column's panels have the three y ticks, the panels with none under
    them the three x ticks and "mean forecast"; the inner ones no tick at all; one y label for the rows."""
    rel = pd.DataFrame(
        [
            {
                "forecaster": f"f{i}",
                "nature": "n",
                "seed": 0,
                "bin": b,
                "lo": b / 2,
                "hi": (b + 1) / 2,
                "count": 10 + b,
                "mean_p": b / 2 + 0.2,
                "mean_y": b / 2 + 0.25,
            }
            for i in range(7)
            for b in range(2)
        ]
    )
    fig = plots.reliability_grid(rel, "n", ncols=3)
    panels = {ax.get_title(): ax for ax in fig.axes}
    assert len(panels) == 7
    for i in range(7):
        ax = panels[f"f{i}"]
        left, bottom = i % 3 == 0, i >= 7 - 3  # f4..f6 have no panel under them
        assert [float(v) for v in ax.get_yticks()] == ([0.0, 0.5, 1.0] if left else []), i
        assert [float(v) for v in ax.get_xticks()] == ([0.0, 0.5, 1.0] if bottom else []), i
        assert ax.get_xlabel() == ("mean forecast" if bottom else "") and ax.get_ylabel() == ""
    assert [t.get_text() for t in fig.texts if t.get_text() == "observed frequency"] == ["observed frequency"]


def test_a_png_saved_at_the_reports_compression_has_matplotlibs_pixels(tmp_path):
    """The report's PNGs (zlib level 3, not Pillow's default 6: quicker) hold exactly the pixels matplotlib's
    default PNG holds."""
    import matplotlib.image as mpimg

    from arena.plots.style import DPI, _save

    s = pd.DataFrame(
        [
            {"forecaster": f, "nature": f"n{j}", "seed": 0, "brier": 0.1 * (i + j + 1), "status": "ok", "T": 10}
            for i, f in enumerate("abc")
            for j in range(4)
        ]
    )
    fig = plots.leaderboard_heatmap(s, "brier")
    (ours,) = _save(fig, tmp_path / "ours", ("png",))
    fig.savefig(tmp_path / "default.png", dpi=DPI)  # laid out already by _save: the same drawing
    np.testing.assert_array_equal(mpimg.imread(ours), mpimg.imread(tmp_path / "default.png"))


def test_a_users_autolayout_leaves_the_figures_of_fixed_panels_as_they_are(tmp_path):
    """Figures that place their panels themselves (small multiples, reliability grids) get no layout engine from a
    matplotlibrc asking for one on every figure: the same bytes as without it (a tight layout moved every panel of
    the small multiples to one place)."""
    import matplotlib as mpl

    from arena.plots.binary import reliability_grid
    from arena.plots.multiples import curves_by_nature
    from arena.plots.style import _save

    c = pd.DataFrame(
        [(f, nat, 0, t, "smce", 0.5 * t**0.5) for f in "ab" for nat in ("n1", "n2", "n3") for t in (10, 100, 1000)],
        columns=["forecaster", "nature", "seed", "t", "metric", "value"],
    )
    rel = pd.DataFrame(
        [
            {
                "forecaster": f,
                "nature": "n",
                "seed": 0,
                "bin": b,
                "lo": b / 2,
                "hi": (b + 1) / 2,
                "count": 10,
                "mean_p": b / 2 + 0.2,
                "mean_y": b / 2 + 0.3,
            }
            for f in "abcd"
            for b in (0, 1)
        ]
    )
    for name, draw in (
        ("multiples", lambda: curves_by_nature(c, "smce")),
        ("grid", lambda: reliability_grid(rel, "n")),
    ):
        plain = _save(draw(), tmp_path / f"{name}_plain", ("png", "svg"))
        with mpl.rc_context({"figure.autolayout": True}):
            fig = draw()
            assert fig.get_layout_engine() is None
            asked = _save(fig, tmp_path / f"{name}_asked", ("png", "svg"))
        for x, y in zip(plain, asked, strict=False):
            assert x.read_bytes() == y.read_bytes(), x.name


def test_latex_table_has_one_number_format_per_column_and_rows_by_rank():
    s = pd.DataFrame(
        {
            "forecaster": ["z", "z", "a", "a", "m", "m"],
            "nature": "n",
            "seed": [0, 1] * 3,
            "smce_over_T": [0.27, 0.28, 0.0195, 0.0196, 0.2, 0.21],
            "bias": [4.44e-4, 4.5e-4, 0.02, 0.03, 0.2, 0.2],
        }
    )
    rows = _cells(plots.latex_table(s, ["smce_over_T", "bias"]))
    assert [r[0] for r in rows] == ["a", "m", "z"]  # by rank on smCE/T, not by name
    for j in (1, 2):
        numbers = re.findall(r"-?\d+\.\d+|-?\d+", " ".join(r[j] for r in rows))
        decimals = {len(x.partition(".")[2]) for x in numbers}
        assert len(decimals) == 1, (j, numbers)  # no 0.27 beside 0.0195 or 4.44e-04
        assert not any("e-" in r[j] for r in rows)


def test_a_heatmap_of_a_bulk_with_far_outliers_separates_the_bulk():
    """The Brier leaderboard: most cells 0.15-0.35, a few at 0 and 1. A log scale driven by the outliers painted
    the bulk one color: the colors are ranks within each nature, so the bulk spans most of the colors and an
    outlier moves no other cell's color."""
    rng = np.random.default_rng(0)
    bulk = rng.uniform(0.15, 0.35, 40)
    values = np.r_[bulk, 0.0, 0.00125, 0.005, 1.0, 0.996]
    s = pd.DataFrame(
        [
            {"forecaster": f"f{i % 9}", "nature": f"n{i // 9}", "seed": 0, "brier": v, "status": "ok", "T": 10}
            for i, v in enumerate(values)
        ]
    )
    fig = plots.leaderboard_heatmap(s, "brier")
    image = fig.axes[0].images[0]
    norm, ranks = image.norm, np.asarray(image.get_array())
    in_bulk = np.isin(s.pivot(index="forecaster", columns="nature", values="brier").to_numpy(), bulk)
    assert norm(ranks[in_bulk]).max() - norm(ranks[in_bulk]).min() > 0.6
    far = s.assign(brier=s["brier"].where(s["brier"] < 0.9, s["brier"] * 1e6))  # the outliers a million times farther
    np.testing.assert_array_equal(
        np.asarray(plots.leaderboard_heatmap(far, "brier").axes[0].images[0].get_array()), ranks
    )


def test_red_team_figures_say_what_they_draw_metric_and_T():
    from arena.plots.redteam import attack_vs_certificate, cross_attack_heatmap

    one = pd.DataFrame(
        {
            "metric": "coverage_error",
            "forecaster": ["aci"],
            "T": [500],
            "value": [0.02],
            "certificate": [None],
            "cert_bound": [np.nan],
        }
    )
    title = attack_vs_certificate(one, "coverage_error").axes[0].get_title()
    assert "T = 500" in title and "dashed" not in title and "solid" not in title  # nothing dashed is drawn
    both = pd.DataFrame(
        {
            "metric": "smce_over_T",
            "forecaster": ["k29", "k29"],
            "T": [100, 1000],
            "value": [0.05, 0.017],
            "certificate": "smce",
            "cert_bound": [0.07, 0.023],
        }
    )
    assert "certified bound" in attack_vs_certificate(both).axes[0].get_title()
    m = pd.DataFrame(
        {"attacker": ["a", "a"], "victim": ["a", "b"], "metric": "smce_over_T", "T": 300, "value": [0.3, 0.1]}
    )
    title = cross_attack_heatmap(m).axes[0].get_title()
    assert "cross-attack" in title and "smCE/T" in title and "T = 300" in title


def test_a_two_panel_reliability_grid_has_a_title_of_at_most_two_lines():
    from arena.plots.binary import reliability_grid

    rel = pd.DataFrame(
        [
            {
                "forecaster": f,
                "nature": "anti_forecaster",
                "seed": 0,
                "bin": b,
                "lo": b / 10,
                "hi": (b + 1) / 10,
                "count": 5,
                "mean_p": b / 10 + 0.05,
                "mean_y": b / 10,
            }
            for f in ("k29", "running_mean")
            for b in range(10)
        ]
    )
    fig = reliability_grid(rel.assign(game="binary", T=100), "anti_forecaster")
    title = fig.get_suptitle()
    assert title.count("\n") <= 1 and "anti forecaster" in title  # three lines squeezed the two panels
    assert "binary" in title and "T = 100" in title and "1 seed" in title


def test_figures_from_the_curves_moments_are_the_figures_from_every_seed(tmp_path):
    """The report draws its curves from ``curve_stats`` (their moments over seeds): every line, band and bound of a
    figure is the one drawn from the long table of every seed's values (to 1e-12: sums in another order)."""
    import matplotlib.pyplot as plt

    out = store_binary_matchups(tmp_path, FORECASTERS, NATURES, range(5), 100)  # five seeds: bands are drawn
    raw = collect(out)["curves"]
    stats = moments(raw, CURVE_KEYS)

    def drawn(fig):
        lines = [(ln.get_gid(), ln.get_xydata()) for ax in fig.axes for ln in ax.get_lines()]
        bands = [(c.get_gid(), p.vertices) for ax in fig.axes for c in ax.collections for p in c.get_paths()]
        return lines, bands

    figures = [
        lambda c: plots.smce_vs_T(c, nature=NATURES[0]),
        lambda c: plots.regret_curves(c, "bias", nature=NATURES[1]),
        lambda c: plots.regret_curves(c, "regret_linear"),
        lambda c: plots.curves_by_nature(c, "smce"),
        lambda c: plots.curves_by_nature(c, "regret_linear"),
    ]
    for figure in figures:
        (a_lines, a_bands), (b_lines, b_bands) = drawn(figure(raw)), drawn(figure(stats))
        assert [g for g, _ in a_lines] == [g for g, _ in b_lines] and len(a_lines) > 2
        assert [g for g, _ in a_bands] == [g for g, _ in b_bands] and a_bands
        for (_, x), (_, y) in zip(a_lines + a_bands, b_lines + b_bands, strict=True):
            np.testing.assert_allclose(x, y, rtol=1e-12)
        plt.close("all")
