"""``import arena`` is light (lazy re-exports), and the Gymnasium ids still work in any import order.

How long the import takes is measured by ``benchmarks/run.py --only import``, not here: these
tests check which modules a fresh process loads.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import arena

HEAVY = ("gymnasium", "numpy", "pandas", "scipy", "numba", "matplotlib", "arena.runner", "arena.env")


def _fresh(code: str) -> str:
    """Run ``code`` in a fresh interpreter (warnings are errors) and return what it printed."""
    proc = subprocess.run([sys.executable, "-W", "error", "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_import_arena_loads_no_heavy_module():
    code = f"import sys, json, arena; print(json.dumps([m for m in {list(HEAVY)!r} if m in sys.modules]))"
    assert json.loads(_fresh(code)) == []


def test_playing_loads_no_table_library_until_a_table_is_read():
    """``arena.play`` builds no DataFrame (a million-round K29 play stays in memory bounds): pandas and
    pyarrow load when the curves are first read, and the curves are then the scorer's rows."""
    code = (
        "import sys, json, arena; r = arena.play('binary', 'k29', 'iid_bernoulli', T=200, seed=0); "
        "before = [m for m in ('pandas', 'pyarrow') if m in sys.modules]; c = r.curves; "
        "print(json.dumps([before, 'pandas' in sys.modules, list(c.columns), len(c), c is r.curves]))"
    )
    before, loaded, columns, rows, kept = json.loads(_fresh(code))
    assert before == [] and loaded and columns == ["t", "metric", "value"] and rows > 0 and kept


_WORKER = """
import sys, json, tempfile, math
import arena.cli
from omegaconf import OmegaConf, open_dict
from arena.config import compose, hydra_session
from arena.jobs import run_matchup
with hydra_session():
    cfg = compose({overrides!r})
with open_dict(cfg):
    cfg.forecaster_label, cfg.nature_label = 'f', 'n'
    del cfg['hydra']
heavy = ('pandas', 'pyarrow', 'scipy.optimize', 'scipy.special')
before = [m for m in heavy if m in sys.modules]
with tempfile.TemporaryDirectory() as d:
    row = run_matchup(OmegaConf.create(OmegaConf.to_container(cfg)), d)
print(json.dumps([before, [m for m in heavy if m in sys.modules and m not in before],
                  math.isfinite(row.get('regret_linear', 0.0))]))
"""


@pytest.mark.parametrize(
    "overrides, needed",
    [
        (["forecaster=linear_df", "nature=logistic", "T=300", "referee.M=0.01"], ["scipy.optimize", "scipy.special"]),
        (["forecaster=k29", "nature=iid_bernoulli", "T=300", "keep_trace=true"], ["pandas", "pyarrow"]),
        (
            ["game=quantile", "forecaster=running_quantile", "nature=iid_normal", "T=300"],
            ["pandas", "pyarrow", "scipy.special"],
        ),
    ],
)
def test_a_tournament_worker_loads_only_what_its_game_needs(overrides, needed):
    """What a worker of the local launcher does: forked from the ``arena`` process once it imported the command,
    it plays and stores matchups. The binary game needs neither pandas nor pyarrow; the regret to the linear
    comparators on a small sphere (referee.M) solves its secular equation with scipy.optimize. A trace is Parquet
    (pyarrow), the quantile game's curves are tables and its natures SciPy's laws."""
    code = _WORKER.format(overrides=overrides)
    before, loaded_by_playing, finite = json.loads(_fresh(code))
    assert before == [] and loaded_by_playing == needed and finite


def test_a_matchup_stored_from_its_columns_is_the_one_stored_from_its_tables(tmp_path):
    """The worker stores the curves and reliability bins from their columns (no DataFrame): the very bytes
    the tables give."""
    from arena.results import reliability_columns, reliability_table
    from arena.store import save_matchup

    r = arena.play("binary", "linear_df", "logistic", T=300, seed=1)
    row = {"matchup_id": "m", "regret_linear": r.summary["regret_linear"]}
    rec = r.recorder
    save_matchup(tmp_path / "a", row, r.curves_columns(), reliability_columns(rec.p, rec.y, 10))
    save_matchup(tmp_path / "b", row, r.curves, reliability_table(rec.p, rec.y, 10))
    a, b = ((tmp_path / x / "matchups" / "matchups.jsonl").read_bytes() for x in "ab")
    assert a == b and json.loads(a.split(b"\t", 2)[2])["curves"]["metric"]


def test_importing_the_commands_starts_no_process():
    """Importing the command line's module (``arena``, ``arena-report``) starts no child process (a child that
    the Ctrl-C test of arena-report took for a figure worker, and interrupted the report while it still imported
    its plotting code)."""
    code = (
        "import json, os, subprocess\n"
        "started = []\n"
        "popen, fork = subprocess.Popen.__init__, os.fork\n"
        "subprocess.Popen.__init__ = lambda self, *a, **k: (started.append(str(a[0])), popen(self, *a, **k))[1]\n"
        "os.fork = lambda: (started.append('fork'), fork())[1]\n"
        "import arena.cli\n"
        "print(json.dumps(started))"
    )
    assert json.loads(_fresh(code)) == []


def test_plots_load_no_engine():
    """A process that only draws figures (a report's worker) loads neither the game engine nor Gymnasium."""
    engine = ("gymnasium", "numba", "arena.runner", "arena.referee", "arena.env")
    code = f"import sys, json, arena.plots; print(json.dumps([m for m in {list(engine)!r} if m in sys.modules]))"
    assert json.loads(_fresh(code)) == []


def test_lazy_names_are_the_real_ones():
    from arena.protocols import Forecaster
    from arena.runner import play

    assert arena.play is play and arena.Forecaster is Forecaster
    assert set(arena.__all__) <= set(dir(arena))
    for name in arena.__all__:
        assert getattr(arena, name) is not None, name
    assert isinstance(arena.__version__, str) and arena.__version__[0].isdigit()
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        arena.no_such_name  # noqa: B018


@pytest.mark.parametrize("imports", ["import arena, gymnasium as gym", "import gymnasium as gym, arena"])
def test_gymnasium_ids_in_either_import_order(imports):
    """Every id is registered once, by ``arena.games`` (a second registration would warn, and warnings are
    errors here), whether Gymnasium is imported before or after arena."""
    code = (
        f"{imports}\n"
        "import arena.env, arena.games\n"
        "ids = sorted(i for i in gym.registry if i.startswith('arena/'))\n"
        "for i in ids:\n"
        "    env = gym.make(i, T=3)\n"
        "    env.reset(seed=0)\n"
        "print(' '.join(ids))"
    )
    assert _fresh(code).split() == [
        "arena/Binary-v0",
        "arena/Decision-v0",
        "arena/Experts-v0",
        "arena/Quantile-v0",
        "arena/RedTeam-v0",
    ]
