"""Natures (the "adversaries") of the arena; importing this package registers them all.

Modules: :mod:`adversaries.iid` (i.i.d. coins, contextual logistic),
:mod:`adversaries.drifting` (sinusoid, logit random walk, change points, Markov
switching), :mod:`adversaries.adaptive` (worst-case natures that see the announced
forecast), :mod:`adversaries.replay` (recorded series: a user's file, Seattle rain),
:mod:`adversaries.quantile` (the quantile game's natures: continuous laws, drift, groups,
Lipschitz-CDF adversaries, real-valued replays) and :mod:`adversaries.redteam` (replays
of the attacks that ``arena-redteam`` found and stored).
:mod:`adversaries.experts` holds the expert panels of the experts game (they wrap a binary
nature for their contexts and outcomes).

References
----------
Perdomo & Recht, "In Defense of Defensive Forecasting".
"""

from adversaries import adaptive, drifting, experts, iid, quantile, redteam, replay
from adversaries.adaptive import AntiForecaster, BiasPusher
from adversaries.drifting import Changepoints, LogitWalk, Markov, Sinusoid
from adversaries.iid import IidBernoulli, Logistic
from adversaries.replay import Replay, SeattleRain

__all__ = [
    "AntiForecaster",
    "BiasPusher",
    "Changepoints",
    "IidBernoulli",
    "Logistic",
    "LogitWalk",
    "Markov",
    "Replay",
    "SeattleRain",
    "Sinusoid",
    "adaptive",
    "drifting",
    "experts",
    "iid",
    "quantile",
    "redteam",
    "replay",
]
