"""Each check of arena.checks against a deliberately broken fake: it must fail, loudly and precisely.

The fakes are never registered (no ``@register``), so the global registries stay clean;
the checks take instances and classes directly.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from arena import checks
from arena.checks import CheckFailure, NotApplicable
from arena.env import ForecastEnv
from arena.games import GAMES
from arena.protocols import Bernoulli, Forecast, Forecaster, Nature, OutcomeLaw
from arena.registry import FORECASTERS, NATURES

T = 30


# --------------------------------------------------------------------------- good players


class Half(Forecaster):
    name = "fake_half"

    def predict(self, x):
        return 0.5

    def update(self, x, p, y):
        pass


class Follower(Forecaster):
    """Honest: the running mean of past outcomes."""

    name = "fake_follower"

    def reset(self, rng):
        super().reset(rng)
        self._sum, self._n = 0.0, 0

    def predict(self, x):
        return (self._sum + 1) / (self._n + 2)

    def update(self, x, p, y):
        self._sum += y
        self._n += 1


class Coin(Nature):
    name = "fake_coin"

    def respond(self, t, x, forecast):
        return Bernoulli(0.4)


# --------------------------------------------------------------------------- broken forecasters


def _peek_env() -> ForecastEnv:
    """Cheat: find the environment the arena is running in the caller's stack."""
    frame = sys._getframe(1)
    while frame is not None:
        for value in frame.f_locals.values():
            if isinstance(value, ForecastEnv):
                return value
        frame = frame.f_back
    raise RuntimeError("no ForecastEnv on the stack")


class Peeker(Follower):
    """Looks at the outcome nature will play this round before announcing its forecast."""

    name = "fake_peeker"

    def predict(self, x):
        env = _peek_env()
        y = env.nature.respond(env.t, x, Forecast.point(0.5))
        return float(y) if not isinstance(y, OutcomeLaw) else super().predict(x)


FUTURE: list[float] = []


class FutureReader(Follower):
    """Reads a global list of outcomes that a companion nature fills in before it is asked."""

    name = "fake_future_reader"

    def reset(self, rng):
        super().reset(rng)
        self._t = 0

    def predict(self, x):
        self._t += 1
        env = _peek_env()
        FUTURE[:] = [env.nature.respond(t, x, None) for t in range(1, env.T + 1)]
        return FUTURE[self._t - 1]


class NaNForecaster(Half):
    name = "fake_nan"

    def predict(self, x):
        return math.nan


class TooHigh(Half):
    name = "fake_too_high"

    def predict(self, x):
        return 1.5


class LateTooHigh(Follower):
    """In range for 9 rounds, then 1.5."""

    name = "fake_late"

    def predict(self, x):
        return 1.5 if self._n == 9 else super().predict(x)


class StringForecaster(Half):
    name = "fake_string"

    def predict(self, x):
        return "0.5"


class BadInternal(Half):
    name = "fake_bad_internal"

    def predict(self, x):
        return Forecast((0.5,), (1.0,), internal=float("inf"))


class MalformedForecast(Half):
    name = "fake_malformed"

    def predict(self, x):
        return Forecast((0.2, 0.8), (0.5, 0.6))


class Crasher(Half):
    name = "fake_crasher"

    def predict(self, x):
        raise ZeroDivisionError("oops")


class ForgetfulReset(Forecaster):
    """Its state lives from the constructor on: reset() does not clear it."""

    name = "fake_forgetful"

    def __init__(self):
        self._sum, self._n = 0.0, 0

    def predict(self, x):
        return (self._sum + 1) / (self._n + 2)

    def update(self, x, p, y):
        self._sum += y
        self._n += 1


class GlobalRandom(Half):
    name = "fake_global_random"

    def predict(self, x):
        return float(np.random.random())


class PythonRandom(Half):
    name = "fake_python_random"

    def predict(self, x):
        import random

        return random.random()


class FalseClaim(Half):
    """Claims the bit-prediction certificate but always says 1/2."""

    name = "fake_false_claim"
    claims = ("bit",)


class UnknownClaim(Half):
    name = "fake_unknown_claim"
    claims = ("world_peace",)


class RandomInConstructor(Half):
    name = "fake_random_ctor"

    def __init__(self, c: float = 0.5):
        self.c = c
        self._noise = np.random.random()


class FreshEntropy(Half):
    name = "fake_fresh_entropy"

    def __init__(self):
        self.offset = float(np.random.default_rng().random())


class OpensFile(Half):
    name = "fake_opens_file"

    def __init__(self, path: str = __file__):
        self.path = path
        with open(path) as fh:
            self._text = fh.read(10)


class ArrayParam(Half):
    name = "fake_array_param"

    def __init__(self, w=(1.0, 2.0)):
        self.w = np.asarray(w)


class RenamedParam(Half):
    name = "fake_renamed"

    def __init__(self, c: float = 0.5):
        self.level = c


class PublicState(Follower):
    name = "fake_public_state"

    def update(self, x, p, y):
        super().update(x, p, y)
        self.rounds_seen = self._n


class HalfWithFastPath(Half):
    """Offers the compiled oblivious path, honestly."""

    name = "fake_fast_half"

    def play_oblivious(self, X, y, u):
        p = np.full(len(y), 0.5)
        return p, p, p


class SlipperyFastPath(HalfWithFastPath):
    """Its oblivious path announces 0.6 in round 5, where the step loop announces 0.5."""

    name = "fake_slippery"

    def play_oblivious(self, X, y, u):
        p = np.full(len(y), 0.5)
        p[4] = 0.6
        return p, p, p


# --------------------------------------------------------------------------- broken natures


class PeekingOblivious(Nature):
    """Declares adaptive = False but answers the opposite of the forecast."""

    name = "fake_peeking_oblivious"

    def respond(self, t, x, forecast):
        return 1.0 if forecast.mean < 0.5 else 0.0


class ObservingOblivious(Nature):
    """Declares adaptive = False but its law follows the realized forecasts it observes."""

    name = "fake_observing_oblivious"

    def reset(self, rng):
        super().reset(rng)
        self._last = 0.5

    def respond(self, t, x, forecast):
        return Bernoulli(0.25 + 0.5 * self._last)

    def observe(self, t, p, y):
        self._last = p


class Adaptive(PeekingOblivious):
    name = "fake_adaptive"
    adaptive = True


class OutcomeTwo(Coin):
    name = "fake_outcome_two"

    def respond(self, t, x, forecast):
        return 2.0 if t == 3 else 1.0


class NaNOutcome(Coin):
    name = "fake_nan_outcome"

    def respond(self, t, x, forecast):
        return math.nan


class BadLaw(Coin):
    name = "fake_bad_law"

    def respond(self, t, x, forecast):
        return Bernoulli(1.5)


class LyingLaw(OutcomeLaw):
    """Says P(y = 1) = 0, yet samples 1."""

    def sample(self, rng):
        return 1.0

    def cdf(self, v):
        return 0.0 if v < 0 else 1.0


class Liar(Coin):
    name = "fake_liar"

    def respond(self, t, x, forecast):
        return LyingLaw()


class WrongContextShape(Coin):
    name = "fake_wrong_shape"
    context_dim = 2

    def context(self, t):
        return np.zeros(3)


class NaNContext(Coin):
    name = "fake_nan_context"
    context_dim = 1

    def context(self, t):
        return np.array([math.nan]) if t == 4 else np.ones(1)


class NegativeDim(Coin):
    name = "fake_negative_dim"
    context_dim = -1


class GlobalRandomNature(Coin):
    name = "fake_global_random_nature"
    context_dim = 1

    def context(self, t):
        return np.array([np.random.standard_normal()])


class ForgetfulNature(Coin):
    """Counts rounds from the constructor on; reset() forgets to restart the count."""

    name = "fake_forgetful_nature"

    def __init__(self):
        self._t = 0

    def respond(self, t, x, forecast):
        self._t += 1
        return Bernoulli(0.75 if self._t > T else 0.25)


class ReadsFileInConstructor(Coin):
    name = "fake_reads_file"

    def __init__(self, path: str = __file__):
        self.path = path
        self._rows = Path(path).read_text().splitlines()


# --------------------------------------------------------------------------- the fakes stay private


def test_fakes_are_not_registered():
    fakes = {
        cls.name
        for cls in globals().values()
        if isinstance(cls, type) and str(getattr(cls, "name", "")).startswith("fake_")
    }
    assert fakes and not fakes & (set(FORECASTERS) | set(NATURES))


# --------------------------------------------------------------------------- good players pass


@pytest.mark.parametrize("check", checks.all_checks("forecaster"), ids=lambda c: c.__name__)
@pytest.mark.parametrize("plugin", [Half(), Follower, checks.RandomizedProbe()], ids=["instance", "class", "random"])
def test_honest_forecasters_pass(check, plugin):
    try:
        check(plugin)
    except NotApplicable as exc:
        assert "claims no certificate" in str(exc) or "no compiled oblivious path" in str(exc)


@pytest.mark.parametrize("check", checks.all_checks("nature"), ids=lambda c: c.__name__)
@pytest.mark.parametrize(
    "plugin", [Coin(), checks.LogisticProbe, checks.ContrarianProbe()], ids=["instance", "class", "adaptive"]
)
def test_honest_natures_pass(check, plugin):
    try:
        check(plugin)
    except NotApplicable as exc:  # (check_laws_agree_with_samples: the contrarian answers plain outcomes)
        assert "is adaptive" in str(exc) or "answers with plain outcomes, not laws" in str(exc)


# --------------------------------------------------------------------------- forecaster checks


@pytest.mark.parametrize(
    ("fake", "match"),
    [
        (NaNForecaster, r"fake_nan.*round t=1: forecast nan is outside the forecast space \[0\.0, 1\.0\]"),
        (TooHigh, r"fake_too_high.*TooHigh.*round t=1: forecast 1\.5 is outside the forecast space"),
        (LateTooHigh, r"round t=10: forecast 1\.5 is outside"),
        (StringForecaster, r"round t=1: predict returned '0\.5' of type str; return a float or an arena\.Forecast"),
        (BadInternal, r"round t=1: internal forecast inf is not a finite number in \[0\.0, 1\.0\]"),
        (MalformedForecast, r"fake_malformed.*forfeited at round t=1.*probabilities \(0\.5, 0\.6\).*sum to 1"),
        (Crasher, r"fake_crasher.*forfeited at round t=1.*predict raised ZeroDivisionError: oops"),
    ],
)
def test_check_forecasts_in_range_catches(fake, match):
    with pytest.raises(CheckFailure, match=match):
        checks.check_forecasts_in_range(fake(), T=T)


@pytest.mark.parametrize("fake", [Peeker, FutureReader])
def test_check_no_lookahead_catches_a_peeking_forecaster(fake):
    with pytest.raises(
        CheckFailure,
        match=r"check_no_lookahead: forecaster 'fake_\w+' .* looked ahead: two outcome "
        r"sequences that differ from round 1 on got "
        r"different forecasts at round t=1, announced forecast mean",
    ):
        checks.check_no_lookahead(fake(), T=T)


@pytest.mark.parametrize("game", ["quantile", "experts"])
def test_check_no_lookahead_works_in_every_game(game):
    """Outside the binary game the scripts come from a registered nature of the game."""

    class GamePeeker(Peeker):
        name = "fake_game_peeker"
        games = (game,)

    class GameHalf(Half):
        name = "fake_game_half"
        games = (game,)

    if game not in GAMES:
        pytest.skip(f"the {game!r} game is not registered in this build")
    checks.check_no_lookahead(GameHalf(), T=T)
    with pytest.raises(CheckFailure, match=r"fake_game_peeker.* looked ahead: .* round t=1, announced forecast mean"):
        checks.check_no_lookahead(GamePeeker(), T=T)


def test_check_no_lookahead_names_the_split_where_the_forecasts_part():
    with pytest.raises(CheckFailure, match=r"agree on rounds 1\.\.5 and differ from round 6 on .* round t=6"):
        checks.check_no_lookahead(Peeker(), T=T, splits=[5])


def test_check_no_lookahead_passes_a_forecaster_that_uses_the_past():
    checks.check_no_lookahead(Follower(), T=T)  # its forecasts differ only after the split


@pytest.mark.parametrize("fake", [GlobalRandom, PythonRandom])
def test_check_same_seed_same_game_catches_global_randomness(fake):
    with pytest.raises(
        CheckFailure,
        match=r"check_same_seed_same_game: forecaster 'fake_\w+_random'.* two different "
        r"games against nature 'probe_logistic' with the same seed=0: "
        r"first difference "
        r"at round t=1, announced forecast mean: .*np\.random",
    ):
        checks.check_same_seed_same_game(fake(), T=T)


def test_check_reset_clears_state_catches_a_forgetful_forecaster():
    with pytest.raises(
        CheckFailure,
        match=r"check_reset_clears_state: forecaster 'fake_forgetful'.* played "
        r"differently "
        r"after reset\(\) than a fresh instance .*first difference at round t=1, "
        r"announced forecast mean",
    ):
        checks.check_reset_clears_state(ForgetfulReset(), T=T)


def test_check_claims_hold_catches_a_false_claim():
    with pytest.raises(
        CheckFailure,
        match=r"fake_false_claim.* claims the 'bit' certificate, which failed against "
        r"nature 'probe_coin' \(T=30, seed=0\): value [\d.]+ > bound 1\.0",
    ):
        checks.check_claims_hold(FalseClaim(), T=T)


def test_check_claims_hold_catches_an_unknown_claim():
    with pytest.raises(CheckFailure, match=r"claims an unknown certificate 'world_peace'"):
        checks.check_claims_hold(UnknownClaim(), T=T)


def test_check_claims_hold_reports_but_does_not_assert_probabilistic_certificates():
    from forecasters.defensive import K29Rounded

    report = checks.check_claims_hold(K29Rounded(N=2, delta=0.999), T=40, seeds=[0])
    rounded = [r for r in report if r["certificate"] == "rounded_calibration"]
    assert rounded and all(r["probabilistic"] for r in rounded)
    assert {r["nature"] for r in report} >= {"probe_coin", "probe_contrarian"}


def test_check_claims_hold_is_not_applicable_without_claims():
    with pytest.raises(NotApplicable, match="claims no certificate"):
        checks.check_claims_hold(Half())


@pytest.mark.parametrize(
    ("plugin", "kw", "match"),
    [
        (RandomInConstructor, {}, r"constructing forecaster 'fake_random_ctor'.* consumed global randomness"),
        (
            FreshEntropy,
            {},
            (
                r"two instances of forecaster 'fake_fresh_entropy'.* have different params\(\): "
                r"\{\"offset\": [\d.]+\} vs"
            ),
        ),
        (OpensFile, {}, r"constructing forecaster 'fake_opens_file'.* opened .*test_checks\.py.*read files in reset"),
        (ReadsFileInConstructor, {}, r"constructing nature 'fake_reads_file'.* opened"),
        (ArrayParam, {}, r"params\(\)\['w'\] = array\(\[1\., 2\.\]\) \(type ndarray\) is not JSON-serializable"),
        (
            RenamedParam,
            {"c": 0.3},
            (
                r"fake_renamed.*: rebuilding it as RenamedParam\(\*\*params\(\)\) with "
                r"params\(\)=\{\"level\": 0\.3\} "
                r"raised TypeError"
            ),
        ),
        (PublicState, {}, r"params\(\) changed after playing 20 rounds: \{\} before, \{\"rounds_seen\": 20\} after"),
    ],
)
def test_check_constructor_stores_only_catches(plugin, kw, match):
    with pytest.raises(CheckFailure, match=match):
        checks.check_constructor_stores_only(plugin, params=kw)


def test_checks_accept_a_class_with_params_and_say_when_it_cannot_be_built():
    checks.check_forecasts_in_range(checks.ConstantProbe, params={"c": 0.2}, T=5)
    with pytest.raises(CheckFailure, match=r"cannot be constructed with params=\{'bogus': 1\}.*pass params="):
        checks.check_forecasts_in_range(checks.ConstantProbe, params={"bogus": 1})


def test_checks_leave_the_global_random_streams_alone():
    import random

    np.random.seed(3)
    random.seed(3)
    before = np.random.random(), random.random()
    np.random.seed(3)
    random.seed(3)
    checks.check_same_seed_same_game(Half(), T=5)  # plays with the global streams reseeded
    assert (np.random.random(), random.random()) == before


def test_check_fast_path_matches_step_loop_catches_a_diverging_fast_path():
    checks.check_fast_path_matches_step_loop(HalfWithFastPath(), T=T)
    with pytest.raises(
        CheckFailure,
        match=r"fake_slippery.*'s play_oblivious recorded a different game from the step "
        r"loop's against nature 'probe_coin' \(T=30, seed=0\): first difference at "
        r"round t=5, announced forecast mean: 0\.6 vs 0\.5 \(fast path first\)",
    ):
        checks.check_fast_path_matches_step_loop(SlipperyFastPath(), T=T)


def test_check_fast_path_matches_step_loop_needs_a_fast_path():
    with pytest.raises(NotApplicable, match=r"fake_half.* has no compiled oblivious path \(play_oblivious\)"):
        checks.check_fast_path_matches_step_loop(Half())


# --------------------------------------------------------------------------- nature checks


@pytest.mark.parametrize(
    ("fake", "match"),
    [
        (
            OutcomeTwo,
            (
                r"nature 'fake_outcome_two'.* forfeited at round t=3 .*returned outcome 2\.0 at t=3; "
                r"the binary game needs 0 or 1"
            ),
        ),
        (NaNOutcome, r"nature 'fake_nan_outcome'.* forfeited at round t=1 .*returned outcome nan.*\(NaN\)"),
        # issue 12: Bernoulli(1.5) is a protocol error when it is built (it used to reach the check as P(y = 1) = 1.5)
        (
            BadLaw,
            r"fake_bad_law.* forfeited at round t=1 .*ProtocolError: Bernoulli\(p=1\.5\): p must be a probability",
        ),
        (Liar, r"fake_liar.* at round t=1: its law gives P\(y = 1\) = 0\.0 but sampling it gave y = 1\.0"),
    ],
)
def test_check_outcomes_valid_catches(fake, match):
    with pytest.raises(CheckFailure, match=match):
        checks.check_outcomes_valid(fake(), T=T)


@pytest.mark.parametrize(
    ("fake", "match"),
    [
        # its first context comes with the reset: a forfeit at round 0 (reset), like any plugin failing there
        (
            WrongContextShape,
            (
                r"nature 'fake_wrong_shape' .*forfeited at round t=0 .*\(seed=0\): reset raised "
                r"ProtocolError: .*returned context array\(\[0\., 0\., 0\.\]\) "
                r"at t=1; expected 2 finite floats"
            ),
        ),
        (
            NaNContext,
            r"fake_nan_context.* forfeited .*returned context array\(\[nan\]\) at t=4; expected 1 finite floats",
        ),
        (NegativeDim, r"fake_negative_dim.*\.context_dim = -1; it must be an integer >= 0"),
    ],
)
def test_check_contexts_shape_catches(fake, match):
    with pytest.raises(CheckFailure, match=match):
        checks.check_contexts_shape(fake(), T=T)


@pytest.mark.parametrize(
    ("fake", "match"),
    [
        (
            PeekingOblivious,
            (
                r"fake_peeking_oblivious.* declares adaptive = False but its play depends on the forecaster: "
                r"against the probe forecasters 'constant 0' and 'constant 1' with seed=0, first difference "
                r"at round t=1, outcome y_t: 1\.0 vs 0\.0"
            ),
        ),
        (
            ObservingOblivious,
            (
                r"fake_observing_oblivious.* declares adaptive = False .*round t=2, P\(y_t = 1\) of "
                r"nature's law: 0\.25 vs 0\.75"
            ),
        ),
    ],
)
def test_check_oblivious_ignores_forecast_catches(fake, match):
    with pytest.raises(CheckFailure, match=match):
        checks.check_oblivious_ignores_forecast(fake(), T=T)


def test_check_oblivious_ignores_forecast_does_not_apply_to_adaptive_natures():
    with pytest.raises(NotApplicable, match=r"nature 'fake_adaptive'.* is adaptive \(adaptive = True\)"):
        checks.check_oblivious_ignores_forecast(Adaptive())


def test_check_same_seed_same_game_catches_a_nature_using_global_randomness():
    with pytest.raises(
        CheckFailure,
        match=r"nature 'fake_global_random_nature'.* two different games against "
        r"forecaster 'probe_mean' with the same seed=0: first difference at "
        r"round t=1, context x_t",
    ):
        checks.check_same_seed_same_game(GlobalRandomNature(), T=T)


def test_check_reset_clears_state_catches_a_forgetful_nature():
    with pytest.raises(
        CheckFailure,
        match=r"nature 'fake_forgetful_nature'.* played differently after reset\(\) "
        r"than a fresh instance .*round t=1, P\(y_t = 1\) of nature's law: "
        r"0\.75 vs 0\.25",
    ):
        checks.check_reset_clears_state(ForgetfulNature(), T=T)


# --------------------------------------------------------------------------- gymnasium


class OutOfSpaceEnv(gym.Env):
    """Its first observation lies outside its own observation space."""

    observation_space = gym.spaces.Box(-1.0, 1.0, shape=(1,), dtype=np.float64)
    action_space = gym.spaces.Box(0.0, 1.0, shape=(1,), dtype=np.float64)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.full(1, 5.0), {}

    def step(self, action):
        return np.zeros(1), 0.0, True, False, {}


class NoSeedEnv(gym.Env):
    """Ignores reset(seed=...): its first observation is random every time."""

    observation_space = gym.spaces.Box(-1.0, 1.0, shape=(1,), dtype=np.float64)
    action_space = gym.spaces.Box(0.0, 1.0, shape=(1,), dtype=np.float64)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.random.default_rng().uniform(-1, 1, 1), {}

    def step(self, action):
        return np.zeros(1), 0.0, True, False, {}


def test_check_env_catches_a_broken_environment():
    with pytest.raises(
        CheckFailure,
        match=r"check_env: gymnasium's check_env failed for .*OutOfSpaceEnv.*"
        r"not within the observation space",
    ):
        checks.check_env(OutOfSpaceEnv())


def test_check_env_catches_an_environment_that_ignores_the_seed():
    with pytest.raises(
        CheckFailure,
        match=r"check_env: .*NoSeedEnv.* is not deterministic: reset\(seed=123\) "
        r"returned array\(\[.*\]\) and then array",
    ):
        checks.check_env(NoSeedEnv())


def test_check_env_runs_the_arena_env_with_natures():
    checks.check_env("arena/Binary-v0", [Coin(), checks.LogisticProbe(), "anti_forecaster"])


def test_check_env_with_nature_catches_a_nature_that_ignores_the_seed():
    with pytest.raises(
        CheckFailure,
        match=r"gymnasium's check_env failed for 'arena/Binary-v0' with nature "
        r"'fake_global_random_nature'",
    ):
        checks.check_env_with_nature(GlobalRandomNature())


def test_check_env_names_a_nature_that_cannot_be_made():
    with pytest.raises(CheckFailure, match=r"gym\.make\('arena/Binary-v0', nature='no_such_nature', T=20\) raised"):
        checks.check_env("arena/Binary-v0", ["no_such_nature"])


# --------------------------------------------------------------------------- the suite helpers


def test_all_checks_lists_every_check_by_kind():
    f = {c.__name__ for c in checks.all_checks("forecaster")}
    n = {c.__name__ for c in checks.all_checks("nature")}
    assert {
        "check_forecasts_in_range",
        "check_no_lookahead",
        "check_same_seed_same_game",
        "check_reset_clears_state",
        "check_claims_hold",
        "check_constructor_stores_only",
    } <= f
    assert {
        "check_outcomes_valid",
        "check_same_seed_same_game",
        "check_reset_clears_state",
        "check_oblivious_ignores_forecast",
        "check_contexts_shape",
        "check_env_with_nature",
    } <= n
    with pytest.raises(ValueError, match=r"kind='expert'; expected 'forecaster' or 'nature'"):
        checks.all_checks("expert")


def test_check_plugin_collects_every_failure_and_honours_known_failures(monkeypatch):
    verdicts = checks.check_plugin(Follower())
    assert verdicts["check_no_lookahead"] == "passed"
    assert verdicts["check_claims_hold"].startswith("not applicable")
    with pytest.raises(
        CheckFailure, match=r"(?s)1 check\(s\) failed for forecaster 'fake_forgetful'.*check_reset_clears"
    ):
        checks.check_plugin(ForgetfulReset())
    monkeypatch.setitem(checks.KNOWN_FAILURES, ("fake_forgetful", "check_reset_clears_state"), "a test fake")
    assert checks.check_plugin(ForgetfulReset())["check_reset_clears_state"] == "known failure: a test fake"


def test_every_check_raises_an_assertion_error_subclass():
    assert issubclass(CheckFailure, AssertionError)


def test_checks_refuse_the_wrong_kind_of_plugin():
    with pytest.raises(TypeError, match=r"check_forecasts_in_range: .*Coin.* is not a Forecaster"):
        checks.check_forecasts_in_range(Coin())
    with pytest.raises(TypeError, match=r"check_outcomes_valid: .*Half.* is not a Nature subclass"):
        checks.check_outcomes_valid(Half)
    with pytest.raises(TypeError, match=r"params are for a class; .* is already an instance"):
        checks.check_no_lookahead(Half(), params={"c": 1})


def test_checks_do_not_apply_to_a_game_the_plugin_does_not_play():
    class ChessOnly(Half):
        name = "fake_chess_only"
        games = ("chess",)

    with pytest.raises(NotApplicable, match=r"fake_chess_only.* plays \('chess',\); the arena implements only"):
        checks.check_forecasts_in_range(ChessOnly())
    with pytest.raises(
        NotApplicable, match=r"fake_half.* does not play the 'quantile' game \(it plays \('binary',\)\)"
    ):
        checks.check_no_lookahead(Half(), game="quantile")
