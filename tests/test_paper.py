"""The paper pack compiles: ``arena-report DIR --paper`` writes ``paper/example.tex``, which includes every figure
and table of the pack; a real LaTeX (pdflatex, else tectonic) compiles it, and every font of the PDF is embedded
(``pdffonts``). Skipped, saying so, only where no LaTeX can be had (``.ci/run`` installs TeX Live)."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from _stored import store_binary_matchups  # tests/_stored.py

from arena.aggregate import write_tables
from arena.cli import report_main


def _latex() -> list[str]:
    if shutil.which("pdflatex"):
        return ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "example.tex"]
    if shutil.which("tectonic"):
        return ["tectonic", "example.tex"]
    pytest.skip(
        "no pdflatex or tectonic here (apt-get install -y texlive-latex-base texlive-latex-recommended "
        "texlive-fonts-recommended)"
    )


def test_the_paper_pack_compiles_with_every_font_embedded(tmp_path):
    command = _latex()
    out = tmp_path / "r"
    store_binary_matchups(out, ("k29", "running_mean"), ("sinusoid", "anti_forecaster"), (0,), T=80)
    write_tables(out)
    report_main([str(out), "--paper", "--quiet"])
    paper = out / "paper"
    tex = (paper / "example.tex").read_text()
    figures = sorted(p.name for p in paper.glob("*.pdf"))
    tables = sorted(p.name for p in paper.glob("*_table.tex"))
    assert figures and tables
    for name in figures:
        assert f"\\includegraphics{{{name}}}" in tex, name  # at its natural size: the width it was drawn for
    for name in tables:
        assert f"\\input{{{name}}}" in tex, name
    paper = shutil.copytree(paper, tmp_path / "build")  # compiled in a copy: the pack stays as written
    done = subprocess.run(command, cwd=paper, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:]
    log = (paper / "example.log").read_text(errors="replace") if (paper / "example.log").exists() else ""
    assert "Overfull \\hbox" not in log  # every figure and table fits the text block
    if not shutil.which("pdffonts"):
        pytest.skip("no pdffonts here (apt-get install -y poppler-utils): compiled, fonts not checked")
    fonts = subprocess.run(["pdffonts", str(paper / "example.pdf")], capture_output=True, text=True, check=True)
    rows = fonts.stdout.splitlines()[2:]
    assert rows, fonts.stdout
    # the columns after the name and type: encoding, emb, sub, uni, object, id; "emb" is the fourth from the end
    for row in rows:
        emb = re.split(r"\s+", row.strip())[-5]
        assert emb == "yes", row
