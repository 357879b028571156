"""Anytime-valid paired comparison of two forecasters of a results directory (``arena-compare``:
:func:`arena.cli.compare_main`).

For each nature and seed on which both forecasters finished, the per-round records of the two
matchups (the stored trace ``traces/<matchup_id>.parquet`` when the tournament kept it, else the
matchup replayed from its stored config through :func:`arena.matchup.matchup_from_config` and
:func:`arena.runner.play_matchup`, which is deterministic) give each forecaster's score at every
round; :mod:`arena.sequential` turns the differences into a confidence sequence for the running
mean difference and two e-processes, one against "A is no better than B", one against "B is no
better than A". The verdict (:func:`arena.sequential.verdict`) tests each direction at alpha / 2 (an
e-value of 2/alpha) and also asks the (1 - alpha) confidence sequence to agree: a wrong verdict has
chance at most alpha, ties included, and the verdict never contradicts the interval printed beside it.

Scores (lower is better; :data:`SCORES`): ``brier`` (p - y)^2 in [0, 1]; ``log_loss`` with the
referee's clipping (in [0, -log 1e-6]); ``pinball`` (quantile game: in [0, max(q, 1-q)(ymax - ymin)]);
``calibration``: calibration in the large, the running mean of the expected residual
E[y_t | past] - p_t (quantile game: P(y_t <= p_t | past) - q), one confidence sequence per
forecaster at alpha / 2 each, compared as abs(A's) - abs(B's) (no e-process: it is no mean of
per-round scores).

Pairing: an oblivious nature deals both forecasters the same outcomes (its seed does not depend
on the forecaster), so the difference is of two forecasts of one sequence; an adaptive nature
reacts to each forecaster, so each plays its own sequence drawn with common random numbers, and
the comparison is of how each fares against that nature (both are valid; the table says which).

Examples
--------
>>> y = np.array([0.0, 1.0])
>>> d = pair_scores(np.array([0.2, 0.9]), np.array([0.5, 0.5]), y, y, "brier")
>>> d["values"].round(2).tolist(), d["lo"], d["hi"]
([-0.21, -0.24], -1.0, 1.0)
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from arena.errors import ConfigError
from arena.sequential import confidence_sequence, e_process, verdict
from arena.store import stored_rounds

#: The scores a comparison can use; the quantile game has ``pinball`` and ``calibration`` only.
SCORES = ("brier", "log_loss", "pinball", "calibration")
#: The default score of each game.
DEFAULT_SCORE = {"quantile": "pinball"}
#: Rounds at which the curves are kept (log-spaced, plus the last).
CURVE_POINTS = 60
#: The report replays the top pair's matchups only when they took at most this many seconds in
#: all when they were played (their stored timing); arena-compare replays whatever it is asked.
REPLAY_BUDGET = 60.0


def round_scores(p: np.ndarray, y: np.ndarray, metric: str, game: dict) -> tuple[np.ndarray, float, float]:
    """Per-round score of realized forecasts p against outcomes y, with bounds that hold every round; ``game``:
    the game's parameters (:func:`game_params`)."""
    if game.get("name") == "quantile":
        from arena.games.quantile import pinball

        q, ymin, ymax = float(game["q"]), float(game["ymin"]), float(game["ymax"])
        if metric == "pinball":
            return pinball(p, y, q), 0.0, max(q, 1 - q) * (ymax - ymin)
        if metric == "calibration":
            return (y <= p).astype(float) - q, -q, 1 - q
        raise ValueError(f"metric {metric!r} is not a score of the quantile game; use pinball or calibration")
    if metric == "brier":
        return (p - y) ** 2, 0.0, 1.0
    if metric == "log_loss":
        from arena.metrics.calibration import LOG_LOSS_EPS

        q = np.clip(p, LOG_LOSS_EPS, 1 - LOG_LOSS_EPS)
        return -(y * np.log(q) + (1 - y) * np.log1p(-q)), 0.0, -math.log(LOG_LOSS_EPS)
    if metric == "calibration":
        return y - p, -1.0, 1.0
    raise ValueError(
        f"metric {metric!r} is not a score of the {game.get('name')!r} game; use one of brier, log_loss, calibration"
    )


def pair_scores(
    p_a: np.ndarray, p_b: np.ndarray, y_a: np.ndarray, y_b: np.ndarray, metric: str = "brier", game: dict | None = None
) -> dict:
    """The per-round score differences A - B (A's forecasts p_a of outcomes y_a, B's p_b of y_b) with
    their bounds; ``game``: the game's parameters (name, and q, ymin, ymax for the quantile game).

    Returns ``values`` (the differences), ``lo`` and ``hi``; for ``calibration`` also each
    forecaster's residuals ``a``, ``b`` and their bounds ``r_lo``, ``r_hi``.
    """
    game = game or {"name": "binary"}
    sa, lo, hi = round_scores(np.asarray(p_a, float), np.asarray(y_a, float), metric, game)
    sb, _, _ = round_scores(np.asarray(p_b, float), np.asarray(y_b, float), metric, game)
    out = {"values": sa - sb, "lo": lo - hi, "hi": hi - lo}
    if metric == "calibration":
        out.update(a=sa, b=sb, r_lo=lo, r_hi=hi)
    return out


def _abs_interval(low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The range of abs(m) for m in [low, high]."""
    small = np.where((low <= 0) & (high >= 0), 0.0, np.minimum(abs(low), abs(high)))
    return small, np.maximum(abs(low), abs(high))


def sequential_comparison(d: dict, alpha: float = 0.05) -> pd.DataFrame:
    """Per round t: ``mean`` (running mean difference A - B), its confidence sequence ``low``,
    ``high`` (level 1 - alpha, valid at all t at once), and the e-processes ``e_a_better`` (against
    "A is no better than B") and ``e_b_better``; for calibration, abs(A's) - abs(B's) residual
    means with the confidence sequence implied by one per forecaster at alpha / 2, and no e-process.
    """
    if "a" in d:  # calibration: one confidence sequence per forecaster
        ca, cb = (confidence_sequence(d[k], d["r_lo"], d["r_hi"], alpha / 2) for k in ("a", "b"))
        (a_lo, a_hi), (b_lo, b_hi) = _abs_interval(ca["low"], ca["high"]), _abs_interval(cb["low"], cb["high"])
        mean, low, high = abs(ca["mean"]) - abs(cb["mean"]), a_lo - b_hi, a_hi - b_lo
        e_a = e_b = np.full(len(mean), np.nan)
    else:
        cs = confidence_sequence(d["values"], d["lo"], d["hi"], alpha)
        mean, low, high = cs["mean"], cs["low"], cs["high"]
        e_a, e_b = e_process(-d["values"], -d["hi"], -d["lo"]), e_process(d["values"], d["lo"], d["hi"])
    return pd.DataFrame(
        {"t": np.arange(1, len(mean) + 1), "mean": mean, "low": low, "high": high, "e_a_better": e_a, "e_b_better": e_b}
    )


# ----------------------------------------------------------------------------- per-round records


def per_round(
    out_dir: Path, row: pd.Series | dict, trust: bool = False, stored: dict | None = None
) -> tuple[np.ndarray, np.ndarray, str]:
    """The realized forecasts and outcomes of one stored matchup and where they came from
    ("trace", "stored" or "replay"): its trace, or those stored with its result (:func:`arena.store.save_matchup`;
    ``stored``: :func:`arena.store.stored_rounds` of a batch of rows, read once), else the matchup played again
    from its config (:func:`arena.matchup.matchup_from_stored`: unless ``trust``, registered plugins with plain
    values only)."""
    trace = Path(out_dir) / "traces" / f"{row['matchup_id']}.parquet"
    if trace.is_file():
        t = pd.read_parquet(trace, columns=["p", "y"])
        return t["p"].to_numpy(float), t["y"].to_numpy(float), "trace"
    if stored is None:
        stored = stored_rounds(out_dir, [row["matchup_id"]])
    if rounds := stored.get(row["matchup_id"]):
        return np.asarray(rounds["p"], dtype=float), np.asarray(rounds["y"], dtype=float), "stored"
    if not isinstance(row.get("config"), str):
        raise ValueError(
            f"matchup {row.get('matchup_id')!r} has no stored trace and no `config` to replay it from; "
            "run its tournament with keep_trace=true"
        )
    from arena.matchup import matchup_from_stored
    from arena.runner import play_matchup

    # no Forecast objects kept: a forecaster with a compiled play_oblivious plays an oblivious nature in one call
    # (the same record as the step loop)
    result = play_matchup(matchup_from_stored(row["config"], trust), keep_forecasts=False)
    rec = result.recorder
    source = "replay"
    for metric in ("brier", "pinball"):  # the replay must be the stored game (same code version)
        new, old = result.summary.get(metric), row.get(metric)
        if new is not None and old is not None and np.isfinite(old) and not math.isclose(new, old, rel_tol=1e-9):
            source = f"replay ({metric} {new:.6g}, stored {old:.6g}: other code version?)"
    return rec.p[: rec.n].copy(), rec.y[: rec.n].copy(), source


def game_params(row: pd.Series | dict) -> dict:
    """The game's name and parameters of a stored matchup's row (its config)."""
    game = {"name": row.get("game", "binary")}
    if isinstance(row.get("config"), str):
        game.update(json.loads(row["config"]).get("game", {}))
    return game


def _pick(summary: pd.DataFrame, a: str, b: str, game: str | None, T: int | None) -> tuple[pd.DataFrame, str, int]:
    """The finished rows of forecasters a and b in one game at one T (the largest unless given)."""
    for name in (a, b):
        if name not in set(summary["forecaster"]):
            from arena.errors import did_you_mean

            options = sorted(set(summary["forecaster"].astype(str)))
            raise ValueError(
                f"forecaster {name!r} is not in the results (they hold {', '.join(options)})."
                f"{did_you_mean(name, options)}"
            )
    both = summary.loc[summary["forecaster"].isin([a, b])]
    if "status" in both:
        both = both.loc[both["status"] == "ok"]
    games = sorted(set(both.loc[both["forecaster"] == a, "game"]) & set(both.loc[both["forecaster"] == b, "game"]))
    if game is None:
        if len(games) != 1:
            raise ValueError(f"{a!r} and {b!r} share the games {games}; choose one with --game")
        game = games[0]
    elif game not in games:
        raise ValueError(f"{a!r} and {b!r} did not both finish a matchup of game {game!r} (shared: {games})")
    both = both.loc[both["game"] == game]
    Ts = sorted(set(both["T"]))
    T = int(max(Ts)) if T is None else int(T)
    if T not in Ts:
        raise ValueError(f"T={T} is not among the horizons {Ts} of {a!r} and {b!r}; choose one with --T")
    return both.loc[both["T"] == T], game, T


def compare(
    out_dir: Path | str,
    a: str,
    b: str,
    metric: str | None = None,
    alpha: float = 0.05,
    game: str | None = None,
    natures: list[str] | None = None,
    seeds: list[int] | None = None,
    T: int | None = None,
    summary: pd.DataFrame | None = None,
    trust: bool = False,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Compare forecasters ``a`` and ``b`` of a results directory on every nature and seed where both
    finished: returns ``(final, curves)``. A matchup without a trace is replayed (:func:`per_round`, ``trust``).

    ``final``: one row per (nature, seed): ``n`` rounds, ``mean`` difference A - B at the end,
    ``low``, ``high`` (the confidence sequence there), ``e_a_better``, ``e_b_better`` (the
    e-values there), ``verdict`` and ``decided_at`` (:func:`verdict`: the verdict at the last round, where
    an e-value is at least 2/alpha and the confidence sequence excludes 0 on the same side, and the round
    from which it has held),
    ``pairing`` ("common outcomes" when both saw the same outcomes, else "common random numbers")
    and ``source``. ``curves``: the same quantities at log-spaced rounds t.
    """
    from arena.certificates import checkpoints
    from arena.results import planned
    from arena.stream import collect

    out_dir = Path(out_dir)
    if summary is None:
        path = out_dir / "summary.parquet"
        summary = pd.read_parquet(path) if path.is_file() else collect(out_dir, planned(out_dir))["summary"]
    rows, game, T = _pick(summary, a, b, game, T)
    metric = metric or DEFAULT_SCORE.get(game, "brier")
    if metric not in SCORES:
        raise ValueError(f"metric {metric!r}: choose one of {', '.join(SCORES)}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha={alpha}: give a level in (0, 1), e.g. --alpha 0.05")
    finals, curves = [], []
    for (nature, seed), g in rows.groupby(["nature", "seed"], sort=True):
        if (natures and nature not in natures) or (seeds and int(seed) not in seeds):
            continue
        ra, rb = (g.loc[g["forecaster"] == name] for name in (a, b))
        if ra.empty or rb.empty:
            continue
        (pa, ya, src_a), (pb, yb, src_b) = (per_round(out_dir, r.iloc[0], trust) for r in (ra, rb))
        n = min(len(pa), len(pb))
        d = pair_scores(pa[:n], pb[:n], ya[:n], yb[:n], metric, game_params(ra.iloc[0]))
        seq = sequential_comparison(d, alpha)
        keep = np.unique(np.concatenate([checkpoints(n, CURVE_POINTS), [n]])).astype(int) - 1
        ids = {
            "game": game,
            "T": T,
            "metric": metric,
            "forecaster_a": a,
            "forecaster_b": b,
            "nature": nature,
            "seed": int(seed),
        }
        curves.append(seq.iloc[keep].assign(**ids))
        last = seq.iloc[-1]
        finals.append(
            {
                **ids,
                "n": n,
                **{k: last[k] for k in ("mean", "low", "high", "e_a_better", "e_b_better")},
                **dict(zip(("verdict", "decided_at"), verdict(seq, alpha), strict=True)),
                "pairing": "common outcomes" if np.array_equal(ya[:n], yb[:n]) else "common random numbers",
                "source": src_a if src_a == src_b else f"{src_a} / {src_b}",
            }
        )
    if not finals:
        raise ValueError(
            f"{a!r} and {b!r} share no finished (nature, seed) at T={T} in game {game!r}"
            + (f" among natures {natures}" if natures else "")
            + (f" and seeds {seeds}" if seeds else "")
        )
    return pd.DataFrame(finals), pd.concat(curves, ignore_index=True)


def top_pairs(
    out_dir: Path | str, summary: pd.DataFrame, alpha: float = 0.05, trust: bool = False
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The anytime-valid comparison of the two best forecasters of each game and T (by the mean
    over natures of the game's default score, :data:`DEFAULT_SCORE`), on every nature, first seed:
    ``(final, curves)`` as :func:`compare` returns them. A pair whose per-round records cannot be
    had (no trace, and no config to replay, or a replay that would take longer than
    :data:`REPLAY_BUDGET`) gets one row with the reason in ``error``."""
    from arena.aggregate import leaderboard

    finals, curves = [], []
    for game in sorted(summary["game"].dropna().astype(str).unique()) if "game" in summary else []:
        s = summary.loc[summary["game"] == game]
        metric = DEFAULT_SCORE.get(game, "brier")
        if metric not in s:
            continue
        for T, board in leaderboard(s, [metric]).groupby("T", sort=True):
            if len(board) < 2:
                continue
            a, b = board["forecaster"].iloc[0], board["forecaster"].iloc[1]
            seed = int(s.loc[s["T"] == T, "seed"].min()) if "seed" in s else None
            try:
                cost = replay_seconds(
                    out_dir,
                    s.loc[
                        (s["T"] == T)
                        & s["forecaster"].isin([a, b])
                        & ((s["seed"] == seed) if seed is not None else True)
                    ],
                )
                if cost > REPLAY_BUDGET:
                    raise ValueError(
                        f"no traces, and replaying them would take about {cost:.0f} s: run "
                        f"`arena-compare DIR {a} {b}`, or the tournament with keep_trace=true"
                    )
                final, curve = compare(
                    out_dir,
                    a,
                    b,
                    metric,
                    alpha,
                    game,
                    seeds=[seed] if seed is not None else None,
                    T=int(T),
                    summary=s,
                    trust=trust,
                )
            except Exception as exc:  # noqa: BLE001 (a section of the report: its reason is printed there)
                final, curve = (
                    pd.DataFrame(
                        [
                            {
                                "game": game,
                                "T": T,
                                "metric": metric,
                                "forecaster_a": a,
                                "forecaster_b": b,
                                "error": f"{type(exc).__name__}: {exc}",
                                "refused": isinstance(exc, ConfigError),  # a stored config not replayed untrusted
                            }
                        ]
                    ),
                    pd.DataFrame(),
                )
            finals.append(final)
            curves.append(curve)
    if not finals:
        return pd.DataFrame(), pd.DataFrame()
    return pd.concat(finals, ignore_index=True), pd.concat(curves, ignore_index=True)


def replay_seconds(out_dir: Path | str, rows: pd.DataFrame, stored: dict | None = None) -> float:
    """The seconds the matchups of ``rows`` without a stored trace or rounds took when played (their timing);
    ``stored``: :func:`arena.store.stored_rounds` of ``rows``, when already read."""
    timing = [c for c in ("seconds_forecaster", "seconds_arena", "seconds_referee") if c in rows]
    if "matchup_id" not in rows or not timing:
        return 0.0
    if stored is None:
        stored = stored_rounds(out_dir, rows["matchup_id"])
    traced = rows["matchup_id"].map(lambda m: m in stored or (Path(out_dir) / "traces" / f"{m}.parquet").is_file())
    return float(rows.loc[~traced, timing].apply(pd.to_numeric, errors="coerce").fillna(0).to_numpy().sum())


def format_table(final: pd.DataFrame, alpha: float) -> str:
    """The final values as aligned text, one line per nature and seed."""
    head = (
        f"{'nature':<22} {'seed':>4} {'T':>7} {'A - B':>10} {f'{1 - alpha:.0%} CS':>22} {'e(A better)':>11} "
        f"{'e(B better)':>11}  verdict (round)      pairing"
    )
    lines = [head]
    for _, r in final.iterrows():
        cs = f"[{r['low']:.4g}, {r['high']:.4g}]"
        lines.append(
            f"{str(r['nature']):<22} {r['seed']:>4} {r['n']:>7} {r['mean']:>10.4g} {cs:>22} "
            f"{r['e_a_better']:>11.3g} {r['e_b_better']:>11.3g}  {_decided(r):<19} {r['pairing']}"
        )
    return "\n".join(lines)


def _decided(r) -> str:
    return r["verdict"] + (f" ({int(r['decided_at'])})" if np.isfinite(r["decided_at"]) else "")


__all__ = [
    "SCORES",
    "compare",
    "format_table",
    "pair_scores",
    "game_params",
    "per_round",
    "replay_seconds",
    "round_scores",
    "sequential_comparison",
    "top_pairs",
    "verdict",
]
