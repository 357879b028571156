"""The games as Gymnasium environments: the forecaster is the agent, nature sits inside.

``reset(seed)`` returns the first context; ``step(forecast)`` takes a float or an
:class:`arena.Forecast`, lets nature answer, draws the realized forecast and the
outcome from independent streams derived from the seed, and returns the next context,
the reward (minus the game's loss), ``terminated`` at T, and ``info`` with the outcome
and the realized forecast. The environment records every step in a
:class:`Recorder` that the referee scores.

Examples
--------
>>> import gymnasium as gym, arena
>>> env = gym.make("arena/Binary-v0", nature="iid_bernoulli", T=3)
>>> x, info = env.reset(seed=0)
>>> x, r, terminated, truncated, info = env.step(0.3)
>>> sorted(info)
['forecast', 'p', 't', 'y']
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from arena.games import Game, get_game
from arena.protocols import Forecast, Nature, OutcomeLaw, ProtocolError, as_forecast
from arena.registry import make_nature
from arena.seeding import derive_rng


class Recorder:
    """Preallocated per-step arrays of one game (bounded memory: no Python objects per step
    unless ``keep_forecasts``)."""

    def __init__(self, T: int, d: int, keep_forecasts: bool = False):
        self.T, self.n = T, 0
        self.X = np.zeros((T, d))
        self.p_mean = np.zeros(T)  # mean of the announced distribution
        self.p = np.zeros(T)  # realized forecast
        self.p_internal = np.zeros(T)  # the forecast the forecaster's guarantee is about
        self.y = np.zeros(T)
        self.y_prob = np.full(T, np.nan)  # P(y = 1) when nature exposed its law
        self.forecasts: list[Forecast] | None = [] if keep_forecasts else None

    def record(self, x, f: Forecast, p: float, y: float, y_prob: float) -> None:
        i = self.n
        self.X[i] = x
        self.p_mean[i] = f.mean
        self.p[i] = p
        self.p_internal[i] = p if f.internal is None else f.internal
        self.y[i] = y
        self.y_prob[i] = y_prob
        if self.forecasts is not None:
            self.forecasts.append(f)
        self.n += 1

    def view(self) -> Recorder:
        """The recorded prefix (after a forfeit or an early stop)."""
        if self.n == self.T:
            return self
        out = Recorder.__new__(Recorder)
        out.T = out.n = self.n
        for name in ("X", "p_mean", "p", "p_internal", "y", "y_prob"):
            setattr(out, name, getattr(self, name)[: self.n])
        out.forecasts = self.forecasts
        return out


def nature_streams(seed: int, nature: Nature) -> tuple[np.random.Generator, np.random.Generator, np.random.Generator]:
    """Nature's own stream, the outcome coin and the forecast coin, derived by name.

    None depends on the forecaster, so an oblivious nature plays the same sequence
    against every forecaster.
    """
    return (derive_rng(seed, "nature", nature.name), derive_rng(seed, "outcome", nature.name),
            derive_rng(seed, "forecast-draw", nature.name))


class ForecastEnv(gym.Env):
    """One sequential prediction game against a nature, for T rounds."""

    metadata = {"render_modes": []}

    def __init__(self, nature: Nature | str = "iid_bernoulli", T: int = 1000, game: Game | str = "binary",
                 nature_params: dict | None = None, keep_forecasts: bool = False):
        if not isinstance(T, (int, np.integer)) or T <= 0:
            raise ValueError(f"T={T!r}: the horizon must be a positive integer, e.g. T=1000")
        self.game = get_game(game)
        self.nature = make_nature(nature, **(nature_params or {}))
        if self.game.name not in self.nature.games:
            raise ValueError(f"nature {self.nature.name!r} plays {self.nature.games}, not the {self.game.name!r} game")
        self.T = int(T)
        self.keep_forecasts = keep_forecasts
        d = int(self.nature.context_dim)
        self.observation_space = spaces.Box(-np.inf, np.inf, shape=(d,), dtype=np.float64)
        self.action_space = spaces.Box(self.game.forecast_low, self.game.forecast_high, shape=(1,), dtype=np.float64)
        self.recorder: Recorder | None = None
        self.t = 0

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if self.nature.length is not None and self.T > self.nature.length:
            raise ValueError(f"T={self.T} exceeds the {self.nature.length} rounds nature {self.nature.name!r} "
                             f"can play; lower T to at most {self.nature.length}")
        root = int(seed) if seed is not None else int(self.np_random.integers(2**31))
        self.seed_root = root
        nature_rng, self._outcome_rng, self._draw_rng = nature_streams(root, self.nature)
        self.nature.game = self.game
        self.nature.reset(nature_rng)
        self.recorder = Recorder(self.T, self.nature.context_dim, self.keep_forecasts)
        self.t = 1
        self._x = self._context(1)
        return self._x.copy(), {"t": 1}

    def _context(self, t: int) -> np.ndarray:
        x = np.asarray(self.nature.context(t), dtype=np.float64).reshape(-1)
        if x.shape != (self.nature.context_dim,) or not np.all(np.isfinite(x)):
            raise ProtocolError(f"nature {self.nature.name!r} returned context {x!r} at t={t}; expected "
                                f"{self.nature.context_dim} finite floats")
        return x

    def step(self, action):
        if self.recorder is None or self.t > self.T:
            raise RuntimeError("call reset() before step(), and again after the game terminated")
        if not isinstance(action, Forecast):
            action = np.asarray(action, dtype=np.float64).reshape(-1)
            action = action[0] if action.size == 1 else action
        f = as_forecast(action, self.game.forecast_low, self.game.forecast_high)
        t, x = self.t, self._x
        answer = self.nature.respond(t, x, f)
        who = f"nature {self.nature.name!r}"
        if isinstance(answer, OutcomeLaw):
            y = self.game.check_outcome(answer.sample(self._outcome_rng), who, t)
            y_prob = 1.0 - answer.cdf(0.0)
        else:
            self._outcome_rng.random()  # keep the coin aligned whatever nature returns
            y = self.game.check_outcome(answer, who, t)
            y_prob = np.nan
        p = f.sample(self._draw_rng.random())
        self.nature.observe(t, p, y)
        self.recorder.record(x, f, p, y, y_prob)
        self.t += 1
        terminated = self.t > self.T
        self._x = np.zeros(self.nature.context_dim) if terminated else self._context(self.t)
        info = {"t": t, "y": y, "p": p, "forecast": f}
        return self._x.copy(), -self.game.loss(p, y), terminated, False, info


gym.register(id="arena/Binary-v0", entry_point="arena.env:ForecastEnv", kwargs={"game": "binary"})
