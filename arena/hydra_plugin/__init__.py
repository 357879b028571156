"""Hydra search-path plugin of the arena: the config folders of installed plugin packages.

Installed as ``hydra_plugins.arena_searchpath`` (Hydra imports every module of the
``hydra_plugins`` namespace package and uses the plugins it finds there). When the app being
configured is the arena (its primary config folder is ``pkg://arena.conf``), the plugin
appends the config folder that each installed distribution declares under the
``arena.configs`` entry-point group, so that a plugin package ships no Hydra code::

    [project.entry-points."arena.plugins"]
    my_pkg = "my_pkg.natures"      # imported by the arena: registers the classes
    [project.entry-points."arena.configs"]
    my_pkg = "my_pkg.conf"         # a package (with an __init__.py) holding nature/, tournament/, ...

A value with a scheme (``pkg://my_pkg.conf``, ``file:///abs/path``) is used as it is. The
folders come after the arena's own, so a plugin adds options to the groups but cannot
replace a built-in option of the same name. Other Hydra apps are left alone.

The arena's commands also hand it the folders of their ``hydra.searchpath=[...]`` override
(:attr:`ArenaSearchPathPlugin.command_line`). Hydra adds those only to the copy of the
repository it composes a config from; on the search path itself they are seen as well by
the code that loads options by name while a run goes on (a tournament's forecasters and
natures, in every job, callback and launcher worker).

The module imports nothing but Hydra and :mod:`importlib.metadata`: Hydra imports it in
every Hydra app of the environment.

References
----------
Hydra, "Config Search Path" and "SearchPathPlugin" (hydra.cc/docs/advanced/search_path).
"""

from __future__ import annotations

from importlib.metadata import entry_points

from hydra.core.config_search_path import ConfigSearchPath
from hydra.plugins.search_path_plugin import SearchPathPlugin

#: The arena's own config folder, as Hydra's search path names it.
ARENA_CONF = "pkg://arena.conf"
#: Entry-point group of the config folders of installed plugin packages.
CONFIGS_GROUP = "arena.configs"


def declared_config_paths() -> list[tuple[str, str]]:
    """(provider, path) of every config folder declared under ``arena.configs``.

    The provider names the entry point (``arena.configs:<name>``), which Hydra shows in
    ``arena --info searchpath`` and ``arena-list`` shows beside the options it adds.
    """
    out = []
    for ep in sorted(entry_points(group=CONFIGS_GROUP), key=lambda ep: ep.name):
        value = ep.value.strip()
        out.append((f"{CONFIGS_GROUP}:{ep.name}", value if "://" in value else f"pkg://{value}"))
    return out


class ArenaSearchPathPlugin(SearchPathPlugin):
    """Appends the ``arena.configs`` folders, then the command line's, to the arena's search path."""

    #: The folders of the running command's ``hydra.searchpath`` (set by the arena's commands).
    command_line: tuple[str, ...] = ()

    def manipulate_search_path(self, search_path: ConfigSearchPath) -> None:
        paths = [element.path for element in search_path.get_path()]
        if ARENA_CONF not in paths:
            return  # another Hydra app
        extra = [*declared_config_paths(), *(("hydra.searchpath in command-line", p) for p in self.command_line)]
        for provider, path in extra:
            if path not in paths:  # registered twice (see arena.config.use_search_path_plugin)
                search_path.append(provider=provider, path=path)
                paths.append(path)
