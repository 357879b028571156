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
    the attribute on this object (later accesses are plain attribute reads). With ``keep=False``
    every access reads the module's attribute again (what a test that patches the module needs)."""

    def __init__(self, name: str, keep: bool = True):
        self._name, self._keep = name, keep

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        value = getattr(importlib.import_module(self._name), attr)
        if self._keep:
            setattr(self, attr, value)
        return value


__all__ = ["LazyModule"]
