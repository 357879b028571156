"""The rules of each game: forecast space, outcome space, per-round loss.

References
----------
Perdomo & Recht, §2-§8 (binary), §10 (quantile); SPEC §3.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

from arena.protocols import OutcomeLaw, ProtocolError


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

    def outcome_prob(self, law) -> float:
        """P(y = 1) under nature's law, recorded as ``y_prob`` (NaN in games where it means nothing)."""
        return 1.0 - law.cdf(0.0)

    #: Other games whose forecasters and natures also play this one (see :func:`plays`).
    accepts: ClassVar[tuple[str, ...]] = ()

    def present_context(self, nature, t: int, x):
        """The context the forecaster is shown in round t (default: nature's context as is; the
        experts game attaches the advice of second-guessing experts as a callable)."""
        return x

    def scored_context(self, nature, t: int, x, p: float):
        """The context recorded for the referee once the realized forecast p is drawn (default: x;
        the experts game records the advice second-guessing experts gave to p)."""
        return x


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


def plays(game: Game, plugin) -> bool:
    """Whether a forecaster or nature plays ``game``: it lists the game, or a game that ``game``
    accepts (every binary plugin plays the decision game).

    Examples
    --------
    >>> class P: games = ("binary",)
    >>> plays(get_game("binary"), P())
    True
    """
    games = tuple(getattr(plugin, "games", ()))
    return game.name in games or any(g in games for g in game.accepts)


@register_game
@dataclass(frozen=True)
class QuantileGame(Game):
    """Forecast the q-quantile of y in (ymin, ymax]: forecast p in [ymin, ymax] (a point or a
    two-point distribution), scored by the pinball loss rho_q(y - p) = (y - p)(q - 1{y < p}).

    Outcomes must satisfy ymin < y <= ymax strictly (SPEC §7: predicting ymin must
    guarantee y > p). A context may carry group ids: by convention a nature puts the
    one-hot indicators of its groups in the *last* ``group_dim`` coordinates of x_t and
    declares ``group_dim`` (see ``adversaries/quantile.py``); the referee then reports
    coverage per group.

    Examples
    --------
    >>> g = get_game("quantile", q=0.9, ymin=0.0, ymax=10.0)
    >>> g.forecast_low, g.forecast_high, g.loss(5.0, 7.0), round(g.loss(5.0, 3.0), 12)
    (0.0, 10.0, 1.8, 0.2)
    >>> get_game("quantile", q=1.5)
    Traceback (most recent call last):
    ...
    ValueError: quantile game: q=1.5 is outside (0, 1); give a quantile level strictly between 0 and 1, e.g. game.q=0.9

    References
    ----------
    Perdomo & Recht, §10; SPEC §3 and §7.
    """

    name: str = "quantile"
    forecast_low: float = field(init=False, default=-50.0)
    forecast_high: float = field(init=False, default=50.0)
    q: float = 0.9
    ymin: float = -50.0
    ymax: float = 50.0

    #: The arena records the announced atoms and nature's CDF at them (exact expected coverage).
    records_atoms: ClassVar[bool] = True

    def __post_init__(self):
        for key in ("q", "ymin", "ymax"):
            v = getattr(self, key)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise ValueError(f"quantile game: {key}={v!r} is not a finite number; set e.g. game.{key}="
                                 f"{ {'q': 0.9, 'ymin': -50.0, 'ymax': 50.0}[key]}")
        if not 0.0 < self.q < 1.0:
            raise ValueError(f"quantile game: q={self.q!r} is outside (0, 1); give a quantile level strictly "
                             "between 0 and 1, e.g. game.q=0.9")
        if not self.ymin < self.ymax:
            raise ValueError(f"quantile game: the outcome range (ymin, ymax] = ({self.ymin}, {self.ymax}] is empty; "
                             "give ymin < ymax, e.g. game.ymin=-50 game.ymax=50")
        for key in ("q", "ymin", "ymax"):
            object.__setattr__(self, key, float(getattr(self, key)))
        object.__setattr__(self, "forecast_low", self.ymin)
        object.__setattr__(self, "forecast_high", self.ymax)

    def check_outcome(self, y, who, t):
        try:
            y = float(y)
        except (TypeError, ValueError):
            raise ProtocolError(f"{who} returned outcome {y!r} at t={t}; the quantile game needs a number in "
                                f"({self.ymin}, {self.ymax}]") from None
        if not (self.ymin < y <= self.ymax):
            raise ProtocolError(f"{who} returned outcome {y!r} at t={t}, outside the quantile game's range "
                                f"(ymin, ymax] = ({self.ymin}, {self.ymax}] (ymin excluded); widen the range "
                                "(game.ymin, game.ymax) or fix the nature")
        return y

    def loss(self, p, y):
        u = y - p
        return u * (self.q - (1.0 if u < 0 else 0.0))

    def outcome_prob(self, law) -> float:
        return math.nan

    def law_at_atoms(self, answer, forecast, y: float) -> tuple[float, float, float, float]:
        """(F(lo), F(hi), L, expected pinball loss) of this round for the referee.

        ``answer`` is nature's law or its plain outcome (then a point mass at y: F is a step
        and L is recorded as NaN, "no law"); lo and hi are the announced atoms (equal for a
        point forecast). The expected loss averages over the two atoms and the law.
        """
        lo, hi = forecast.points[0], forecast.points[-1]
        w = forecast.probs[0] if len(forecast.points) == 2 else 1.0
        if isinstance(answer, OutcomeLaw):
            F_lo = float(answer.cdf(lo))
            F_hi = F_lo if hi == lo else float(answer.cdf(hi))
            lip = float(getattr(answer, "lipschitz", math.inf))
            pin = getattr(answer, "expected_pinball", None)
            if pin is None:
                loss = math.nan
            else:
                loss = pin(lo, self.q) if w == 1.0 else w * pin(lo, self.q) + (1 - w) * pin(hi, self.q)
            return F_lo, F_hi, lip, float(loss)
        return (float(y <= lo), float(y <= hi), math.nan,
                w * self.loss(lo, y) + (1 - w) * self.loss(hi, y))
