"""Searchers for a forecaster's worst case: black-box policy search (CMA-ES) and white-box planning.

Both return a stored attack (:mod:`arena.redteam.policy`); :func:`search` runs them and replays
each attack on held-out seeds, so that its ``value`` is the metric the arena's referee reports on
games the search never saw: a lower bound on the forecaster's worst case (in expectation over the
coins) at that T.

- :func:`cma_search` tunes the weights of a policy (features of the announced forecast and of
  the history -> outcome law) with CMA-ES (the ``cma`` package), scoring each candidate by
  playing it with :func:`arena.play` on the search seeds (the mean over them). It never looks
  inside the forecaster, so it works against randomized forecasters (it sees the announced
  distribution, never the coin).
- :func:`plan_search` plays a :class:`Planner` nature that clones the forecaster
  (:meth:`arena.protocols.Forecaster.clone`) and, every round, tries each candidate answer
  followed by rollouts of the base policies to the horizon, scoring the finished game with
  the metric (a rollout algorithm: against a deterministic forecaster, with deterministic base
  policies, it does at least as well as its best base policy). Randomized forecasts are sampled
  with the planner's own generator.

Several seeds against a randomized forecaster: a candidate scored on one seed's forecast coins
is tuned to coins that a real nature never sees, so :func:`search` scores every candidate on
``seeds`` seeds (:data:`SEEDS`) when a probe game shows the forecaster randomizing, on one seed
when it does not (its games then differ only by nature's own coins), and measures the attack it
keeps on ``held_out`` seeds disjoint from those.

The budget counts evaluations: one evaluation is one game of T rounds, played (a candidate on
one seed) or simulated (the planner's rollouts count T simulated rounds as one), so the same
settings give the same attack on any machine. A wall-clock cap (``max_seconds``) is only a
safety net; the attack records whether the budget or the cap bound. Every random choice is
seeded from the root seed by name (:func:`arena.seeding.derive_seed`).

References
----------
Perdomo & Recht, §2-§10; Hansen, "The CMA Evolution Strategy: A
Tutorial" (2016); Bertsekas, "Rollout algorithms" (1997).
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Sequence

import numpy as np

from arena.protocols import EMPTY_CONTEXT, Forecast, as_forecast
from arena.redteam.objective import certificate, check_objective, score, value
from arena.redteam.policy import FEATURES, RedTeamNature, attack_dict
from arena.seeding import derive_rng, derive_seed

#: Default evaluations of each searcher against one forecaster (``searcher=both``: this many each).
#: One evaluation is one game of T rounds, played or simulated.
BUDGET = 2000
#: Default number of seeds each candidate is scored on against a randomized forecaster.
SEEDS = 4
#: Default number of held-out seeds the kept attack is measured on.
HELD_OUT = 8
#: Default wall-clock cap of a whole search, in seconds: a safety net that the default budget
#: does not reach on this project's forecasters (an attack records when it bound).
MAX_SECONDS = 3600.0


class Limits:
    """The budget of one searcher in evaluations, and the wall-clock cap; what stopped it.

    Examples
    --------
    >>> lim = Limits(10, None)
    >>> lim.allows(4), lim.spend(4), lim.allows(8), lim.budget_bound
    (True, None, False, True)
    """

    def __init__(self, budget: float, max_seconds: float | None):
        self.budget, self.max_seconds = float(budget), max_seconds
        self.used = 0.0
        self.start = time.monotonic()
        self.budget_bound = self.time_bound = False

    def allows(self, k: float) -> bool:
        """Whether ``k`` more evaluations fit (noting which limit refused them)."""
        if self.used + k > self.budget + 1e-9:
            self.budget_bound = True
            return False
        # the cap stops a search once it has begun: every search scores something
        if self.used and self.max_seconds is not None and time.monotonic() - self.start >= self.max_seconds:
            self.time_bound = True
            return False
        return True

    def spend(self, k: float) -> None:
        self.used += k

    def record(self) -> dict:
        """The attack's fields of this search's limits."""
        return {
            "evaluations": round(self.used, 3),
            "budget_bound": self.budget_bound,
            "time_bound": self.time_bound,
        }


def _game(game, game_params: dict | None = None):
    from arena.games import get_game

    return get_game(game, **(game_params or {}))


def _forecaster(forecaster, params: dict | None):
    from arena.registry import make_forecaster

    return make_forecaster(forecaster, **(params or {}))


def fixed_policies(game: str) -> dict[str, list[float]]:
    """Named policies (weights) that are the known worst cases of simple forecasters; the planner's
    bases.

    Binary games: ``ones`` (always 1: the worst case of ``constant`` below 1/2), ``contrarian``
    (1{p < 1/2}), ``alternate`` (1 - the last outcome: the worst case of ``last_outcome``);
    quantile: ``above`` (every outcome above the forecast) and ``below``; experts: ``contrarian``.

    Examples
    --------
    >>> sorted(fixed_policies("binary"))
    ['alternate', 'contrarian', 'ones']
    """
    n = len(FEATURES[game])

    def w(**kw):
        v = [0.0] * n
        for k, val in kw.items():
            v[FEATURES[game].index("1" if k == "one" else k)] = val
        return v

    if game == "quantile":
        return {"above": w(one=1.0), "below": w(one=-1.0)}
    if game == "experts":
        return {"contrarian": w(p=-60.0), "ones": w(one=30.0)}
    return {"ones": w(one=30.0), "contrarian": w(p=-60.0), "alternate": w(last_y=-60.0)}


def _policy(game, theta, T: int, L: float, panel) -> dict:
    extra = {"L": float(L)} if game.name == "quantile" else {"panel": panel} if game.name == "experts" else {}
    return attack_dict("policy", game, T=int(T), theta=[float(v) for v in theta], **extra)


def _play(game, fc, nature, T: int, seed: int, time_limit=None):
    from arena.runner import play

    return play(game, fc, nature, T, seed, keep_forecasts=False, time_limit=time_limit)


def evaluate(attack: dict, forecaster, metric: str, seed: int, forecaster_params: dict | None = None, game=None):
    """Play a stored attack against a forecaster; (the metric's value, the :class:`arena.runner.Result`)."""
    game = game or _game(attack["game"], attack.get("game_params"))
    r = _play(game, _forecaster(forecaster, forecaster_params), RedTeamNature(attack), int(attack.get("T")), seed)
    return value(r, metric, game), r


def _mean(values: list[float]) -> float:
    return math.fsum(values) / len(values)


def randomizes(
    game, forecaster, T: int, seed: int = 0, forecaster_params: dict | None = None, L: float = 1.0, panel=None
) -> bool:
    """Whether the forecaster randomizes: some realized forecast of a probe game (against outcomes
    Bernoulli(1/2)) differs from the mean of the announced distribution.

    Examples
    --------
    >>> randomizes("binary", "k29", 50), randomizes("binary", "k29_rounded", 50)
    (False, True)
    """
    game = _game(game) if isinstance(game, str) else game
    probe = RedTeamNature(_policy(game, [0.0] * len(FEATURES[game.name]), T, L, panel))
    rec = _play(game, _forecaster(forecaster, forecaster_params), probe, T, seed).recorder
    return bool(np.any(rec.p[: rec.n] != rec.p_mean[: rec.n]))


def _scorer(game, fc, metric: str, T: int, seeds: Sequence[int], lim: Limits):
    """A candidate attack -> the mean of the metric over ``seeds`` (one evaluation a seed)."""

    def scored(attack: dict) -> float:
        lim.spend(len(seeds))
        return _mean([value(_play(game, fc, RedTeamNature(attack), T, s), metric, game) for s in seeds])

    return scored


def cma_search(
    game,
    forecaster,
    metric: str,
    T: int,
    seed: int = 0,
    budget: int = BUDGET,
    *,
    seeds: Sequence[int] | None = None,
    forecaster_params: dict | None = None,
    L: float = 1.0,
    panel: dict | None = None,
    sigma0: float = 3.0,
    popsize: int | None = None,
    max_seconds: float | None = MAX_SECONDS,
) -> dict:
    """Black-box search: CMA-ES on the policy weights, each candidate scored by playing it on
    ``seeds`` (default: ``seed`` alone), the mean over them.

    Plays whole generations while they fit in ``budget`` evaluations (a candidate on k seeds costs
    k) and ``max_seconds``; restarts with a doubled population when CMA-ES stops early (IPOP).
    Returns the best policy found, with ``search_value`` (its mean over ``seeds``), ``seeds`` and
    what the limits did (:meth:`Limits.record`).

    Examples
    --------
    >>> a = cma_search("binary", "constant", "smce_over_T", T=50, budget=400)
    >>> a["search_value"], a["evaluations"], a["budget_bound"]
    (0.5, 396.0, True)
    """
    try:
        import cma
    except ImportError:
        raise ImportError(
            "the black-box red team needs the `cma` package: pip install "
            "'defensive-forecasting-arena[redteam]' (or pip install cma)"
        ) from None
    game = _game(game) if isinstance(game, str) else game
    check_objective(game.name, metric)
    fc = _forecaster(forecaster, forecaster_params)
    seeds = [int(seed)] if seeds is None else [int(s) for s in seeds]
    lim = Limits(budget, max_seconds)
    scored = _scorer(game, fc, metric, T, seeds, lim)
    n = len(FEATURES[game.name])
    best, best_theta, restart = -math.inf, np.zeros(n), 0
    pop = min(popsize or 4 + int(3 * math.log(n)), max(int(budget) // len(seeds), 2))  # a small budget: fewer
    while lim.allows(pop * len(seeds)):
        es = cma.CMAEvolutionStrategy(
            np.zeros(n),
            sigma0,
            {
                "seed": derive_seed(seed, "redteam", "cma", fc.name, metric, restart) % (2**31 - 1) + 1,
                "popsize": pop,
                "verbose": -9,
                "tolfun": 1e-9,
                "tolx": 1e-6,
            },
        )
        while not es.stop() and lim.allows(pop * len(seeds)):
            thetas = es.ask()
            vals = []
            for th in thetas:
                v = scored(_policy(game, th, T, L, panel))
                vals.append(-v if math.isfinite(v) else 0.0)
                if v > best:
                    best, best_theta = v, np.array(th)
            es.tell(thetas, vals)
        restart, pop = restart + 1, pop * 2
    attack = _policy(game, best_theta, T, L, panel)
    attack.update(search_value=float(best), seeds=seeds, searcher="cma", **lim.record())
    return attack


class Planner(RedTeamNature):
    """A white-box nature: it clones the forecaster and plans each answer by rollouts.

    In round t it has a clone of the forecaster in the very state of the real one (kept in step
    with the realized rounds). For each candidate answer (binary games: y = 0 or 1; quantile: all
    mass just below, around or just above the forecast) it copies the clone, plays the answer,
    then each base policy to the horizon (``depth`` rounds at most), and scores the game with the
    metric; it answers the candidate of the best rollout. Once the next round's rollouts no longer
    fit in ``limits`` (evaluations: T simulated rounds make one) it answers as the base policy
    that did best. The answers it gave are :attr:`answers` (a replayable sequence).

    Parameters
    ----------
    game, forecaster, metric, T : what to attack; ``forecaster`` is the instance the game plays.
    bases : named policy weights (:func:`fixed_policies`) for the rollouts.
    limits : the :class:`Limits` its rollouts spend.
    seed : root seed of the planner's own generator (the coins of its rollouts).
    depth : rollout length (None: to the horizon).
    """

    def __init__(
        self,
        game,
        forecaster,
        metric: str,
        T: int,
        bases: dict[str, list[float]],
        limits: Limits,
        seed: int = 0,
        depth: int | None = None,
        L: float = 1.0,
        panel: dict | None = None,
    ):
        super().__init__(_policy(game, [0.0] * len(FEATURES[game.name]), T, L, panel))
        self.adaptive = True
        self._target, self._metric, self._T = forecaster, metric, int(T)
        self.base_attacks = {k: _policy(game, th, T, L, panel) for k, th in bases.items()}
        self._seed, self._limits, self._depth = int(seed), limits, depth
        self.answers: list[float] = []

    def reset(self, rng):
        super().reset(rng)
        self._model = self._target.clone()  # the forecaster was reset before nature (arena.runner.play)
        self._bases = {}
        for k, a in self.base_attacks.items():
            b = RedTeamNature(a)
            b.game = self.game
            b.reset(rng)
            self._bases[k] = b
        self._rng = derive_rng(self._seed, "redteam", "planner")
        self._hist = ([], [], [])  # scored contexts, realized forecasts, outcomes
        self._best_base, self.answers = next(iter(self._bases)), []

    def _candidates(self, f: Forecast) -> list[float]:
        if self.game.name == "quantile":
            m, w = f.mean, 1.0 / self.L
            return [m - w, m - 0.5 * w, min(f.points) + 1e-9 * w]
        return [0.0, 1.0]

    def respond(self, t, x, forecast):
        self._x, self._mean = x, forecast.mean
        self._model.predict(x)  # the real forecaster predicted: the clone makes the same call
        moves = {k: b.decide(t, x, forecast) for k, b in self._bases.items()}
        candidates = self._candidates(forecast)
        end = self._T if self._depth is None else min(self._T, t + self._depth)
        cost = len(candidates) * len(self._bases) * (end - t + 1) / self._T
        if not self._limits.allows(cost):
            answer = moves[self._best_base]
        else:
            self._limits.spend(cost)
            best = -math.inf
            for a in candidates:
                for k, b in self._bases.items():
                    v = self._rollout(t, x, forecast, a, b, end)
                    if v > best:
                        best, answer, self._best_base = v, a, k
        self.answers.append(float(answer))
        return self.answer(answer)

    def _rollout(self, t: int, x, f: Forecast, a: float, base: RedTeamNature, end: int) -> float:
        game, rng = self.game, self._rng
        model, nat = self._model.clone(), copy.deepcopy(base)
        panel = copy.deepcopy(self.panel) if game.name == "experts" else None
        X, P, Y = (list(h) for h in self._hist)
        p = f.sample(rng.random())
        y = game.check_outcome(self.answer(a).sample(rng), "planner", t)
        model.update(x, p, y)
        nat.observe(t, p, y)
        X.append(np.asarray(game.scored_context(self, t, x, p))), P.append(p), Y.append(y)
        lo, hi = game.forecast_low, game.forecast_high
        for s in range(t + 1, end + 1):
            xs = game.present_context(self, s, panel.context(s)) if panel is not None else EMPTY_CONTEXT
            fs = as_forecast(model.predict(xs), lo, hi)
            law = nat.respond(s, xs, fs)
            ps = fs.sample(rng.random())
            ys = law.sample(rng)
            model.update(xs, ps, ys)
            nat.observe(s, ps, ys)
            X.append(np.asarray(xs)), P.append(ps), Y.append(ys)
        Xa = np.array(X, dtype=np.float64).reshape(len(Y), -1)
        return score(game, self._metric, Xa, np.array(P), np.array(Y))

    def observe(self, t, p, y):
        super().observe(t, p, y)
        self._model.update(self._x, p, y)
        for b in self._bases.values():
            b.observe(t, p, y)
        X, P, Y = self._hist
        X.append(np.asarray(self.game.scored_context(self, t, self._x, p))), P.append(p), Y.append(y)


def plan_search(
    game,
    forecaster,
    metric: str,
    T: int,
    seed: int = 0,
    budget: int = BUDGET,
    *,
    seeds: Sequence[int] | None = None,
    forecaster_params: dict | None = None,
    bases: dict[str, list[float]] | None = None,
    depth: int | None = None,
    L: float = 1.0,
    panel: dict | None = None,
    max_seconds: float | None = MAX_SECONDS,
) -> dict:
    """White-box search: play a :class:`Planner` (bases: every :func:`fixed_policies` unless given)
    against the forecaster on the first of ``seeds`` (default: ``seed`` alone); the answers it gave
    become a stored sequence, replayed on the other seeds. ``search_value`` is its mean over them;
    the planned game and the replays count against ``budget`` as well as the rollouts.

    Examples
    --------
    >>> a = plan_search("binary", "last_outcome", "smce_over_T", T=40, budget=250)
    >>> a["kind"], a["search_value"] >= 0.45, a["budget_bound"]
    ('sequence', True, False)
    """
    game = _game(game) if isinstance(game, str) else game
    check_objective(game.name, metric)
    fc = _forecaster(forecaster, forecaster_params)
    seeds = [int(seed)] if seeds is None else [int(s) for s in seeds]
    lim = Limits(budget, max_seconds)
    lim.spend(len(seeds))  # the planned game and the replays on the other seeds
    planner = Planner(game, fc, metric, T, bases or fixed_policies(game.name), lim, seed, depth, L, panel)
    r = _play(game, fc, planner, T, seeds[0])
    extra = {"L": float(L)} if game.name == "quantile" else {"panel": panel} if game.name == "experts" else {}
    attack = attack_dict("sequence", game, T=int(T), answers=planner.answers, **extra)
    values = [value(r, metric, game)]
    values += [value(_play(game, fc, RedTeamNature(attack), T, s), metric, game) for s in seeds[1:]]
    attack.update(
        search_value=_mean(values), seeds=seeds, searcher="planner", bases=sorted(planner.base_attacks), **lim.record()
    )
    return attack


def check_settings(searcher: str, T, budget, seeds, held_out, max_seconds, L, depth) -> None:
    """Refuse a search setting out of range with one line naming it (before anything is searched or written)."""
    if searcher not in ("both", "cma", "planner"):
        raise ValueError(f"searcher={searcher!r}; expected 'both', 'cma' or 'planner'")
    if isinstance(T, bool) or not isinstance(T, (int, np.integer)) or T <= 0:
        raise ValueError(f"T={T!r}: the horizon must be a positive integer, e.g. T=1000")
    for name, v, least, eg in (("seeds", seeds, 1, SEEDS), ("held_out", held_out, 1, HELD_OUT)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < least:
            raise ValueError(f"{name}={v!r}: give a positive number of seeds, e.g. {name}={eg}")
    if isinstance(budget, bool) or not isinstance(budget, (int, np.integer)) or budget < seeds:
        raise ValueError(
            f"budget={budget!r}: give the evaluations (games of T rounds) each searcher may play, an integer >= "
            f"seeds={seeds}, e.g. budget={BUDGET}"
        )
    if max_seconds is not None and not max_seconds > 0:
        raise ValueError(f"max_seconds={max_seconds!r}: give a positive number of seconds, or null for no cap")
    if isinstance(L, bool) or not isinstance(L, (int, float)) or not 0 < L < math.inf:
        raise ValueError(f"L={L!r}: give the Lipschitz constant of nature's CDF as a positive finite number, e.g. L=1")
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth < 1):
        raise ValueError(f"depth={depth!r}: give the planner's rollout length as a positive integer, or null")


def held_out_seeds(search_seeds: Sequence[int], n: int) -> list[int]:
    """The ``n`` seeds after the search seeds: disjoint from them.

    Examples
    --------
    >>> held_out_seeds([0, 1, 2, 3], 3)
    [4, 5, 6]
    """
    return list(range(max(search_seeds) + 1, max(search_seeds) + 1 + n))


def measure(attack: dict, forecaster, metric: str, seeds: Sequence[int], forecaster_params=None, game=None) -> dict:
    """The attack replayed on ``seeds``: its fields ``value`` (the mean), ``held_out`` (the seeds and
    each one's value) and ``certificate`` (where one bounds the metric: its name, the means over the
    same runs of the certified value and of the bound, and whether it held in every run)."""
    values, certs = [], []
    for s in seeds:
        v, r = evaluate(attack, forecaster, metric, s, forecaster_params, game)
        values.append(float(v))
        certs.append(certificate(r, metric))
    named = [c for c in certs if c[2]]
    cert = None
    if len(named) == len(certs):
        cert = {
            "name": named[0][2],
            "value": _mean([c[0] for c in named]),
            "bound": _mean([c[1] for c in named]),
            "holds": all(c[0] <= c[1] for c in named),
        }
    return {"value": _mean(values), "held_out": {"seeds": list(seeds), "values": values}, "certificate": cert}


def search(
    game,
    forecaster,
    metric: str,
    T: int,
    seed: int = 0,
    budget: int = BUDGET,
    searcher: str = "both",
    *,
    seeds: int = SEEDS,
    held_out: int = HELD_OUT,
    forecaster_params: dict | None = None,
    L: float = 1.0,
    panel: dict | None = None,
    depth: int | None = None,
    max_seconds: float | None = MAX_SECONDS,
) -> list[dict]:
    """Search a forecaster's worst case; return the attacks found (best held-out value first).

    ``searcher``: ``cma`` (black box), ``planner`` (white box) or ``both`` (CMA-ES, then the
    planner with the policy CMA-ES found among its bases). ``budget`` counts each searcher's
    evaluations (see :data:`BUDGET`); ``max_seconds`` caps the wall-clock time of the whole search.
    A probe game decides the search seeds: ``seed`` .. ``seed + seeds - 1`` against a randomized
    forecaster (:func:`randomizes`), ``seed`` alone otherwise. Each attack gets its search value
    (the mean over the search seeds, ``search_value``) and the replay on ``held_out`` seeds after
    them (:func:`measure`: ``value``, ``held_out``, ``certificate``), the settings, what the limits
    did and its CPU seconds.
    """
    check_settings(searcher, T, budget, seeds, held_out, max_seconds, L, depth)
    game = _game(game) if isinstance(game, str) else game
    check_objective(game.name, metric)
    kw = {"forecaster_params": forecaster_params, "L": L, "panel": panel}
    start, wall, attacks = time.process_time(), time.monotonic(), []
    randomized = randomizes(game, forecaster, T, seed, forecaster_params, L, panel)
    search_seeds = list(range(int(seed), int(seed) + (int(seeds) if randomized else 1)))
    if searcher in ("both", "cma"):
        attacks.append(
            cma_search(game, forecaster, metric, T, seed, budget, seeds=search_seeds, max_seconds=max_seconds, **kw)
        )
    if searcher in ("both", "planner"):
        bases = fixed_policies(game.name)
        if attacks:
            bases = {"cma": attacks[0]["theta"], **bases}
        left = None if max_seconds is None else max(max_seconds - (time.monotonic() - wall), 1e-9)
        attacks.append(
            plan_search(
                game,
                forecaster,
                metric,
                T,
                seed,
                budget,
                seeds=search_seeds,
                bases=bases,
                depth=depth,
                max_seconds=left,
                **kw,
            )
        )
    name = forecaster if isinstance(forecaster, str) else forecaster.name
    for a in attacks:
        a.update(measure(a, forecaster, metric, held_out_seeds(search_seeds, held_out), forecaster_params, game))
        a.update(
            forecaster=name,
            forecaster_params=forecaster_params or {},
            metric=metric,
            seed=int(seed),
            randomized=randomized,
            cpu_seconds=round(time.process_time() - start, 3),
            budget=int(budget),
            max_seconds=max_seconds,
        )
    return sorted(attacks, key=lambda a: -a["value"])
