"""Defensive Forecasting Arena: forecasters against natures under a referee.

``import arena`` is light: the names below are loaded on first use (PEP 562), so a process
that only reads results or draws figures never loads the game engine, numba or Gymnasium.

>>> import arena
>>> r = arena.play("binary", "bit", "anti_forecaster", T=50, seed=0)
>>> r.certificates["bit"].holds
True
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # what type checkers and IDEs see; at run time, module __getattr__ below
    from arena.games import get_game
    from arena.protocols import Bernoulli, Forecast, Forecaster, Nature, OutcomeLaw, ProtocolError
    from arena.registry import register
    from arena.runner import Result, play

#: Where each lazily re-exported name lives.
_EXPORTS = {
    "play": "arena.runner",
    "Result": "arena.runner",
    "Forecast": "arena.protocols",
    "Forecaster": "arena.protocols",
    "Nature": "arena.protocols",
    "OutcomeLaw": "arena.protocols",
    "Bernoulli": "arena.protocols",
    "ProtocolError": "arena.protocols",
    "register": "arena.registry",
    "get_game": "arena.games",
}
__all__ = [
    "play",
    "Result",
    "Forecast",
    "Forecaster",
    "Nature",
    "OutcomeLaw",
    "Bernoulli",
    "ProtocolError",
    "register",
    "get_game",
    "__version__",
]


def __getattr__(name: str):
    if name == "__version__":
        # importlib.metadata costs about as much as the rest of ``import arena``: read on first use
        from importlib.metadata import PackageNotFoundError, version

        try:
            value = version("defensive-forecasting-arena")
        except PackageNotFoundError:  # running from a source tree that was not installed
            value = "0.1.0+src"
    elif name in _EXPORTS:
        from importlib import import_module

        value = getattr(import_module(_EXPORTS[name]), name)
    else:
        raise AttributeError(f"module 'arena' has no attribute {name!r}")
    globals()[name] = value  # once: later lookups do not come here
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


# ------------------------------------------------------------------------------ Gymnasium ids
#: The Gymnasium ids of the games: (id, keyword arguments of :class:`arena.env.ForecastEnv`). The
#: entry point is a string, so registering an id loads nothing of the engine.
_GYM_IDS: dict[str, dict] = {
    "arena/Binary-v0": {"game": "binary"},
    "arena/Quantile-v0": {"game": "quantile", "nature": "iid_normal"},
    "arena/Experts-v0": {"game": "experts", "nature": "expert_constants"},
    "arena/Decision-v0": {"game": "decision"},
}


#: The Gymnasium ids whose agent is not the forecaster: (id, entry point). The red team's env is
#: nature as the agent, against a forecaster inside (every game).
_AGENT_NATURE_GYM_IDS: dict[str, str] = {"arena/RedTeam-v0": "arena.redteam.env:RedTeamEnv"}


def _register_gym_ids() -> None:
    """Register :data:`_GYM_IDS` and :data:`_AGENT_NATURE_GYM_IDS` with Gymnasium (once: an id already
    there is left alone)."""
    import gymnasium as gym

    for env_id, kwargs in _GYM_IDS.items():
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point="arena.env:ForecastEnv", kwargs=dict(kwargs))
    for env_id, entry_point in _AGENT_NATURE_GYM_IDS.items():
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point=entry_point)


class _RegisterAfterGymnasium:
    """A one-shot import hook: the ids are registered as soon as Gymnasium is imported.

    Importing Gymnasium costs about 40% of ``import pandas``, so ``import arena`` does not
    import it; but ``import arena; import gymnasium; gymnasium.make("arena/Binary-v0")`` works,
    in either order of the imports, as it does for a package that registers its ids eagerly.
    """

    def find_spec(self, name, path=None, target=None):
        if name != "gymnasium":
            return None
        for finder in sys.meta_path:  # the spec the other finders give, its loader made to register after
            spec = finder.find_spec(name, path, target) if finder is not self and hasattr(finder, "find_spec") else None
            if spec is not None:
                break
        else:
            return None
        if spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        load = spec.loader.exec_module

        def exec_module(module):
            load(module)
            if self in sys.meta_path:  # one shot, once Gymnasium is there
                sys.meta_path.remove(self)
            _register_gym_ids()

        spec.loader.exec_module = exec_module
        return spec


if "gymnasium" in sys.modules:
    _register_gym_ids()
else:
    sys.meta_path.insert(0, _RegisterAfterGymnasium())
