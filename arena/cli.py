"""The command line's entry points: ``arena``, ``arena-report``, ``arena-rerun`` and ``arena-redteam``.

``arena`` runs the configured tournament (the calibration tournament by default);
``arena tournament=none forecaster=k29 nature=iid_bernoulli T=500`` plays one matchup;
``arena -m forecaster=a,b nature=c,d seed=0,1,2`` sweeps matchups (in parallel with the
arena's local launcher: ``hydra/launcher=local``, :mod:`arena.launcher`). ``arena-report DIR`` redraws the tables and
figures of a results directory; ``arena-rerun`` plays a stored row again; ``arena-redteam
forecaster=ogd metric=smce_over_T`` searches a forecaster's worst case (:mod:`arena.redteam`).

Every value of every swept option is composed and its plugins are built before any
matchup runs (:func:`arena.config.prepare`), so a bad config fails at once with one message
(exit status 2) and writes nothing; the Hydra job is :func:`arena.tournament.run_job`.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from arena.errors import ConfigError, printable

#: Options that print something about the config instead of running it.
INFORMATIONAL = {"--help", "-h", "--hydra-help", "--cfg", "-c", "--info", "--shell-completion", "-sc"}

HELP = """\
usage: arena [-m] [KEY=VALUE ...]

Run a tournament of forecasters against natures (the calibration tournament by default), or one
matchup, and write its tables, figures and summary.md under results/.

  arena                                        the default tournament (results/calibration; rerun to resume)
  arena tournament=quantile                    another tournament: calibration, quantile, experts, decisions, bench
  arena forecaster=k29 nature=logistic T=500   one matchup (results/single/<time>/)
  arena -m forecaster=k29,ogd seed=0,1,2       a sweep of matchups, one per combination

Config groups (arena-list lists their options):
  tournament=NAME   forecaster=NAME   nature=NAME   game=binary|quantile|experts|decision
  hydra/launcher=local|joblib|ray_local|ray_cluster|slurm|submitit_local

Common overrides:
  T=1000 seed=0                   horizon and root seed of one matchup
  tournament.T=[200] tournament.seeds=[0,1] tournament.shards=8
  tournament.forecasters=[k29,ogd] tournament.natures=[iid_bernoulli]
  tournament.until_decided=true tournament.seed_budget=10   add seeds until every pair is decided
  forecaster.PARAM=VALUE          a parameter of the forecaster (likewise nature.PARAM, game.PARAM)
  referee.ece_bins=10 referee.n_checkpoints=20 referee.oi_features=[1,p,x] referee.M=1 referee.max_tol=5.8e-11
  results_root=results tournament_name=NAME   where results go (results_root/tournament_name)
  keep_trace=true time_limit=10 report=false
  replace_plan=true               let this plan replace another one stored in the directory
  retry_crashed=true              play again the matchups that ended their process
  sealed=true                     the forecaster plays in a process of its own: it cannot touch scores

Other commands:
  arena-list [forecasters|natures|games|tournaments]   what there is, with parameters
  arena-report DIR                                      redraw a results directory's tables and figures
  arena-rerun DIR --row N [--trust]                     play a stored result row again and compare
  arena-compare DIR A B                                 anytime-valid comparison of two forecasters
  arena-redteam ...                                     search a forecaster's worst case (its --help)

Options, anywhere on the line: --help, --version, --cfg job (print the config, run nothing); Hydra's --hydra-help
and --info still work. +KEY=VALUE only adds hydra.* keys and a plugin's parameters (+forecaster.PARAM=VALUE).
Exit status: 0 done; 3 done, with forfeits (their rows say who, when, why); 1 a run failed (one line says why);
2 a bad config; 130 interrupted.
"""


_TRUST_HELP = (
    "replay stored configs as they are: a _target_ may name any Python callable and modules in the working "
    "directory are importable (only for results from a source you trust); without it only registered plugins "
    "with plain parameters are replayed"
)


def _user_modules_importable() -> None:
    """A user's module beside their config folder (or results) imports as with ``python -m`` (last on the
    path: it never shadows an installed module)."""
    if os.getcwd() not in sys.path:
        sys.path.append(os.getcwd())


def version() -> str:
    """The arena's version (its installed package's)."""
    from arena import __version__

    return __version__


#: Hydra's options that take a value (``--cfg job``), and ``--info``, whose value is optional.
_WITH_VALUE = {"--cfg", "-c", "--package", "-p", "--config-path", "-cp", "--config-name", "-cn", "--config-dir", "-cd"}
_INFO = ({"--info", "-i"}, {"all", "config", "defaults", "defaults-tree", "plugins", "searchpath"})


def split_options(argv: list[str]) -> tuple[list[str], list[str]]:
    """The options (with their values) and the overrides of a command line, in their order: Hydra reads its
    options first and the overrides after them, so that an option may come anywhere on the arena's line.

    >>> split_options(["forecaster=k29", "--cfg", "job", "nature=logistic", "-m"])
    (['--cfg', 'job', '-m'], ['forecaster=k29', 'nature=logistic'])
    """
    options, overrides, i = [], [], 0
    while i < len(argv):
        arg = argv[i]
        if arg.startswith("-"):  # an override starts with a key, + or ~
            options.append(arg)
            takes = arg in _WITH_VALUE or (arg in _INFO[0] and i + 1 < len(argv) and argv[i + 1] in _INFO[1])
            if takes and i + 1 < len(argv):
                options.append(argv[i + 1])
                i += 1
        else:
            overrides.append(arg)
        i += 1
    return options, overrides


class one_line_interrupt:
    """Ctrl-C anywhere within this block (a Hydra command's whole run, its imports included) ends the command with
    one line on stderr and exit status 130: ``interrupted: <what()>``. A Ctrl-C that another exception hid on
    its way up (Hydra's code, a C library's callback) counts as one too (:class:`arena.supervise.ctrl_c_remembered`
    remembers it)."""

    def __init__(self, what):
        self.what = what

    def __enter__(self):
        from arena.supervise import ctrl_c_remembered

        self.remembered = ctrl_c_remembered()
        self.remembered.__enter__()
        return self

    def __exit__(self, kind, exc, tb) -> None:
        from arena.supervise import raise_if_interrupted

        try:
            self.remembered.__exit__(kind, exc, tb)
            raise_if_interrupted()
        except KeyboardInterrupt:
            kind = KeyboardInterrupt
        if kind is not KeyboardInterrupt:
            return
        print(f"\ninterrupted: {self.what()}", file=sys.stderr, flush=True)
        raise SystemExit(130) from None


def _run_text() -> str:
    """What Ctrl-C leaves of an ``arena`` run."""
    tournament = sys.modules.get("arena.tournament")  # not loaded yet: nothing ran
    done = tournament.interrupted_text() if tournament is not None else "nothing stored"
    return f"{done}; run the same command to resume"


def main(argv: list[str] | None = None) -> None:
    """``arena``: validate the configuration, then hand over to Hydra."""
    argv = list(sys.argv[1:] if argv is None else argv)
    with one_line_interrupt(_run_text):
        _main(argv)


def _main(argv: list[str]) -> None:
    if {"--help", "-h"} & set(argv):
        print(HELP, end="")
        return
    if "--version" in argv:
        print(f"arena {version()}")
        return
    import hydra

    from arena.config import CONFIG_MODULE, config_dir, prepare, use_search_path_plugin
    from arena.tournament import DRIVER_PID, run_job

    _user_modules_importable()
    options, overrides = split_options(argv)
    named = {a.split("=")[0].lstrip("+~").split(".")[0] for a in overrides if "=" in a}
    if named & {"forecaster", "nature"} and "tournament" not in named:
        overrides.append("tournament=none")  # naming a matchup plays it instead of the default tournament
    mode = None
    if not INFORMATIONAL.intersection(options):
        try:
            _, extra, mode = prepare(overrides, multirun=bool({"-m", "--multirun"} & set(options)))
            overrides += extra
        except ConfigError as exc:
            print(f"arena: error: {printable(exc)}", file=sys.stderr)
            raise SystemExit(2) from None
    argv = [*options, *overrides]
    use_search_path_plugin(argv)
    sys.argv = [sys.argv[0], *argv]
    os.environ[DRIVER_PID] = str(os.getpid())  # the launcher's workers end when this process is gone
    with _known_mode(mode if _same_composition(argv) else _UNKNOWN), _hydra_errors("arena"):
        hydra.main(config_path=config_dir() or f"pkg://{CONFIG_MODULE}", config_name="config", version_base="1.3")(
            run_job
        )()
    _exit_if_forfeited()


#: The exit status of a run that finished with forfeits.
FORFEITED = 3


def _exit_if_forfeited() -> None:
    """End with :data:`FORFEITED` where the run's results hold a forfeit (a plugin raised, broke the protocol,
    ran past its time limit or ended its process: its row says who, the round and why), saying so in a line."""
    from arena.tournament import forfeited

    counts = forfeited()
    if counts and counts[0]:
        print(
            f"arena: {counts[0]} of {counts[1]} matchups forfeited (each row says who, the round and why); "
            f"exit status {FORFEITED}",
            file=sys.stderr,
            flush=True,
        )
        raise SystemExit(FORFEITED)


@contextlib.contextmanager
def _hydra_errors(prog: str) -> Iterator[None]:
    """Hydra's and OmegaConf's errors (of an informational option such as ``--cfg job``, which runs nothing) as one
    line and exit status 2; Hydra prints none itself (``HYDRA_FULL_ERROR``), so that a Ctrl-C that an error hid is
    reported as an interrupt, not as that error (:class:`one_line_interrupt`)."""
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    os.environ["HYDRA_FULL_ERROR"] = "1"
    try:
        yield
    except (HydraException, OmegaConfBaseException) as exc:
        from arena.supervise import raise_if_interrupted

        raise_if_interrupted()
        message = " ".join(str(exc).split())
        print(f"{prog}: error: {printable(message)}", file=sys.stderr)
        raise SystemExit(2) from None


_UNKNOWN = object()


def _same_composition(argv: list[str]) -> bool:
    """Whether Hydra composes the config that :func:`arena.config.prepare` composed, as far as ``hydra.mode``
    goes: no option but -m changes what is composed (--config-name, --config-dir, ...), no override sets
    the mode (prepare leaves ``hydra.*`` overrides out), and prepare ran (no informational option)."""
    flags = {a.split("=")[0] for a in argv if a.startswith("-")}
    return not flags - {"-m", "--multirun"} and not any("hydra.mode" in a for a in argv)


class _known_mode:
    """Hydra composes the whole config once only to read ``hydra.mode`` (``Hydra.get_mode``), then again to
    run it; :func:`arena.config.prepare` composed it already (a tenth of a second of every command):
    within this block, ``get_mode`` answers prepare's mode (``_UNKNOWN``: Hydra's own ``get_mode``)."""

    def __init__(self, mode):
        self.mode = mode

    def __enter__(self):
        from hydra._internal.hydra import Hydra

        self.original = Hydra.get_mode
        if self.mode is not _UNKNOWN:
            Hydra.get_mode = lambda hydra, config_name, overrides: self.mode
        return self

    def __exit__(self, *exc) -> None:
        from hydra._internal.hydra import Hydra

        Hydra.get_mode = self.original


REDTEAM_HELP = """\
usage: arena-redteam [-m] [KEY=VALUE ...]

Search a forecaster's worst case: the nature that drives one metric of one game up the most, by a black-box
search (CMA-ES), a white-box planner, or both; write the attacks (JSON, replayable as a nature), their table
and figures under results/redteam/<game>/.

  arena-redteam forecaster=running_mean metric=smce_over_T T=1000
  arena-redteam -m forecaster=k29,ogd T=100,1000         one search per combination

Settings (KEY=VALUE):
  forecaster=NAME game=binary|quantile|experts|decision metric=NAME T=1000 seed=0
  searcher=cma|planner|both   budget=2000 (evaluations: games of T rounds)   max_seconds=3600 (null: no cap)
  seeds=4 (a candidate's seeds, randomized forecasters)   held_out=8 (seeds the attack kept is measured on)
  depth=null (the planner's rollout)   L=1.0 (quantile game)   panel.name=NAME (experts game)
  cross_attack=true   results_root=results   forecaster.PARAM=VALUE

Options: --cfg job (print the config), --version, --help.
Exit status: 0 done; 1 a search failed (one line says why); 2 a bad config; 130 interrupted.
"""


def redteam_main(argv: list[str] | None = None) -> None:
    """``arena-redteam``: search a forecaster's worst case (config ``redteam``: Hydra overrides, -m sweeps)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    with one_line_interrupt(lambda: "the attacks written so far are kept; run the same command to search again"):
        _redteam(argv)


def _redteam(argv: list[str]) -> None:
    if {"--help", "-h"} & set(argv):
        print(REDTEAM_HELP, end="")
        return
    if "--version" in argv:
        print(f"arena-redteam {version()}")
        return
    import hydra

    from arena.config import CONFIG_MODULE, check_redteam, config_dir, use_search_path_plugin
    from arena.redteam.job import RedTeamError, check_config
    from arena.redteam.job import run_job as redteam_job

    _user_modules_importable()
    options, overrides = split_options(argv)
    if not INFORMATIONAL.intersection(options):
        try:
            for cfg in check_redteam(overrides, multirun=bool({"-m", "--multirun"} & set(options))):
                check_config(cfg)  # values in range, before Hydra makes its run folder
        except (ConfigError, RedTeamError) as exc:
            print(f"arena-redteam: error: {printable(exc)}", file=sys.stderr)
            raise SystemExit(2) from None
    argv = [*options, *overrides]
    use_search_path_plugin(argv)
    sys.argv = [sys.argv[0], *argv]
    with _hydra_errors("arena-redteam"):
        hydra.main(config_path=config_dir() or f"pkg://{CONFIG_MODULE}", config_name="redteam", version_base="1.3")(
            redteam_job
        )()


def report_main(argv: list[str] | None = None) -> None:
    """``arena-report DIR [--format pdf,png,svg] [--paper] [--quiet]``: rebuild the summary tables,
    figures and results page (``index.html``) of a results directory.

    Only the figures whose inputs changed are drawn again. The figures come as PNG (what the page
    shows; ``--format pdf,png,svg`` for every format); ``--paper`` writes only the handful of figures
    and the LaTeX table a paper needs, as PDF (TrueType fonts) in ``DIR/paper/`` (unless ``--format``
    says).
    """
    from arena.supervise import ctrl_c_remembered

    try:
        with ctrl_c_remembered():  # also a Ctrl-C that came inside Numba's callbacks (the top comparison's replay)
            _report(argv)
    except KeyboardInterrupt:  # drawing, or still loading the plotting code
        print(
            "\ninterrupted: the stored matchups and tables are untouched; run the same command to draw the report",
            file=sys.stderr,
            flush=True,
        )
        raise SystemExit(130) from None


def _report(argv: list[str] | None) -> None:
    import argparse

    from arena.plots.report import FORMATS
    from arena.results import planned
    from arena.summarize import refused_replays, summarize

    ap = argparse.ArgumentParser(
        prog="arena-report", description=report_main.__doc__.split("\n\n")[0].split(": ", 1)[1]
    )
    ap.add_argument("results_dir", type=Path, help="a results directory (of a tournament or a sweep)")
    ap.add_argument(
        "--format",
        default=None,
        help=f"figure formats, comma-separated, of {', '.join(FORMATS)} "
        "(default: png, what index.html shows; with --paper: pdf)",
    )
    ap.add_argument(
        "--paper",
        action="store_true",
        help="only a paper's few figures (PDF, TrueType fonts) and LaTeX table, in DIR/paper/",
    )
    ap.add_argument("--quiet", action="store_true", help="print no progress while drawing")
    ap.add_argument("--trust", action="store_true", help=_TRUST_HELP)
    ap.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    args = ap.parse_args(argv)
    if args.trust:
        _user_modules_importable()
    formats = tuple(
        f.strip().lower() for f in (args.format or ("pdf" if args.paper else "png")).split(",") if f.strip()
    )
    bad = [f for f in formats if f not in FORMATS]
    if bad or not formats:
        print(
            f"arena-report: error: --format {args.format!r}: choose from {', '.join(FORMATS)}, "
            "comma-separated (e.g. --format pdf,png)",
            file=sys.stderr,
        )
        raise SystemExit(2)
    try:
        summarize(
            args.results_dir,
            only=planned(args.results_dir),
            options={"formats": formats, "paper": args.paper, "quiet": args.quiet, "trust": args.trust},
        )
    except (FileNotFoundError, ValueError) as exc:
        print(f"arena-report: error: {printable(exc)}", file=sys.stderr)
        raise SystemExit(2) from None
    except OSError as exc:
        print(
            f"arena-report: error: cannot write {exc.filename or args.results_dir}: {exc.strerror or exc}; "
            "make room or make it writable, then run it again (the stored matchups are untouched)",
            file=sys.stderr,
        )
        raise SystemExit(1) from None
    if not args.trust and (refused := refused_replays(args.results_dir)):
        print(
            f"arena-report: error: {refused} comparison(s) not made: a stored config is not a registered plugin with "
            "plain values (summary.md names it); everything else is written. Use --trust for results you trust",
            file=sys.stderr,
        )
        raise SystemExit(2)


def rerun_main(argv: list[str] | None = None) -> None:
    """``arena-rerun SOURCE (--row N | --matchup ID) [--out DIR] [--trust]``: play one result row again, exactly.

    SOURCE is a results directory (its summary.parquet) or a summary table (.parquet or .csv).
    The matchup is rebuilt from the row's resolved config (forecaster, nature, game, referee,
    T, seed) and played again; every value of the new row is compared with the stored one
    (timing and memory aside). Exit status 0 when they are identical, 1 when some differ (listed),
    2 on bad input. A row's config is code (``_target_`` names what is called): without ``--trust`` it
    may only name registered plugins, with plain parameters (:func:`arena.matchup.check_stored_config`).
    """
    import argparse
    import tempfile

    from arena.jobs import metrics_text, rerun, stored_row

    ap = argparse.ArgumentParser(
        prog="arena-rerun",
        description=rerun_main.__doc__.split("\n\n")[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("source", type=Path, help="results directory or summary .parquet/.csv")
    which = ap.add_mutually_exclusive_group(required=True)
    which.add_argument("--row", type=int, help="row position in the summary table (0-based, as pandas counts)")
    which.add_argument("--matchup", help="the row's matchup_id")
    ap.add_argument("--out", type=Path, help="store the new result here (default: a temporary directory)")
    ap.add_argument(
        "--trust",
        action="store_true",
        help="run the row's config as it is: its _target_ may name any Python callable and modules "
        "in the working directory are importable (only for results from a source you trust); "
        "without it only registered plugins with plain parameters are played",
    )
    ap.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    args = ap.parse_args(argv)
    if args.trust:
        _user_modules_importable()
    try:
        row = stored_row(args.source, args.row, args.matchup)
        from arena.registry import load_plugins

        load_plugins()
        with tempfile.TemporaryDirectory() as tmp:
            new, compared, differ = rerun(row, args.out or Path(tmp), trust=args.trust)
    except (ConfigError, OSError, ValueError) as exc:
        print(f"arena-rerun: error: {printable(exc)}", file=sys.stderr)
        raise SystemExit(2) from None
    print(printable(f"[arena] reran {row['matchup_id']}: {metrics_text(new)}"))
    if row.get("code_version") not in (None, new["code_version"]):
        print(
            f"[arena]   note: the row was computed by code version {row['code_version']}, this is {new['code_version']}"
        )
    if differ:
        for c in differ:
            print(printable(f"[arena]   differs: {c}: stored {row[c]!r}, now {new.get(c)!r}"))
        raise SystemExit(1)
    print(f"[arena]   identical to the stored row ({len(compared)} values compared; timing and memory aside)")


def compare_main(argv: list[str] | None = None) -> None:
    """``arena-compare RESULTS_DIR A B``: anytime-valid comparison of forecasters A and B, printed,
    written as ``compare__A__B__<metric>.csv`` (final values) and ``..._curves.csv``, and plotted."""
    import argparse

    from arena.compare import SCORES, compare, format_table
    from arena.plots.compare import comparison_figure
    from arena.plots.style import _save
    from arena.results import inside, safe_name

    ap = argparse.ArgumentParser(
        prog="arena-compare",
        description="Anytime-valid comparison of forecasters A and B on the rounds of a results directory: a "
        "confidence sequence for the running mean difference of their scores (A - B) and e-values "
        "against 'A is no better than B' and the reverse, per nature and seed; printed, written as "
        "CSV and plotted.",
    )
    ap.add_argument("results", type=Path, help="a results directory")
    ap.add_argument("a", help="forecaster A (label as in the summary)")
    ap.add_argument("b", help="forecaster B")
    ap.add_argument("--metric", choices=SCORES, help="score (default: brier; pinball in the quantile game)")
    ap.add_argument(
        "--alpha",
        type=float,
        default=0.05,
        help="level: 1 - alpha confidence, each direction tested at alpha/2 (e-value 2/alpha; default 0.05)",
    )
    ap.add_argument("--game", help="the game, when A and B play several")
    ap.add_argument("--nature", action="append", help="only this nature (repeatable)")
    ap.add_argument("--seed", type=int, action="append", help="only this seed (repeatable)")
    ap.add_argument("--T", type=int, help="horizon (default: the largest)")
    ap.add_argument("--out", type=Path, help="folder for the tables and figure (default: RESULTS_DIR/compare)")
    ap.add_argument("--trust", action="store_true", help=_TRUST_HELP)
    ap.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    args = ap.parse_args(argv)
    if args.trust:
        _user_modules_importable()
    try:
        if not args.results.is_dir():
            raise FileNotFoundError(f"{args.results} is not a directory; give a results directory")
        final, curves = compare(
            args.results,
            args.a,
            args.b,
            args.metric,
            args.alpha,
            args.game,
            args.nature,
            args.seed,
            args.T,
            trust=args.trust,
        )
    except (OSError, ValueError) as exc:
        print(f"arena-compare: error: {printable(exc)}", file=sys.stderr)
        raise SystemExit(2) from None
    metric = final["metric"].iloc[0]
    print(
        printable(
            f"[arena] {args.a} (A) vs {args.b} (B), {metric} (lower is better), game {final['game'].iloc[0]}, "
            f"T={final['T'].iloc[0]}; A - B < 0: A better; confidence sequence and e-values valid at every t"
        )
    )
    print("\n".join(printable(line) for line in format_table(final, args.alpha).splitlines()))
    out = args.out or args.results / "compare"
    try:  # a label is no path, and a compare/ link from elsewhere does not lead out of the results
        stem = inside(args.out or args.results, out / f"compare__{safe_name(args.a)}__{safe_name(args.b)}__{metric}")
    except ValueError as exc:
        print(f"arena-compare: error: {printable(exc)}", file=sys.stderr)
        raise SystemExit(2) from None
    out.mkdir(parents=True, exist_ok=True)
    final.to_csv(f"{stem}.csv", index=False)
    curves.to_csv(f"{stem}_curves.csv", index=False)
    paths = _save(comparison_figure(curves, args.alpha, final), stem, ("pdf", "png"))
    print(printable(f"[arena] wrote {stem}.csv, {stem}_curves.csv, " + ", ".join(str(p) for p in paths)))
