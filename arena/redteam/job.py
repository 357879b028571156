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


def check_config(cfg: DictConfig) -> None:
    """Refuse a composed config's out-of-range search setting with one line (RedTeamError), before Hydra makes
    its run folder: :func:`arena.redteam.search.check_settings` of its values."""
    from arena.redteam.search import check_settings

    try:
        check_settings(
            str(cfg.searcher), cfg.T, cfg.budget, cfg.seeds, cfg.held_out, cfg.max_seconds, float(cfg.L), cfg.depth
        )
    except ValueError as exc:
        raise RedTeamError(str(exc)) from None


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
        seeds=cfg.seeds,
        held_out=cfg.held_out,
        depth=cfg.depth,
        max_seconds=cfg.max_seconds,
    )
    from arena.errors import printable
    from arena.results import inside, safe_name

    folder = inside(cfg.out, Path(cfg.out) / "attacks")  # an attacks/ link does not lead elsewhere
    folder.mkdir(parents=True, exist_ok=True)
    label = str(cfg.forecaster_label)
    # the other settings by digest: the same search overwrites its file, another one gets its own
    settings = json.dumps(
        [_settings(attacks[0]), cfg.budget, cfg.depth, cfg.max_seconds, cfg.seeds, cfg.held_out],
        sort_keys=True,
        default=str,
    )
    digest = hashlib.sha256(settings.encode()).hexdigest()[:8]
    for a in attacks:
        a["forecaster_label"] = label
        name = f"{safe_name(label)}__{cfg.metric}__T{cfg.T}__s{cfg.seed}__{a['searcher']}__{digest}.json"
        path = save_attack(a, inside(folder, folder / name))
        print(f"[arena-redteam] {printable(label)} {cfg.metric} T={cfg.T} {a['searcher']}: {summary(a)} -> {path}")
    return attacks


def _seeds(seeds: list[int]) -> str:
    return f"seed {seeds[0]}" if len(seeds) == 1 else f"seeds {seeds[0]}-{seeds[-1]}"


def summary(attack: dict) -> str:
    """One line of what a search found: the held-out value beside the search value, the certificate of
    the held-out runs, and the limits (the wall-clock cap only when it bound).

    Examples
    --------
    >>> a = {"value": 0.0183, "held_out": {"seeds": [4, 5, 6, 7]}, "search_value": 0.019, "seeds": [0, 1, 2, 3],
    ...      "certificate": {"name": "smce", "bound": 0.0222}, "evaluations": 2000, "budget_bound": True,
    ...      "time_bound": False, "cpu_seconds": 50.2}
    >>> for part in summary(a).split("; "):
    ...     print(part)
    0.0183 held out (seeds 4-7
    search 0.019 on seeds 0-3)
    certified smce bound 0.0222 on the same runs
    2000 evaluations (budget bound), 50 CPU s
    >>> a.update(budget_bound=False, time_bound=True, max_seconds=60, evaluations=700)
    >>> summary(a).split("; ")[-1]
    '700 evaluations (stopped by the max_seconds=60 wall-clock cap), 50 CPU s'
    """
    cert = attack["certificate"]
    bound = (
        f"certified {cert['name']} bound {cert['bound']:.6g} on the same runs" if cert else "no certificate bounds it"
    )
    limit = " (budget bound)" if attack["budget_bound"] else ""
    if attack["time_bound"]:
        limit += f" (stopped by the max_seconds={attack.get('max_seconds')} wall-clock cap)"
    return (
        f"{attack['value']:.6g} held out ({_seeds(attack['held_out']['seeds'])}; search {attack['search_value']:.6g} "
        f"on {_seeds(attack['seeds'])}); {bound}; {attack['evaluations']:.0f} evaluations{limit}, "
        f"{attack['cpu_seconds']:.0f} CPU s"
    )


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

        out = report(config.out, cross=bool(config.cross_attack))
        if out:
            print(f"[arena-redteam] table and figures: {Path(config.out)}")

    def on_run_end(self, config: DictConfig, **kwargs) -> None:
        self._report(config)

    def on_multirun_end(self, config: DictConfig, **kwargs) -> None:
        self._report(config)
