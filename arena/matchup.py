"""A matchup, built and checked in one place: the game, the forecaster, nature, T, the seed, the referee.

Every way into a game goes through :func:`build_matchup`: :func:`arena.play` (names or
instances), the Gymnasium environment (no forecaster: the agent plays), and the command line,
the tournaments and ``arena-rerun`` (a composed Hydra config, :func:`matchup_from_config`).
The game is looked up, the plugins made and T, the seed and the time limit checked here only.

Examples
--------
>>> m = build_matchup("binary", "k29", "iid_bernoulli", T=100, seed=3)
>>> m.game.name, m.forecaster.name, m.nature.name, m.T, m.seed
('binary', 'k29', 'iid_bernoulli', 100, 3)
>>> build_matchup("quantile", "k29", "iid_normal", T=100)
Traceback (most recent call last):
...
ValueError: forecaster 'k29' does not play the 'quantile' game (it plays ('binary',))
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from arena.errors import ConfigError
from arena.games import Game, get_game, plays
from arena.protocols import Forecaster, Nature
from arena.referee import Referee
from arena.registry import make_forecaster, make_nature

#: Bytes the arena keeps per round (the recorder's arrays of forecasts, outcomes and contexts, with room
#: for the referee's sorted copies); T must fit the machine's memory at this rate.
BYTES_PER_ROUND = 200


@dataclass(frozen=True)
class Matchup:
    """One checked matchup: what :func:`arena.runner.play_matchup` plays.

    Attributes
    ----------
    game : the game, with its parameters.
    forecaster : the forecaster (None in a Gymnasium environment, whose agent forecasts).
    nature : nature.
    T : the horizon (rounds).
    seed : the root seed every stream derives from by name (:mod:`arena.seeding`).
    referee : the referee's settings.
    time_limit : seconds one plugin call may take (None: no limit).
    """

    game: Game
    forecaster: Forecaster | None
    nature: Nature
    T: int
    seed: int
    referee: Referee
    time_limit: float | None = None


def build_matchup(
    game: str | Game,
    forecaster: str | Forecaster | None,
    nature: str | Nature,
    T: Any,
    seed: Any = 0,
    *,
    game_params: Mapping | None = None,
    forecaster_params: Mapping | None = None,
    nature_params: Mapping | None = None,
    referee: Referee | Mapping | None = None,
    time_limit: Any = None,
    sealed: Any = False,
) -> Matchup:
    """Look up the game, make the plugins (registered names or instances) and check everything.

    ``sealed``: the forecaster plays in a process of its own (:func:`arena.sealed.seal`), made here, so
    that nothing of it runs in this process after its constructor.

    Raises ValueError (an unknown plugin name: :class:`arena.registry.UnknownPluginError`) with
    one line that names the bad value and the fix.
    """
    _check_horizon(T)
    check_seed(seed)
    if time_limit is not None and (
        isinstance(time_limit, bool) or not isinstance(time_limit, (int, float)) or not 0 < time_limit < math.inf
    ):
        raise ValueError(
            f"time_limit={time_limit!r}: give the seconds a plugin call may take as a positive "
            "number, e.g. time_limit=10, or None for no limit (null in a config)"
        )
    g = get_game(game, **(game_params or {}))
    if not isinstance(sealed, bool):
        raise ValueError(f"sealed={sealed!r}: give true or false")
    fc = None if forecaster is None else make_forecaster(forecaster, **(forecaster_params or {}))
    nat = make_nature(nature, **(nature_params or {}))
    for kind, plugin in (("forecaster", fc), ("nature", nat)):
        if plugin is not None and not plays(g, plugin):
            raise ValueError(f"{kind} {plugin.name!r} does not play the {g.name!r} game (it plays {plugin.games})")
    if fc is not None:
        check_same_rows(fc, nat)  # on the forecaster itself: a sealed proxy does not show its rows
    if sealed and fc is not None:
        from arena.sealed import seal

        fc = seal(fc)
    if referee is None or isinstance(referee, Mapping):  # else a referee object (the checks' scores nothing)
        check_referee_settings(referee or {})
        try:
            referee = Referee(**(referee or {}))
        except (TypeError, ValueError) as exc:  # the referee names itself in its own messages
            raise ValueError(str(exc) if str(exc).startswith("referee:") else f"referee: {exc}") from None
    if fc is not None:  # bounds are fixed before the game: no looser search than the referee accepts
        referee.accepts(fc)
    return Matchup(g, fc, nat, int(T), int(seed), referee, time_limit)


#: Seeds are stored as 64-bit signed integers in the results tables.
MAX_SEED = 2**63 - 1


def check_seed(seed: Any, what: str = "seed") -> None:
    """Refuse a seed that is not an integer in 0..2**63-1 (the results tables store it as int64).

    >>> check_seed(2**64)
    Traceback (most recent call last):
    ...
    ValueError: seed=18446744073709551616: the seed must be a non-negative integer, e.g. seed=0 (at most 2**63-1)
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed <= MAX_SEED:
        raise ValueError(f"{what}={seed!r}: the seed must be a non-negative integer, e.g. seed=0 (at most 2**63-1)")


def check_referee_settings(settings: Mapping) -> None:
    """Refuse referee settings of the wrong type or out of range, with one line naming the setting
    (the one place they are checked: a new setting adds its check here). Unknown names are left to
    :class:`arena.referee.Referee`, which names them.

    >>> check_referee_settings({"ece_bins": 1.5})
    Traceback (most recent call last):
    ...
    ValueError: referee.ece_bins=1.5: give a whole number from 1 to 1000000, e.g. referee.ece_bins=10
    >>> check_referee_settings({"oi_features": "px"})
    Traceback (most recent call last):
    ...
    ValueError: referee.oi_features='px': give a list of feature terms, e.g. referee.oi_features=[1,p,x]
    """
    counts = {"ece_bins": 10, "n_checkpoints": 20}
    for key, example in counts.items():
        value = settings.get(key, example)
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 1 <= value <= 10**6:
            raise ValueError(
                f"referee.{key}={value!r}: give a whole number from 1 to 1000000, e.g. referee.{key}={example}"
            )
    if not isinstance(settings.get("intercept", False), bool):
        raise ValueError(f"referee.intercept={settings['intercept']!r}: give true or false")
    features = settings.get("oi_features", ["1", "p", "x"])
    if (
        isinstance(features, (str, bytes))
        or not isinstance(features, (list, tuple))
        or not features
        or not all(isinstance(f, (str, int)) and not isinstance(f, bool) for f in features)
    ):
        raise ValueError(
            f"referee.oi_features={features!r}: give a list of feature terms, e.g. referee.oi_features=[1,p,x]"
        )
    if len({str(f) for f in features}) != len(features):
        raise ValueError(f"referee.oi_features={list(features)!r}: a feature term is listed twice; list each once")
    M = settings.get("M", 1.0)  # the referee refuses M <= 0 and NaN itself
    if isinstance(M, (float, np.floating)) and math.isinf(M):
        raise ValueError(f"referee.M={M!r}: give the comparators' norm bound as a positive finite number, e.g. 1")


def _check_horizon(T: Any) -> None:
    if isinstance(T, bool) or not isinstance(T, (int, np.integer)) or T <= 0:
        raise ValueError(f"T={T!r}: the horizon must be a positive integer, e.g. T=1000")
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") if hasattr(os, "sysconf") else None
    if memory and T * BYTES_PER_ROUND > memory:
        raise ValueError(
            f"T={T} needs about {T * BYTES_PER_ROUND / 2**30:.0f} GiB (about {BYTES_PER_ROUND} bytes "
            f"a round) and this machine has {memory / 2**30:.0f} GiB; lower T to at most "
            f"{memory // BYTES_PER_ROUND}"
        )


def check_length(plugin: Nature | Forecaster, T: int) -> None:
    """Refuse a horizon longer than a plugin can play (a replayed series or forecast stream has so many rows)."""
    if plugin.length is not None and T > plugin.length:
        kind = "nature" if isinstance(plugin, Nature) else "forecaster"
        raise ValueError(
            f"T={T} exceeds the {plugin.length} rounds {kind} {plugin.name!r} can play; "
            f"lower T to at most {plugin.length}"
        )


def check_same_rows(forecaster: Forecaster, nature: Nature) -> None:
    """Refuse a forecast replay and a replay nature that skip different rows of a file (``on_missing: skip``): the
    forecast of one row would meet the outcome of another. Other plugins (``skipped_rows`` None) play any rows."""
    try:
        f_rows, n_rows = forecaster.skipped_rows, nature.skipped_rows
    except (OSError, ValueError):  # a file that cannot be read: the length checks report it, naming the row
        return
    if f_rows is not None and n_rows is not None and tuple(f_rows) != tuple(n_rows):

        def show(rows):
            return f"rows {', '.join(map(str, rows[:5]))}{', ...' if len(rows) > 5 else ''}" if rows else "no row"

        raise ValueError(
            f"forecaster {forecaster.name!r} skips {show(f_rows)} of its file and nature {nature.name!r} skips "
            f"{show(n_rows)}: every player must skip the same rows; give the nature and every replayed "
            "forecaster the same file, start, on_missing: skip and missing_columns"
        )


def matchup_from_config(cfg) -> Matchup:
    """The matchup of one composed config, or of its resolved plain containers (``game``, ``forecaster`` and
    ``nature`` nodes with a ``_target_``, ``referee``, ``T``, ``seed``, ``time_limit``); every problem is a
    :class:`ConfigError`."""
    from hydra.utils import instantiate

    T, seed, time_limit = cfg.get("T"), cfg.get("seed"), cfg.get("time_limit")
    game_params = _plain_copy(cfg["game"])
    game = str(game_params.pop("name"))
    try:
        forecaster, nature = (_instantiate(cfg[kind], kind, instantiate) for kind in ("forecaster", "nature"))
        return build_matchup(
            game,
            forecaster,
            nature,
            T,
            seed,
            game_params=game_params,
            referee=_plain_copy(cfg["referee"]),
            time_limit=time_limit,
            sealed=cfg.get("sealed", False),
        )
    except ConfigError:
        raise
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def matchup_from_stored(config: object, trust: bool = False) -> Matchup:
    """The matchup of a stored config (a result row's ``config``, JSON text or its mapping): the one way a
    matchup from a results directory is rebuilt (``arena-rerun``, ``arena-compare``, the report's comparison).
    A config from elsewhere is code (``_target_`` names what is called), so unless ``trust`` it must pass
    :func:`check_stored_config` (registered plugins, plain JSON values) and is built as it is stored, no
    ``${...}`` resolved. Raises ConfigError with one line.

    >>> matchup_from_stored('{"forecaster": {"_target_": "subprocess.Popen", "args": ["id"]}}')
    Traceback (most recent call last):
    ...
    arena.errors.ConfigError: the stored config's forecaster names subprocess.Popen, which is not a registered \
plugin; a config from elsewhere runs code: pass --trust only if you trust its source
    """
    import json

    if isinstance(config, (str, bytes)):
        try:
            config = json.loads(config)
        except (ValueError, RecursionError) as exc:
            raise ConfigError(f"the stored config is not readable JSON ({type(exc).__name__})") from None
    if trust:
        from omegaconf import OmegaConf

        return matchup_from_config(OmegaConf.create(config))
    check_stored_config(config)
    try:
        return matchup_from_config(config)
    except (KeyError, TypeError, AttributeError) as exc:  # a part missing or of the wrong kind
        raise ConfigError(f"the stored config cannot be played: {type(exc).__name__}: {exc}") from None


def _plain_copy(node):
    """A config node as fresh plain containers (resolved): what a plugin gets is its own to keep."""
    import copy

    from omegaconf import OmegaConf

    return OmegaConf.to_container(node, resolve=True) if OmegaConf.is_config(node) else copy.deepcopy(node)


def _instantiate(node, kind: str, instantiate):
    import re

    from hydra.utils import get_class

    try:
        params = _plain_copy(node)
        target = params.pop("_target_", None) if isinstance(params, dict) else None
        if isinstance(target, str) and not any(_nested(v) for v in params.values()):
            # a plain class and plain values (every shipped plugin): what instantiate(node, _convert_="all")
            # builds, without its per-node machinery (milliseconds a plugin, in every matchup of a tournament)
            return get_class(target)(**params)
        return instantiate(node, _convert_="all")
    except BaseException as exc:  # noqa: BLE001 (Hydra wraps the constructor's error; show the constructor's message)
        from arena.watchdog import plugin_failure

        failure = plugin_failure(exc)  # a Ctrl-C this process received is raised again; a plugin's is its error
        cause = exc
        while cause.__cause__ is not None:
            cause = cause.__cause__
        hit = re.search(r"unexpected keyword argument '([^']+)'", str(cause)) if isinstance(cause, TypeError) else None
        if hit:
            raise ConfigError(unknown_parameter(kind, node, hit[1])) from None
        message = f"{kind}: {cause}" if isinstance(exc, Exception) else f"{kind}: __init__ raised {failure}"
        raise ConfigError(message) from None


def _nested(value) -> bool:
    """Whether a value holds something ``instantiate`` treats specially (a ``_target_`` or other ``_key_``)."""
    if isinstance(value, dict):
        return any(str(k).startswith("_") or _nested(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_nested(v) for v in value)
    return False


def unknown_parameter(kind: str, node, name: str) -> str:
    """The message for a parameter that plugin config ``node`` (with its ``_target_``) does not take:
    the closest parameter and every parameter it has (its config's keys and its constructor's).

    >>> message = unknown_parameter("forecaster", {"_target_": "forecasters.baselines.OGD", "lr": 0.1}, "lrr")
    >>> message.split("?")[0]
    "forecaster 'forecasters.baselines.OGD' has no parameter 'lrr'. Did you mean 'lr'"
    >>> "Its parameters: lr, schedule, M," in message
    True
    """
    import inspect
    from importlib import import_module

    from arena.errors import did_you_mean

    target = str(node.get("_target_", "?"))
    params = [k for k in node if not str(k).startswith("_")]
    try:
        module, _, attr = target.rpartition(".")
        signature = inspect.signature(getattr(import_module(module), attr))
        params += [p for p in signature.parameters if p not in params and p not in ("self", "args", "kwargs")]
    except Exception:  # noqa: BLE001 (the config's own keys are still worth naming)
        pass
    params = [p for p in params if p != name]
    return (
        f"{kind} {target!r} has no parameter {name!r}.{did_you_mean(name, params)} Its parameters: "
        f"{', '.join(params) or 'none'}; set one with {kind}.{params[0] if params else 'NAME'}=..."
    )


def check_stored_config(config: object) -> None:
    """Refuse a stored config (a result row's, for ``arena-rerun``) that would run anything but the
    registered plugins: its forecaster and nature must each name the class of a registered plugin as
    ``_target_`` (and its game, if it names one, the registered class); every other value must be plain
    JSON (no other ``_target_`` or Hydra key, no ``${...}`` interpolation). ``instantiate`` imports and
    calls whatever a ``_target_`` names, so a config from elsewhere is code; ``arena-rerun --trust`` skips
    this check. Raises ConfigError.

    >>> check_stored_config({"forecaster": {"_target_": "forecasters.defensive.K29"},
    ...                      "nature": {"_target_": "adversaries.iid.IidBernoulli", "p": 0.3}})
    >>> check_stored_config({"forecaster": {"_target_": "pandas.read_pickle"}})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    arena.errors.ConfigError: the stored config's forecaster names pandas.read_pickle, which is not ...
    """
    from arena.registry import FORECASTERS, NATURES, load_plugins

    load_plugins()
    refuse = "; a config from elsewhere runs code: pass --trust only if you trust its source"
    if not isinstance(config, dict):
        raise ConfigError(f"the stored config is a {type(config).__name__}, not a mapping{refuse}")
    from arena.games import GAMES

    for kind, table in (("forecaster", FORECASTERS), ("nature", NATURES), ("game", GAMES)):
        node = config.get(kind)
        target = node.get("_target_") if isinstance(node, dict) else None
        known = {f"{c.__module__}.{c.__qualname__}" for c in table.values()}
        if target not in known and not (kind == "game" and target is None):  # a game names no class, or its own
            raise ConfigError(f"the stored config's {kind} names {target}, which is not a registered plugin{refuse}")

    def plain(value, where: str, top: bool = False) -> None:
        if isinstance(value, dict):
            for key, v in value.items():
                # any _key_ is Hydra's or may become Hydra's: only a plugin's own _target_ is allowed
                if not isinstance(key, str) or (key.startswith("_") and not (top and key == "_target_")):
                    raise ConfigError(f"the stored config holds {key!r} at {where}{refuse}")
                plain(v, f"{where}.{key}")
        elif isinstance(value, list):
            for i, v in enumerate(value):
                plain(v, f"{where}[{i}]")
        elif isinstance(value, str) and "${" in value:
            raise ConfigError(f"the stored config holds an interpolation {value[:40]!r} at {where}{refuse}")
        elif not (value is None or isinstance(value, (str, int, float, bool))):
            raise ConfigError(f"the stored config holds a {type(value).__name__} at {where}{refuse}")

    try:
        for key, value in config.items():
            plain(value, str(key), top=key in ("forecaster", "nature", "game"))
    except RecursionError:
        raise ConfigError(f"the stored config is nested too deeply{refuse}") from None


__all__ = [
    "Matchup",
    "build_matchup",
    "check_length",
    "check_same_rows",
    "check_referee_settings",
    "check_seed",
    "check_stored_config",
    "matchup_from_config",
    "matchup_from_stored",
]
