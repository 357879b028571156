"""Red-team natures: a stored attack (a parametric adaptive policy or a planned sequence) played as a nature.

An *attack* is a plain dict, stored as JSON (:func:`save_attack`, :func:`load_attack`):

- ``kind: policy``: features of the announced forecast and of the history -> an outcome law,
  through weights ``theta`` (:class:`Features`); binary games answer Bernoulli(sigmoid(theta . phi)),
  the quantile game an L-Lipschitz ramp CDF whose start is placed at ``mean + (theta . phi - 1/2)/L``
  (z = theta . phi = 0 puts half the mass below the forecast's mean, z >= 1/2 all of it above);
- ``kind: sequence``: one answer per round, planned by a searcher (the probability of a 1, or
  the quantile game's ramp start); it ignores the forecast (oblivious);

with the game (``game``, ``game_params``), the forecaster it was found against, the metric,
T, seed, searcher, ``value`` (the metric the replay reaches) and, in the experts game, the
``panel`` whose advice is the context. :class:`RedTeamNature` plays it; its name is always
``redteam``, so its streams (derived by name) are the same in the search and in every replay:
the same seed gives the same game.

Nature sees the announced forecast (a distribution), never the coin that realizes it.

References
----------
Perdomo & Recht, §2, §8-§10.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np

from arena.protocols import EMPTY_CONTEXT, Bernoulli, Context, Forecast, Nature

#: Format tag of a stored attack.
FORMAT = "arena.redteam/1"
KINDS = ("policy", "sequence")

#: The games an attack plays and the feature names of each game's policy (the first is the constant).
FEATURES: dict[str, tuple[str, ...]] = {
    "binary": ("1", "p", "t", "last_y", "dp", "bin_residual", "bias"),
    "quantile": ("1", "coverage_gap", "t", "last_covered", "position", "dp"),
    "experts": ("1", "p", "leader", "p_minus_leader", "last_y", "t"),
}
FEATURES["decision"] = FEATURES["binary"]
#: Bins of [0, 1] of the binary feature ``bin_residual``.
BINS = 10


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))


class Features:
    """The policy's view of the game: features of the announced forecast and of the history.

    ``phi(t, x, forecast)`` is a pure function of the state and the forecast; ``observe`` adds
    a finished round (its announced mean, context, realized forecast and outcome). Every
    feature but the constant lies in [-1, 1].

    - binary / decision: ``p`` the announced mean - 1/2; ``t`` t/horizon - 1/2; ``last_y`` the
      previous outcome - 1/2 (0 before any); ``dp`` the move of the announced mean since the last
      round (times 10, clipped); ``bin_residual`` the mean of y - p over past rounds whose realized
      forecast fell in the bin (of 10) of the announced mean; ``bias`` the mean of y - p so far;
    - quantile: ``coverage_gap`` the coverage so far - q; ``last_covered`` 1{y <= p} - 1/2 of the
      previous round; ``position`` the mean's place in the range, in [-1, 1]; ``dp`` its move
      times L (clipped);
    - experts: ``leader`` the advice of the expert with the least loss so far - 1/2;
      ``p_minus_leader`` the announced mean minus it.

    Examples
    --------
    >>> from arena.games import get_game
    >>> f = Features(get_game("binary"), horizon=10)
    >>> np.round(f.phi(1, EMPTY_CONTEXT, Forecast.point(0.7)), 2).tolist()
    [1.0, 0.2, -0.4, 0.0, 0.0, 0.0, 0.0]
    >>> f.observe(EMPTY_CONTEXT, 0.7, 0.7, 1.0)
    >>> np.round(f.phi(2, EMPTY_CONTEXT, Forecast.point(0.75)), 2).tolist()
    [1.0, 0.25, -0.3, 0.5, 0.5, 0.15, 0.3]
    """

    def __init__(self, game, horizon: int, L: float = 1.0):
        self.game, self.horizon, self.L = game, int(horizon), float(L)
        self.kind = game.name
        self.n = 0
        self.last_mean = math.nan
        self.last_y = 0.0
        if self.kind == "quantile":
            self.covered, self.last_cov = 0, 0.0
        elif self.kind == "experts":
            from arena.games.experts import LOSS_FUNCTIONS

            self._loss = LOSS_FUNCTIONS[str(game.loss)]
            self.losses = None
        else:
            self.sums, self.counts, self.total = [0.0] * BINS, [0] * BINS, 0.0

    def _t(self, t: int) -> float:
        return min(t / self.horizon, 1.0) - 0.5

    def phi(self, t: int, x: Context, forecast: Forecast) -> list[float]:
        mean = forecast.mean
        if self.kind == "quantile":
            g = self.game
            dp = 0.0 if self.n == 0 else max(-1.0, min(1.0, self.L * (mean - self.last_mean)))
            gap = self.covered / self.n - g.q if self.n else 0.0
            pos = 2.0 * (mean - g.ymin) / (g.ymax - g.ymin) - 1.0
            return [1.0, gap, self._t(t), self.last_cov, pos, dp]
        if self.kind == "experts":
            advice = np.asarray(x, dtype=np.float64).reshape(-1)
            lead = float(advice[int(np.argmin(self.losses))]) if self.losses is not None else float(np.mean(advice))
            return [1.0, mean - 0.5, lead - 0.5, mean - lead, self.last_y, self._t(t)]
        b = min(max(int(mean * BINS), 0), BINS - 1)
        dp = 0.0 if self.n == 0 else max(-1.0, min(1.0, 10.0 * (mean - self.last_mean)))
        return [
            1.0,
            mean - 0.5,
            self._t(t),
            self.last_y,
            dp,
            self.sums[b] / (self.counts[b] + 1),
            self.total / self.n if self.n else 0.0,
        ]

    def observe(self, x: Context, mean: float, p: float, y: float) -> None:
        self.n += 1
        self.last_mean = mean
        if self.kind == "quantile":
            cov = y <= p
            self.covered += int(cov)
            self.last_cov = 0.5 if cov else -0.5
            return
        self.last_y = y - 0.5
        if self.kind == "experts":
            advice = np.asarray(x, dtype=np.float64).reshape(-1)
            loss = self._loss(advice, y)
            self.losses = loss if self.losses is None else self.losses + loss
            return
        b = min(max(int(p * BINS), 0), BINS - 1)
        self.sums[b] += y - p
        self.counts[b] += 1
        self.total += y - p


def check_attack(attack: dict, where: str = "attack") -> dict:
    """Validate a stored attack; raise a one-line error naming the bad field and the fix.

    Examples
    --------
    >>> check_attack({"format": FORMAT, "kind": "policy", "game": "binary", "theta": [0.0]})
    Traceback (most recent call last):
    ...
    ValueError: attack: theta has 1 weights but the binary policy has 7 features ('1', 'p', ...); search again ...
    """
    if not isinstance(attack, dict) or attack.get("format") != FORMAT:
        raise ValueError(
            f"{where}: not a stored red-team attack (expected a JSON object with format {FORMAT!r}); "
            "write one with arena-redteam"
        )
    kind, game = attack.get("kind"), attack.get("game")
    if kind not in KINDS:
        raise ValueError(f"{where}: kind={kind!r}; expected one of {list(KINDS)}")
    if not isinstance(game, str) or game not in FEATURES:
        raise ValueError(f"{where}: game={game!r}; a red-team attack plays {', '.join(sorted(FEATURES))}")
    T, L = attack.get("T"), attack.get("L", 1.0)
    if T is not None and (isinstance(T, bool) or not isinstance(T, int) or T <= 0):
        raise ValueError(f"{where}: T={T!r}; the horizon of the search must be a positive integer")
    if not _number(L) or not L > 0:
        raise ValueError(f"{where}: L={L!r}; the Lipschitz constant must be a positive finite number")
    if kind == "policy":
        theta = attack.get("theta")
        if not isinstance(theta, list) or len(theta) != len(FEATURES[game]) or not all(map(_number, theta)):
            n = len(theta) if isinstance(theta, list) else theta
            raise ValueError(
                f"{where}: theta has {n} weights but the {game} policy has {len(FEATURES[game])} features "
                f"{FEATURES[game]}; search again or fix the file"
            )
    else:
        answers = attack.get("answers")
        if not isinstance(answers, list) or not answers or not all(map(_number, answers)):
            raise ValueError(
                f"{where}: answers must be a non-empty list of numbers (one per round); search again or fix the file"
            )
        if game != "quantile" and not all(0 <= v <= 1 for v in answers):  # a probability of a one
            bad = next(v for v in answers if not 0 <= v <= 1)
            raise ValueError(f"{where}: answer {bad!r} is not a probability in [0, 1]; search again or fix the file")
    return attack


def _number(v: object) -> bool:
    """A finite int or float that is no boolean (JSON's true is no weight)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def save_attack(attack: dict, path: str | os.PathLike) -> Path:
    """Write an attack as JSON (atomically: a temporary file renamed)."""
    from arena.results import write_text_atomic

    check_attack(attack)
    path = Path(path)
    write_text_atomic(json.dumps(attack, indent=1, sort_keys=True) + "\n", path)
    return path


def load_attack(path: str | os.PathLike) -> dict:
    """Read and validate a stored attack."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"redteam: path={str(path)!r} is not a file; give a JSON file written by arena-redteam")
    try:
        attack = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, RecursionError, OSError) as exc:  # not JSON, not text, nested too deeply, unreadable
        why = exc.strerror if isinstance(exc, OSError) else str(exc)[:80] or type(exc).__name__
        raise ValueError(
            f"redteam: {str(path)!r} is not readable JSON ({why}); give a file written by arena-redteam"
        ) from None
    return check_attack(attack, f"redteam: {path}")


class _FromAttack:
    """A nature attribute read from its attack; on the class (before any attack), ``default``."""

    def __init__(self, fn, default):
        self.fn, self.default = fn, default

    def __get__(self, obj, cls=None):
        return self.default if obj is None else self.fn(obj)


class RedTeamNature(Nature):
    """Plays a stored attack (see the module docstring): a policy (adaptive) or a sequence (oblivious).

    Its game, whether it is adaptive, its context (the panel's advice in the experts game) and
    its length (a sequence's rounds) are the attack's.

    Parameters
    ----------
    attack : dict
        The attack (as :func:`load_attack` returns it).

    Examples
    --------
    >>> from arena import play
    >>> attack = {"format": FORMAT, "kind": "policy", "game": "binary", "T": 100,
    ...           "theta": [20.0, 0, 0, 0, 0, 0, 0]}   # always (nearly surely) a one
    >>> r = play("binary", "constant", RedTeamNature(attack), T=100, seed=0)
    >>> r.summary["smce_over_T"]
    0.5

    References
    ----------
    Perdomo & Recht, §2 (nature sees the announced forecast, never the coin).
    """

    name = "redteam"
    games = _FromAttack(lambda self: (self.attack["game"],), ("binary",))
    adaptive = _FromAttack(lambda self: self.attack["kind"] == "policy", True)
    context_dim = _FromAttack(lambda self: self.panel.context_dim if self.attack["game"] == "experts" else 0, 0)
    length = _FromAttack(lambda self: len(self.attack["answers"]) if self.attack["kind"] == "sequence" else None, None)

    def __init__(self, attack: dict):
        self._given = check_attack(attack)

    @property
    def attack(self) -> dict:
        return self._given

    @property
    def panel(self) -> Nature:
        """The expert panel whose advice is the context (experts game), built once."""
        if "_panel" not in self.__dict__:
            from arena.registry import make_nature

            spec = self.attack.get("panel") or {"name": "expert_constants"}
            panel = make_nature(spec["name"], **dict(spec.get("params") or {}))
            if getattr(panel, "second_guessing", False):
                raise ValueError(
                    f"redteam: panel {spec['name']!r} second-guesses the forecast; give a panel whose "
                    "advice does not see the forecast (e.g. expert_constants)"
                )
            self._panel = panel
        return self._panel

    def params(self) -> dict:
        a = self.attack
        return {k: a.get(k) for k in ("kind", "game", "forecaster", "metric", "T", "seed", "searcher")}

    @property
    def L(self) -> float:
        return float(self.attack.get("L", 1.0))

    def reset(self, rng: np.random.Generator) -> None:
        super().reset(rng)
        game = self.game
        if game.name == "quantile" and self.L * (game.ymax - game.ymin) < 1:
            raise ValueError(
                f"redteam: L={self.L!r} is below 1/(ymax - ymin) = {1 / (game.ymax - game.ymin):.6g}: no "
                "L-Lipschitz CDF fits in the game's range; search again with a larger L"
            )
        attack = self.attack
        self._features = Features(game, int(attack.get("T") or 1000), self.L)
        self._theta = [float(v) for v in attack.get("theta", ())]
        self._answers = attack.get("answers")
        self._mean, self._x = math.nan, EMPTY_CONTEXT
        if game.name == "experts":
            self.panel.game = game
            self.panel.reset(rng)

    def context(self, t: int) -> Context:
        return self.panel.context(t) if self.game.name == "experts" else EMPTY_CONTEXT

    def phi(self, t: int, x: Context, forecast: Forecast) -> list[float]:
        """The policy's features of round t (see :class:`Features`)."""
        return self._features.phi(t, x, forecast)

    def decide(self, t: int, x: Context, forecast: Forecast) -> float:
        """This round's answer as a number: the probability of a 1, or (quantile) the start of the
        ramp CDF (:meth:`answer` turns it into the law)."""
        self._mean, self._x = forecast.mean, x
        if self._answers is not None:
            return float(self._answers[t - 1])
        z = math.fsum(a * b for a, b in zip(self._theta, self.phi(t, x, forecast), strict=True))
        return forecast.mean + (z - 0.5) / self.L if self.game.name == "quantile" else _sigmoid(z)

    def answer(self, a: float):
        """The outcome law of an answer ``a``: Bernoulli(a), or the L-Lipschitz ramp CDF that is 0
        up to ``a`` (moved inside the game's range) and rises with slope L."""
        if self.game.name == "quantile":
            from arena.laws import lipschitz_ramp

            g = self.game
            return lipschitz_ramp(a, self.L, g.ymin, g.ymax)
        return Bernoulli(min(max(a, 0.0), 1.0))

    def respond(self, t: int, x: Context, forecast: Forecast):
        return self.answer(self.decide(t, x, forecast))

    def observe(self, t: int, p: float, y: float) -> None:
        self._features.observe(self._x, self._mean, p, y)


def attack_dict(kind: str, game, **fields) -> dict:
    """A new attack of ``kind`` for ``game`` (an :class:`arena.games.Game`) with its ``fields``."""
    params = {
        k: (str(v) if k == "loss" else v)
        for k, v in vars(game).items()
        if k not in ("name", "forecast_low", "forecast_high")
    }
    return {"format": FORMAT, "kind": kind, "game": game.name, "game_params": params, **fields}
