"""A tournament where a plugin hangs or raises: that matchup is a forfeit (who, round, reason), the
rest of the tournament runs, and the report lists the forfeits. The misbehaving nature is a user
plugin added from outside the project (a module and a config folder in a temporary directory)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd

BIN = Path(sys.executable).parent

MODULE = '''
import time

from arena import Bernoulli, Nature, register


@register
class Stalling(Nature):
    """Fair coins, but at round `at` it stalls for `seconds` (or raises, with seconds < 0)."""

    name = "stalling"
    games = ("binary",)

    def __init__(self, at: int = 5, seconds: float = 5.0):
        self.at, self.seconds = at, seconds

    def respond(self, t, x, forecast):
        if t == self.at:
            if self.seconds < 0:
                raise RuntimeError("the data feed went away")
            time.sleep(self.seconds)
        return Bernoulli(0.5)
'''

TOURNAMENT = """
# @package _global_
tournament_name: stalls
tournament:
  name: stalls
  forecasters: [ogd, k29]
  natures:
    - iid_bernoulli
    - {name: stalling, label: stalling_sleep, params: {at: 7, seconds: 30}}
    - {name: stalling, label: stalling_raise, params: {at: 4, seconds: -1}}
  seeds: [0]
  T: [40]
  shards: 2
hydra:
  mode: MULTIRUN
  sweeper:
    params:
      shard: range(0,${tournament.shards})
"""


def test_a_hanging_or_raising_nature_forfeits_and_the_tournament_goes_on(tmp_path):
    (tmp_path / "stalling.py").write_text(textwrap.dedent(MODULE))
    for group, name, text in (
        ("nature", "stalling", "_target_: stalling.Stalling\nat: 5\nseconds: 5.0\n"),
        ("tournament", "stalls", TOURNAMENT),
    ):
        (tmp_path / "conf" / group).mkdir(parents=True, exist_ok=True)
        (tmp_path / "conf" / group / f"{name}.yaml").write_text(text)
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONPATH": str(tmp_path)}
    proc = subprocess.run(
        [
            str(BIN / "arena"),
            f"hydra.searchpath=[file://{tmp_path / 'conf'}]",
            "tournament=stalls",
            "time_limit=0.5",
            f"results_root={tmp_path / 'results'}",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 3, proc.stderr[-3000:]  # finished, with forfeits
    assert "4 of 6 matchups forfeited" in proc.stderr, proc.stderr[-3000:]
    out = tmp_path / "results" / "stalls"
    summary = pd.read_parquet(out / "summary.parquet").set_index(["forecaster", "nature"])
    assert len(summary) == 6
    for fc in ("ogd", "k29"):
        ok = summary.loc[(fc, "iid_bernoulli")]
        assert ok["status"] == "ok" and ok["rounds"] == 40
        slept = summary.loc[(fc, "stalling_sleep")]
        assert (slept["status"], slept["forfeit_who"], slept["forfeit_step"]) == ("forfeit", "nature", 7)
        assert "time limit of 0.5 s" in slept["forfeit_reason"]
        assert slept["rounds"] == 6  # the rounds before the stall are kept
        raised = summary.loc[(fc, "stalling_raise")]
        assert (raised["status"], raised["forfeit_who"], raised["forfeit_step"]) == ("forfeit", "nature", 4)
        assert "the data feed went away" in raised["forfeit_reason"]
    report = (out / "summary.md").read_text()
    assert "time limit of 0.5 s" in report and "the data feed went away" in report
