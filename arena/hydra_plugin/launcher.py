"""Hydra launcher plugin of the arena: ``hydra/launcher=local`` (see :mod:`arena.launcher`).

Installed as ``hydra_plugins.arena_searchpath.launcher``: Hydra instantiates launchers only from
the ``hydra_plugins`` package, and imports (and executes again) each of its modules in every Hydra
app, so this one holds no state and imports nothing but Hydra until it launches.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hydra.core.utils import JobReturn
from hydra.plugins.launcher import Launcher


class LocalLauncher(Launcher):
    """The jobs of a sweep on ``n_jobs`` worker processes forked on this machine (:mod:`arena.launcher`)."""

    def __init__(self, n_jobs: int = -1) -> None:
        self.n_jobs = int(n_jobs)
        self.config = self.task_function = self.hydra_context = None

    def setup(self, *, hydra_context: Any, task_function: Any, config: Any) -> None:
        self.config, self.task_function, self.hydra_context = config, task_function, hydra_context

    def launch(self, job_overrides: Sequence[Sequence[str]], initial_job_idx: int) -> Sequence[JobReturn]:
        from arena.launcher import launch

        return launch(self.config, self.hydra_context, self.task_function, self.n_jobs, job_overrides, initial_job_idx)
