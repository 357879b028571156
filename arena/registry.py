"""Name -> plugin class, with "did you mean" errors.

Plugins register themselves with :func:`register` when their module is imported.
The framework never imports a concrete plugin by name: :func:`load_plugins` imports
the modules declared under the ``arena.plugins`` entry-point group (this project's
``forecasters`` and ``adversaries`` packages, and any installed plugin package). A plugin
package's config folder is declared under ``arena.configs`` and reaches Hydra's search
path through the arena's search-path plugin (:func:`use_search_path_plugin`).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from importlib.metadata import entry_points

from arena.errors import unknown_name
from arena.protocols import Forecaster, Nature

FORECASTERS: dict[str, type[Forecaster]] = {}
NATURES: dict[str, type[Nature]] = {}
_loaded = False

#: Imported when the package metadata is unavailable (running from a source tree).
_BUILTIN_MODULES = ("forecasters", "adversaries")


class UnknownPluginError(KeyError):
    def __str__(self) -> str:  # KeyError quotes its message; show it plainly
        return str(self.args[0])


def register(cls):
    """Class decorator: add a Forecaster or Nature subclass under its ``name``."""
    if not cls.name:
        raise ValueError(f"{cls.__qualname__} needs a class attribute `name` to be registered")
    table = FORECASTERS if issubclass(cls, Forecaster) else NATURES if issubclass(cls, Nature) else None
    if table is None:
        raise TypeError(f"{cls.__qualname__} is neither a Forecaster nor a Nature")
    other = table.get(cls.name)
    if other is not None and other.__qualname__ != cls.__qualname__:
        raise ValueError(
            f"two plugins are named {cls.name!r}: {other.__module__}.{other.__qualname__} and "
            f"{cls.__module__}.{cls.__qualname__}; rename one"
        )
    table[cls.name] = cls
    return cls


def load_plugins() -> None:
    """Import every plugin module (idempotent)."""
    global _loaded
    if _loaded:
        return
    modules = [ep.value for ep in entry_points(group="arena.plugins")]
    for name in dict.fromkeys([*_BUILTIN_MODULES, *modules]):
        importlib.import_module(name)
    _loaded = True


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


def _lookup(table: dict, kind: str, name: str):
    load_plugins()
    try:
        return table[name]
    except KeyError:
        raise UnknownPluginError(unknown_name(kind, name, sorted(table))) from None


def forecaster_class(name: str) -> type[Forecaster]:
    return _lookup(FORECASTERS, "forecaster", name)


def nature_class(name: str) -> type[Nature]:
    return _lookup(NATURES, "nature", name)


def make_forecaster(spec: str | Forecaster, **params) -> Forecaster:
    return spec if isinstance(spec, Forecaster) else forecaster_class(spec)(**params)


def make_nature(spec: str | Nature, **params) -> Nature:
    return spec if isinstance(spec, Nature) else nature_class(spec)(**params)
