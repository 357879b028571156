"""The arena's local launcher: a Hydra sweep's jobs in a pool of worker processes forked on this machine.

``hydra/launcher=local`` (the tournaments' default; conf/hydra/launcher/local.yaml) runs
:func:`launch`. Hydra's joblib launcher starts its workers with loky, which spawns fresh
interpreters: each imports Hydra, the arena, pandas, SciPy and Numba again before it plays
anything, and the first matchup of a tournament waits over a second for it. Here the workers are
forked from the ``arena`` process once it has composed the sweep, so they start at once, inherit
the composed configs and the Hydra state as they are (nothing is pickled on the way to a worker but
a job's index and overrides), and return each job's status to the ``arena`` process as joblib's
workers do.

``hydra.launcher.n_jobs`` sets the number of workers (-1, the default: one per core this
process may use; 1: the jobs one after another in the ``arena`` process). A worker ignores
Ctrl-C: the ``arena`` process reports it and ends the workers (each also ends on its own once the
``arena`` process is gone, :func:`arena.supervise.exit_with_parent`). Where ``os.fork`` is missing
(Windows), the jobs run one after another in the ``arena`` process, and the launcher says so:
``hydra/launcher=joblib`` runs them in parallel there.

The state lives here, not in the plugin module (``hydra_plugins.arena_searchpath.launcher``): Hydra's
plugin scan executes every module of ``hydra_plugins`` again, which would reset it.

References
----------
Hydra, "Launcher plugins" (hydra.cc/docs/advanced/plugins/overview) and its joblib launcher
(hydra_plugins.hydra_joblib_launcher), whose ``execute_job`` :func:`_execute` follows.
"""

from __future__ import annotations

import logging
import os
import pickle
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hydra.core.utils import JobReturn

log = logging.getLogger(__name__)

#: In a worker: (hydra_context, config, task_function, singleton_state) of the sweep (set by
#: :func:`_start_worker`; a forked worker receives it without pickling).
_SWEEP: tuple | None = None


def launch(
    config: Any,
    hydra_context: Any,
    task_function: Any,
    n_jobs: int,
    job_overrides: Sequence[Sequence[str]],
    initial_job_idx: int,
) -> list[JobReturn]:
    """Run the jobs of a sweep on ``n_jobs`` workers (see the module); their returns in order."""
    from hydra.core.singleton import Singleton
    from hydra.core.utils import configure_log, filter_overrides, setup_globals

    setup_globals()
    configure_log(config.hydra.hydra_logging, config.hydra.verbose)
    sweep_dir = Path(str(config.hydra.sweep.dir))
    sweep_dir.mkdir(parents=True, exist_ok=True)
    workers = min(workers_for(n_jobs), len(job_overrides))
    if workers > 1 and not hasattr(os, "fork"):
        log.warning(
            "the local launcher needs os.fork to run jobs in parallel: running them one after another "
            "(hydra/launcher=joblib runs them in parallel on this system)"
        )
        workers = 1
    log.info(f"Local launcher: {len(job_overrides)} jobs on {workers} worker process(es)")
    log.info(f"Launching jobs, sweep output dir : {sweep_dir}")
    for idx, overrides in enumerate(job_overrides):
        log.info(f"\t#{idx} : {' '.join(filter_overrides(overrides))}")
    sweep = (hydra_context, config, task_function, Singleton.get_state())
    jobs = [(initial_job_idx + i, list(o)) for i, o in enumerate(job_overrides)]
    if workers <= 1:
        _start_worker(sweep, worker=False)
        return [_execute(idx, overrides) for idx, overrides in jobs]
    return _in_pool(workers, sweep, jobs)


def workers_for(n_jobs: int) -> int:
    """``n_jobs`` worker processes; -1 (or 0): one per core this process may use; -k: all but k - 1."""
    from arena.supervise import cores

    if n_jobs > 0:
        return n_jobs
    return max(cores() + 1 + n_jobs, 1) if n_jobs < 0 else cores()


def _in_pool(workers: int, sweep: tuple, jobs: list[tuple[int, list[str]]]) -> list[JobReturn]:
    """Run ``jobs`` on ``workers`` processes forked from this one; their results in order."""
    from concurrent.futures import FIRST_EXCEPTION, wait
    from concurrent.futures.process import BrokenProcessPool

    from arena.supervise import children, end_children_since, forked_pool, raise_if_interrupted

    raise_if_interrupted()  # a Ctrl-C that came while Numba loaded (its callbacks drop it): before any worker starts
    others = children()  # children of this process not of the pool (a notebook's)
    pool = None
    try:
        pool = forked_pool(workers, _start_worker, (sweep,))
        futures = [pool.submit(_execute_in_worker, idx, overrides) for idx, overrides in jobs]
        # the first failed job ends the run at once (not after every job before it), as on one process
        done, _ = wait(futures, return_when=FIRST_EXCEPTION)
        for future in futures:
            if future in done and future.exception() is not None:
                raise future.exception()
        return [f.result() for f in futures]
    except BrokenProcessPool:
        from arena.jobs import stored_text

        out_dir = Path(str(sweep[1].hydra.sweep.dir))
        print(
            "arena: error: a worker process of the local launcher ended abruptly (killed, or out of memory); the "
            f"matchups stored are kept: run the same command to resume{stored_text(out_dir)}",
            file=sys.stderr,
            flush=True,
        )
        raise SystemExit(1) from None
    finally:
        # Ctrl-C or an error: end the workers now (waiting would let running jobs finish first): the children that
        # multiprocessing started since the pool was made (a shard's supervised child is forked by its worker)
        end_children_since(others)
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


def _start_worker(sweep: tuple, worker: bool = True) -> None:
    global _SWEEP
    _SWEEP = sweep
    if worker:
        from arena.supervise import leave_to_parent

        leave_to_parent()


def _execute(idx: int, overrides: list[str]) -> JobReturn:
    """One job of the sweep, as Hydra's joblib launcher runs it in a worker."""
    from hydra.core.hydra_config import HydraConfig
    from hydra.core.singleton import Singleton
    from hydra.core.utils import run_job, setup_globals
    from omegaconf import open_dict

    hydra_context, config, task_function, singleton_state = _SWEEP
    setup_globals()
    Singleton.set_state(singleton_state)
    sweep_config = hydra_context.config_loader.load_sweep_config(config, overrides)
    with open_dict(sweep_config):
        sweep_config.hydra.job.id = f"{sweep_config.hydra.job.name}_{idx}"
        sweep_config.hydra.job.num = idx
    HydraConfig.instance().set_config(sweep_config)
    return run_job(
        hydra_context=hydra_context,
        config=sweep_config,
        task_function=task_function,
        job_dir_key="hydra.sweep.dir",
        job_subdir_key="hydra.sweep.subdir",
    )


def _execute_in_worker(idx: int, overrides: list[str]) -> JobReturn:
    """:func:`_execute` in a worker. What goes back to the arena process is the job's status and return
    value (the sweeper reads only these; the configs hold classes of Hydra's structured configs that
    pickle refuses), an error that cannot be pickled as its text."""
    ret = _execute(idx, overrides)
    ret.cfg = ret.hydra_cfg = None
    try:
        pickle.loads(pickle.dumps(ret._return_value))  # some exceptions pickle but do not unpickle
    except Exception:  # noqa: BLE001
        ret._return_value = RuntimeError(f"{type(ret._return_value).__name__}: {ret._return_value}")
    return ret
