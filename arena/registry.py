"""Name -> plugin class, with "did you mean" errors.

Plugins register themselves with :func:`register` when their module is imported.
The framework never imports a concrete plugin by name: :func:`load_plugins` imports
the modules declared under the ``arena.plugins`` entry-point group (this project's
``forecasters`` and ``adversaries`` packages, and any installed plugin package). A plugin
package's config folder is declared under ``arena.configs`` and reaches Hydra's search
path through the arena's search-path plugin (:func:`arena.config.use_search_path_plugin`).
"""

from __future__ import annotations

import importlib
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
