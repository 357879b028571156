"""The checks of the Gymnasium environments: Gymnasium's own ``check_env``, with no warning but the benign
ones, and reproducible episodes."""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from arena.checks.play import CheckFailure, factory, game_for, horizon, nature_label, plugin_label
from arena.checks.probes import default_natures
from arena.games import Game, get_game
from arena.protocols import Nature

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
    for i, (u, v) in enumerate(zip(a, b, strict=False)):  # an env that is not deterministic may end one sooner
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
    for nature in natures or default_natures(get_game("binary")):
        T_n = horizon(T, nature)
        try:
            env = gym.make(env_id_or_env, nature=nature, T=T_n, **extra)
        except Exception as exc:
            raise CheckFailure(
                f"{check}: gym.make({env_id_or_env!r}, nature={nature_label(nature)}, T={T_n}) "
                f"raised {type(exc).__name__}: {exc}"
            ) from exc
        _check_one_env(env.unwrapped, f"{env_id_or_env!r} with nature {nature_label(nature)}", check)


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
    make = factory(nature, params, Nature, check)
    g = game_for(nature, game, check)
    nat = make()
    env_id = _env_id(g)
    if env_id is not None:
        check_env(env_id, [nat], T=T, game=g)
    else:
        _check_one_env(ForecastEnv(nat, horizon(T, nat), g), f"the {g.name!r} game with {plugin_label(nat)}", check)
