"""Compose and validate the command line's Hydra overrides before anything runs.

:func:`prepare` composes every value of every sweep (the command line's, and a tournament's
``hydra.sweeper.params``) and builds its matchup (:func:`arena.matchup.matchup_from_config`), so a
bad config fails at once with one :class:`~arena.errors.ConfigError` line and writes nothing.
The overrides are read by Hydra's own parser (a sweep is an ``Override`` whose
``is_sweep_override()`` is true; its values come from ``sweep_string_iterator()``).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
from omegaconf import DictConfig, OmegaConf, open_dict

from arena.errors import ConfigError, did_you_mean, unknown_name
from arena.matchup import check_seed, unknown_parameter
from arena.plan import Shared, auto_shards, plan, resolved_matchup

#: The package of the arena's Hydra configs (installed); a source tree's ``conf/`` otherwise.
CONFIG_MODULE = "arena.conf"

#: The config groups whose option a command line names (an unknown one is reported with a suggestion).
GROUPS = ("forecaster", "nature", "game", "tournament")

#: The optional extra that provides each launcher outside the default install.
LAUNCHER_EXTRAS = {
    "ray": "ray",
    "ray_local": "ray",
    "ray_cluster": "ray",
    "slurm": "slurm",
    "submitit_local": "slurm",
    "submitit_slurm": "slurm",
}

#: ``hydra.*`` overrides shape the run, not the matchups; but these decide which options exist.
HYDRA_KEYS = ("hydra.searchpath", "hydra/launcher")


def use_search_path_plugin(args: Sequence[str] = ()) -> None:
    """Make sure Hydra uses the arena's search-path plugin, with the folders of the
    ``hydra.searchpath=[...]`` override among ``args`` (a command line; none: no folders),
    and knows the arena's launcher (``hydra/launcher=local``).

    Hydra finds plugins by listing the ``hydra_plugins`` namespace package, which misses
    modules mapped by setuptools' default editable install; registering the plugins again
    is harmless (Hydra keeps one copy, the plugin skips folders already on the path).
    Call it before Hydra builds its search path (``hydra.main``, ``initialize_config_*``).
    """
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.core.plugins import Plugins

    plugins = Plugins.instance()  # scans hydra_plugins first, so the import below finds the scanned module
    try:
        from hydra_plugins.arena_searchpath import ArenaSearchPathPlugin
        from hydra_plugins.arena_searchpath.launcher import LocalLauncher
    except ImportError:  # a source tree that was not installed
        import arena.hydra_plugin
        import arena.hydra_plugin.launcher
        from arena.hydra_plugin import ArenaSearchPathPlugin
        from arena.hydra_plugin.launcher import LocalLauncher

        # Hydra imports a launcher by the module its config's _target_ names, and finds it registered
        # under that module: the installed names, for the modules of this tree
        sys.modules.setdefault("hydra_plugins.arena_searchpath", arena.hydra_plugin)
        sys.modules.setdefault("hydra_plugins.arena_searchpath.launcher", arena.hydra_plugin.launcher)
        LocalLauncher.__module__ = "hydra_plugins.arena_searchpath.launcher"
    plugins.register(ArenaSearchPathPlugin)
    plugins.register(LocalLauncher)
    folders: list[str] = []
    for arg in args:
        if arg.split("=")[0] == "hydra.searchpath":
            try:
                value = OverridesParser.create().parse_override(arg).value()
            except Exception:  # noqa: BLE001 (a malformed override: Hydra says what is wrong when it composes)
                value = None
            folders = [str(v) for v in value] if isinstance(value, list) else []
    ArenaSearchPathPlugin.command_line = tuple(folders)


def search_path_problem() -> str | None:
    """Why a folder on the current Hydra config search path cannot be read, or None.

    Hydra only warns about such a folder (a mistyped ``hydra.searchpath``); the arena's
    commands stop with this message instead. Call it once Hydra is initialized.
    """
    from hydra.core.global_hydra import GlobalHydra

    for source in GlobalHydra.instance().config_loader().get_sources():
        if not source.available():
            where = f"{source.scheme()}://{source.path}"
            return (
                f"config folder {where} ({source.provider}) is not available; give an existing folder as "
                "hydra.searchpath=[file:///absolute/path] or an importable package with an __init__.py as "
                "hydra.searchpath=[pkg://package.module]"
            )
    return None


def config_dir() -> str | None:
    """The source tree's conf/ when ``arena.conf`` is not importable (running uninstalled)."""
    import importlib.util

    try:
        if importlib.util.find_spec(CONFIG_MODULE) is not None:
            return None
    except ModuleNotFoundError:
        pass
    return str(Path(__file__).resolve().parent.parent / "conf")


@contextlib.contextmanager
def hydra_session(args: Sequence[str] = ()) -> Iterator[None]:
    """Hydra initialized with the arena's configs, every plugin loaded and the search path of the
    ``hydra.searchpath=[...]`` override among ``args``; cleared again on the way out."""
    from hydra import initialize_config_dir, initialize_config_module
    from hydra.core.global_hydra import GlobalHydra

    from arena.registry import load_plugins

    load_plugins()
    use_search_path_plugin(args)
    GlobalHydra.instance().clear()
    try:
        conf_dir = config_dir()
        with (
            initialize_config_dir(conf_dir, version_base="1.3")
            if conf_dir
            else initialize_config_module(CONFIG_MODULE, version_base="1.3")
        ):
            yield
    finally:
        GlobalHydra.instance().clear()
        use_search_path_plugin()  # the folders were this command's: leave later compositions alone


def validate(args: list[str], multirun: bool = False) -> int:
    """The number of matchups the command will run (:func:`prepare`)."""
    return prepare(args, multirun)[0]


def prepare(args: list[str], multirun: bool = False) -> tuple[int, list[str], object]:
    """Compose every value of every sweep and build its matchup; raise one ConfigError line on the first
    problem (whatever Hydra or OmegaConf raise about the overrides included).

    Returns the number of matchups, the overrides the run must add (``tournament.shards=N``
    when the tournament says ``shards: auto`` (:func:`arena.plan.auto_shards`), fixed here
    once so that every job, on any launcher and node, deals the matchups alike) and the config's
    ``hydra.mode`` (None, or a ``hydra.types.RunMode``).
    """
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    try:
        with hydra_session(args):
            return _prepare(args, multirun)
    except ConfigError as exc:
        raise ConfigError(_one_line(str(exc))) from None
    except (HydraException, OmegaConfBaseException, ValueError) as exc:
        raise ConfigError(f"{_one_line(str(exc))}. Check the override syntax (key=value, -m key=a,b)") from None


def check_redteam(args: list[str], multirun: bool = False) -> list[DictConfig]:
    """Compose arena-redteam's config (``redteam``) with the command line's overrides, each value of each sweep,
    and return them; raise one ConfigError line on the first problem (an unknown forecaster, game or key, with
    the closest one)."""
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    try:
        with hydra_session(args):
            parsed = _parse(args)
            _refuse_additions(parsed, "redteam")
            fixed = [o.input_line for o in parsed if not o.is_sweep_override()]
            sweeps = [(o.get_key_element(), list(o.sweep_string_iterator())) for o in parsed if o.is_sweep_override()]
            if sweeps and not multirun:
                key, values = sweeps[0]
                raise ConfigError(
                    f"{key}={','.join(values)} gives several values: add -m to search each one "
                    f"(arena-redteam -m ... {key}={','.join(values)})"
                )
            configs = [compose(fixed, "redteam")]
            for key, values in sweeps:
                for value in values:
                    configs.append(compose([*fixed, f"{key}={value}"], "redteam"))
            return configs
    except ConfigError as exc:
        raise ConfigError(_one_line(str(exc))) from None
    except (HydraException, OmegaConfBaseException, ValueError) as exc:
        raise ConfigError(f"{_one_line(str(exc))}. Check the override syntax (key=value, -m key=a,b)") from None


def _one_line(message: str) -> str:
    return " ".join(part.strip() for part in message.splitlines() if part.strip())


def _prepare(args: list[str], multirun: bool) -> tuple[int, list[str], object]:
    parsed = _parse(args)
    _refuse_additions(parsed)
    _check_launcher_overrides(parsed)
    overrides = [o for o in parsed if not o.key_or_group.startswith("hydra") or o.key_or_group in HYDRA_KEYS]
    for o in overrides:
        value = o.get_value_element_as_str() if not o.is_sweep_override() else ""
        if o.key_or_group in GROUPS and any(c in value for c in "/\\"):
            raise ConfigError(
                f"{o.key_or_group}={value}: give the name of a {o.key_or_group} option, not a path "
                f"(`arena-list {o.key_or_group}s` lists them)"
            )
    fixed = [o.input_line for o in overrides if not o.is_sweep_override()]
    sweeps = {o.get_key_element(): list(o.sweep_string_iterator()) for o in overrides if o.is_sweep_override()}
    base = compose(fixed)
    check_settings(base)
    extra = []
    if base.get("tournament") is not None and str(base.tournament.get("shards")) == "auto":
        shards = auto_shards()
        extra = [f"tournament.shards={shards}"]
        fixed += extra
        with open_dict(base):  # what composing again with the override gives, without composing again
            base.tournament.shards = shards
    if base.get("tournament") is not None:
        shards = base.tournament.get("shards", 1)
        if isinstance(shards, bool) or not isinstance(shards, int) or shards < 1:
            raise ConfigError(
                f"tournament.shards={shards!r}: give a positive whole number of jobs, e.g. "
                f"tournament.shards={auto_shards()}, or auto (one per core)"
            )
    multirun = multirun or str(base.hydra.mode) == "RunMode.MULTIRUN"
    if sweeps and not multirun:
        key, values = next(iter(sweeps.items()))
        raise ConfigError(
            f"{key}={','.join(values)} gives several values: add -m to play each one "
            f"(arena -m ... {key}={','.join(values)}), or write a list as {key}=[...]"
        )
    set_here = {o.key_or_group for o in overrides}
    if multirun:  # the config's own sweeps, where the command line does not set the key
        sweeps.update({k: v for k, v in _sweeper_params(base).items() if k not in sweeps and k not in set_here})
    if base.get("tournament") is not None:
        for key in ("T", "seed"):
            if key in set_here or key in sweeps:
                raise ConfigError(
                    f"{key} is set per tournament: tournament {base.tournament.get('name')!r} plays its own "
                    f"list (set tournament.{'T' if key == 'T' else 'seeds'}=[...]), or name a forecaster and "
                    "a nature to play one matchup"
                )
        return _check_tournament(base), extra, base.hydra.mode
    _check_sweep(fixed, sweeps, base)
    return (int(np.prod([len(v) for v in sweeps.values()])) if sweeps else 1), extra, base.hydra.mode


def _refuse_additions(overrides: list, config_name: str = "config") -> None:
    """Refuse ``+key=value`` and ``++key=value`` but for ``hydra.*`` and a plugin's parameter (``forecaster.x``,
    which its plugin checks): a key the config does not have would be added and then ignored (the run would play
    something else than asked), and one it has is set without +."""
    free = ("hydra", "forecaster.", "nature.", "game.")
    for o in overrides:
        if (o.is_add() or o.is_force_add()) and not o.key_or_group.startswith(free):
            sign = "++" if o.is_force_add() else "+"
            key, value = o.key_or_group, o.get_value_element_as_str()
            if not _has_key(key, config_name):
                raise ConfigError(f"{sign}{key}={value}: {unknown_key(key, config_name)}")
            raise ConfigError(f"{sign}{key}={value}: {key} is a setting already; write {key}={value} without {sign}")


def _has_key(key: str, config_name: str = "config") -> bool:
    """Whether the config (as composed without overrides) has ``key`` (dotted, or a config group)."""
    node = hydra_compose_default(config_name)
    for part in key.replace("/", ".").split("."):
        if not isinstance(node, DictConfig) or part not in node:
            return False
        node = node[part]
    return True


def unknown_key(key: str, config_name: str = "config") -> str:
    """``unknown key 'x'. Did you mean 'y'? Keys here: ...``, the keys beside ``x`` in the config composed without
    overrides (and the config groups, at the top)."""
    node, parts = hydra_compose_default(config_name), key.replace("/", ".").split(".")
    where: list[str] = []
    for part in parts[:-1]:
        if not isinstance(node, DictConfig) or part not in node:
            break
        node, where = node[part], [*where, part]
    name = parts[len(where)]
    options = sorted(str(k) for k in node if k != "hydra") if isinstance(node, DictConfig) else []
    prefix = ".".join(where) + "." if where else ""
    suggestion = did_you_mean(prefix + name, [prefix + o for o in options])
    return (
        f"unknown key {prefix + name!r}.{suggestion} Keys{' of ' + prefix[:-1] if where else ''}: {', '.join(options)}"
    )


def hydra_compose_default(config_name: str = "config") -> DictConfig:
    """The config ``config_name`` composed without overrides (Hydra initialized: :func:`hydra_session`)."""
    from hydra import compose as hydra_compose

    return hydra_compose(config_name, overrides=[])


def _check_launcher_overrides(overrides: list) -> None:
    """Refuse a number of worker processes that is no whole number, or 0 (-1: one per core; -k: all but k - 1)."""
    for o in overrides:
        if o.key_or_group == "hydra.launcher.n_jobs" and not o.is_sweep_override():
            value = o.value()
            if isinstance(value, bool) or not isinstance(value, int) or value == 0:
                raise ConfigError(
                    f"hydra.launcher.n_jobs={o.get_value_element_as_str()}: give the number of worker processes, "
                    "a positive whole number, or -1 for one per core"
                )


def _parse(args: Sequence[str]) -> list:
    """The command line's overrides, as Hydra's parser reads them."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    try:
        return OverridesParser.create().parse_overrides(list(args))
    except Exception as exc:  # noqa: BLE001 (the parser raises several types; each is one line here)
        raise ConfigError(f"cannot parse the overrides {list(args)}: {exc}") from None


def _sweeper_params(base: DictConfig) -> dict[str, list[str]]:
    """The config's own sweeps (``hydra.sweeper.params``: a tournament's shards), key -> values."""
    node = base.hydra.sweeper.get("params")
    params = OmegaConf.to_container(node, resolve=True) if node else {}
    out = {}
    for o in _parse([f"{key}={value}" for key, value in params.items()]):
        values = list(o.sweep_string_iterator()) if o.is_sweep_override() else [o.get_value_element_as_str()]
        out[o.get_key_element()] = list(dict.fromkeys(values))
    return out


def _check_sweep(fixed: list[str], sweeps: dict[str, list[str]], base: DictConfig) -> None:
    """Compose the fixed overrides with each value of each sweep, and build and load each matchup
    (each nature at the longest horizon swept); ``base`` is the fixed overrides' config, composed already."""
    Ts = [int(v) for v in sweeps.get("T", []) if v.lstrip("-").isdigit()]
    _check_matchup(base, Ts)
    for overrides in [fixed + [f"{key}={v}"] for key, values in sweeps.items() for v in values]:
        cfg = compose(overrides)
        check_settings(cfg)
        _check_matchup(cfg, Ts)


def _check_tournament(base: DictConfig) -> int:
    """Build every forecaster and nature of the tournament once; check every horizon. Returns the
    number of matchups."""
    cfg = OmegaConf.masked_copy(base, [k for k in base if k != "hydra"])
    t = cfg.tournament
    shards = t.get("shards", 1)
    for key in ("forecasters", "natures", "seeds", "T"):
        value = t.get(key)
        if value is not None and (not OmegaConf.is_list(value) or len(value) == 0):
            raise ConfigError(
                f"tournament.{key}={OmegaConf.to_container(value) if OmegaConf.is_config(value) else value!r}"
                f": give a non-empty list, e.g. tournament.{key}=[...]"
            )
    for seed in t.get("seeds") or []:
        try:
            check_seed(seed, "tournament.seeds: seed")
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
    entries = plan(cfg)
    keys = [(e[0], e[2], e[4], e[5]) for e in entries]
    if len(set(keys)) != len(keys):
        twice = next(k for i, k in enumerate(keys) if k in keys[:i])
        raise ConfigError(
            f"tournament {t.get('name')!r} lists the same matchup twice ({twice[0]} vs {twice[1]}, "
            f"T={twice[2]}, seed={twice[3]}); drop the repeated entry or give it a label"
        )
    params = base.hydra.sweeper.get("params") or {}
    if str(params.get("shard", "")) != f"range(0,{shards})":
        raise ConfigError(
            f"tournament {base.tournament.get('name')!r}: hydra.sweeper.params.shard must be "
            f"range(0,{shards}) to match tournament.shards={shards}"
        )
    seen, shared = set(), Shared(cfg)
    for entry in entries:
        key = (entry[0], entry[2], entry[4])  # forecaster, nature, T: seeds need no second check
        if key not in seen:
            seen.add(key)
            _check_matchup(resolved_matchup(cfg, entry, shared))
    return len(entries)


#: Settings that are switches: true or false, never a string that looks like one.
SWITCHES = ("keep_trace", "report", "replace_plan", "retry_crashed", "sealed")


def check_settings(cfg: DictConfig) -> None:
    """Refuse run settings that would write outside the results directory or mean something else than
    they say: ``results_root`` empty, ``tournament_name`` a path, a switch (:data:`SWITCHES`) that is
    not true or false."""
    from arena.results import is_safe_name

    root = cfg.get("results_root")
    if not isinstance(root, str) or not root.strip():
        raise ConfigError(f"results_root={root!r}: give the folder results go to, e.g. results_root=results")
    _check_results_root(root)
    name = cfg.get("tournament_name")
    if not is_safe_name(name) or name in (".", ".."):
        raise ConfigError(
            f"tournament_name={name!r}: give a plain folder name (no '/', no leading '.'), "
            "e.g. tournament_name=my_run; results_root= says where it goes"
        )
    for key in SWITCHES:
        value = cfg.get(key)
        if not isinstance(value, bool):
            raise ConfigError(f"{key}={value!r}: give true or false")


def _check_results_root(root: str) -> None:
    """Refuse a ``results_root`` that is a file, lies below one, or on a file system that stores no files
    (``/proc``, ``/sys``: no blocks), without writing anything.

    >>> _check_results_root("/proc/results")
    Traceback (most recent call last):
    ...
    arena.errors.ConfigError: results_root='/proc/results': /proc stores no files; give a folder on a disk, ...
    """
    import os

    path = Path(root).expanduser().absolute()
    existing = next(p for p in (path, *path.parents) if os.path.lexists(p))
    fix = "give a folder on a disk, e.g. results_root=results"
    if not existing.is_dir():
        raise ConfigError(f"results_root={root!r}: {existing} is a file, not a folder; {fix}")
    try:
        blocks = os.statvfs(existing).f_blocks
    except OSError as exc:
        raise ConfigError(f"results_root={root!r}: {existing}: {exc.strerror}; {fix}") from None
    if blocks == 0:
        raise ConfigError(f"results_root={root!r}: {existing} stores no files; {fix}")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ConfigError(f"results_root={root!r}: {existing} is not writable; {fix}")


def _check_matchup(cfg: DictConfig, horizons: Sequence[int] = ()) -> None:
    """Build the matchup of ``cfg``, load what its nature needs (a replayed file) and check that it can
    play the longest of its T and ``horizons`` (the values of a sweep of T)."""
    from arena.matchup import check_length, matchup_from_config
    from arena.seeding import nature_streams

    m = matchup_from_config(cfg)
    m.nature.game = m.game  # as the arena does: natures may check their outcomes against the game's range
    try:
        m.nature.reset(nature_streams(0, m.nature.name)[0])
    except (OSError, ValueError) as exc:  # a file it cannot load, a bad value: the config's fault
        raise ConfigError(f"nature {m.nature.name!r}: {exc}") from None
    except Exception:  # noqa: BLE001 (a plugin that fails otherwise forfeits when it plays: a result row)
        return
    try:
        check_length(m.nature, max([m.T, *horizons]))
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    try:  # a replayed forecast stream is read and checked here, before anything runs
        check_length(m.forecaster, max([m.T, *horizons]))
    except (OSError, ValueError) as exc:
        raise ConfigError(str(exc)) from None


def compose(overrides: list[str], config_name: str = "config") -> DictConfig:
    """The arena's config (``config_name``: ``redteam`` for arena-redteam's) with ``overrides`` (Hydra initialized:
    :func:`hydra_session`); an unknown option of a group or an unknown key is named with the closest one, a
    launcher that needs an extra with its install."""
    import warnings

    from hydra import compose as hydra_compose
    from hydra.errors import ConfigCompositionException, MissingConfigException

    if problem := search_path_problem():
        raise ConfigError(problem)
    try:
        with warnings.catch_warnings():  # search_path_problem said it, as an error
            warnings.filterwarnings("ignore", message=r"provider=.* is not available")
            return hydra_compose(config_name, overrides=overrides, return_hydra_config=True)
    except MissingConfigException as exc:
        for o in _parse(overrides):
            value = o.get_value_element_as_str()
            if o.key_or_group in GROUPS and value not in _group_options(o.key_or_group):
                raise ConfigError(unknown_name(o.key_or_group, value, _group_options(o.key_or_group))) from None
            if o.key_or_group == "hydra/launcher":
                raise _launcher_problem(value) from None
        raise ConfigError(str(exc).splitlines()[0]) from None
    except ConfigCompositionException as exc:
        import re

        hit = re.match(r"Could not override '(forecaster|nature|game)\.([^'.]+)'", str(exc))
        if hit:
            options = [o.input_line.split("=", 1)[1] for o in _parse(overrides) if o.key_or_group == hit[1]]
            node = hydra_compose(config_name, overrides=[f"{hit[1]}={options[-1]}"] if options else [])
            raise ConfigError(unknown_parameter(hit[1], node[hit[1]], hit[2])) from None
        unknown = re.match(r"Could not override '([^']+)'", str(exc))
        if unknown and not _has_key(unknown[1], config_name):
            raise ConfigError(unknown_key(unknown[1], config_name)) from None
        raise ConfigError(f"{exc}. Check the override syntax (key=value, -m key=a,b)") from None


def _group_options(group: str) -> list[str]:
    from hydra.core.global_hydra import GlobalHydra

    return sorted(GlobalHydra.instance().config_loader().get_group_options(group))


def _launcher_problem(value: str) -> ConfigError:
    if value in LAUNCHER_EXTRAS:
        extra = LAUNCHER_EXTRAS[value]
        return ConfigError(
            f"hydra/launcher={value} needs the {extra!r} extra: "
            f"pip install 'defensive-forecasting-arena[{extra}]' (from a checkout: "
            f"pip install -e '.[{extra}]')"
        )
    return ConfigError(unknown_name("hydra/launcher", value, _group_options("hydra/launcher")))


__all__ = [
    "CONFIG_MODULE",
    "check_redteam",
    "compose",
    "config_dir",
    "hydra_session",
    "prepare",
    "search_path_problem",
    "use_search_path_plugin",
    "validate",
]
