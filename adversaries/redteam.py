"""The red-team nature: replays an attack that ``arena-redteam`` found and stored.

``nature=redteam nature.path=FILE`` plays a stored attack in any matchup or tournament: a
policy (features of the announced forecast and the history -> outcome law, adaptive) or a
planned sequence (oblivious). A bare name instead of a file names an attack shipped with
the arena in ``adversaries/data/redteam/`` (see its README).

References
----------
Perdomo & Recht, "In Defense of Defensive Forecasting".
"""

from __future__ import annotations

import os
from pathlib import Path

from arena.redteam.policy import RedTeamNature, load_attack
from arena.registry import register

#: Where the shipped attacks live (one JSON file each; a bare ``path`` names one of them).
SHIPPED = Path(__file__).resolve().parent / "data" / "redteam"


def shipped_attacks() -> list[str]:
    """Names of the attacks shipped with the arena.

    Examples
    --------
    >>> "running_mean" in shipped_attacks()
    True
    """
    return sorted(p.stem for p in SHIPPED.glob("*.json"))


def resolve(path: str | os.PathLike) -> Path:
    """A stored attack's file: ``path`` itself, or the shipped attack of that name."""
    text = str(path)
    if os.sep in text or "/" in text or text.endswith(".json") or Path(text).is_file():
        return Path(text)
    file = SHIPPED / f"{text}.json"
    if not file.is_file():
        raise ValueError(
            f"redteam: path={text!r} is neither a file nor a shipped attack; give a JSON file written by "
            f"arena-redteam or one of {', '.join(shipped_attacks())}"
        )
    return file


@register
class RedTeam(RedTeamNature):
    """Replays a stored red-team attack (a policy: adaptive; a planned sequence: oblivious).

    The file is read when the nature is first used, not in the constructor. Its game, whether
    it is adaptive and its horizon are the attack's; the same seed gives the same game as the
    search that found it.

    Parameters
    ----------
    path : str
        A JSON file written by ``arena-redteam``, or the name of a shipped attack
        (:func:`shipped_attacks`, e.g. ``running_mean``: the policy found against it).

    Examples
    --------
    >>> from arena import play
    >>> r = play("binary", "running_mean", RedTeam("running_mean"), T=1000, seed=0)
    >>> r.summary["smce_over_T"] > 0.25
    True
    """

    name = "redteam"

    def __init__(self, path: str = "running_mean"):
        self.path = str(path)

    @property
    def attack(self) -> dict:
        if "_loaded" not in self.__dict__:
            self._loaded = load_attack(resolve(self.path))
        return self._loaded

    def params(self) -> dict:
        return {"path": self.path}
