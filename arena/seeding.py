"""Seeds derived by name: every random stream comes from one root seed.

The forecaster's name is not part of nature's streams, so every forecaster meets the
same sequence from an oblivious nature (paired comparisons).

Examples
--------
>>> derive_seed(0, "nature", "iid_bernoulli") == derive_seed(0, "nature", "iid_bernoulli")
True
>>> derive_seed(0, "nature", "a") != derive_seed(1, "nature", "a")
True
"""

from __future__ import annotations

import hashlib

import numpy as np


def derive_seed(root: int, *names: object) -> int:
    """A 63-bit seed that depends only on ``root`` and the ``names`` (stable across runs)."""
    text = "\x1f".join([str(int(root)), *map(str, names)])
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little") >> 1


def derive_rng(root: int, *names: object) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(derive_seed(root, *names)))
