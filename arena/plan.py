"""A tournament's plan: every matchup of its config in a fixed order, their ids and its shards, as pure functions.

A tournament config (``conf/tournament/<name>.yaml``) lists forecasters and natures (names, or
``{name, params, grid}`` entries whose ``grid`` values are crossed), seeds and horizons. The
matchups are expanded in a fixed order (:func:`plan`) and dealt round-robin to ``shards`` jobs
(:func:`shard_of`). A matchup's id (:func:`matchup_key`) holds its labels, seed and T, and a hash
of its resolved config and the code version: everything that shapes its result.

With ``tournament.until_decided=true`` the plan holds every seed of the budget (:func:`seeds_of`: the
listed seeds, then the next integers up to ``seed_budget``), its shards deal the listed seeds only, and
:mod:`arena.sequential_seeds` adds the others, one seed at a time, to the forecasters of undecided pairs
(:func:`requested_pairs`).
"""

from __future__ import annotations

import copy
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
    """Every matchup of the tournament in ``cfg.tournament``, in a fixed order (with ``until_decided``: every
    seed of the budget, :func:`seeds_of`); cheap (no config merge per matchup)."""
    t = cfg.tournament
    for key in ("forecasters", "natures", "seeds", "T"):
        if key not in t:
            raise ConfigError(f"tournament {t.get('name', '?')!r} has no {key!r}; add e.g. {key}: [...]")
    forecasters, natures = _entries("forecaster", t.forecasters), _entries("nature", t.natures)
    seeds, horizons = seeds_of(t), _as_list(t.T, "T")
    if until_decided(t):
        requested_pairs(t, [label for label, _ in forecasters])  # a bad pair is refused before anything runs
    return [
        Entry(fl, fc, nl, nc, T, seed)
        for T in horizons
        for (fl, fc), (nl, nc) in itertools.product(forecasters, natures)
        for seed in seeds
    ]


#: The scores a tournament may decide its pairs on (``tournament.decide_metric``; null: the game's headline score).
DECIDE_METRICS = ("brier", "log_loss", "pinball")


def until_decided(t: DictConfig) -> bool:
    """Whether the tournament ``t`` adds seeds to undecided pairs (``until_decided``, a switch: off by default)."""
    value = t.get("until_decided", False)
    if not isinstance(value, bool):
        raise ConfigError(f"tournament.until_decided={value!r}: give true or false")
    return value


def listed_seeds(t: DictConfig) -> list:
    """The seeds the tournament ``t`` lists (``seeds``): all of its plan's, or, with ``until_decided``, the first."""
    return _as_list(t.seeds, "seeds")


def seeds_of(t: DictConfig) -> list:
    """The seeds of the tournament ``t``'s plan: its ``seeds``; with ``until_decided``, followed by the next
    integers after the largest of them up to ``seed_budget`` seeds in all.

    >>> seeds_of(OmegaConf.create({"seeds": [0, 1, 2], "until_decided": True, "seed_budget": 5}))
    [0, 1, 2, 3, 4]
    >>> seeds_of(OmegaConf.create({"seeds": [0, 1, 2], "seed_budget": 5}))
    [0, 1, 2]
    """
    listed = listed_seeds(t)
    if not until_decided(t):
        return listed
    budget = t.get("seed_budget")
    if not isinstance(budget, int) or isinstance(budget, bool) or budget < len(listed):
        raise ConfigError(
            f"tournament.seed_budget={budget!r}: give the most seeds a matchup may play, an integer at least "
            f"the {len(listed)} listed in tournament.seeds"
        )
    if not all(isinstance(s, int) and not isinstance(s, bool) for s in listed):
        raise ConfigError(f"tournament.seeds={listed!r}: until_decided adds integer seeds; list integers")
    top = max(listed)
    return listed + list(range(top + 1, top + 1 + budget - len(listed)))


def requested_pairs(t: DictConfig, labels: list[str]) -> list[tuple[str, str]]:
    """The pairs of forecasters the tournament ``t`` asks to decide (``decide``: a list of ``[a, b]``; null:
    every pair of ``labels``), each once, in the order of ``labels``.

    >>> requested_pairs(OmegaConf.create({"decide": None}), ["a", "b", "c"])
    [('a', 'b'), ('a', 'c'), ('b', 'c')]
    >>> requested_pairs(OmegaConf.create({"decide": [["c", "a"]]}), ["a", "b", "c"])
    [('a', 'c')]
    """
    asked = t.get("decide")
    if asked is None:
        return list(itertools.combinations(labels, 2))
    asked = OmegaConf.to_container(asked) if OmegaConf.is_config(asked) else asked
    out = set()
    for pair in asked if isinstance(asked, list) else [asked]:
        if not (isinstance(pair, list) and len(pair) == 2 and set(pair) <= set(labels) and pair[0] != pair[1]):
            raise ConfigError(
                f"tournament.decide: {pair!r} is not a pair of two of the tournament's forecasters "
                f"({', '.join(labels)}); give e.g. decide: [[{labels[0]}, {labels[-1]}]], or null for every pair"
            )
        out.add(tuple(sorted(pair, key=labels.index)))
    return sorted(out, key=lambda p: (labels.index(p[0]), labels.index(p[1])))


def decide_metric(t: DictConfig, game: str) -> str:
    """The score the tournament ``t`` decides its pairs on: ``decide_metric``, else the game's headline score
    (the one of ``pairs.csv``: pinball for the quantile game, else brier)."""
    metric = t.get("decide_metric") or ("pinball" if game == "quantile" else "brier")
    if metric not in DECIDE_METRICS or (metric == "pinball") != (game == "quantile"):
        allowed = ["pinball"] if game == "quantile" else [m for m in DECIDE_METRICS if m != "pinball"]
        raise ConfigError(f"tournament.decide_metric={metric!r}: the {game} game decides on {' or '.join(allowed)}")
    return str(metric)


def shared_config(cfg: DictConfig) -> dict:
    """The config shared by every matchup of a tournament, as plain containers (unresolved)."""
    return OmegaConf.to_container(
        OmegaConf.masked_copy(cfg, [k for k in cfg if k not in ("hydra", "tournament", "shard")])
    )


def matchup_config(cfg: DictConfig, entry: Entry, base: dict | None = None) -> DictConfig:
    """The full config of one planned matchup (``base``: :func:`shared_config` of ``cfg``, when already made)."""
    return OmegaConf.create(_matchup_dict(cfg, entry, base))


#: The keys of a matchup's config that :meth:`Shared.matchup` sets over the shared config.
_PER_MATCHUP = ("T", "seed", "forecaster_label", "nature_label", "forecaster", "nature")


class Shared:
    """What the matchups of one plan share, made plain once: the shared config (:func:`shared_config`; ``base``,
    when already made) and whether it holds an interpolation beside what each matchup sets, and each option's
    plain containers with the same answer (the entries of a plan share their option configs)."""

    def __init__(self, cfg: DictConfig, base: dict | None = None):
        self.base = shared_config(cfg) if base is None else base
        self.plain = _plain({k: v for k, v in self.base.items() if k not in _PER_MATCHUP})
        self._options: dict[int, tuple[DictConfig, dict, bool]] = {}

    def option(self, node: DictConfig) -> tuple[dict, bool]:
        """A copy of the plain containers of an option's config, and whether they hold no interpolation."""
        if id(node) not in self._options:  # the node kept: its id stays its own
            container = OmegaConf.to_container(node)
            self._options[id(node)] = (node, container, _plain(container))
        _, container, plain = self._options[id(node)]
        return copy.deepcopy(container), plain

    def matchup(self, entry: Entry) -> tuple[dict, bool]:
        """The config of one planned matchup as plain containers (unresolved), and whether it holds no
        interpolation."""
        (forecaster, plain_f), (nature, plain_n) = self.option(entry.forecaster), self.option(entry.nature)
        config = dict(self.base)
        config.update(
            T=entry.T,
            seed=entry.seed,
            forecaster_label=entry.forecaster_label,
            nature_label=entry.nature_label,
            forecaster=forecaster,
            nature=nature,
        )
        return config, self.plain and plain_f and plain_n and _plain([entry.forecaster_label, entry.nature_label])


def _matchup_dict(cfg: DictConfig, entry: Entry, base: dict | None = None) -> dict:
    """:func:`matchup_config` as plain containers (unresolved)."""
    return Shared(cfg, base).matchup(entry)[0]


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


def resolved_matchup(cfg: DictConfig, entry: Entry, shared: Shared | None = None) -> dict:
    """The resolved config of one planned matchup as plain containers (``shared``: :class:`Shared` of ``cfg``, made
    once for a plan's matchups).

    A matchup's config without interpolations is its own resolved form: no OmegaConf config is built
    (milliseconds each, for every matchup of a tournament: in its plan and in its jobs)."""
    config, plain = (Shared(cfg) if shared is None else shared).matchup(entry)
    return config if plain else OmegaConf.to_container(OmegaConf.create(config), resolve=True)


def planned_matchups(
    cfg: DictConfig, shard: int | None = None, shards: int = 1, entries: list[Entry] | None = None
) -> list[tuple[str, dict]]:
    """(matchup id, resolved config) of every matchup of the tournament in ``cfg.tournament`` (or of ``entries``
    of its plan) in plan order, or of those dealt to ``shard`` of ``shards`` (round-robin); each id computed
    once, from plain containers."""
    shared = Shared(cfg)
    out = []
    for i, entry in enumerate(plan(cfg) if entries is None else entries):
        if shard is None or i % shards == shard:
            config = resolved_matchup(cfg, entry, shared)
            out.append((matchup_key(config), config))
    return out


def planned_ids(cfg: DictConfig) -> list[str]:
    """The matchup ids of every matchup of the tournament in ``cfg.tournament``, in plan order."""
    return [mid for mid, _ in planned_matchups(cfg)]


def shard_of(cfg: DictConfig) -> list[tuple[str, dict]]:
    """(matchup id, resolved config) of the matchups dealt to ``cfg.shard`` of ``cfg.tournament.shards`` (with
    ``until_decided``: of the listed seeds only; the others are added to undecided pairs after them)."""
    shards, shard = cfg.tournament.get("shards", 1), int(cfg.get("shard", 0))
    if not isinstance(shards, int) or isinstance(shards, bool) or shards < 1:
        raise ConfigError(
            f"tournament.shards={shards!r}: give a positive integer (`arena` turns auto into {auto_shards()} here)"
        )
    if not 0 <= shard < shards:
        raise ConfigError(f"shard={shard} is outside 0..{shards - 1}; the tournament has {shards} shards")
    listed = set(listed_seeds(cfg.tournament))
    return planned_matchups(cfg, shard, shards, [e for e in plan(cfg) if e.seed in listed])


__all__ = [
    "DECIDE_METRICS",
    "NOT_IN_ID",
    "Entry",
    "auto_shards",
    "decide_metric",
    "listed_seeds",
    "matchup_config",
    "matchup_key",
    "plan",
    "planned_ids",
    "planned_matchups",
    "requested_pairs",
    "resolved_config",
    "Shared",
    "resolved_matchup",
    "shard_of",
    "seeds_of",
    "shared_config",
    "until_decided",
]
