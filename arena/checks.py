"""The conformance suite: ``check_<property>`` functions that every plugin must pass.

Each check takes a plugin (an instance, or a class with ``params``), plays a few short
games through the arena's own loop (:func:`arena.runner.play`) and raises
:class:`CheckFailure` (an ``AssertionError``) whose message names the plugin, the check,
the round and the values. A check that does not apply to a plugin (the oblivious check
on an adaptive nature, the certificate check on a forecaster that claims none) raises
:class:`NotApplicable` with the reason. Plugin authors run them on their own classes::

    from arena.checks import all_checks
    for check in all_checks("forecaster"):
        check(MyForecaster(alpha=0.1))

Every check plays the plugin's game (the first of its ``games`` that the arena knows, or
``game=``: a name or an :class:`arena.games.Game` with its parameters). Forecasters meet
small probe natures defined here when their game takes binary natures (a coin, a
contextual logistic coin, a contrarian, a scripted bit sequence), and otherwise the
registered natures of their game that build with default parameters; natures meet probe
forecasters (constant, running-mean and randomized forecasts placed inside the game's
forecast space). The checks never import a concrete plugin. An instance passed to a
check is copied before it is played, so pass one that has not played yet.

Examples
--------
>>> from arena.protocols import Forecaster
>>> class Half(Forecaster):
...     name = "half"
...     def predict(self, x): return 0.5
...     def update(self, x, p, y): pass
>>> check_forecasts_in_range(Half(), T=20)
>>> check_no_lookahead(Half(), T=20)
>>> class TooHigh(Half):
...     def predict(self, x): return 1.5
>>> check_forecasts_in_range(TooHigh(), T=20)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
arena.checks.CheckFailure: check_forecasts_in_range: forecaster 'half' (...TooHigh) ... forecast 1.5 is outside ...

References
----------
The protocol (arena/protocols.py: no look-ahead), the certificates (docs/ERRATA.md); the conformance suite (every check on every plugin).
"""

from __future__ import annotations

import builtins
import copy
import inspect
import io
import json
import math
import random
import warnings
from collections.abc import Callable, Iterable, Sequence
from contextlib import contextmanager

import numpy as np
import pandas as pd

from arena.games import GAMES, Game, get_game, plays
from arena.protocols import EMPTY_CONTEXT, Bernoulli, Forecast, Forecaster, Nature, OutcomeLaw
from arena.registry import NATURES, load_plugins
from arena.runner import Result, play

__all__ = [
    "KNOWN_FAILURES",
    "CheckFailure",
    "CoinProbe",
    "ConstantProbe",
    "ContrarianProbe",
    "LogisticProbe",
    "MeanProbe",
    "NotApplicable",
    "RandomizedProbe",
    "ScriptedNature",
    "all_checks",
    "check_claims_hold",
    "check_constructor_stores_only",
    "check_contexts_shape",
    "check_laws_agree_with_samples",
    "check_env",
    "check_env_with_nature",
    "check_fast_path_matches_step_loop",
    "check_forecasts_in_range",
    "check_no_lookahead",
    "check_oblivious_ignores_forecast",
    "check_outcomes_valid",
    "check_plugin",
    "check_reset_clears_state",
    "check_same_seed_same_game",
]

#: (registered plugin name, check function name) -> why the failure is expected. A known
#: failure is recorded here with its reason (the conformance tests mark it xfail, strict),
#: never skipped silently.
KNOWN_FAILURES: dict[tuple[str, str], str] = {}

DEFAULT_T = 60


class CheckFailure(AssertionError):
    """A plugin broke a conformance property; the message says which, where and how."""


class NotApplicable(Exception):
    """The check does not apply to this plugin; ``str(exc)`` is the reason."""


# --------------------------------------------------------------------------- probe players


class ScriptedNature(Nature):
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


def _binary_natures_play(game: Game) -> bool:
    return plays(game, CoinProbe)


def _registered_natures(game: Game) -> list[Nature]:
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


def _default_natures(game: Game, few: bool = False) -> list[Nature]:
    """The opponents of a forecaster: the probes in games with binary natures, else up to four
    registered natures of the game (the adaptive ones first). ``few``: two of them, for the checks
    that play three games per opponent."""
    if _binary_natures_play(game):
        if few:
            return [LogisticProbe(), ContrarianProbe()]
        bits = np.random.default_rng(12345).integers(0, 2, 10_000).astype(float)
        return [CoinProbe(0.3), LogisticProbe(), ContrarianProbe(), ScriptedNature(bits, context_dim=2)]
    natures = sorted(_registered_natures(game), key=lambda n: not n.adaptive)  # stable: by name within
    if not natures:
        raise NotApplicable(
            f"no registered nature of the {game.name!r} game builds with default parameters; pass natures=[...]"
        )
    return natures[: 2 if few else 4]


def _default_forecasters(few: bool = False) -> list[Forecaster]:
    return [MeanProbe(), RandomizedProbe()] if few else [ConstantProbe(0.5), MeanProbe(), RandomizedProbe()]


# --------------------------------------------------------------------------- helpers


class _NullReferee:
    """Scores nothing: the checks only need the recorded trace."""

    def accepts(self, forecaster) -> None:
        """Any search tolerance: nothing is certified."""

    def score(self, game, rec, forecaster):
        return {}, {}, self.curves(rec, forecaster)

    def metrics(self, *args, **kwargs):
        return {}

    def certificates(self, rec, forecaster):
        return {}

    def curves(self, rec, forecaster):
        return pd.DataFrame(columns=["t", "metric", "value"])


def _cls(plugin) -> type:
    return plugin if isinstance(plugin, type) else type(plugin)


def _label(plugin) -> str:
    cls = _cls(plugin)
    kind = "forecaster" if issubclass(cls, Forecaster) else "nature" if issubclass(cls, Nature) else "plugin"
    return f"{kind} {getattr(cls, 'name', '') or '?'!r} ({cls.__module__}.{cls.__qualname__})"


def _nature_label(nature) -> str:
    return repr(nature) if isinstance(nature, str) else repr(getattr(nature, "name", "?"))


def _factory(plugin, params: dict | None, kind: type, check: str) -> Callable[[], object]:
    """A function returning a fresh, unplayed copy of the plugin."""
    if isinstance(plugin, type):
        if not issubclass(plugin, kind):
            raise TypeError(f"{check}: {plugin!r} is not a {kind.__name__} subclass")
        kw = dict(params or {})
        try:
            plugin(**kw)
        except Exception as exc:
            raise CheckFailure(
                f"{check}: {_label(plugin)} cannot be constructed with params={kw!r}: "
                f"{type(exc).__name__}: {exc}; pass params=... for its required parameters"
            ) from exc
        return lambda: plugin(**kw)
    if not isinstance(plugin, kind):
        raise TypeError(f"{check}: {plugin!r} is not a {kind.__name__} (give an instance or a class)")
    if params:
        raise TypeError(f"{check}: params are for a class; {plugin!r} is already an instance")
    proto = copy.deepcopy(plugin)
    return lambda: copy.deepcopy(proto)


def _game_for(plugin, game: str | Game | None, check: str) -> Game:
    """The game the check plays: ``game`` (a name or a Game), or the plugin's first game the arena knows."""
    games = tuple(getattr(plugin, "games", ()))
    if game is None:
        known = [g for g in games if g in GAMES]
        if not known:
            raise NotApplicable(f"{_label(plugin)} plays {games}; the arena implements only {sorted(GAMES)}")
        game = known[0]
    g = get_game(game)
    if not plays(g, plugin):
        raise NotApplicable(f"{_label(plugin)} does not play the {g.name!r} game (it plays {games})")
    return g


def _horizon(T: int, nature) -> int:
    length = getattr(nature, "length", None) if isinstance(nature, Nature) else None
    return min(T, length) if length else T


@contextmanager
def _global_rngs(seed: int):
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


def _play(
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
            with _global_rngs(global_seed):
                res = play(game, fc, nature, T, seed, **kw)
    except Exception as exc:  # outside the loop's forfeit handling: reset, the first context, the referee
        raise CheckFailure(
            f"{check}: the game of T={T} between forecaster {fc.name!r} and nature {nature.name!r} "
            f"(seed={seed}) could not be played: {type(exc).__name__}: {exc}"
        ) from exc
    if res.forfeit is not None:
        f = res.forfeit
        culprit = _label(fc._inner if isinstance(fc, _Spy) else fc) if f.who == "forecaster" else _label(nature)
        raise CheckFailure(
            f"{check}: {culprit} forfeited at round t={f.step} of a game of T={T} "
            f"between forecaster {fc.name!r} and nature {nature.name!r} (seed={seed}): {f.reason}"
        )
    return res


_TRACE_FIELDS = ("X", "p_mean", "p", "p_internal", "y_prob", "y")


def _forecast_key(f: Forecast) -> tuple:
    return tuple(f.points), tuple(f.probs), f.internal


def _first_difference(
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


def _describe(diff) -> str:
    t, name, va, vb = diff
    return f"round t={t}, {_FIELD_NAMES.get(name, name)}: {_plain(va)!r} vs {_plain(vb)!r}"


# --------------------------------------------------------------------------- forecaster checks


class _Spy(Forecaster):
    """Wraps a forecaster and records the first return of ``predict`` that is not a Forecast or a real."""

    def __init__(self, inner: Forecaster, low: float, high: float):
        self._inner, self._low, self._high = inner, low, high
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
            self.violation = _bad_forecast(out, self._low, self._high, self._t)
        return out

    def update(self, x, p, y):
        self._inner.update(x, p, y)


def _bad_forecast(out, low: float, high: float, t: int) -> str | None:
    if isinstance(out, Forecast):
        if out.internal is not None and not (
            isinstance(out.internal, (int, float, np.floating, np.integer))
            and math.isfinite(out.internal)
            and low <= out.internal <= high
        ):
            return f"round t={t}: internal forecast {out.internal!r} is not a finite number in [{low}, {high}]"
        return None
    if isinstance(out, (bool, np.bool_)) or not isinstance(out, (int, float, np.floating, np.integer)):
        return (
            f"round t={t}: predict returned {out!r} of type {type(out).__name__}; return a float or an arena.Forecast"
        )
    if not (math.isfinite(out) and low <= out <= high):
        return f"round t={t}: forecast {out!r} is outside the forecast space [{low}, {high}]"
    return None


def check_forecasts_in_range(
    forecaster,
    *,
    T: int = DEFAULT_T,
    seed: int = 0,
    natures: Sequence | None = None,
    params: dict | None = None,
    game: str | Game | None = None,
) -> None:
    """Every forecast is a float or a valid :class:`Forecast` inside the game's forecast space.

    Plays ``T`` rounds against each of ``natures`` (default: the probe natures, one of
    them adaptive and one with contexts in R^2).
    """
    check = "check_forecasts_in_range"
    make = _factory(forecaster, params, Forecaster, check)
    g = _game_for(forecaster, game, check)
    for nature in natures or _default_natures(g):
        fc = make()
        spy = _Spy(fc, g.forecast_low, g.forecast_high)
        T_n = _horizon(T, nature)
        try:
            _play(check, g, spy, copy.deepcopy(nature), T_n, seed)
        except CheckFailure:
            if spy.violation is None:
                raise
        if spy.violation is not None:
            raise CheckFailure(
                f"{check}: {_label(fc)} against nature {_nature_label(nature)} (seed={seed}): {spy.violation}"
            )


def _scripts(game: Game, T: int, context_dim: int, seed: int) -> tuple[dict, np.ndarray, Callable]:
    """A scripted nature's arguments for ``game``, its outcomes, and ``alter(s)``: outcomes that agree
    on rounds 1..s and differ from round s+1 on.

    Binary outcomes are fixed random bits (altered by flipping); in a game without binary
    natures, the outcomes and contexts of an oblivious registered nature of the game, played
    twice (altered by taking the second play's outcomes).
    """
    if _binary_natures_play(game):
        bits = np.random.default_rng(2024).integers(0, 2, T).astype(float)
        contexts = np.random.default_rng(2025).standard_normal((T, context_dim))
        return {"contexts": contexts}, bits, lambda s: np.concatenate([bits[:s], 1.0 - bits[s:]])
    sources = [
        n
        for n in _registered_natures(game)
        if not n.adaptive and not n.second_guessing and (n.length is None or n.length >= T)
    ]
    if not sources:
        raise NotApplicable(
            f"no oblivious registered nature of the {game.name!r} game builds with default "
            "parameters to script outcomes from"
        )
    source = sources[0]
    a, b = (
        _play("check_no_lookahead", game, ConstantProbe(0.5), copy.deepcopy(source), T, s).recorder
        for s in (seed, seed + 1)
    )
    y, other = a.y.copy(), b.y.copy()
    binary = bool(np.all((y == 0.0) | (y == 1.0)))

    def alter(s: int) -> np.ndarray:
        tail = 1.0 - y[s:] if binary else other[s:]
        if tail[0] == y[s]:
            raise NotApplicable(f"two plays of nature {source.name!r} gave the same outcome at round {s + 1}")
        return np.concatenate([y[:s], tail])

    script = {"contexts": a.X.copy(), "games": (game.name,), "group_dim": int(source.group_dim)}
    return script, y, alter


def check_no_lookahead(
    forecaster,
    *,
    T: int = 40,
    seed: int = 0,
    splits: Sequence[int] | None = None,
    context_dim: int = 2,
    params: dict | None = None,
    game: str | Game | None = None,
) -> None:
    """The forecast of round t depends only on rounds before t, never on y_t.

    For each split ``s`` (default 0, 1, 2, 5 and T/2) two scripted outcome sequences agree
    on rounds 1..s and differ from round s+1 on (binary outcomes: every later bit
    flipped); with the same contexts and seed (hence the same coins) the announced
    forecasts of rounds 1..s+1 (points, probabilities and internal value) must be identical.
    """
    check = "check_no_lookahead"
    make = _factory(forecaster, params, Forecaster, check)
    g = _game_for(forecaster, game, check)
    script, outcomes, alter = _scripts(g, T, context_dim, seed)
    for s in splits if splits is not None else sorted({0, 1, 2, 5, T // 2}):
        if not 0 <= s < T:
            raise ValueError(f"{check}: split {s} must be in [0, T={T})")
        fa, fb = make(), make()
        ra = _play(check, g, fa, ScriptedNature(outcomes, **script), T, seed)
        rb = _play(check, g, fb, ScriptedNature(alter(s), **script), T, seed)
        diff = _first_difference(ra, rb, fields=("p_mean", "p_internal"), rounds=s + 1)
        if diff is not None:
            raise CheckFailure(
                f"{check}: {_label(fa)} looked ahead: two outcome sequences that "
                f"{f'agree on rounds 1..{s} and ' if s else ''}differ from round {s + 1} on got different "
                f"forecasts at {_describe(diff)} "
                f"(seed={seed}); a forecast may depend only on x_1..x_t and the outcomes before round t"
            )


def _check_same_seed(plugin, make, kind: str, partners: Sequence, game: Game, T: int, seed: int) -> None:
    check = "check_same_seed_same_game"
    for partner in partners:
        runs = []
        for global_seed in (1, 2):  # the global streams differ between the two plays
            if kind == "forecaster":
                fc, nature = make(), copy.deepcopy(partner)
            else:
                fc, nature = copy.deepcopy(partner), make()
            runs.append(_play(check, game, fc, nature, _horizon(T, nature), seed, global_seed=global_seed))
        diff = _first_difference(*runs)
        if diff is not None:
            other = f"nature {partner.name!r}" if kind == "forecaster" else f"forecaster {partner.name!r}"
            raise CheckFailure(
                f"{check}: {_label(plugin)} played two different games against {other} with the same "
                f"seed={seed}: first difference at {_describe(diff)}. Draw randomness only from the rng given "
                "to reset() (never np.random.* or random.*), and keep no state outside the instance"
            )


def check_same_seed_same_game(
    plugin,
    *,
    T: int = DEFAULT_T,
    seed: int = 0,
    partners: Sequence | None = None,
    params: dict | None = None,
    game: str | Game | None = None,
) -> None:
    """Two fresh copies played with the same seed give identical traces (forecaster or nature).

    The global ``np.random`` and ``random`` streams are seeded differently for the two
    plays, so a plugin that uses them fails. ``partners`` are the opponents (probe
    natures for a forecaster, probe forecasters, one of them randomized, for a nature).
    """
    check = "check_same_seed_same_game"
    kind = "forecaster" if issubclass(_cls(plugin), Forecaster) else "nature"
    make = _factory(plugin, params, Forecaster if kind == "forecaster" else Nature, check)
    g = _game_for(plugin, game, check)
    partners = partners or (_default_natures(g, few=True) if kind == "forecaster" else _default_forecasters(few=True))
    _check_same_seed(plugin, make, kind, partners, g, T, seed)


def check_reset_clears_state(
    plugin,
    *,
    T: int = DEFAULT_T,
    seed: int = 0,
    partners: Sequence | None = None,
    params: dict | None = None,
    game: str | Game | None = None,
) -> None:
    """``reset`` clears all state: a played instance, reset and replayed, plays like a fresh one.

    The instance first plays a game with seed ``seed + 1``, then one with ``seed``; a fresh
    copy plays the game with ``seed``; the two traces must be identical. (The games keep no
    Forecast objects, so a forecaster's compiled oblivious path, if any, plays them.)
    """
    check = "check_reset_clears_state"
    kind = "forecaster" if issubclass(_cls(plugin), Forecaster) else "nature"
    make = _factory(plugin, params, Forecaster if kind == "forecaster" else Nature, check)
    g = _game_for(plugin, game, check)
    partners = partners or (_default_natures(g, few=True) if kind == "forecaster" else _default_forecasters(few=True))
    for partner in partners:
        used = make()

        def game_with(me, s, partner=partner):
            fc, nature = (me, copy.deepcopy(partner)) if kind == "forecaster" else (copy.deepcopy(partner), me)
            return _play(check, g, fc, nature, _horizon(T, nature), s, keep_forecasts=False)

        game_with(used, seed + 1)
        again = game_with(used, seed)
        fresh = game_with(make(), seed)
        diff = _first_difference(again, fresh)
        if diff is not None:
            other = f"nature {partner.name!r}" if kind == "forecaster" else f"forecaster {partner.name!r}"
            raise CheckFailure(
                f"{check}: {_label(plugin)} played differently after reset() than a fresh instance against "
                f"{other} (seed={seed}, after a first game with seed={seed + 1}): first difference at "
                f"{_describe(diff)}. reset() must clear every piece of state that update()/observe() changes"
            )


def check_claims_hold(
    forecaster,
    *,
    T: int = 200,
    seeds: Sequence[int] = (0, 1),
    natures: Sequence | None = None,
    params: dict | None = None,
    game: str | Game | None = None,
    referee=None,
) -> list[dict]:
    """Every certificate the forecaster claims holds on every run against ``natures`` (docs/ERRATA.md, certificates).

    Deterministic certificates must hold on every run where they apply (a certificate whose
    premise is absent is ``n/a``, reported with its reason, never a pass). Probabilistic ones
    (``Certificate.probabilistic``, e.g. rounded calibration: at most delta of runs may
    fail) are reported, not asserted per run. Returns one dict per (nature, seed,
    certificate): nature, seed, certificate, value, bound, holds, verdict, reason, probabilistic.
    """
    from arena.referee import Referee

    check = "check_claims_hold"
    make = _factory(forecaster, params, Forecaster, check)
    g = _game_for(forecaster, game, check)
    claims = tuple(make().claims)
    if not claims:
        raise NotApplicable(f"{_label(forecaster)} claims no certificate")
    report = []
    for nature in natures or _default_natures(g):
        for seed in seeds:
            fc, nat = make(), copy.deepcopy(nature)
            res = _play(check, g, fc, nat, _horizon(T, nat), seed, referee=referee or Referee())
            missing = set(claims) - set(res.certificates)
            if missing:
                raise CheckFailure(
                    f"{check}: {_label(fc)} claims {sorted(missing)} but the referee produced no "
                    f"such certificate against nature {nat.name!r}"
                )
            for name, c in res.certificates.items():
                report.append(
                    {
                        "nature": nat.name,
                        "seed": seed,
                        "certificate": name,
                        "value": c.value,
                        "bound": c.bound,
                        "holds": c.holds,
                        "verdict": c.verdict,
                        "reason": c.reason,
                        "probabilistic": c.probabilistic,
                    }
                )
                if c.probabilistic or c.holds is None:  # not applicable (the reason is in the report): no verdict
                    continue
                if c.holds is not True:
                    raise CheckFailure(
                        f"{check}: {_label(fc)} claims the {name!r} certificate, which failed against nature {nat.name!r} "
                        f"(T={res.recorder.n}, seed={seed}): value {c.value!r} > bound {c.bound!r}"
                        + (f" ({c.note})" if c.note else "")
                        + ". A deterministic certificate that fails on any run is a bug (docs/ERRATA.md, certificates)"
                    )
    return report


class _OpenSpy:
    """Records the files opened while it is active."""

    def __init__(self):
        self.opened: list[str] = []

    @contextmanager
    def watching(self):
        real_open, real_io_open = builtins.open, io.open

        def spy(file, *args, **kwargs):
            self.opened.append(repr(file))
            return real_open(file, *args, **kwargs)

        builtins.open = io.open = spy
        try:
            yield self
        finally:
            builtins.open, io.open = real_open, real_io_open


def _params_json(plugin, check: str, state: bool = False) -> str:
    """params() as JSON; ``state``: with every other public attribute of the instance too (what must not
    differ between two instances built alike, nor change when the plugin plays)."""
    try:
        params = plugin.params()
    except AttributeError:  # a parameter stored under another name: the public attributes show which
        params = None
    if params is not None and not isinstance(params, dict):
        raise CheckFailure(f"{check}: {_label(plugin)}.params() returned {type(params).__name__}, not a dict")
    public = {k: v for k, v in vars(plugin).items() if not k.startswith("_") and k not in ("rng", "game")}
    params = public if params is None else {**public, **params} if state else params
    for k, v in params.items():
        try:
            json.dumps(v, allow_nan=True)
        except (TypeError, ValueError) as exc:
            raise CheckFailure(
                f"{check}: {_label(plugin)}.params()[{k!r}] = {v!r} (type {type(v).__name__}) "
                f"is not JSON-serializable ({exc}); store plain numbers, strings, lists or dicts "
                "(result rows record params() as JSON)"
            ) from None
    return json.dumps(params, sort_keys=True, allow_nan=True)


def check_constructor_stores_only(plugin, *, params: dict | None = None, T: int = 20, seed: int = 0) -> None:
    """Constructors only store parameters, and ``params()`` records them.

    Constructing twice with the same arguments draws no global randomness, opens no
    file and gives equal ``params()``; ``params()`` is JSON-serializable, rebuilds an
    equal instance through the constructor, and does not change when the plugin plays.
    """
    check = "check_constructor_stores_only"
    cls = _cls(plugin)
    kind = Forecaster if issubclass(cls, Forecaster) else Nature
    if isinstance(plugin, type):
        kw = dict(params or {})
    else:
        if params:
            raise TypeError(f"{check}: params are for a class; {plugin!r} is already an instance")
        kw = json.loads(_params_json(plugin, check))
    spy = _OpenSpy()
    np_state, py_state = np.random.get_state(), random.getstate()
    try:
        with spy.watching():
            a, b = cls(**kw), cls(**kw)
    except Exception as exc:
        raise CheckFailure(
            f"{check}: {_label(cls)}({', '.join(f'{k}={v!r}' for k, v in kw.items())}) raised "
            f"{type(exc).__name__}: {exc}; the constructor must accept the keys of params()"
        ) from exc
    np_after, py_after = np.random.get_state(), random.getstate()
    np.random.set_state(np_state)
    random.setstate(py_state)
    if any(not np.array_equal(x, y) for x, y in zip(np_state[1:], np_after[1:])) or py_state != py_after:
        raise CheckFailure(
            f"{check}: constructing {_label(cls)} consumed global randomness (np.random or random); "
            "draw random numbers in reset(rng) from the rng it is given"
        )
    if spy.opened:
        raise CheckFailure(
            f"{check}: constructing {_label(cls)} opened {', '.join(spy.opened)}; "
            "read files in reset() (or lazily), not in __init__"
        )
    sa, sb = _params_json(a, check, state=True), _params_json(b, check, state=True)
    if sa != sb:
        raise CheckFailure(
            f"{check}: two instances of {_label(cls)} built with the same arguments have different "
            f"params(): {sa} vs {sb}; the constructor must only store its parameters"
        )
    ja = _params_json(a, check)
    try:
        rebuilt = cls(**json.loads(ja))
    except Exception as exc:
        raise CheckFailure(
            f"{check}: {_label(cls)}: rebuilding it as {cls.__name__}(**params()) with params()={ja} "
            f"raised {type(exc).__name__}: {exc}; params() must return the constructor's "
            "parameters"
        ) from exc
    if _params_json(rebuilt, check) != ja:
        raise CheckFailure(
            f"{check}: {_label(cls)}: rebuilding it as {cls.__name__}(**params()) gives params() "
            f"{_params_json(rebuilt, check)}, not {ja}; params() must return the constructor's "
            "parameters"
        )
    g = _game_for(cls, None, check)
    if kind is Forecaster:
        nature = _default_natures(g)[0]
        _play(check, g, a, nature, _horizon(T, nature), seed)
    else:
        _play(check, g, MeanProbe(), a, _horizon(T, a), seed)
    after = _params_json(a, check, state=True)
    if after != sa:
        raise CheckFailure(
            f"{check}: {_label(cls)}.params() changed after playing {T} rounds: {sa} before, "
            f"{after} after; keep game state in attributes whose names start with '_'"
        )


# --------------------------------------------------------------------------- nature checks


def check_outcomes_valid(
    nature,
    *,
    T: int = DEFAULT_T,
    seed: int = 0,
    forecasters: Sequence | None = None,
    params: dict | None = None,
    game: str | Game | None = None,
) -> None:
    """Every outcome is in the game's outcome space; every law's P(y = 1) is in [0, 1] and
    consistent with the drawn outcome (never y = 1 with P(y = 1) = 0)."""
    check = "check_outcomes_valid"
    make = _factory(nature, params, Nature, check)
    g = _game_for(nature, game, check)
    for fc in forecasters or [*_default_forecasters(), ConstantProbe(0.0), ConstantProbe(1.0)]:
        nat = make()
        res = _play(check, g, copy.deepcopy(fc), nat, _horizon(T, nat), seed)
        rec = res.recorder
        for t in range(rec.n):
            q, y = float(rec.y_prob[t]), float(rec.y[t])
            if np.isnan(q):
                continue
            if not 0.0 <= q <= 1.0:
                raise CheckFailure(
                    f"{check}: {_label(nat)} returned at round t={t + 1} a law with P(y = 1) = {q!r}, "
                    f"outside [0, 1] (against forecaster {fc.name!r}, seed={seed})"
                )
            if (q == 0.0 and y != 0.0) or (q == 1.0 and y != 1.0):
                raise CheckFailure(
                    f"{check}: {_label(nat)} at round t={t + 1}: its law gives P(y = 1) = {q!r} but "
                    f"sampling it gave y = {y!r}; sample() and cdf() disagree"
                )
        _check_cdf_at_atoms(check, nat, fc, rec, seed)


def _check_cdf_at_atoms(check: str, nat, fc, rec, seed: int) -> None:
    """Games that record nature's CDF at the forecast atoms (quantile): F in [0, 1], monotone in
    the atom, and consistent with the drawn outcome (F(a) = 0 never with y <= a, F(a) = 1 never with y > a)."""
    if getattr(rec, "cdf_at_atoms", None) is None:
        return
    for t in range(rec.n):
        (a, b), (Fa, Fb), y = rec.atoms[t], rec.cdf_at_atoms[t], float(rec.y[t])
        where = f"{_label(nat)} at round t={t + 1} (against forecaster {fc.name!r}, seed={seed})"
        if not (0.0 <= Fa <= 1.0 and 0.0 <= Fb <= 1.0):
            raise CheckFailure(
                f"{check}: {where}: its law's CDF at the forecast atoms is ({Fa!r}, {Fb!r}), outside [0, 1]"
            )
        if (a <= b and Fa > Fb) or (b <= a and Fb > Fa):
            raise CheckFailure(f"{check}: {where}: its law's CDF decreases: F({a!r}) = {Fa!r}, F({b!r}) = {Fb!r}")
        for v, F in ((a, Fa), (b, Fb)):
            if (F == 0.0 and y <= v) or (F == 1.0 and y > v):
                raise CheckFailure(
                    f"{check}: {where}: its law gives P(y <= {v!r}) = {F!r} but sampling it gave "
                    f"y = {y!r}; sample() and cdf() disagree"
                )


#: Draws per law in :func:`check_laws_agree_with_samples`, and its Kolmogorov-Smirnov level.
LAW_DRAWS = 2000
LAW_ALPHA = 1e-6


def ks_distance(law, draws: np.ndarray) -> float:
    """max over the drawn values v of |F_n(v) - F(v)|, F_n the empirical CDF of ``draws`` and F = ``law.cdf``.

    Examples
    --------
    >>> round(ks_distance(Bernoulli(0.5), np.array([0.0, 0.0, 0.0, 1.0])), 6)
    0.25
    """
    v, counts = np.unique(np.asarray(draws, float), return_counts=True)
    emp = np.cumsum(counts) / counts.sum()
    return float(np.max(np.abs(emp - np.array([law.cdf(float(a)) for a in v]))))


def check_laws_agree_with_samples(
    nature,
    *,
    T: int = DEFAULT_T,
    seed: int = 0,
    params: dict | None = None,
    game: str | Game | None = None,
    laws: int = 3,
    draws: int = LAW_DRAWS,
) -> None:
    """The laws a nature returns are what they sample: a Kolmogorov-Smirnov test of ``cdf`` against
    ``draws`` samples of up to ``laws`` of them (level :data:`LAW_ALPHA`), and in the quantile game
    no mass at ymin (F(ymin) = 0, every draw > ymin: docs/ERRATA.md)."""
    check = "check_laws_agree_with_samples"
    make = _factory(nature, params, Nature, check)
    g = _game_for(nature, game, check)
    nat, seen = make(), []
    respond = nat.respond

    def spy(t, x, forecast):
        answer = respond(t, x, forecast)
        if isinstance(answer, OutcomeLaw):
            seen.append(answer)
        return answer

    nat.respond = spy  # an instance attribute: the arena calls it in place of the method
    _play(check, g, ConstantProbe(0.5), nat, _horizon(T, nat), seed)
    if not seen:
        raise NotApplicable(f"{_label(nature)} answers with plain outcomes, not laws")
    rng = np.random.default_rng(seed)
    crit = math.sqrt(-math.log(LAW_ALPHA / 2) / (2 * draws))
    for i in np.unique(np.linspace(0, len(seen) - 1, min(laws, len(seen))).astype(int)):
        law = seen[i]
        y = np.array([law.sample(rng) for _ in range(draws)], float)
        where = f"{_label(nature)}: the law of round t={i + 1} ({law!r})"
        ymin = getattr(g, "ymin", None)
        if ymin is not None and (law.cdf(ymin) > 0.0 or np.any(y <= ymin)):
            raise CheckFailure(
                f"{check}: {where} has mass at ymin={ymin!r} (F(ymin) = {law.cdf(ymin)!r}, "
                f"{int(np.sum(y <= ymin))} of {draws} draws <= ymin); quantile outcomes must be > ymin"
            )
        d = ks_distance(law, y)
        if d > crit:
            raise CheckFailure(
                f"{check}: {where}: its cdf disagrees with its sample (Kolmogorov-Smirnov distance "
                f"{d:.4g} over {draws} draws > {crit:.4g}, level {LAW_ALPHA:g}); fix cdf() or sample()"
            )


def check_contexts_shape(
    nature, *, T: int = DEFAULT_T, seed: int = 0, params: dict | None = None, game: str | Game | None = None
) -> None:
    """``context_dim`` is an integer >= 0 and every context is ``context_dim`` finite floats."""
    check = "check_contexts_shape"
    make = _factory(nature, params, Nature, check)
    g = _game_for(nature, game, check)
    nat = make()
    d = nat.context_dim
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 0:
        raise CheckFailure(f"{check}: {_label(nat)}.context_dim = {d!r}; it must be an integer >= 0")
    for fc in (ConstantProbe(0.5), RandomizedProbe()):
        nat = make()
        res = _play(check, g, fc, nat, _horizon(T, nat), seed)
        if res.recorder.X.shape != (res.recorder.n, d):
            raise CheckFailure(
                f"{check}: {_label(nat)} recorded contexts of shape {res.recorder.X.shape}, "
                f"expected ({res.recorder.n}, {d})"
            )


def check_oblivious_ignores_forecast(
    nature, *, T: int = DEFAULT_T, seed: int = 0, params: dict | None = None, game: str | Game | None = None
) -> None:
    """An oblivious nature (``adaptive = False``) plays the same contexts, outcomes and laws
    whatever the forecaster: constant 0, constant 1, a running mean and a randomized one."""
    check = "check_oblivious_ignores_forecast"
    make = _factory(nature, params, Nature, check)
    if getattr(make(), "adaptive", False):  # an instance: a panel is adaptive or not by its parameters
        raise NotApplicable(f"{_label(nature)} is adaptive (adaptive = True): it may react to the forecast by design")
    g = _game_for(nature, game, check)
    forecasters = [ConstantProbe(0.0), ConstantProbe(1.0), MeanProbe(), RandomizedProbe()]
    runs = []
    for fc in forecasters:
        nat = make()
        runs.append(_play(check, g, fc, nat, _horizon(T, nat), seed))
    for fc, run in zip(forecasters[1:], runs[1:]):
        diff = _first_difference(runs[0], run, fields=("X", "y", "y_prob"), forecasts=False)
        if diff is not None:
            raise CheckFailure(
                f"{check}: {_label(nature)} declares adaptive = False but its play depends on the forecaster: "
                f"against the probe forecasters {_probe(forecasters[0])} and {_probe(fc)} with seed={seed}, "
                f"first difference at {_describe(diff)}. Declare adaptive = True, or ignore the "
                "forecast (and observe()) in respond()/context()"
            )


def _probe(fc: Forecaster) -> str:
    return f"'constant {fc.c:g}'" if isinstance(fc, ConstantProbe) else repr(fc.name)


#: Gymnasium's advice for learning agents, not defects of a game: unbounded contexts, no spec
#: (an env made by hand), and a forecast space other than [-1, 1] or [0, 1] (the quantile game's).
_BENIGN_ENV_WARNINGS = (
    "minimum value is -infinity",
    "maximum value is infinity",
    "not having a spec",
    "recommend using a symmetric and normalized space",
)


def _check_one_env(env, label: str, check: str) -> None:
    from gymnasium.utils.env_checker import check_env as gym_check_env

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            gym_check_env(env)
        except Exception as exc:
            raise CheckFailure(
                f"{check}: gymnasium's check_env failed for {label}: {type(exc).__name__}: {exc}"
            ) from exc
    bad = [str(w.message) for w in caught if not any(s in str(w.message) for s in _BENIGN_ENV_WARNINGS)]
    if bad:
        raise CheckFailure(f"{check}: gymnasium's check_env warned for {label}: " + " | ".join(bad))
    _check_env_determinism(env, label, check)


def _episode(env, seed: int, steps: int) -> list:
    """The observations, rewards and flags of the first ``steps`` steps at the middle action."""
    space = env.action_space
    mid = (np.asarray(space.low, dtype=np.float64) + np.asarray(space.high, dtype=np.float64)) / 2
    action = mid.astype(space.dtype)
    obs, _ = env.reset(seed=seed)
    out = [np.array(obs, copy=True)]
    for _ in range(steps):
        obs, reward, terminated, truncated, _ = env.step(action)
        out.append((np.array(obs, copy=True), float(reward), bool(terminated), bool(truncated)))
        if terminated or truncated:
            break
    return out


def _check_env_determinism(env, label: str, check: str, steps: int = 5) -> None:
    """reset(seed) twice, then the same actions: the same observations and rewards (whether or not
    gymnasium checks it: it does so only for environments with a spec)."""
    from gymnasium.utils.env_checker import data_equivalence

    a, b = _episode(env, 123, steps), _episode(env, 123, steps)
    for i, (u, v) in enumerate(zip(a, b)):
        if not data_equivalence(u, v, exact=True):
            where = "reset(seed=123)" if i == 0 else f"step {i} after reset(seed=123)"
            raise CheckFailure(
                f"{check}: {label} is not deterministic: {where} returned {u!r} and then {v!r}; "
                "derive every random stream from the seed given to reset()"
            )


def check_env(
    env_id_or_env="arena/Binary-v0", natures: Sequence | None = None, *, T: int = 20, game: str | Game | None = None
) -> None:
    """Run ``gymnasium.utils.env_checker.check_env`` on a game environment, once per nature.

    ``env_id_or_env`` is a registered id (made with each of ``natures``: names or
    instances, default the probe natures; ``game`` overrides the id's game, e.g. a Game
    with parameters) or an environment (checked as is). Warnings other than the unbounded
    context space and a missing spec fail the check, and so does an environment whose
    ``reset(seed)`` and steps are not reproducible.
    """
    import gymnasium as gym

    check = "check_env"
    if isinstance(env_id_or_env, gym.Env):
        _check_one_env(env_id_or_env.unwrapped, repr(env_id_or_env), check)
        return
    extra = {} if game is None else {"game": get_game(game)}
    for nature in natures or _default_natures(get_game("binary")):
        T_n = _horizon(T, nature)
        try:
            env = gym.make(env_id_or_env, nature=nature, T=T_n, **extra)
        except Exception as exc:
            raise CheckFailure(
                f"{check}: gym.make({env_id_or_env!r}, nature={_nature_label(nature)}, T={T_n}) "
                f"raised {type(exc).__name__}: {exc}"
            ) from exc
        _check_one_env(env.unwrapped, f"{env_id_or_env!r} with nature {_nature_label(nature)}", check)


def _env_id(game: Game) -> str | None:
    """The Gymnasium id registered for ``game`` (an arena ForecastEnv with that game), if any."""
    import gymnasium as gym

    for env_id, spec in gym.registry.items():
        if spec.entry_point == "arena.env:ForecastEnv" and (spec.kwargs or {}).get("game") == game.name:
            return env_id
    return None


def check_env_with_nature(nature, *, T: int = 20, params: dict | None = None, game: str | Game | None = None) -> None:
    """Gymnasium's ``check_env`` passes for the environment of the nature's game with this nature
    (made with ``gym.make`` from the game's registered id when there is one)."""
    from arena.env import ForecastEnv

    check = "check_env_with_nature"
    make = _factory(nature, params, Nature, check)
    g = _game_for(nature, game, check)
    nat = make()
    env_id = _env_id(g)
    if env_id is not None:
        check_env(env_id, [nat], T=T, game=g)
    else:
        _check_one_env(ForecastEnv(nat, _horizon(T, nat), g), f"the {g.name!r} game with {_label(nat)}", check)


def check_fast_path_matches_step_loop(
    forecaster,
    *,
    T: int = DEFAULT_T,
    seed: int = 0,
    natures: Sequence | None = None,
    params: dict | None = None,
    game: str | Game | None = None,
) -> None:
    """A forecaster that offers ``play_oblivious`` (all rounds at once against an oblivious nature)
    records exactly the game that the step loop records: same contexts, forecasts and outcomes."""
    check = "check_fast_path_matches_step_loop"
    make = _factory(forecaster, params, Forecaster, check)
    g = _game_for(forecaster, game, check)
    if not callable(make().play_oblivious):
        raise NotApplicable(f"{_label(forecaster)} has no compiled oblivious path (play_oblivious)")
    if "fast_path" not in inspect.signature(play).parameters:
        raise NotApplicable("arena.runner.play has no fast_path switch")
    oblivious = [n for n in (natures or _default_natures(g)) if not getattr(n, "adaptive", False)]
    for nature in oblivious:
        T_n = _horizon(T, nature)
        runs = [
            _play(check, g, make(), copy.deepcopy(nature), T_n, seed, keep_forecasts=False, fast_path=fast)
            for fast in (True, False)
        ]
        diff = _first_difference(*runs, forecasts=False)
        if diff is not None:
            raise CheckFailure(
                f"{check}: {_label(forecaster)}'s play_oblivious recorded a different game from the step loop's "
                f"against nature {nature.name!r} (T={T_n}, seed={seed}): first difference at {_describe(diff)} "
                "(fast path first)"
            )


# --------------------------------------------------------------------------- the suite


_FORECASTER_CHECKS = (
    check_forecasts_in_range,
    check_no_lookahead,
    check_same_seed_same_game,
    check_reset_clears_state,
    check_claims_hold,
    check_constructor_stores_only,
    check_fast_path_matches_step_loop,
)
_NATURE_CHECKS = (
    check_outcomes_valid,
    check_contexts_shape,
    check_same_seed_same_game,
    check_reset_clears_state,
    check_oblivious_ignores_forecast,
    check_constructor_stores_only,
    check_env_with_nature,
    check_laws_agree_with_samples,
)


def all_checks(kind: str) -> list[Callable]:
    """The check functions for ``kind`` (``"forecaster"`` or ``"nature"``).

    A check that does not apply to a particular plugin raises :class:`NotApplicable`.

    Examples
    --------
    >>> [c.__name__ for c in all_checks("nature")][:2]
    ['check_outcomes_valid', 'check_contexts_shape']
    """
    table = {"forecaster": _FORECASTER_CHECKS, "nature": _NATURE_CHECKS}
    if kind not in table:
        raise ValueError(f"all_checks: kind={kind!r}; expected 'forecaster' or 'nature'")
    return list(table[kind])


def check_plugin(plugin, *, params: dict | None = None) -> dict[str, str]:
    """Run every applicable check on ``plugin``; raise one :class:`CheckFailure` listing all failures.

    Returns check name -> ``"passed"`` or ``"not applicable: <reason>"``. Known failures
    (:data:`KNOWN_FAILURES`) are reported as ``"known failure: <reason>"`` when they fail.
    """
    cls = _cls(plugin)
    kind = "forecaster" if issubclass(cls, Forecaster) else "nature"
    verdicts, failures = {}, []
    for check in all_checks(kind):
        try:
            check(plugin, params=params) if isinstance(plugin, type) else check(plugin)
            verdicts[check.__name__] = "passed"
        except NotApplicable as exc:
            verdicts[check.__name__] = f"not applicable: {exc}"
        except AssertionError as exc:
            known = KNOWN_FAILURES.get((cls.name, check.__name__))
            verdicts[check.__name__] = f"known failure: {known}" if known else "failed"
            if not known:
                failures.append(str(exc))
    if failures:
        raise CheckFailure(f"{len(failures)} check(s) failed for {_label(cls)}:\n" + "\n".join(failures))
    return verdicts
