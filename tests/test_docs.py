"""The README and the pages of docs/ run as printed.

Every fenced ``python`` block runs in a fresh interpreter, every ``bash``/``sh``/``console`` block in bash, in a
temporary folder shared by the blocks of one page and run in order (a block may use the files and results of the
blocks above it), with this environment's scripts first on the PATH (so ``arena`` and ``python`` are the project's)
and ``MPLBACKEND=Agg``. A block whose first or second line is a comment naming a file (``# my_conf/nature/x.yaml``)
is a file the reader saves: it is written there, not run. A block that cannot run in a test (an install, which CI
runs in ``.ci/run``; a cluster) is marked on the line before it with ``<!-- not run: REASON -->``, the reason one
of :data:`REASONS`, and only a handful are.

Also: ``mkdocs build --strict`` builds the site without a warning (broken links and anchors included), and the
README is short, with exactly two commands in its set-up section, the test command being what ``.ci/run`` runs.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
RUN = {"python", "bash", "sh", "console"}
#: why a block may be left out of the test; anything else fails
REASONS = {
    "the install, which CI runs",
    "the install and the default tournament: minutes",
    "installs a package",
    "needs a Ray or SLURM cluster",
    "a benchmark: minutes on every core",
}
MAX_NOT_RUN = 6
README_MAX_LINES = 400
NAMED_FILE = re.compile(r"# ([\w./-]+\.(?:py|yaml|toml|csv))")
FENCE = re.compile(r"^```(\S*)\s*$")
MARKER = re.compile(r"^<!-- not run: (.*) -->$")


class Block(NamedTuple):
    page: Path
    line: int  # of the opening fence, 1-based
    lang: str
    text: str
    not_run: str | None  # the reason, when marked

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    @property
    def file(self) -> str | None:
        """The file this block is, when a comment among its first two lines names one."""
        for line in self.text.splitlines()[:2]:
            named = NAMED_FILE.fullmatch(line.strip())
            if named:
                return named[1]
        return None


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of a page, in order (fences at the start of a line, as every page writes them)."""
    lines = page.read_text().splitlines()
    out, i = [], 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        marker = MARKER.match(lines[i - 1]) if i else None
        out.append(Block(page, i + 1, opening[1], "\n".join(lines[i + 1 : end]) + "\n", marker and marker[1]))
        i = end + 1
    return out


ALL = [b for page in PAGES for b in blocks(page)]


def _env() -> dict[str, str]:
    return {
        **os.environ,
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "MPLBACKEND": "Agg",
        "HYDRA_FULL_ERROR": "0",
    }


def _run(block: Block, cwd: Path) -> subprocess.CompletedProcess:
    command = (
        [sys.executable, "-c", block.text]
        if block.lang == "python"
        else ["bash", "-e", "-o", "pipefail", "-c", block.text]
    )
    return subprocess.run(command, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_block_of_the_page_runs_as_printed(page: Path, tmp_path: Path) -> None:
    for block in blocks(page):
        if block.not_run or block.lang not in RUN and block.file is None:
            continue
        if block.file is not None:  # a file the reader saves beside the commands
            (tmp_path / block.file).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / block.file).write_text(block.text)
            continue
        proc = _run(block, tmp_path)
        assert proc.returncode == 0, f"{block.where} failed:\n{block.text}\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}"


def test_only_a_handful_of_blocks_are_not_run_each_for_an_allowed_reason() -> None:
    not_run = [b for b in ALL if b.not_run]
    assert len(not_run) <= MAX_NOT_RUN, [b.where for b in not_run]
    for b in not_run:
        assert b.not_run in REASONS, f"{b.where}: reason {b.not_run!r} is not one of {sorted(REASONS)}"
        assert b.lang in RUN, f"{b.where}: only a command or Python block needs the marker"
    for page in PAGES:  # a marker is always right above a block: none is left dangling
        text = page.read_text()
        assert text.count("<!-- not run:") == sum(b.not_run is not None for b in blocks(page)), page.name
    for b in ALL:  # what cannot run here must say so rather than be skipped silently
        if b.lang in RUN and re.search(r"pip install|python3? -m venv|git clone", b.text):
            assert b.not_run, f"{b.where} installs: mark it <!-- not run: ... -->"
    assert sum(b.lang in RUN and not b.not_run and b.file is None for b in ALL) >= 30


def _section(text: str, title: str) -> str:
    return text.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def _commands(block: Block) -> list[str]:
    return [ln for ln in block.text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]


def test_the_readme_is_short_and_sets_up_in_two_commands_the_second_ci_s() -> None:
    readme = ROOT / "README.md"
    text = readme.read_text()
    assert len(text.splitlines()) <= README_MAX_LINES
    setup = [b for b in blocks(readme) if f"```{b.lang}\n{b.text}" in _section(text, "Set up")]
    assert len(setup) == 2 and all(len(_commands(b)) == 1 for b in setup), [b.text for b in setup]
    (main,), (tests,) = _commands(setup[0]), _commands(setup[1])
    assert main.endswith("&& .venv/bin/arena"), main  # the main job: install, then the default tournament
    ci_run = (ROOT / ".ci" / "run").read_text().splitlines()
    ci = "\n".join(ln.strip() for ln in ci_run if not ln.lstrip().startswith("#"))
    at = 0
    for step in tests.split(" && "):  # each step a whole command of .ci/run, in the README's order
        found = re.compile(rf"(?:^|&& ){re.escape(step)}(?= &&|$)", re.M).search(ci, at)
        assert found, f"{step!r} is not what .ci/run runs"
        at = found.end()
    assert not re.search(r"\b[0-9a-f]{7,40}\b", text), "no commit hashes in the README"


def test_the_readmes_links_lead_to_files() -> None:
    text = (ROOT / "README.md").read_text()
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):
        if not re.match(r"https?://", target):
            assert (ROOT / target).exists(), target


def test_the_site_builds_without_a_warning(tmp_path: Path) -> None:
    mkdocs = shutil.which("mkdocs", path=str(BIN)) or shutil.which("mkdocs")
    if mkdocs is None:
        pytest.skip("mkdocs is not installed (pip install -e '.[docs]')")
    proc = subprocess.run(
        [mkdocs, "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "site" / "index.html").exists()
