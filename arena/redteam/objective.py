"""What a red team maximizes: one metric of one game, computed by the arena's own metric functions.

:data:`OBJECTIVES` names, per game, the metrics a search may attack and the certificate that
bounds each (where a forecaster claims it). :func:`score` computes a metric from the arrays of
a (possibly simulated) game with the functions the referee uses, so a searcher's planning and
the referee agree; :func:`value` reads it from a finished :class:`arena.runner.Result` (its
summary, which is the referee's own number).

References
----------
Perdomo & Recht, §5-§10; certificates: docs/ERRATA.md.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

#: Game -> metric -> the certificate that bounds it (None: no certificate bounds it). A metric
#: ending in ``_over_T`` is bounded by its certificate's bound divided by T.
OBJECTIVES: dict[str, dict[str, str | None]] = {
    "binary": {
        "smce_over_T": "smce",
        "ece": None,
        "bias": None,
        "regret_constant": None,
        "regret_linear": "linear_regret",
    },
    "decision": {
        "regret_decision": "decision_regret",
        "regret_decision_over_T": "decision_regret",
        "smce_over_T": "smce",
    },
    "experts": {"regret_experts": "experts_regret"},
    "quantile": {"coverage_error": "quantile_marginal", "pinball_regret": None},
}


def check_objective(game: str, metric: str) -> None:
    """Raise a one-line error unless ``metric`` is a red-team objective of ``game``.

    Examples
    --------
    >>> check_objective("binary", "smce")
    Traceback (most recent call last):
    ...
    ValueError: metric='smce' is not a red-team objective of the binary game. Did you mean 'smce_over_T'? Available: ...
    """
    if game not in OBJECTIVES:
        raise ValueError(f"game={game!r}: the red team plays {', '.join(sorted(OBJECTIVES))}")
    if metric not in OBJECTIVES[game]:
        from arena.errors import did_you_mean

        # a metric the referee reports as a sum, attacked through its "_over_T" form: name that one
        longer = [m for m in OBJECTIVES[game] if m.startswith(f"{metric}_")]
        hint = f" Did you mean {longer[0]!r}?" if longer else did_you_mean(metric, OBJECTIVES[game])
        raise ValueError(
            f"metric={metric!r} is not a red-team objective of the {game} game.{hint} "
            f"Available: {', '.join(sorted(OBJECTIVES[game]))}"
        )


def pinball_regret(p: np.ndarray, y: np.ndarray, q: float) -> float:
    """Pinball-loss regret to the best constant forecast in hindsight (an empirical q-quantile of y).

    Examples
    --------
    >>> round(pinball_regret(np.array([0.0, 0.0]), np.array([1.0, 1.0]), 0.5), 12)
    1.0
    """
    from arena.games.quantile import pinball

    T = len(y)
    if not T:
        return 0.0
    # sum_t pinball(y_t - c) is convex and piecewise linear in c with kinks at the outcomes: the
    # ceil(qT)-th smallest outcome minimizes it (its neighbours are tried against rounding)
    s, k = np.sort(y), int(np.ceil(q * T)) - 1
    best = min(
        float(np.sum(pinball(np.full(T, s[j]), y, q)))
        for j in {max(k - 1, 0), min(max(k, 0), T - 1), min(k + 1, T - 1)}
    )
    return float(np.sum(pinball(p, y, q)) - best)


def score(
    game, metric: str, X: np.ndarray, p: np.ndarray, y: np.ndarray, M: float = 1.0, intercept: bool = True
) -> float:
    """``metric`` of the game ``game`` (an :class:`arena.games.Game`) on realized forecasts ``p``,
    outcomes ``y`` and scored contexts ``X`` (the experts' advice in the experts game). ``M`` and
    ``intercept`` are the linear comparators' (the referee's defaults: ``regret_linear`` to
    <w, x> + a with ||(w, a)|| <= 1).

    Examples
    --------
    >>> from arena.games import get_game
    >>> score(get_game("binary"), "smce_over_T", np.zeros((2, 0)), np.array([0.5, 0.5]), np.array([1.0, 1.0]))
    0.5
    """
    name = game.name
    T = len(y)
    if name == "quantile":
        from arena.games.quantile import coverage_error

        return coverage_error(p, y, game.q) if metric == "coverage_error" else pinball_regret(p, y, game.q)
    if name == "experts":
        from arena.games.experts import ExpertsRun, experts_metrics

        return experts_metrics(ExpertsRun(game, SimpleNamespace(X=X, p=p, y=y), None))[metric]
    if metric.startswith("regret_decision"):
        regret = float(np.sum(game.action_losses(game.actions(p), y)) - game.best_fixed_loss(y))
        return regret / T if metric.endswith("_over_T") and T else regret
    from arena.metrics import calibration as cal
    from arena.metrics.regret import regret_constant, regret_linear
    from arena.metrics.smce import smce

    if metric == "smce_over_T":
        return smce(p, y, "paper") / T if T else 0.0
    if metric == "ece":
        return cal.ece(p, y)
    if metric == "bias":
        return cal.bias(p, y)
    if metric == "regret_constant":
        return regret_constant(p, y)
    return regret_linear(p, y, X, M, intercept)


def value(result, metric: str, game) -> float:
    """The metric of a finished game of ``game``: the referee's summary value, or (a metric the
    summary lacks) :func:`score` on the recorded rounds."""
    if metric in result.summary:
        return float(result.summary[metric])
    rec = result.recorder
    return score(game, metric, rec.X, rec.p, rec.y)


def certificate(result, metric: str) -> tuple[float, float, str] | tuple[None, None, None]:
    """(certified value, certified bound, certificate name) of the certificate that bounds ``metric``
    when the forecaster claims it, on the metric's scale (``_over_T`` metrics divided by T);
    (None, None, None) when none does."""
    name = OBJECTIVES.get(result.game, {}).get(metric)
    cert = result.certificates.get(name) if name else None
    if cert is None or cert.holds is None:
        return None, None, None
    scale = result.recorder.n if metric.endswith("_over_T") and result.recorder.n else 1
    return cert.value / scale, cert.bound / scale, name
