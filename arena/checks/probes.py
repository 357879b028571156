"""The probe players the checks pit a plugin against: natures for forecasters, forecasters for natures (placed
inside the game's forecast space), and the default opponents of each kind."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from arena.checks.play import NotApplicable
from arena.games import GAMES, Game, plays
from arena.protocols import EMPTY_CONTEXT, Bernoulli, Forecast, Forecaster, GroupNature, Nature
from arena.registry import NATURES, load_plugins


class ScriptedNature(GroupNature):
    """An oblivious nature that replays ``outcomes`` (and ``contexts``, one row per round).

    Without ``contexts`` it draws ``context_dim`` normal numbers per round from its own
    stream, whatever the outcomes, so two scripts played with the same seed show the same
    contexts. ``games`` and ``group_dim`` let it stand in for a nature of another game.
    """

    name = "probe_scripted"

    def __init__(
        self,
        outcomes: Sequence[float],
        contexts=None,
        context_dim: int = 0,
        games: Sequence[str] = ("binary",),
        group_dim: int = 0,
    ):
        self.outcomes = tuple(float(v) for v in outcomes)
        self.contexts = None if contexts is None else np.asarray(contexts, dtype=np.float64).reshape(len(outcomes), -1)
        self.context_dim = int(context_dim) if self.contexts is None else self.contexts.shape[1]
        self.games, self.group_dim, self.length = tuple(games), int(group_dim), len(self.outcomes)

    def context(self, t):
        if self.contexts is not None:
            return self.contexts[t - 1].copy()
        return self.rng.standard_normal(self.context_dim) if self.context_dim else EMPTY_CONTEXT

    def respond(self, t, x, forecast):
        return self.outcomes[t - 1]


class CoinProbe(Nature):
    """I.i.d. Bernoulli(``p``) outcomes, returned as a law."""

    name = "probe_coin"

    def __init__(self, p: float = 0.3):
        self.p = float(p)

    def respond(self, t, x, forecast):
        return Bernoulli(self.p)


class LogisticProbe(Nature):
    """Contexts (1, z) with z ~ N(0, I_2), outcomes Bernoulli(sigmoid(<w, x>)) as a law."""

    name = "probe_logistic"
    context_dim = 3

    def context(self, t):
        return np.concatenate(([1.0], np.clip(self.rng.standard_normal(2), -2.0, 2.0)))

    def respond(self, t, x, forecast):
        return Bernoulli(1.0 / (1.0 + math.exp(-(0.3 + 1.5 * x[1] - x[2]))))


class ContrarianProbe(Nature):
    """Adaptive: y_t = 1 if the announced forecast's mean is below 1/2, else 0."""

    name = "probe_contrarian"
    adaptive = True

    def respond(self, t, x, forecast):
        return 1.0 if forecast.mean < 0.5 else 0.0


class _EveryGame:
    """``games`` of the probe forecasters: every registered game, read when asked (a game module
    imported later counts too)."""

    def __get__(self, obj, cls=None) -> tuple[str, ...]:
        return tuple(GAMES)


class _SpaceProbe(Forecaster):
    """A probe forecaster that places its forecasts in the forecast space of the game it plays
    (it plays every game the arena knows)."""

    games = _EveryGame()

    def _space(self) -> tuple[float, float]:
        game = getattr(self, "game", None)  # set by the arena before reset
        return (float(game.forecast_low), float(game.forecast_high)) if game is not None else (0.0, 1.0)

    def update(self, x, p, y):
        pass


class ConstantProbe(_SpaceProbe):
    """Always the point at fraction ``c`` of the forecast space (``c`` itself in [0, 1])."""

    name = "probe_constant"

    def __init__(self, c: float = 0.5):
        self.c = float(c)

    def predict(self, x):
        lo, hi = self._space()
        return lo + self.c * (hi - lo)


class MeanProbe(_SpaceProbe):
    """The mean of the past outcomes and the middle of the forecast space, clipped to the space
    (Laplace's rule in the binary game)."""

    name = "probe_mean"

    def reset(self, rng):
        super().reset(rng)
        self._sum, self._n = 0.0, 0

    def predict(self, x):
        lo, hi = self._space()
        return min(max((0.5 * (lo + hi) + self._sum) / (1 + self._n), lo), hi)

    def update(self, x, p, y):
        self._sum += y
        self._n += 1


class RandomizedProbe(_SpaceProbe):
    """Two-point forecasts drawn from its own stream (exercises the forecast coin)."""

    name = "probe_randomized"

    def predict(self, x):
        lo, hi = self._space()
        a = lo + float(self.rng.uniform(0.0, 0.5)) * (hi - lo)
        return Forecast.two_point(a, a + 0.5 * (hi - lo), float(self.rng.uniform(0.1, 0.9)))


def binary_natures_play(game: Game) -> bool:
    return plays(game, CoinProbe)


def registered_natures(game: Game) -> list[Nature]:
    """The registered natures of ``game`` that build with their default parameters."""
    load_plugins()
    out = []
    for name in sorted(NATURES):
        cls = NATURES[name]
        if not plays(game, cls):
            continue
        try:
            out.append(cls())
        except Exception:  # noqa: BLE001, S112 (a nature that needs parameters, e.g. a file to replay)
            continue
    return out


def default_natures(game: Game, few: bool = False) -> list[Nature]:
    """The opponents of a forecaster: the probes in games with binary natures, else up to four
    registered natures of the game (the adaptive ones first). ``few``: two of them, for the checks
    that play three games per opponent."""
    if binary_natures_play(game):
        if few:
            return [LogisticProbe(), ContrarianProbe()]
        bits = np.random.default_rng(12345).integers(0, 2, 10_000).astype(float)
        return [CoinProbe(0.3), LogisticProbe(), ContrarianProbe(), ScriptedNature(bits, context_dim=2)]
    natures = sorted(registered_natures(game), key=lambda n: not n.adaptive)  # stable: by name within
    if not natures:
        raise NotApplicable(
            f"no registered nature of the {game.name!r} game builds with default parameters; pass natures=[...]"
        )
    return natures[: 2 if few else 4]


def default_forecasters(few: bool = False) -> list[Forecaster]:
    return [MeanProbe(), RandomizedProbe()] if few else [ConstantProbe(0.5), MeanProbe(), RandomizedProbe()]
