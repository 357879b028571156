"""The rules of each game: forecast space, outcome space, per-round loss.

References
----------
Perdomo & Recht, §2-§8 (binary); SPEC §3.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from arena.protocols import ProtocolError


@dataclass(frozen=True)
class Game:
    """A sequential prediction game. Subclasses fix the spaces and the loss."""

    name: str
    forecast_low: float
    forecast_high: float

    def check_outcome(self, y: float, who: str, t: int) -> float:
        raise NotImplementedError

    def loss(self, p: float, y: float) -> float:
        raise NotImplementedError


@dataclass(frozen=True)
class BinaryGame(Game):
    """Forecast p in [0, 1], outcome y in {0, 1}, scored by the squared loss (Brier)."""

    name: str = "binary"
    forecast_low: float = 0.0
    forecast_high: float = 1.0

    def check_outcome(self, y, who, t):
        try:
            y = float(y)
        except (TypeError, ValueError):
            raise ProtocolError(f"{who} returned outcome {y!r} at t={t}; the binary game needs 0 or 1") from None
        if y != 0.0 and y != 1.0:
            raise ProtocolError(f"{who} returned outcome {y!r} at t={t}; the binary game needs 0 or 1"
                                + (" (NaN)" if math.isnan(y) else ""))
        return y

    def loss(self, p, y):
        return (p - y) ** 2


#: Game name -> Game class; a game's parameters (a quantile level, an outcome range, ...)
#: are its dataclass fields, given in ``conf/game/<name>.yaml``.
GAMES: dict[str, type[Game]] = {"binary": BinaryGame}


def register_game(cls: type[Game]) -> type[Game]:
    """Class decorator: make a Game subclass available under its default ``name``."""
    GAMES[cls.name] = cls
    return cls


def get_game(name: str | Game, **params) -> Game:
    """A game instance from its name and parameters.

    Examples
    --------
    >>> get_game("binary").forecast_high
    1.0
    """
    if isinstance(name, Game):
        return name
    try:
        cls = GAMES[name]
    except KeyError:
        raise ValueError(f"unknown game {name!r}; available: {', '.join(sorted(GAMES))}") from None
    try:
        return cls(**params)
    except TypeError as exc:
        raise ValueError(f"game {name!r}: {exc}") from None
