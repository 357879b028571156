"""A tournament's plan: every matchup of its config in a fixed order, their ids and its shards, as pure functions.

A tournament config (``conf/tournament/<name>.yaml``) lists forecasters and natures (names, or
``{name, params, grid}`` entries whose ``grid`` values are crossed), seeds and horizons. The
matchups are expanded in a fixed order (:func:`plan`) and dealt round-robin to ``shards`` jobs
(:func:`shard_of`). A matchup's id (:func:`matchup_key`) holds its labels, seed and T, and a hash
of its resolved config and the code version: everything that shapes its result.
"""

from __future__ import annotations

import itertools
from typing import NamedTuple

from omegaconf import DictConfig, OmegaConf

from arena.errors import ConfigError, unknown_name
from arena.results import code_version, matchup_id, plugin_code

#: Config keys that do not change a matchup's result (left out of its id).
NOT_IN_ID = (
    "hydra",
    "tournament",
    "shard",
    "report",
    "results_root",
    "tournament_name",
    "replace_plan",
    "retry_crashed",
)


def auto_shards() -> int:
    """``tournament.shards: auto``: one shard per core this process may use (each shard costs a config composed
    by Hydra and one forked process to play in: two per core cost the default run some 15% more CPU time)."""
    from arena.supervise import cores

    return max(cores(), 1)


def load_option(group: str, name: str) -> DictConfig:
    """The config of one option of a group (``forecaster/k29``), from Hydra's search path."""
    from hydra.core.global_hydra import GlobalHydra

    repo = GlobalHydra.instance().config_loader().repository
    result = repo.load_config(f"{group}/{name}")
    if result is None:
        raise ConfigError(unknown_name(group, name, repo.get_group_options(group)))
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
            raise ConfigError(
                f"tournament {group} entry {item!r}: give a name or {{name, params, grid}}"
                + (f" (unknown keys {sorted(unknown)})" if unknown else "")
            )
        base = OmegaConf.merge(load_option(group, item["name"]), item.get("params") or {})
        grid = item.get("grid") or {}
        keys = list(grid)
        for values in itertools.product(*(grid[k] if isinstance(grid[k], list) else [grid[k]] for k in keys)):
            point = dict(zip(keys, values, strict=True))
            label = item.get("label", item["name"])
            if not isinstance(label, str) or not label.strip() or label != label.strip():
                raise ConfigError(
                    f"tournament {group} entry {item['name']!r}: label={label!r}; give a non-empty label "
                    "without surrounding spaces (it names the row in every table)"
                )
            if point:
                label += "[" + ",".join(f"{k}={v}" for k, v in point.items()) + "]"
            out.append((label, OmegaConf.merge(base, point)))
    return out


def _as_list(value, what: str) -> list:
    values = list(value) if OmegaConf.is_list(value) or isinstance(value, (list, tuple)) else [value]
    if not values:
        raise ConfigError(f"tournament {what} is empty; list at least one")
    return values


class Entry(NamedTuple):
    """One planned matchup: the labels and option configs of its forecaster and nature, its horizon and seed."""

    forecaster_label: str
    forecaster: DictConfig
    nature_label: str
    nature: DictConfig
    T: int
    seed: int


def plan(cfg: DictConfig) -> list[Entry]:
    """Every matchup of the tournament in ``cfg.tournament``, in a fixed order; cheap (no config merge per
    matchup)."""
    t = cfg.tournament
    for key in ("forecasters", "natures", "seeds", "T"):
        if key not in t:
            raise ConfigError(f"tournament {t.get('name', '?')!r} has no {key!r}; add e.g. {key}: [...]")
    forecasters, natures = _entries("forecaster", t.forecasters), _entries("nature", t.natures)
    seeds, horizons = _as_list(t.seeds, "seeds"), _as_list(t.T, "T")
    return [
        Entry(fl, fc, nl, nc, T, seed)
        for T in horizons
        for (fl, fc), (nl, nc) in itertools.product(forecasters, natures)
        for seed in seeds
    ]


def shared_config(cfg: DictConfig) -> dict:
    """The config shared by every matchup of a tournament, as plain containers (unresolved)."""
    return OmegaConf.to_container(
        OmegaConf.masked_copy(cfg, [k for k in cfg if k not in ("hydra", "tournament", "shard")])
    )


def matchup_config(cfg: DictConfig, entry: Entry, base: dict | None = None) -> DictConfig:
    """The full config of one planned matchup (``base``: :func:`shared_config` of ``cfg``, when already made)."""
    return OmegaConf.create(_matchup_dict(cfg, entry, base))


def _matchup_dict(cfg: DictConfig, entry: Entry, base: dict | None = None) -> dict:
    """:func:`matchup_config` as plain containers (unresolved)."""
    config = dict(shared_config(cfg) if base is None else base)
    config.update(
        T=entry.T,
        seed=entry.seed,
        forecaster_label=entry.forecaster_label,
        nature_label=entry.nature_label,
        forecaster=OmegaConf.to_container(entry.forecaster),
        nature=OmegaConf.to_container(entry.nature),
    )
    return config


def _plain(value) -> bool:
    """Whether plain containers hold no interpolation: then they are their own resolved form."""
    if isinstance(value, dict):
        return all(_plain(v) for v in value.values())
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    return not (isinstance(value, str) and "${" in value)


def resolved_config(cfg: DictConfig | dict) -> dict:
    """The resolved config of one matchup (a composed config, or its resolved plain containers) without the
    keys that do not change its result."""
    config = OmegaConf.to_container(cfg, resolve=True) if OmegaConf.is_config(cfg) else dict(cfg)
    for key in NOT_IN_ID:
        config.pop(key, None)
    return config


def plugin_targets(cfg: DictConfig | dict) -> list[str]:
    """The ``_target_`` classes of a matchup's forecaster and nature."""
    return [str(cfg[k].get("_target_", "")) for k in ("forecaster", "nature") if k in cfg]


def matchup_key(cfg: DictConfig | dict) -> str:
    """The id of a matchup (a composed config, or its resolved plain containers): its labels, seed and T, and
    a hash of its resolved config and the code version (:func:`arena.results.code_version`), everything that
    shapes its result."""
    resolved = OmegaConf.to_container(cfg, resolve=True) if OmegaConf.is_config(cfg) else cfg
    config = {k: v for k, v in resolved.items() if k not in NOT_IN_ID}
    config["code_version"] = code_version()
    plugins = plugin_code(plugin_targets(resolved))
    if plugins:  # a user's own plugin: its source is part of the version too
        config["plugin_code"] = plugins
    return matchup_id(
        str(resolved["game"]["name"]),
        str(resolved["forecaster_label"]),
        str(resolved["nature_label"]),
        int(resolved["seed"]),
        int(resolved["T"]),
        config,
    )


def resolved_matchup(cfg: DictConfig, entry: Entry, base: dict | None = None) -> dict:
    """The resolved config of one planned matchup as plain containers (``base``: :func:`shared_config` of ``cfg``).

    A matchup's config without interpolations is its own resolved form: no OmegaConf config is built
    (milliseconds each, for every matchup of a tournament: in its plan and in its jobs)."""
    config = _matchup_dict(cfg, entry, base)
    return config if _plain(config) else OmegaConf.to_container(OmegaConf.create(config), resolve=True)


def planned_matchups(cfg: DictConfig, shard: int | None = None, shards: int = 1) -> list[tuple[str, dict]]:
    """(matchup id, resolved config) of every matchup of the tournament in ``cfg.tournament`` in plan order,
    or of those dealt to ``shard`` of ``shards`` (round-robin); each id computed once, from plain containers."""
    base = shared_config(cfg)
    out = []
    for i, entry in enumerate(plan(cfg)):
        if shard is None or i % shards == shard:
            config = resolved_matchup(cfg, entry, base)
            out.append((matchup_key(config), config))
    return out


def planned_ids(cfg: DictConfig) -> list[str]:
    """The matchup ids of every matchup of the tournament in ``cfg.tournament``, in plan order."""
    return [mid for mid, _ in planned_matchups(cfg)]


def shard_of(cfg: DictConfig) -> list[tuple[str, dict]]:
    """(matchup id, resolved config) of the matchups dealt to ``cfg.shard`` of ``cfg.tournament.shards``."""
    shards, shard = cfg.tournament.get("shards", 1), int(cfg.get("shard", 0))
    if not isinstance(shards, int) or isinstance(shards, bool) or shards < 1:
        raise ConfigError(
            f"tournament.shards={shards!r}: give a positive integer (`arena` turns auto into {auto_shards()} here)"
        )
    if not 0 <= shard < shards:
        raise ConfigError(f"shard={shard} is outside 0..{shards - 1}; the tournament has {shards} shards")
    return planned_matchups(cfg, shard, shards)


__all__ = [
    "NOT_IN_ID",
    "Entry",
    "auto_shards",
    "matchup_config",
    "matchup_key",
    "plan",
    "planned_ids",
    "planned_matchups",
    "resolved_config",
    "resolved_matchup",
    "shard_of",
    "shared_config",
]
