"""The look of every figure: type sizes, colors and markers, TrueType fonts, saving.

A forecaster's color and marker come from the data, never from its name: within one game the
forecasters, sorted by name, take Okabe & Ito's colorblind-safe colors in turn
(:func:`forecaster_styles`), so that the same forecasters get the same styles in every figure
and in every process. :func:`arena.plots.report` computes one mapping per game and hands it to
each figure; a figure drawn on its own derives it from the forecasters it is given.

Examples
--------
>>> forecaster_styles(["ogd", "k29"])
{'k29': {'color': '#0072B2', 'marker': 'o'}, 'ogd': {'color': '#D55E00', 'marker': 's'}}
"""

from __future__ import annotations

import logging
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import matplotlib as mpl
import numpy as np
from matplotlib import ticker
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

#: A paper's single column and its full text width, in inches (NeurIPS, ICML, two-column ACM/IEEE):
#: every figure is one or the other wide, drawn at 8 pt (7 pt ticks, 6.5 pt legends).
COLUMN_WIDTH = 3.25
FULL_WIDTH = 6.75
#: Single-column figure size (inches) and the type size that goes with it.
FIGSIZE = (COLUMN_WIDTH, 2.5)
#: At most this many forecasters share a panel; more are split into panels by family
#: (:attr:`arena.protocols.Forecaster.family`), so that every line can be told apart.
MAX_LINES = 5
#: A 95% interval across seeds is drawn as a band only from this many seeds on: with two or
#: three seeds the Student-t interval is so wide (t quantile 12.7 or 4.3) that bands fill the
#: panel and hide the means. Figures say how many seeds their means are over.
MIN_BAND_SEEDS = 5
#: PNG resolution: 150 dpi keeps 7 pt text crisp at single-column width, and draws and
#: compresses in about half the time of 200 dpi.
DPI = 150
_RC = {
    "font.size": 8,
    "axes.titlesize": 8,
    "axes.labelsize": 8,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "legend.fontsize": 6.5,
    "legend.title_fontsize": 7,
    "lines.linewidth": 1.2,
    "lines.markersize": 3.5,
    "axes.linewidth": 0.6,
    "xtick.major.width": 0.6,
    "ytick.major.width": 0.6,
    "axes.spines.top": False,
    "axes.spines.right": False,
    # a fixed title height: matplotlib's automatic placement checks every axes' tick labels
    # for overlap at each draw, a large share of the drawing time of a grid of panels
    "axes.titley": 1.0,
}
#: No layout engine asked of every figure (a user's matplotlibrc may): a figure made without one places its
#: panels itself (:func:`_new_figure`), and a figure saved is laid out already (:func:`_save`).
_NO_ENGINE = {"figure.autolayout": False, "figure.constrained_layout.use": False}
#: Fonts embedded in PDF and PostScript as TrueType (Type 42), not Type 3: selectable text, and
#: what publishers ask for. Applied where the figures are saved (:func:`_save`), with :data:`_NO_ENGINE`.
_SAVE_RC = {"pdf.fonttype": 42, "ps.fonttype": 42, "svg.fonttype": "none", "svg.hashsalt": "arena", **_NO_ENGINE}
#: The zlib compression level of the PNG files (:func:`_save`).
_PNG_LEVEL = 3

#: Okabe & Ito's colorblind-safe palette (yellow left out: too light on white), then Paul Tol's
#: muted wine, teal, olive and indigo, then Tol's remaining colors, for games with more than seven
#: forecasters.
PALETTE = (
    "#0072B2",
    "#D55E00",
    "#009E73",
    "#CC79A7",
    "#E69F00",
    "#56B4E9",
    "#000000",
    "#882255",
    "#44AA99",
    "#999933",
    "#332288",
    "#117733",
    "#DDCC77",
    "#88CCEE",
    "#AA4499",
    "#661100",
    "#6699CC",
    "#AA4466",
)
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "h", "*", "p", "d", "H", "8", "+", "x", "1")
#: Axis and legend labels of the metrics of every game.
METRIC_LABELS = {
    "smce_over_T": "smCE/T",
    "smce": "smCE",
    "brier": "Brier",
    "bias": "bias",
    "log_loss": "log loss",
    "ece": "ECE",
    "oi_gap": "OI gap",
    "regret_linear": "regret to linear",
    "regret_constant": "regret to constant",
    # the quantile game
    "coverage": "coverage",
    "coverage_error": "|coverage - q|",
    "expected_coverage_error": "E|coverage - q|",
    "group_coverage_error_max": "max group |coverage - q|",
    "pinball": "pinball loss",
    "expected_pinball": "expected pinball loss",
    "rolling_coverage": "rolling coverage",
    # the experts and decision games
    "regret_experts": "regret to the best expert",
    "regret_experts_over_T": "regret to the best expert / T",
    "loss": "mean loss",
    "regret_decision": "decision regret",
    "regret_decision_expected": "expected decision regret",
    "regret_decision_expected_over_T": "expected decision regret / T",
    "decision_loss_expected": "expected decision loss",
    "excess_risk": "excess test risk",
}
_BOUND_COLOR = "0.45"


def order(names: Iterable[str]) -> list[str]:
    """Forecasters in the order of legends and tables: sorted by name, each once.

    Examples
    --------
    >>> order(["ogd", "k29", "ogd"])
    ['k29', 'ogd']
    """
    return sorted(set(map(str, names)))


def forecaster_styles(names: Iterable[str]) -> dict[str, dict[str, str]]:
    """The color and marker of each forecaster of one game: the i-th name in :func:`order` takes
    the i-th color of :data:`PALETTE` and the i-th marker of :data:`MARKERS`.

    A pure function of the set of names: the same forecasters get the same styles in every
    figure and process, whatever order they come in; up to ``len(PALETTE)`` forecasters get
    distinct colors and markers, the first seven Okabe & Ito's.

    Examples
    --------
    >>> forecaster_styles(["b", "a"]) == forecaster_styles(["a", "b", "a"])
    True
    """
    return {
        name: {"color": PALETTE[i % len(PALETTE)], "marker": MARKERS[i % len(MARKERS)]}
        for i, name in enumerate(order(names))
    }


def styles_for(names: Iterable[str], styles: Mapping[str, dict] | None = None) -> dict[str, dict[str, str]]:
    """``styles`` (one game's mapping, e.g. a report's), completed by :func:`forecaster_styles` of
    ``names`` for the names it lacks."""
    return {**forecaster_styles(names), **(styles or {})}


def _new_figure(figsize=FIGSIZE, layout: str | None = "constrained", **kw) -> Figure:
    """A figure rendered by Agg, with the layout engine ``layout`` (None: none, whatever a matplotlibrc asks of
    every figure: a figure without one places its panels itself)."""
    with mpl.rc_context(_NO_ENGINE):
        fig = Figure(figsize=figsize, layout=layout, **kw)
    FigureCanvasAgg(fig)  # render with Agg, whatever pyplot's backend is
    return fig


def _axes(ax: Axes | None, figsize=FIGSIZE) -> tuple[Figure, Axes]:
    if ax is not None:
        return ax.figure, ax
    fig = _new_figure(figsize)
    return fig, fig.add_subplot()


_SUPERSCRIPT = str.maketrans("-0123456789", "\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079")


class _DecadeFormatter(ticker.Formatter):
    """One style for every decade of an axis: plain (0.01, 0.1, 1, 10, 100, 1000) when they all lie in
    [0.001, 10000), else all as powers of ten (10\u207b\u2075, 10\u00b3, 10\u2076), never a mix of "100000" and "1e+06".

    Examples
    --------
    >>> f = _DecadeFormatter(); f.set_locs([10, 100, 1000]); [f(v) for v in f.ticks]
    ['10', '100', '1000']
    >>> f.set_locs([1e3, 1e4, 1e5, 1e6]); [f(v) for v in f.ticks]
    ['10\u00b3', '10\u2074', '10\u2075', '10\u2076']

    ``scale``: the values are written divided by it (a heatmap's colorbar in the unit of its cells).
    """

    def __init__(self, scale: float = 1.0):
        super().__init__()
        self.scale = scale

    def set_locs(self, locs):
        self.ticks = list(locs)
        if self.axis is not None:  # only the ticks in view are labelled
            lo, hi = sorted(self.axis.get_view_interval())
            locs = [v for v in self.ticks if lo * (1 - 1e-9) <= v <= hi * (1 + 1e-9)] or self.ticks
        pos = [abs(v / self.scale) for v in locs if v]
        self.plain = not pos or (min(pos) >= 1e-3 and max(pos) < 1e4)

    def __call__(self, v, pos=None):
        v = v / self.scale
        if v == 0 or getattr(self, "plain", True):
            return f"{v:g}"
        k = np.log10(abs(v))
        if abs(k - round(k)) > 1e-9:
            return f"{v:.0e}"
        return ("\u2212" if v < 0 else "") + _power_of_ten(abs(v))


def _lines(text: str, inches: float, char: float = 0.058) -> list[str]:
    """``text`` wrapped into the lines that ``inches`` hold, ``char`` inches a character (an 8 pt
    character of the figures' font takes about 0.058 in; a 7 pt one 0.052). A hyphenated word ("cross-attack",
    seeds "1-8") stays whole."""
    return textwrap.wrap(text, width=int(inches / char), break_on_hyphens=False)


def _power_of_ten(v: float) -> str:
    """A power of ten as text: ``_power_of_ten(1e-4)`` is 10\u207b\u2074."""
    return "10" + str(int(round(np.log10(v)))).translate(_SUPERSCRIPT)


def _plain_log_ticks(axis) -> None:
    """Decades in one style per axis (:class:`_DecadeFormatter`: plain text, no mathtext, quicker).

    No minor ticks: matplotlib's eight per decade cost about a fifth of a curve figure's
    drawing time, and the labelled decades are what the reader uses."""
    axis.set_major_formatter(_DecadeFormatter())
    axis.set_minor_locator(ticker.NullLocator())


def _fmt(v: float, digits: int = 3) -> str:
    """``digits`` significant digits; scientific notation below 1e-3 and from 1e4."""
    if not np.isfinite(v):
        return "--"
    return f"{v:.{digits - 1}e}" if v != 0 and (abs(v) < 1e-3 or abs(v) >= 1e4) else f"{v:.{digits}g}"


def _pm(mean: float, half: float, pm: str = " $\\pm$ ") -> str:
    """The mean, then the half-width of its interval (two digits) where there is one."""
    return _fmt(mean) + (pm + _fmt(half, 2) if np.isfinite(half) else "")


#: fontTools, which subsets the TrueType fonts embedded in PDFs, logs every table it prunes at INFO
#: level; under Hydra's logging that floods the console.
logging.getLogger("fontTools").setLevel(logging.WARNING)


def _save(fig: Figure, stem: Path, formats: Sequence[str]) -> list[Path]:
    paths = []
    engine = fig.get_layout_engine()
    if engine is not None and formats:
        # lay the figure out once for every format, then draw it once per format: a layout
        # engine left on would lay it out, and so draw it once more, in every savefig; at the
        # PNG's resolution, where hinted text is a little wider than at the default 100 dpi. None,
        # not "none": "none" leaves a placeholder engine, and savefig draws a figure with any
        # engine once before drawing it to save it
        fig.set_dpi(DPI)
        engine.execute(fig)
        with mpl.rc_context(_NO_ENGINE):  # (where a matplotlibrc asks for an engine, None would mean it again)
            fig.set_layout_engine(None)
    from arena.results import atomic_write  # the tables' writer: a temp file with the umask's permissions, renamed

    for ext in formats:
        path = stem.with_name(f"{stem.name}.{ext}")
        # no creation date in PDFs and SVGs: the same tables give the same bytes, in any process
        meta = {"CreationDate": None} if ext == "pdf" else {"Date": None} if ext == "svg" else None
        # PNG: zlib level 3, not Pillow's 6: on a default report's 26 PNGs a third less time compressing, the
        # files 3,046 KiB against 3,054 in all, none more than 5% larger (a heatmap of few cells can be 10%
        # larger); the pixels are the same, PNG being lossless
        extra = {"pil_kwargs": {"compress_level": _PNG_LEVEL}} if ext == "png" else {}

        def write(tmp, ext=ext, meta=meta, extra=extra):
            with mpl.rc_context(_SAVE_RC):
                fig.savefig(tmp, format=ext, dpi=DPI, metadata=meta, **extra)

        atomic_write(path, write)
        paths.append(path)
    return paths
