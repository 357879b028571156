"""Every game of the arena, and every Gymnasium id, registered in one place.

One module per game holds its rules, metrics, curves and certificates:
:mod:`arena.games.binary` (§2-§8), :mod:`arena.games.decision` (§5),
:mod:`arena.games.experts` (§9) and :mod:`arena.games.quantile` (§10); :mod:`arena.games.base`
holds the :class:`Game` interface. A game added by a plugin registers itself with
:func:`register_game` and adds its line to :data:`METRICS`.

Examples
--------
>>> sorted(GAMES)
['binary', 'decision', 'experts', 'quantile']
>>> get_game("quantile", q=0.5).q
0.5
>>> "arena/Quantile-v0" in ENV_IDS
True
"""

from __future__ import annotations

import gymnasium as gym

from arena.games.base import GAMES, Game, GameScore, bind, get_game, plays, register_game
from arena.games.binary import BinaryGame
from arena.games.decision import DecisionGame
from arena.games.experts import AdviceContext, ExpertsGame
from arena.games.quantile import QuantileGame

for _cls in (BinaryGame, QuantileGame, DecisionGame, ExpertsGame):
    register_game(_cls)

#: Game name -> metric name -> one-line description (``arena-list metrics``; a test checks them
#: against what the referee computes, so a new metric needs its line in its game's module).
METRICS: dict[str, dict[str, str]] = {name: dict(GAMES[name].metric_descriptions) for name in sorted(GAMES)}
#: Certificate name -> one-line description, over every game.
CERTIFICATE_DESCRIPTIONS: dict[str, str] = {
    k: v for name in sorted(GAMES) for k, v in GAMES[name].certificate_descriptions.items()
}

#: Gymnasium id -> keyword arguments of :class:`arena.env.ForecastEnv` (the game and a default nature).
ENV_IDS: dict[str, dict] = {
    "arena/Binary-v0": {"game": "binary"},
    "arena/Quantile-v0": {"game": "quantile", "nature": "iid_normal"},
    "arena/Experts-v0": {"game": "experts", "nature": "expert_constants"},
    "arena/Decision-v0": {"game": "decision"},
}
#: Gymnasium id -> entry point, for the environments whose agent is not the forecaster: the red team's,
#: whose agent is nature (:class:`arena.redteam.env.RedTeamEnv`, every game).
AGENT_NATURE_ENV_IDS: dict[str, str] = {"arena/RedTeam-v0": "arena.redteam.env:RedTeamEnv"}


def register_envs() -> None:
    """Register every id of :data:`ENV_IDS` and :data:`AGENT_NATURE_ENV_IDS` with Gymnasium (again: a no-op).

    The entry points are strings, so registering does not import the environment modules.
    """
    for env_id, kwargs in ENV_IDS.items():
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point="arena.env:ForecastEnv", kwargs=dict(kwargs))
    for env_id, entry_point in AGENT_NATURE_ENV_IDS.items():
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point=entry_point)


register_envs()


def certificates() -> dict:
    """Certificate name -> function(run, referee) -> Certificate, over every registered game.

    Examples
    --------
    >>> {"bit", "quantile_marginal", "experts_regret", "decision_regret"} <= set(certificates())
    True
    """
    out: dict = {}
    for cls in GAMES.values():
        out.update(cls.certificates)
    return out


__all__ = [
    "AGENT_NATURE_ENV_IDS",
    "CERTIFICATE_DESCRIPTIONS",
    "ENV_IDS",
    "METRICS",
    "GAMES",
    "AdviceContext",
    "BinaryGame",
    "DecisionGame",
    "ExpertsGame",
    "Game",
    "GameScore",
    "QuantileGame",
    "bind",
    "certificates",
    "get_game",
    "plays",
    "register_envs",
    "register_game",
]
