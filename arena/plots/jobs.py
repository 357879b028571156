"""A report's figure as data: :class:`Job` names the figure, the tables it is drawn from and where it is saved.

Each game's module plans its jobs (``jobs(...)``); :mod:`arena.plots.draw` draws them; :func:`digest` says
whether a figure's inputs changed since it was drawn.

Examples
--------
>>> job = Job("leaderboard", (), Path("figures/leaderboard__brier"), ("png", "pdf"))
>>> [p.name for p in job.files()]
['leaderboard__brier.png', 'leaderboard__brier.pdf']
"""

from __future__ import annotations

import functools
import hashlib
import pickle
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd


@dataclass(frozen=True, eq=False)
class Job:
    """One figure of a report.

    ``kind``: its name in :data:`arena.plots.draw.FIGURES`; ``args``: what the figure function is called with
    (tables, names, styles); ``stem``: its path without the format's suffix; ``formats``: it is saved in each;
    ``copies``: more ``(stem, formats)`` to save the same drawing as (a paper's figure that the report shows
    too)."""

    kind: str
    args: tuple
    stem: Path
    formats: tuple[str, ...]
    copies: tuple[tuple[Path, tuple[str, ...]], ...] = ()

    @functools.cached_property
    def data(self) -> str:
        """The digest of what it draws: its name and data (:func:`digest`), computed once."""
        return digest(self.kind, self.args)

    def files(self) -> list[Path]:
        """Its files, each stem in each of its formats."""
        stems = [(self.stem, self.formats), *self.copies]
        return [Path(stem).with_name(f"{Path(stem).name}.{ext}") for stem, formats in stems for ext in formats]


def digest(*parts) -> str:
    """A digest of ``parts`` (tables, mappings, sequences, scalars): equal data, equal digest.

    Examples
    --------
    >>> digest(pd.DataFrame({"a": [1, 2]}), {"x": 1}) == digest(pd.DataFrame({"a": [1, 2]}), {"x": 1})
    True
    >>> digest(pd.DataFrame({"a": [1, 2]})) == digest(pd.DataFrame({"a": [1, 3]}))
    False
    """
    h = hashlib.sha256()
    _feed(parts, h)
    return h.hexdigest()


def _feed(obj, h) -> None:
    if isinstance(obj, pd.DataFrame):
        h.update(repr((list(map(str, obj.columns)), list(map(str, obj.dtypes)), obj.shape)).encode())
        try:
            h.update(pd.util.hash_pandas_object(obj, index=False).to_numpy().tobytes())
        except TypeError:  # a column of unhashable values: its pickle instead
            h.update(pickle.dumps(obj, protocol=5))
    elif isinstance(obj, Mapping):
        h.update(b"{")
        for k in sorted(obj, key=str):
            h.update(repr(k).encode())
            _feed(obj[k], h)
        h.update(b"}")
    elif isinstance(obj, (list, tuple)):
        h.update(b"[")
        for v in obj:
            _feed(v, h)
        h.update(b"]")
    else:
        h.update(repr(obj).encode())


__all__ = ["Job", "digest"]
