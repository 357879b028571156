"""The job of ``arena-redteam`` (its entry point is :func:`arena.cli.redteam_main`).

``arena-redteam forecaster=running_mean metric=smce_over_T T=1000`` composes ``conf/redteam.yaml``
with the arena's config groups (game, forecaster); :func:`run_job` runs
:func:`arena.redteam.search.search`, stores each attack found under
``<results_root>/redteam/<game>/attacks/`` and prints one line per attack; after the run (or the
whole sweep) :class:`ReportCallback` writes the table and the figures.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf


class RedTeamError(ValueError):
    """A bad config value (printed as one line; exit status 2)."""


def _build(cfg: DictConfig):
    from hydra.utils import instantiate

    from arena.games import get_game
    from arena.registry import load_plugins

    load_plugins()
    params = OmegaConf.to_container(cfg.game, resolve=True)
    game = get_game(str(params.pop("name")), **params)
    try:
        forecaster = instantiate(cfg.forecaster, _convert_="all")
    except Exception as exc:  # noqa: BLE001 (Hydra wraps the constructor's error: show the constructor's message)
        while exc.__cause__ is not None:
            exc = exc.__cause__
        raise RedTeamError(f"forecaster: {exc}") from None
    fparams = {k: v for k, v in OmegaConf.to_container(cfg.forecaster, resolve=True).items() if k != "_target_"}
    return game, forecaster, fparams


def _settings(attack: dict) -> list:
    """What makes one search differ from another with the same forecaster, metric, T and seed."""
    return [attack.get(k) for k in ("game_params", "forecaster_params", "L", "panel")]


def run(cfg: DictConfig) -> list[dict]:
    """Search, store and print the attacks of one composed config."""
    from arena.redteam.policy import save_attack
    from arena.redteam.search import search

    game, forecaster, fparams = _build(cfg)
    attacks = search(
        game,
        forecaster,
        str(cfg.metric),
        cfg.T,
        int(cfg.seed),
        cfg.budget,
        str(cfg.searcher),
        forecaster_params=fparams,
        L=float(cfg.L),
        panel=OmegaConf.to_container(cfg.panel, resolve=True),
        depth=cfg.depth,
        max_cpu=cfg.max_cpu,
    )
    from arena.errors import printable
    from arena.results import inside, safe_name

    folder = inside(cfg.out, Path(cfg.out) / "attacks")  # an attacks/ link does not lead elsewhere
    folder.mkdir(parents=True, exist_ok=True)
    label = str(cfg.forecaster_label)
    # the other settings by digest: the same search overwrites its file, another one gets its own
    settings = json.dumps([_settings(attacks[0]), cfg.budget, cfg.depth, cfg.max_cpu], sort_keys=True, default=str)
    digest = hashlib.sha256(settings.encode()).hexdigest()[:8]
    for a in attacks:
        a["forecaster_label"] = label
        name = f"{safe_name(label)}__{cfg.metric}__T{cfg.T}__s{cfg.seed}__{a['searcher']}__{digest}.json"
        path = save_attack(a, inside(folder, folder / name))
        cert = a["certificate"]
        bound = f"; certified {cert['name']} bound {cert['bound']:.6g}" if cert else "; no certificate bounds it"
        print(
            f"[arena-redteam] {printable(label)} {cfg.metric} T={cfg.T} seed={cfg.seed} {a['searcher']}: "
            f"{a['value']:.6g}{bound} ({a['cpu_seconds']:.0f} CPU s) -> {path}"
        )
    return attacks


def run_job(cfg: DictConfig) -> None:
    """One Hydra job: :func:`run`, a bad value printed as one line (exit status 2)."""
    from arena.errors import printable

    try:
        run(cfg)
    except (RedTeamError, ValueError, ImportError) as exc:
        print(f"arena-redteam: error: {printable(exc)}", file=sys.stderr)
        raise SystemExit(2) from None


class ReportCallback(Callback):
    """Writes the red team's tables and figures once the run, or the whole sweep, is over."""

    def _report(self, config: DictConfig) -> None:
        from arena.redteam.report import report

        out = report(config.out, cross=bool(config.cross_attack), seeds=(int(config.seed),))
        if out:
            print(f"[arena-redteam] table and figures: {Path(config.out)}")

    def on_run_end(self, config: DictConfig, **kwargs) -> None:
        self._report(config)

    def on_multirun_end(self, config: DictConfig, **kwargs) -> None:
        self._report(config)
