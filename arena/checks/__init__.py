"""The conformance suite: ``check_<property>`` functions that every plugin must pass.

Each check takes a plugin (an instance, or a class with ``params``), plays a few short
games through the arena's own loop (:func:`arena.runner.play`) and raises
:class:`CheckFailure` (an ``AssertionError``) whose message names the plugin, the check,
the round and the values. A check that does not apply to a plugin (the oblivious check
on an adaptive nature, the certificate check on a forecaster that claims none) raises
:class:`NotApplicable` with the reason. Plugin authors run them on their own classes::

    from arena.checks import all_checks
    for check in all_checks("forecaster"):
        check(MyForecaster(alpha=0.1))

Every check plays the plugin's game (the first of its ``games`` that the arena knows, or
``game=``: a name or an :class:`arena.games.Game` with its parameters). Forecasters meet
small probe natures defined here when their game takes binary natures (a coin, a
contextual logistic coin, a contrarian, a scripted bit sequence), and otherwise the
registered natures of their game that build with default parameters; natures meet probe
forecasters (constant, running-mean and randomized forecasts placed inside the game's
forecast space). The checks never import a concrete plugin. An instance passed to a
check is copied before it is played, so pass one that has not played yet.

The modules: :mod:`~arena.checks.play` (the harness: one game played, its failures),
:mod:`~arena.checks.probes` (the probe players), the checks by the plugin they check
(:mod:`~arena.checks.forecasters`, :mod:`~arena.checks.natures`, :mod:`~arena.checks.state` for
either kind, :mod:`~arena.checks.envs` for the Gymnasium environments) and
:mod:`~arena.checks.suite` (every check of a kind, run on a plugin).

Examples
--------
>>> from arena.protocols import Forecaster
>>> class Half(Forecaster):
...     name = "half"
...     def predict(self, x): return 0.5
...     def update(self, x, p, y): pass
>>> check_forecasts_in_range(Half(), T=20)
>>> check_no_lookahead(Half(), T=20)
>>> class TooHigh(Half):
...     def predict(self, x): return 1.5
>>> check_forecasts_in_range(TooHigh(), T=20)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
arena.checks.play.CheckFailure: check_forecasts_in_range: forecaster 'half' (...TooHigh) ... forecast 1.5 is outside ...

References
----------
The protocol (arena/protocols.py: no look-ahead), the certificates (docs/ERRATA.md); the conformance suite
(every check on every plugin).
"""

from arena.checks.envs import check_env, check_env_with_nature
from arena.checks.forecasters import (
    check_claims_hold,
    check_fast_path_matches_step_loop,
    check_forecasts_in_range,
    check_no_lookahead,
)
from arena.checks.natures import (
    LAW_ALPHA,
    LAW_DRAWS,
    check_contexts_shape,
    check_laws_agree_with_samples,
    check_oblivious_ignores_forecast,
    check_outcomes_valid,
    ks_distance,
)
from arena.checks.play import DEFAULT_T, CheckFailure, NotApplicable
from arena.checks.probes import (
    CoinProbe,
    ConstantProbe,
    ContrarianProbe,
    LogisticProbe,
    MeanProbe,
    RandomizedProbe,
    ScriptedNature,
)
from arena.checks.state import check_constructor_stores_only, check_reset_clears_state, check_same_seed_same_game
from arena.checks.suite import KNOWN_FAILURES, all_checks, check_plugin

__all__ = [
    "KNOWN_FAILURES",
    "LAW_ALPHA",
    "LAW_DRAWS",
    "CheckFailure",
    "DEFAULT_T",
    "CoinProbe",
    "ConstantProbe",
    "ContrarianProbe",
    "LogisticProbe",
    "MeanProbe",
    "NotApplicable",
    "RandomizedProbe",
    "ScriptedNature",
    "all_checks",
    "check_claims_hold",
    "check_constructor_stores_only",
    "check_contexts_shape",
    "check_laws_agree_with_samples",
    "check_env",
    "check_env_with_nature",
    "check_fast_path_matches_step_loop",
    "check_forecasts_in_range",
    "check_no_lookahead",
    "check_oblivious_ignores_forecast",
    "check_outcomes_valid",
    "check_plugin",
    "check_reset_clears_state",
    "check_same_seed_same_game",
    "ks_distance",
]
