"""Continuous outcome laws for the quantile game, all supported inside (ymin, ymax].

A nature of the quantile game may answer a round with one of these laws instead of a
number; the arena samples it with its outcome stream and the referee computes expected
coverage and expected pinball loss exactly from it. Every law offers

- ``cdf(v)`` = P(y <= v), continuous (no atoms), so that y > ymin holds almost surely;
- ``from_uniform(u)``: one uniform draw u in [0, 1) -> one outcome (the inverse CDF for a
  single law), so that ``sample`` consumes exactly one draw (paired comparisons);
- ``lipschitz``: a Lipschitz constant L of the CDF (the supremum of the density, an upper
  bound of it for mixtures): the L of §10's L-Lipschitz natures;
- ``mean`` and ``cdf_integral(v)`` = int_{-inf}^v F(s) ds, which give the expected pinball
  loss in closed form: E[rho_q(y - p)] = q (mean - p) + cdf_integral(p).

The Normal and Student-t laws are truncated to an interval ``(low, high]`` (the game's range
by default); :class:`PiecewiseLinearCDF` is the law the Lipschitz-CDF natures build after
seeing the forecast. Functions of scipy.special evaluate the standard CDFs in about a
microsecond, so a nature can build a fresh law every round.

Examples
--------
>>> law = TruncatedNormal(0.0, 1.0, -5.0, 5.0)
>>> round(law.cdf(0.0), 6), round(law.lipschitz, 6)
(0.5, 0.398943)
>>> round(law.expected_pinball(0.0, 0.5), 4)  # E|y|/2 for a standard normal
0.3989

References
----------
Perdomo & Recht, "In Defense of Defensive Forecasting", §10 (L-Lipschitz outcome laws); certificates: docs/ERRATA.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from arena.lazy import LazyModule
from arena.protocols import OutcomeLaw

special = LazyModule("scipy.special")  # imported at the first law that needs it (slow to import)

#: A truncated law needs at least this much of its base mass inside (low, high].
MIN_MASS = 1e-12


class ContinuousLaw(OutcomeLaw):
    """A law with a continuous CDF supported inside ``(low, high]``."""

    low: float
    high: float

    def from_uniform(self, u: float) -> float:
        """The outcome that the uniform draw ``u`` in [0, 1) selects."""
        raise NotImplementedError

    def sample(self, rng: np.random.Generator) -> float:
        return self.from_uniform(float(rng.random()))

    @property
    def lipschitz(self) -> float:
        raise NotImplementedError

    @property
    def mean(self) -> float:
        raise NotImplementedError

    def cdf_integral(self, v: float) -> float:
        """int_{-inf}^v F(s) ds (F = 0 below ``low``)."""
        raise NotImplementedError

    def expected_pinball(self, p: float, q: float) -> float:
        """E[rho_q(y - p)] with rho_q(u) = u (q - 1{u < 0}): q (mean - p) + int_{-inf}^p F."""
        return q * (self.mean - p) + self.cdf_integral(p)

    def _inside(self, v: float) -> float:
        # u = 0 or rounding can land on the lower end, which the quantile game excludes
        if not v > self.low:
            return math.nextafter(self.low, math.inf)
        return min(v, self.high)


# ----------------------------------------------------------------------- standard families
@dataclass(frozen=True)
class _StdNormal:
    """Standard normal: cdf, quantile, density, H(z) = int F, M(z) = int s f(s) ds (both from -inf)."""

    name = "normal"

    def cdf(self, z):
        return float(special.ndtr(z))

    def ppf(self, p):
        return float(special.ndtri(p))

    def pdf(self, z):
        return math.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)

    def H(self, z):
        return z * self.cdf(z) + self.pdf(z) if math.isfinite(z) else (0.0 if z < 0 else math.inf)

    def M(self, z):
        return -self.pdf(z) if math.isfinite(z) else 0.0


@dataclass(frozen=True)
class _StdStudentT:
    """Standard Student-t with ``df`` > 1 degrees of freedom (the mean must exist)."""

    df: float
    name = "student_t"

    @cached_property
    def _c(self):
        return math.exp(math.lgamma((self.df + 1) / 2) - math.lgamma(self.df / 2)) / math.sqrt(self.df * math.pi)

    def cdf(self, z):
        return float(special.stdtr(self.df, z))

    def ppf(self, p):
        return float(special.stdtrit(self.df, p))

    def pdf(self, z):
        return self._c * (1.0 + z * z / self.df) ** (-(self.df + 1) / 2)

    def H(self, z):  # z F(z) + (df + z^2)/(df - 1) f(z); its derivative is F
        if not math.isfinite(z):
            return 0.0 if z < 0 else math.inf
        return z * self.cdf(z) + (self.df + z * z) / (self.df - 1) * self.pdf(z)

    def M(self, z):  # -(df + z^2)/(df - 1) f(z); its derivative is z f(z)
        if not math.isfinite(z):
            return 0.0
        return -(self.df + z * z) / (self.df - 1) * self.pdf(z)


@dataclass(frozen=True)
class _Truncated(ContinuousLaw):
    """loc + scale * Z for a standard symmetric unimodal Z, conditioned on (low, high]."""

    loc: float
    scale: float
    low: float
    high: float
    _std: object = field(repr=False, default=None)
    _a: float = field(init=False, repr=False, compare=False, default=0.0)
    _b: float = field(init=False, repr=False, compare=False, default=0.0)
    _Fa: float = field(init=False, repr=False, compare=False, default=0.0)
    _Z: float = field(init=False, repr=False, compare=False, default=1.0)

    def __post_init__(self):
        kind = type(self).__name__
        for name in ("loc", "scale", "low", "high"):
            v = getattr(self, name)
            if not isinstance(v, (int, float, np.integer, np.floating)) or not math.isfinite(v):
                raise ValueError(f"{kind}: {name}={v!r} must be a finite number")
        if not self.scale > 0:
            raise ValueError(f"{kind}: scale={self.scale!r} must be > 0, e.g. scale=1.0")
        if not self.low < self.high:
            raise ValueError(f"{kind}: the support (low, high] = ({self.low}, {self.high}] is empty; need low < high")
        a, b = (self.low - self.loc) / self.scale, (self.high - self.loc) / self.scale
        Fa = self._std.cdf(a)
        Z = self._std.cdf(b) - Fa
        if not Z > MIN_MASS:
            raise ValueError(
                f"{kind}(loc={self.loc}, scale={self.scale}) has almost no mass on ({self.low}, "
                f"{self.high}]; move loc inside the range or widen it"
            )
        for name, v in (("_a", a), ("_b", b), ("_Fa", Fa), ("_Z", Z)):
            object.__setattr__(self, name, v)

    def cdf(self, v: float) -> float:
        if v <= self.low:
            return 0.0
        if v >= self.high:
            return 1.0
        return min(max((self._std.cdf((v - self.loc) / self.scale) - self._Fa) / self._Z, 0.0), 1.0)

    def from_uniform(self, u: float) -> float:
        return self._inside(self.loc + self.scale * self._std.ppf(self._Fa + u * self._Z))

    @cached_property
    def lipschitz(self) -> float:
        mode = min(max(0.0, self._a), self._b)
        return self._std.pdf(mode) / (self.scale * self._Z)

    @cached_property
    def mean(self) -> float:
        return self.loc + self.scale * (self._std.M(self._b) - self._std.M(self._a)) / self._Z

    @cached_property
    def _Ha(self) -> float:
        return self._std.H(self._a)

    def cdf_integral(self, v: float) -> float:
        if v <= self.low:
            return 0.0
        if v >= self.high:
            return self.high - self.mean + (v - self.high)  # int_low^high F = high - mean
        z = (v - self.loc) / self.scale
        return max(0.0, (self.scale * (self._std.H(z) - self._Ha) - (v - self.low) * self._Fa) / self._Z)


class TruncatedNormal(_Truncated):
    """N(loc, scale^2) conditioned on (low, high].

    Examples
    --------
    >>> law = TruncatedNormal(1.0, 2.0, 0.0, 10.0)
    >>> law.cdf(0.0), law.cdf(10.0), 0.0 < law.from_uniform(0.0) <= 10.0
    (0.0, 1.0, True)
    """

    def __init__(self, loc: float, scale: float, low: float, high: float):
        super().__init__(loc, scale, low, high, _StdNormal())


class TruncatedStudentT(_Truncated):
    """loc + scale * T_df conditioned on (low, high]; ``df`` > 1 so that the mean exists.

    Examples
    --------
    >>> law = TruncatedStudentT(3.0, 0.0, 1.0, -20.0, 20.0)
    >>> round(law.cdf(0.0), 12), law.df
    (0.5, 3.0)
    """

    def __init__(self, df: float, loc: float, scale: float, low: float, high: float):
        if not (isinstance(df, (int, float, np.integer, np.floating)) and math.isfinite(df) and df > 1):
            raise ValueError(
                f"TruncatedStudentT: df={df!r} must be a finite number > 1 (the mean must exist), e.g. df=3"
            )
        super().__init__(loc, scale, low, high, _StdStudentT(float(df)))

    @property
    def df(self) -> float:
        return self._std.df


@dataclass(frozen=True)
class Uniform(ContinuousLaw):
    """The uniform law on (low, high] (L = 1/(high - low)).

    Examples
    --------
    >>> Uniform(0.0, 4.0).cdf(1.0), Uniform(0.0, 4.0).lipschitz
    (0.25, 0.25)
    """

    low: float
    high: float

    def __post_init__(self):
        if not (math.isfinite(self.low) and math.isfinite(self.high) and self.low < self.high):
            raise ValueError(f"Uniform: need finite low < high, got ({self.low!r}, {self.high!r}]")

    def cdf(self, v):
        return min(max((v - self.low) / (self.high - self.low), 0.0), 1.0)

    def from_uniform(self, u):
        return self._inside(self.low + u * (self.high - self.low))

    @property
    def lipschitz(self):
        return 1.0 / (self.high - self.low)

    @property
    def mean(self):
        return 0.5 * (self.low + self.high)

    def cdf_integral(self, v):
        if v <= self.low:
            return 0.0
        if v >= self.high:
            return 0.5 * (self.high - self.low) + (v - self.high)
        return 0.5 * (v - self.low) ** 2 / (self.high - self.low)


@dataclass(frozen=True)
class Mixture(ContinuousLaw):
    """sum_i w_i law_i. One uniform draw picks the component and is rescaled to sample it.

    ``lipschitz`` is sum_i w_i L_i, an upper bound of the density's supremum.

    Examples
    --------
    >>> m = Mixture((Uniform(0.0, 1.0), Uniform(1.0, 3.0)), (0.5, 0.5))
    >>> m.cdf(1.0), m.from_uniform(0.25), m.from_uniform(0.75), m.lipschitz
    (0.5, 0.5, 2.0, 0.75)
    """

    components: tuple
    weights: tuple

    def __post_init__(self):
        w = np.asarray(self.weights, float)
        if len(self.components) == 0 or len(w) != len(self.components):
            raise ValueError("Mixture: give as many weights as components (at least one)")
        if np.any(~np.isfinite(w)) or np.any(w < 0) or not abs(w.sum() - 1.0) < 1e-9:
            raise ValueError(f"Mixture: weights {tuple(self.weights)!r} must be >= 0 and sum to 1")
        object.__setattr__(self, "weights", tuple(float(x) for x in w))

    @property
    def low(self):  # type: ignore[override]
        return min(c.low for c in self.components)

    @property
    def high(self):  # type: ignore[override]
        return max(c.high for c in self.components)

    def cdf(self, v):
        return min(max(math.fsum(w * c.cdf(v) for c, w in zip(self.components, self.weights, strict=True)), 0.0), 1.0)

    def from_uniform(self, u):
        acc = 0.0
        for c, w in zip(self.components, self.weights, strict=True):
            if w > 0 and u < acc + w:
                return c.from_uniform(min(max((u - acc) / w, 0.0), math.nextafter(1.0, 0.0)))
            acc += w
        last = max(i for i, w in enumerate(self.weights) if w > 0)
        return self.components[last].from_uniform(math.nextafter(1.0, 0.0))

    @property
    def lipschitz(self):
        return math.fsum(w * c.lipschitz for c, w in zip(self.components, self.weights, strict=True))

    @property
    def mean(self):
        return math.fsum(w * c.mean for c, w in zip(self.components, self.weights, strict=True))

    def cdf_integral(self, v):
        return math.fsum(w * c.cdf_integral(v) for c, w in zip(self.components, self.weights, strict=True))


@dataclass(frozen=True)
class PiecewiseLinearCDF(ContinuousLaw):
    """The continuous CDF interpolating ``values`` (0 first, 1 last, non-decreasing) at ``knots``.

    Its Lipschitz constant is its steepest slope. The Lipschitz-CDF natures build one after
    seeing the forecast (§10).

    Examples
    --------
    >>> law = PiecewiseLinearCDF((0.0, 1.0, 1.5, 4.0), (0.0, 0.0, 1.0, 1.0))
    >>> law.cdf(1.25), law.lipschitz, law.from_uniform(0.5), law.mean
    (0.5, 2.0, 1.25, 1.25)
    """

    knots: tuple
    values: tuple

    def __post_init__(self):
        # plain Python: a Lipschitz nature builds one of these (a few knots) every round
        v, F = tuple(float(x) for x in self.knots), tuple(float(x) for x in self.values)
        if len(v) < 2 or len(v) != len(F):
            raise ValueError("PiecewiseLinearCDF: give at least two knots and one value per knot")
        pairs = list(zip(v[:-1], v[1:], F[:-1], F[1:], strict=True))
        if not all(map(math.isfinite, v)) or any(b < a for a, b, _, _ in pairs):
            raise ValueError(f"PiecewiseLinearCDF: knots {v!r} must be finite and non-decreasing")
        if F[0] != 0.0 or F[-1] != 1.0 or any(Fb < Fa for _, _, Fa, Fb in pairs):
            raise ValueError(f"PiecewiseLinearCDF: values {F!r} must rise from 0 to 1")
        if any(a == b and Fb > Fa for a, b, Fa, Fb in pairs):
            raise ValueError("PiecewiseLinearCDF: a jump (two equal knots with different values) is an atom")
        object.__setattr__(self, "knots", v)
        object.__setattr__(self, "values", F)

    @property
    def low(self):  # type: ignore[override]
        return self.knots[0]

    @property
    def high(self):  # type: ignore[override]
        return self.knots[-1]

    def cdf(self, v):
        if v <= self.knots[0]:
            return 0.0
        if v >= self.knots[-1]:
            return 1.0
        for a, b, Fa, Fb in self._segments:
            if v < b:
                return Fa if v <= a else Fa + (Fb - Fa) * (v - a) / (b - a)
        return 1.0

    @cached_property
    def _segments(self):
        """(a, b, F(a), F(b)) of the rising pieces, in order."""
        return [
            (self.knots[i], self.knots[i + 1], self.values[i], self.values[i + 1])
            for i in range(len(self.knots) - 1)
            if self.values[i + 1] > self.values[i]
        ]

    def from_uniform(self, u):
        segs = self._segments
        for a, b, Fa, Fb in segs:
            if u < Fb:
                return self._inside(a + (b - a) * (u - Fa) / (Fb - Fa))
        return self._inside(segs[-1][1])

    @property
    def lipschitz(self):
        return max((Fb - Fa) / (b - a) for a, b, Fa, Fb in self._segments)

    @property
    def mean(self):
        return math.fsum((Fb - Fa) * 0.5 * (a + b) for a, b, Fa, Fb in self._segments)

    def cdf_integral(self, v):
        total = 0.0
        for i in range(len(self.knots) - 1):
            a, b, Fa, Fb = self.knots[i], self.knots[i + 1], self.values[i], self.values[i + 1]
            if v <= a:
                break
            e = min(v, b)
            Fe = Fa + (Fb - Fa) * (e - a) / (b - a) if b > a else Fa
            total += 0.5 * (Fa + Fe) * (e - a)
        if v > self.knots[-1]:
            total += v - self.knots[-1]
        return total


def lipschitz_ramp(start: float, L: float, low: float, high: float) -> PiecewiseLinearCDF:
    """The L-Lipschitz CDF on (low, high] that is 0 up to ``start`` and rises with slope L to 1.

    ``start`` is moved left as far as needed for the ramp to end by ``high`` (and never below
    ``low``); it needs L (high - low) >= 1.

    Examples
    --------
    >>> lipschitz_ramp(0.5, 2.0, 0.0, 4.0).knots
    (0.0, 0.5, 1.0, 4.0)
    >>> lipschitz_ramp(3.9, 2.0, 0.0, 4.0).knots  # moved left so that the mass fits
    (0.0, 3.5, 4.0)
    """
    if not L * (high - low) >= 1.0:
        raise ValueError(
            f"no L-Lipschitz CDF on ({low}, {high}] for L={L}: need L >= 1/(high - low) = {1.0 / (high - low):.6g}"
        )
    start = min(max(start, low), high - 1.0 / L)
    end = start + 1.0 / L
    knots, values = [low], [0.0]
    if start > low:
        knots.append(start)
        values.append(0.0)
    knots.append(min(end, high))
    values.append(1.0)
    if end < high:
        knots.append(high)
        values.append(1.0)
    return PiecewiseLinearCDF(tuple(knots), tuple(values))


__all__ = [
    "MIN_MASS",
    "ContinuousLaw",
    "Mixture",
    "PiecewiseLinearCDF",
    "TruncatedNormal",
    "TruncatedStudentT",
    "Uniform",
    "lipschitz_ramp",
]
