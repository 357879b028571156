"""The checks of a nature: its outcomes and laws are valid and agree with their samples, its contexts have
the declared shape, and an oblivious nature ignores the forecast."""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence

import numpy as np

from arena.checks.play import (
    DEFAULT_T,
    CheckFailure,
    NotApplicable,
    describe_difference,
    factory,
    first_difference,
    game_for,
    horizon,
    play_checked,
    plugin_label,
)
from arena.checks.probes import ConstantProbe, MeanProbe, RandomizedProbe, default_forecasters
from arena.games import Game
from arena.protocols import Forecaster, Nature, OutcomeLaw


def check_outcomes_valid(
    nature,
    *,
    T: int = DEFAULT_T,
    seed: int = 0,
    forecasters: Sequence | None = None,
    params: dict | None = None,
    game: str | Game | None = None,
) -> None:
    """Every outcome is in the game's outcome space; every law's P(y = 1) is in [0, 1] and
    consistent with the drawn outcome (never y = 1 with P(y = 1) = 0)."""
    check = "check_outcomes_valid"
    make = factory(nature, params, Nature, check)
    g = game_for(nature, game, check)
    for fc in forecasters or [*default_forecasters(), ConstantProbe(0.0), ConstantProbe(1.0)]:
        nat = make()
        res = play_checked(check, g, copy.deepcopy(fc), nat, horizon(T, nat), seed)
        rec = res.recorder
        for t in range(rec.n):
            q, y = float(rec.y_prob[t]), float(rec.y[t])
            if np.isnan(q):
                continue
            if not 0.0 <= q <= 1.0:
                raise CheckFailure(
                    f"{check}: {plugin_label(nat)} returned at round t={t + 1} a law with P(y = 1) = {q!r}, "
                    f"outside [0, 1] (against forecaster {fc.name!r}, seed={seed})"
                )
            if (q == 0.0 and y != 0.0) or (q == 1.0 and y != 1.0):
                raise CheckFailure(
                    f"{check}: {plugin_label(nat)} at round t={t + 1}: its law gives P(y = 1) = {q!r} but "
                    f"sampling it gave y = {y!r}; sample() and cdf() disagree"
                )
        _check_cdf_at_atoms(check, nat, fc, rec, seed)


def _check_cdf_at_atoms(check: str, nat, fc, rec, seed: int) -> None:
    """Games that record nature's CDF at the forecast atoms (quantile): F in [0, 1], monotone in
    the atom, and consistent with the drawn outcome (F(a) = 0 never with y <= a, F(a) = 1 never with y > a)."""
    if getattr(rec, "cdf_at_atoms", None) is None:
        return
    for t in range(rec.n):
        (a, b), (Fa, Fb), y = rec.atoms[t], rec.cdf_at_atoms[t], float(rec.y[t])
        where = f"{plugin_label(nat)} at round t={t + 1} (against forecaster {fc.name!r}, seed={seed})"
        if not (0.0 <= Fa <= 1.0 and 0.0 <= Fb <= 1.0):
            raise CheckFailure(
                f"{check}: {where}: its law's CDF at the forecast atoms is ({Fa!r}, {Fb!r}), outside [0, 1]"
            )
        if (a <= b and Fa > Fb) or (b <= a and Fb > Fa):
            raise CheckFailure(f"{check}: {where}: its law's CDF decreases: F({a!r}) = {Fa!r}, F({b!r}) = {Fb!r}")
        for v, F in ((a, Fa), (b, Fb)):
            if (F == 0.0 and y <= v) or (F == 1.0 and y > v):
                raise CheckFailure(
                    f"{check}: {where}: its law gives P(y <= {v!r}) = {F!r} but sampling it gave "
                    f"y = {y!r}; sample() and cdf() disagree"
                )


#: Draws per law in :func:`check_laws_agree_with_samples`, and its Kolmogorov-Smirnov level.
LAW_DRAWS = 2000
LAW_ALPHA = 1e-6


def ks_distance(law, draws: np.ndarray) -> float:
    """max over the drawn values v of |F_n(v) - F(v)|, F_n the empirical CDF of ``draws`` and F = ``law.cdf``.

    Examples
    --------
    >>> from arena.protocols import Bernoulli
    >>> round(ks_distance(Bernoulli(0.5), np.array([0.0, 0.0, 0.0, 1.0])), 6)
    0.25
    """
    v, counts = np.unique(np.asarray(draws, float), return_counts=True)
    emp = np.cumsum(counts) / counts.sum()
    return float(np.max(np.abs(emp - np.array([law.cdf(float(a)) for a in v]))))


def check_laws_agree_with_samples(
    nature,
    *,
    T: int = DEFAULT_T,
    seed: int = 0,
    params: dict | None = None,
    game: str | Game | None = None,
    laws: int = 3,
    draws: int = LAW_DRAWS,
) -> None:
    """The laws a nature returns are what they sample: a Kolmogorov-Smirnov test of ``cdf`` against
    ``draws`` samples of up to ``laws`` of them (level :data:`LAW_ALPHA`), and in the quantile game
    no mass at ymin (F(ymin) = 0, every draw > ymin: docs/ERRATA.md)."""
    check = "check_laws_agree_with_samples"
    make = factory(nature, params, Nature, check)
    g = game_for(nature, game, check)
    nat, seen = make(), []
    respond = nat.respond

    def spy(t, x, forecast):
        answer = respond(t, x, forecast)
        if isinstance(answer, OutcomeLaw):
            seen.append(answer)
        return answer

    nat.respond = spy  # an instance attribute: the arena calls it in place of the method
    play_checked(check, g, ConstantProbe(0.5), nat, horizon(T, nat), seed)
    if not seen:
        raise NotApplicable(f"{plugin_label(nature)} answers with plain outcomes, not laws")
    rng = np.random.default_rng(seed)
    crit = math.sqrt(-math.log(LAW_ALPHA / 2) / (2 * draws))
    for i in np.unique(np.linspace(0, len(seen) - 1, min(laws, len(seen))).astype(int)):
        law = seen[i]
        y = np.array([law.sample(rng) for _ in range(draws)], float)
        where = f"{plugin_label(nature)}: the law of round t={i + 1} ({law!r})"
        ymin = getattr(g, "ymin", None)
        if ymin is not None and (law.cdf(ymin) > 0.0 or np.any(y <= ymin)):
            raise CheckFailure(
                f"{check}: {where} has mass at ymin={ymin!r} (F(ymin) = {law.cdf(ymin)!r}, "
                f"{int(np.sum(y <= ymin))} of {draws} draws <= ymin); quantile outcomes must be > ymin"
            )
        d = ks_distance(law, y)
        if d > crit:
            raise CheckFailure(
                f"{check}: {where}: its cdf disagrees with its sample (Kolmogorov-Smirnov distance "
                f"{d:.4g} over {draws} draws > {crit:.4g}, level {LAW_ALPHA:g}); fix cdf() or sample()"
            )


def check_contexts_shape(
    nature, *, T: int = DEFAULT_T, seed: int = 0, params: dict | None = None, game: str | Game | None = None
) -> None:
    """``context_dim`` is an integer >= 0 and every context is ``context_dim`` finite floats."""
    check = "check_contexts_shape"
    make = factory(nature, params, Nature, check)
    g = game_for(nature, game, check)
    nat = make()
    d = nat.context_dim
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 0:
        raise CheckFailure(f"{check}: {plugin_label(nat)}.context_dim = {d!r}; it must be an integer >= 0")
    for fc in (ConstantProbe(0.5), RandomizedProbe()):
        nat = make()
        res = play_checked(check, g, fc, nat, horizon(T, nat), seed)
        if res.recorder.X.shape != (res.recorder.n, d):
            raise CheckFailure(
                f"{check}: {plugin_label(nat)} recorded contexts of shape {res.recorder.X.shape}, "
                f"expected ({res.recorder.n}, {d})"
            )


def check_oblivious_ignores_forecast(
    nature, *, T: int = DEFAULT_T, seed: int = 0, params: dict | None = None, game: str | Game | None = None
) -> None:
    """An oblivious nature (``adaptive = False``) plays the same contexts, outcomes and laws
    whatever the forecaster: constant 0, constant 1, a running mean and a randomized one."""
    check = "check_oblivious_ignores_forecast"
    make = factory(nature, params, Nature, check)
    if getattr(make(), "adaptive", False):  # an instance: a panel is adaptive or not by its parameters
        raise NotApplicable(
            f"{plugin_label(nature)} is adaptive (adaptive = True): it may react to the forecast by design"
        )
    g = game_for(nature, game, check)
    forecasters = [ConstantProbe(0.0), ConstantProbe(1.0), MeanProbe(), RandomizedProbe()]
    runs = []
    for fc in forecasters:
        nat = make()
        runs.append(play_checked(check, g, fc, nat, horizon(T, nat), seed))
    for fc, run in zip(forecasters[1:], runs[1:], strict=True):
        diff = first_difference(runs[0], run, fields=("X", "y", "y_prob"), forecasts=False)
        if diff is not None:
            raise CheckFailure(
                f"{check}: {plugin_label(nature)} declares adaptive = False but its play depends on the forecaster: "
                f"against the probe forecasters {_probe(forecasters[0])} and {_probe(fc)} with seed={seed}, "
                f"first difference at {describe_difference(diff)}. Declare adaptive = True, or ignore the "
                "forecast (and observe()) in respond()/context()"
            )


def _probe(fc: Forecaster) -> str:
    return f"'constant {fc.c:g}'" if isinstance(fc, ConstantProbe) else repr(fc.name)


#: Gymnasium's advice for learning agents, not defects of a game: unbounded contexts, no spec
