"""The checks of any plugin's state, forecaster or nature: the same seed plays the same game, ``reset``
clears the state, and the constructor only stores the parameters that ``params()`` records."""

from __future__ import annotations

import builtins
import copy
import io
import json
import random
from collections.abc import Sequence
from contextlib import contextmanager

import numpy as np

from arena.checks.play import (
    DEFAULT_T,
    CheckFailure,
    class_of,
    describe_difference,
    factory,
    first_difference,
    game_for,
    horizon,
    play_checked,
    plugin_label,
)
from arena.checks.probes import MeanProbe, default_forecasters, default_natures
from arena.games import Game
from arena.protocols import Forecaster, Nature


def _opponents(plugin, params: dict | None, game, partners: Sequence | None, check: str):
    """The plugin's kind, its factory, its game and its opponents (default: probes of the other kind)."""
    kind = "forecaster" if issubclass(class_of(plugin), Forecaster) else "nature"
    make = factory(plugin, params, Forecaster if kind == "forecaster" else Nature, check)
    g = game_for(plugin, game, check)
    partners = partners or (default_natures(g, few=True) if kind == "forecaster" else default_forecasters(few=True))
    return kind, make, g, partners


def _check_same_seed(plugin, make, kind: str, partners: Sequence, game: Game, T: int, seed: int) -> None:
    check = "check_same_seed_same_game"
    for partner in partners:
        runs = []
        for global_seed in (1, 2):  # the global streams differ between the two plays
            if kind == "forecaster":
                fc, nature = make(), copy.deepcopy(partner)
            else:
                fc, nature = copy.deepcopy(partner), make()
            runs.append(play_checked(check, game, fc, nature, horizon(T, nature), seed, global_seed=global_seed))
        diff = first_difference(runs[0], runs[1])
        if diff is not None:
            other = f"nature {partner.name!r}" if kind == "forecaster" else f"forecaster {partner.name!r}"
            raise CheckFailure(
                f"{check}: {plugin_label(plugin)} played two different games against {other} with the same "
                f"seed={seed}: first difference at {describe_difference(diff)}. Draw randomness only from the rng "
                "given to reset() (never np.random.* or random.*), and keep no state outside the instance"
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
    kind, make, g, partners = _opponents(plugin, params, game, partners, check)
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
    kind, make, g, partners = _opponents(plugin, params, game, partners, check)
    for partner in partners:
        used = make()

        def game_with(me, s, partner=partner):
            fc, nature = (me, copy.deepcopy(partner)) if kind == "forecaster" else (copy.deepcopy(partner), me)
            return play_checked(check, g, fc, nature, horizon(T, nature), s, keep_forecasts=False)

        game_with(used, seed + 1)
        again = game_with(used, seed)
        fresh = game_with(make(), seed)
        diff = first_difference(again, fresh)
        if diff is not None:
            other = f"nature {partner.name!r}" if kind == "forecaster" else f"forecaster {partner.name!r}"
            raise CheckFailure(
                f"{check}: {plugin_label(plugin)} played differently after reset() than a fresh instance against "
                f"{other} (seed={seed}, after a first game with seed={seed + 1}): first difference at "
                f"{describe_difference(diff)}. reset() must clear every piece of state that update()/observe() changes"
            )


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
        raise CheckFailure(f"{check}: {plugin_label(plugin)}.params() returned {type(params).__name__}, not a dict")
    public = {k: v for k, v in vars(plugin).items() if not k.startswith("_") and k not in ("rng", "game")}
    params = public if params is None else {**public, **params} if state else params
    for k, v in params.items():
        try:
            json.dumps(v, allow_nan=True)
        except (TypeError, ValueError) as exc:
            raise CheckFailure(
                f"{check}: {plugin_label(plugin)}.params()[{k!r}] = {v!r} (type {type(v).__name__}) "
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
    cls = class_of(plugin)
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
            f"{check}: {plugin_label(cls)}({', '.join(f'{k}={v!r}' for k, v in kw.items())}) raised "
            f"{type(exc).__name__}: {exc}; the constructor must accept the keys of params()"
        ) from exc
    np_after, py_after = np.random.get_state(), random.getstate()
    np.random.set_state(np_state)
    random.setstate(py_state)
    if any(not np.array_equal(x, y) for x, y in zip(np_state[1:], np_after[1:], strict=True)) or py_state != py_after:
        raise CheckFailure(
            f"{check}: constructing {plugin_label(cls)} consumed global randomness (np.random or random); "
            "draw random numbers in reset(rng) from the rng it is given"
        )
    if spy.opened:
        raise CheckFailure(
            f"{check}: constructing {plugin_label(cls)} opened {', '.join(spy.opened)}; "
            "read files in reset() (or lazily), not in __init__"
        )
    sa, sb = _params_json(a, check, state=True), _params_json(b, check, state=True)
    if sa != sb:
        raise CheckFailure(
            f"{check}: two instances of {plugin_label(cls)} built with the same arguments have different "
            f"params(): {sa} vs {sb}; the constructor must only store its parameters"
        )
    ja = _params_json(a, check)
    try:
        rebuilt = cls(**json.loads(ja))
    except Exception as exc:
        raise CheckFailure(
            f"{check}: {plugin_label(cls)}: rebuilding it as {cls.__name__}(**params()) with params()={ja} "
            f"raised {type(exc).__name__}: {exc}; params() must return the constructor's "
            "parameters"
        ) from exc
    if _params_json(rebuilt, check) != ja:
        raise CheckFailure(
            f"{check}: {plugin_label(cls)}: rebuilding it as {cls.__name__}(**params()) gives params() "
            f"{_params_json(rebuilt, check)}, not {ja}; params() must return the constructor's "
            "parameters"
        )
    g = game_for(cls, None, check)
    if kind is Forecaster:
        nature = default_natures(g)[0]
        play_checked(check, g, a, nature, horizon(T, nature), seed)
    else:
        play_checked(check, g, MeanProbe(), a, horizon(T, a), seed)
    after = _params_json(a, check, state=True)
    if after != sa:
        raise CheckFailure(
            f"{check}: {plugin_label(cls)}.params() changed after playing {T} rounds: {sa} before, "
            f"{after} after; keep game state in attributes whose names start with '_'"
        )
