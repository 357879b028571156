"""A module imported at the first use of one of its attributes.

Importing scipy.special costs about as much as pandas; the CLI, every tournament worker and
``arena-list`` would pay it at startup for functions only some games call.

Examples
--------
>>> special = LazyModule("scipy.special")
>>> float(special.expit(0.0))
0.5
"""

from __future__ import annotations

import importlib
from typing import Any


class LazyModule:
    """Stands for the module ``name``; the first access of an attribute imports the module and keeps
    the attribute on this object (later accesses are plain attribute reads)."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        value = getattr(importlib.import_module(self._name), attr)
        setattr(self, attr, value)
        return value


__all__ = ["LazyModule"]
