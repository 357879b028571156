"""The arena's config error and its "did you mean" suggestion (no project imports, so every module may use them).

Examples
--------
>>> unknown_name("forecaster", "k2", ["bit", "k29"])
"unknown forecaster 'k2'. Did you mean 'k29'? Available: bit, k29"
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class ConfigError(ValueError):
    """A config that cannot run; the message says what is wrong and how to fix it."""


def did_you_mean(name: object, options: Iterable[str]) -> str:
    """`` Did you mean 'x'?`` for the option closest to ``name``, or an empty string when none is close.

    Examples
    --------
    >>> did_you_mean("iid_bernouli", ["iid_bernoulli", "logistic"])
    " Did you mean 'iid_bernoulli'?"
    >>> did_you_mean("zzz", ["iid_bernoulli"])
    ''
    """
    close = difflib.get_close_matches(str(name), list(options), n=1, cutoff=0.5)
    return f" Did you mean {close[0]!r}?" if close else ""


def unknown_name(kind: str, name: object, options: Iterable[str]) -> str:
    """The message for an unknown name of a kind: the closest option and every option, in the order given."""
    options = list(options)
    return f"unknown {kind} {name!r}.{did_you_mean(name, options)} Available: {', '.join(options)}"


__all__ = ["ConfigError", "did_you_mean", "unknown_name"]
