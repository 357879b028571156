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

import pandas as pd

from arena.certificates import Certificate, checkpoints, no_rounds
from arena.games import binary, certificates
from arena.kernels import make_kernel

__all__ = ["CERTIFICATES", "Certificate", "Referee", "checkpoints"]

#: Certificate name -> function(run, referee) -> Certificate, over every registered game.
CERTIFICATES = certificates()


class Referee:
    """Scores a recorded game: metrics, log-spaced curves and the forecaster's certificates.

    Parameters
    ----------
    M : norm bound of the linear comparators (regret and its certificate).
    ece_bins : bins of the binned ECE.
    oi_features : the declared Phi of the outcome-indistinguishability gap.
    n_checkpoints : about how many log-spaced rounds the curves have.
    """

    def __init__(self, M: float = 1.0, ece_bins: int = 10, oi_features=("1", "p", "x"), n_checkpoints: int = 20):
        if not M > 0:
            raise ValueError(f"referee: M={M!r} must be > 0 (the comparator norm bound)")
        self.M, self.ece_bins, self.n_checkpoints = float(M), int(ece_bins), int(n_checkpoints)
        self.oi_kernel = make_kernel({"features": list(oi_features)})

    def metrics(self, X, p, y, y_prob=None, grid: int | None = None) -> dict[str, float]:
        """Every binary metric of a run; ``grid`` = N adds the per-grid-point calibration error
        of forecasts rounded to {0, 1/N, ..., 1} (see :func:`arena.games.binary.metrics`)."""
        return binary.metrics(self, X, p, y, y_prob, grid)

    def score(self, game, rec, forecaster) -> tuple[dict[str, float], dict[str, Certificate], pd.DataFrame]:
        """Metrics, certificates and curves of a recorded game (the game scores, the referee checks the claims)."""
        summary, curves, scorable = game.score(self, rec, forecaster)
        return summary, self.certificates(game, rec, forecaster, scorable), curves

    def certificates(self, game, rec, forecaster, scorable: dict) -> dict[str, Certificate]:
        """The forecaster's claimed certificates; ``scorable``: name -> a function scoring it on this run."""
        out = {}
        for name in forecaster.claims:
            if name not in scorable:
                if name not in CERTIFICATES:
                    raise ValueError(f"forecaster {forecaster.name!r} claims an unknown certificate {name!r}; "
                                     f"known: {sorted(CERTIFICATES)}")
                raise ValueError(f"forecaster {forecaster.name!r} claims the certificate {name!r}, which the "
                                 f"{game.name!r} game cannot check; it checks {sorted(scorable)}")
            out[name] = scorable[name]() if len(rec.y) else no_rounds(name)
        return out
