"""The command line: compose the Hydra config, validate it, play the matchups, save, report.

``arena`` runs the configured tournament (the calibration tournament by default);
``arena tournament=none forecaster=k29 nature=iid_bernoulli T=500`` plays one matchup;
``arena -m forecaster=a,b nature=c,d seed=0,1,2`` sweeps matchups (in parallel with the
joblib launcher: ``hydra/launcher=joblib``). ``arena-report DIR`` redraws the tables and
figures of a results directory.

Every value of every swept option is composed and its plugins are built before any
matchup runs, so a bad config fails at once with one message (exit status 2) and
writes nothing.
"""

from __future__ import annotations

import difflib
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from omegaconf import DictConfig, OmegaConf

from arena.results import PLAN_FILE, code_version, is_done, planned, plugin_code, stored_ids
from arena.tournament import (ConfigError, auto_shards, build_matchup, matchup_key, plan, plugin_targets,
                              resolved_config, shard_of)

CONFIG_MODULE = "arena.conf"


def _config_dir() -> str | None:
    """The source tree's conf/ when ``arena.conf`` is not importable (running uninstalled)."""
    import importlib.util

    try:
        if importlib.util.find_spec(CONFIG_MODULE) is not None:
            return None
    except ModuleNotFoundError:
        pass
    return str(Path(__file__).resolve().parent.parent / "conf")
PLUGIN_GROUPS = ("forecaster", "nature", "game")



# ----------------------------------------------------------------------------- running


def build(cfg: DictConfig):
    """Instantiate the game name, forecaster, nature and referee of one composed config."""
    from hydra.utils import instantiate

    from arena.games import get_game, plays
    from arena.referee import Referee

    _check_horizon(cfg.get("T"), cfg.get("seed"))
    limit = cfg.get("time_limit")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, (int, float))
                              or not 0 < limit < math.inf):
        raise ConfigError(f"time_limit={limit!r}: give the seconds one plugin call may take as a positive number "
                          "(e.g. time_limit=60), or time_limit=null for no limit")
    game_params = OmegaConf.to_container(cfg.game, resolve=True)
    try:
        game = get_game(str(game_params.pop("name")), **game_params)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    forecaster = _instantiate(cfg.forecaster, "forecaster", instantiate)
    nature = _instantiate(cfg.nature, "nature", instantiate)
    for kind, plugin in (("forecaster", forecaster), ("nature", nature)):
        if not plays(game, plugin):
            raise ConfigError(f"{kind} {plugin.name!r} does not play the {game.name!r} game (it plays {plugin.games})")
    try:
        referee = Referee(**OmegaConf.to_container(cfg.referee, resolve=True))
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"referee: {exc}") from None
    try:
        referee.accepts(forecaster)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    return game, forecaster, nature, referee


def _instantiate(node, kind: str, instantiate):
    try:
        return instantiate(node, _convert_="all")
    except Exception as exc:  # Hydra wraps the constructor's error; show the constructor's message
        cause = exc
        while cause.__cause__ is not None:
            cause = cause.__cause__
        raise ConfigError(f"{kind}: {cause}") from None


#: Bytes the arena keeps per round (the recorder's arrays of forecasts, outcomes and contexts, with room
#: for the referee's sorted copies); T must fit the machine's memory at this rate.
BYTES_PER_ROUND = 200


def _check_horizon(T: Any, seed: Any) -> None:
    if isinstance(T, bool) or not isinstance(T, int) or T <= 0:
        raise ConfigError(f"T={T!r}: the horizon must be a positive integer; set e.g. T=1000")
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") if hasattr(os, "sysconf") else None
    if memory and T * BYTES_PER_ROUND > memory:
        raise ConfigError(f"T={T} needs about {T * BYTES_PER_ROUND / 2**30:.0f} GiB (about {BYTES_PER_ROUND} bytes a "
                          f"round) and this machine has {memory / 2**30:.0f} GiB; lower T to at most "
                          f"{memory // BYTES_PER_ROUND}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ConfigError(f"seed={seed!r}: the seed must be a non-negative integer; set e.g. seed=0")


def _check_length(nature, T: int, game=None) -> None:
    """Load what a nature needs (a replayed file) and check that it can play T rounds (of ``game``)."""
    from arena.env import nature_streams

    if game is not None:  # as the arena does: natures may check their outcomes against the game's range
        nature.game = game
    try:
        nature.reset(nature_streams(0, nature)[0])
    except (OSError, ValueError) as exc:
        raise ConfigError(f"nature {nature.name!r}: {exc}") from None
    if nature.length is not None and T > nature.length:
        raise ConfigError(f"T={T} exceeds the {nature.length} rounds nature {nature.name!r} can play; "
                          f"lower T to at most {nature.length}")


def run_matchup(cfg: DictConfig, out_dir: Path) -> dict:
    """Play the matchup of one composed config and store it under ``out_dir``.

    With ``keep_trace`` the per-round trace streams to ``traces/<matchup_id>.parquet`` (the
    announced Forecast objects are kept in it for T <= 10^4 only, so memory stays bounded).
    """
    from arena.results import reliability_table, save_matchup
    from arena.runner import play

    game, forecaster, nature, referee = build(cfg)
    mid, T = matchup_key(cfg), int(cfg.T)
    trace = Path(out_dir) / "traces" / f"{mid}.parquet" if cfg.get("keep_trace") else None
    if trace is not None:
        trace.parent.mkdir(parents=True, exist_ok=True)
    result = play(game, forecaster, nature, T, int(cfg.seed), referee=referee,
                  keep_forecasts=trace is not None and T <= 10_000, time_limit=cfg.get("time_limit"),
                  trace_path=trace)
    row = result.row()
    row["forecaster_plugin"], row["nature_plugin"] = row["forecaster"], row["nature"]
    row["forecaster"], row["nature"] = str(cfg.forecaster_label), str(cfg.nature_label)
    row["matchup_id"] = mid
    row["config"] = json.dumps(resolved_config(cfg), sort_keys=True, default=str)
    row["code_version"] = code_version()
    row["plugin_code"] = plugin_code(plugin_targets(cfg))
    rec = result.recorder
    reliability = reliability_table(rec.p, rec.y, referee.ece_bins) if game.name != "quantile" else None
    save_matchup(out_dir, row, result.curves, reliability, trace)
    return row


def _metrics_text(row: dict) -> str:
    status = "" if row["status"] == "ok" else f"  FORFEIT ({row['forfeit_who']} at t={row['forfeit_step']})"
    if "smce_over_T" in row:
        metrics = f"smCE/T={row['smce_over_T']:.4g} brier={row['brier']:.4g}"
    else:  # the quantile game
        metrics = f"coverage={row.get('coverage', math.nan):.4g} pinball={row.get('pinball', math.nan):.4g}"
    return f"{row['forecaster']} vs {row['nature']} seed={row['seed']} T={row['T']}: {metrics}{status}"


# ----------------------------------------------------------------------------- tournaments



def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


class Progress:
    """Matchups done out of the tournament's total, elapsed time and an estimate of the time left.

    Every job of a sweep (on any launcher) counts the finished results in the shared results
    directory, so the figures are the whole tournament's, not one shard's.
    """

    def __init__(self, out_dir: Path):
        self.out_dir = Path(out_dir)
        info = json.loads((Path(out_dir) / PLAN_FILE).read_text())
        self.ids, self.started, self.done_at_start = set(info["ids"]), info["started"], info["done_at_start"]
        self.code_version = info["code_version"]

    def done(self) -> int:
        return len(self.ids & stored_ids(self.out_dir))  # one directory listing: about 1 ms per 10^4 files

    def line(self) -> str:
        done, total = self.done(), len(self.ids)
        elapsed = time.time() - self.started
        played = done - self.done_at_start
        left = f", ~{_clock(elapsed / played * (total - done))} left" if 0 < played and done < total else ""
        return f"{done}/{total} ({100 * done / max(total, 1):.0f}%) {_clock(elapsed)} elapsed{left}"


def start_tournament(cfg: DictConfig, out_dir: Path) -> dict:
    """Record the plan of a tournament run in ``out_dir`` (its ids, the time, what is already stored) and
    clear temp files left by a killed run. Returns the plan."""
    from arena.results import PARTS, write_text_atomic
    from arena.tournament import planned_ids

    out_dir = Path(out_dir)
    ids = planned_ids(OmegaConf.masked_copy(cfg, [k for k in cfg if k != "hydra"]))
    if len(set(ids)) != len(ids):
        raise ConfigError(f"tournament {cfg.tournament.get('name')!r} lists the same matchup twice; "
                          "give repeated entries different params or a label")
    stored = stored_ids(out_dir)
    for part in PARTS:
        for tmp in (out_dir / part).glob(".*.tmp"):
            tmp.unlink(missing_ok=True)
    info = {"tournament": str(cfg.tournament.get("name")), "code_version": code_version(), "ids": ids,
            "started": time.time(), "done_at_start": len(stored.intersection(ids))}
    write_text_atomic(json.dumps(info), out_dir / PLAN_FILE)
    if info["done_at_start"]:
        print(f"[arena] resuming {info['tournament']}: {info['done_at_start']}/{len(ids)} matchups already "
              f"stored in {out_dir}", flush=True)
    return info


def _job(cfg: DictConfig) -> None:
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    hc = HydraConfig.get()
    out_dir = Path(hc.sweep.dir if hc.mode == RunMode.MULTIRUN else hc.run.dir)
    if cfg.get("tournament") is None:
        print(f"[arena] {_metrics_text(run_matchup(cfg, out_dir))}", flush=True)
        return
    progress = Progress(out_dir) if (out_dir / PLAN_FILE).is_file() else None
    if progress and progress.code_version != code_version():
        print(f"[arena] warning: the code changed since this tournament started ({progress.code_version} -> "
              f"{code_version()}); its results are stored under new ids: rerun the tournament to summarize them",
              file=sys.stderr, flush=True)
    for m in shard_of(cfg):
        if not is_done(out_dir, matchup_key(m)):
            text = _metrics_text(run_matchup(m, out_dir))
            print(f"[arena] {progress.line() + ' | ' if progress else ''}{text}", flush=True)


def finish(out_dir: Path, report: bool = True, only: set[str] | None = None) -> None:
    """Aggregate a results directory (the matchups ``only``, when given) into tables and figures, and say
    where they are."""
    from arena.results import write_tables

    tables = write_tables(out_dir, only)
    figures = []
    if report:
        from arena.plots import report as draw

        figures = draw(out_dir)
    print(f"[arena] results: {Path(out_dir).resolve()}")
    if only is not None:
        others = stored_ids(out_dir) - only
        if others:
            print(f"[arena]   {len(others)} stored matchups of another config or code version are not in the summary")
    for name, path in tables.items():
        print(f"[arena]   {name}: {path} (+ .csv)")
    if figures:
        print(f"[arena]   figures: {len(figures)} files in {Path(out_dir).resolve() / 'figures'}")


try:
    from hydra.experimental.callback import Callback
except ImportError:  # pragma: no cover
    Callback = object  # type: ignore[misc,assignment]


class SummaryCallback(Callback):
    """Records a tournament's plan before its jobs start; aggregates and reports a sweep once all its
    matchups finished (or a single run)."""

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        if config.get("tournament") is not None:
            start_tournament(config, Path(config.hydra.sweep.dir))

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        out_dir = Path(config.hydra.sweep.dir)
        finish(out_dir, bool(config.get("report", True)), planned(out_dir))

    def on_run_end(self, config: DictConfig, **kwargs: Any) -> None:
        finish(Path(config.hydra.run.dir), bool(config.get("report", True)))


# ---------------------------------------------------------------------------- validation


def _group_options(group: str) -> list[str]:
    from hydra.core.global_hydra import GlobalHydra

    return sorted(GlobalHydra.instance().config_loader().get_group_options(group))


def _unknown_option(group: str, value: str) -> ConfigError:
    options = _group_options(group)
    close = difflib.get_close_matches(value, options, n=1, cutoff=0.5)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    return ConfigError(f"unknown {group} {value!r}.{hint} Available: {', '.join(options)}")


#: The optional extra that provides each launcher outside the default install.
LAUNCHER_EXTRAS = {"ray": "ray", "ray_local": "ray", "ray_cluster": "ray", "slurm": "slurm",
                   "submitit_local": "slurm", "submitit_slurm": "slurm"}


def _launcher_problem(value: str) -> ConfigError:
    if value in LAUNCHER_EXTRAS:
        extra = LAUNCHER_EXTRAS[value]
        return ConfigError(f"hydra/launcher={value} needs the {extra!r} extra: "
                           f"pip install 'defensive-forecasting-arena[{extra}]' (from a checkout: "
                           f"pip install -e '.[{extra}]')")
    return _unknown_option("hydra/launcher", value)


def _compose(overrides: list[str]) -> DictConfig:
    import warnings

    from hydra import compose
    from hydra.errors import ConfigCompositionException, MissingConfigException

    from arena.registry import search_path_problem

    if problem := search_path_problem():
        raise ConfigError(problem)
    try:
        with warnings.catch_warnings():  # search_path_problem said it, as an error
            warnings.filterwarnings("ignore", message=r"provider=.* is not available")
            cfg = compose("config", overrides=overrides, return_hydra_config=True)
    except MissingConfigException as exc:
        for o in overrides:
            key, _, value = o.lstrip("+~").partition("=")
            if key in ("forecaster", "nature", "game", "tournament") and value not in _group_options(key):
                raise _unknown_option(key, value) from None
            if key == "hydra/launcher":
                raise _launcher_problem(value) from None
        raise ConfigError(str(exc).splitlines()[0]) from None
    except ConfigCompositionException as exc:
        raise ConfigError(f"{exc}. Check the override syntax (key=value, -m key=a,b)") from None
    return cfg


def _split(parser, args: list[str]) -> tuple[list[str], dict[str, list[str]]]:
    """Command-line overrides -> fixed overrides and sweeps (key -> values)."""
    fixed, sweeps = [], {}
    try:
        parsed = parser.parse_overrides(args)
    except Exception as exc:
        raise ConfigError(f"cannot parse the overrides {args}: {exc}") from None
    for o in parsed:
        if o.is_sweep_override():
            sweeps[o.get_key_element()] = [str(v) for v in o.sweep_string_iterator()]
        else:
            fixed.append(o.input_line)
    return fixed, sweeps


def validate(args: list[str], multirun: bool = False) -> int:
    """The number of matchups the command will run (:func:`prepare`)."""
    return prepare(args, multirun)[0]


def prepare(args: list[str], multirun: bool = False) -> tuple[int, list[str]]:
    """:func:`_validate`, with whatever Hydra or OmegaConf raise about the overrides as one ConfigError line.

    Returns the number of matchups and the overrides the run must add: ``tournament.shards=N``
    when the tournament says ``shards: auto`` (:func:`arena.tournament.auto_shards`), fixed here
    once so that every job, on any launcher and node, deals the matchups alike.
    """
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    try:
        return _validate(args, multirun)
    except ConfigError as exc:
        raise ConfigError(_one_line(str(exc))) from None
    except (HydraException, OmegaConfBaseException, ValueError) as exc:
        raise ConfigError(f"{_one_line(str(exc))}. Check the override syntax (key=value, -m key=a,b)") from None


def _one_line(message: str) -> str:
    return " ".join(part.strip() for part in message.splitlines() if part.strip())


def _validate(args: list[str], multirun: bool = False) -> tuple[int, list[str]]:
    """Compose every value of every sweep and build its plugins; raise ConfigError on the first problem.

    The sweeps are the tournament's (``hydra.sweeper.params``) with the command line's
    on top. Returns the number of matchups the command will run.
    """
    from hydra import initialize_config_dir, initialize_config_module
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.override_parser.overrides_parser import OverridesParser

    from arena.registry import load_plugins, use_search_path_plugin

    load_plugins()
    use_search_path_plugin(args)
    # hydra.* overrides shape the run, not the matchups; but the search path decides which options exist
    keys = [a.split("=")[0].lstrip("+~") for a in args]
    args = [a for a, key in zip(args, keys) if not key.startswith("hydra") or key in ("hydra.searchpath",
                                                                                     "hydra/launcher")]
    GlobalHydra.instance().clear()
    try:
        conf_dir = _config_dir()
        init = (initialize_config_dir(conf_dir, version_base="1.3") if conf_dir
                else initialize_config_module(CONFIG_MODULE, version_base="1.3"))
        with init:
            parser = OverridesParser.create()
            fixed, sweeps = _split(parser, args)
            base = _compose(fixed)
            extra = []
            if base.get("tournament") is not None and str(base.tournament.get("shards")) == "auto":
                extra = [f"tournament.shards={auto_shards()}"]
                fixed += extra
                base = _compose(fixed)
            if sweeps and not (multirun or str(base.hydra.mode) == "RunMode.MULTIRUN"):
                key, values = next(iter(sweeps.items()))
                raise ConfigError(f"{key}={','.join(values)} gives several values: add -m to play each one "
                                  f"(arena -m ... {key}={','.join(values)}), or write a list as {key}=[...]")
            if multirun or str(base.hydra.mode) == "RunMode.MULTIRUN":
                node = base.hydra.sweeper.get("params")
                params = OmegaConf.to_container(node, resolve=True) if node else {}
                for key, value in params.items():
                    if key not in sweeps and not any(f.split("=")[0] == key for f in fixed):
                        _, swept = _split(parser, [f"{key}={value},{value}" if "," not in str(value)
                                                   else f"{key}={value}"])
                        sweeps[key] = list(dict.fromkeys(swept[key]))
            if base.get("tournament") is not None:
                for key in ("T", "seed"):
                    if any(f.split("=")[0].lstrip("+~") == key for f in fixed) or key in sweeps:
                        raise ConfigError(
                            f"{key} is set per tournament: tournament {base.tournament.get('name')!r} plays its own "
                            f"list (set tournament.{'T' if key == 'T' else 'seeds'}=[...]), or name a forecaster and "
                            "a nature to play one matchup")
                return _validate_tournament(base), extra
            variants = [fixed] + [fixed + [f"{key}={v}"] for key, values in sweeps.items() for v in values]
            Ts = [int(v) for v in sweeps.get("T", []) if v.lstrip("-").isdigit()]
            for overrides in variants:
                cfg = _compose(overrides)
                game, _, nature, _ = build(cfg)
                _check_length(nature, max([int(cfg.T), *Ts]), game)
    finally:
        GlobalHydra.instance().clear()
        use_search_path_plugin()  # the folders were this command's: leave later compositions alone
    return (int(np.prod([len(v) for v in sweeps.values()])) if sweeps else 1), extra


def _validate_tournament(base: DictConfig) -> int:
    """Build every forecaster and nature of the tournament once; check every horizon."""
    cfg = OmegaConf.masked_copy(base, [k for k in base if k != "hydra"])
    entries = plan(cfg)
    shards = base.tournament.get("shards", 1)
    params = base.hydra.sweeper.get("params") or {}
    if str(params.get("shard", "")) != f"range(0,{shards})":
        raise ConfigError(f"tournament {base.tournament.get('name')!r}: hydra.sweeper.params.shard must be "
                          f"range(0,{shards}) to match tournament.shards={shards}")
    seen = set()
    for entry in entries:
        key = (entry[0], entry[2], entry[4])  # forecaster, nature, T: seeds need no second check
        if key in seen:
            continue
        seen.add(key)
        m = build_matchup(cfg, entry)
        game, _, nature, _ = build(m)
        _check_length(nature, int(m.T), game)
    return len(entries)


# --------------------------------------------------------------------------- entry points


def main(argv: list[str] | None = None) -> None:
    """``arena``: validate the configuration, then hand over to Hydra."""
    import hydra

    from arena.registry import use_search_path_plugin

    argv = list(sys.argv[1:] if argv is None else argv)
    if os.getcwd() not in sys.path:  # a user's module beside their config folder imports as with `python -m`
        sys.path.append(os.getcwd())  # (last: it never shadows an installed module)
    named = {a.split("=")[0].lstrip("+~") for a in argv if "=" in a}
    if named & {"forecaster", "nature"} and "tournament" not in named:
        argv.append("tournament=none")  # naming a matchup plays it instead of the default tournament
    informational = {"--help", "-h", "--hydra-help", "--cfg", "-c", "--info", "--shell-completion", "-sc"}
    if not informational.intersection(argv):
        try:
            _, extra = prepare([a for a in argv if not a.startswith("-")],
                               multirun=bool({"-m", "--multirun"} & set(argv)))
            argv += extra
        except ConfigError as exc:
            print(f"arena: error: {exc}", file=sys.stderr)
            raise SystemExit(2) from None
    use_search_path_plugin(argv)
    sys.argv = [sys.argv[0], *argv]
    hydra.main(config_path=_config_dir() or f"pkg://{CONFIG_MODULE}", config_name="config",
               version_base="1.3")(_job)()


def report_main(argv: list[str] | None = None) -> None:
    """``arena-report DIR``: rebuild the summary tables and figures of a results directory."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if len(argv) != 1 or argv[0] in ("-h", "--help"):
        print("usage: arena-report RESULTS_DIR", file=sys.stderr)
        raise SystemExit(2)
    try:
        finish(Path(argv[0]), only=planned(Path(argv[0])))
    except FileNotFoundError as exc:
        print(f"arena-report: error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None


def _rerun_source(source: Path) -> pd.DataFrame:
    from arena.results import read_table

    path = source / "summary.parquet" if source.is_dir() else source
    if source.is_dir() and not path.is_file():
        raise ConfigError(f"{source} has no summary.parquet; give a results directory after its tournament "
                          "finished (or run `arena-report` on it), or a summary .parquet/.csv file")
    return read_table(path)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (float, np.floating)) and isinstance(b, (float, np.floating)):
        return (math.isnan(a) and math.isnan(b)) or a == b
    return bool(a == b) or (_missing(a) and _missing(b))


def _missing(v: Any) -> bool:
    """None, NaN or an empty string: a CSV round trip turns an empty string into NaN."""
    return v is None or v == "" or (isinstance(v, float) and math.isnan(v))


def rerun(row: pd.Series, out_dir: Path) -> tuple[dict, list[str], list[str]]:
    """Play the matchup of one result row again from the config it records; the new row, the columns
    compared (timing and memory aside) and those whose values differ."""
    from arena.results import MACHINE_COLUMNS, MACHINE_PREFIXES

    if "config" not in row or not isinstance(row["config"], str):
        raise ConfigError("the row has no `config` column; rows written by this arena record their resolved config")
    cfg = OmegaConf.create(json.loads(row["config"]))
    new = run_matchup(cfg, out_dir)
    skip = {"parts"} | ({"code_version", "matchup_id"} if row.get("code_version") != new["code_version"] else set())
    compared = [c for c in row.index if c not in MACHINE_COLUMNS and not c.startswith(MACHINE_PREFIXES)
                and c not in skip]
    return new, compared, [c for c in compared if not _same(row[c], new.get(c))]


def rerun_main(argv: list[str] | None = None) -> None:
    """``arena-rerun SOURCE (--row N | --matchup ID) [--out DIR]``: play one result row again, exactly.

    SOURCE is a results directory (its summary.parquet) or a summary table (.parquet or .csv).
    The matchup is rebuilt from the row's resolved config (forecaster, nature, game, referee,
    T, seed) and played again; every value of the new row is compared with the stored one
    (timing and memory aside). Exit status 0 when they are identical, 1 when some differ (listed),
    2 on bad input.
    """
    import argparse
    import tempfile

    ap = argparse.ArgumentParser(prog="arena-rerun", description=rerun_main.__doc__.split("\n\n")[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("source", type=Path, help="results directory or summary .parquet/.csv")
    which = ap.add_mutually_exclusive_group(required=True)
    which.add_argument("--row", type=int, help="row position in the summary table (0-based, as pandas counts)")
    which.add_argument("--matchup", help="the row's matchup_id")
    ap.add_argument("--out", type=Path, help="store the new result here (default: a temporary directory)")
    args = ap.parse_args(argv)
    if os.getcwd() not in sys.path:  # a user's plugin module beside the results, as `arena` finds it
        sys.path.append(os.getcwd())
    try:
        table = _rerun_source(args.source)
        if args.matchup is not None:
            hits = table.index[table["matchup_id"] == args.matchup] if "matchup_id" in table else []
            if len(hits) == 0:
                raise ConfigError(f"no row has matchup_id {args.matchup!r} in {args.source}; "
                                  "copy an id from the matchup_id column")
            row = table.loc[hits[0]]
        else:
            if not 0 <= args.row < len(table):
                raise ConfigError(f"--row {args.row} is outside 0..{len(table) - 1} "
                                  f"({len(table)} rows in {args.source})")
            row = table.iloc[args.row]
        from arena.registry import load_plugins

        load_plugins()
        with tempfile.TemporaryDirectory() as tmp:
            new, compared, differ = rerun(row, args.out or Path(tmp))
    except (ConfigError, OSError, ValueError) as exc:
        print(f"arena-rerun: error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    print(f"[arena] reran {row['matchup_id']}: {_metrics_text(new)}")
    if row.get("code_version") not in (None, new["code_version"]):
        print(f"[arena]   note: the row was computed by code version {row['code_version']}, "
              f"this is {new['code_version']}")
    if differ:
        for c in differ:
            print(f"[arena]   differs: {c}: stored {row[c]!r}, now {new.get(c)!r}")
        raise SystemExit(1)
    print(f"[arena]   identical to the stored row ({len(compared)} values compared; timing and memory aside)")
