"""Figures of the decision game (§5): the expected decision regret against T, and leaderboards.

The forecasts of the decision game are binary: :mod:`arena.plots.binary` draws their
calibration figures.

References
----------
Perdomo & Recht, "In Defense of Defensive Forecasting", §5 (decision making).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from arena.answer import HEADLINE_METRICS
from arena.plots.common import _curve_jobs, regret_curves
from arena.plots.jobs import Job

#: Metrics of the decision game: leaderboards.
DECISION_METRICS = HEADLINE_METRICS["decision"][:2]  # its own; the binary ones follow

#: The figures of the decision game, by name (a report's job names its figure).
FIGURES = {
    "regret_decision": lambda curves, nature, styles: regret_curves(
        curves, "regret_decision_expected", nature=nature, styles=styles
    ),
}


def jobs(
    summary: pd.DataFrame,
    curves: pd.DataFrame,
    fig_dir: Path,
    formats: Sequence[str],
    styles: Mapping[str, dict],
) -> list[Job]:
    """The figure jobs of the decision game's matchups: per nature ``regret_decision__<nature>``, and
    leaderboards of :data:`DECISION_METRICS`."""
    return _curve_jobs(
        "decision",
        {"regret_decision": "regret_decision_expected"},
        DECISION_METRICS,
        summary,
        curves,
        fig_dir,
        formats,
        styles,
    )
