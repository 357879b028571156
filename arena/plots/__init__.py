"""Tables -> matplotlib figures and text tables, nothing else.

Every function here is a pure function of the tidy tables of :mod:`arena.results`
(``summary``, ``curves``, ``reliability``); plot functions take ``ax=None`` and return the
:class:`~matplotlib.figure.Figure`. Figures are drawn on the Agg canvas without touching
pyplot's global state (no ``plt.show``), each a paper's single column (3.25 in) or full width
(6.75 in) wide, in 8 pt type, and within a game every forecaster keeps its color and marker
across figures (:func:`~arena.plots.style.forecaster_styles`, colorblind-safe palettes, derived
from the data). More than :data:`~arena.plots.style.MAX_LINES` forecasters are split into panels
by family (defensive forecasters, baselines). Every curve is a mean across seeds, with its 95%
Student-t interval as a band from :data:`~arena.plots.style.MIN_BAND_SEEDS` seeds on; the
statistics of tables and summaries are those of :mod:`arena.aggregate`. Missing or NaN data
never crash a plot: the figure says "no data" and :func:`report` skips it. :func:`report` takes a
results directory's tables (and the comparison of its top pair, made by :mod:`arena.summarize`),
saves PNGs (and a paper's figures as PDFs with TrueType, Type 42, fonts), draws only the figures
whose inputs changed and writes the results page ``index.html`` (:mod:`~arena.plots.html`). It
never replays a game and never imports the plugin registry.

The package, one module per concern:

- :mod:`~arena.plots.style`: type sizes, palettes and markers, styles per forecaster, saving;
- :mod:`~arena.plots.common`: what every game's figures share (curves against T, panels, legends);
- :mod:`~arena.plots.leaderboards`: the leaderboard heatmap; :mod:`~arena.plots.certificates`: the
  certificates' margins;
- :mod:`~arena.plots.binary`, :mod:`~arena.plots.quantile`, :mod:`~arena.plots.experts`,
  :mod:`~arena.plots.decision`: each game's own figures and the jobs of its report;
  :mod:`~arena.plots.multiples`: small multiples of a curve of binary forecasts, one panel per nature;
- :mod:`~arena.plots.tables`: LaTeX tables and the Markdown summary;
- :mod:`~arena.plots.compare`: the figure of an anytime-valid comparison;
- :mod:`~arena.plots.jobs`: a figure job (:class:`~arena.plots.jobs.Job`) and the digest of its inputs;
- :mod:`~arena.plots.plan`: the jobs of a report; :mod:`~arena.plots.draw`: drawing them;
- :mod:`~arena.plots.report`: the report (:func:`report`);
- :mod:`~arena.plots.html`: the results page.

References
----------
Perdomo & Recht, "In Defense of Defensive Forecasting", §8 (smooth calibration of K29).
"""

from arena.answer import HEADLINE_METRICS
from arena.plots.binary import (
    BINARY_METRICS,
    pool_reliability,
    reliability_diagram,
    reliability_grid,
    smce_vs_T,
)
from arena.plots.certificates import certificate_margins
from arena.plots.common import regret_curves
from arena.plots.decision import DECISION_METRICS
from arena.plots.experts import EXPERTS_METRICS, excess_risk_vs_n, expert_weights
from arena.plots.leaderboards import leaderboard_heatmap
from arena.plots.multiples import curves_by_nature
from arena.plots.quantile import QUANTILE_METRICS, coverage_error_vs_T, coverage_vs_L, group_coverage, rolling_coverage
from arena.plots.report import report
from arena.plots.style import MARKERS, METRIC_LABELS, PALETTE, forecaster_styles, order
from arena.plots.tables import latex_table, markdown_summary

__all__ = [
    "BINARY_METRICS",
    "DECISION_METRICS",
    "EXPERTS_METRICS",
    "HEADLINE_METRICS",
    "MARKERS",
    "METRIC_LABELS",
    "PALETTE",
    "QUANTILE_METRICS",
    "certificate_margins",
    "coverage_error_vs_T",
    "coverage_vs_L",
    "curves_by_nature",
    "excess_risk_vs_n",
    "expert_weights",
    "forecaster_styles",
    "group_coverage",
    "latex_table",
    "leaderboard_heatmap",
    "markdown_summary",
    "order",
    "pool_reliability",
    "regret_curves",
    "reliability_diagram",
    "reliability_grid",
    "report",
    "rolling_coverage",
    "smce_vs_T",
]
