"""The arena's config error and its "did you mean" suggestion (no project imports, so every module may use them).

Examples
--------
>>> unknown_name("forecaster", "k2", ["bit", "k29"])
"unknown forecaster 'k2'. Did you mean 'k29'? Available: bit, k29"
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable


class ConfigError(ValueError):
    """A config that cannot run; the message says what is wrong and how to fix it."""


#: Characters a terminal acts on instead of showing: C0 and C1 controls (ESC starts ANSI and OSC sequences)
#: and the bidirectional overrides that reorder what is shown.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def printable(text: object) -> str:
    r"""``text`` as the terminal may show it: every control character escaped (a label with an ANSI or OSC
    escape, or a line break, from a config or a results directory is shown, not obeyed).

    >>> print(printable("k29\x1b]0;owned\x07"))
    k29\x1b]0;owned\x07
    """
    return _CONTROL.sub(lambda m: m[0].encode("unicode_escape").decode("ascii"), str(text))


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


__all__ = ["ConfigError", "did_you_mean", "printable", "unknown_name"]
