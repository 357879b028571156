"""Searchers for a forecaster's worst case: black-box policy search (CMA-ES) and white-box planning.

Both return a stored attack (:mod:`arena.redteam.policy`) whose ``value`` is the metric the
arena's referee reports when the attack is replayed as a nature (same seed, same game): a
lower bound on the forecaster's worst case at that T.

- :func:`cma_search` tunes the weights of a policy (features of the announced forecast and of
  the history -> outcome law) with CMA-ES (the ``cma`` package), scoring each candidate by
  playing it with :func:`arena.play`. It never looks inside the forecaster, so it works against
  randomized forecasters (it sees the announced distribution, never the coin).
- :func:`plan_search` plays a :class:`Planner` nature that clones the forecaster
  (:meth:`arena.protocols.Forecaster.clone`) and, every round, tries each candidate answer
  followed by rollouts of a few base policies to the horizon, scoring the finished game with
  the metric (a rollout algorithm: against a deterministic forecaster, with deterministic base
  policies, it does at least as well as its best base policy). Randomized forecasts are sampled
  with the planner's own generator.

A budget counts simulated rounds (a game of T rounds played costs T), so that the same seed gives
the same attack on any machine; a cap on process CPU seconds (``time.process_time``) stops a
search that would run too long. Every random choice is seeded from the root seed by name
(:func:`arena.seeding.derive_seed`).

References
----------
Perdomo & Recht, §2-§10; Hansen, "The CMA Evolution Strategy: A
Tutorial" (2016); Bertsekas, "Rollout algorithms" (1997).
"""

from __future__ import annotations

import copy
import math
import time

import numpy as np

from arena.protocols import EMPTY_CONTEXT, Forecast, as_forecast
from arena.redteam.objective import certificate, check_objective, score, value
from arena.redteam.policy import FEATURES, RedTeamNature, attack_dict
from arena.seeding import derive_rng, derive_seed

#: Default work of a whole search (both searchers) against one forecaster, in simulated rounds:
#: CMA-ES plays budget / (2T) games (at most MAX_GAMES), the planner simulates budget / 2 rounds in
#: its rollouts. Counting rounds, not seconds, keeps a search reproducible: the same seed gives the
#: same attack on any machine.
BUDGET = 4_000_000
#: Default cap on a whole search's process CPU seconds. A search that reaches it stops early, and
#: then its result depends on the machine's speed: benchmarks/redteam.py reports which do.
MAX_CPU = 120.0
#: CMA-ES plays at most this many games (short horizons would otherwise spend the budget on
#: many more games than the search needs).
MAX_GAMES = 2500


def _game(game, game_params: dict | None = None):
    from arena.games import get_game

    return get_game(game, **(game_params or {}))


def _forecaster(forecaster, params: dict | None):
    from arena.registry import make_forecaster

    return make_forecaster(forecaster, **(params or {}))


def fixed_policies(game: str) -> dict[str, list[float]]:
    """Named policies (weights) that are the known worst cases of simple forecasters; the planner's
    default bases.

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


def cma_search(
    game,
    forecaster,
    metric: str,
    T: int,
    seed: int = 0,
    budget: int = BUDGET // 2,
    *,
    forecaster_params: dict | None = None,
    L: float = 1.0,
    panel: dict | None = None,
    sigma0: float = 3.0,
    popsize: int | None = None,
    max_cpu: float | None = MAX_CPU,
    max_games: int = MAX_GAMES,
) -> dict:
    """Black-box search: CMA-ES on the policy weights, each candidate scored by playing it.

    Plays at most ``min(budget // T, max_games)`` games (whole generations), for at most ``max_cpu`` CPU seconds;
    restarts with a doubled population when CMA-ES stops early (IPOP). Returns the best policy
    found, with ``value`` (its metric) and ``evaluations``.

    Examples
    --------
    >>> a = cma_search("binary", "constant", "smce_over_T", T=50, budget=20_000)
    >>> a["value"]
    0.5
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
    start, games = time.process_time(), max(min(int(budget) // int(T), int(max_games)), 1)
    n = len(FEATURES[game.name])
    best, best_theta, evals, restart = -math.inf, np.zeros(n), 0, 0
    pop = popsize or 4 + int(3 * math.log(n))

    def more(k: int) -> bool:
        return evals + k <= games and (max_cpu is None or time.process_time() - start < max_cpu)

    while more(pop):
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
        while not es.stop() and more(pop):
            thetas = es.ask()
            vals = []
            for th in thetas:
                v = value(_play(game, fc, RedTeamNature(_policy(game, th, T, L, panel)), T, seed), metric, game)
                vals.append(-v if math.isfinite(v) else 0.0)
                evals += 1
                if v > best:
                    best, best_theta = v, np.array(th)
            es.tell(thetas, vals)
        restart, pop = restart + 1, pop * 2
    attack = _policy(game, best_theta, T, L, panel)
    attack.update(value=float(best), evaluations=evals, searcher="cma")
    return attack


class Planner(RedTeamNature):
    """A white-box nature: it clones the forecaster and plans each answer by rollouts.

    In round t it has a clone of the forecaster in the very state of the real one (kept in step
    with the realized rounds). For each candidate answer (binary games: y = 0 or 1; quantile: all
    mass just below, around or just above the forecast) it copies the clone, plays the answer,
    then each base policy to the horizon (``depth`` rounds at most), and scores the game with the
    metric; it answers the candidate of the best rollout. Once its rollouts have simulated
    ``budget`` rounds (or past ``max_cpu`` CPU seconds) it answers as the base policy that did
    best. The answers it gave are :attr:`answers` (a replayable sequence).

    Parameters
    ----------
    game, forecaster, metric, T : what to attack; ``forecaster`` is the instance the game plays.
    bases : named policy weights (:func:`fixed_policies`) for the rollouts.
    seed : root seed of the planner's own generator (the coins of its rollouts).
    budget : rounds its rollouts may simulate. depth : rollout length (None: to the horizon).
    max_cpu : CPU seconds (None: no cap).
    """

    def __init__(
        self,
        game,
        forecaster,
        metric: str,
        T: int,
        bases: dict[str, list[float]],
        seed: int = 0,
        budget: int = BUDGET // 2,
        depth: int | None = None,
        L: float = 1.0,
        panel: dict | None = None,
        max_cpu: float | None = MAX_CPU,
    ):
        super().__init__(_policy(game, [0.0] * len(FEATURES[game.name]), T, L, panel))
        self.adaptive = True
        self._target, self._metric, self._T = forecaster, metric, int(T)
        self._base_attacks = {k: _policy(game, th, T, L, panel) for k, th in bases.items()}
        self._seed, self._budget, self._depth, self._max_cpu = int(seed), int(budget), depth, max_cpu
        self.answers: list[float] = []

    def reset(self, rng):
        super().reset(rng)
        self._model = self._target.clone()  # the forecaster was reset before nature (arena.runner.play)
        self._bases = {}
        for k, a in self._base_attacks.items():
            b = RedTeamNature(a)
            b.game = self.game
            b.reset(rng)
            self._bases[k] = b
        self._rng = derive_rng(self._seed, "redteam", "planner")
        self._hist = ([], [], [])  # scored contexts, realized forecasts, outcomes
        self._start, self._best_base, self.answers = time.process_time(), next(iter(self._bases)), []
        self.simulated = 0

    def _candidates(self, f: Forecast) -> list[float]:
        if self.game.name == "quantile":
            m, w = f.mean, 1.0 / self.L
            return [m - w, m - 0.5 * w, min(f.points) + 1e-9 * w]
        return [0.0, 1.0]

    def respond(self, t, x, forecast):
        self._x, self._mean = x, forecast.mean
        self._model.predict(x)  # the real forecaster predicted: the clone makes the same call
        moves = {k: b.decide(t, x, forecast) for k, b in self._bases.items()}
        if self.simulated >= self._budget or (
            self._max_cpu is not None and time.process_time() - self._start > self._max_cpu
        ):
            answer = moves[self._best_base]
        else:
            best = -math.inf
            for a in self._candidates(forecast):
                for k, b in self._bases.items():
                    v = self._rollout(t, x, forecast, a, b)
                    if v > best:
                        best, answer, self._best_base = v, a, k
        self.answers.append(float(answer))
        return self.answer(answer)

    def _rollout(self, t: int, x, f: Forecast, a: float, base: RedTeamNature) -> float:
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
        end = self._T if self._depth is None else min(self._T, t + self._depth)
        self.simulated += end - t + 1
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
    budget: int = BUDGET // 2,
    *,
    forecaster_params: dict | None = None,
    bases: dict[str, list[float]] | None = None,
    depth: int | None = None,
    L: float = 1.0,
    panel: dict | None = None,
    max_cpu: float | None = MAX_CPU,
) -> dict:
    """White-box search: play a :class:`Planner` against the forecaster; the answers it gave
    become a stored sequence (which replays the same game with the same seed).

    Examples
    --------
    >>> a = plan_search("binary", "last_outcome", "smce_over_T", T=40, budget=10_000)
    >>> a["kind"], a["value"] >= 0.45
    ('sequence', True)
    """
    game = _game(game) if isinstance(game, str) else game
    check_objective(game.name, metric)
    fc = _forecaster(forecaster, forecaster_params)
    planner = Planner(game, fc, metric, T, bases or fixed_policies(game.name), seed, budget, depth, L, panel, max_cpu)
    start = time.process_time()
    r = _play(game, fc, planner, T, seed)
    extra = {"L": float(L)} if game.name == "quantile" else {"panel": panel} if game.name == "experts" else {}
    attack = attack_dict("sequence", game, T=int(T), answers=planner.answers, **extra)
    attack.update(
        value=value(r, metric, game),
        searcher="planner",
        bases=sorted(planner._base_attacks),
        simulated_rounds=planner.simulated,
        planning_seconds=round(time.process_time() - start, 3),
    )
    return attack


def _check_settings(searcher: str, T, budget, max_cpu, L, depth) -> None:
    """Refuse a search setting out of range with one line naming it (before anything is searched or written)."""
    if searcher not in ("both", "cma", "planner"):
        raise ValueError(f"searcher={searcher!r}; expected 'both', 'cma' or 'planner'")
    if isinstance(T, bool) or not isinstance(T, (int, np.integer)) or T <= 0:
        raise ValueError(f"T={T!r}: the horizon must be a positive integer, e.g. T=1000")
    if isinstance(budget, bool) or not isinstance(budget, (int, np.integer)) or budget < T:
        raise ValueError(
            f"budget={budget!r}: give the rounds the search may simulate, an integer >= T={T}, e.g. budget={BUDGET}"
        )
    if max_cpu is not None and not max_cpu > 0:
        raise ValueError(f"max_cpu={max_cpu!r}: give a positive number of CPU seconds, or None for no cap")
    if isinstance(L, bool) or not isinstance(L, (int, float)) or not 0 < L < math.inf:
        raise ValueError(f"L={L!r}: give the Lipschitz constant of nature's CDF as a positive finite number, e.g. L=1")
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth < 1):
        raise ValueError(f"depth={depth!r}: give the planner's rollout length as a positive integer, or null")


def search(
    game,
    forecaster,
    metric: str,
    T: int,
    seed: int = 0,
    budget: int = BUDGET,
    searcher: str = "both",
    *,
    forecaster_params: dict | None = None,
    L: float = 1.0,
    panel: dict | None = None,
    depth: int | None = None,
    max_cpu: float | None = MAX_CPU,
) -> list[dict]:
    """Search a forecaster's worst case; return the attacks found (best first), each replayed.

    ``searcher``: ``cma`` (black box), ``planner`` (white box) or ``both`` (CMA-ES with half the
    budget and of ``max_cpu``, then the planner with the rest, the policy CMA-ES found among its
    base policies). ``budget`` counts simulated rounds (see :data:`BUDGET`). Each
    attack gets the metric its replay reaches (``value``), the certificate that bounds the
    metric where the forecaster claims one (``certificate``: name, value and bound, on the
    metric's scale), the search's settings and its CPU seconds.
    """
    _check_settings(searcher, T, budget, max_cpu, L, depth)
    game = _game(game) if isinstance(game, str) else game
    check_objective(game.name, metric)
    kw = {"forecaster_params": forecaster_params, "L": L, "panel": panel}
    start, attacks = time.process_time(), []
    both = searcher == "both"
    if searcher in ("both", "cma"):
        cap = None if max_cpu is None else max_cpu / 2 if both else max_cpu
        attacks.append(
            cma_search(game, forecaster, metric, T, seed, budget // 2 if both else budget, max_cpu=cap, **kw)
        )
    if searcher in ("both", "planner"):
        bases = fixed_policies(game.name)
        if attacks:
            bases = {"cma": attacks[0]["theta"], **dict(list(bases.items())[:1])}
        cap = None if max_cpu is None else max(max_cpu - (time.process_time() - start), 0.0)
        attacks.append(
            plan_search(
                game,
                forecaster,
                metric,
                T,
                seed,
                budget // 2 if both else budget,
                bases=bases,
                depth=depth,
                max_cpu=cap,
                **kw,
            )
        )
    name = forecaster if isinstance(forecaster, str) else forecaster.name
    for a in attacks:
        v, r = evaluate(a, forecaster, metric, seed, forecaster_params, game)
        cv, cb, cn = certificate(r, metric)
        a.update(
            forecaster=name,
            forecaster_params=forecaster_params or {},
            metric=metric,
            seed=int(seed),
            value=v,
            certificate={"name": cn, "value": cv, "bound": cb} if cn else None,
            cpu_seconds=round(time.process_time() - start, 3),
            budget=int(budget),
            max_cpu=max_cpu,
        )
    return sorted(attacks, key=lambda a: -a["value"])
