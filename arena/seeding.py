"""Seeds derived by name: every random stream comes from one root seed.

This module owns the names of a matchup's streams (:data:`STREAMS`). The forecaster's name
is not part of nature's streams, so every forecaster meets the same sequence from an
oblivious nature (paired comparisons).

Examples
--------
>>> derive_seed(0, "nature", "iid_bernoulli") == derive_seed(0, "nature", "iid_bernoulli")
True
>>> derive_seed(0, "nature", "a") != derive_seed(1, "nature", "a")
True
>>> stream_seeds(0, "k29", "iid_bernoulli")["seed_nature"] == derive_seed(0, "nature", "iid_bernoulli")
True
"""

from __future__ import annotations

import hashlib

import numpy as np

#: Every random stream of a matchup: (its column in the result rows, its name, the plugin whose name
#: follows it). The forecaster's own stream; nature's own stream; the outcome coin (the draw from
#: nature's law); the forecast coin (the draw from a randomized forecast).
STREAMS = (
    ("seed_forecaster", "forecaster", "forecaster"),
    ("seed_nature", "nature", "nature"),
    ("seed_outcome", "outcome", "nature"),
    ("seed_draw", "forecast-draw", "nature"),
)


def derive_seed(root: int, *names: object) -> int:
    """A 63-bit seed that depends only on ``root`` and the ``names`` (stable across runs)."""
    text = "\x1f".join([str(int(root)), *map(str, names)])
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little") >> 1


def derive_rng(root: int, *names: object) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(derive_seed(root, *names)))


def stream_seeds(root: int, forecaster: str, nature: str) -> dict[str, int]:
    """Every stream's seed by its result-row column, for the plugins named ``forecaster`` and ``nature``."""
    names = {"forecaster": forecaster, "nature": nature}
    return {column: derive_seed(root, stream, names[who]) for column, stream, who in STREAMS}


def forecaster_rng(root: int, forecaster: str) -> np.random.Generator:
    """The stream the forecaster named ``forecaster`` is reset with."""
    return _streams(root, "forecaster", forecaster)[0]


def nature_streams(root: int, nature: str) -> tuple[np.random.Generator, ...]:
    """Nature's own stream, the outcome coin and the forecast coin of the nature named ``nature``.

    None depends on the forecaster, so an oblivious nature plays the same sequence against
    every forecaster.
    """
    return _streams(root, "nature", nature)


def _streams(root: int, who: str, name: str) -> tuple[np.random.Generator, ...]:
    return tuple(derive_rng(root, stream, name) for _, stream, owner in STREAMS if owner == who)
