"""The red team: natures that search for each forecaster's worst case.

- :mod:`arena.redteam.search`: the searchers (black-box CMA-ES policy search, white-box planning
  against a clone of the forecaster) and :func:`~arena.redteam.search.search`, which scores
  candidates on several seeds against a randomized forecaster and measures the attack it keeps
  on held-out seeds;
- :mod:`arena.redteam.policy`: stored attacks (JSON) and :class:`~arena.redteam.policy.RedTeamNature`,
  which plays one (``nature=redteam nature.path=FILE``);
- :mod:`arena.redteam.objective`: the metrics a search maximizes (the arena's metric functions)
  and the certificate that bounds each;
- :mod:`arena.redteam.env`: the Gymnasium env whose agent is nature (``arena/RedTeam-v0``);
- :mod:`arena.redteam.table`, :mod:`arena.redteam.report`: attack versus certificate, the
  cross-attack matrix, their tables and figures (drawn by :mod:`arena.plots.redteam`);
  :mod:`arena.redteam.job`: the job of ``arena-redteam``.

Submodules are imported on demand (``import arena.redteam`` costs nothing).
"""

import importlib

_EXPORTS = {
    "search": "arena.redteam.search",
    "cma_search": "arena.redteam.search",
    "plan_search": "arena.redteam.search",
    "RedTeamNature": "arena.redteam.policy",
    "load_attack": "arena.redteam.policy",
    "save_attack": "arena.redteam.policy",
    "RedTeamEnv": "arena.redteam.env",
    "report": "arena.redteam.report",
}

__all__ = ["RedTeamEnv", "RedTeamNature", "cma_search", "load_attack", "plan_search", "report", "save_attack", "search"]


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'arena.redteam' has no attribute {name!r}")
