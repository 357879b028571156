"""``paper/example.tex``: a LaTeX document that includes every figure and table of a paper pack (``arena-report
--paper``) at the size it was drawn for, so that the pack is known to compile before it goes into a paper.

Each figure is included at its natural size: a figure is saved at the width it was drawn for (3.25 in, a
column, or 6.75 in, a page of two columns) with no cropping, so its PDF's page is that size. The text block is
6.75 in wide, a two-column paper's. Computer Modern (Type 1, the default of every LaTeX) and the figures' own
TrueType fonts are embedded in the PDF it compiles to.

Examples
--------
>>> print(example_tex([Path("binary_certificates.pdf"), Path("binary_table.tex")]).splitlines()[-6])
\\begin{table}[htbp]
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from arena.plots.tables import tex_escape

#: The file name of the example document, beside the pack's figures and tables.
EXAMPLE = "example.tex"
#: Figure formats LaTeX includes, best first (a vector PDF, else a PNG).
_INCLUDED = (".pdf", ".png")


def example_tex(files: Sequence[Path]) -> str:
    """The text of :data:`EXAMPLE` for a paper pack's ``files`` (figures and ``*_table.tex``; names relative to the
    folder the document is in): every figure at its natural size (one format per figure, PDF first), then every
    table, each with its file name as the caption."""
    stems: dict[str, Path] = {}
    for f in sorted(
        map(Path, files), key=lambda p: (p.stem, _INCLUDED.index(p.suffix) if p.suffix in _INCLUDED else 9)
    ):
        if f.suffix in _INCLUDED:
            stems.setdefault(f.stem, f)
    tables = sorted(Path(f) for f in files if Path(f).suffix == ".tex" and Path(f).name != EXAMPLE)
    lines = [
        "% Every figure and table of this paper pack at the size it was drawn for (arena-report --paper):",
        "% compile with pdflatex example.tex in this folder.",
        r"\documentclass[10pt]{article}",
        r"\usepackage[letterpaper,textwidth=6.75in,vmargin=0.8in]{geometry}",
        r"\usepackage{graphicx,booktabs}",
        r"\begin{document}",
    ]
    for f in stems.values():
        lines += [
            r"\begin{figure}[htbp]",
            r"\centering",
            rf"\includegraphics{{{f.name}}}",
            rf"\caption{{\texttt{{{tex_escape(f.name)}}}}}",
            r"\end{figure}",
        ]
    for t in tables:
        lines += [
            r"\begin{table}[htbp]",
            r"\centering",
            rf"\input{{{t.name}}}",
            rf"\caption{{\texttt{{{tex_escape(t.name)}}}}}",
            r"\end{table}",
        ]
    return "\n".join([*lines, r"\end{document}", ""])


__all__ = ["EXAMPLE", "example_tex"]
