"""Adaptive worst-case natures for the binary game: they see the announced forecast.

Both answer deterministically (a float 0.0 or 1.0). They see the announced forecast
distribution, never the coin that realizes it, so against a randomized
forecaster they act on the forecast's mean.

References
----------
Perdomo & Recht, "In Defense of Defensive Forecasting", §2, §5 and §8.
"""

from __future__ import annotations

import numpy as np

from arena.protocols import Context, Forecast, Nature
from arena.registry import register
from arena.validators import MAX_SIZE
from arena.validators import check_count as _check_count  # the name BiasPusher uses


@register
class AntiForecaster(Nature):
    """The contrarian: y_t = 1 if the announced forecast's mean is below 1/2, else 0 (adaptive).

    Every deterministic forecaster that thresholds at 1/2 is wrong in every round
    against it; it is the nature behind the 0-1 loss counterexample of the paper's §5.

    Parameters
    ----------
    None.

    Examples
    --------
    >>> import numpy as np
    >>> nature = AntiForecaster()
    >>> nature.reset(np.random.default_rng(0))
    >>> nature.respond(1, nature.context(1), Forecast.point(0.3))
    1.0
    >>> nature.respond(2, nature.context(2), Forecast.two_point(0.4, 0.7, 0.2))
    0.0

    References
    ----------
    Perdomo & Recht, §2 (bit prediction) and §5 (decisions).
    """

    name = "anti_forecaster"
    games = ("binary",)
    adaptive = True

    def respond(self, t: int, x: Context, forecast: Forecast) -> float:
        return 1.0 if forecast.mean < 0.5 else 0.0


@register
class BiasPusher(Nature):
    """Pushes wherever the forecaster's running calibration error is worst (adaptive).

    It keeps, for ``bins`` equal bins of [0, 1], the running sum S_b of ``y_s - p_s`` over the
    past rounds whose realized forecast ``p_s`` fell in bin b; the *worst* bin is the one with
    the largest ``|S_b|`` (the lowest such bin on a tie). In round t, with m the announced
    forecast's mean:

    - when m falls in the worst bin, it answers the outcome that grows ``|S|`` there: 1 if the
      sum is positive, 0 if negative (before any error, ``1{m < 1/2}``);
    - otherwise it steers the forecaster back towards the worst bin: 1 when m lies below it,
      0 when above (an adaptive forecaster follows its outcomes), so that the forecaster
      returns where its error is largest and the pusher grows it further.

    Unlike ``anti_forecaster`` (``1{m < 1/2}`` whatever the history), its answer depends on
    where the error has accumulated.

    Parameters
    ----------
    bins : int, default 10
        Number of equal-width bins of [0, 1] (the last bin includes 1).

    Examples
    --------
    >>> import numpy as np
    >>> nature = BiasPusher(bins=10)
    >>> nature.reset(np.random.default_rng(0))
    >>> y = nature.respond(1, nature.context(1), Forecast.point(0.55)); y   # no error yet: 1{m < 1/2}
    0.0
    >>> nature.observe(1, 0.55, y)          # bin 5 now holds the worst error, -0.55
    >>> nature.respond(2, nature.context(2), Forecast.point(0.57))    # in it: push it further down
    0.0
    >>> nature.respond(2, nature.context(2), Forecast.point(0.2))     # below it: steer up
    1.0

    References
    ----------
    Perdomo & Recht, §8 (calibration).
    """

    name = "bias_pusher"
    games = ("binary",)
    adaptive = True

    def __init__(self, bins: int = 10) -> None:
        self.bins = _check_count(self.name, "bins", bins, 10, maximum=MAX_SIZE)

    def reset(self, rng: np.random.Generator) -> None:
        super().reset(rng)
        self._sums = [0.0] * self.bins  # lists: quicker than numpy for one element a round
        self._worst = None  # the bin with the largest |sum| (None before any error)

    def _bin(self, p: float) -> int:
        return min(max(int(p * self.bins), 0), self.bins - 1)

    def respond(self, t: int, x: Context, forecast: Forecast) -> float:
        mean = forecast.mean
        k, w = self._bin(mean), self._worst
        if w is None or k == w:
            s = self._sums[k]
            return 1.0 if s > 0 or (s == 0 and mean < 0.5) else 0.0
        return 1.0 if k < w else 0.0

    def observe(self, t: int, p: float, y: float) -> None:
        k = self._bin(p)
        self._sums[k] += y - p
        w = self._worst
        if w is None or abs(self._sums[k]) > abs(self._sums[w]) or (k < w and abs(self._sums[k]) == abs(self._sums[w])):
            self._worst = k
        elif k == w:  # the worst bin's error shrank: another bin may now be worse
            sums = [abs(v) for v in self._sums]
            self._worst = sums.index(max(sums))
