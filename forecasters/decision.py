"""Decision defensive forecasting (§5): forecasts whose best responses have low regret.

Moment matching with Φ(p) = [ℓ(π(p), 1) - ℓ(π(p), 0), B], B = sup_a |ℓ(a, 1) - ℓ(a, 0)|:
S_t(p) = sum_{s<t} (y_s - p_s) <Φ(p_s), Φ(p)> = d(π(p)) C_t + B^2 W_t with
d(a) = ℓ(a, 1) - ℓ(a, 0), C_t = sum_{s<t} (y_s - p_s) d(π(p_s)) and W_t = sum_{s<t} (y_s - p_s).
Then regret to the best fixed action <= 2 ||sum_t (y_t - p_t) Φ(p_t)|| <= 2B sqrt(2T).

Why a randomized search for finite action sets: d(π(p)) is piecewise constant, so S_t
jumps where π changes action and may have no root. The deterministic search then returns a
point next to the jump where S_t(p_t) is far from zero, and the invariant fails: against
y_t = 1{p_t < 1/2} (the 0-1 loss) every action is wrong and the regret grows like T/2
(``search: deterministic`` shows it). The two-point search of §10 (Algorithm 6) returns the two
ends lo < hi of a tiny interval around the jump, with probabilities τ, 1 - τ such that
τ S_t(lo) + (1 - τ) S_t(hi) = 0: the invariant then holds in expectation over the forecast's
coin (which nature never sees), and so does the regret bound. The interval is shrunk until
E_t[(y_t - p_t) S_t(p_t)] = τ S_t(lo) (hi - lo) <= 1/(10 t^2), a summable slack.

References
----------
Perdomo & Recht, §5 (risk minimization) and §10 (Algorithm 6, the randomized search).
"""

from __future__ import annotations

from arena.protocols import Context, DecisionForecaster, Forecast
from arena.registry import register
from arena.search import DEFAULT_TOL, anticorrelation_search, two_point_search

SEARCHES = ("auto", "deterministic", "randomized")


def expected_slack_width(t: int):
    """The width rule of the two-point search in round t: E_t[w_t S_t(p_t)] <= 1/(10 t^2).

    E_t[w_t S_t(p_t)] = τ S(lo) (hi - lo) and τ S(lo) <= min(|S(lo)|, |S(hi)|).
    """
    return lambda s_lo, s_hi: 1.0 / (10.0 * t * t * max(min(abs(s_lo), abs(s_hi)), 1e-300))


@register
class DecisionDF(DecisionForecaster):
    """Decision DF (§5) for the decision game's loss ℓ(a, y); the action is π(p_t).

    Parameters
    ----------
    search : ``auto`` (the deterministic anticorrelation search when π is continuous, the
        squared loss; the randomized two-point search otherwise), ``deterministic`` or
        ``randomized``.
    tol : width of the deterministic search's last interval.

    Certificates: ``decision_regret`` (regret to the best fixed action <= 2B sqrt(2T), with
    the search's slack; in expectation for the randomized search) and
    ``decision_search_precision``. The deterministic search against a discontinuous π has no
    guarantee: the referee marks the certificate not applicable.

    Examples
    --------
    >>> from arena import play
    >>> r = play("decision", DecisionDF(), "anti_forecaster", T=400, seed=0)
    >>> r.certificates["decision_regret"].holds, r.summary["regret_decision_expected"] < 2 * (2 * 400) ** 0.5
    (True, True)
    """

    name = "decision_df"
    family = "defensive"
    games = ("decision",)
    claims = ("decision_regret", "decision_search_precision")

    def __init__(self, search: str = "auto", tol: float = DEFAULT_TOL):
        if search not in SEARCHES:
            raise ValueError(f"{self.name}: search={search!r}; expected one of {', '.join(map(repr, SEARCHES))}")
        if isinstance(tol, bool) or not isinstance(tol, (int, float)) or not 0 < tol < 1:
            raise ValueError(f"{self.name}: tol={tol!r} must be in (0, 1), e.g. tol: 1e-10")
        self.search, self.tol = search, float(tol)

    def reset(self, rng):
        super().reset(rng)
        game = getattr(self, "game", None)
        if game is None or not hasattr(game, "diffs"):
            raise ValueError(
                f"{self.name} plays the decision game (its loss defines π); play it with "
                "game='decision' (the arena sets the game before reset)"
            )
        self._C = 0.0  # sum_s w_s d(π(p_s))
        self._W = 0.0  # sum_s w_s
        self._t = 0

    @property
    def randomized(self) -> bool:
        if self.search == "auto":
            return not self.game.continuous
        return self.search == "randomized"

    def summary_function(self):
        """S_t(p) = d(π(p)) C_t + B^2 W_t."""
        C, BW, diff = self._C, self.game.B**2 * self._W, self.game.diff
        return lambda p: diff(p) * C + BW

    def predict(self, x: Context) -> Forecast | float:
        S = self.summary_function()
        if self.randomized:
            return two_point_search(S, 0.0, 1.0, expected_slack_width(self._t + 1))
        return anticorrelation_search(S, tol=self.tol)

    def update(self, x, p, y):
        w = y - p
        self._C += w * self.game.diff(p)
        self._W += w
        self._t += 1
