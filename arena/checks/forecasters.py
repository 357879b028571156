"""The checks of a forecaster: its forecasts lie in the game's forecast space, never look ahead, keep the
certificates it claims, and its compiled oblivious path records the step loop's game."""

from __future__ import annotations

import copy
import inspect
import math
from collections.abc import Callable, Sequence

import numpy as np

from arena.checks.play import (
    DEFAULT_T,
    CheckFailure,
    NotApplicable,
    Spy,
    describe_difference,
    factory,
    first_difference,
    game_for,
    horizon,
    nature_label,
    play_checked,
    plugin_label,
)
from arena.checks.probes import ConstantProbe, ScriptedNature, binary_natures_play, default_natures, registered_natures
from arena.games import Game
from arena.protocols import ExpertsNature, Forecast, Forecaster, GroupNature
from arena.runner import play


def _bad_forecast(out, low: float, high: float, t: int) -> str | None:
    if isinstance(out, Forecast):
        if out.internal is not None and not (
            isinstance(out.internal, (int, float, np.floating, np.integer))
            and math.isfinite(out.internal)
            and low <= out.internal <= high
        ):
            return f"round t={t}: internal forecast {out.internal!r} is not a finite number in [{low}, {high}]"
        return None
    if isinstance(out, (bool, np.bool_)) or not isinstance(out, (int, float, np.floating, np.integer)):
        return (
            f"round t={t}: predict returned {out!r} of type {type(out).__name__}; return a float or an arena.Forecast"
        )
    if not (math.isfinite(out) and low <= out <= high):
        return f"round t={t}: forecast {out!r} is outside the forecast space [{low}, {high}]"
    return None


def check_forecasts_in_range(
    forecaster,
    *,
    T: int = DEFAULT_T,
    seed: int = 0,
    natures: Sequence | None = None,
    params: dict | None = None,
    game: str | Game | None = None,
) -> None:
    """Every forecast is a float or a valid :class:`Forecast` inside the game's forecast space.

    Plays ``T`` rounds against each of ``natures`` (default: the probe natures, one of
    them adaptive and one with contexts in R^2).
    """
    check = "check_forecasts_in_range"
    make = factory(forecaster, params, Forecaster, check)
    g = game_for(forecaster, game, check)
    for nature in natures or default_natures(g):
        fc = make()
        spy = Spy(fc, lambda out, t: _bad_forecast(out, g.forecast_low, g.forecast_high, t))
        T_n = horizon(T, nature)
        try:
            play_checked(check, g, spy, copy.deepcopy(nature), T_n, seed)
        except CheckFailure:
            if spy.violation is None:
                raise
        if spy.violation is not None:
            raise CheckFailure(
                f"{check}: {plugin_label(fc)} against nature {nature_label(nature)} (seed={seed}): {spy.violation}"
            )


def _scripts(game: Game, T: int, context_dim: int, seed: int) -> tuple[dict, np.ndarray, Callable]:
    """A scripted nature's arguments for ``game``, its outcomes, and ``alter(s)``: outcomes that agree
    on rounds 1..s and differ from round s+1 on.

    Binary outcomes are fixed random bits (altered by flipping); in a game without binary
    natures, the outcomes and contexts of an oblivious registered nature of the game, played
    twice (altered by taking the second play's outcomes).
    """
    if binary_natures_play(game):
        bits = np.random.default_rng(2024).integers(0, 2, T).astype(float)
        contexts = np.random.default_rng(2025).standard_normal((T, context_dim))
        return {"contexts": contexts}, bits, lambda s: np.concatenate([bits[:s], 1.0 - bits[s:]])
    sources = [
        n
        for n in registered_natures(game)
        if not n.adaptive
        and not (isinstance(n, ExpertsNature) and n.second_guessing)
        and (n.length is None or n.length >= T)
    ]
    if not sources:
        raise NotApplicable(
            f"no oblivious registered nature of the {game.name!r} game builds with default "
            "parameters to script outcomes from"
        )
    source = sources[0]
    a, b = (
        play_checked("check_no_lookahead", game, ConstantProbe(0.5), copy.deepcopy(source), T, s).recorder
        for s in (seed, seed + 1)
    )
    y, other = a.y.copy(), b.y.copy()
    binary = bool(np.all((y == 0.0) | (y == 1.0)))

    def alter(s: int) -> np.ndarray:
        tail = 1.0 - y[s:] if binary else other[s:]
        if tail[0] == y[s]:
            raise NotApplicable(f"two plays of nature {source.name!r} gave the same outcome at round {s + 1}")
        return np.concatenate([y[:s], tail])

    script = {
        "contexts": a.X.copy(),
        "games": (game.name,),
        "group_dim": int(source.group_dim) if isinstance(source, GroupNature) else 0,
    }
    return script, y, alter


def check_no_lookahead(
    forecaster,
    *,
    T: int = 40,
    seed: int = 0,
    splits: Sequence[int] | None = None,
    context_dim: int = 2,
    params: dict | None = None,
    game: str | Game | None = None,
) -> None:
    """The forecast of round t depends only on rounds before t, never on y_t.

    For each split ``s`` (default 0, 1, 2, 5 and T/2) two scripted outcome sequences agree
    on rounds 1..s and differ from round s+1 on (binary outcomes: every later bit
    flipped); with the same contexts and seed (hence the same coins) the announced
    forecasts of rounds 1..s+1 (points, probabilities and internal value) must be identical.
    """
    check = "check_no_lookahead"
    make = factory(forecaster, params, Forecaster, check)
    g = game_for(forecaster, game, check)
    script, outcomes, alter = _scripts(g, T, context_dim, seed)
    for s in splits if splits is not None else sorted({0, 1, 2, 5, T // 2}):
        if not 0 <= s < T:
            raise ValueError(f"{check}: split {s} must be in [0, T={T})")
        fa, fb = make(), make()
        ra = play_checked(check, g, fa, ScriptedNature(outcomes, **script), T, seed)
        rb = play_checked(check, g, fb, ScriptedNature(alter(s), **script), T, seed)
        diff = first_difference(ra, rb, fields=("p_mean", "p_internal"), rounds=s + 1)
        if diff is not None:
            raise CheckFailure(
                f"{check}: {plugin_label(fa)} looked ahead: two outcome sequences that "
                f"{f'agree on rounds 1..{s} and ' if s else ''}differ from round {s + 1} on got different "
                f"forecasts at {describe_difference(diff)} "
                f"(seed={seed}); a forecast may depend only on x_1..x_t and the outcomes before round t"
            )


def check_claims_hold(
    forecaster,
    *,
    T: int = 200,
    seeds: Sequence[int] = (0, 1),
    natures: Sequence | None = None,
    params: dict | None = None,
    game: str | Game | None = None,
    referee=None,
) -> list[dict]:
    """Every certificate the forecaster claims holds on every run against ``natures`` (docs/ERRATA.md, certificates).

    Deterministic certificates must hold on every run where they apply (a certificate whose
    premise is absent is ``n/a``, reported with its reason, never a pass). Probabilistic ones
    (``Certificate.probabilistic``, e.g. rounded calibration: at most delta of runs may
    fail) are reported, not asserted per run. Returns one dict per (nature, seed,
    certificate): nature, seed, certificate, value, bound, holds, verdict, reason, probabilistic.
    """
    from arena.referee import Referee

    check = "check_claims_hold"
    make = factory(forecaster, params, Forecaster, check)
    g = game_for(forecaster, game, check)
    claims = tuple(make().claims)
    if not claims:
        raise NotApplicable(f"{plugin_label(forecaster)} claims no certificate")
    report = []
    for nature in natures or default_natures(g):
        for seed in seeds:
            fc, nat = make(), copy.deepcopy(nature)
            res = play_checked(check, g, fc, nat, horizon(T, nat), seed, referee=referee or Referee())
            missing = set(claims) - set(res.certificates)
            if missing:
                raise CheckFailure(
                    f"{check}: {plugin_label(fc)} claims {sorted(missing)} but the referee produced no "
                    f"such certificate against nature {nat.name!r}"
                )
            for name, c in res.certificates.items():
                report.append(
                    {
                        "nature": nat.name,
                        "seed": seed,
                        "certificate": name,
                        "value": c.value,
                        "bound": c.bound,
                        "holds": c.holds,
                        "verdict": c.verdict,
                        "reason": c.reason,
                        "probabilistic": c.probabilistic,
                    }
                )
                if c.probabilistic or c.holds is None:  # not applicable (the reason is in the report): no verdict
                    continue
                if c.holds is not True:
                    raise CheckFailure(
                        f"{check}: {plugin_label(fc)} claims the {name!r} certificate, which failed against nature "
                        f"{nat.name!r} (T={res.recorder.n}, seed={seed}): value {c.value!r} > bound {c.bound!r}"
                        + (f" ({c.note})" if c.note else "")
                        + ". A deterministic certificate that fails on any run is a bug (docs/ERRATA.md, certificates)"
                    )
    return report


def check_fast_path_matches_step_loop(
    forecaster,
    *,
    T: int = DEFAULT_T,
    seed: int = 0,
    natures: Sequence | None = None,
    params: dict | None = None,
    game: str | Game | None = None,
) -> None:
    """A forecaster that offers ``play_oblivious`` (all rounds at once against an oblivious nature)
    records exactly the game that the step loop records: same contexts, forecasts and outcomes."""
    check = "check_fast_path_matches_step_loop"
    make = factory(forecaster, params, Forecaster, check)
    g = game_for(forecaster, game, check)
    if not callable(make().play_oblivious):
        raise NotApplicable(f"{plugin_label(forecaster)} has no compiled oblivious path (play_oblivious)")
    if "fast_path" not in inspect.signature(play).parameters:
        raise NotApplicable("arena.runner.play has no fast_path switch")
    oblivious = [n for n in (natures or default_natures(g)) if not getattr(n, "adaptive", False)]
    for nature in oblivious:
        T_n = horizon(T, nature)
        runs = [
            play_checked(check, g, make(), copy.deepcopy(nature), T_n, seed, keep_forecasts=False, fast_path=fast)
            for fast in (True, False)
        ]
        diff = first_difference(runs[0], runs[1], forecasts=False)
        if diff is not None:
            raise CheckFailure(
                f"{check}: {plugin_label(forecaster)}'s play_oblivious recorded a different game from the step loop's "
                f"against nature {nature.name!r} (T={T_n}, seed={seed}): first difference at "
                f"{describe_difference(diff)} (fast path first)"
            )
