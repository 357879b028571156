"""The report driver: figures drawn only when their inputs change, stale files removed, the umask
followed, a single matchup's figures, formats and the paper's figures from the command line."""

from __future__ import annotations

import importlib
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from _stored import store_binary_matchups  # tests/_stored.py

from arena.aggregate import write_tables
from arena.cli import report_main

driver = importlib.import_module("arena.summarize")


def _results(out: Path, forecasters=("k29", "running_mean"), natures=("sinusoid",), seeds=(0,), T=100) -> Path:
    store_binary_matchups(out, forecasters, natures, seeds, T)
    write_tables(out)
    return out


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    return _results(tmp_path_factory.mktemp("small"))


def _figures(out: Path) -> dict[str, int]:
    """The figures of the report (PNG) and of the paper (PDF), with their times of change."""
    return {
        p.relative_to(out).as_posix(): p.stat().st_mtime_ns
        for p in [*(out / "figures").rglob("*.png"), *(out / "paper").rglob("*.pdf")]
    }


def test_a_rerun_with_nothing_new_draws_nothing_and_a_change_redraws_only_its_figures(small, tmp_path, capsys):
    out = tmp_path / "r"
    shutil.copytree(small, out)
    driver.report(out, formats=("png",))
    first = _figures(out)
    assert first and f"figures: {len(first)} to draw, 0 up to date" in capsys.readouterr().out
    driver.report(out, formats=("png",))
    assert _figures(out) == first  # not one file written again
    assert f"figures: 0 to draw, {len(first)} up to date" in capsys.readouterr().out
    # the bias of one matchup changes: its leaderboard is drawn again, the curves' figures are not
    tables = {k: pd.read_parquet(out / f"{k}.parquet") for k in ("summary", "curves", "reliability")}
    tables["summary"].loc[0, "bias"] += 0.5
    driver.report(out, tables=tables, formats=("png",))
    now = _figures(out)
    changed = {k for k in first if now[k] != first[k]}
    assert changed == {"figures/leaderboard__bias.png"}
    # a deleted file is drawn again, whatever the manifest says
    (out / "figures" / "certificates.png").unlink()
    driver.report(out, tables=tables, formats=("png",))
    assert (out / "figures" / "certificates.png").exists()


def test_stale_figures_are_removed_and_files_follow_the_umask(small, tmp_path):
    out = tmp_path / "r"
    shutil.copytree(small, out)
    (out / "figures").mkdir()
    stale = [out / "figures" / "smce_vs_T__a_nature_no_longer_played.png", out / "figures" / "old" / "table.tex"]
    for p in stale:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("old")
    mine = out / "figures" / "notes.txt"  # not a report's kind of file: left alone
    mine.write_text("keep")
    # in a process of its own: the umask is read once, when arena.results is imported (as for the tables)
    code = (
        "import os; os.umask(0o027); import importlib; "
        f"print(repr(importlib.import_module('arena.summarize').report({str(out)!r}, formats=('png', 'svg'), "
        "quiet=True)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    paths = [Path(p) for p in re.findall(r"PosixPath\('([^']+)'\)", done.stdout)]
    assert paths and not any(p.exists() for p in stale) and mine.exists()
    for p in paths:
        assert stat.S_IMODE(p.stat().st_mode) == 0o640, p  # 0666 less the umask, like the tables
    assert any(p.suffix == ".svg" for p in paths)


def test_a_single_matchup_gets_only_the_figures_that_mean_something(tmp_path):
    """smCE/T with its bound, reliability and certificates, as PNG: no leaderboard heatmap (one cell),
    no regret or bias curve that K29 certifies no bound on, no paper folder (``--paper`` writes it)."""
    out = _results(tmp_path / "one", forecasters=("k29",))
    names = {p.name for p in driver.report(out, quiet=True)}
    figures = {n for n in names if n.endswith((".png", ".pdf", ".svg"))}
    assert figures == {"smce_vs_T__sinusoid.png", "reliability__sinusoid.png", "certificates.png"}
    assert {"index.html", "summary.md", "table.tex"} <= names and not (out / "paper").exists()
    # a forecaster that certifies the bias (bit: the bit-prediction bound) gets its bias curve too
    out = _results(tmp_path / "bit", forecasters=("bit",))
    assert "bias__sinusoid.png" in {p.name for p in driver.report(out, quiet=True)}


def test_a_directory_without_the_paired_and_minimax_tables_gets_its_report(small, tmp_path):
    """A single matchup's aggregation may leave out the tables that compare forecasters: the
    report, summary.md and index.html do without them."""
    out = tmp_path / "r"
    shutil.copytree(small, out)
    for name in ("paired", "minimax", "leaderboard", "seed_stats"):
        for ext in ("parquet", "csv"):
            (out / f"{name}.{ext}").unlink(missing_ok=True)
    paths = driver.report(out, quiet=True)
    page = (out / "index.html").read_text()
    assert out / "index.html" in paths and (out / "summary.md").is_file()
    assert "paired.csv" not in page and "minimax.csv" not in page and 'src="figures/certificates.png"' in page


def test_formats_and_paper_from_the_command_line(small, tmp_path, capsys):
    out = tmp_path / "r"
    shutil.copytree(small, out)
    report_main([str(out), "--paper", "--quiet"])
    paper = sorted(p.name for p in (out / "paper").iterdir() if not p.name.startswith("."))
    assert paper == [
        "binary_certificates.pdf",
        "binary_leaderboard_smce_over_T.pdf",
        "binary_reliability_sinusoid.pdf",
        "binary_smce_vs_T_sinusoid.pdf",
        "binary_table.tex",
        "example.tex",
    ]
    assert not (out / "figures").exists() and not (out / "index.html").exists()  # only what a paper needs
    report_main([str(out), "--format", "svg", "--quiet"])
    assert {p.suffix for p in (out / "figures").iterdir() if not p.name.startswith(".")} == {".svg", ".tex"}
    assert (out / "index.html").read_text().count('.svg"') > 0
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_:
        report_main([str(out), "--format", "png,jpg"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "'png,jpg'" in err and "pdf, png, svg" in err


@pytest.mark.parametrize(
    ("loss", "drawn"),
    [("squared", ["brier", "regret_experts_over_T"]), ("log", ["brier", "loss", "regret_experts_over_T"])],
)
def test_a_leaderboard_with_the_values_of_an_earlier_one_is_drawn_once(tmp_path, loss, drawn):
    # the experts game's `loss` under the squared loss is the Brier score of the same forecasts, matchup by
    # matchup: one heatmap of it, named brier; under the log loss the two differ and both are drawn
    from arena import play
    from arena.games import get_game

    rows = [
        {**play(get_game("experts", loss=loss), f, n, T=200, seed=s).row(), "forecaster_plugin": f}
        for f in ("hedge", "uniform_average")
        for n in ("expert_constants", "expert_switching")
        for s in (0, 1)
    ]
    s = pd.DataFrame(rows)
    assert (s["loss"] == s["brier"]).all() == (loss == "squared")
    from arena.plots.plan import game_jobs

    jobs = game_jobs(s, pd.DataFrame(), pd.DataFrame(), tmp_path, ("png",), {}, ("brier",), facet=True)
    boards = sorted(Path(j.stem).name.removeprefix("leaderboard__") for j in jobs if j.kind == "leaderboard")
    assert boards == drawn


@pytest.mark.parametrize("processes", ["1", "2"])
def test_a_figure_that_fails_leaves_the_pages_of_the_last_report(small, tmp_path, monkeypatch, processes):
    # summary.md and index.html are made while the figures are drawn, but written only once every figure is:
    # a report that fails on a figure never leaves a page that shows figures which are not there
    out = tmp_path / "r"
    shutil.copytree(small, out)
    driver.report(out, formats=("png",))
    pages = {name: (out / name).read_bytes() for name in ("summary.md", "index.html")}
    tables = {k: pd.read_parquet(out / f"{k}.parquet") for k in ("summary", "curves", "reliability")}
    tables["summary"].loc[0, "bias"] += 0.5  # the bias leaderboard is drawn again; its page text changes

    def broken(*args):
        raise RuntimeError("a figure that cannot be drawn")

    monkeypatch.setenv("ARENA_PLOT_JOBS", processes)
    import arena.plots.draw

    monkeypatch.setitem(arena.plots.draw.FIGURES, "leaderboard", broken)
    with pytest.raises(RuntimeError, match="cannot be drawn"):
        driver.report(out, tables=tables, formats=("png",))
    assert {name: (out / name).read_bytes() for name in pages} == pages
    monkeypatch.undo()
    driver.report(out, tables=tables, formats=("png",))  # drawn: the new pages
    assert (out / "summary.md").read_bytes() != pages["summary.md"]


def test_each_forecasters_family_is_read_from_its_rows_without_loading_the_plugins(small):
    """A matchup's row stores its forecaster's family (the class attribute); the report reads it there instead
    of importing every plugin (and Numba) before it forks its workers; results stored without the column get
    it from the plugins, as before."""
    from forecasters.baselines import RunningMean
    from forecasters.defensive import K29

    summary = pd.read_parquet(small / "summary.parquet")
    want = {"k29": K29.family, "running_mean": RunningMean.family}
    assert want == {"k29": "defensive", "running_mean": "baseline"}
    assert dict(zip(summary["forecaster"], summary["forecaster_family"], strict=True)) == want
    code = (
        "import sys, importlib, pandas as pd; families = importlib.import_module('arena.summarize').families("
        "pd.read_parquet(sys.argv[1])); print(sorted(families.items()), 'numba' in sys.modules, "
        "any(m.split('.')[0] == 'forecasters' for m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(small / "summary.parquet")], capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == [*str(sorted(want.items())).split(), "False", "False"]
    assert driver.families(summary.drop(columns="forecaster_family")) == want


# ---------------------------------------------------------------------------- escaping what a results directory holds
_EVIL = "\\input{/etc/passwd}#$%&~_^{}<b>x</b>"


def _evil_results(tmp_path: Path) -> Path:
    """A results directory whose forecaster is labelled with LaTeX commands, all ten specials and raw HTML, and a CSV
    whose name tries to leave its href."""
    out = _results(tmp_path / "evil")
    for name in ("summary", "curves", "reliability"):
        df = pd.read_parquet(out / f"{name}.parquet")
        if "forecaster" in df:
            df["forecaster"] = df["forecaster"].replace("running_mean", _EVIL)
        df.to_parquet(out / f"{name}.parquet")
    (out / 'x" onmouseover="alert(1)" y=".csv').write_text("a,b\n1,2\n")
    return out


def test_labels_and_file_names_are_escaped_in_html_latex_and_markdown(tmp_path):
    out = _evil_results(tmp_path)
    tables = {k: pd.read_parquet(out / f"{k}.parquet") for k in ("summary", "curves", "reliability")}
    driver.report(out, tables=tables, formats=("png",), quiet=True, paper_formats=("pdf",))
    html = (out / "index.html").read_text()
    assert 'onmouseover="alert(1)"' not in html and "<b>x</b>" not in html
    assert "x&#34; onmouseover=&#34;alert(1)&#34; y=&#34;.csv" in html or "x%22%20onmouseover" in html
    for tex in [out / "figures" / "table.tex", *(out / "paper").glob("*_table.tex")]:
        text = tex.read_text()
        assert "\\input{" not in text, tex
        assert (
            "\\textbackslash{}input\\{/etc/passwd\\}\\#\\$\\%\\&\\textasciitilde{}\\_\\textasciicircum{}\\{\\}" in text
        )
    md = (out / "summary.md").read_text()
    assert "&lt;b&gt;x&lt;/b&gt;" in md  # as text in tables; in code spans, shown literally
    markdown = pytest.importorskip("markdown", reason="Python-Markdown (with mkdocs) renders summary.md")
    rendered = markdown.markdown(md, extensions=["tables"])
    assert "<b>" not in rendered and "&lt;b&gt;x&lt;/b&gt;" in rendered


def test_tex_escapes_the_ten_specials_and_commands():
    from arena.plots.tables import tex_escape

    assert tex_escape("a_b&c%d#e$f~g^h\\i{j}") == (
        "a\\_b\\&c\\%d\\#e\\$f\\textasciitilde{}g\\textasciicircum{}h\\textbackslash{}i\\{j\\}"
    )


def test_the_pages_read_the_statistics_across_seeds_of_the_directory_and_say_what_the_summary_says(
    tmp_path, monkeypatch
):
    """The pages show the ``seed_stats`` and ``paired`` tables the directory holds, not statistics computed again
    from every matchup's row (at 10^6 matchups that held the whole summary several times over); what they
    show is what the summary alone gives, line for line."""
    from arena.plots import answer, html, tables

    out = _results(tmp_path / "r", ("k29", "running_mean", "ogd"), ("sinusoid", "iid_bernoulli"), (0, 1, 2))
    read = driver.read_tables(out)
    assert {"seed_stats", "paired"} <= set(read) and len(read["paired"]) > 0
    summary = read["summary"]
    alone = tables.markdown_body(summary)
    found_alone = answer.answers(summary)
    boards_alone = html._leaderboards(summary)

    def refused(*args, **kwargs):
        raise AssertionError("the pages computed statistics across seeds from the summary again")

    monkeypatch.setattr(tables, "seed_stats", refused)
    monkeypatch.setattr(tables, "paired", refused)
    assert tables.markdown_body(summary, stats=read["seed_stats"], pairs=read["paired"]) == alone
    assert any("Top comparisons" in str(line) for line in alone)
    assert repr(answer.answers(summary, stats=read["seed_stats"])) == repr(found_alone)
    assert html._leaderboards(summary, read["seed_stats"]) == boards_alone
    driver.report(out, formats=("png",))  # the report itself: the tables from the directory, nothing computed
    assert "Top comparisons" in (out / "summary.md").read_text()
