"""Online-to-batch conversion (§11): any online forecaster becomes a randomized batch predictor.

Given n i.i.d. examples S = (x_1, y_1), ..., (x_n, y_n), run the online forecaster on S; let f_i
be the forecaster *after the first i - 1 examples* (f_1 has seen nothing; not the final one).
The batch predictor A_S draws i uniformly from 1..n and predicts f_i(x). Its test risk is
therefore exactly the average over i of the test risks of the prefix forecasters, which this
module computes on a held-out test set: every prefix forecaster f_i is evaluated on every
test point during the single online pass, just before the forecaster sees example i (so every
prefix state is used and none is stored; a defensive forecaster's state is its history
prefix). Evaluation never changes the online run: it uses the forecaster's ``predict_many``
(vectorized, state untouched) when it has one, and otherwise a copy of the forecaster.

Test risk: mean over the test points of E[ℓ(p, y)] (over a randomized forecast's atoms and,
when nature exposes its law P(y = 1 | x), over y, otherwise at the drawn y). The comparators
are the best in a class on the same test set: the best expert (experts game), the best
linear predictor <w, x> with ||w|| <= M (contexts; squared loss, fitted to P(y = 1 | x) when
known), and the best constant. For ℓ∞ DF (and the aggregating algorithm) §11 bounds the
expected excess risk over the best expert by log N / (λ n) (squared loss) or log N / n (log)
(``bound``), and with probability 1 - δ over the training set by
R(n)/n + 2B sqrt((log(2/δ) + log|Ω|)/n) (``bound_hp``; |Ω| = N comparisons to the experts, B = 1
the range of a squared-loss difference; NaN for the log loss, which is unbounded). The command
line prints the seed mean of the excess risk with a 95% t-interval over the seeds and the
fraction of seeds within ``bound_hp``. The quantile game is refused (its batch risk would be
the pinball loss with conditional coverage, not scored here).

A sweep over n uses one online pass of the largest n per seed: the training sets are nested
(S_n = the first n examples of one i.i.d. stream), so the risk of A_{S_n} is the mean of the
first n prefix risks. The test set is drawn first, from the same nature instance (the same
experts), and is shared by every n of a seed.

Command line::

    python -m arena.batch                      # conf/batch/experts.yaml
    python -m arena.batch linear ns=[10,100] seeds=[0,1] out=results/batch/linear
    python -m arena.batch path/to/my.yaml forecasters=[linf_df,hedge]

References
----------
Perdomo & Recht, §11 (Proposition "online-to-batch") and its proof (Appendix); errata: docs/ERRATA.md
(erratum: R(T)/T is R(n)/n).
"""

from __future__ import annotations

import copy
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from arena.games import Game, get_game, plays
from arena.protocols import ExpertsForecaster, ExpertsNature, Forecast, Forecaster, Nature, OutcomeLaw
from arena.registry import make_forecaster, make_nature
from arena.seeding import derive_rng

COMPARATORS = ("auto", "best_expert", "best_linear", "best_constant")


@dataclass
class Sample:
    """i.i.d. examples: contexts X (n, d), outcomes y (n,), and P(y = 1 | x) when nature exposes it (else NaN)."""

    X: np.ndarray
    y: np.ndarray
    q: np.ndarray

    def __len__(self) -> int:
        return len(self.y)


def _loss_fn(game: Game):
    """Elementwise loss of the game: the experts game's, else the squared loss (Brier)."""
    from arena.games.experts import LOSS_FUNCTIONS

    return LOSS_FUNCTIONS.get(str(getattr(game, "loss", "squared")), LOSS_FUNCTIONS["squared"])


def draw(nature: Nature, game: Game, n: int, seed: int, start: int = 0) -> tuple[Sample, int]:
    """Draw n examples from an oblivious nature; returns them and the next round index.

    Nature must already be reset (its stream gives the contexts and any hidden state); the
    outcomes come from a stream derived from ``seed``.
    """
    if isinstance(nature, ExpertsNature) and nature.second_guessing:
        raise ValueError(
            f"online-to-batch: nature {nature.name!r} has second-guessing experts, whose advice "
            "depends on the forecast: there is no fixed class of predictors to compare with"
        )
    if nature.adaptive:
        raise ValueError(
            f"online-to-batch: nature {nature.name!r} is adaptive; the batch setting needs i.i.d. "
            "examples from an oblivious nature"
        )
    outcome_rng = derive_rng(seed, "batch-outcome", nature.name, start)
    d = int(nature.context_dim)
    X, y, q = np.zeros((n, d)), np.zeros(n), np.full(n, np.nan)
    shown = Forecast.point(0.5)
    for i in range(n):
        t = start + i + 1
        x = np.asarray(nature.context(t), dtype=np.float64).reshape(-1)
        answer = nature.respond(t, x, shown)
        if isinstance(answer, OutcomeLaw):
            y[i] = game.check_outcome(answer.sample(outcome_rng), f"nature {nature.name!r}", t)
            q[i] = 1.0 - answer.cdf(0.0)
        else:
            y[i] = game.check_outcome(answer, f"nature {nature.name!r}", t)
        nature.observe(t, 0.5, y[i])
        X[i] = x
    return Sample(X, y, q), start + n


def expected_losses(loss, p: np.ndarray, test: Sample) -> np.ndarray:
    """E[ℓ(p_k, y_k)] per test point (p broadcast against the test rows), over y when its law is known."""
    with np.errstate(invalid="ignore"):
        known = np.isfinite(test.q)
        q = np.where(known, test.q, 0.0)
        ones, zeros = loss(p, 1.0), loss(p, 0.0)
        exp = np.where(q > 0, q * ones, 0.0) + np.where(q < 1, (1 - q) * zeros, 0.0)
        return np.where(known, exp, loss(p, test.y))


def _forecast_risk(loss, forecasts, test: Sample) -> float:
    """Test risk of a list of announced forecasts (points or finite distributions)."""
    total = np.zeros(len(test))
    for k, f in enumerate(forecasts):
        if isinstance(f, Forecast):
            one = Sample(test.X[k : k + 1], test.y[k : k + 1], test.q[k : k + 1])
            total[k] = sum(
                w * float(expected_losses(loss, np.array([pt]), one)[0])
                for pt, w in zip(f.points, f.probs, strict=True)
            )
        else:
            total[k] = np.nan
    points = np.array([np.nan if isinstance(f, Forecast) else float(f) for f in forecasts])
    plain = ~np.isnan(points)
    if plain.any():
        total[plain] = expected_losses(loss, points[plain], Sample(test.X[plain], test.y[plain], test.q[plain]))
    return float(np.mean(total))


def prefix_risks(forecaster: Forecaster, game: Game, train: Sample, test: Sample, seed: int) -> np.ndarray:
    """The test risk of every prefix forecaster f_1, ..., f_n (f_i: after the first i - 1 examples)."""
    loss = _loss_fn(game)
    forecaster.game = game
    forecaster.reset(derive_rng(seed, "forecaster", forecaster.name))
    draw_rng = derive_rng(seed, "batch-forecast-draw", forecaster.name)
    many = forecaster.predict_many
    risks = np.zeros(len(train))
    for i in range(len(train)):
        if callable(many):
            risks[i] = float(np.mean(expected_losses(loss, np.asarray(many(test.X), float), test)))
        else:  # a copy, so that evaluation leaves the online run (state, random stream) untouched
            probe = copy.deepcopy(forecaster)
            risks[i] = _forecast_risk(loss, [probe.predict(x) for x in test.X], test)
        x = train.X[i]
        f = forecaster.predict(x)
        p = f.sample(draw_rng.random()) if isinstance(f, Forecast) else float(f)
        forecaster.update(x, p, float(train.y[i]))
    return risks


def comparator_risks(game: Game, test: Sample, M: float = 1.0) -> dict[str, float]:
    """The test risk of the best expert, the best linear predictor (contexts) and the best constant."""
    from arena.metrics.regret import best_linear_weights

    loss = _loss_fn(game)
    out = {}
    target = np.where(np.isfinite(test.q), test.q, test.y)
    c = float(np.mean(target))
    out["best_constant"] = float(np.mean(expected_losses(loss, np.full(len(test), c), test)))
    if game.name == "experts":
        per = [float(np.mean(expected_losses(loss, test.X[:, j], test))) for j in range(test.X.shape[1])]
        out["best_expert"] = min(per)
    if test.X.shape[1] and str(getattr(game, "loss", "squared")) != "log":
        w = best_linear_weights(test.X, target, M)
        sq = _loss_fn(get_game("binary"))
        out["best_linear"] = float(np.mean(expected_losses(sq, test.X @ w, test)))
    return out


def _bound(forecaster: Forecaster, game: Game, N: int, n: int) -> float:
    """§11: the expected excess risk over the best expert, log N / (rate n), for the certified forecasters."""
    rate = forecaster.rate if isinstance(forecaster, ExpertsForecaster) else None
    if game.name != "experts" or not isinstance(rate, (int, float)) or "experts_regret" not in forecaster.claims:
        return math.nan
    return math.log(N) / (rate * n)


def high_probability_bound(expected: float, N: int, n: int, delta: float, B: float = 1.0) -> float:
    """§11 Prop. online-to-batch, with probability 1 - delta over the training set:
    R(n)/n + 2B sqrt((log(2/delta) + log|Omega|)/n), with ``expected`` = R(n)/n and |Omega| = N.

    Examples
    --------
    >>> round(high_probability_bound(0.0, 1, 100, 2 / math.e), 12)
    0.2
    """
    return expected + 2.0 * B * math.sqrt((math.log(2.0 / delta) + math.log(N)) / n)


def interval(values, level: float = 0.95) -> tuple[float, float, float]:
    """(mean, low, high): the mean of ``values`` and its Student-t ``level`` interval (NaN bounds for one value).

    Examples
    --------
    >>> [round(v, 6) for v in interval([1.0, 2.0, 3.0])]
    [2.0, -0.484138, 4.484138]
    """
    from scipy import stats

    v = np.asarray(values, float)
    v = v[np.isfinite(v)]
    if len(v) < 2:
        m = float(v.mean()) if len(v) else math.nan
        return m, math.nan, math.nan
    half = float(stats.t.ppf(0.5 + level / 2, len(v) - 1) * v.std(ddof=1) / math.sqrt(len(v)))
    return float(v.mean()), float(v.mean()) - half, float(v.mean()) + half


def summarize(table: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """Per forecaster and n over the seeds: mean risk, mean excess risk with its t-interval, both bounds,
    and the fraction of seeds whose excess risk is within the high-probability bound."""
    rows = []
    for (fc, n), part in table.groupby(["forecaster", "n"], sort=False):
        mean, lo, hi = interval(part["excess_risk"], level)
        hp = part["bound_hp"]
        within = float(np.mean(part["excess_risk"] <= hp)) if hp.notna().all() else math.nan
        rows.append(
            {
                "forecaster": fc,
                "n": n,
                "seeds": len(part),
                "risk": float(part["risk"].mean()),
                "excess_risk": mean,
                "excess_low": lo,
                "excess_high": hi,
                "bound": float(part["bound"].mean()),
                "bound_hp": float(hp.mean()),
                "within_hp": within,
            }
        )
    return pd.DataFrame(rows)


def _spec(item) -> tuple[str, str, dict]:
    """(label, name, params) of a forecaster entry: a name or {name, params, label}."""
    if isinstance(item, str):
        return item, item, {}
    item = dict(item)
    unknown = set(item) - {"name", "params", "label"}
    if "name" not in item or unknown:
        raise ValueError(f"online-to-batch: forecaster entry {item!r}: give a name or {{name, params, label}}")
    return str(item.get("label", item["name"])), str(item["name"]), dict(item.get("params") or {})


def sweep(
    forecasters,
    nature,
    game="binary",
    ns=(10, 30, 100, 300),
    test_size: int = 1000,
    seeds=(0, 1, 2),
    comparator: str = "auto",
    M: float = 1.0,
    delta: float = 0.05,
) -> pd.DataFrame:
    """Excess test risk of the online-to-batch predictor against n, per forecaster and seed.

    Parameters
    ----------
    forecasters : names, or ``{name, params, label}`` entries.
    nature : a nature name, ``{name, params}``, or an instance (oblivious, i.i.d.).
    game : the game (name, ``{name, ...params}`` or a Game): ``experts`` (loss from the game) or ``binary``.
    ns : training-set sizes; test_size : held-out test points per seed.
    comparator : ``auto`` (best expert in the experts game, best linear predictor with contexts,
        else best constant) or one of those.
    delta : the failure probability of the high-probability bound.

    Returns
    -------
    One row per forecaster, n and seed: risk (of A_S), every comparator's risk, the chosen
    comparator and excess_risk = risk - its risk, the §11 bound in expectation and the
    high-probability one (NaN when none), seconds.

    Examples
    --------
    >>> t = sweep(["linf_df"], "expert_constants", {"name": "experts"}, ns=(5, 20), test_size=50, seeds=(0,))
    >>> t[["forecaster", "n", "comparator"]].values.tolist()
    [['linf_df', 5, 'best_expert'], ['linf_df', 20, 'best_expert']]
    """
    g = _game(game)
    if g.name not in ("binary", "experts"):
        raise ValueError(
            f"online-to-batch: the {g.name!r} game is not supported (the batch risk here is the squared "
            "or log loss of a probability); use game: binary or game: experts"
        )
    if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not 0 < delta < 1:
        raise ValueError(f"online-to-batch: delta={delta!r} must be in (0, 1), e.g. delta: 0.05")
    if comparator not in COMPARATORS:
        raise ValueError(f"online-to-batch: comparator={comparator!r}; expected one of {', '.join(COMPARATORS)}")
    ns = sorted({int(n) for n in ns})
    if not ns or ns[0] < 1:
        raise ValueError(f"online-to-batch: ns={ns!r}; give training sizes >= 1, e.g. ns: [10, 100, 1000]")
    if isinstance(test_size, bool) or not isinstance(test_size, (int, np.integer)) or test_size < 1:
        raise ValueError(f"online-to-batch: test_size={test_size!r} must be an integer >= 1, e.g. test_size: 1000")
    specs = [_spec(f) for f in forecasters]
    rows = []
    for seed in seeds:
        nat = _nature(nature)
        if not plays(g, nat):
            raise ValueError(f"online-to-batch: nature {nat.name!r} plays {nat.games}, not the {g.name!r} game")
        nat.game = g
        nat.reset(derive_rng(seed, "nature", nat.name))
        test, nxt = draw(nat, g, int(test_size), seed)
        train, _ = draw(nat, g, ns[-1], seed, start=nxt)
        comps = comparator_risks(g, test, M)
        chosen = _choose(comparator, g, test, comps)
        for label, name, params in specs:
            fc = make_forecaster(name, **params)
            if not plays(g, fc):
                raise ValueError(f"online-to-batch: forecaster {fc.name!r} plays {fc.games}, not the {g.name!r} game")
            t0 = time.perf_counter()
            risks = prefix_risks(fc, g, train, test, seed)
            secs = time.perf_counter() - t0
            names = {"forecaster": label, "nature": nat.name, "game": g.name}
            rows += _rows(names, int(seed), fc, g, ns, risks, test, comps, chosen, delta, secs)
    return pd.DataFrame(rows)


def _rows(names: dict, seed: int, fc, g: Game, ns, risks, test: Sample, comps: dict, chosen: str, delta, secs):
    """One forecaster's rows of a seed (:func:`sweep`), one per n."""
    rows = []
    for n in ns:
        risk = float(np.mean(risks[:n]))
        bound = _bound(fc, g, test.X.shape[1], n)
        bounded = str(getattr(g, "loss", "squared")) == "squared"  # log-loss differences are unbounded
        hp = high_probability_bound(bound, test.X.shape[1], n, delta) if bounded else math.nan
        row = {
            **names,
            "n": n,
            "seed": seed,
            "test_size": len(test),
            "risk": risk,
            "comparator": chosen,
            "excess_risk": risk - comps[chosen],
            "bound": bound,
            "bound_hp": hp,
            "delta": float(delta),
            "seconds": secs,
        }
        row.update({f"risk_{k}": v for k, v in comps.items()})
        rows.append(row)
    return rows


def _choose(comparator: str, game: Game, test: Sample, comps: dict) -> str:
    if comparator == "auto":
        return "best_expert" if game.name == "experts" else "best_linear" if "best_linear" in comps else "best_constant"
    if comparator not in comps:
        raise ValueError(
            f"online-to-batch: comparator {comparator!r} does not apply here (available: {', '.join(sorted(comps))})"
        )
    return comparator


def _game(game) -> Game:
    if isinstance(game, Game):
        return game
    if isinstance(game, str):
        return get_game(game)
    params = dict(game)
    return get_game(str(params.pop("name")), **params)


def _nature(nature) -> Nature:
    if isinstance(nature, Nature):
        return copy.deepcopy(nature)
    if isinstance(nature, str):
        return make_nature(nature)
    spec = dict(nature)
    return make_nature(str(spec["name"]), **dict(spec.get("params") or {}))


# ------------------------------------------------------------------------------ command line
def _config(argv: list[str]):
    """The batch config: conf/batch/<name>.yaml (default ``experts``) or a YAML path, plus key=value overrides."""
    from omegaconf import OmegaConf

    first = argv[0] if argv and "=" not in argv[0] else "experts"
    overrides = [a for a in argv if "=" in a]
    path = Path(first)
    if not path.suffix:
        path = Path(__file__).resolve().parent.parent / "conf" / "batch" / f"{first}.yaml"
        if not path.is_file():
            from importlib import resources

            path = Path(str(resources.files("arena.conf").joinpath(f"batch/{first}.yaml")))
    if not path.is_file():
        raise FileNotFoundError(
            f"no batch config {first!r} (looked for {path}); give a name under conf/batch or a YAML file"
        )
    cfg = OmegaConf.merge(OmegaConf.load(path), OmegaConf.from_dotlist(overrides))
    return OmegaConf.to_container(cfg, resolve=True)


def run(cfg: dict) -> tuple[pd.DataFrame, list[Path]]:
    """Run a batch config and write ``batch.parquet``, ``batch.csv`` and the excess-risk figure."""
    from arena.plots.experts import excess_risk_vs_n
    from arena.plots.style import _save
    from arena.results import write_atomic

    known = {"game", "nature", "forecasters", "ns", "test_size", "seeds", "comparator", "M", "delta", "out"}
    unknown = set(cfg) - known
    if unknown:
        raise ValueError(f"online-to-batch config: unknown keys {sorted(unknown)}; known: {sorted(known)}")
    table = sweep(
        cfg["forecasters"],
        cfg["nature"],
        cfg.get("game", "binary"),
        cfg.get("ns", (10, 100)),
        int(cfg.get("test_size", 1000)),
        cfg.get("seeds", (0,)),
        cfg.get("comparator", "auto"),
        float(cfg.get("M", 1.0)),
        float(cfg.get("delta", 0.05)),
    )
    out = Path(cfg.get("out", "results/batch"))
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(table, out / "batch.parquet")
    table.to_csv(out / "batch.csv", index=False)
    (out / "figures").mkdir(exist_ok=True)
    figures = _save(excess_risk_vs_n(table), out / "figures" / "excess_risk_vs_n", ("pdf", "png"))
    return table, [out / "batch.parquet", out / "batch.csv", *figures]


def main(argv: list[str] | None = None) -> None:
    """``python -m arena.batch [NAME|FILE.yaml] [key=value ...]``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__)
        return
    try:
        table, paths = run(_config(argv))
    except (ValueError, FileNotFoundError) as exc:
        print(f"arena-batch: error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    summary = summarize(table)  # seed means, 95% t-intervals, both bounds, the fraction within the hp bound
    print(summary.to_string(index=False, float_format=lambda v: f"{v:.5f}"))
    for p in paths:
        print(f"[arena-batch] {p}")


if __name__ == "__main__":
    main()
