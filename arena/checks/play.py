"""The harness every check plays through: the failures it raises, the plugin's copies, its game and labels,
one game played through the arena's own loop (:func:`arena.runner.play`), and the first difference of two
recorded games."""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Iterable
from contextlib import contextmanager
from typing import Any

import numpy as np
import pandas as pd

from arena.games import GAMES, Game, get_game, plays
from arena.protocols import Forecast, Forecaster, Nature
from arena.referee import Score
from arena.runner import Result, play

DEFAULT_T = 60


class CheckFailure(AssertionError):
    """A plugin broke a conformance property; the message says which, where and how."""


class NotApplicable(Exception):
    """The check does not apply to this plugin; ``str(exc)`` is the reason."""


# --------------------------------------------------------------------------- forecaster checks


class Spy(Forecaster):
    """Wraps a forecaster and records the first return of ``predict`` that ``judge(out, t)`` finds wrong
    (the message it returns; None: the forecast is right)."""

    def __init__(self, inner: Forecaster, judge: Callable[[object, int], str | None]):
        self._inner, self._judge = inner, judge
        self.name, self.games = inner.name, inner.games
        self.violation: str | None = None
        self._t = 0

    def reset(self, rng):
        self._t = 0
        if hasattr(self, "game"):  # the arena sets the game before reset
            self._inner.game = self.game
        self._inner.reset(rng)

    def predict(self, x):
        self._t += 1
        out = self._inner.predict(x)
        if self.violation is None:
            self.violation = self._judge(out, self._t)
        return out

    def update(self, x, p, y):
        self._inner.update(x, p, y)


class _NullReferee:
    """Scores nothing: the checks only need the recorded trace."""

    def accepts(self, forecaster) -> None:
        """Any search tolerance: nothing is certified."""

    def score(self, game, rec, forecaster) -> Score:
        return Score({}, {}, pd.DataFrame(columns=["t", "metric", "value"]))


def class_of(plugin) -> type:
    return plugin if isinstance(plugin, type) else type(plugin)


def plugin_label(plugin) -> str:
    cls = class_of(plugin)
    kind = "forecaster" if issubclass(cls, Forecaster) else "nature" if issubclass(cls, Nature) else "plugin"
    return f"{kind} {getattr(cls, 'name', '') or '?'!r} ({cls.__module__}.{cls.__qualname__})"


def nature_label(nature) -> str:
    return repr(nature) if isinstance(nature, str) else repr(getattr(nature, "name", "?"))


def factory(plugin, params: dict | None, kind: type, check: str) -> Callable[[], Any]:
    """A function returning a fresh, unplayed copy of the plugin."""
    if isinstance(plugin, type):
        if not issubclass(plugin, kind):
            raise TypeError(f"{check}: {plugin!r} is not a {kind.__name__} subclass")
        kw = dict(params or {})
        try:
            plugin(**kw)
        except Exception as exc:
            raise CheckFailure(
                f"{check}: {plugin_label(plugin)} cannot be constructed with params={kw!r}: "
                f"{type(exc).__name__}: {exc}; pass params=... for its required parameters"
            ) from exc
        return lambda: plugin(**kw)
    if not isinstance(plugin, kind):
        raise TypeError(f"{check}: {plugin!r} is not a {kind.__name__} (give an instance or a class)")
    if params:
        raise TypeError(f"{check}: params are for a class; {plugin!r} is already an instance")
    proto = copy.deepcopy(plugin)
    return lambda: copy.deepcopy(proto)


def game_for(plugin, game: str | Game | None, check: str) -> Game:
    """The game the check plays: ``game`` (a name or a Game), or the plugin's first game the arena knows."""
    games = tuple(getattr(plugin, "games", ()))
    if game is None:
        known = [g for g in games if g in GAMES]
        if not known:
            raise NotApplicable(f"{plugin_label(plugin)} plays {games}; the arena implements only {sorted(GAMES)}")
        game = known[0]
    g = get_game(game)
    if not plays(g, plugin):
        raise NotApplicable(f"{plugin_label(plugin)} does not play the {g.name!r} game (it plays {games})")
    return g


def horizon(T: int, nature) -> int:
    length = getattr(nature, "length", None) if isinstance(nature, Nature) else None
    return min(T, length) if length else T


@contextmanager
def global_rngs(seed: int):
    """Seed the global ``np.random`` and ``random`` streams with ``seed``, restoring them after.

    Plugins must never use them; seeding them differently in two plays that should be
    identical makes a plugin that does visibly non-reproducible.
    """
    np_state, py_state = np.random.get_state(), random.getstate()
    np.random.seed(seed)
    random.seed(seed)
    try:
        yield
    finally:
        np.random.set_state(np_state)
        random.setstate(py_state)


def play_checked(
    check: str,
    game: Game,
    fc: Forecaster,
    nature: Nature,
    T: int,
    seed: int,
    *,
    referee=None,
    global_seed: int | None = None,
    keep_forecasts: bool = True,
    **kw,
) -> Result:
    """Play one game and fail the check if any plugin forfeits or the game cannot start.

    ``keep_forecasts=False`` lets a forecaster with a compiled oblivious path use it.
    """
    kw = dict(referee=referee or _NullReferee(), keep_forecasts=keep_forecasts, **kw)
    try:
        if global_seed is None:
            res = play(game, fc, nature, T, seed, **kw)
        else:
            with global_rngs(global_seed):
                res = play(game, fc, nature, T, seed, **kw)
    except Exception as exc:  # outside the loop's forfeit handling: reset, the first context, the referee
        raise CheckFailure(
            f"{check}: the game of T={T} between forecaster {fc.name!r} and nature {nature.name!r} "
            f"(seed={seed}) could not be played: {type(exc).__name__}: {exc}"
        ) from exc
    if res.forfeit is not None:
        f = res.forfeit
        culprit = (
            plugin_label(fc._inner if isinstance(fc, Spy) else fc) if f.who == "forecaster" else plugin_label(nature)
        )
        raise CheckFailure(
            f"{check}: {culprit} forfeited at round t={f.step} of a game of T={T} "
            f"between forecaster {fc.name!r} and nature {nature.name!r} (seed={seed}): {f.reason}"
        )
    return res


_TRACE_FIELDS = ("X", "p_mean", "p", "p_internal", "y_prob", "y")


def _forecast_key(f: Forecast) -> tuple:
    return tuple(f.points), tuple(f.probs), f.internal


def first_difference(
    a: Result, b: Result, fields: Iterable[str] = _TRACE_FIELDS, rounds: int | None = None, forecasts: bool = True
) -> tuple[int, str, object, object] | None:
    """The first round (1-based) and field where two recorded games differ, or None."""
    ra, rb = a.recorder, b.recorder
    n = min(ra.n, rb.n) if rounds is None else rounds
    if rounds is None and ra.n != rb.n:
        return min(ra.n, rb.n) + 1, "rounds played", ra.n, rb.n
    for t in range(n):
        for name in fields:
            va, vb = getattr(ra, name)[t], getattr(rb, name)[t]
            if not np.array_equal(va, vb, equal_nan=True):
                return t + 1, name, va, vb
        if forecasts and ra.forecasts is not None and rb.forecasts is not None:
            fa, fb = ra.forecasts[t], rb.forecasts[t]
            if _forecast_key(fa) != _forecast_key(fb):
                return t + 1, "announced forecast", _show(fa), _show(fb)
    return None


def _show(f: Forecast) -> str:
    s = f"points={f.points} probs={f.probs}"
    return s + (f" internal={f.internal!r}" if f.internal is not None else "")


_FIELD_NAMES = {
    "X": "context x_t",
    "p_mean": "announced forecast mean",
    "p": "realized forecast p_t",
    "p_internal": "internal forecast",
    "y": "outcome y_t",
    "y_prob": "P(y_t = 1) of nature's law",
}


def _plain(v):
    """Numbers and arrays as plain Python values, for messages."""
    if isinstance(v, np.ndarray):
        return v.tolist()
    return v.item() if isinstance(v, np.generic) else v


def describe_difference(diff) -> str:
    t, name, va, vb = diff
    return f"round t={t}, {_FIELD_NAMES.get(name, name)}: {_plain(va)!r} vs {_plain(vb)!r}"
