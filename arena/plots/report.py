"""The report of a results directory: every figure of every game, a LaTeX table per game and
``summary.md``.

:func:`report` plans one job per figure (the figure's name, its data, where to save it), then
draws them in this process and in worker processes forked from it with the jobs (:func:`_run_jobs`,
a standard process pool): a job names its figure, and each figure is the same whichever process
draws it.
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import pickle
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, BrokenExecutor, Future, wait
from contextlib import contextmanager
from pathlib import Path

import matplotlib as mpl
import numpy as np
import pandas as pd

# not ``from arena.plots import ...``: that is the package's __init__, which imports this module
import arena.plots.binary as binary
import arena.plots.decision as decision
import arena.plots.experts as experts
import arena.plots.quantile as quantile
from arena.aggregate import single_matchup
from arena.plots.common import (
    _CURVE_COLUMNS,
    _certificate_ratios,
    _clean,
    _of_game,
    _only,
    certificate_margins,
    leaderboard_heatmap,
)
from arena.plots.style import _forget_panels, _safe, _save, forecaster_styles
from arena.plots.tables import _headline, latex_table, markdown_body, markdown_page
from arena.results import inside, write_text_atomic
from arena.supervise import children, end_children_since, raise_if_interrupted

#: Every figure :func:`report` draws, by name.
FIGURES = {
    **binary.FIGURES,
    **quantile.FIGURES,
    **experts.FIGURES,
    **decision.FIGURES,
    "leaderboard": lambda summary, metric: leaderboard_heatmap(summary, metric),
    "certificates": lambda summary, styles: certificate_margins(summary, styles=styles),
}
#: rcParams that never travel to a worker process.
_LOCAL_RC = ("backend", "backend_fallback", "interactive")


#: The job of the top pair's comparison (:func:`_top_comparisons`), and its entry in the figures' manifest.
COMPARE = "compare_top"


def _draw_job(job: tuple) -> list[Path]:
    """Draw one figure and save it in every format: ``(figure, args, stem, formats, rc[, copies])``;
    ``copies``: more ``(stem, formats)`` to save the same figure as (e.g. a paper's PDF of a
    figure of the report). The :data:`COMPARE` job returns what :func:`_top_comparisons` does."""
    kind, args, stem, formats, rc, *copies = job
    with mpl.rc_context(rc):  # the rcParams of the process that made the job
        if kind == COMPARE:  # not one figure: the top pair's comparison, its table and figures
            out = _top_comparisons(*args, formats)
            raise_if_interrupted()  # a Ctrl-C that Numba's callbacks dropped while it replayed
            return out
        fig = FIGURES[kind](*args)
        return [
            *_save(fig, stem, formats),
            *(p for st, fm in (copies[0] if copies else ()) for p in _save(fig, st, fm)),
        ]


def _work(i: int) -> list[Path]:
    """What a worker process of the pool runs: :func:`_draw_job` of job ``i`` of the jobs it was forked with
    (forked inside :func:`_frozen`: its objects are out of the collector's scans already)."""
    return _draw_job(_JOBS[i])


@contextmanager
def _frozen():
    """The objects alive now (modules, tables) left out of the garbage collector's scans while
    figures are drawn: a figure makes some ten thousand objects, and each full collection it
    triggers would scan them all again (a tenth of the drawing time); afterwards, as they were. No
    collection first: the garbage among them (little) waits until then, and the report does not wait
    for a full collection (0.045 s) before its workers start."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


_AGGREGATES = ("summary", "curves", "reliability")


def _read_tables(out_dir: Path) -> dict[str, pd.DataFrame]:
    """The aggregated Parquet files of ``out_dir`` when they are up to date
    (:func:`arena.aggregate.current_tables`: made from the stored matchups of the directory's plan by
    this code, unchanged since), else :func:`arena.results.collect` of those matchups (all of them
    when the directory has no plan). Reading three files instead of one per matchup saves seconds
    when :func:`arena.aggregate.finish` has just aggregated the directory."""
    from arena.aggregate import current_tables
    from arena.results import collect, planned

    only = planned(out_dir)
    paths = current_tables(out_dir, only)
    if paths is not None and "summary" in paths:
        try:
            return {name: pd.read_parquet(paths[name]) if name in paths else pd.DataFrame() for name in _AGGREGATES}
        except (OSError, ValueError):  # unreadable after all: aggregate from the matchups
            pass
    return collect(out_dir, only)


#: A worker process is worth starting only for this many figures or more (forking one takes
#: milliseconds; each figure it draws is then sent back to this process as its paths).
_FIGURES_PER_WORKER = 2


def _processes(n_jobs: int) -> int:
    """How many processes draw, this one included: ``ARENA_PLOT_JOBS`` if set (1 = this one
    only), else one per CPU this process may use, but never fewer than
    ``_FIGURES_PER_WORKER`` figures per process."""
    env = os.environ.get("ARENA_PLOT_JOBS", "").strip()
    try:
        n = int(env) if env else 0
    except ValueError:
        n = 0
    if n <= 0:
        from arena.supervise import cores

        n = min(cores(), n_jobs // _FIGURES_PER_WORKER)
    return max(1, min(n, n_jobs))


#: In a worker of the pool: the jobs of the report that forked it (:func:`_fork_pool`).
_JOBS: list[tuple] = []


def _fork_pool(workers: int, jobs: list[tuple]):
    """A pool of ``workers`` processes forked from this one now, holding ``jobs`` (a job then travels to a
    worker as its index, and only its files' paths come back), from this thread, before any other thread of
    the report starts (forking beside a running thread is unsafe); None where ``os.fork`` is missing or no
    worker starts, or where another thread of this process runs (a launcher's: joblib's, Ray's)."""
    global _JOBS
    if not hasattr(os, "fork") or threading.active_count() > 1:
        return None
    from arena.supervise import forked_pool

    _JOBS = jobs
    try:
        return forked_pool(workers)
    except Exception:  # noqa: BLE001  (no worker here: this process draws everything)
        return None
    finally:
        _JOBS = []  # this process's copy: the workers keep theirs


def _run_jobs(jobs: list[tuple], on_done=None, meanwhile=None, then: Mapping | None = None) -> list[list[Path]]:
    """Draw every job; the results come in the jobs' order, whichever process drew them.

    This process draws jobs from the end of the list at once; worker processes forked from it (a
    standard process pool, :func:`_fork_pool`: they start with matplotlib, the tables and the jobs
    already loaded) take jobs from the front, one each at a time; the two meet in the middle. A
    worker that cannot start or that dies, or a figure whose paths do not pickle, leaves its job to this
    process; an error in a figure is raised here, whoever drew it. Where ``os.fork`` is missing
    (Windows), this process draws every job. ``on_done(job)``, when given, is called as each job is
    drawn (from this thread or the pool's), e.g. to print progress. ``meanwhile()``, when given, is
    called by this process first (while the workers draw), e.g. to compute a table the figures do
    not need. ``then``: ``{i: fn}``, ``fn(result of job i)`` called by this process once job i is
    drawn (by any process), between two of its own jobs or at the end."""
    on_done = on_done or (lambda job: None)
    results: list = [None] * len(jobs)
    hooks = dict(then or {})

    def first() -> None:  # meanwhile(), then a Ctrl-C that a C library's callback dropped in it (Numba's)
        if meanwhile is not None:
            meanwhile()
            raise_if_interrupted()

    def ready() -> None:  # the hooks of the jobs drawn so far (a worker's result is set by the feeder thread)
        for i in [i for i in hooks if results[i] is not None]:
            hooks.pop(i)(results[i])

    workers = _processes(len(jobs)) - 1
    others = children()
    pool = _fork_pool(workers, jobs) if workers >= 1 else None
    if pool is None:
        first()
        for i, job in enumerate(jobs):
            results[i] = _draw_job(job)
            on_done(job)
            ready()
        return results
    lock = threading.Lock()
    span = [0, len(jobs)]  # jobs span[0]:span[1] are not taken yet
    left: list[int] = []  # jobs the pool took but could not draw
    errors: list[BaseException] = []

    def take(front: bool) -> int | None:
        with lock:
            if errors or span[0] >= span[1]:
                return None
            if front:
                span[0] += 1
                return span[0] - 1
            span[1] -= 1
            return span[1]

    def feed() -> None:
        """Keep each worker busy with one job from the front (a thread of this process)."""
        pending: dict[Future, int] = {}
        try:
            while True:
                while len(pending) < workers and (i := take(front=True)) is not None:
                    try:
                        pending[pool.submit(_work, i)] = i  # a worker has the jobs: forked with them
                    except Exception:  # a broken pool: the job is this process's, like those pending
                        with lock:
                            left.append(i)
                        raise
                if not pending:
                    return
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    i = pending.pop(future)
                    try:
                        results[i] = future.result()
                        on_done(jobs[i])
                    except (BrokenExecutor, pickle.PicklingError):
                        with lock:
                            left.append(i)
                    except Exception as exc:  # noqa: BLE001  (a figure's error: raised by report)
                        with lock:
                            errors.append(exc)
        except Exception:  # noqa: BLE001  (no pool, or a broken one: this process draws what it holds)
            with lock:
                left.extend(pending.values())

    feeder = threading.Thread(target=feed, name="arena-plots-pool", daemon=True)
    feeder.start()
    failed = True
    try:
        first()
        while (i := take(front=False)) is not None:
            ready()
            results[i] = _draw_job(jobs[i])
            on_done(jobs[i])
        failed = False
    finally:
        with lock:  # whatever happened here, the pool takes no more jobs
            span[0] = span[1]
        if failed:  # Ctrl-C or an error: the workers end now (the comparison's replays can take a minute)
            end_children_since(others)
        feeder.join()
        pool.shutdown(wait=True, cancel_futures=True)
    if errors:
        raise errors[0]
    for i in sorted(left):
        results[i] = _draw_job(jobs[i])
        on_done(jobs[i])
    ready()
    return results


#: Formats a figure can be saved in (``arena-report --format``).
FORMATS = ("pdf", "png", "svg")
#: Files of ``figures/`` (and ``paper/``) that a report owns: any of them it did not write this time is stale.
_OWNED = {*(f".{ext}" for ext in FORMATS), ".tex"}
#: The manifest of the drawn figures, in ``figures/``: per figure, the digest of its inputs.
MANIFEST = ".manifest.json"


def _code_version() -> str:
    """A digest of the plotting code (every module of this package): a change to it redraws every figure."""
    h = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        h.update(path.name.encode() + path.read_bytes())
    return h.hexdigest()[:16]


def _digest(obj, h) -> None:
    """Feed ``obj`` (a job's data: tables, dicts, sequences, scalars) into the hash ``h``."""
    if isinstance(obj, pd.DataFrame):
        h.update(repr((list(map(str, obj.columns)), list(map(str, obj.dtypes)), obj.shape)).encode())
        try:
            h.update(pd.util.hash_pandas_object(obj, index=False).to_numpy().tobytes())
        except TypeError:  # a column of unhashable values: its pickle instead
            h.update(pickle.dumps(obj, protocol=5))
    elif isinstance(obj, Mapping):
        h.update(b"{")
        for k in sorted(obj, key=str):
            h.update(repr(k).encode())
            _digest(obj[k], h)
        h.update(b"}")
    elif isinstance(obj, (list, tuple)):
        h.update(b"[")
        for v in obj:
            _digest(v, h)
        h.update(b"]")
    else:
        h.update(repr(obj).encode())


def _data_key(job: tuple) -> str:
    """The digest of what one figure shows: its name and data."""
    h = hashlib.sha256()
    _digest((job[0], job[1]), h)
    return h.hexdigest()


def _job_key(job: tuple, base: str, data: str | None = None) -> str:
    """The digest of one figure's inputs: its name and data (``data``, its :func:`_data_key`), its
    formats, and ``base`` (code and rcParams)."""
    h = hashlib.sha256(f"{base}|{data or _data_key(job)}|{tuple(job[3])!r}".encode())
    return h.hexdigest()[:24]


def _read_manifest(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


class _Progress:
    """``[arena] figures: k/n`` lines while a report draws, at most one a second (and the last)."""

    def __init__(self, n: int, quiet: bool):
        self.n, self.k, self.quiet, self.last = n, 0, quiet, 0.0
        self.t0 = time.perf_counter()
        self.lock = threading.Lock()

    def __call__(self, job) -> None:
        with self.lock:
            self.k += 1
            now = time.perf_counter()
            if not self.quiet and (now - self.last >= 1.0 or self.k == self.n):
                self.last = now
                print(
                    f"[arena] figures: {self.k}/{self.n} drawn ({now - self.t0:.1f} s) | {Path(job[2]).name}",
                    flush=True,
                )


def report(
    out_dir: Path | str,
    tables: dict[str, pd.DataFrame] | None = None,
    leaderboard_metrics: Sequence[str] = ("smce_over_T", "brier", "bias"),
    formats: Sequence[str] = ("png",),
    paper: bool = False,
    quiet: bool = False,
    html: bool = True,
    paper_formats: Sequence[str] = (),
) -> list[Path]:
    """Draw every figure of a results directory into ``out_dir/figures/`` (and a paper's few into
    ``out_dir/paper/``), write a LaTeX table per game, ``out_dir/summary.md`` and
    ``out_dir/index.html``, and return the paths.

    Per game present (each in ``figures/<game>/`` when the directory holds several games):

    - binary forecasts (any game whose curves have them): smCE/T, regret to linear and bias as
      small multiples over the natures, one figure per group of forecasters
      (``smce_vs_T__<group>``, ``regret_linear__<group>``, ``bias__<group>``:
      :func:`arena.plots.binary.jobs`; per nature, ``<figure>__<nature>``, with one nature),
      ``reliability__<nature>`` (one panel per forecaster); ``leaderboard__<metric>`` per metric
      of ``leaderboard_metrics``;
    - quantile game: ``rolling_coverage__<nature>``, ``coverage_error__<nature>``,
      ``group_coverage__<nature>`` (group natures), ``coverage_vs_L`` (Lipschitz-CDF natures) and
      leaderboards of :data:`QUANTILE_METRICS`;
    - experts game: ``regret_experts__<nature>`` and ``expert_weights__<nature>``; decision game:
      ``regret_decision__<nature>``; leaderboards of :data:`EXPERTS_METRICS` / :data:`DECISION_METRICS`;
    - ``certificates``: every certificate's value over its bound (:func:`certificate_margins`);
    - ``table.tex``: :func:`latex_table` of the game's :data:`HEADLINE_METRICS`.

    A leaderboard needs two forecasters or two natures: a single matchup gets smCE/T (and the
    curves its forecaster certifies a bound on), reliability and certificates only. Each figure
    comes in every one of ``formats`` (PDF fonts embedded as TrueType); a figure without data is
    skipped. Unless a single matchup, the figures a paper needs (:func:`paper_jobs`) also go to
    ``out_dir/paper/`` in ``paper_formats`` (none: no ``paper/``), with each game's LaTeX table; a
    figure in both folders is drawn once. Then the anytime-valid comparison of each game's two best forecasters
    (:func:`arena.compare.top_pairs`: ``compare_top.parquet``/``.csv`` and a figure ``compare__<A>__<B>__T<T>``,
    when their per-round records can be had), ``summary.md`` (:func:`markdown_summary`) and ``index.html``
    (:func:`arena.plots.html.index_page`): the comparison (it replays matchups) is a job of the pool, the first
    a worker takes; the LaTeX tables are made by this process while the workers draw, and so is the text of
    the two pages once the comparison is had (they name the figures' files, fixed before any is drawn),
    written once every figure is. The paths come in that order, whatever the number of processes.

    Only figures whose inputs changed are drawn: ``figures/.manifest.json`` (and ``paper/``'s)
    keeps, per figure, a digest of its data, formats and the plotting code; a figure whose digest
    is unchanged and whose files are there is kept as it is; so is the comparison (its table and
    figures), under a digest of the summary, the formats and the code. Files of ``figures/`` and ``paper/``
    (figures and tables) that this report did not produce are stale, and removed. Progress is printed as the figures are drawn
    (unless ``quiet``).

    With ``paper``, only the handful of figures a paper needs go to ``out_dir/paper/``, named for
    it (:func:`paper_jobs`), in ``formats``, with each game's LaTeX table; nothing else is written.

    The figures are drawn by this process and, where there is more than one CPU, by worker
    processes forked from it (one per CPU, at least two figures each; set ``ARENA_PLOT_JOBS`` to choose the
    number of processes, 1 for none; none where ``os.fork`` is missing); each figure is the same whichever
    process draws it.

    Parameters
    ----------
    out_dir : the results directory; its tables are read with :func:`arena.results.collect`
        (or, the same tables quicker, from the ``summary``/``curves``/``reliability`` Parquet
        files that :func:`arena.aggregate.write_tables` left there, when no matchup changed since)
        unless ``tables`` (keys ``summary``, ``curves``, ``reliability``) is given.
    leaderboard_metrics : the leaderboards of binary forecasts, and the headline metrics of a
        game without its own entry in :data:`HEADLINE_METRICS`.
    formats : any of :data:`FORMATS`; by default PNG (what ``index.html`` shows).
    paper_formats : the formats of ``paper/`` beside the full report (none by default: no ``paper/``;
        ``arena-report DIR --paper`` writes it).
    """
    out_dir = Path(out_dir)
    bad = [f for f in (*formats, *paper_formats) if f not in FORMATS]
    if bad or not formats:
        raise ValueError(f"figure format {', '.join(map(repr, bad)) or 'none'}: choose from {', '.join(FORMATS)}")
    if tables is None:
        tables = _read_tables(out_dir)
    summary, curves, rel = (tables.get(k) for k in ("summary", "curves", "reliability"))
    summary = summary if summary is not None else pd.DataFrame()
    curves = _clean(curves, need=_CURVE_COLUMNS)
    rel = rel if rel is not None else pd.DataFrame()
    rc = {k: v for k, v in mpl.rcParams.items() if k not in _LOCAL_RC}  # the workers draw with ours
    games = sorted(summary["game"].dropna().astype(str).unique()) if "game" in summary else []
    parts = [(g, *(_of_game(df, g) for df in (summary, curves, rel))) for g in games] or [(None, summary, curves, rel)]
    # the full report (PNG by default: what index.html shows) and the paper's few figures (PDF), or
    # only the paper's; a single matchup gets no paper folder (``--paper`` writes it)
    single = single_matchup(summary)
    roots = (
        {"paper": formats}
        if paper
        else {"figures": formats, **({} if single or not paper_formats else {"paper": paper_formats})}
    )
    fig_dir = {}
    for where in roots:
        # a game name read from a table never leads out of the results directory
        fig_dir[where] = {
            game: inside(out_dir, out_dir / where / (game if len(parts) > 1 and where == "figures" else ""))
            for game, *_ in parts
        }
    families = _families(summary)
    jobs: dict[str, list[tuple]] = {where: [] for where in roots}
    for game, s, c, r in parts:
        styles = _game_styles(families, s, c, r)  # one color and marker per forecaster in all the game's figures
        for where, fmts in roots.items():
            fig_dir[where][game].mkdir(parents=True, exist_ok=True)
            game_jobs = _jobs_of_game(
                s, c, r, fig_dir[where][game], fmts, rc, styles, leaderboard_metrics, facet=where == "figures"
            )
            jobs[where] += paper_jobs(game, s, game_jobs) if where == "paper" else game_jobs
    written = {where: _files(js) for where, js in jobs.items()}  # every job's files, drawn now or kept
    # the top pair's comparison: a job of the pool (it replays matchups), kept like a figure when nothing changed
    compare = (
        (COMPARE, (out_dir, summary, fig_dir["figures"]), out_dir / COMPARE, formats, rc)
        if "figures" in roots and not summary.empty
        else None
    )
    tables: dict[str, list[Path]] = {where: [] for where in roots}
    done: list = []

    heads: dict = {}  # the pages' text before the comparison (meanwhile), ended by pages()

    def meanwhile() -> None:
        """What the figures and the comparison do not need, done by this process while the workers draw them and
        compare: each game's LaTeX table, and most of the text of ``summary.md`` and ``index.html`` (their
        tables: :func:`pages` ends them)."""
        for game, s, *_ in parts:
            metrics = _headline(game, s, leaderboard_metrics)
            if not metrics:
                continue
            for where in roots:
                path = fig_dir[where][game] / (f"{game or 'results'}_table.tex" if where == "paper" else "table.tex")
                n = s["seed"].nunique() if "seed" in s else 1
                write_text_atomic(
                    f"% {game or 'all games'}: mean over natures of the mean over {n} seed(s), "
                    "+- the half-width of its 95% interval (none: one seed, or one value on every "
                    "seed); best in bold (arena.plots.latex_table)\n" + latex_table(s, metrics) + "\n",
                    path,
                )
                tables[where].append(path)
        if not paper:
            if not summary.empty:
                heads["md"] = markdown_body(summary, leaderboard_metrics)
            if html:
                from arena.plots.html import index_head

                heads["html"] = index_head(out_dir, summary)

    def pages(comparisons: pd.DataFrame | None, compare_files: list[Path]) -> None:
        """The text of ``summary.md`` and ``index.html`` ended, by this process once the comparison is had (while
        the workers may still draw: the pages name the figures' files, which the jobs fix before any is drawn;
        they are written once every figure is)."""
        out = [*written.get("paper", []), *tables.get("paper", [])]
        texts: list[tuple[str, Path]] = []
        if not paper:
            figures = [*written["figures"], *tables["figures"], *compare_files]
            if not summary.empty:
                path = out_dir / "summary.md"
                page = [out_dir / "index.html"] if html else []  # written below; the summary links it too
                texts.append((markdown_page(heads["md"], [*figures, *out, *page], out_dir, comparisons), path))
                figures.append(path)
            out = [*figures, *out]
            if html:
                from arena.plots.html import index_tail

                shown = [(j[2], j[0], j[1]) for j in jobs["figures"]]
                shown += [
                    (stem, "compare", ())
                    for stem in dict.fromkeys(f.with_suffix("") for f in compare_files if f.suffix[1:] in FORMATS)
                ]
                texts.append((index_tail(out_dir, heads["html"], shown, out), out_dir / "index.html"))
                out.append(out_dir / "index.html")
        done.append((compare_files, texts, out))

    _draw(out_dir, jobs, quiet, meanwhile, compare, pages)
    compare_files, texts, out = done[0]
    for text, path in texts:  # every figure is drawn: the pages that show them
        write_text_atomic(text, path)
    for where in roots:
        _remove_stale(out_dir / where, written[where] + tables[where] + (compare_files if where == "figures" else []))
    return out


def _jobs_of_game(
    s: pd.DataFrame,
    c: pd.DataFrame,
    r: pd.DataFrame,
    fig_dir: Path,
    formats: Sequence[str],
    rc: dict,
    styles: dict,
    leaderboard_metrics: Sequence[str],
    facet: bool,
) -> list[tuple]:
    """Every figure job of one game's tables: its binary forecasts' (:func:`arena.plots.binary.jobs`),
    each game's own, and the certificates; no leaderboard for a single matchup (a heatmap of one
    cell says nothing a table does not)."""
    game_jobs = binary.jobs(s, c, r, fig_dir, formats, rc, styles, leaderboard_metrics, facet=facet)
    for module in (quantile, experts, decision):  # each game's own figures, if the game is there
        game_jobs += module.jobs(s, c, fig_dir, formats, rc, styles)
    if not _certificate_ratios(s).empty:
        game_jobs.append(("certificates", (_only(s, prefix="cert."), styles), fig_dir / "certificates", formats, rc))
    if single_matchup(s):
        game_jobs = [j for j in game_jobs if j[0] != "leaderboard"]
    return _distinct_leaderboards(game_jobs)


def _distinct_leaderboards(jobs: list[tuple]) -> list[tuple]:
    """The jobs without a leaderboard whose metric takes the values of an earlier leaderboard's on every
    matchup (the experts game's ``loss`` under the squared loss is its ``brier``): two identical heatmaps
    under two names say nothing one does not; the earlier one is kept."""
    seen: list[pd.Series] = []
    out = []
    for job in jobs:
        if job[0] == "leaderboard":
            table, metric = job[1]
            values = pd.to_numeric(table[metric], errors="coerce")  # with its index: the same matchups
            if any(
                v.index.equals(values.index)
                and np.array_equal(v.to_numpy(float), values.to_numpy(float), equal_nan=True)
                for v in seen
            ):
                continue
            seen.append(values)
        out.append(job)
    return out


def _top_comparisons(
    out_dir: Path, summary: pd.DataFrame, fig_dir: dict, formats: Sequence[str]
) -> tuple[pd.DataFrame, list[Path]]:
    """The anytime-valid comparison of each game's top pair (:func:`arena.compare.top_pairs`), and the files
    written for it: its table ``compare_top.parquet``/``.csv`` and its figure ``compare__<A>__<B>__T<T>`` per
    game and T (none when nothing could be compared: ``final`` gives the reason, and the next report asks
    again, which is quick then)."""
    from arena.compare import top_pairs
    from arena.plots.compare import comparison_figure
    from arena.results import write_table

    final, curves = top_pairs(out_dir, summary)
    if curves.empty:  # nothing compared (no per-round records): summary.md gives the reason
        return final, []
    written = [write_table(final, out_dir, COMPARE)]
    for (game, T), c in curves.groupby(["game", "T"], sort=True):
        folder = fig_dir.get(game, next(iter(fig_dir.values())))
        stem = folder / f"compare__{_safe(c['forecaster_a'].iloc[0])}__{_safe(c['forecaster_b'].iloc[0])}__T{T}"
        rows = final.loc[(final["game"] == game) & (final["T"] == T)]
        written += _save(comparison_figure(c, final=rows), stem, formats)
    return final, written


def _draw(
    out_dir: Path, jobs: Mapping[str, list[tuple]], quiet: bool, meanwhile=None, compare: tuple | None = None, then=None
) -> None:
    """Draw the jobs (per folder of ``out_dir``: ``figures``, ``paper``) whose inputs changed since
    the folder's manifest was written, all in one pool, each figure once: a paper's figure that
    the report draws too is saved in both places from one drawing; ``meanwhile()`` is called by this
    process while the pool draws (:func:`_run_jobs`). ``compare``: the :data:`COMPARE` job, done by the
    pool like a figure unless ``figures``' manifest holds it with the same inputs (and its files are
    there); ``then(final, files)`` is called with its result by this process as soon as it is had."""
    todo: dict[str, list[tuple]] = {}  # what a figure shows -> the jobs to draw that show it
    manifests, old_compare = {}, None
    for where, js in jobs.items():
        root = out_dir / where
        old = _read_manifest(root / MANIFEST)
        base = _base(js[0][4]) if js else ""
        data = [_data_key(job) for job in js]
        keys = [_job_key(job, base, d) for job, d in zip(js, data)]
        fs = [_files([job]) for job in js]
        rel = [Path(job[2]).relative_to(root).as_posix() for job in js]
        for i, job in enumerate(js):
            if old.get(rel[i]) != keys[i] or not all(f.exists() for f in fs[i]):
                todo.setdefault(data[i], []).append(job)
        if js or old:
            manifests[root / MANIFEST] = dict(zip(rel, keys))
        if where == "figures":
            old_compare = old.get(COMPARE)
    merged = [
        (*same[0][:5], tuple((j[2], j[3]) for j in same[1:])) if len(same) > 1 else same[0] for same in todo.values()
    ]
    hooks, had = {}, (None, [])  # no comparison: then(None, []) at once
    if compare is not None:
        from arena.results import code_version  # the replays' code: a change to it compares again

        key = _job_key(compare, f"{_base(compare[4])}|{code_version()}")
        had = _stored_comparison(out_dir, old_compare, key)
        if had is None:
            merged.insert(0, compare)  # first to a worker: the longest job, from the start
            if then is not None:
                hooks[0] = lambda result: then(*result)
    if compare is None or had is not None:  # had now: then() while the pool draws, after meanwhile()
        before = meanwhile

        def meanwhile() -> None:
            if before is not None:
                before()
            if then is not None:
                then(*had)

    if not quiet:
        n = sum(map(len, jobs.values()))
        drawn = sum(map(len, todo.values()))
        print(
            f"[arena] figures: {drawn} to draw, {n - drawn} up to date in "
            + ", ".join(str(out_dir / w) for w in jobs)
            + ("; and the top pair's comparison" if had is None else ""),
            flush=True,
        )
    try:
        with _frozen():
            results = _run_jobs(merged, on_done=_Progress(len(merged), quiet), meanwhile=meanwhile, then=hooks)
    finally:
        _forget_panels()  # the figures this process kept to draw again
    if compare is not None and had is None and _clean_comparison(*results[0]):  # else the next report compares again
        manifests.setdefault(out_dir / "figures" / MANIFEST, {})[COMPARE] = {
            "key": key,
            "table": _sha256(out_dir / f"{COMPARE}.parquet"),
            "files": [Path(f).relative_to(out_dir).as_posix() for f in results[0][1]],
        }
    for path, entries in manifests.items():
        write_text_atomic(json.dumps(entries, indent=0, sort_keys=True), path)


def _base(rc: Mapping) -> str:
    """The part of every figure's digest that the figures share: the plotting code and the rcParams."""
    return _code_version() + hashlib.sha256(repr(sorted((k, repr(v)) for k, v in rc.items())).encode()).hexdigest()[:16]


#: The columns of a comparison's table that the pages read (:func:`arena.compare.top_pairs`).
_COMPARE_COLUMNS = ("game", "T", "metric", "forecaster_a", "forecaster_b", "nature", "verdict")


def _clean_comparison(final: pd.DataFrame, files: list[Path]) -> bool:
    """Whether a comparison is one to keep: every pair compared (a pair that could not be, for whatever reason,
    is asked again by the next report), its table and figures written."""
    return bool(files) and not final.empty and ("error" not in final or final["error"].isna().all())


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _stored_comparison(out_dir: Path, entry, key: str) -> tuple[pd.DataFrame, list[Path]] | None:
    """The comparison of the top pair that the figures' manifest ``entry`` (``{"key", "table", "files"}``, from a
    results directory: untrusted) records for inputs of digest ``key``, when its files are all there inside
    ``out_dir``, its table (``compare_top.parquet``, and its CSV) is the one it wrote (its SHA-256) and reads
    back with the columns the pages need; else None."""
    table = out_dir / f"{COMPARE}.parquet"
    if not (
        isinstance(entry, dict)
        and entry.get("key") == key
        and isinstance(entry.get("table"), str)
        and isinstance(entry.get("files"), list)
        and all(isinstance(f, str) for f in entry["files"])
    ):
        return None
    try:
        files = [inside(out_dir, out_dir / f) for f in entry["files"]]
        if (
            table not in files
            or not all(f.is_file() for f in [*files, table.with_suffix(".csv")])
            or _sha256(table) != entry["table"]
        ):
            return None
        final = pd.read_parquet(table)
    except Exception:  # noqa: BLE001  (outside the directory, unreadable, a file pyarrow refuses: compared again)
        return None
    return (final, files) if all(c in final for c in _COMPARE_COLUMNS) and _clean_comparison(final, files) else None


def _files(jobs: Sequence[tuple]) -> list[Path]:
    """The files of the jobs, in their order: each figure in each of its formats."""
    return [Path(job[2]).with_name(f"{Path(job[2]).name}.{ext}") for job in jobs for ext in job[3]]


def _remove_stale(root: Path, written: list[Path]) -> None:
    """Delete the figures and tables under ``root`` that this report did not write (an older
    configuration's, or a nature no longer played)."""
    keep = {Path(p).resolve() for p in written}
    for path in root.rglob("*"):
        if path.is_file() and path.suffix in _OWNED and path.resolve() not in keep:
            path.unlink(missing_ok=True)


#: The curve figure of each game that goes into a paper (``--paper``).
_PAPER_CURVES = ("smce_vs_T", "coverage_error_vs_T", "regret_experts", "regret_decision")


def paper_jobs(game: str | None, summary: pd.DataFrame, jobs: list[tuple]) -> list[tuple]:
    """The figures of one game a paper needs, renamed ``<game>_<figure>``: the game's curve figure
    (smCE/T, coverage error or regret against t) and reliability diagram on one nature (an adaptive
    one where there is one: the guarantees are for adversaries), the leaderboard of its first
    headline metric, and the certificates."""
    natures = summary.loc[summary["adaptive"].astype(bool), "nature"] if "adaptive" in summary else pd.Series()
    natures = (
        sorted(natures.astype(str).unique()) or sorted(summary["nature"].astype(str).unique())
        if "nature" in summary
        else []
    )
    nature = natures[0] if natures else None
    prefix = f"{game or 'results'}_"
    chosen = []
    for job in jobs:
        kind, args, stem = job[0], job[1], Path(job[2])
        name = stem.name
        if kind in (*_PAPER_CURVES, "reliability") and nature is not None and name.endswith(f"__{nature}"):
            name = f"{kind}_{nature}"
        elif kind == "leaderboard" and not any(j[0] == "leaderboard" for j in chosen):
            name = name.replace("__", "_")
        elif kind == "certificates":
            pass
        else:
            continue
        chosen.append((kind, args, stem.with_name(prefix + name), *job[3:]))
    return chosen


def _families(summary: pd.DataFrame) -> dict[str, str]:
    """Each forecaster's family (:attr:`arena.protocols.Forecaster.family`): its rows' ``forecaster_family``
    (stored with each matchup), else looked up from its plugin (the ``forecaster_plugin`` column: results
    stored before the family was), which imports the plugins (and Numba); a plugin that is not installed
    here counts as a baseline."""
    if summary is None or "forecaster" not in summary:
        return {}
    names = summary["forecaster"].astype(str)
    stored = summary["forecaster_family"] if "forecaster_family" in summary else pd.Series(None, index=summary.index)
    out = {n: str(f) for n, f in zip(names, stored) if isinstance(f, str) and f}
    plugin = summary["forecaster_plugin"] if "forecaster_plugin" in summary else summary["forecaster"]
    pairs = {n: p for n, p in zip(names, plugin.astype(str)) if n not in out}
    if not pairs:
        return out
    try:
        from arena.registry import forecaster_class, load_plugins

        load_plugins()
    except Exception:  # noqa: BLE001  (no plugins here: every forecaster a baseline)
        return {**out, **dict.fromkeys(pairs, "baseline")}
    for name, plug in pairs.items():
        try:
            out[name] = str(getattr(forecaster_class(plug), "family", "baseline"))
        except Exception:  # noqa: BLE001  (a plugin of another installation)
            out[name] = "baseline"
    return out


def _game_styles(families: Mapping[str, str], *tables: pd.DataFrame) -> dict[str, dict[str, str]]:
    """One color and marker per forecaster of a game, from every table of the game: the same in
    all its figures; with its family (:func:`_families`), which splits crowded figures into panels."""
    names = set()
    for df in tables:
        if df is not None and "forecaster" in df:
            names |= set(df["forecaster"].dropna().astype(str))
    return {n: {**st, "family": families.get(n, "baseline")} for n, st in forecaster_styles(names).items()}
