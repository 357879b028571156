"""Tournaments: a sweep of matchups described as data, run in shards by any Hydra launcher.

A tournament config (``conf/tournament/<name>.yaml``) lists forecasters and natures
(names, or ``{name, params, grid}`` entries whose ``grid`` values are crossed), seeds and
horizons. The matchups are expanded in a fixed order and dealt round-robin to
``shards`` Hydra jobs (``shard=0..shards-1``), so that a launcher (joblib locally, Ray or
SLURM on a cluster) distributes a few jobs instead of thousands, and every matchup is
stored as soon as it finishes. A tournament's results directory does not depend on the
time (``<results_root>/<tournament_name>``), so rerunning a tournament resumes it: a matchup
whose whole result is already stored for the same resolved config and code version (both are
in its id) is not played again, and the summary covers the matchups of the current plan only.
"""

from __future__ import annotations

import difflib
import itertools
import os

from omegaconf import DictConfig, OmegaConf

from arena.results import code_version, matchup_id, plugin_code

#: Config keys that do not change a matchup's result (left out of its id).
NOT_IN_ID = ("hydra", "tournament", "shard", "report", "results_root", "tournament_name")


def results_dir(root: str, name: str, tournament: str | None, stamp: str) -> str:
    """Where a run's results land: ``root/name`` for a tournament (so that rerunning it resumes),
    ``root/name/stamp`` for a single matchup or a ``-m`` sweep. The config's ``hydra.sweep.dir`` and
    ``hydra.run.dir`` call it as the ``arena_results_dir`` resolver.

    >>> results_dir("results", "calibration", "calibration", "2026-01-01_00-00-00")
    'results/calibration'
    >>> results_dir("results", "single", None, "2026-01-01_00-00-00")
    'results/single/2026-01-01_00-00-00'
    """
    return f"{root}/{name}" if tournament is not None else f"{root}/{name}/{stamp}"


if not OmegaConf.has_resolver("arena_results_dir"):
    OmegaConf.register_new_resolver("arena_results_dir", results_dir)


def auto_shards() -> int:
    """``tournament.shards: auto``: two shards per core this process may use (a few per worker even out
    slow matchups, and each shard costs Hydra a config composition, about 0.3 s)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return 2 * max(cores, 1)


class ConfigError(ValueError):
    """A config that cannot run; the message says what is wrong and how to fix it."""


def load_option(group: str, name: str) -> DictConfig:
    """The config of one option of a group (``forecaster/k29``), from Hydra's search path."""
    from hydra.core.global_hydra import GlobalHydra

    repo = GlobalHydra.instance().config_loader().repository
    result = repo.load_config(f"{group}/{name}")
    if result is None:
        options = repo.get_group_options(group)
        close = difflib.get_close_matches(str(name), options, n=1, cutoff=0.5)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise ConfigError(f"unknown {group} {name!r}.{hint} Available: {', '.join(options)}")
    cfg = result.config
    if "defaults" in cfg:
        cfg = OmegaConf.masked_copy(cfg, [k for k in cfg if k != "defaults"])
    return cfg


def _entries(group: str, items) -> list[tuple[str, DictConfig]]:
    """Expand tournament entries into (label, option config) pairs, crossing grids."""
    out = []
    for item in items:
        if isinstance(item, str):
            out.append((item, load_option(group, item)))
            continue
        item = OmegaConf.to_container(item, resolve=True) if not isinstance(item, dict) else item
        unknown = set(item) - {"name", "params", "grid", "label"}
        if "name" not in item or unknown:
            raise ConfigError(f"tournament {group} entry {item!r}: give a name or {{name, params, grid}}"
                              + (f" (unknown keys {sorted(unknown)})" if unknown else ""))
        base = OmegaConf.merge(load_option(group, item["name"]), item.get("params") or {})
        grid = item.get("grid") or {}
        keys = list(grid)
        for values in itertools.product(*(grid[k] if isinstance(grid[k], list) else [grid[k]] for k in keys)):
            point = dict(zip(keys, values))
            label = item.get("label", item["name"])
            if point:
                label += "[" + ",".join(f"{k}={v}" for k, v in point.items()) + "]"
            out.append((label, OmegaConf.merge(base, point)))
    return out


def _as_list(value, what: str) -> list:
    values = list(value) if OmegaConf.is_list(value) or isinstance(value, (list, tuple)) else [value]
    if not values:
        raise ConfigError(f"tournament {what} is empty; list at least one")
    return values


def plan(cfg: DictConfig) -> list[tuple]:
    """Every matchup of the tournament in ``cfg.tournament`` as (forecaster label, forecaster config,
    nature label, nature config, T, seed), in a fixed order; cheap (no config merge per matchup)."""
    t = cfg.tournament
    for key in ("forecasters", "natures", "seeds", "T"):
        if key not in t:
            raise ConfigError(f"tournament {t.get('name', '?')!r} has no {key!r}; add e.g. {key}: [...]")
    forecasters, natures = _entries("forecaster", t.forecasters), _entries("nature", t.natures)
    seeds, horizons = _as_list(t.seeds, "seeds"), _as_list(t.T, "T")
    return [(fl, fc, nl, nc, T, seed) for T in horizons
            for (fl, fc), (nl, nc) in itertools.product(forecasters, natures) for seed in seeds]


def _base(cfg: DictConfig) -> dict:
    """The config shared by every matchup of a tournament, as plain containers (unresolved)."""
    return OmegaConf.to_container(OmegaConf.masked_copy(cfg, [k for k in cfg if k not in ("hydra", "tournament",
                                                                                          "shard")]))


def build_matchup(cfg: DictConfig, entry: tuple, base: dict | None = None) -> DictConfig:
    """The full config of one planned matchup (``base``: :func:`_base` of ``cfg``, when already made)."""
    flabel, fcfg, nlabel, ncfg, T, seed = entry
    config = dict(_base(cfg) if base is None else base)
    config.update(T=T, seed=seed, forecaster_label=flabel, nature_label=nlabel,
                  forecaster=OmegaConf.to_container(fcfg), nature=OmegaConf.to_container(ncfg))
    return OmegaConf.create(config)


def matchups(cfg: DictConfig) -> list[DictConfig]:
    """Every matchup config of the tournament in ``cfg.tournament``, in a fixed order."""
    return [build_matchup(cfg, e) for e in plan(cfg)]


def resolved_config(cfg: DictConfig) -> dict:
    """The resolved config of one matchup without the keys that do not change its result."""
    config = OmegaConf.to_container(cfg, resolve=True)
    for key in NOT_IN_ID:
        config.pop(key, None)
    return config


def plugin_targets(cfg: DictConfig) -> list[str]:
    """The ``_target_`` classes of a matchup's forecaster and nature."""
    return [str(cfg[k].get("_target_", "")) for k in ("forecaster", "nature") if k in cfg]


def matchup_key(cfg: DictConfig) -> str:
    """The id of a matchup: its labels, seed and T, and a hash of its resolved config and the code
    version (:func:`arena.results.code_version`), everything that shapes its result."""
    config = {**resolved_config(cfg), "code_version": code_version()}
    plugins = plugin_code(plugin_targets(cfg))
    if plugins:  # a user's own plugin: its source is part of the version too
        config["plugin_code"] = plugins
    return matchup_id(str(cfg.game.name), str(cfg.forecaster_label), str(cfg.nature_label),
                      int(cfg.seed), int(cfg.T), config)


def planned_ids(cfg: DictConfig) -> list[str]:
    """The matchup ids of every matchup of the tournament in ``cfg.tournament``, in plan order."""
    base = _base(cfg)
    return [matchup_key(build_matchup(cfg, e, base)) for e in plan(cfg)]


def shard_of(cfg: DictConfig) -> list[DictConfig]:
    """The matchups dealt to ``cfg.shard`` of ``cfg.tournament.shards``."""
    shards, shard = cfg.tournament.get("shards", 1), int(cfg.get("shard", 0))
    if not isinstance(shards, int) or isinstance(shards, bool) or shards < 1:
        raise ConfigError(f"tournament.shards={shards!r}: give a positive integer (`arena` turns auto into "
                          f"{auto_shards()} here)")
    if not 0 <= shard < shards:
        raise ConfigError(f"shard={shard} is outside 0..{shards - 1}; the tournament has {shards} shards")
    base = _base(cfg)
    return [build_matchup(cfg, e, base) for i, e in enumerate(plan(cfg)) if i % shards == shard]
