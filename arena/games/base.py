"""What every game is: the :class:`Game` interface, the game registry, and who plays what.

A game fixes the forecast space, the outcome space and the per-round loss; its scorer
(metrics, curves, certificates) lives in its own module of :mod:`arena.games`.

References
----------
Perdomo & Recht, §2-§10.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, ClassVar, NamedTuple


class GameScore(NamedTuple):
    """What a game's scorer returns to the referee."""

    #: Metric name -> value, for the result row.
    summary: dict[str, float]
    #: The curves: a DataFrame (t, metric, value) or its rows as tuples.
    curves: Any
    #: Certificate name -> a zero-argument function that scores that certificate on this run.
    scorable: dict[str, Callable[[], Any]]


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
    #: Whether the arena records every announced forecast's atoms and nature's CDF there
    #: (:meth:`law_at_atoms`), for exact expected metrics of two-point forecasts.
    records_atoms: ClassVar[bool] = False

    def present_context(self, nature, t: int, x):
        """The context the forecaster is shown in round t (default: nature's context as is; the
        experts game attaches the advice of second-guessing experts as a callable)."""
        return x

    def scored_context(self, nature, t: int, x, p: float):
        """The context recorded for the referee once the realized forecast p is drawn (default: x;
        the experts game records the advice second-guessing experts gave to p)."""
        return x

    def law_at_atoms(self, answer, forecast, y: float) -> tuple[float, float, float, float]:
        """(F(lo), F(hi), Lipschitz constant, expected loss) of a round at the announced atoms lo <= hi,
        from nature's answer (its law, or its plain outcome y): what the arena records when
        :attr:`records_atoms` is set."""
        raise NotImplementedError(f"game {self.name!r} records no atoms; set records_atoms only with law_at_atoms")

    def score(self, referee, rec, forecaster) -> GameScore:
        """The game's scorer: the summary metrics, the curves and the certificates it can score on this
        run, for :meth:`arena.referee.Referee.score`.

        ``referee`` carries the settings (M, ece_bins, oi_kernel, n_checkpoints); ``rec`` is the
        recorded game, ``forecaster`` the player (its ``claims`` and kernel)."""
        raise NotImplementedError(f"game {self.name!r} has no scorer; define {type(self).__name__}.score")

    #: Certificate name -> function(run, referee) -> Certificate: the certificates this game's scorer
    #: can check (:func:`arena.games.certificates` lists those of every game).
    certificates: ClassVar[dict] = {}
    #: Metric name -> one-line description, for every metric the scorer writes into a result row
    #: (``arena-list metrics``; names ending in ``<j>`` stand for one column per expert or group).
    metric_descriptions: ClassVar[dict] = {}
    #: Certificate name -> one-line description, for the certificates this game adds.
    certificate_descriptions: ClassVar[dict] = {}


#: Game name -> Game class; a game's parameters (a quantile level, an outcome range, ...)
#: are its dataclass fields, given in ``conf/game/<name>.yaml``.
GAMES: dict[str, type[Game]] = {}


def register_game(cls: type[Game]) -> type[Game]:
    """Class decorator: make a Game subclass available under its default ``name``."""
    GAMES[cls.name] = cls  # type: ignore[misc]  # a dataclass field: its default is the class attribute
    return cls


def get_game(name: str | Game, **params) -> Game:
    """A game instance from its name and parameters.

    ``params`` may hold the ``_target_`` of the game's config (``conf/game/<name>.yaml``): it
    must then name the class registered under ``name``.

    Examples
    --------
    >>> get_game("binary").forecast_high
    1.0
    >>> get_game("binary", _target_="arena.games.quantile.QuantileGame")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: game 'binary': _target_='arena.games.quantile.QuantileGame' is not the class of that game; ...
    """
    if isinstance(name, Game):
        return name
    target = params.pop("_target_", None)
    try:
        cls = GAMES[name]
    except KeyError:
        raise ValueError(f"unknown game {name!r}; available: {', '.join(sorted(GAMES))}") from None
    path = f"{cls.__module__}.{cls.__qualname__}"
    if target is not None and target != path:
        raise ValueError(f"game {name!r}: _target_={target!r} is not the class of that game; give _target_: {path}")
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


def bind(certificates: dict, run, referee) -> dict[str, Callable[[], Any]]:
    """Certificate name -> a zero-argument function scoring it on ``run`` (what a game's scorer returns)."""
    return {name: partial(fn, run, referee) for name, fn in certificates.items()}
