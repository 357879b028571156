"""Figures and tables: what is drawn equals what pandas computes from the results tables."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import same_color
from matplotlib.figure import Figure

import arena
import arena.results
from arena import plots
from arena.results import collect, matchup_id, reliability_table, save_matchup, write_tables

FORECASTERS = ("k29", "linear_df", "running_mean")
NATURES = ("iid_bernoulli", "sinusoid")
SEEDS = (0, 1)
T = 200


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """A small results directory: 3 forecasters x 2 natures x 2 seeds at T = 200."""
    out = tmp_path_factory.mktemp("results")
    for fc in FORECASTERS:
        for nat in NATURES:
            for seed in SEEDS:
                r = arena.play("binary", fc, nat, T=T, seed=seed)
                row = r.row()
                row["matchup_id"] = matchup_id("binary", fc, nat, seed, T, {})
                save_matchup(out, row, r.curves, reliability_table(r.recorder.p, r.recorder.y))
    return out, collect(out)


@pytest.fixture(scope="module")
def written(results):
    out, _ = results
    return out, plots.report(out)


def _line(ax, gid):
    found = [ln for ln in ax.get_lines() if ln.get_gid() == gid]
    assert len(found) == 1, f"expected one line {gid!r}, found {[ln.get_gid() for ln in ax.get_lines()]}"
    return found[0]


# ------------------------------------------------------------------------------- report
def test_report_writes_every_expected_file(written):
    out, paths = written
    fig_dir = out / "figures"
    stems = [f"{kind}__{nat}" for nat in NATURES for kind in ("smce_vs_T", "regret_linear", "reliability")]
    stems += [f"leaderboard__{m}" for m in ("smce_over_T", "brier", "bias")]
    expected = {fig_dir / f"{s}.{ext}" for s in stems for ext in ("pdf", "png")} | {fig_dir / "table.tex"}
    assert set(paths) == expected
    for p in expected:
        assert p.stat().st_size > 0, p
    for p in fig_dir.glob("*.pdf"):
        assert p.read_bytes()[:4] == b"%PDF", p
    for p in fig_dir.glob("*.png"):
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", p
    assert "\\toprule" in (fig_dir / "table.tex").read_text()
    assert not list(fig_dir.glob(".*.tmp")), "temporary files left behind"


def test_report_reads_the_tables_it_is_given(results, tmp_path):
    _, tables = results
    only = {"summary": tables["summary"], "curves": tables["curves"].iloc[:0], "reliability": pd.DataFrame()}
    paths = plots.report(tmp_path, tables=only, formats=("png",))
    names = {p.name for p in paths}
    assert names == {f"leaderboard__{m}.png" for m in ("smce_over_T", "brier", "bias")} | {"table.tex"}


def test_report_is_the_same_in_worker_processes(results, tmp_path, monkeypatch):
    """Figures drawn by worker processes are byte for byte those drawn in this process, in the same order."""
    _, tables = results
    monkeypatch.setenv("ARENA_PLOT_JOBS", "1")
    one = tmp_path / "one"
    serial = plots.report(one, tables=tables)
    # three processes; this one waits for a worker's first figure before drawing any itself
    three, here, draw = tmp_path / "three", [], plots._draw_job

    def after_a_worker(job):
        deadline = time.monotonic() + 60
        while not here and not list((three / "figures").glob("*.png")) and time.monotonic() < deadline:
            time.sleep(0.05)
        here.append(job[2].name)
        return draw(job)

    monkeypatch.setattr(plots, "_draw_job", after_a_worker)
    monkeypatch.setenv("ARENA_PLOT_JOBS", "3")
    parallel = plots.report(three, tables=tables)
    assert 0 < len(here) < 3 * len(NATURES) + 3  # both this process and the workers drew figures
    assert len(serial) == 3 * len(NATURES) * 2 + 3 * 2 + 1
    assert [p.relative_to(one) for p in serial] == [p.relative_to(three) for p in parallel]
    for a, b in zip(serial, parallel):
        assert a.read_bytes() == b.read_bytes(), a.name
    assert not list((three / "figures").glob(".*.tmp"))


def test_an_error_in_a_worker_process_is_raised_here(tmp_path, monkeypatch):
    monkeypatch.setenv("ARENA_PLOT_JOBS", "2")
    jobs = [("no_such_figure", (), tmp_path / f"x{i}", ("png",), {}) for i in range(4)]
    with pytest.raises(KeyError, match="no_such_figure"):
        plots._run_jobs(jobs)


def test_report_without_workers_draws_everything_here(results, tmp_path, monkeypatch):
    _, tables = results
    monkeypatch.setenv("ARENA_PLOT_JOBS", "2")
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-such-python"))  # no worker can start
    paths = plots.report(tmp_path, tables=tables, formats=("png",))
    assert len(paths) == 3 * len(NATURES) + 3 + 1 and all(p.stat().st_size > 0 for p in paths)


def test_report_reads_fresh_aggregates_and_not_stale_ones(results, tmp_path, monkeypatch):
    """Aggregates that write_tables left after the last matchup are read instead of every matchup file."""
    src, tables = results
    out = tmp_path / "results"
    shutil.copytree(src, out, ignore=shutil.ignore_patterns("figures"))
    write_tables(out)
    calls = []
    monkeypatch.setattr(arena.results, "collect", lambda d: calls.append(d) or collect(d))
    fresh = plots._read_tables(out)
    assert calls == []
    for name in ("curves", "reliability"):
        pd.testing.assert_frame_equal(fresh[name], tables[name])
    a, b = fresh["summary"], tables["summary"]
    assert list(a.columns) == list(b.columns) and (a.dtypes == b.dtypes).all()
    for col in a:  # equal, but for None against NaN in object columns (Parquet keeps no NaN there)
        assert ((a[col] == b[col]) | (a[col].isna() & b[col].isna())).all(), col
    # a matchup written after the aggregates: everything is read again
    some = next((out / "curves").glob("*.parquet"))
    before = some.stat().st_mtime_ns
    newer = (out / "summary.parquet").stat().st_mtime_ns + 10**9
    os.utime(some, ns=(newer, newer))
    plots._read_tables(out)
    assert calls == [out]
    os.utime(some, ns=(before, before))
    plots._read_tables(out)
    assert calls == [out]
    # a matchup removed: likewise
    calls.clear()
    next((out / "matchups").glob("*.parquet")).unlink()
    stale = plots._read_tables(out)
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
        assert line.get_color() == plots.forecaster_style(fc)["color"]
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
        np.testing.assert_allclose(_line(ax, f"mean:{fc}").get_ydata(),
                                   _line(ref.axes[0], f"mean:{fc}").get_ydata())


def test_single_seed_draws_no_band(results):
    _, tables = results
    c = tables["curves"]
    fig = plots.smce_vs_T(c[(c["seed"] == 0) & (c["nature"] == "sinusoid")])
    assert not [col for col in fig.axes[0].collections if str(col.get_gid()).startswith("band:")]
    fig = plots.smce_vs_T(c[c["nature"] == "sinusoid"])
    assert len([col for col in fig.axes[0].collections if str(col.get_gid()).startswith("band:")]) == 3


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
    return (np.array([x[:, 0].min() + x[:, 0].max() for x in v]) / 2, np.array([x[:, 1].min() for x in v]),
            np.array([np.ptp(x[:, 1]) for x in v]))


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
    # the count scale on the right reads the bars' heights as the pooled counts
    (scale,) = [a for a in ax.child_axes if a.get_gid() == "count_axis"]
    fig.canvas.draw()
    per_unit = np.diff(scale.get_ylim())[0] / np.diff(ax.get_ylim())[0]
    np.testing.assert_allclose(height * per_unit, n, rtol=1e-9)
    assert 0 < height.max() < 0.5  # the bars stay in the lower part of the panel
    assert scale.get_yticklabels()[0].get_text() == "0"


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
        np.testing.assert_allclose(height / height.max(), n / n.max(), rtol=1e-12)
        # the tallest bar carries its count
        (label,) = [t for t in ax.texts if t.get_gid() == "count_max"]
        assert int(label.get_text().replace(",", "")) == n.max()
        assert label.get_position()[0] == pytest.approx(center[np.argmax(n)])
        bins = next(c for c in ax.collections if c.get_gid() == "bins")
        assert same_color(bins.get_facecolors()[0], plots.forecaster_style(fc)["color"])


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
    rows = [t.get_text() for t in ax.get_yticklabels()]
    cols = [t.get_text().replace(" ", "_") for t in ax.get_xticklabels()]
    image = np.asarray(ax.images[0].get_array())
    np.testing.assert_allclose(image, expected.unstack().loc[rows, cols].to_numpy(), rtol=1e-12)
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
    for fig in (plots.smce_vs_T(empty), plots.regret_curves(empty), plots.leaderboard_heatmap(empty),
                plots.reliability_grid(empty, "sinusoid")):
        assert isinstance(fig, Figure)
    nan = pd.DataFrame({"forecaster": ["k29"], "nature": ["n"], "seed": [0], "t": [10], "metric": ["smce"],
                        "value": [np.nan]})
    assert isinstance(plots.smce_vs_T(nan), Figure)
    assert plots.latex_table(empty).count("\\midrule") == 1


# ---------------------------------------------------------------------------------- table
def _cells(tex: str) -> list[list[str]]:
    body = tex.split("\\midrule", 1)[1].split("\\bottomrule")[0]
    return [[c.strip() for c in line.rstrip("\\ ").split("&")] for line in body.strip().splitlines()]


def test_latex_table_bolds_the_column_minimum(results):
    _, tables = results
    s = tables["summary"]
    metrics = ["smce_over_T", "brier", "bias"]
    tex = plots.latex_table(s, metrics)
    assert tex.startswith("\\begin{tabular}{lrrr}") and "\\toprule" in tex and tex.endswith("\\end{tabular}")
    means = s.groupby("forecaster")[metrics].mean()
    rows = _cells(tex)
    assert sorted(r[0].replace("\\_", "_") for r in rows) == sorted(FORECASTERS)
    for j, m in enumerate(metrics, start=1):
        bold = [r[0].replace("\\_", "_") for r in rows if r[j].startswith("\\textbf{")]
        assert bold == [means[m].idxmin()], (m, bold, means[m])
        for r in rows:
            value = float(re.sub(r"\\textbf\{(.*)\}", r"\1", r[j]))
            assert value == pytest.approx(means.loc[r[0].replace("\\_", "_"), m], rel=5e-3)


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
def test_forecaster_style_is_stable_and_distinct():
    styles = [plots.forecaster_style(n) for n in plots.KNOWN_FORECASTERS]
    assert styles == [plots.forecaster_style(n) for n in plots.KNOWN_FORECASTERS]
    assert len({(s["color"], s["marker"]) for s in styles}) == len(styles)
    assert len({s["color"] for s in styles}) == len(styles)
    assert len({s["marker"] for s in styles}) == len(styles)
    assert set(FORECASTERS) <= set(plots.KNOWN_FORECASTERS)
    # an unknown name is placed by a hash that does not change between processes
    code = "from arena.plots import forecaster_style as f; print(f('my_plugin'))"
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    other = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert other.stdout.strip() == str(plots.forecaster_style("my_plugin"))
