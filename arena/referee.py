"""The referee: turns a recorded game into metrics, curves and certificates.

The game's own module scores it (:meth:`arena.games.Game.score`: metrics, curves, and the
certificates it can check); the referee holds the settings and checks the forecaster's claims
in one loop. A certificate is a guarantee of the paper evaluated on the run's own data
(:mod:`arena.certificates`).

References
----------
Perdomo & Recht, §2-§10; errata: docs/ERRATA.md.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from arena.certificates import MAX_TOL, Certificate, checkpoints, no_rounds
from arena.games import binary, certificates
from arena.kernels import make_kernel

__all__ = ["CERTIFICATES", "Certificate", "Referee", "Score", "check_tolerance", "checkpoints"]

#: Certificate name -> function(run, referee) -> Certificate, over every registered game.
CERTIFICATES = certificates()


class Score(NamedTuple):
    """A recorded game, scored: what :meth:`Referee.score` returns."""

    #: Metric name -> value, for the result row.
    summary: dict[str, float]
    #: Certificate name -> Certificate, for every certificate the forecaster claims.
    certificates: dict[str, Certificate]
    #: A DataFrame (t, metric, value) or its rows as tuples (the binary game: the runner's result builds
    #: the frame when it is read).
    curves: Any


class Referee:
    """Scores a recorded game: metrics, log-spaced curves and the forecaster's certificates.

    Parameters
    ----------
    M : norm bound of the linear comparators (regret and its certificate).
    ece_bins : bins of the binned ECE.
    oi_features : the declared Phi of the outcome-indistinguishability gap.
    n_checkpoints : about how many log-spaced rounds the curves have.
    max_tol : the largest search tolerance the referee accepts (default 2^-34). Every bound adds
        the allowance A(T, max_tol) such a tolerance can explain (fixed before the game); a
        forecaster declaring a looser tolerance is refused (:func:`check_tolerance`).
    intercept : whether the linear comparators of ``regret_linear`` (and the ``linear_regret``
        certificate) get an intercept, <w, x> + a with ||(w, a)|| <= M (the default: without it and
        without a context, the only comparator is the zero forecast and both are not applicable).
    hat_eps, hat_alpha : the width ε and the centre α of the hat function h_{ε,α}(p) = w_ε(p - α)
        of §8 (ε <= min(α, 1 - α)): the ``hat_calibration`` metric |Σ_t h_{ε,α}(p_t)(y_t - p_t)|.

    Examples
    --------
    >>> Referee(max_tol=1.5)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: referee: max_tol=1.5 must be in (0, 1), the largest search tolerance the referee accepts, ...
    """

    def __init__(
        self,
        M: float = 1.0,
        ece_bins: int = 10,
        oi_features=("1", "p", "x"),
        n_checkpoints: int = 20,
        max_tol: float = MAX_TOL,
        intercept: bool = True,
        hat_eps: float = 0.1,
        hat_alpha: float = 0.5,
    ):
        if not M > 0:
            raise ValueError(f"referee: M={M!r} must be > 0 (the comparator norm bound)")
        if isinstance(max_tol, bool) or not isinstance(max_tol, (int, float)) or not 0 < max_tol < 1:
            raise ValueError(
                f"referee: max_tol={max_tol!r} must be in (0, 1), the largest search tolerance the "
                f"referee accepts, e.g. max_tol: {MAX_TOL!r} (2**-34)"
            )
        for key, v in (("hat_eps", hat_eps), ("hat_alpha", hat_alpha)):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v <= 1:
                raise ValueError(
                    f"referee: {key}={v!r} must be in (0, 1] (the hat-function calibration of §8), e.g. {key}: 0.1"
                )
        if not hat_eps <= min(hat_alpha, 1 - hat_alpha):
            raise ValueError(
                f"referee: hat_eps={hat_eps!r} must be <= min(hat_alpha, 1 - hat_alpha) = "
                f"{min(hat_alpha, 1 - hat_alpha)!r} (§8: h_(eps,alpha) maps [0, 1] into [0, 1]), "
                "e.g. hat_eps: 0.1 with hat_alpha: 0.5"
            )
        for key, v, default in (("ece_bins", ece_bins, 10), ("n_checkpoints", n_checkpoints, 20)):
            # int() of a huge or infinite float would raise OverflowError, not a config error
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not 1 <= v < math.inf or v != int(v):
                raise ValueError(f"referee: {key}={v!r} must be a positive integer, e.g. {key}: {default}")
        self.M, self.ece_bins, self.n_checkpoints = float(M), int(ece_bins), int(n_checkpoints)
        self.max_tol, self.intercept = float(max_tol), bool(intercept)
        self.hat_eps, self.hat_alpha = float(hat_eps), float(hat_alpha)
        self.oi_kernel = make_kernel({"features": list(oi_features)})

    def accepts(self, forecaster) -> None:
        """Refuse a forecaster whose declared search tolerance exceeds :attr:`max_tol` (see :func:`check_tolerance`)."""
        check_tolerance(forecaster, self.max_tol)

    def metrics(self, X, p, y, y_prob=None, grid: int | None = None) -> dict[str, float]:
        """Every binary metric of a run; ``grid`` = N adds the per-grid-point calibration error
        of forecasts rounded to {0, 1/N, ..., 1} (see :func:`arena.games.binary.metrics`)."""
        return binary.metrics(self, X, p, y, y_prob, grid)

    def score(self, game, rec, forecaster) -> Score:
        """Metrics, certificates and curves of a recorded game (the game scores, the referee checks the claims)."""
        scored = game.score(self, rec, forecaster)
        return Score(scored.summary, self.certificates(game, rec, forecaster, scored.scorable), scored.curves)

    def certificates(self, game, rec, forecaster, scorable: dict) -> dict[str, Certificate]:
        """The forecaster's claimed certificates; ``scorable``: name -> a function scoring it on this run."""
        out = {}
        for name in forecaster.claims:
            if name not in scorable:
                if name not in CERTIFICATES:
                    raise ValueError(
                        f"forecaster {forecaster.name!r} claims an unknown certificate {name!r}; "
                        f"known: {sorted(CERTIFICATES)}"
                    )
                raise ValueError(
                    f"forecaster {forecaster.name!r} claims the certificate {name!r}, which the "
                    f"{game.name!r} game cannot check; it checks {sorted(scorable)}"
                )
            out[name] = scorable[name]() if len(rec.y) else no_rounds(name)
        return out


def check_tolerance(forecaster, max_tol: float) -> None:
    """Raise a one-line ValueError when ``forecaster`` declares a search tolerance looser than the
    referee accepts (the allowance of every bound is fixed from ``max_tol`` before the game).

    Examples
    --------
    >>> class F:
    ...     name, tol = "constant", 0.99
    >>> check_tolerance(F(), 2.0**-34)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: forecaster 'constant' declares tol=0.99, looser than the referee accepts (referee.max_tol=...); ...
    """
    tol = getattr(forecaster, "tol", 0.0)
    try:
        tol = float(tol or 0.0)
    except (TypeError, ValueError):
        raise ValueError(
            f"forecaster {forecaster.name!r} declares tol={tol!r}, not a number; give a width "
            f"<= referee.max_tol={max_tol!r}"
        ) from None
    if math.isnan(tol) or tol > max_tol:
        raise ValueError(
            f"forecaster {forecaster.name!r} declares tol={tol!r}, looser than the referee accepts "
            f"(referee.max_tol={max_tol!r}); give the forecaster tol <= {max_tol!r} or raise "
            "referee.max_tol"
        )
