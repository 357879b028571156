"""The experts game (§9): binary outcomes, forecasts in [0, 1], the context holds expert advice;
its regret to every expert and the certificates of ℓ∞ DF.

Protocol
--------
In round t the nature (an *expert panel*) reveals the N experts' advice f_1(x_t), ..., f_N(x_t)
in [0, 1] as the context; the forecaster announces p_t; the outcome y_t in {0, 1} follows;
every player is scored by the game's ``loss`` ("squared": (p - y)^2, "log": -log p(y),
unclipped). The referee compares the forecaster's cumulative loss with every expert's.

Second-guessing experts (end of §9; Vovk's term) see the forecaster's forecast before they
advise: their advice is f_j(x_t, p), continuous in p. This is a *declared capability* of a
panel, added to the shared core with two hooks of :class:`arena.games.Game` and nothing else:

* a panel sets ``second_guessing = True``, declares ``advice_lipschitz`` (a bound on
  |d f_j / dp|) and implements ``advice(t, x, p) -> array``, a pure function of its
  arguments (it may be called for round t after the nature has moved on to round t + 1);
* the forecaster's context is an :class:`AdviceContext`: the numbers the nature revealed
  (for a second-guessing panel, each expert's opinion before it sees p; see the panel) and
  the method ``x.advice(p)``, which returns f(x_t, p) for any p in [0, 1]. Defensive
  forecasters evaluate it inside their anticorrelation search; for an ordinary panel it
  returns the revealed advice whatever p;
* once the realized forecast p_t is drawn, the environment records f(x_t, p_t) as the
  round's context (:meth:`ExpertsGame.scored_context`), so the referee scores every expert
  at the forecast actually played. For a point forecast that is the announced p; for a
  randomized forecast, the realized draw (the forecaster's loss is also at the draw).

A plain ``numpy`` array is also accepted wherever an :class:`AdviceContext` is expected
(:func:`advice_function`), so forecasters can be driven by hand.

Scoring
-------
The recorded context of a round is the advice at the forecast played (for second-guessing
experts f_j(x_t, p_t), see :class:`AdviceContext`), so every expert is scored where the
forecaster was. Losses are unclipped; a round where the forecaster and an expert both
lose +inf (log loss, both gave the outcome probability 0) counts 0 for that expert, the
convention under which the potential argument of §9 is exact.

Metrics: the game's loss of the forecaster and of the best expert, the regret to every
expert (``regret_expert_<j>``, N <= 32) and to the best one (``regret_experts``), under the
game's loss and under both losses (``regret_experts_squared``, ``regret_experts_log``), plus
the binary game's metrics. Curves: the regret to the best expert at log-spaced t, the
certified bound, the mean loss, and the forecaster's weights on the experts (``weight:<j>``).

Certificates:

- ``experts_regret`` (§9 Prop.): with F_j = rate (ℓ(p_t, y_t) - ℓ(f_j, y_t)) and the weights
  α_t ∝ exp(sum_{s<t} F_s) recomputed from the run, the identity
  max_j sum_t F_j <= log sum_j exp(sum_t F_j) = log N + sum_t log sum_j α_tj exp(F_tj) holds
  exactly; a finite search precision leaves the last terms slightly positive (their positive
  part is σ). The bound adds the allowance A that a search at the referee's largest
  tolerance (``referee.max_tol``) explains, fixed before the game (the sum over rounds of the
  per-round allowance below), never σ: regret to every expert <= (log N + A) / rate, where
  rate is λ (squared loss) or 1 (log loss) for ℓ∞ DF and η for the aggregating algorithm.
  ``extra`` has σ, A and the printed bound log N / rate.
- ``experts_search_precision``: in every round σ_t is no larger than a search of width
  ``referee.max_tol`` explains: σ_t <= λ (1 + 2 Lip) tol (squared) or (1 + Lip) (tol/2) / p_t(y_t)
  (log), Lip the Lipschitz constant in p that second-guessing advice declares (0 otherwise),
  plus the floating-point rounding. The value is the worst ratio σ_t / allowance_t, the bound 1.
- ``hedge_regret``: regret <= log N / η + η T / 8 (squared loss in [0, 1]; also <= log N / η
  when η <= 1/2, exp-concavity), summed over the epochs of the doubling trick; log loss with
  η <= 1: <= log N / η. Plus the slack of a fixed-point search against second-guessing
  experts (the loss of p_t above that of the mixture sum_j w_j f_j(x_t, p_t)).

References
----------
Perdomo & Recht, §9 (ℓ∞ defensive forecasting, expert prediction, Algorithm 5 and its Proposition);
Cesa-Bianchi & Lugosi (2006), Thm 2.2 and Thm 3.3; certificates: docs/ERRATA.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property, partial
from typing import TYPE_CHECKING

import numpy as np

from arena.certificates import MAX_TOL, Certificate, checkpoints, experts_regret_bound, judged, not_applicable
from arena.games.base import GameScore, bind
from arena.games.binary import CERTIFICATES as BINARY_CERTIFICATES
from arena.games.binary import METRICS as BINARY_METRICS
from arena.games.binary import BinaryGame, BinaryRun
from arena.games.binary import metrics as binary_metrics
from arena.lazy import LazyModule
from arena.logspace import log_softmax_rows, logsumexp_rows
from arena.protocols import ExpertsForecaster, ExpertsNature, ProtocolError

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = LazyModule("pandas")  # imported when a table is built: playing a game does not load pandas

#: The losses of the experts game.
EXPERT_LOSSES = ("squared", "log")


def squared_loss(p, y):
    """(p - y)^2, elementwise.

    Examples
    --------
    >>> float(squared_loss(0.25, 1.0))
    0.5625
    """
    return (np.asarray(p, float) - np.asarray(y, float)) ** 2


def log_loss(p, y):
    """Unclipped log loss -y log p - (1 - y) log(1 - p), elementwise; +inf when the outcome had
    probability 0 (no warning, never NaN for p and y in range).

    Examples
    --------
    >>> float(log_loss(0.5, 1.0)) == math.log(2), float(log_loss(0.0, 1.0)), float(log_loss(0.0, 0.0))
    (True, inf, 0.0)
    """
    p, y = np.broadcast_arrays(np.asarray(p, float), np.asarray(y, float))
    with np.errstate(divide="ignore"):
        one = -np.log(p)
        zero = -np.log1p(-p)
    return np.where(y == 1.0, one, zero) if p.ndim else (one if y == 1.0 else zero)


LOSS_FUNCTIONS: dict[str, Callable] = {"squared": squared_loss, "log": log_loss}


class ExpertLoss(str):
    """The name of a loss that is also the loss: ``game.loss == "log"`` and ``game.loss(p, y)``.

    The :class:`arena.games.Game` interface scores a round with ``game.loss(p, y)``; the
    experts game also has a configurable field named ``loss``. This string subclass serves
    both.

    Examples
    --------
    >>> ell = ExpertLoss("squared")
    >>> ell == "squared", ell(0.5, 1.0)
    (True, 0.25)
    """

    def __call__(self, p: float, y: float) -> float:
        return float(LOSS_FUNCTIONS[str(self)](p, y))


def check_loss_name(who: str, loss) -> str:
    if not isinstance(loss, str) or loss not in EXPERT_LOSSES:
        raise ValueError(
            f"{who}: loss={loss!r} is not a loss of the experts game; expected one of "
            f"{', '.join(map(repr, EXPERT_LOSSES))}, e.g. loss: squared"
        )
    return str(loss)


class AdviceContext(np.ndarray):
    """The context of a round of the experts game: the revealed advice, and ``advice(p)``.

    A 1-d float array (what the nature revealed) with two attributes: the callable behind
    :meth:`advice` (None for an ordinary panel) and ``lipschitz``, the panel's declared bound
    on |d f_j / dp| (0 for an ordinary panel).

    Examples
    --------
    >>> x = AdviceContext([0.2, 0.7])
    >>> x.advice(0.9).tolist(), x.second_guessing
    ([0.2, 0.7], False)
    >>> y = AdviceContext([0.2, 0.7], advice=lambda p: np.array([p, 1 - p]), lipschitz=1.0)
    >>> y.advice(0.9).tolist(), y.copy().second_guessing
    ([0.9, 0.09999999999999998], True)
    """

    def __new__(cls, values, advice: Callable[[float], np.ndarray] | None = None, lipschitz: float = 0.0):
        obj = np.array(values, dtype=np.float64).reshape(-1).view(cls)
        obj.advice_fn = advice
        obj.lipschitz = float(lipschitz)
        return obj

    def __array_finalize__(self, obj):
        self.advice_fn = getattr(obj, "advice_fn", None)
        self.lipschitz = getattr(obj, "lipschitz", 0.0)

    def __reduce__(self):  # keep the attributes through pickling and deepcopy
        base = np.asarray(self).copy()
        return (AdviceContext, (base, self.advice_fn, self.lipschitz))

    @property
    def second_guessing(self) -> bool:
        return self.advice_fn is not None

    def advice(self, p: float) -> np.ndarray:
        """f(x_t, p): the advice the experts give to the forecast p (the revealed advice when they
        do not second-guess)."""
        if self.advice_fn is None:
            return np.asarray(self)
        return np.asarray(self.advice_fn(float(p)), dtype=np.float64).reshape(-1)


def advice_function(x) -> Callable[[float], np.ndarray]:
    """p -> f(x, p) for a context of the experts game (an :class:`AdviceContext` or a plain array)."""
    if isinstance(x, AdviceContext) and x.second_guessing:
        return x.advice
    values = np.asarray(x, dtype=np.float64).reshape(-1)
    return lambda p: values


def lipschitz_of(x) -> float:
    return float(getattr(x, "lipschitz", 0.0)) if isinstance(x, AdviceContext) and x.second_guessing else 0.0


def _check_advice(values: np.ndarray, n: int, who: str, t: int, where: str) -> np.ndarray:
    if values.shape != (n,) or not (values.min() >= 0.0 and values.max() <= 1.0):  # NaN fails too
        raise ProtocolError(
            f"{who} gave advice {values!r} at t={t} ({where}); the experts game needs "
            f"{n} forecasts in [0, 1], one per expert"
        )
    return values


@dataclass(frozen=True)
class ExpertsGame(BinaryGame):
    """Prediction with expert advice (§9): y in {0, 1}, p in [0, 1], advice in the context.

    Parameters
    ----------
    loss : "squared" (p - y)^2 or "log" -log p(y) (unclipped: +inf when p(y) = 0).

    Examples
    --------
    >>> g = ExpertsGame(loss="log")
    >>> g.loss == "log", round(g.loss(0.5, 1.0), 6)
    (True, 0.693147)
    >>> ExpertsGame(loss="hinge")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: experts game: loss='hinge' is not a loss of the experts game; expected one of 'squared', 'log', ...
    """

    name: str = "experts"
    loss: ExpertLoss = ExpertLoss("squared")  # a loss name from the config, made an ExpertLoss here

    def __post_init__(self):
        object.__setattr__(self, "loss", ExpertLoss(check_loss_name("experts game", self.loss)))

    def present_context(self, nature, t: int, x: np.ndarray) -> AdviceContext:
        who = f"nature {nature.name!r}"
        if x.size == 0:
            raise ProtocolError(
                f"{who} revealed no advice at t={t}; the experts game needs the N >= 1 experts' "
                "forecasts as the context (use an expert panel, e.g. nature=expert_constants)"
            )
        if isinstance(nature, ExpertsNature) and nature.second_guessing:
            lip = float(nature.advice_lipschitz)
            return AdviceContext(x, partial(_validated_advice, nature, t, x.copy(), who), lip)
        return AdviceContext(_check_advice(x, x.size, who, t, "revealed"))

    def scored_context(self, nature, t: int, x: np.ndarray, p: float) -> np.ndarray:
        if isinstance(x, AdviceContext) and x.second_guessing:
            return np.asarray(x.advice(p)).copy()
        return x

    def score(self, referee, rec, forecaster):
        run = ExpertsRun(self, rec, forecaster, referee.max_tol)
        summary = binary_metrics(referee, rec.X, rec.p, rec.y, rec.y_prob)
        summary.update(experts_metrics(run))
        certs = {
            **bind(BINARY_CERTIFICATES, BinaryRun(rec, forecaster, referee.max_tol), referee),
            **bind(CERTIFICATES, run, referee),
        }
        return GameScore(summary, experts_curves(run, referee.n_checkpoints), certs)


def _validated_advice(nature, t: int, x: np.ndarray, who: str, p: float) -> np.ndarray:
    values = np.asarray(nature.advice(t, x, float(p)), dtype=np.float64).reshape(-1)
    return _check_advice(values, x.size, who, t, f"second-guessing the forecast p={p!r}")


_EPS = np.finfo(float).eps
#: Per-expert regret columns are written for panels of at most this many experts.
MAX_EXPERT_COLUMNS = 32


def _diff(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a - b elementwise with inf - inf = 0 (both lost everything)."""
    with np.errstate(invalid="ignore"):
        d = a - b
    return np.where(np.isnan(d) & (a == b), 0.0, d)


def _regrets(Lp, Le) -> np.ndarray:
    """Cumulative regret L_p - L_j; an expert whose loss is +inf is never regretted (-inf), and a
    forecaster at +inf against an expert with a finite loss has +inf regret."""
    Lp = np.asarray(Lp, float)
    Lp = Lp[..., None] if Lp.ndim == np.ndim(Le) - 1 else Lp
    with np.errstate(invalid="ignore"):
        d = Lp - Le
    return np.where(np.isinf(Le), -np.inf, d)


class ExpertsRun:
    """The arrays of one experts run and the quantities several metrics share (computed once)."""

    def __init__(self, game, rec, forecaster, max_tol: float = MAX_TOL):
        self.game, self.forecaster = game, forecaster
        self.max_tol = float(max_tol)
        self.loss = str(game.loss)
        self.X, self.p, self.y = rec.X, rec.p, rec.y
        self.T, self.N = len(self.y), rec.X.shape[1]

    def losses(self, loss: str | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(forecaster's per-round loss (T,), experts' per-round losses (T, N)) under ``loss``."""
        ell = LOSS_FUNCTIONS[loss or self.loss]
        return ell(self.p, self.y), ell(self.X, self.y[:, None])

    @cached_property
    def own(self) -> tuple[np.ndarray, np.ndarray]:
        return self.losses()

    @cached_property
    def cum_expert_losses(self) -> np.ndarray:
        """(T + 1, N): row k holds each expert's loss over rounds 1..k (row 0: zeros)."""
        _, le = self.own
        return np.vstack((np.zeros((1, self.N)), np.cumsum(le, axis=0)))

    @cached_property
    def gaps(self) -> np.ndarray:
        """(T, N): ℓ(p_t, y_t) - ℓ(f_tj, y_t) under the game's loss (inf - inf = 0)."""
        lp, le = self.own
        return _diff(lp[:, None], le)

    @cached_property
    def cum_gaps(self) -> np.ndarray:
        """(T, N): the regret to every expert after each round (see :func:`_regrets`)."""
        lp, le = self.own
        return _regrets(np.cumsum(lp), np.cumsum(le, axis=0))

    def regret(self, loss: str | None = None) -> np.ndarray:
        """Regret to every expert at the end, under ``loss`` (default the game's)."""
        if not self.T:
            return np.zeros(self.N)
        if loss is None or loss == self.loss:
            return self.cum_gaps[-1]
        lp, le = self.losses(loss)
        return _regrets(np.sum(lp), np.sum(le, axis=0))

    @cached_property
    def rate(self) -> float | None:
        r = self.forecaster.rate if isinstance(self.forecaster, ExpertsForecaster) else None
        return float(r) if isinstance(r, (int, float)) and r > 0 else None

    @cached_property
    def potential_terms(self) -> np.ndarray:
        """log sum_j α_tj exp(F_tj) per round, with α_t ∝ exp(sum_{s<t} F_s) and F = rate * gaps."""
        F = self.rate * self.gaps
        # sum_{s<t} F_s = rate (L_p - L_j) before round t: -inf once the expert lost +inf (weight 0)
        before = self.rate * np.vstack((np.zeros((1, self.N)), self.cum_gaps[:-1]))
        with np.errstate(invalid="ignore"):
            Z = log_softmax_rows(np.where(np.isnan(before), -np.inf, before)) + F
        return logsumexp_rows(np.where(np.isnan(Z), -np.inf, Z))

    @cached_property
    def slack(self) -> np.ndarray:
        return np.maximum(0.0, self.potential_terms)

    @cached_property
    def float_allowance(self) -> np.ndarray:
        """Per round: 64 eps times the magnitudes summed so far (the potential's rounding)."""
        lp, le = self.own
        mag = np.abs(np.where(np.isfinite(lp), lp, 0.0)) + np.max(np.abs(np.where(np.isfinite(le), le, 0.0)), axis=1)
        return 64 * _EPS * (1.0 + np.cumsum((self.rate or 1.0) * mag) + math.log(max(self.N, 1)))


# ------------------------------------------------------------------------------ certificates
def cert_experts_regret(run: ExpertsRun) -> Certificate:
    """§9: regret to every expert <= (log N + A) / rate, A = sum_t of the per-round allowance of a search
    at the referee's largest tolerance (see the module docstring); σ measured is reported beside it."""
    if run.rate is None:
        return not_applicable("experts_regret", f"forecaster {run.forecaster.name!r} has no rate (λ or η) to certify")
    value = float(np.max(run.regret()))
    sigma = float(np.sum(run.slack))
    per = _precision_allowance(run)
    # a round where the forecaster gave its outcome probability 0 (log loss) has no finite allowance: its loss
    # is +inf, and no allowance rescues a regret of +inf; it adds nothing (the regret to an expert who lost +inf
    # too is -inf)
    A = float(np.sum(np.where(np.isfinite(per), per, 0.0)))
    bound = experts_regret_bound(run.N, A, run.rate)
    return judged(
        "experts_regret",
        value,
        bound,
        atol=0.0,
        extra={"sigma": sigma, "allowance": A, "printed_bound": math.log(run.N) / run.rate, "rate": run.rate},
    )


def _precision_allowance(run: ExpertsRun) -> np.ndarray:
    """Per round: what a search of the referee's largest width (``referee.max_tol``) may leave in σ_t,
    plus the potential's floating-point rounding."""
    tol = run.max_tol
    lip = float(run.forecaster.advice_lipschitz) if isinstance(run.forecaster, ExpertsForecaster) else 0.0
    if run.loss == "log":
        own = np.where(run.y == 1.0, run.p, 1.0 - run.p)
        with np.errstate(divide="ignore", over="ignore"):
            per = (1.0 + lip) * (tol / 2) / own
    else:
        per = np.full(run.T, (run.rate or 0.0) * (1.0 + 2.0 * lip) * tol)  # a rate: the callers checked
    return per + run.float_allowance


def cert_experts_precision(run: ExpertsRun) -> Certificate:
    """σ_t <= what a search of width tol leaves, in every round (value: worst ratio; bound 1)."""
    if run.rate is None:
        return not_applicable("experts_search_precision", "no rate to certify", bound=1.0)
    allowance = _precision_allowance(run)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(run.slack > 0, run.slack / allowance, 0.0)
    worst = float(np.max(ratio)) if run.T else 0.0
    return Certificate(
        "experts_search_precision",
        worst,
        1.0,
        bool(worst <= 1.0),
        extra={"sigma": float(np.sum(run.slack)), "worst_round": int(np.argmax(ratio)) + 1 if run.T else 0},
    )


def hedge_bound(run: ExpertsRun, t: int | None = None) -> tuple[float, str]:
    """The textbook regret bound of the Hedge forecaster after t rounds (NaN, reason when none)."""
    fc, T = run.forecaster, run.T if t is None else t
    n = run.N
    logn = math.log(n)
    if run.loss == "log":
        if isinstance(fc.eta, float) and fc.eta <= 1.0:
            return logn / fc.eta, ""
        return math.nan, "Hedge has a log-loss guarantee only for a fixed eta <= 1 (exp-concavity)"

    def one(eta: float, rounds: int) -> float:
        b = logn / eta + eta * rounds / 8.0
        return min(b, logn / eta) if eta <= 0.5 else b

    if fc.eta == "doubling":
        total, m = 0.0, 0
        while (1 << m) <= T:
            start, stop = 1 << m, min((1 << (m + 1)) - 1, T)
            total += one(fc.rate_at(start, n), stop - start + 1)
            m += 1
        return total, ""
    return one(fc.rate_at(1, n), T), ""


def _hedge_slack(run: ExpertsRun) -> np.ndarray:
    """Per round: how much more p_t lost than the mixture sum_j w_tj f_tj (a fixed-point search's slack)."""
    fc, cum = run.forecaster, run.cum_expert_losses
    W = np.array([fc.weights_after(cum, t) for t in range(run.T)]) if run.T else np.zeros((0, run.N))
    mix = np.clip(np.sum(W * run.X, axis=1), 0.0, 1.0)
    ell = LOSS_FUNCTIONS[run.loss]
    return np.maximum(0.0, _diff(ell(run.p, run.y), ell(mix, run.y)))


def cert_hedge(run: ExpertsRun) -> Certificate:
    """Hedge's textbook bound plus the fixed-point slack (see the module docstring)."""
    bound, why = hedge_bound(run)
    value = float(np.max(run.regret()))
    if why:
        return Certificate("hedge_regret", value, math.nan, None, note=why)
    slack = float(np.sum(_hedge_slack(run)))
    tol = run.float_allowance[-1] if run.T else 0.0
    return Certificate(
        "hedge_regret",
        value,
        bound + slack,
        bool(value <= bound + slack + tol),
        extra={"textbook_bound": bound, "sigma": slack},
    )


# ------------------------------------------------------------------------------ metrics, curves
def experts_metrics(run: ExpertsRun) -> dict[str, float]:
    lp, le = run.own
    out = {
        "loss": float(np.mean(lp)) if run.T else 0.0,
        "loss_best_expert": float(np.min(np.mean(le, axis=0))) if run.T else 0.0,
        "n_experts": float(run.N),
    }
    reg = run.regret()
    out["regret_experts"] = float(np.max(reg))
    out["regret_experts_over_T"] = out["regret_experts"] / run.T if run.T else 0.0
    out["best_expert"] = float(np.argmin(np.sum(le, axis=0))) if run.T else 0.0
    for loss in ("squared", "log"):
        out[f"regret_experts_{loss}"] = float(np.max(run.regret(loss)))
    if run.N <= MAX_EXPERT_COLUMNS:
        out.update({f"regret_expert_{j}": float(r) for j, r in enumerate(reg)})
    return out


def experts_curves(run: ExpertsRun, n_checkpoints: int) -> pd.DataFrame:
    fc = run.forecaster
    claims = fc.claims
    rows: list[tuple[int, str, float]] = []
    if not run.T:
        return pd.DataFrame(rows, columns=["t", "metric", "value"])
    rate = run.rate if "experts_regret" in claims else None
    if rate:
        per = _precision_allowance(run)
        cum_slack = np.cumsum(np.where(np.isfinite(per), per, 0.0))
    else:
        cum_slack = None
    weights = fc.weights_after
    cum_loss = np.cumsum(run.own[0])
    hedge_slack = np.cumsum(_hedge_slack(run)) if "hedge_regret" in claims else None
    for t in checkpoints(run.T, n_checkpoints):
        m = {"regret_experts": float(np.max(run.cum_gaps[t - 1])), "loss": float(cum_loss[t - 1] / t)}
        if rate and cum_slack is not None:
            m["regret_experts_bound"] = experts_regret_bound(run.N, cum_slack[t - 1], rate)
        if hedge_slack is not None:
            b, why = hedge_bound(run, int(t))
            if not why:
                m["regret_experts_bound"] = b + hedge_slack[t - 1]
        w = weights(run.cum_expert_losses, int(t)) if callable(weights) else None
        if w is not None and run.N <= MAX_EXPERT_COLUMNS:
            m.update({f"weight:{j}": float(v) for j, v in enumerate(w)})
        rows += [(int(t), k, float(v)) for k, v in m.items()]
    return pd.DataFrame(rows, columns=["t", "metric", "value"])


#: Metric name -> one-line description of the metrics this game adds to the binary game's (names ending in ``<j>``:
#: one column per expert or group).
METRICS = {
    "loss": "mean loss under the game's loss (squared or log)",
    "loss_best_expert": "mean loss of the best expert",
    "n_experts": "number of experts N",
    "best_expert": "index of the best expert",
    "regret_experts": "regret to the best expert under the game's loss (§9)",
    "regret_experts_over_T": "regret_experts / T",
    "regret_experts_squared": "regret to the best expert under the squared loss",
    "regret_experts_log": "regret to the best expert under the log loss (unclipped)",
    "regret_expert_<j>": "regret to expert j (N <= 32)",
}
#: Certificate name -> one-line description.
CERTIFICATE_DESCRIPTIONS = {
    "experts_regret": "§9: regret to every expert <= (log N + sigma) / rate",
    "experts_search_precision": "the experts search leaves no more slack than its tolerance explains",
    "hedge_regret": "regret <= log N / eta + eta T / 8 (Hedge, summed over doubling epochs)",
}
#: Certificate name -> function(run, referee) -> Certificate (scored on the experts run; the binary
#: game's certificates are scored too, on the binary run).
CERTIFICATES = {
    "experts_regret": lambda run, ref: cert_experts_regret(run),
    "experts_search_precision": lambda run, ref: cert_experts_precision(run),
    "hedge_regret": lambda run, ref: cert_hedge(run),
}
ExpertsGame.certificates = {**BINARY_CERTIFICATES, **CERTIFICATES}
ExpertsGame.metric_descriptions = {**BINARY_METRICS, **METRICS}
ExpertsGame.certificate_descriptions = CERTIFICATE_DESCRIPTIONS

__all__ = [
    "ExpertsRun",
    "cert_experts_precision",
    "cert_experts_regret",
    "cert_hedge",
    "experts_curves",
    "experts_metrics",
    "hedge_bound",
    "AdviceContext",
    "ExpertsGame",
    "log_loss",
    "squared_loss",
]
