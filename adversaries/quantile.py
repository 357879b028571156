"""Natures of the quantile game (§10): continuous laws, drift, groups, Lipschitz adversaries, real series.

Every nature here plays the quantile game only and keeps its outcomes inside the game's
range (ymin, ymax] (the arena sets ``self.game`` before ``reset``; outside the arena the
default quantile game is assumed). The i.i.d., drifting, group and Lipschitz natures
return an outcome *law* (:mod:`arena.laws`), truncated to the range, so that the referee
computes expected coverage exactly and knows the law's Lipschitz constant L; the replays
return the recorded numbers.

Group convention: a nature whose contexts carry groups puts the one-hot indicators of
its groups in the *last* ``group_dim`` coordinates of x_t and sets ``group_dim``; the
referee reports coverage per group and the conditional quantile DF (whose default feature
map contains x) certifies it.

References
----------
Perdomo & Recht, "In Defense of Defensive Forecasting", §10; errata: docs/ERRATA.md.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable

import numpy as np

from adversaries.replay import Replay, check_columns
from arena.games import QuantileGame
from arena.laws import Mixture, TruncatedNormal, TruncatedStudentT, Uniform, lipschitz_ramp
from arena.protocols import EMPTY_CONTEXT, Context, Forecast, GroupNature
from arena.registry import register
from arena.validators import check_count, check_positive, check_real, check_vector


class _QuantileNature(GroupNature):
    games = ("quantile",)
    adaptive = False
    group_dim = 0

    def _game(self) -> QuantileGame | None:
        game = getattr(self, "game", None)
        return game if isinstance(game, QuantileGame) else None

    def reset(self, rng: np.random.Generator) -> None:
        super().reset(rng)
        game = self._game() or QuantileGame()
        self._q, self._lo, self._hi = game.q, game.ymin, game.ymax

    def _normal(self, loc: float, scale: float) -> TruncatedNormal:
        try:
            return TruncatedNormal(loc, scale, self._lo, self._hi)
        except ValueError as exc:
            raise ValueError(f"{self.name}: {exc}") from None


def _one_hot(i: int, n: int) -> np.ndarray:
    x = np.zeros(n)
    x[i] = 1.0
    return x


# ------------------------------------------------------------------------------- i.i.d.
@register
class IidNormal(_QuantileNature):
    """y_t ~ N(loc, scale^2) truncated to (ymin, ymax], i.i.d. (oblivious; exposes its law).

    Examples
    --------
    >>> from arena import play
    >>> r = play("quantile", "running_quantile", IidNormal(loc=1.0, scale=2.0), T=1000, seed=0)
    >>> round(r.summary["expected_coverage"], 2)
    0.9

    References
    ----------
    Perdomo & Recht, §10.
    """

    name = "iid_normal"

    def __init__(self, loc: float = 0.0, scale: float = 1.0):
        self.loc = check_real(self.name, "loc", loc, "give a number such as loc: 0.0")
        self.scale = check_positive(self.name, "scale", scale, 1.0)

    def reset(self, rng):
        super().reset(rng)
        self._law = self._normal(self.loc, self.scale)

    def respond(self, t, x, forecast):
        return self._law


@register
class IidUniform(_QuantileNature):
    """y_t uniform on (low, high], i.i.d.; (low, high] must lie inside the game's range.

    References
    ----------
    Perdomo & Recht, §10.
    """

    name = "iid_uniform"

    def __init__(self, low: float = -1.0, high: float = 1.0):
        self.low = check_real(self.name, "low", low, "give a number such as low: -1.0")
        self.high = check_real(self.name, "high", high, "give a number such as high: 1.0")
        if not self.low < self.high:
            raise ValueError(f"{self.name}: low={low!r} must be below high={high!r}; e.g. low: -1.0, high: 1.0")

    def reset(self, rng):
        super().reset(rng)
        if self.low < self._lo or self.high > self._hi:
            raise ValueError(
                f"{self.name}: (low, high] = ({self.low}, {self.high}] is not inside the game's range "
                f"({self._lo}, {self._hi}]; narrow it or widen the game (game.ymin, game.ymax)"
            )
        self._law = Uniform(self.low, self.high)

    def respond(self, t, x, forecast):
        return self._law


@register
class IidStudentT(_QuantileNature):
    """y_t ~ loc + scale * t_df truncated to (ymin, ymax], i.i.d. (heavy tails; df > 1).

    References
    ----------
    Perdomo & Recht, §10.
    """

    name = "iid_student_t"

    def __init__(self, df: float = 3.0, loc: float = 0.0, scale: float = 1.0):
        self.df = check_real(self.name, "df", df, "give degrees of freedom such as df: 3.0")
        if not self.df > 1:
            raise ValueError(f"{self.name}: df={df!r} must be > 1 (the mean must exist); give e.g. df: 3.0")
        self.loc = check_real(self.name, "loc", loc, "give a number such as loc: 0.0")
        self.scale = check_positive(self.name, "scale", scale, 1.0)

    def reset(self, rng):
        super().reset(rng)
        try:
            self._law = TruncatedStudentT(self.df, self.loc, self.scale, self._lo, self._hi)
        except ValueError as exc:
            raise ValueError(f"{self.name}: {exc}") from None

    def respond(self, t, x, forecast):
        return self._law


@register
class IidMixture(_QuantileNature):
    """y_t ~ sum_i w_i N(loc_i, scale_i^2), each truncated to (ymin, ymax], i.i.d. (bimodal by default).

    References
    ----------
    Perdomo & Recht, §10.
    """

    name = "iid_mixture"

    def __init__(
        self,
        locs: Iterable[float] = (-2.0, 2.0),
        scales: Iterable[float] = (0.5, 1.0),
        weights: Iterable[float] = (0.5, 0.5),
    ):
        self.locs = check_vector(self.name, "locs", locs, "[-2.0, 2.0]")
        self.scales = check_vector(self.name, "scales", scales, "[0.5, 1.0]")
        self.weights = check_vector(self.name, "weights", weights, "[0.5, 0.5]", probabilities=True)
        if not len(self.locs) == len(self.scales) == len(self.weights):
            raise ValueError(
                f"{self.name}: locs, scales and weights need one entry per component; got "
                f"{len(self.locs)}, {len(self.scales)} and {len(self.weights)}"
            )
        if any(s <= 0 for s in self.scales):
            raise ValueError(f"{self.name}: scales={list(self.scales)!r} must all be > 0")
        if not abs(sum(self.weights) - 1.0) < 1e-9:
            raise ValueError(f"{self.name}: weights={list(self.weights)!r} must sum to 1")

    def reset(self, rng):
        super().reset(rng)
        self._law = Mixture(
            tuple(self._normal(m, s) for m, s in zip(self.locs, self.scales, strict=True)), self.weights
        )

    def respond(self, t, x, forecast):
        return self._law


# ----------------------------------------------------------------------------- drifting
@register
class MeanShift(_QuantileNature):
    """Drifting mean: y_t ~ N(loc + amplitude sin(2 pi t/period) + slope t, scale^2), truncated.

    References
    ----------
    Perdomo & Recht, §10 (any sequence of laws).
    """

    name = "mean_shift"

    def __init__(
        self, loc: float = 0.0, amplitude: float = 2.0, period: int = 500, slope: float = 0.0, scale: float = 1.0
    ):
        self.loc = check_real(self.name, "loc", loc, "give a number such as loc: 0.0")
        self.amplitude = check_real(self.name, "amplitude", amplitude, "give a number such as amplitude: 2.0")
        self.period = check_count(self.name, "period", period, 500)
        self.slope = check_real(self.name, "slope", slope, "give a number such as slope: 0.001")
        self.scale = check_positive(self.name, "scale", scale, 1.0)

    def mean_at(self, t: int) -> float:
        return self.loc + self.amplitude * math.sin(2 * math.pi * t / self.period) + self.slope * t

    def respond(self, t, x, forecast):
        return self._normal(self.mean_at(t), self.scale)


@register
class VarianceChange(_QuantileNature):
    """Changing spread: y_t ~ N(loc, s_t^2), truncated, with s_t cycling through ``scales``
    every ``every`` rounds.

    References
    ----------
    Perdomo & Recht, §10.
    """

    name = "variance_change"

    def __init__(self, loc: float = 0.0, scales: Iterable[float] = (0.5, 2.0), every: int = 500):
        self.loc = check_real(self.name, "loc", loc, "give a number such as loc: 0.0")
        self.scales = check_vector(self.name, "scales", scales, "[0.5, 2.0]")
        if any(s <= 0 for s in self.scales):
            raise ValueError(f"{self.name}: scales={list(self.scales)!r} must all be > 0, e.g. [0.5, 2.0]")
        self.every = check_count(self.name, "every", every, 500)

    def reset(self, rng):
        super().reset(rng)
        self._laws = [self._normal(self.loc, s) for s in self.scales]

    def respond(self, t, x, forecast):
        return self._laws[((t - 1) // self.every) % len(self._laws)]


@register
class LevelChangepoints(_QuantileNature):
    """Change points: every ``every`` rounds the mean jumps to a fresh draw from U(low, high)
    (nature's own stream); y_t ~ N(mean, scale^2), truncated.

    References
    ----------
    Perdomo & Recht, §10.
    """

    name = "level_changepoints"

    def __init__(self, every: int = 300, low: float = -3.0, high: float = 3.0, scale: float = 1.0):
        self.every = check_count(self.name, "every", every, 300)
        self.low = check_real(self.name, "low", low, "give a number such as low: -3.0")
        self.high = check_real(self.name, "high", high, "give a number such as high: 3.0")
        if not self.low <= self.high:
            raise ValueError(f"{self.name}: low={low!r} must be <= high={high!r}")
        self.scale = check_positive(self.name, "scale", scale, 1.0)

    def reset(self, rng):
        super().reset(rng)
        self._law = None

    def respond(self, t, x, forecast):
        if self._law is None or (t - 1) % self.every == 0:
            self._law = self._normal(float(self.rng.uniform(self.low, self.high)), self.scale)
        return self._law


# ------------------------------------------------------------------------------- groups
@register
class GroupNormal(_QuantileNature):
    """Groups with their own laws: group g_t ~ ``probs`` (nature's stream), x_t = one-hot(g_t),
    y_t ~ N(locs[g_t], scales[g_t]^2), truncated. ``group_dim`` = number of groups.

    A forecaster that ignores x covers q only on average; per group it over- and undercovers.

    References
    ----------
    Perdomo & Recht, §10 (group-conditional guarantees).
    """

    name = "group_normal"

    def __init__(
        self,
        locs: Iterable[float] = (-2.0, 0.0, 3.0),
        scales: Iterable[float] = (0.5, 1.0, 2.0),
        probs: Iterable[float] = (0.5, 0.3, 0.2),
    ):
        self.locs = check_vector(self.name, "locs", locs, "[-2.0, 0.0, 3.0]")
        self.scales = check_vector(self.name, "scales", scales, "[0.5, 1.0, 2.0]")
        self.probs = check_vector(self.name, "probs", probs, "[0.5, 0.3, 0.2]", probabilities=True)
        if not len(self.locs) == len(self.scales) == len(self.probs):
            raise ValueError(
                f"{self.name}: locs, scales and probs need one entry per group; got "
                f"{len(self.locs)}, {len(self.scales)} and {len(self.probs)}"
            )
        if any(s <= 0 for s in self.scales):
            raise ValueError(f"{self.name}: scales={list(self.scales)!r} must all be > 0")
        if not abs(sum(self.probs) - 1.0) < 1e-9:
            raise ValueError(f"{self.name}: probs={list(self.probs)!r} must sum to 1")

    @property
    def context_dim(self) -> int:  # type: ignore[override]
        return len(self.locs)

    @property
    def group_dim(self) -> int:  # type: ignore[override]
        return len(self.locs)

    def reset(self, rng):
        super().reset(rng)
        self._laws = [self._normal(m, s) for m, s in zip(self.locs, self.scales, strict=True)]
        self._cum = np.cumsum(self.probs)

    def context(self, t):
        g = min(int(np.searchsorted(self._cum, self.rng.random(), side="right")), len(self._laws) - 1)
        return _one_hot(g, len(self._laws))

    def respond(self, t, x, forecast):
        return self._laws[int(np.argmax(x[-self.group_dim :]))]


@register
class HourlyCycle(_QuantileNature):
    """Hour-of-day groups: hour h = (t - 1) mod 24, x_t = one-hot(h), y_t ~ N(m_h, s_h^2) truncated,
    m_h = loc + amplitude sin(2 pi h/24), s_h = scale (1 + scale_amplitude cos(2 pi h/24)).

    References
    ----------
    Perdomo & Recht, §10 (group-conditional guarantees).
    """

    name = "hourly_cycle"
    HOURS = 24

    def __init__(self, loc: float = 0.0, amplitude: float = 3.0, scale: float = 1.0, scale_amplitude: float = 0.5):
        self.loc = check_real(self.name, "loc", loc, "give a number such as loc: 0.0")
        self.amplitude = check_real(self.name, "amplitude", amplitude, "give a number such as amplitude: 3.0")
        self.scale = check_positive(self.name, "scale", scale, 1.0)
        self.scale_amplitude = check_real(
            self.name, "scale_amplitude", scale_amplitude, "give a number in [0, 1) such as scale_amplitude: 0.5"
        )
        if not 0 <= self.scale_amplitude < 1:
            raise ValueError(
                f"{self.name}: scale_amplitude={scale_amplitude!r} must be in [0, 1) (the spread "
                "stays positive); give e.g. scale_amplitude: 0.5"
            )

    context_dim = HOURS
    group_dim = HOURS

    def reset(self, rng):
        super().reset(rng)
        a = 2 * math.pi / self.HOURS
        self._laws = [
            self._normal(
                self.loc + self.amplitude * math.sin(a * h), self.scale * (1 + self.scale_amplitude * math.cos(a * h))
            )
            for h in range(self.HOURS)
        ]

    def context(self, t):
        return _one_hot((t - 1) % self.HOURS, self.HOURS)

    def respond(self, t, x, forecast):
        return self._laws[(t - 1) % self.HOURS]


# ------------------------------------------------------------------------ Lipschitz CDF
@register
class LipschitzCDF(_QuantileNature):
    """An adaptive L-Lipschitz adversary (§10): it sees the announced two-point forecast and
    answers a law whose CDF rises with slope L right at the forecast atoms lo <= hi.

    - ``"above"``: F = 0 up to lo, then slope L: F(lo) = 0 and F(hi) = L (hi - lo), so
      y > p nearly surely (coverage pushed to 0), and F(hi) - F(lo) is as large as an
      L-Lipschitz CDF allows (the term Algorithm 6 must keep below L/(10 t^2));
    - ``"below"``: slope L ending at hi: F(hi) = 1, F(lo) = 1 - L (hi - lo) (coverage pushed to 1);
    - ``"push"``: ``"below"`` while the realized coverage so far is >= q, else ``"above"``,
      which drives the coverage error up.

    The ramp moves inward where it would leave the range, so every law is an L-Lipschitz
    law on (ymin, ymax]; that needs L >= 1/(ymax - ymin). The law is exposed, so the
    referee computes the per-round certificate of Algorithm 6 exactly.

    Parameters
    ----------
    L : the Lipschitz constant of the CDF, > 0 (and >= 1/(ymax - ymin)).
    mode : ``"push"``, ``"above"`` or ``"below"``.

    Examples
    --------
    >>> import numpy as np
    >>> from arena.protocols import Forecast
    >>> nature = LipschitzCDF(L=2.0, mode="above")
    >>> nature.reset(np.random.default_rng(0))
    >>> law = nature.respond(1, nature.context(1), Forecast.two_point(1.0, 1.25, 0.5))
    >>> law.cdf(1.0), law.cdf(1.25), law.lipschitz
    (0.0, 0.5, 2.0)

    References
    ----------
    Perdomo & Recht, §10 (L-Lipschitz distributions chosen after the forecast).
    """

    name = "lipschitz_cdf"
    adaptive = True
    MODES = ("push", "above", "below")

    def __init__(self, L: float = 1.0, mode: str = "push"):
        L = check_real(self.name, "L", L, "give the Lipschitz constant of nature's CDF, e.g. L: 1.0")
        if not L > 0:
            raise ValueError(
                f"{self.name}: L={L!r} must be > 0 (it bounds the slope of nature's CDF); give e.g. L: 1.0"
            )
        if mode not in self.MODES:
            raise ValueError(f"{self.name}: mode={mode!r}; expected one of {list(self.MODES)}")
        self.L, self.mode = L, mode

    def reset(self, rng):
        super().reset(rng)
        if self.L * (self._hi - self._lo) < 1:
            raise ValueError(
                f"{self.name}: L={self.L!r} is below 1/(ymax - ymin) = {1 / (self._hi - self._lo):.6g}: "
                f"no L-Lipschitz CDF fits in the game's range ({self._lo}, {self._hi}]; give "
                f"L >= {1 / (self._hi - self._lo):.6g}"
            )
        self._covered, self._n = 0, 0

    def respond(self, t, x, forecast: Forecast):
        lo, hi = min(forecast.points), max(forecast.points)
        mode = self.mode
        if mode == "push":
            mode = "below" if self._covered >= self._q * self._n else "above"
        start = lo if mode == "above" else hi - 1.0 / self.L
        return lipschitz_ramp(start, self.L, self._lo, self._hi)

    def observe(self, t, p, y):
        self._covered += int(y <= p)
        self._n += 1


# ------------------------------------------------------------------------------- replays
@register
class QuantileReplay(Replay, GroupNature):
    """Replays a numeric column of a CSV or Parquet file in the quantile game (oblivious).

    Round t plays row ``start + t - 1``. The context of round t is the row's
    ``context_columns`` followed by the one-hot indicators of its ``group_columns`` labels
    (each column coded by its sorted distinct labels), so ``group_dim`` is the number of
    labels over all group columns. Every outcome must lie in the game's range
    (ymin, ymax], checked at ``reset``. The loading and its error messages are those of
    :class:`adversaries.replay.Replay`. A path ``pkg:<package>/<file>`` names a file
    shipped inside an installed package; the default replays the shipped Seattle hourly
    temperatures (deg C).

    Parameters
    ----------
    path, column, context_columns, start, on_missing, missing_columns
        As for ``replay``; ``column`` holds real numbers.
    group_columns : list of str, default []
        Label columns whose values are groups (hour of day, station, ...).

    Examples
    --------
    >>> import numpy as np, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "series.csv")
    >>> _ = open(path, "w").write("y,site\\n1.5,a\\n-2.0,b\\n0.25,a\\n")
    >>> nature = QuantileReplay(path, column="y", group_columns=["site"])
    >>> nature.reset(np.random.default_rng(0))
    >>> nature.length, nature.group_dim, nature.context(2), nature.respond(2, nature.context(2), Forecast.point(0.0))
    (3, 2, array([0., 1.]), -2.0)

    References
    ----------
    Perdomo & Recht, §10 (any outcome sequence); errata: docs/ERRATA.md.
    """

    name = "quantile_replay"
    games = ("quantile",)
    adaptive = False
    binary_outcomes = False

    def __init__(
        self,
        path: str | os.PathLike = "pkg:adversaries/data/seattle_hourly_temp.csv",
        column: str = "temp_c",
        context_columns: Iterable[str] = (),
        group_columns: Iterable[str] = (),
        start: int = 0,
        on_missing: str = "error",
        missing_columns: Iterable[str] | None = None,
    ):
        super().__init__(path, column, context_columns, start, on_missing=on_missing, missing_columns=missing_columns)
        _, groups = check_columns(self.name, column, group_columns, "group_columns")
        overlap = set(groups) & set(self.context_columns)
        if overlap:
            raise ValueError(f"{self.name}: {sorted(overlap)} are both context and group columns; list each once")
        self.group_columns = groups

    @property
    def group_dim(self) -> int:  # type: ignore[override]
        return sum(len(levels) for levels in self._series().levels) if self.group_columns else 0

    @property
    def context_dim(self) -> int:  # type: ignore[override]
        return len(self.context_columns) + self.group_dim

    @property
    def group_labels(self) -> list[str]:
        """``column=label`` for each group coordinate, in context order."""
        s = self._series()
        return [f"{c}={v}" for c, levels in zip(self.group_columns, s.levels, strict=True) for v in levels]

    def reset(self, rng):
        super().reset(rng)
        game = getattr(self, "game", None)
        if isinstance(game, QuantileGame):
            y = self._series().y
            bad = np.flatnonzero(~((y > game.ymin) & (y <= game.ymax)))
            if bad.size:
                i = int(bad[0])
                row = int(self._series().rows[i])
                raise ValueError(
                    f"replay: {self._where(self.column, row)}: value {y[i]:g} is outside the quantile "
                    f"game's range (ymin, ymax] = ({game.ymin:g}, {game.ymax:g}]; the series spans "
                    f"[{y.min():g}, {y.max():g}]: set game.ymin below {y.min():g} and game.ymax >= {y.max():g}"
                )
        s = self._series()
        if self.group_columns:
            sizes = [len(levels) for levels in s.levels]
            offsets = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(int)
            onehot = np.zeros((s.y.size, sum(sizes)))
            for j in range(len(sizes)):
                onehot[np.arange(s.y.size), offsets[j] + s.groups[:, j]] = 1.0
            self._x = np.hstack([s.x, onehot])
        else:
            self._x = s.x

    def context(self, t: int) -> Context:
        if self.context_dim == 0:
            return EMPTY_CONTEXT
        return self._x[self._row(t)].copy()


@register
class SeattleHourlyTemp(QuantileReplay):
    """Hourly temperature at Seattle in 2010 (deg C; 8759 hours), shipped with the package.

    NOAA data as redistributed by vega_datasets (``adversaries/data/seattle_hourly_temp.csv``;
    source, license and checksum in ``adversaries/data/PROVENANCE.md``). With
    ``hour_groups`` the context is the one-hot hour of day (24 groups).

    Parameters
    ----------
    hour_groups : bool, default False
    start : int, default 0 (the first hour to replay; 0 is 2010-01-01 00:00).

    Examples
    --------
    >>> import numpy as np
    >>> nature = SeattleHourlyTemp(hour_groups=True)
    >>> nature.reset(np.random.default_rng(0))
    >>> nature.length, nature.group_dim, nature.respond(1, nature.context(1), Forecast.point(0.0))
    (8759, 24, 4.11)

    References
    ----------
    Perdomo & Recht, §10.
    """

    name = "seattle_hourly_temp"
    path = "pkg:adversaries/data/seattle_hourly_temp.csv"
    column = "temp_c"
    context_columns = ()

    def __init__(self, hour_groups: bool = False, start: int = 0):
        if not isinstance(hour_groups, (bool, np.bool_)):
            raise ValueError(f"{self.name}: hour_groups={hour_groups!r} must be true or false")  # noqa: TRY004
        self.hour_groups = bool(hour_groups)
        self.start = check_count(self.name, "start", start, 0, minimum=0)

    @property
    def group_columns(self) -> tuple[str, ...]:
        return ("hour",) if self.hour_groups else ()


@register
class SeattleDailyTemp(QuantileReplay):
    """Daily maximum temperature at Seattle, 2012-01-01 to 2015-12-30 (deg C; 1460 days).

    The ``temp_max`` column of the shipped ``adversaries/data/seattle_weather.csv`` (NOAA via
    vega_datasets; see PROVENANCE.md): a real, noisy, seasonal daily series.

    Parameters
    ----------
    start : int, default 0 (0 is 2012-01-01).

    Examples
    --------
    >>> import numpy as np
    >>> nature = SeattleDailyTemp()
    >>> nature.reset(np.random.default_rng(0))
    >>> nature.length, nature.respond(1, nature.context(1), Forecast.point(0.0))
    (1460, 12.8)

    References
    ----------
    Perdomo & Recht, §10.
    """

    name = "seattle_daily_temp"
    path = "pkg:adversaries/data/seattle_weather.csv"
    column = "temp_max"
    context_columns = ()
    group_columns = ()

    def __init__(self, start: int = 0):
        self.start = check_count(self.name, "start", start, 0, minimum=0)


__all__ = [
    "GroupNormal",
    "HourlyCycle",
    "IidMixture",
    "IidNormal",
    "IidStudentT",
    "IidUniform",
    "LevelChangepoints",
    "LipschitzCDF",
    "MeanShift",
    "QuantileReplay",
    "SeattleDailyTemp",
    "SeattleHourlyTemp",
    "VarianceChange",
]
