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

import math

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from arena.games import Game, get_game, plays
from arena.protocols import Bernoulli, Draws, Forecast, Nature, OutcomeLaw, ProtocolError, as_forecast
from arena.registry import make_nature
from arena.seeding import derive_rng

_ATOM_FIELDS = ("atoms", "prob_lo", "cdf_at_atoms", "law_lip", "expected_loss")
_FLOAT64 = np.dtype(np.float64)


def _all_finite(x: np.ndarray) -> bool:
    """Whether every entry of the 1-d array ``x`` is finite (plain Python is quicker on short contexts)."""
    if x.size > 64:
        return bool(np.isfinite(x).all())
    v = x.tolist()
    return math.isfinite(sum(v)) or all(map(math.isfinite, v))  # a finite sum has finite terms (else: overflow?)


class OutcomeCoin(Draws):
    """The outcome stream: ``next()`` serves the one uniform that a Bernoulli law or a plain
    outcome takes (drawn a chunk at a time), ``generator()`` the generator itself, for any
    other law to sample with.

    The generator is handed out just after the uniforms served so far, so every outcome is
    the one that unbuffered draws from the stream give: uniforms drawn ahead are undone (the
    chunk's start state is restored and the served ones drawn again), and a nature that
    mixes such laws with Bernoulli laws is served one uniform at a time from then on.
    """

    def _refill(self) -> None:
        if self.chunk > 1:
            self._state = self.rng.bit_generator.state
        super()._refill()

    def generator(self) -> np.random.Generator:
        if self._i < len(self._buf):
            self.rng.bit_generator.state = self._state
            self.rng.random(self._i)
            self.chunk = 1
        if self._buf:
            self._buf, self._i = [], 0
        return self.rng


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
        if isinstance(T, bool) or not isinstance(T, (int, np.integer)) or T <= 0:
            raise ValueError(f"T={T!r}: the horizon must be a positive integer, e.g. T=1000")
        self.game = get_game(game)
        self.nature = make_nature(nature, **(nature_params or {}))
        if not plays(self.game, self.nature):
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
        chunk = min(self.T, 1024)  # both coins take one uniform a round: draw them a chunk at a time
        self._coin, self._draws = OutcomeCoin(self._outcome_rng, chunk=chunk), Draws(self._draw_rng, chunk=chunk)
        self.nature.game = self.game
        self.nature.reset(nature_rng)
        self._d = int(self.nature.context_dim)
        self._who = f"nature {self.nature.name!r}"
        # hooks left as the base class's no-ops are skipped in every round
        self._observes = type(self.nature).observe is not Nature.observe
        self._presents = type(self.game).present_context is not Game.present_context
        self._scores = type(self.game).scored_context is not Game.scored_context
        self.recorder = Recorder(self.T, self.nature.context_dim, self.keep_forecasts,
                                 atoms=getattr(self.game, "records_atoms", False),
                                 group_dim=int(getattr(self.nature, "group_dim", 0)))
        self.t = 1
        self._x = self._context(1)
        return self._x.copy(), {"t": 1}

    def _context(self, t: int) -> np.ndarray:
        x = self.nature.context(t)
        if type(x) is not np.ndarray or x.dtype is not _FLOAT64 or x.ndim != 1:
            x = np.asarray(x, dtype=np.float64).reshape(-1)
        if x.shape != (self._d,) or not _all_finite(x):
            raise ProtocolError(f"nature {self.nature.name!r} returned context {x!r} at t={t}; expected "
                                f"{self._d} finite floats")
        return self.game.present_context(self.nature, t, x) if self._presents else x  # experts: advice(p)

    def step(self, action):
        x, p, y, f = self.play_round(action)
        t = self.t - 1
        return x, -self.game.loss(p, y), t == self.T, False, {"t": t, "y": y, "p": p, "forecast": f}

    def play_round(self, action) -> tuple[np.ndarray, float, float, Forecast]:
        """:meth:`step` without Gymnasium's reward and info (what the runner's loop uses): the next
        context, the realized forecast, the outcome and the announced :class:`Forecast`."""
        if self.recorder is None or self.t > self.T:
            raise RuntimeError("call reset() before step(), and again after the game terminated")
        game, nature, recorder = self.game, self.nature, self.recorder
        if not isinstance(action, (Forecast, float)):
            try:
                action = np.asarray(action, dtype=np.float64).reshape(-1)
            except (TypeError, ValueError):
                raise ProtocolError(f"forecaster returned {action!r}; expected a float in "
                                    f"[{game.forecast_low}, {game.forecast_high}] or an arena.Forecast") from None
            action = action[0] if action.size == 1 else action
        f = as_forecast(action, game.forecast_low, game.forecast_high)
        if recorder.atoms is not None and len(f.points) > 2:
            raise ProtocolError(f"forecaster announced a distribution on {len(f.points)} points; the "
                                f"{game.name!r} game takes a point or a two-point forecast (Forecast.two_point)")
        t, x = self.t, self._x
        answer = nature.respond(t, x, f)
        if type(answer) is Bernoulli:  # Bernoulli.sample, on the buffered coin
            y = game.check_outcome(1.0 if self._coin.next() < answer.p else 0.0, self._who, t)
            y_prob = game.outcome_prob(answer)
        elif isinstance(answer, OutcomeLaw):
            y = game.check_outcome(answer.sample(self._coin.generator()), self._who, t)
            y_prob = game.outcome_prob(answer)
        else:
            self._coin.next()  # keep the coin aligned whatever nature returns
            y = game.check_outcome(answer, self._who, t)
            y_prob = math.nan
        p = f.sample(self._draws.next())
        if self._observes:
            nature.observe(t, p, y)
        law_info = game.law_at_atoms(answer, f, y) if recorder.atoms is not None else None
        recorder.record(game.scored_context(nature, t, x, p) if self._scores else x, f, p, y, y_prob, law_info)
        self.t = t + 1
        self._x = np.zeros(self._d) if t == self.T else self._context(t + 1)
        return self._x.copy(), p, y, f


gym.register(id="arena/Binary-v0", entry_point="arena.env:ForecastEnv", kwargs={"game": "binary"})
gym.register(id="arena/Quantile-v0", entry_point="arena.env:ForecastEnv",
             kwargs={"game": "quantile", "nature": "iid_normal"})
