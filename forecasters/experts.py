"""Forecasters of the experts game (§9): ℓ∞ defensive forecasting and the classical baselines.

Every forecaster keeps each expert's cumulative loss L_j (the advice scored at the forecast
played, so second-guessing experts are scored at p_t) and reads the game's loss (squared
or log) from the game the arena sets. A context is an :class:`arena.games.experts.AdviceContext`
(or a plain array of advice): ``advice_function(x)(p)`` is the advice given to the forecast p.

* ``linf_df``: Algorithm 5 with F_j = λ[(p - y)^2 - (f_j - y)^2] (squared, λ in (0, 2]) or
  F_j = log f_j(y) - log p(y) (log loss). The weights α_j ∝ exp(sum_s F_j) are ∝ exp(-λ L_j).
  The search runs on the sign of S_t, computed in log space: for the squared loss
  sign S_t(p) = sign(λ(1 - 2p) + log A_1(p) - log A_0(p)) with A_y = sum_j α_j exp(-λ(f_j - y)^2);
  for the log loss S_t(0) = +inf and S_t(1) = -inf, and the search runs on the
  sign-equivalent sum_j α_j f_j(p) - p, whose root is the Bayes mixture. No
  overflow and no NaN for advice or forecasts at 0 or 1;
* ``aggregating``: Vovk's aggregating algorithm (Brier game, η = 2; log loss, η = 1);
* ``hedge``: the exponentially weighted average forecaster with a fixed η, the
  theory-tuned η = sqrt(8 log N / T) or the doubling trick (epochs of length 2^m);
* ``ftl``: follow the leader; ``uniform_average``: the mean advice.

With second-guessing experts the baselines announce a fixed point p = g(f(x, p)) of their
rule g, found with the same anticorrelation search on g(f(x, p)) - p (continuous, >= 0 at
p = 0 and <= 0 at p = 1); against ordinary experts they use the closed form.

Expected equalities (tested): ``linf_df`` with the squared loss and λ is the aggregating
algorithm with η = λ (λ = 2: the Brier game); with the log loss it is the Bayes mixture
sum_j α_j f_j with α_j ∝ prod_s f_j(y_s).

References
----------
Perdomo & Recht, §9 (Algorithm 5, Proposition "ℓ∞ DF"); Vovk (2001), "Competitive on-line
statistics"; Cesa-Bianchi & Lugosi (2006), §2.2 and §3.3.
"""

from __future__ import annotations

import math

import numpy as np

from arena.games.experts import EXPERT_LOSSES, LOSS_FUNCTIONS, advice_function, lipschitz_of
from arena.logspace import log_softmax, logsumexp, logsumexp_rows
from arena.protocols import Context, ExpertsForecaster
from arena.registry import register
from arena.search import DEFAULT_TOL, anticorrelation_search

#: The largest double below 1 and the smallest above 0: a mixture forecast is exactly 0 or 1 only
#: when every weighted expert says so (otherwise the log loss would be +inf against an expert with
#: a finite loss, where the exact mixture, rounded away, had a finite one).
_BELOW_ONE, _ABOVE_ZERO = float(np.nextafter(1.0, 0.0)), float(np.nextafter(0.0, 1.0))


def _floor(log_value):
    """exp of a log, floored at the smallest positive double unless the log is -inf (elementwise)."""
    with np.errstate(under="ignore"):
        v = np.where(log_value == -np.inf, 0.0, np.maximum(np.exp(log_value), _ABOVE_ZERO))
    return float(v) if np.ndim(v) == 0 else v


def mixture_parts(logw: np.ndarray, f: np.ndarray) -> tuple[float, float]:
    """(m, m̄) = (sum_j w_j f_j, sum_j w_j (1 - f_j)) for log-weights; each is positive exactly when it
    is positive in exact arithmetic (a part that underflows to 0 is recomputed in log space and
    floored at the smallest positive double)."""
    w = np.exp(logw)
    m, mbar = float(w @ f), float(w @ (1.0 - f))
    with np.errstate(divide="ignore"):
        if m == 0.0:
            m = _floor(logsumexp(logw + np.log(f)))
        if mbar == 0.0:
            mbar = _floor(logsumexp(logw + np.log1p(-f)))
    return m, mbar


def mixture(logw: np.ndarray, f: np.ndarray) -> float:
    """sum_j w_j f_j for log-weights ``logw``, kept off 0 and 1 unless every weighted expert says so
    (see :func:`mixture_parts`).

    Examples
    --------
    >>> mixture(np.log([0.5, 0.5]), np.array([0.2, 0.8]))
    0.5
    >>> mixture(np.log([1 - 1e-17, 1e-17]), np.array([1.0, 0.0])) < 1.0
    True
    >>> mixture(np.log([0.5, 0.5]), np.array([5e-324, 0.0])) > 0.0
    True
    """
    p = float(np.exp(logw) @ f)
    if 0.0 < p < 1.0:
        return p
    m, mbar = mixture_parts(logw, f)
    return _guard(min(max(p, 0.0), 1.0), m, mbar)


def _guard(p, m, mbar):
    """p kept strictly inside (0, 1) where m (resp. m̄) is positive (elementwise for arrays)."""
    p = np.where((p >= 1.0) & (mbar > 0), _BELOW_ONE, p)
    p = np.where((p <= 0.0) & (m > 0), _ABOVE_ZERO, p)
    return float(p) if np.ndim(p) == 0 else p


def _mixture_rows(logw: np.ndarray, X: np.ndarray) -> np.ndarray:
    """:func:`mixture` for every row of X."""
    p = np.clip(X @ np.exp(logw), 0.0, 1.0)
    edge = np.flatnonzero((p <= 0.0) | (p >= 1.0))
    for k in edge:
        p[k] = mixture(logw, X[k])
    return p


def _check_tol(who: str, tol) -> float:
    if isinstance(tol, bool) or not isinstance(tol, (int, float)) or not 0 < tol < 1:
        raise ValueError(f"{who}: tol={tol!r} must be in (0, 1), e.g. tol: 1e-10")
    return float(tol)


class ExpertsBase(ExpertsForecaster):
    """Base class: the experts' cumulative losses and the game's loss.

    Parameters
    ----------
    loss : "squared", "log", or None for the loss of the game being played (squared when
        the forecaster is driven by hand without a game).
    """

    games = ("experts",)

    def __init__(self, loss: str | None = None):
        if loss is not None and loss not in EXPERT_LOSSES:
            raise ValueError(
                f"{self.name}: loss={loss!r}; expected one of {', '.join(map(repr, EXPERT_LOSSES))} "
                "or null (the game's loss)"
            )
        self.loss = loss

    @property
    def loss_name(self) -> str:
        game_loss = getattr(getattr(self, "game", None), "loss", None)
        game_loss = str(game_loss) if game_loss is not None and str(game_loss) in EXPERT_LOSSES else None
        if self.loss is not None and game_loss is not None and self.loss != game_loss:
            raise ValueError(
                f"{self.name}: configured for the {self.loss} loss but the game scores the "
                f"{game_loss} loss; set loss: null (the game's loss) or loss: {game_loss}"
            )
        return self.loss or game_loss or "squared"

    def reset(self, rng):
        super().reset(rng)
        self._loss_name = self.loss_name
        self._ell = LOSS_FUNCTIONS[self._loss_name]
        self._L = None  # cumulative loss of each expert
        self._t = 0
        self._lip = 0.0  # the largest |d f / dp| declared by the contexts seen (second-guessing)

    def _losses(self, n: int) -> np.ndarray:
        if self._L is None:
            self._L = np.zeros(n)
        elif self._L.size != n:
            raise ValueError(f"{self.name}: {n} experts' advice after {self._L.size} experts' in earlier rounds")
        return self._L

    def update(self, x: Context, p: float, y: float) -> None:
        f = np.asarray(advice_function(x)(p), float)
        self._losses(f.size)
        self._L = self._L + self._ell(f, y)
        self._t += 1
        self._lip = max(self._lip, lipschitz_of(x))

    @property
    def advice_lipschitz(self) -> float:
        """The largest Lipschitz constant in p declared by the second-guessing advice seen so far."""
        return getattr(self, "_lip", 0.0)

    def _log_weights(self, L: np.ndarray, t: int, start: np.ndarray) -> np.ndarray | None:
        """The log-weights on the experts in round t + 1, from their cumulative losses ``L`` over
        rounds 1..t and ``start``, the losses when the forecaster's current epoch began (a
        restarting forecaster forgets what came before); None when it weighs no experts.

        The one rule behind ``predict``, ``predict_many`` and ``weights_after``."""
        return None

    def _epoch_row(self, t: int) -> int:
        """The round after which the epoch of round t + 1 began (0: the forecaster never restarts)."""
        return 0

    def weights_after(self, cum: np.ndarray, t: int) -> np.ndarray | None:
        """The weights this forecaster puts on the experts after ``t`` rounds, from the experts'
        cumulative losses ``cum`` (row k: the losses of rounds 1..k; row 0 is zeros); None when
        it has none. The referee draws them over time."""
        logw = self._log_weights(cum[t], t, cum[self._epoch_row(t)])
        return None if logw is None else np.exp(logw)

    def predict_many(self, X: np.ndarray) -> np.ndarray:
        """The forecasts for many rows of ordinary advice X (m x N) from the current state, without
        changing it: the batch predictor of :mod:`arena.batch` evaluates every prefix forecaster on
        a whole test set. Equal to ``[predict(x) for x in X]`` up to the search tolerance (the same
        root, in closed form)."""
        X = np.asarray(X, float)
        L = self._losses(X.shape[1])
        return np.clip(self._many(X, L), 0.0, 1.0)

    def _many(self, X: np.ndarray, L: np.ndarray) -> np.ndarray:
        return np.array([self.predict(x) for x in X])

    def _fixed_point(self, x, rule) -> float:
        """rule(advice) for ordinary experts; for second-guessing ones the p with rule(f(x, p)) = p."""
        f = advice_function(x)
        if not getattr(x, "second_guessing", False):
            return float(min(max(rule(f(0.5)), 0.0), 1.0))
        # a forecaster without a tol parameter (tol 0, the protocol's default) searches at DEFAULT_TOL
        return anticorrelation_search(lambda p: rule(f(p)) - p, tol=self.tol or DEFAULT_TOL)


@register
class LinfDF(ExpertsBase):
    """ℓ∞ defensive forecasting (§9 Algorithm 5) for the squared or the log loss.

    Guarantees max_j sum_t F_j <= log N: regret to every expert <= log N / λ (squared loss)
    and <= log N (log loss, unclipped), up to the search precision (the referee's slack).

    Parameters
    ----------
    lam : λ in (0, 2] of the squared loss (2: the best bound, log N / 2); the log loss has no λ.
    tol : width of the last bisection interval of the anticorrelation search.
    loss : the loss (None: the game's).

    Examples
    --------
    >>> from arena import play
    >>> r = play("experts", LinfDF(), "expert_constants", T=500, seed=0)
    >>> r.certificates["experts_regret"].holds
    True
    """

    name = "linf_df"
    family = "defensive"
    claims = ("experts_regret", "experts_search_precision")

    def __init__(self, lam: float = 2.0, tol: float = DEFAULT_TOL, loss: str | None = None):
        super().__init__(loss)
        if isinstance(lam, bool) or not isinstance(lam, (int, float)) or not (0 < lam <= 2) or math.isnan(lam):
            raise ValueError(
                f"{self.name}: lam={lam!r} is outside (0, 2]; Assumption 9.1 holds for the squared "
                "loss only with 0 < λ <= 2 (λ = 2 gives the best bound, log N / 2), e.g. lam: 2"
            )
        self.lam = float(lam)
        self.tol = _check_tol(self.name, tol)

    @property
    def rate(self) -> float:
        """λ of the potential: the weights are α_j ∝ exp(-rate L_j) (1 for the log loss)."""
        return 1.0 if getattr(self, "_loss_name", self.loss_name) == "log" else self.lam

    def summary_sign(self, x: Context):
        """p -> a number with the sign of S_t(p) (Algorithm 5), computed in log space."""
        f = advice_function(x)
        L = self._losses(np.asarray(f(0.5)).size)
        logw = self._log_weights(L, self._t, L)
        lam, fixed = self.lam, not getattr(x, "second_guessing", False)
        if self._loss_name == "log":
            # S_t(p) p (1 - p) = m (1 - p) - m̄ p with m = sum α_j f_j, m̄ = sum α_j (1 - f_j): the
            # sign-equivalent sum α_j f_j - p (m + m̄ = 1), with m̄ kept exact near p = 1
            if fixed:  # the advice does not depend on p: two numbers
                m, mbar = mixture_parts(logw, np.asarray(f(0.5), float))
                return lambda p: m * (1.0 - p) - mbar * p

            def sign_log(p: float) -> float:
                m, mbar = mixture_parts(logw, np.asarray(f(p), float))
                return m * (1.0 - p) - mbar * p

            return sign_log

        def gap(a: np.ndarray) -> float:  # log A_1 - log A_0
            return logsumexp(logw - lam * (1.0 - a) ** 2) - logsumexp(logw - lam * a**2)

        if fixed:
            c = gap(np.asarray(f(0.5), float))
            return lambda p: lam * (1.0 - 2.0 * p) + c
        return lambda p: lam * (1.0 - 2.0 * p) + gap(np.asarray(f(p), float))

    def predict(self, x: Context) -> float:
        if self._loss_name == "log" and not getattr(x, "second_guessing", False):
            # the root of the sign-equivalent sum_j α_j f_j - p is the Bayes mixture itself: announce
            # it in closed form, so the regret is <= log N to machine precision (a bisection leaves up to tol/2)
            f = np.asarray(advice_function(x)(0.5), float)
            L = self._losses(f.size)
            return mixture(self._log_weights(L, self._t, L), f)
        return anticorrelation_search(self.summary_sign(x), tol=self.tol)

    def _log_weights(self, L, t, start):
        return log_softmax(-self.rate * L)

    def _many(self, X, L):
        logw = self._log_weights(L, self._t, L)
        if self._loss_name == "log":
            return _mixture_rows(logw, X)  # the root of m (1 - p) - m̄ p
        lam = self.lam
        gap = logsumexp_rows(logw - lam * (1.0 - X) ** 2) - logsumexp_rows(logw - lam * X**2)
        return 0.5 + gap / (2.0 * lam)  # the root of λ(1 - 2p) + log A_1 - log A_0


@register
class Aggregating(ExpertsBase):
    """Vovk's aggregating algorithm: the Brier game (squared loss, η = 2) and the log loss (η = 1).

    Weights w_j ∝ exp(-η L_j); with g(y) = -(1/η) log sum_j w_j exp(-η ℓ(f_j, y)) the forecast
    is the substitution p = clip((1 + g(0) - g(1)) / 2) (squared) or p = A_1 / (A_0 + A_1) with
    A_y = (sum_j w_j f_j(y)^η)^(1/η) (log; η = 1 gives the Bayes mixture sum_j w_j f_j).
    Regret to every expert <= log N / η.

    Parameters
    ----------
    eta : learning rate; None for the mixability constant (2 squared, 1 log); at most that.

    Examples
    --------
    >>> aa = Aggregating(); aa.reset(None)
    >>> aa.predict(np.array([0.2, 0.8]))
    0.5
    """

    name = "aggregating"
    claims = ("experts_regret",)

    def __init__(self, eta: float | None = None, loss: str | None = None):
        super().__init__(loss)
        if eta is not None and (isinstance(eta, bool) or not isinstance(eta, (int, float)) or not 0 < eta <= 2):
            raise ValueError(
                f"{self.name}: eta={eta!r} must be in (0, 2] (squared loss; (0, 1] for the log loss) "
                "or null for the mixability constant"
            )
        self.eta = None if eta is None else float(eta)

    def reset(self, rng):
        super().reset(rng)
        cap = 1.0 if self._loss_name == "log" else 2.0
        if self.eta is not None and self.eta > cap:
            raise ValueError(
                f"{self.name}: eta={self.eta} exceeds {cap:g}, the mixability constant of the "
                f"{self._loss_name} loss; the aggregating algorithm needs eta <= {cap:g}"
            )

    @property
    def rate(self) -> float:
        if self.eta is not None:
            return self.eta
        return 1.0 if getattr(self, "_loss_name", self.loss_name) == "log" else 2.0

    def substitution(self, f: np.ndarray, logw: np.ndarray | None = None) -> float:
        """The aggregating algorithm's forecast for the advice f and the current weights (their
        logarithms ``logw``, computed here when not given)."""
        eta = self.rate
        if logw is None:
            L = self._losses(f.size)
            logw = self._log_weights(L, self._t, L)
        if self._loss_name == "log":
            with np.errstate(divide="ignore"):
                lA1 = logsumexp(logw + eta * np.log(f)) / eta
                lA0 = logsumexp(logw + eta * np.log1p(-f)) / eta
            if lA1 == -math.inf:
                return 0.0
            if lA0 == -math.inf:
                return 1.0
            return _guard(float(_ratio(lA1, lA0)), 1.0, 1.0)
        g0 = -logsumexp(logw - eta * f**2) / eta
        g1 = -logsumexp(logw - eta * (1.0 - f) ** 2) / eta
        return float(min(max(0.5 * (1.0 + g0 - g1), 0.0), 1.0))

    def _log_weights(self, L, t, start):
        return log_softmax(-self.rate * L)

    def predict(self, x: Context) -> float:
        L = self._losses(np.asarray(advice_function(x)(0.5)).size)
        logw = self._log_weights(L, self._t, L)
        return self._fixed_point(x, lambda f: self.substitution(np.asarray(f, float), logw))

    def _many(self, X, L):
        eta = self.rate
        logw = self._log_weights(L, self._t, L)
        if self._loss_name == "log":
            with np.errstate(divide="ignore"):
                lA1 = logsumexp_rows(logw + eta * np.log(X)) / eta
                lA0 = logsumexp_rows(logw + eta * np.log1p(-X)) / eta
            with np.errstate(invalid="ignore"):
                p = _guard(_ratio(lA1, lA0), 1.0, 1.0)
            return np.where(lA1 == -np.inf, 0.0, np.where(lA0 == -np.inf, 1.0, p))
        g0 = -logsumexp_rows(logw - eta * X**2) / eta
        g1 = -logsumexp_rows(logw - eta * (1.0 - X) ** 2) / eta
        return 0.5 * (1.0 + g0 - g1)


def _ratio(lA1, lA0):
    """A_1 / (A_0 + A_1) from log A_1 and log A_0, down to the subnormal range: expit(lA1 - lA0) rounds a
    ratio below about 1e-308 to 0 (a forecast of probability 0 where the mixture gives 1e-311), so the
    smaller side is exp(its log - log(A_0 + A_1)) (elementwise for arrays).

    Examples
    --------
    >>> float(_ratio(math.log(1.1e-311), 0.0)) > 0, float(_ratio(0.0, 0.0))
    (True, 0.5)
    """
    lse = np.logaddexp(lA1, lA0)
    with np.errstate(invalid="ignore"):
        return np.where(lA1 <= lA0, np.exp(lA1 - lse), -np.expm1(lA0 - lse))


def _since(L: np.ndarray, start: np.ndarray) -> np.ndarray:
    """Losses since an epoch started: L - start, with inf - inf = 0 (a restart forgets the past)."""
    if math.isfinite(L.sum()):  # no inf (a finite sum has finite terms): no NaN to mend (errstate costs µs)
        return L - start
    with np.errstate(invalid="ignore"):
        d = L - start
    return np.where(np.isnan(d), 0.0, d)


def _doubling_epoch(t: int) -> tuple[int, int]:
    """(m, first round) of the doubling epoch that contains round t (1-based): rounds 2^m .. 2^(m+1) - 1."""
    m = int(t).bit_length() - 1
    return m, 1 << m


@register
class Hedge(ExpertsBase):
    """The exponentially weighted average forecaster p = sum_j w_j f_j, w_j ∝ exp(-η L_j).

    Parameters
    ----------
    eta : a positive float (fixed), ``"tuned"`` (η = sqrt(8 log N / T) for the known horizon
        ``horizon``) or ``"doubling"`` (unknown horizon: epochs m = 0, 1, ... of 2^m rounds, each
        restarted with η_m = sqrt(8 log N / 2^m)).
    horizon : T, for ``eta: tuned`` (the configs pass the game's T).

    Regret (squared loss, losses in [0, 1]): <= log N / η + η T / 8 for a fixed η
    (Cesa-Bianchi & Lugosi Thm 2.2), sqrt(T log N / 2) tuned, and the sum over epochs of
    sqrt(2^m log N / 2) with the doubling trick; for the log loss with η <= 1 (exp-concave):
    <= log N / η. The referee certifies these (``hedge_regret``).

    Examples
    --------
    >>> h = Hedge(eta=0.5); h.reset(None)
    >>> h.predict(np.array([0.2, 0.8]))
    0.5
    """

    name = "hedge"
    #: Not applicable (the referee says why) to the log loss with eta > 1, tuned or doubling.
    claims = ("hedge_regret",)

    def __init__(self, eta: float | str = "doubling", horizon: int | None = None, loss: str | None = None):
        super().__init__(loss)
        if isinstance(eta, str):
            if eta not in ("tuned", "doubling"):
                raise ValueError(f"{self.name}: eta={eta!r}; give a positive number, 'tuned' or 'doubling'")
        elif isinstance(eta, bool) or not isinstance(eta, (int, float)) or not eta > 0 or not math.isfinite(eta):
            raise ValueError(f"{self.name}: eta={eta!r} must be a positive number, 'tuned' or 'doubling'")
        if horizon is not None and (
            isinstance(horizon, bool) or not isinstance(horizon, (int, np.integer)) or horizon < 1
        ):
            raise ValueError(
                f"{self.name}: horizon={horizon!r} must be an integer >= 1 (the number of rounds T) "
                "or null, e.g. horizon: 1000"
            )
        if eta == "tuned" and horizon is None:
            raise ValueError(
                f"{self.name}: eta='tuned' needs the horizon T (horizon: 1000, or ${{T}} in a config); "
                f"got horizon={horizon!r}. Use eta: doubling when T is unknown"
            )
        self.eta = eta if isinstance(eta, str) else float(eta)
        self.horizon = None if horizon is None else int(horizon)

    def rate_at(self, t: int, n: int) -> float:
        """η of round t (1-based) with n experts."""
        if isinstance(self.eta, float):
            return self.eta
        logn = math.log(max(n, 2)) if n > 1 else 0.0
        span = self.horizon if self.eta == "tuned" else _doubling_epoch(t)[1]
        return math.sqrt(8.0 * logn / span) if logn else 1.0

    def reset(self, rng):
        super().reset(rng)
        self._epoch_start_L = None

    def _log_weights(self, L, t, start):
        if self.eta == "doubling":
            L = _since(L, start)
        return log_softmax(-self.rate_at(t + 1, L.size) * L)

    def _epoch_row(self, t: int) -> int:
        return _doubling_epoch(t + 1)[1] - 1 if self.eta == "doubling" else 0

    def _epoch_start(self, L: np.ndarray) -> np.ndarray:
        """The losses when the epoch of the next round began (L itself when it begins now)."""
        start = self._epoch_start_L
        if start is None or _doubling_epoch(self._t + 1)[1] == self._t + 1:
            start = L
        return start

    def predict(self, x: Context) -> float:
        L = self._losses(np.asarray(advice_function(x)(0.5)).size)
        if self.eta == "doubling":
            start = self._epoch_start(L)
            if start is L:  # a new epoch forgets the past (a copy: L is the forecaster's own array)
                start = L.copy()
            self._epoch_start_L = start
        else:
            start = L
        logw = self._log_weights(L, self._t, start)
        return self._fixed_point(x, lambda f: mixture(logw, np.asarray(f, float)))

    def _many(self, X, L):
        return _mixture_rows(self._log_weights(L, self._t, self._epoch_start(L)), X)


@register
class FollowTheLeader(ExpertsBase):
    """Follow the leader: the advice of the expert with the least loss so far (lowest index on ties).

    Examples
    --------
    >>> ftl = FollowTheLeader(); ftl.reset(None)
    >>> ftl.predict(np.array([0.2, 0.8])); ftl.update(np.array([0.2, 0.8]), 0.2, 1.0)
    0.2
    >>> ftl.predict(np.array([0.2, 0.8]))
    0.8
    """

    name = "ftl"

    def _log_weights(self, L, t, start):
        with np.errstate(divide="ignore"):
            return np.log(np.arange(L.size) == np.argmin(L))  # all the weight on the leader

    def predict(self, x: Context) -> float:
        leader = int(np.argmin(self._losses(np.asarray(advice_function(x)(0.5)).size)))
        return self._fixed_point(x, lambda f: float(f[leader]))

    def _many(self, X, L):
        return X[:, int(np.argmin(L))]


@register
class UniformAverage(ExpertsBase):
    """The mean of the advice (the uniform mixture; no learning).

    Examples
    --------
    >>> u = UniformAverage(); u.reset(None)
    >>> u.predict(np.array([0.2, 0.8]))
    0.5
    """

    name = "uniform_average"

    def predict(self, x: Context) -> float:
        return self._fixed_point(x, lambda f: float(np.mean(f)))

    def _many(self, X, L):
        return X.mean(axis=1)

    def weights_after(self, cum, t):
        return np.full(cum.shape[1], 1.0 / cum.shape[1])  # exactly 1/N (exp of a log-weight is not)
