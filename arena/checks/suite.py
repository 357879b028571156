"""The suite: the checks of each kind of plugin, in order, and every applicable one run on a plugin."""

from __future__ import annotations

from collections.abc import Callable

from arena.checks.envs import check_env_with_nature
from arena.checks.forecasters import (
    check_claims_hold,
    check_fast_path_matches_step_loop,
    check_forecasts_in_range,
    check_no_lookahead,
)
from arena.checks.natures import (
    check_contexts_shape,
    check_laws_agree_with_samples,
    check_oblivious_ignores_forecast,
    check_outcomes_valid,
)
from arena.checks.play import CheckFailure, NotApplicable, class_of, plugin_label
from arena.checks.state import check_constructor_stores_only, check_reset_clears_state, check_same_seed_same_game
from arena.protocols import Forecaster

#: (registered plugin name, check function name) -> why the failure is expected. A known
#: failure is recorded here with its reason (the conformance tests mark it xfail, strict),
#: never skipped silently.
KNOWN_FAILURES: dict[tuple[str, str], str] = {}


_FORECASTER_CHECKS = (
    check_forecasts_in_range,
    check_no_lookahead,
    check_same_seed_same_game,
    check_reset_clears_state,
    check_claims_hold,
    check_constructor_stores_only,
    check_fast_path_matches_step_loop,
)
_NATURE_CHECKS = (
    check_outcomes_valid,
    check_contexts_shape,
    check_same_seed_same_game,
    check_reset_clears_state,
    check_oblivious_ignores_forecast,
    check_constructor_stores_only,
    check_env_with_nature,
    check_laws_agree_with_samples,
)


def all_checks(kind: str) -> list[Callable]:
    """The check functions for ``kind`` (``"forecaster"`` or ``"nature"``).

    A check that does not apply to a particular plugin raises :class:`NotApplicable`.

    Examples
    --------
    >>> [c.__name__ for c in all_checks("nature")][:2]
    ['check_outcomes_valid', 'check_contexts_shape']
    """
    table = {"forecaster": _FORECASTER_CHECKS, "nature": _NATURE_CHECKS}
    if kind not in table:
        raise ValueError(f"all_checks: kind={kind!r}; expected 'forecaster' or 'nature'")
    return list(table[kind])


def check_plugin(plugin, *, params: dict | None = None) -> dict[str, str]:
    """Run every applicable check on ``plugin``; raise one :class:`CheckFailure` listing all failures.

    Returns check name -> ``"passed"`` or ``"not applicable: <reason>"``. Known failures
    (:data:`KNOWN_FAILURES`) are reported as ``"known failure: <reason>"`` when they fail.
    """
    cls = class_of(plugin)
    kind = "forecaster" if issubclass(cls, Forecaster) else "nature"
    verdicts, failures = {}, []
    for check in all_checks(kind):
        try:
            check(plugin, params=params) if isinstance(plugin, type) else check(plugin)
            verdicts[check.__name__] = "passed"
        except NotApplicable as exc:
            verdicts[check.__name__] = f"not applicable: {exc}"
        except AssertionError as exc:
            known = KNOWN_FAILURES.get((cls.name, check.__name__))
            verdicts[check.__name__] = f"known failure: {known}" if known else "failed"
            if not known:
                failures.append(str(exc))
    if failures:
        raise CheckFailure(f"{len(failures)} check(s) failed for {plugin_label(cls)}:\n" + "\n".join(failures))
    return verdicts
