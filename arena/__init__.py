"""Defensive Forecasting Arena: forecasters against natures under a referee.

``import arena`` is light: the names below are loaded on first use (PEP 562), so a process
that only reads results or draws figures never loads the game engine, numba or Gymnasium.

>>> import arena
>>> r = arena.play("binary", "bit", "anti_forecaster", T=50, seed=0)
>>> r.certificates["bit"].holds
True
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # what type checkers and IDEs see; at run time, module __getattr__ below
    from arena.games import get_game
    from arena.protocols import Bernoulli, Forecast, Forecaster, Nature, OutcomeLaw, ProtocolError
    from arena.registry import register
    from arena.runner import Result, play

#: Where each lazily re-exported name lives.
_EXPORTS = {
    "play": "arena.runner",
    "Result": "arena.runner",
    "Forecast": "arena.protocols",
    "Forecaster": "arena.protocols",
    "Nature": "arena.protocols",
    "OutcomeLaw": "arena.protocols",
    "Bernoulli": "arena.protocols",
    "ProtocolError": "arena.protocols",
    "register": "arena.registry",
    "get_game": "arena.games",
}
__all__ = [
    "play",
    "Result",
    "Forecast",
    "Forecaster",
    "Nature",
    "OutcomeLaw",
    "Bernoulli",
    "ProtocolError",
    "register",
    "get_game",
    "__version__",
]


def __getattr__(name: str):
    if name == "__version__":
        # importlib.metadata costs about as much as the rest of ``import arena``: read on first use
        from importlib.metadata import PackageNotFoundError, version

        try:
            value = version("defensive-forecasting-arena")
        except PackageNotFoundError:  # running from a source tree that was not installed
            value = "0.1.0+src"
    elif name in _EXPORTS:
        from importlib import import_module

        value = getattr(import_module(_EXPORTS[name]), name)
    else:
        raise AttributeError(f"module 'arena' has no attribute {name!r}")
    globals()[name] = value  # once: later lookups do not come here
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
