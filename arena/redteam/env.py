"""The red team as a Gymnasium environment: the agent is nature, the forecaster sits inside.

``gymnasium.make("arena/RedTeam-v0", forecaster="running_mean", metric="smce_over_T", T=1000)``.
Each step is one round of the arena's own game (:class:`arena.env.ForecastEnv`'s round function:
the same checks, coins and record as every matchup):

- observation: the features of the announced forecast and of the history that a red-team policy
  sees (:class:`arena.redteam.policy.Features`, without the constant), all in [-1, 1];
- action: nature's law: P(y = 1) in [0, 1] (binary, decision and experts games), or in the
  quantile game a in [-1, 1], which places an L-Lipschitz ramp CDF at z = 1.5 a relative to the
  announced mean as a policy's output does (z >= 1/2: all mass above the mean, z <= -1/2: all
  below, z = 0: half of it below);
- reward: the increase of the chosen metric over the round (the sum of the rewards is the
  metric at T), computed by the arena's metric functions (:func:`arena.redteam.objective.score`);
- ``terminated`` at T; ``info`` holds t, the outcome, the realized forecast and the metric.

Nature sees the announced distribution, never the forecaster's coin. Any
reinforcement-learning library that speaks Gymnasium can be the adversary.

References
----------
The protocol (arena/protocols.py); the red team (README, "Red team").
"""

from __future__ import annotations

from typing import ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from arena.protocols import Forecast
from arena.redteam.objective import check_objective, score
from arena.redteam.policy import FEATURES, RedTeamNature, attack_dict
from arena.seeding import derive_rng


class _Puppet(RedTeamNature):
    """The env's nature: answers the law the agent chose (``pending``)."""

    def __init__(self, attack: dict):
        super().__init__(attack)
        self.pending = 0.5

    def decide(self, t, x, forecast):
        self._mean, self._x = forecast.mean, x
        if self.game.name == "quantile":
            return forecast.mean + (1.5 * self.pending - 0.5) / self.L
        return self.pending


class RedTeamEnv(gym.Env):
    """Nature as the agent against one forecaster, for T rounds, rewarded by the increase of a metric.

    Parameters
    ----------
    forecaster : a registered name or an instance; ``forecaster_params`` for a name.
    metric : a red-team objective of the game (:data:`arena.redteam.objective.OBJECTIVES`).
    T : horizon. game : a game name or :class:`arena.games.Game`.
    L : the quantile game's Lipschitz constant. panel : the experts game's panel ``{name, params}``.

    Examples
    --------
    >>> env = RedTeamEnv("constant", T=20)
    >>> obs, info = env.reset(seed=0)
    >>> total = sum(env.step(np.array([1.0]))[1] for _ in range(20))
    >>> round(total, 12)   # always a one against a constant 1/2: smCE/T = 1/2
    0.5
    """

    metadata: ClassVar[dict] = {"render_modes": []}

    def __init__(
        self,
        forecaster="running_mean",
        metric: str = "smce_over_T",
        T: int = 1000,
        game="binary",
        forecaster_params: dict | None = None,
        L: float = 1.0,
        panel: dict | None = None,
    ):
        from arena.env import ForecastEnv
        from arena.games import get_game, plays
        from arena.registry import make_forecaster

        self.game = get_game(game)
        check_objective(self.game.name, metric)
        self.forecaster = make_forecaster(forecaster, **(forecaster_params or {}))
        if not plays(self.game, self.forecaster):
            raise ValueError(
                f"forecaster {self.forecaster.name!r} plays {self.forecaster.games}, not the {self.game.name!r} game"
            )
        self.metric, self.T = metric, int(T)
        extra = (
            {"L": float(L)} if self.game.name == "quantile" else {"panel": panel} if self.game.name == "experts" else {}
        )
        n = len(FEATURES[self.game.name])
        self.nature = _Puppet(attack_dict("policy", self.game, T=self.T, theta=[0.0] * n, **extra))
        self._env = ForecastEnv(self.nature, self.T, self.game)
        self.observation_space = spaces.Box(-1.0, 1.0, shape=(n - 1,), dtype=np.float64)
        self.action_space = (
            spaces.Box(-1.0, 1.0, shape=(1,), dtype=np.float64)
            if self.game.name == "quantile"
            else spaces.Box(0.0, 1.0, shape=(1,), dtype=np.float64)
        )

    def _observe(self) -> np.ndarray:
        phi = np.asarray(self.nature.phi(self._t, self._x, self._f)[1:], dtype=np.float64)
        return np.clip(phi, -1.0, 1.0)

    def _predict(self, x) -> Forecast:
        return self._env.announce(self.forecaster.predict(x))  # the game's checks (arena.rules.announce)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        root = int(seed) if seed is not None else int(self.np_random.integers(2**31))
        self.forecaster.game = self.game
        self.forecaster.reset(derive_rng(root, "forecaster", self.forecaster.name))
        self._x, _ = self._env.reset(seed=root)
        self._t, self._value = 1, 0.0
        self._f = self._predict(self._x)
        return self._observe(), {"t": 1}

    def step(self, action):
        a = float(
            np.clip(
                np.asarray(action, dtype=np.float64).reshape(-1)[0], self.action_space.low[0], self.action_space.high[0]
            )
        )
        self.nature.pending = a
        x_next, p, y, _ = self._env.play_round(self._f)
        self.forecaster.update(self._x, p, y)
        rec = self._env.recorder
        n = rec.n
        value = score(self.game, self.metric, rec.X[:n], rec.p[:n], rec.y[:n])
        reward, self._value = value - self._value, value
        info = {"t": self._t, "y": y, "p": p, self.metric: value}
        done = self._t == self.T
        self._t += 1
        if not done:
            self._x, self._f = x_next, self._predict(x_next)
        return (
            (self._observe() if not done else np.zeros(self.observation_space.shape)),
            float(reward),
            done,
            False,
            info,
        )
