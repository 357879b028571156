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
import struct

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from arena.games import BinaryGame, Game
from arena.matchup import Matchup, build_matchup, check_length
from arena.protocols import Bernoulli, Draws, Forecast, Nature, OutcomeLaw, ProtocolError, as_forecast
from arena.seeding import nature_streams

#: The timed calls of a game, in their order within a round t (``ForecastEnv.progress``): the
#: forecaster's predict, nature's respond, observe and context of round t + 1, the
#: forecaster's update; and a forecaster's all-rounds-at-once play_oblivious.
CALLS = ("predict", "respond", "observe", "context", "update", "play_oblivious")
_ATOM_FIELDS = ("atoms", "prob_lo", "cdf_at_atoms", "law_lip", "expected_loss")
_FLOAT64 = np.dtype(np.float64)


def _floats(values: list) -> np.ndarray:
    """A flat list of floats as an array: packed by ``struct`` in C, a few times quicker than numpy's
    own conversion, which inspects every item."""
    return np.frombuffer(struct.pack(f"{len(values)}d", *values), _FLOAT64)


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


class ForecastEnv(gym.Env):
    """One sequential prediction game against a nature, for T rounds.

    ``reset`` builds the episode's round function :meth:`play_round` (``step`` without
    Gymnasium's reward and info), which the runner's loop calls directly. It keeps its
    state in local variables and buffers the rounds of the plain games in Python lists,
    written to the :class:`Recorder` every ``CHUNK`` rounds and whenever ``recorder`` is read.
    """

    metadata = {"render_modes": []}

    #: Rounds buffered before they are written to the recorder's arrays.
    CHUNK = 1024

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
        self._flush = None
        self.t = 0
        #: ``progress[i]``: the round of the latest call of kind ``CALLS[i]`` (None: none since the
        #: last pause); the runner's time-limit watchdog reads it.
        self.progress: list = [None] * len(CALLS)

    @property
    def recorder(self) -> Recorder | None:
        """Every round played so far."""
        if self._flush is not None:
            self._flush()
        return self._recorder

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self.__dict__.pop("play_round", None)  # the last episode's rounds are over
        check_length(self.nature, self.T)
        root = int(seed) if seed is not None else int(self.np_random.integers(2**31))
        nature_rng, self._outcome_rng, self._draw_rng = nature_streams(root, self.nature.name)
        chunk = min(self.T, 1024)  # both coins take one uniform a round: draw them a chunk at a time
        self._coin, self._draws = OutcomeCoin(self._outcome_rng, chunk=chunk), Draws(self._draw_rng, chunk=chunk)
        self.nature.game = self.game
        self.nature.reset(nature_rng)
        self._d = int(self.nature.context_dim)
        self._who = f"nature {self.nature.name!r}"
        self._presents = type(self.game).present_context is not Game.present_context
        self._recorder = Recorder(
            self.T,
            self.nature.context_dim,
            self.keep_forecasts,
            atoms=self.game.records_atoms,
            group_dim=int(self.nature.group_dim),
        )
        self._flush = None
        self.t = 1
        self.progress[3] = 0  # context (of round 1; the context of round t + 1 is fetched in round t)
        self._x = self._context(1)
        self.play_round, self._flush = self._rounds()
        return self._x.copy(), {"t": 1}

    def _context(self, t: int, x=None) -> np.ndarray:
        """Nature's context of round t (``x``: already fetched), checked, as the forecaster sees it."""
        x = self.nature.context(t) if x is None else x
        if type(x) is not np.ndarray or x.dtype is not _FLOAT64 or x.ndim != 1:
            x = np.asarray(x, dtype=np.float64).reshape(-1)
        if x.shape != (self._d,) or not _all_finite(x):
            raise ProtocolError(
                f"nature {self.nature.name!r} returned context {x!r} at t={t}; expected {self._d} finite floats"
            )
        return self.game.present_context(self.nature, t, x) if self._presents else x  # experts: advice(p)

    def _announce(self, action) -> Forecast:
        """The forecaster's action as a checked :class:`Forecast` (any action but a float in range)."""
        game = self.game
        if not isinstance(action, (Forecast, float)):
            try:
                action = np.asarray(action, dtype=np.float64).reshape(-1)
            except (TypeError, ValueError):
                raise ProtocolError(
                    f"forecaster returned {action!r}; expected a float in "
                    f"[{game.forecast_low}, {game.forecast_high}] or an arena.Forecast"
                ) from None
            action = action[0] if action.size == 1 else action
        f = as_forecast(action, game.forecast_low, game.forecast_high)
        if self._recorder.atoms is not None and len(f.points) > 2:
            raise ProtocolError(
                f"forecaster announced a distribution on {len(f.points)} points; the "
                f"{game.name!r} game takes a point or a two-point forecast (Forecast.two_point)"
            )
        return f

    def _outcome(self, answer, t: int) -> tuple[float, float]:
        """The outcome drawn from nature's answer (a law or an outcome) and P(y = 1) under it."""
        game = self.game
        if type(answer) is Bernoulli:  # Bernoulli.sample, on the buffered coin
            y = 1.0 if self._coin.next() < answer.p else 0.0
        elif isinstance(answer, OutcomeLaw):
            y = answer.sample(self._coin.generator())
        else:
            self._coin.next()  # keep the coin aligned whatever nature returns
            return game.check_outcome(answer, self._who, t), math.nan
        return game.check_outcome(y, self._who, t), game.outcome_prob(answer)

    def step(self, action):
        x, p, y, f = self.play_round(action)
        t = self.t - 1
        return x, -self.game.loss(p, y), t == self.T, False, {"t": t, "y": y, "p": p, "forecast": f}

    def play_round(self, action) -> tuple[np.ndarray, float, float, Forecast]:
        """:meth:`step` without Gymnasium's reward and info: the next context, the realized
        forecast, the outcome and the announced :class:`Forecast`. ``reset`` replaces it by
        the episode's round function."""
        raise RuntimeError("call reset() before step(), and again after the game terminated")

    def _rounds(self):
        """The episode's round function and the function that writes its buffered rounds.

        One round: check the forecast, nature answers having seen it, the outcome coin and
        the forecast coin are drawn (each one uniform, in this order, from its own stream),
        nature observes (adaptive natures), the round is recorded, the next context is
        revealed. Everything the loop needs lives in local variables; a float forecast in
        range and a Bernoulli answer in a game with binary outcomes (the common case) are
        handled inline, anything else by the methods above, with the same draws.
        """
        game, nature, rec, T, d, progress = self.game, self.nature, self._recorder, self.T, self._d, self.progress
        lo, hi, shape = game.forecast_low, game.forecast_high, (self._d,)
        respond, context, observe = nature.respond, nature.context, nature.observe
        observes = type(nature).observe is not Nature.observe  # no-op hooks are skipped in every round
        scores = type(game).scored_context is not Game.scored_context
        presents, atoms = self._presents, rec.atoms is not None
        bits = type(game).check_outcome is BinaryGame.check_outcome and type(game).outcome_prob is Game.outcome_prob
        inline_context = not presents and d <= 64  # longer contexts: numpy checks them quicker (_context)
        direct = atoms or scores  # these games record each round at once (Recorder.record)
        record, forecasts = rec.record, rec.forecasts
        coin, draws = self._coin, self._draws
        ndarray, isfinite, float64, new_forecast, bernoulli = np.ndarray, math.isfinite, _FLOAT64, Forecast, Bernoulli
        nan = math.nan
        cbuf, ci, dbuf, di = coin._buf, coin._i, draws._buf, draws._i
        rows, xs = [], []  # rounds not yet in the recorder, flat: p_mean, p, p_internal, y, y_prob; x
        full = 5 * self.CHUNK
        x = self._x
        xl = x.tolist()

        def play_round(action):
            nonlocal x, xl, rows, xs, cbuf, ci, dbuf, di
            t = self.t
            if t > T:
                raise RuntimeError("call reset() before step(), and again after the game terminated")
            point = type(action) is float and lo <= action <= hi  # NaN fails
            f = new_forecast((action,)) if point else self._announce(action)
            progress[1] = t  # respond (progress: see CALLS)
            answer = respond(t, x, f)
            if bits and (type(answer) is bernoulli or type(answer) is float and (answer == 0.0 or answer == 1.0)):
                try:  # Bernoulli.sample on the buffered coin (a plain bit takes its uniform too: _outcome)
                    u = cbuf[ci]
                except IndexError:  # the chunk is used up (a try costs nothing until it raises)
                    coin._refill()
                    cbuf, ci = coin._buf, 0
                    u = cbuf[0]
                ci += 1
                if type(answer) is bernoulli:
                    y = 1.0 if u < answer.p else 0.0
                    y_prob = 1.0 - (1.0 - answer.p)  # Game.outcome_prob: 1 - Bernoulli.cdf(0)
                else:
                    y, y_prob = answer, nan
            else:
                coin._buf, coin._i = cbuf, ci
                y, y_prob = self._outcome(answer, t)
                cbuf, ci = coin._buf, coin._i
            try:
                u = dbuf[di]
            except IndexError:
                draws._refill()
                dbuf, di = draws._buf, 0
                u = dbuf[0]
            di += 1
            if point:
                p = p_mean = p_int = action
            else:
                p, p_mean = f.sample(u), f.mean
                p_int = p if f.internal is None else f.internal
            if observes:
                progress[2] = t  # observe
                observe(t, p, y)
            if direct:
                record(
                    game.scored_context(nature, t, x, p) if scores else x,
                    f,
                    p,
                    y,
                    y_prob,
                    game.law_at_atoms(answer, f, y) if atoms else None,
                )
            else:
                if forecasts is not None:
                    forecasts.append(f)
                if d:
                    xs += xl
                rows += (p_mean, p, p_int, y, y_prob)  # last: the round is complete
                if len(rows) == full:
                    flush()
            t1 = self.t = t + 1
            if t == T:
                x = np.zeros(d)
                return x.copy(), p, y, f
            progress[3] = t  # context
            x = context(t1)
            if inline_context and type(x) is ndarray and x.dtype is float64 and x.shape == shape:
                if d:  # a finite sum has finite terms (else: an overflow, or a NaN or inf to find)
                    xl = x.tolist()
                    if not isfinite(sum(xl)) and not all(map(isfinite, xl)):
                        self._context(t1, x)  # raises, naming the context
                    return x.copy(), p, y, f
                return x, p, y, f  # an empty context: nothing to copy
            x = self._context(t1, x)
            xl = x.tolist()
            return x.copy(), p, y, f

        def flush() -> None:
            n = len(rows) // 5
            if n:
                i, j = rec.n, rec.n + n
                cols = _floats(rows[: 5 * n]).reshape(n, 5).T
                rec.p_mean[i:j], rec.p[i:j], rec.p_internal[i:j], rec.y[i:j], rec.y_prob[i:j] = cols
                if d:
                    rec.X[i:j] = _floats(xs[: n * d]).reshape(n, d)
                rec.n = j
                del rows[: 5 * n], xs[: n * d]

        return play_round, flush
