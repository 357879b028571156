"""Referee metrics: calibration, regret, smooth calibration error; and their catalogue.

:data:`METRICS` names every metric the referee writes into a result row, per game, with a
one-line description; :data:`CERTIFICATE_DESCRIPTIONS` does the same for the certificates
(:data:`arena.referee.CERTIFICATES` holds the functions). ``arena-list metrics`` shows
both; a test checks them against what the referee computes, so a new metric or
certificate needs its line here. A game added by a plugin adds its own entry. Names ending
in ``<j>`` stand for one column per expert or group (``regret_expert_0``, ``group_coverage.0``).
"""

#: Every game whose outcomes are bits (binary, decision, experts) reports these.
_BINARY = {
    "bias": "mean bias |sum_t (p_t - y_t)| / T (§2)",
    "brier": "mean squared error (p_t - y_t)^2",
    "log_loss": "mean log loss, forecasts clipped to [1e-6, 1 - 1e-6]",
    "ece": "binned expected calibration error (referee.ece_bins equal-width bins)",
    "smce": "exact smooth calibration error, test functions [0, 1] -> [0, 1] (§8)",
    "smce_over_T": "smce / T",
    "smce_pm": "exact smooth calibration error, test functions [0, 1] -> [-1, 1] (the usual smCE)",
    "smce_pm_over_T": "smce_pm / T",
    "oi_gap": "outcome-indistinguishability gap ||sum_t Phi(x_t, p_t)(y_t - p_t)|| for referee.oi_features",
    "regret_constant": "squared-loss regret to the best constant forecast",
    "regret_linear": "squared-loss regret to the best linear forecast <w, x_t>, ||w|| <= referee.M (§6)",
    "expected_bias": "mean bias against nature's P(y_t = 1) (natures that expose their law)",
    "expected_brier": "expected squared error under nature's P(y_t = 1) (natures that expose their law)",
}
#: Forecasters on a grid {0, 1/N, ..., 1} (an attribute ``N``) add these in the binary and decision games.
_GRID = {
    "grid_calibration": "largest per-grid-point calibration error of the rounded forecasts (§8)",
    "grid_calibration_over_T": "grid_calibration / T",
}

#: Game name -> metric name -> one-line description.
METRICS: dict[str, dict[str, str]] = {
    "binary": {**_BINARY, **_GRID},
    "decision": {
        **_BINARY,
        **_GRID,
        "decision_loss": "mean loss of the actions pi(p_t)",
        "decision_loss_expected": "mean loss of the actions, in expectation over a randomized forecast",
        "regret_decision": "regret of the actions pi(p_t) to the best fixed action (§5)",
        "regret_decision_over_T": "regret_decision / T",
        "regret_decision_expected": "regret_decision in expectation over a randomized forecast",
        "regret_decision_expected_over_T": "regret_decision_expected / T",
        "randomized_rounds": "fraction of rounds with a two-point (randomized) forecast",
        "best_action": "the best fixed action in hindsight",
    },
    "experts": {
        **_BINARY,
        "loss": "mean loss under the game's loss (squared or log)",
        "loss_best_expert": "mean loss of the best expert",
        "n_experts": "number of experts N",
        "best_expert": "index of the best expert",
        "regret_experts": "regret to the best expert under the game's loss (§9)",
        "regret_experts_over_T": "regret_experts / T",
        "regret_experts_squared": "regret to the best expert under the squared loss",
        "regret_experts_log": "regret to the best expert under the log loss (unclipped)",
        "regret_expert_<j>": "regret to expert j (N <= 32)",
    },
    "quantile": {
        "q": "the quantile level",
        "coverage": "marginal coverage mean_t 1{y_t <= p_t}",
        "coverage_error": "|coverage - q| (§10)",
        "expected_coverage": "coverage in expectation over the forecast's atoms and nature's law",
        "expected_coverage_error": "|expected_coverage - q|",
        "pinball": "mean pinball loss (y - p)(q - 1{y < p})",
        "expected_pinball": "pinball in expectation over the forecast's atoms and nature's law",
        "mean_forecast": "mean forecast",
        "randomized_rounds": "fraction of rounds with a two-point (randomized) forecast",
        "law_exposed": "fraction of rounds in which nature gave its outcome law",
        "law_lipschitz_max": "largest Lipschitz constant of nature's CDF (inf: a point mass)",
        "group_count.<j>": "rounds in group j (natures with group ids in the context)",
        "group_coverage.<j>": "coverage in group j",
        "expected_group_coverage.<j>": "expected coverage in group j",
        "group_coverage_error_max": "largest |coverage - q| over the groups",
        "group_coverage_error_mean": "mean |coverage - q| over the groups",
        "expected_group_coverage_error_max": "largest |expected coverage - q| over the groups",
    },
}

#: Certificate name -> one-line description (a forecaster claims certificates by name).
CERTIFICATE_DESCRIPTIONS: dict[str, str] = {
    "bit": "§2: |sum_t (p_t - y_t)| <= 1",
    "kernel": "§4/§7: sum_{s,t} w_s w_t k(z_s, z_t) <= sum_t w_t^2 k(z_t, z_t) + sigma",
    "search_precision": "the search slack sigma is no larger than its tolerance explains",
    "smce": "§8: smCE <= sqrt(2) sqrt(sum_t w_t^2 k(z_t, z_t) + sigma)",
    "linear_regret": "§6/§8: regret to linear forecasts (||w|| <= M) <= (sqrt 5 + sqrt(1 + 4M^2))"
                     " sqrt(sum w^2 k + sigma)",
    "rounded_calibration": "§8 (corrected): per grid point, w.p. 1 - delta, <= sqrt(T)(...) + T/N",
    "decision_regret": "§5: regret of the actions <= 2B sqrt(2T) + the search's slack",
    "decision_search_precision": "the decision search leaves no more slack than its width rule allows",
    "experts_regret": "§9: regret to every expert <= (log N + sigma) / rate",
    "experts_search_precision": "the experts search leaves no more slack than its tolerance explains",
    "hedge_regret": "regret <= log N / eta + eta T / 8 (Hedge, summed over doubling epochs)",
    "quantile_marginal": "§10: |coverage - q| <= max(q, 1 - q) / T",
    "quantile_round": "§10 Alg. 6: every round, E_t[(1{y <= p} - q) S_t(p_t)] <= L / (10 t^2)",
    "quantile_group": "§10 Thm: per group f, |sum_t E_t[f (1{y <= p} - q)]| <= ||f|| sqrt(L + sum_t E_t k)",
}
