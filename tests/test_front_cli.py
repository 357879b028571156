"""The command line as a user meets it: a run ends with its answer in a few lines; the arena's own options and
errors (a mistyped key, ``+key``, ``--cfg job``, ``--help``, ``--version`` anywhere), ``arena-redteam`` too; Ctrl-C
at any moment is one line and exit status 130.

Each subprocess pays a few seconds of imports: the tournament is small, and played once uninterrupted.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

BIN = Path(sys.executable).parent
SMALL = [
    "tournament.forecasters=[k29,ogd,bit]",
    "tournament.natures=[iid_bernoulli,logistic]",
    "tournament.T=[200]",
    "tournament.seeds=[0,1]",
    "tournament.shards=2",
]


def _command(name: str) -> str:
    path = BIN / name
    return str(path) if path.exists() else (shutil.which(name) or name)


def _env() -> dict:
    return {**os.environ, "MPLBACKEND": "Agg", "PYTHONUNBUFFERED": "1"}


def _run(name: str, args: list[str], cwd: Path, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [_command(name), *args], cwd=cwd, env=_env(), capture_output=True, text=True, timeout=timeout, check=False
    )


@pytest.fixture(scope="module")
def default_run(tmp_path_factory):
    """The small tournament played to the end, with its report: its output and how long it took."""
    root = tmp_path_factory.mktemp("whole")
    started = time.time()
    proc = _run("arena", [*SMALL, f"results_root={root}"], root)
    return proc, time.time() - started, root / "calibration"


def test_a_run_ends_with_the_answer_in_at_most_eight_lines(default_run):
    from arena.answer import human

    proc, _, out = default_run
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.strip().splitlines()
    assert not any("[HYDRA]" in line for line in lines), proc.stdout
    progress = [line for line in lines if line.startswith("[arena] matchups: ")]
    assert 1 <= len(progress) <= 5 and progress[-1].startswith("[arena] matchups: 12/12 (100%)"), proc.stdout
    answer = lines[lines.index(progress[-1]) + 1 :]
    answer = [line for line in answer if not line.startswith("[arena] figures: ")]  # the report's own progress
    assert len(answer) <= 8, answer
    board = pd.read_parquet(out / "leaderboard.parquet")
    best = board.loc[(board["metric"] == "smce_over_T") & (board["rank"] == 1)].iloc[0]
    assert answer[0].startswith(f"[arena] binary, T=200: {best['forecaster']} wins on smce_over_T, ")
    assert f"{human(best['mean'])} ± " in answer[0] and "next " in answer[0]
    summary = pd.read_parquet(out / "summary.parquet")
    failed = int(sum((summary[c] == "fails").sum() for c in summary if c.endswith(".verdict")))
    assert any(line.startswith(f"[arena] Certificates: {failed} failure") for line in answer), answer
    assert "[arena] Forfeits: none of 12 matchups." in answer
    assert answer[-1] == f"[arena] results page: {(out / 'index.html').resolve()} " + answer[-1].split(" ", 4)[-1]
    assert (out / "index.html").is_file()


def test_the_answer_names_failed_certificates_and_forfeits():
    from arena.answer import answer

    summary = pd.DataFrame(
        {
            "game": "binary",
            "forecaster": ["a", "a", "b", "b"],
            "nature": ["n", "m", "n", "m"],
            "status": ["ok", "ok", "ok", "forfeit"],
            "forfeit_who": [None, None, None, "forecaster"],
            "cert.smce.verdict": ["holds", "fails", "holds", None],
            "cert.bit.verdict": ["n/a", "holds", None, None],
        }
    )
    board = pd.DataFrame(
        {
            "game": "binary",
            "T": 10,
            "metric": "smce_over_T",
            "forecaster": ["a", "b"],
            "n_natures": [2, 1],
            "mean": [0.5, 0.25],
            "half": [0.125, float("nan")],
            "exact": [False, True],
            "rank": [2, 1],
        }
    )
    assert answer(summary, board) == [
        "binary, T=10: b wins on smce_over_T, 0.250 (exact) (mean over 1 nature, 95% CI); next a, 0.500 ± 0.125",
        "Certificates: 1 failure (3 hold, 1 not applicable): a smce (m).",
        "Forfeits: 1 of 4 matchups: b vs m, forecaster (1).",
    ]


def _one_error_line(proc: subprocess.CompletedProcess, prog: str, *needles: str) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{prog}: error: "), proc.stderr
    assert "Traceback" not in proc.stderr and "+forecastr" not in proc.stderr.replace("+forecastr=ogd:", "")
    assert "To append to your config" not in proc.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def test_a_mistyped_key_gets_the_closest_key_and_an_appended_one_is_refused(tmp_path):
    _one_error_line(
        _run("arena", ["forecastr=k29"], tmp_path), "arena", "unknown key 'forecastr'", "Did you mean 'forecaster'?"
    )
    _one_error_line(
        _run("arena", ["referee.ece_binz=5", "T=10"], tmp_path), "arena", "Did you mean 'referee.ece_bins'?"
    )
    _one_error_line(
        _run("arena", ["+forecastr=ogd", "nature=iid_bernoulli", "T=100"], tmp_path),
        "arena",
        "Did you mean 'forecaster'?",
    )
    _one_error_line(_run("arena", ["forecaster=k29", "+T=100"], tmp_path), "arena", "write T=100 without +")
    assert list(tmp_path.iterdir()) == []  # nothing played, nothing written


def test_options_work_anywhere_for_every_command(tmp_path):
    from importlib.metadata import version

    ours = version("defensive-forecasting-arena")
    commands = [
        ("arena", ["T=5", "--version"]),
        ("arena-redteam", ["forecaster=k29", "--version"]),
        *(
            (name, ["--version"])
            for name in ("arena-report", "arena-rerun", "arena-compare", "arena-list", "arena-rank")
        ),
    ]
    for name, args in commands:
        proc = _run(name, args, tmp_path)
        assert proc.returncode == 0 and proc.stdout.strip() == f"{name} {ours}", (name, proc.stdout, proc.stderr)
    proc = _run("arena", ["forecaster=k29", "nature=logistic", "--cfg", "job"], tmp_path)
    assert proc.returncode == 0 and "forecaster:" in proc.stdout and "tournament: null" in proc.stdout, proc.stderr
    proc = _run("arena-redteam", ["forecaster=ogd", "--cfg", "job", "T=50"], tmp_path)
    assert proc.returncode == 0 and "T: 50" in proc.stdout and "metric:" in proc.stdout, proc.stderr
    proc = _run("arena-redteam", ["T=50", "--help"], tmp_path)
    assert proc.returncode == 0 and proc.stdout.startswith("usage: arena-redteam") and "Hydra" not in proc.stdout
    proc = _run("arena", ["T=50", "--help"], tmp_path)
    assert proc.returncode == 0 and proc.stdout.startswith("usage: arena")
    assert list(tmp_path.iterdir()) == []


def test_arena_redteam_errors_are_one_line_with_a_suggestion(tmp_path):
    _one_error_line(
        _run("arena-redteam", ["forecaster=k92"], tmp_path),
        "arena-redteam",
        "unknown forecaster 'k92'. Did you mean 'k29'?",
    )
    _one_error_line(_run("arena-redteam", ["metrc=smce_over_T"], tmp_path), "arena-redteam", "Did you mean 'metric'?")
    assert list(tmp_path.iterdir()) == []


def test_ctrl_c_at_any_moment_is_one_line_and_exit_130(default_run, tmp_path):
    """Ten moments spread from start-up to the report of the small tournament (its uninterrupted run's length)."""
    _, seconds, _ = default_run
    interrupted = 0
    for k in range(10):
        root = tmp_path / str(k)
        root.mkdir()
        proc = subprocess.Popen(
            [_command("arena"), *SMALL, f"results_root={root}"],
            cwd=root,
            env=_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        time.sleep(0.2 + seconds * k / 10)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)  # as a terminal does: the whole foreground group
        out, err = proc.communicate(timeout=180)
        if proc.returncode in (0, -signal.SIGINT) and "[arena] results page: " in out and not err:
            continue  # it finished before the signal came, or the signal came during the interpreter's exit
        lines = err.strip().splitlines()
        assert proc.returncode == 130, (k, proc.returncode, err[-3000:])
        assert 1 <= len(lines) <= 2 and lines[-1].startswith("interrupted: "), (k, err[-3000:])
        assert "Traceback" not in err + out, (k, err[-3000:])
        interrupted += 1
    assert interrupted >= 7


def test_on_a_terminal_the_progress_is_one_line_rewritten_in_place(monkeypatch):
    import io

    from arena.progress import Progress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    screen = Terminal()
    monkeypatch.setattr(sys, "stdout", screen)
    p = Progress(12, "matchups", started=0.0)
    for done in range(1, 13):
        p.show(p.line(done, now=1.0), done)
    text = screen.getvalue()
    assert text.count("\n") == 1 and text.endswith("[arena] matchups: 12/12 (100%) 0:00:01 elapsed\n")
    assert text.count("\r\x1b[K[arena] matchups: ") == 12  # each count written over the one before


def test_the_terminal_and_the_page_give_the_same_answer_in_the_same_numbers():
    from arena.aggregate import leaderboard
    from arena.answer import answer
    from arena.plots.answer import answers

    regret = [4.6e8, 4.7e8, 0.0412, 0.05, 4.5e8, 4.8e8, 0.04, 0.052]
    summary = pd.DataFrame(
        {
            "game": "decision",
            "forecaster": ["a", "a", "b", "b"] * 2,
            "nature": ["n", "m"] * 4,
            "seed": [0] * 4 + [1] * 4,
            "T": 10,
            "status": "ok",
            "regret_decision_expected_over_T": regret,
            "brier": 0.2,
            "cert.smce.verdict": ["holds", "fails", "n/a", "holds"] * 2,
        }
    )
    terminal = answer(summary, leaderboard(summary))
    page = answers(summary)
    assert len(page) == 1 and page[0].metric == "regret_decision_expected_over_T"
    first, second = page[0].board.iloc[0], page[0].board.iloc[1]
    assert terminal[0] == (
        f"decision, T=10: b wins on regret_decision_expected_over_T, {first['mean']} ± {first['± 95%']} "
        f"(mean over 2 natures, 95% CI); next a, {second['mean']} ± {second['± 95%']}"
    )
    assert second["mean"] == "4.65e8"  # numbers for people, in both
    assert terminal[1] == page[0].certificates == "Certificates: 2 failures (4 hold, 2 not applicable): a smce (m)."
