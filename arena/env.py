"""The games as Gymnasium environments: the forecaster is the agent, nature sits inside.

``reset(seed)`` returns the first context; ``step(forecast)`` takes a float or an
:class:`arena.Forecast`, lets nature answer, draws the realized forecast and the
outcome from independent streams derived from the seed, and returns the next context,
the reward (minus the game's loss), ``terminated`` at T, and ``info`` with the outcome
and the realized forecast. The environment records every step in a
:class:`Recorder` that the referee scores.

Examples
--------
>>> import gymnasium as gym, arena.env
>>> env = gym.make("arena/Binary-v0", nature="iid_bernoulli", T=3)
>>> x, info = env.reset(seed=0)
>>> x, r, terminated, truncated, info = env.step(0.3)
>>> sorted(info)
['forecast', 'p', 't', 'y']
"""

from __future__ import annotations

import math
from typing import NamedTuple

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from arena.games import Game
from arena.matchup import Matchup, build_matchup, check_length
from arena.protocols import Forecast, GroupNature, Nature, ProtocolError
from arena.rules import CALLS, announce, draw_outcome, realize
from arena.seeding import nature_streams

_FLOAT64 = np.dtype(np.float64)
_ATOM_FIELDS = ("atoms", "prob_lo", "cdf_at_atoms", "law_lip", "expected_loss")


def _all_finite(x: np.ndarray) -> bool:
    """Whether every entry of the 1-d array ``x`` is finite (plain Python is quicker on short contexts)."""
    if x.size > 64:
        return bool(np.isfinite(x).all())
    v = x.tolist()
    return math.isfinite(sum(v)) or all(map(math.isfinite, v))  # a finite sum has finite terms (else: overflow?)


class Streams(NamedTuple):
    """The random streams of a game, derived from its seed and nature's name (:func:`arena.seeding.nature_streams`):
    the outcome coin, and the forecast coin's T uniforms, one a round, drawn at once (that stream serves nothing
    else: the same numbers as one draw a round); nature's own stream is nature's."""

    outcome: np.random.Generator
    forecast: np.ndarray


class Recorder:
    """Preallocated per-step arrays of one game (bounded memory: no Python objects per step
    unless ``keep_forecasts``)."""

    def __init__(self, T: int, d: int, keep_forecasts: bool = False, atoms: bool = False, group_dim: int = 0):
        self.T, self.n = T, 0
        self.X = np.zeros((T, d))
        self.p_mean = np.zeros(T)  # mean of the announced distribution
        self.p = np.zeros(T)  # realized forecast
        self.p_internal = np.zeros(T)  # the forecast the forecaster's guarantee is about
        self.y = np.zeros(T)
        self.y_prob = np.full(T, np.nan)  # P(y = 1) when nature exposed its law
        self.forecasts: list[Forecast] | None = [] if keep_forecasts else None
        # Games with two-point forecasts (quantile; ``atoms=True``): the announced atoms lo <= hi
        # (equal for a point), P(lo), nature's CDF at both atoms, its Lipschitz constant (NaN when
        # nature answered a plain outcome) and the expected loss: what the referee needs for exact
        # expected coverage and the per-round certificate. None in other games.
        self.atoms = np.zeros((T, 2)) if atoms else None
        self.prob_lo = np.ones(T) if atoms else None
        self.cdf_at_atoms = np.full((T, 2), np.nan) if atoms else None
        self.law_lip = np.full(T, np.nan) if atoms else None
        self.expected_loss = np.full(T, np.nan) if atoms else None
        #: The last ``group_dim`` context coordinates are group indicators (nature's ``group_dim``).
        self.group_dim = int(group_dim)

    def record(self, x, f: Forecast, p: float, y: float, y_prob: float, law_info: tuple | None = None) -> None:
        i = self.n
        if self.X.shape[1]:
            self.X[i] = x
        self.p_mean[i] = f.mean
        self.p[i] = p
        self.p_internal[i] = p if f.internal is None else f.internal
        self.y[i] = y
        self.y_prob[i] = y_prob
        if self.atoms is not None:
            self.atoms[i] = (f.points[0], f.points[-1])
            self.prob_lo[i] = f.probs[0] if len(f.points) == 2 else 1.0
            if law_info is not None:
                self.cdf_at_atoms[i] = law_info[:2]
                self.law_lip[i], self.expected_loss[i] = law_info[2], law_info[3]
        if self.forecasts is not None:
            self.forecasts.append(f)
        self.n += 1

    def fill(self, columns: dict[str, np.ndarray]) -> None:
        """Every round at once: ``columns`` maps X, p_mean, p, p_internal, y and y_prob to arrays of T rows.

        The recorder takes the arrays (a copy would cost as much memory again): a view of another array is
        copied, and an array given for two columns (a forecaster's announced, realized and internal forecasts
        may be one) is kept once, read-only, so that no write to one column can change another.
        """
        seen: dict[int, np.ndarray] = {}
        for name, a in columns.items():
            if id(a) in seen:
                a = seen[id(a)]
                a.flags.writeable = False
            elif not a.flags.owndata:
                a = seen.setdefault(id(a), a.copy())
            else:
                seen[id(a)] = a
            setattr(self, name, a)
        self.n, self.forecasts = self.T, None

    def view(self) -> Recorder:
        """The recorded prefix (after a forfeit or an early stop)."""
        if self.n == self.T:
            return self
        out = Recorder.__new__(Recorder)
        out.T = out.n = self.n
        for name in ("X", "p_mean", "p", "p_internal", "y", "y_prob"):
            setattr(out, name, getattr(self, name)[: self.n])
        for name in _ATOM_FIELDS:
            arr = getattr(self, name, None)
            setattr(out, name, None if arr is None else arr[: self.n])
        out.group_dim = getattr(self, "group_dim", 0)
        out.forecasts = self.forecasts
        return out


class ForecastEnv(gym.Env):
    """One sequential prediction game against a nature, for T rounds.

    :meth:`play_round` plays round t by the rules of :mod:`arena.rules` on an announced forecast;
    :meth:`step` is Gymnasium's: it announces the action, plays the round and adds the reward.
    """

    metadata = {"render_modes": []}

    def __init__(
        self,
        nature: Nature | str = "iid_bernoulli",
        T: int = 1000,
        game: Game | str = "binary",
        nature_params: dict | None = None,
        keep_forecasts: bool = False,
    ):
        self._setup(build_matchup(game, None, nature, T, nature_params=nature_params), keep_forecasts)

    @classmethod
    def from_matchup(cls, matchup: Matchup, keep_forecasts: bool = False) -> ForecastEnv:
        """The environment of a matchup that :func:`arena.matchup.build_matchup` built (and checked)."""
        env = cls.__new__(cls)
        env._setup(matchup, keep_forecasts)
        return env

    def _setup(self, matchup: Matchup, keep_forecasts: bool) -> None:
        self.game, self.nature, self.T = matchup.game, matchup.nature, matchup.T
        self.keep_forecasts = keep_forecasts
        d = int(self.nature.context_dim)
        self.observation_space = spaces.Box(-np.inf, np.inf, shape=(d,), dtype=np.float64)
        self.action_space = spaces.Box(self.game.forecast_low, self.game.forecast_high, shape=(1,), dtype=np.float64)
        self._recorder: Recorder | None = None
        #: The round to play next (0 before ``reset``, T + 1 once the game is over).
        self.t = 0
        #: The context of round ``t`` as the forecaster sees it.
        self.context: np.ndarray | None = None
        #: The outcome and forecast coins of this episode (set by ``reset``).
        self.streams: Streams | None = None
        #: ``progress[i]``: the round of the latest call of kind ``CALLS[i]`` (None: none since the
        #: last pause); the runner's time-limit watchdog reads it.
        self.progress: list = [None] * len(CALLS)

    @property
    def recorder(self) -> Recorder:
        """Every round played so far (an empty record before a reset succeeded)."""
        if self._recorder is None:
            return self._new_recorder(self._dim("context_dim"), self._dim("group_dim"))
        return self._recorder

    def _dim(self, name: str) -> int:
        try:
            return int(getattr(self.nature, name))
        except Exception:  # noqa: BLE001 (a nature whose reset failed may not know its dimensions)
            return 0

    def _new_recorder(self, d: int, group_dim: int) -> Recorder:
        return Recorder(self.T, d, self.keep_forecasts, atoms=self.game.records_atoms, group_dim=group_dim)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self.t = 0  # no round may be played until this reset is through
        check_length(self.nature, self.T)
        root = int(seed) if seed is not None else int(self.np_random.integers(2**31))
        nature_rng, outcome_rng, forecast_rng = nature_streams(root, self.nature.name)
        self.streams = Streams(outcome_rng, forecast_rng.random(self.T))
        self.nature.game = self.game
        self.nature.reset(nature_rng)
        self._d = int(self.nature.context_dim)
        self._who = f"nature {self.nature.name!r}"
        groups = int(self.nature.group_dim) if isinstance(self.nature, GroupNature) else 0
        self._recorder = self._new_recorder(self._d, groups)
        self.progress[3] = 0  # context (of round 1; the context of round t + 1 is fetched in round t)
        self.context = self.fetch_context(1)
        self.t = 1
        return self.context.copy(), {"t": 1}

    def fetch_context(self, t: int) -> np.ndarray:
        """Nature's context of round t, checked, as the forecaster sees it."""
        x = self.nature.context(t)
        if type(x) is not np.ndarray or x.dtype is not _FLOAT64 or x.ndim != 1:
            x = np.asarray(x, dtype=np.float64).reshape(-1)
        if x.shape != (self._d,) or (self._d and not _all_finite(x)):
            raise ProtocolError(
                f"nature {self.nature.name!r} returned context {x!r} at t={t}; expected {self._d} finite floats"
            )
        return self.game.present_context(self.nature, t, x)  # experts: advice(p)

    def announce(self, action) -> Forecast:
        """Round t's step 1: the forecaster's action as a checked :class:`Forecast` (:func:`arena.rules.announce`)."""
        return announce(action, self.game, self.game.records_atoms)

    def step(self, action):
        x, p, y, f = self.play_round(self.announce(action))
        t = self.t - 1
        return x, -self.game.loss(p, y), t == self.T, False, {"t": t, "y": y, "p": p, "forecast": f}

    def play_round(self, f: Forecast) -> tuple[np.ndarray, float, float, Forecast]:
        """Round t on the announced forecast ``f`` (:meth:`announce`), by the rules of :mod:`arena.rules`:
        nature answers, the outcome coin, the forecast coin, nature observes, the round is recorded, the
        context of round t + 1 is revealed. Returns that context, the realized forecast, the outcome and ``f``
        (:meth:`step` without Gymnasium's reward and info)."""
        t, game, nature, progress = self.t, self.game, self.nature, self.progress
        if not 1 <= t <= self.T:
            raise RuntimeError("call reset() before step(), and again after the game terminated")
        x = self.context
        progress[1] = t  # respond (progress: see CALLS)
        answer = nature.respond(t, x, f)
        y, y_prob = draw_outcome(answer, self.streams.outcome, game, self._who, t)
        p = realize(f, self.streams.forecast[t - 1])
        progress[2] = t  # observe
        nature.observe(t, p, y)
        law = game.law_at_atoms(answer, f, y) if self._recorder.atoms is not None else None
        self._recorder.record(game.scored_context(nature, t, x, p), f, p, y, y_prob, law)
        self.t = t + 1
        if t == self.T:
            return np.zeros(self._d), p, y, f
        progress[3] = t  # context
        self.context = self.fetch_context(t + 1)
        return (self.context.copy() if self._d else self.context), p, y, f  # an empty context: nothing to copy

    def record_all(self, columns: dict[str, np.ndarray]) -> None:
        """Record every round at once (:meth:`Recorder.fill`): the game is over."""
        self._recorder.fill(columns)
        self.t = self.T + 1
