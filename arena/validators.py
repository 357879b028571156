"""Validators of plugin constructor parameters: each returns the value converted, or raises a
ValueError that names the plugin, the parameter and its bad value, and says how to fix it.

Examples
--------
>>> check_probability("iid_bernoulli", "p", 0.3)
0.3
>>> check_count("expert_constants", "N", 0, 4)
Traceback (most recent call last):
...
ValueError: expert_constants: N=0 is not an integer >= 1; give e.g. N: 4
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

#: The largest size parameter (experts, bins) a nature accepts: its arrays are allocated at ``reset``.
MAX_SIZE = 10**6


def check_real(who: str, param: str, value, fix: str) -> float:
    """``value`` as a finite float, or a ValueError naming ``param`` and the fix."""
    if isinstance(value, (bool, np.bool_)):  # YAML's true/false would otherwise pass as 1.0/0.0
        raise ValueError(f"{who}: {param}={value!r} is true/false, not a number; {fix}")  # noqa: TRY004
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{who}: {param}={value!r} is not a number; {fix}") from None
    if not math.isfinite(x):
        raise ValueError(f"{who}: {param}={value!r} is not finite; {fix}")
    return x


def check_probability(who: str, param: str, value, example: float = 0.3) -> float:
    p = check_real(who, param, value, f"give a probability such as {param}: {example}")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{who}: {param}={value!r} is outside [0, 1]; give a probability such as {param}: {example}")
    return p


def check_positive(who: str, param: str, value, example) -> float:
    x = check_real(who, param, value, f"give a positive number such as {param}: {example}")
    if x <= 0:
        raise ValueError(f"{who}: {param}={value!r} must be > 0; give a positive number such as {param}: {example}")
    return x


def check_count(who: str, param: str, value, example: int, minimum: int = 1, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{who}: {param}={value!r} is not an integer >= {minimum}; give e.g. {param}: {example}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{who}: {param}={value!r} is above {maximum} (it sizes arrays); give e.g. {param}: {example}")
    return int(value)


def check_vector(who: str, param: str, value, example: str, *, probabilities: bool = False) -> tuple[float, ...]:
    """A non-empty list of finite floats (a YAML list or a tuple), returned as a tuple."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise ValueError(  # noqa: TRY004 (one error type for bad parameters)
            f"{who}: {param}={value!r} is not a list of numbers; give e.g. {param}: {example}"
        )
    items = list(value)
    if not items:
        raise ValueError(f"{who}: {param} is empty; give at least one number, e.g. {param}: {example}")
    if probabilities:
        return tuple(check_probability(who, f"{param}[{i}]", v) for i, v in enumerate(items))
    fix = f"fix it, e.g. {param}: {example}"
    return tuple(check_real(who, f"{param}[{i}]", v, fix) for i, v in enumerate(items))
