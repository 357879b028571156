"""``arena-list``: every game, forecaster, nature, metric, certificate and tournament, each with a
one-line description and its parameters, the user's own plugins included.

The options are those ``arena`` accepts: the configs on Hydra's search path (the arena's
``conf/``, the config folders of installed plugin packages declared under the
``arena.configs`` entry point, and ``hydra.searchpath=[...]`` given as to ``arena``), plus
the classes registered by the ``arena.plugins`` modules that have no config (usable from
Python). A forecaster's or nature's description is its YAML header comment, else the first
sentence of its class docstring; its parameters are the constructor's, with the values the
YAML sets. Metrics and certificates come from :mod:`arena.metrics`' catalogue.

Examples
--------
>>> cat = catalogue(["natures", "games"])
>>> nature = next(e for e in cat["natures"] if e["name"] == "iid_bernoulli")
>>> nature["params"], nature["games"], nature["source"]
({'p': 0.3}, ['binary'], 'arena')
>>> [e["name"] for e in cat["games"]]
['binary', 'decision', 'experts', 'quantile']
"""

from __future__ import annotations

import importlib.resources
import inspect
import json
import os
import re
import sys
import textwrap
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from arena.errors import unknown_name

SECTIONS = ("games", "forecasters", "natures", "metrics", "certificates", "tournaments")
USAGE = (
    "usage: arena-list [games|forecasters|natures|metrics|certificates|tournaments ...] "
    "[hydra.searchpath=[file:///abs/dir,pkg://package]] [--json]"
)
#: Config group of each section listed from Hydra's search path.
_GROUPS = {"games": "game", "forecasters": "forecaster", "natures": "nature", "tournaments": "tournament"}


class ListError(ValueError):
    """A bad ``arena-list`` argument; the message says what is expected."""


# ----------------------------------------------------------------------------- descriptions

#: Words whose final period does not end a sentence.
_ABBREVIATIONS = {
    "e.g.",
    "i.e.",
    "i.i.d.",
    "cf.",
    "vs.",
    "etc.",
    "w.p.",
    "resp.",
    "approx.",
    "Alg.",
    "Prop.",
    "Thm.",
    "Eq.",
    "Fig.",
    "Sec.",
    "al.",
}


def first_sentence(text: str | None) -> str:
    """The first sentence of the first paragraph of ``text``, on one line.

    Examples
    --------
    >>> first_sentence("Always the same forecast ``c``.\\n\\n    Examples ...")
    'Always the same forecast ``c``.'
    >>> first_sentence("Two coins taking turns, e.g. p then q. Every `period` rounds.")
    'Two coins taking turns, e.g. p then q.'
    """
    paragraph = inspect.cleandoc(text or "").split("\n\n")[0]
    paragraph = " ".join(re.sub(r"(\w-)\n\s*(?=[a-z])", r"\1", paragraph).split())  # online-\nconformal
    for end in re.finditer(r"[.!?](?=\s)", paragraph):
        if paragraph[: end.end()].rsplit(None, 1)[-1].lstrip("(") not in _ABBREVIATIONS:
            return paragraph[: end.end()]
    return paragraph


def header_comment(text: str) -> str:
    """The first sentence of a YAML file's leading comment (``# @package`` lines skipped).

    Examples
    --------
    >>> header_comment("# @package _global_\\n# The quick run. Two lines.\\nname: quick\\n# not this")
    'The quick run.'
    """
    lines = []
    for line in text.splitlines():
        if not line.strip():
            continue
        if not line.lstrip().startswith("#"):
            break
        comment = line.lstrip()[1:].strip()
        if not comment.startswith("@package"):
            lines.append(comment)
    return first_sentence("\n".join(lines))


def _signature_params(cls) -> dict[str, Any]:
    """Constructor parameters and defaults (``???``: required)."""
    try:
        params = inspect.signature(cls.__init__).parameters.values()
    except (TypeError, ValueError):
        return {}
    skip = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    return {
        p.name: "???" if p.default is inspect.Parameter.empty else p.default
        for i, p in enumerate(params)
        if i > 0 and p.kind not in skip
    }


def _plain(value: Any) -> Any:
    """A JSON-friendly copy of a parameter value (tuples as lists, other objects as their repr)."""
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


# ---------------------------------------------------------------------------- config options


def _raw_text(result_path: str, config_path: str) -> str:
    """The text of ``<group>/<name>.yaml`` in the folder Hydra loaded it from (file:// or pkg://)."""
    scheme, _, where = result_path.partition("://")
    try:
        if scheme == "file":
            return (Path(where) / f"{config_path}.yaml").read_text(encoding="utf-8")
        if scheme == "pkg":
            return importlib.resources.files(where).joinpath(f"{config_path}.yaml").read_text(encoding="utf-8")
    except (OSError, ModuleNotFoundError):
        pass
    return ""


def _source(result) -> str:
    """'arena' for the arena's own configs, else the folder (and who declared it)."""
    if result.provider == "main":
        return "arena"
    if result.provider.startswith("hydra.searchpath"):
        return result.path
    return f"{result.path} ({result.provider})"


def _config_options(repo, group: str) -> list[tuple[str, Any, str, str]]:
    """(name, config, header comment, source) of every option of ``group`` on the search path; a
    config's ``override /game: <name>`` default is kept as its ``game`` (tournaments set the game so)."""
    out = []
    for name in sorted(repo.get_group_options(group)):
        result = repo.load_config(f"{group}/{name}")
        if result is None:  # pragma: no cover (listed, so loadable)
            continue
        cfg = result.config
        for default in result.defaults_list or ():
            if getattr(default, "group", None) == "/game" and getattr(default, "override", False):
                cfg = OmegaConf.merge(cfg, {"game": default.value})
        out.append((name, cfg, header_comment(_raw_text(result.path, f"{group}/{name}")), _source(result)))
    return out


def _plugin_entry(kind: str, name: str, cfg, header: str, source: str) -> tuple[dict, type | None]:
    """One forecaster or nature option, and its class (None when it cannot be imported)."""
    from hydra.utils import get_class

    values = OmegaConf.to_container(cfg, resolve=False)
    target = values.pop("_target_", None)
    entry = {"name": name, "description": header, "params": _plain(values), "source": source, "target": target}
    try:
        cls = get_class(target) if target else None
    except Exception as exc:  # noqa: BLE001 (a user's module that does not import: say so, list the rest)
        cause = exc.__cause__ or exc
        entry["error"] = f"cannot import {target}: {type(cause).__name__}: {cause}"
        return entry, None
    if cls is None:
        entry["error"] = f"the config has no _target_; give {kind}/{name}.yaml a `_target_: module.Class`"
        return entry, None
    entry["params"] = _plain({**_signature_params(cls), **values})
    entry["description"] = header or first_sentence(cls.__doc__)
    for attr in ("games", "claims") if kind == "forecaster" else ("games", "adaptive"):
        entry[attr] = _metadata(cls, values, attr)
    return entry, cls


def _metadata(cls, values: dict, attr: str) -> Any:
    """A class attribute (``games``, ``claims``, ``adaptive``); one that the parameters decide (a
    property) is read from an instance built with the config's values (constructors only store them)."""
    value = getattr(cls, attr, None)
    if isinstance(value, property):
        try:
            value = getattr(cls(**values), attr)
        except Exception:  # noqa: BLE001 (a required parameter the config leaves to the user)
            return "depends on the parameters"
    return bool(value) if attr == "adaptive" else list(value or ())


def _plugins(kind: str, options: list) -> list[dict]:
    from arena.registry import FORECASTERS, NATURES

    entries, classes = [], set()
    for option in options:
        entry, cls = _plugin_entry(kind, *option)
        entries.append(entry)
        classes.add(cls)
    table = FORECASTERS if kind == "forecaster" else NATURES
    for name, cls in sorted(table.items()):
        if cls not in classes:  # registered by a plugin module, no config: usable from Python
            entry, _ = _plugin_entry(
                kind,
                name,
                OmegaConf.create({"_target_": f"{cls.__module__}.{cls.__qualname__}"}),
                "",
                f"{cls.__module__} (registered; no config: Python only)",
            )
            entries.append(entry)
    return entries


def _games(options: list) -> list[dict]:
    import dataclasses

    from arena.games import GAMES, Game

    space = {f.name for f in dataclasses.fields(Game)}  # the name and forecast range: not parameters
    entries, named = [], set()
    for name, cfg, header, source in options:
        values = OmegaConf.to_container(cfg, resolve=False)
        values.pop("_target_", None)
        game = str(values.pop("name", name))
        cls = GAMES.get(game)
        fields = (
            {}
            if cls is None
            else {f.name: f.default for f in dataclasses.fields(cls) if f.init and f.name not in space}
        )
        entries.append(
            {
                "name": name,
                "description": header or first_sentence(getattr(cls, "__doc__", "")),
                "params": _plain({**fields, **values}),
                "source": source,
            }
        )
        named.add(game)
    for game, cls in sorted(GAMES.items()):
        if game not in named:
            entries.append(
                {
                    "name": game,
                    "description": first_sentence(cls.__doc__),
                    "params": {},
                    "source": f"{cls.__module__} (registered; no config: Python only)",
                }
            )
    return entries


def _tournaments(options: list) -> list[dict]:
    entries = []
    for name, cfg, header, source in options:
        values = OmegaConf.to_container(cfg, resolve=False)
        t = values.get("tournament") or {}
        params = {k: t[k] for k in ("forecasters", "natures", "seeds", "T", "shards") if k in t}
        if t and isinstance(values.get("game"), str):
            params["game"] = values["game"]
        entries.append({"name": name, "description": header, "params": _plain(params), "source": source})
    return entries


def _metrics() -> list[dict]:
    from arena.games import METRICS

    games: dict[str, list[str]] = {}
    descriptions: dict[str, str] = {}
    for game, table in METRICS.items():
        for metric, description in table.items():
            games.setdefault(metric, []).append(game)
            descriptions.setdefault(metric, description)
    return [{"name": m, "description": descriptions[m], "games": games[m]} for m in games]


def _certificates(forecasters: list[dict]) -> list[dict]:
    from arena.games import CERTIFICATE_DESCRIPTIONS
    from arena.referee import CERTIFICATES

    return [
        {
            "name": name,
            "description": CERTIFICATE_DESCRIPTIONS.get(name, first_sentence(fn.__doc__)),
            "claimed_by": [f["name"] for f in forecasters if name in (f.get("claims") or ())],
        }
        for name, fn in sorted(CERTIFICATES.items())
    ]


def catalogue(sections=SECTIONS, overrides=()) -> dict[str, list[dict]]:
    """Section -> entries (dicts with name, description, params, ...), as ``arena-list --json`` prints.

    ``overrides`` may hold a ``hydra.searchpath=[...]`` override (Hydra's syntax), as for ``arena``.
    Raises :class:`ListError` when a search-path folder cannot be read.
    """
    from hydra.core.global_hydra import GlobalHydra

    import arena.referee  # noqa: F401  (the games and certificates of every metric module)
    from arena.config import hydra_session, search_path_problem

    with hydra_session(list(overrides)):
        if problem := search_path_problem():
            raise ListError(problem)
        repo = GlobalHydra.instance().config_loader().repository
        needed = {*sections, "forecasters"} if "certificates" in sections else set(sections)
        options = {s: _config_options(repo, g) for s, g in _GROUPS.items() if s in needed}
    forecasters = _plugins("forecaster", options["forecasters"]) if "forecasters" in options else []
    build = {
        "games": lambda: _games(options["games"]),
        "forecasters": lambda: forecasters,
        "natures": lambda: _plugins("nature", options["natures"]),
        "metrics": _metrics,
        "certificates": lambda: _certificates(forecasters),
        "tournaments": lambda: _tournaments(options["tournaments"]),
    }
    return {section: build[section]() for section in SECTIONS if section in sections}


# ------------------------------------------------------------------------------------ text


def _value(v: Any) -> str:
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):  # a tournament entry {name, label, params, grid}: its label
        return str(v.get("label", v.get("name", v)))
    return str(v)


def _details(section: str, entry: dict) -> list[str]:
    lines = []
    if entry.get("params"):
        lines.append(" ".join(f"{k}={_value(v)}" for k, v in entry["params"].items()))
    tags = []
    if entry.get("games") and section != "metrics":
        tags.append("plays " + _value(entry["games"]).strip("[]"))
    if entry.get("claims"):
        tags.append("claims " + _value(entry["claims"]).strip("[]"))
    if entry.get("adaptive"):
        tags.append("adaptive")
    if section == "metrics":
        tags.append("games: " + ", ".join(entry["games"]))
    if entry.get("claimed_by"):
        tags.append("claimed by " + ", ".join(entry["claimed_by"]))
    if tags:
        lines.append("; ".join(tags))
    if entry.get("source", "arena") != "arena":
        lines.append(f"from {entry['source']}")
    if entry.get("error"):
        lines.append(f"error: {entry['error']}")
    return lines


def format_text(cat: dict[str, list[dict]]) -> str:
    """The listing as text: a block per section, one entry per line, its details indented below."""
    blocks = []
    for section, entries in cat.items():
        width = max((len(e["name"]) for e in entries), default=0) + 2
        lines = [f"{section} ({len(entries)})"]
        indent = " " * (2 + width)
        for e in entries:
            lines.append(f"  {e['name']:<{width}}{e['description']}".rstrip())
            lines += [
                textwrap.fill(
                    d,
                    118,
                    initial_indent=indent,
                    subsequent_indent=indent + "  ",
                    break_long_words=False,
                    break_on_hyphens=False,
                )
                for d in _details(section, e)
            ]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _parse(argv: list[str]) -> tuple[list[str], list[str], bool]:
    sections, overrides, as_json = [], [], False
    for arg in argv:
        if arg == "--json":
            as_json = True
        elif arg.startswith("hydra.searchpath="):
            overrides.append(arg)
        elif "=" in arg or arg.startswith("-"):
            raise ListError(
                f"unknown argument {arg!r}; arena-list takes section names, hydra.searchpath=[...] and --json"
            )
        else:
            section = arg if arg in SECTIONS else arg + "s" if arg + "s" in SECTIONS else None
            if section is None:
                raise ListError(unknown_name("section", arg, SECTIONS))
            sections.append(section)
    return sections or list(SECTIONS), overrides, as_json


def main(argv: list[str] | None = None) -> None:
    """``arena-list [SECTION ...] [hydra.searchpath=[...]] [--json]``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if {"-h", "--help"} & set(argv):
        print(USAGE)
        print(__doc__.split("\n\n")[1])
        return
    if "--version" in argv:
        from arena import __version__

        print(f"arena-list {__version__}")
        return
    if os.getcwd() not in sys.path:  # a user's module beside their config folder, as for `arena`
        sys.path.append(os.getcwd())
    try:
        sections, overrides, as_json = _parse(argv)
        cat = catalogue(sections, overrides)
    except ListError as exc:
        print(f"arena-list: error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    print(json.dumps(cat, indent=1) if as_json else format_text(cat))
