"""Models of online-learning libraries as forecasters of the binary game (optional extras).

``river`` plays any river classifier (``predict_proba_one`` / ``learn_one``; ``pip install
'defensive-forecasting-arena[river]'``); ``sklearn`` any scikit-learn estimator with ``partial_fit``
and ``predict_proba`` (``[sklearn]``). The features of round t are nature's context x_t; the
forecast is the model's probability of y = 1 before it learns y_t. The library is imported when
the forecaster is reset, never when the plugins are registered; a fresh model is built on every
reset, and a model with a ``seed`` (river) or ``random_state`` (scikit-learn) parameter that the
config leaves unset gets one drawn from the forecaster's stream (same seed, same game).
Against an oblivious nature both play every round in one loop (``play_oblivious``): the step loop's calls
in the same order, the arena checking the forecasts all at once.
"""

from __future__ import annotations

import importlib
import inspect

import numpy as np

from arena.protocols import Context, Forecaster
from arena.registry import register


def _model_class(library: str, dotted: str, who: str, extra: str):
    """``library.<module>.<Class>`` from ``"<module>.<Class>"``, or a one-line error naming the fix."""
    module, _, name = str(dotted).rpartition(".")
    try:
        importlib.import_module(library)
    except ImportError:
        raise ImportError(
            f"{who}: {library} is not installed; install the extra: pip install 'defensive-forecasting-arena[{extra}]'"
        ) from None
    try:
        lib = importlib.import_module(f"{library}.{module}" if module else library)
    except ImportError as exc:
        raise ValueError(f"{who}: cannot import {library}.{module} (from {dotted!r}): {exc}") from None
    cls = getattr(lib, name, None)
    if not isinstance(cls, type):
        raise ValueError(f"{who}: {library}.{module} has no class {name!r} (from {dotted!r})")
    return cls


def _with_seed(cls, params: dict, key: str, rng) -> dict:
    """``params`` with ``key`` drawn from ``rng`` when the model takes it and the config leaves it unset."""
    try:
        takes = key in inspect.signature(cls).parameters
    except (TypeError, ValueError):
        takes = False
    if takes and params.get(key) is None and rng is not None:
        return {**params, key: int(rng.integers(2**31 - 1))}
    return params


def _check_params(who: str, what: str, params) -> dict:
    if params is not None and not isinstance(params, dict):
        raise ValueError(  # noqa: TRY004 (one error type for bad parameters)
            f"{who}: {what}={params!r} is not a mapping of the model's parameters, e.g. {what}: {{l2: 0.1}}"
        )
    return dict(params or {})


@register
class RiverForecaster(Forecaster):
    """A river classifier: p_t = its ``predict_proba_one(x_t)[True]``, then ``learn_one(x_t, y_t)``.

    Parameters
    ----------
    model : str
        The class under ``river``, e.g. ``linear_model.LogisticRegression``, ``naive_bayes.GaussianNB``,
        ``tree.HoeffdingTreeClassifier``.
    model_params : dict
        Its constructor's parameters (plain values).
    """

    name = "river"

    def __init__(self, model: str = "linear_model.LogisticRegression", model_params=None):
        if not isinstance(model, str) or not model:
            raise ValueError(f"{self.name}: model={model!r}: give a river class, e.g. linear_model.LogisticRegression")
        self.model, self.model_params = model, _check_params(self.name, "model_params", model_params)

    def reset(self, rng):
        super().reset(rng)
        cls = _model_class("river", self.model, self.name, "river")
        self._model = cls(**_with_seed(cls, self.model_params, "seed", rng))

    def predict(self, x: Context) -> float:
        return _river_probability(self._model.predict_proba_one(_river_features(np.asarray(x, float).tolist())))

    def update(self, x, p, y):
        self._model.learn_one(_river_features(np.asarray(x, float).tolist()), bool(y))

    def play_oblivious(self, X, y, u):
        """Every round in one loop, as :meth:`predict` then :meth:`update` play it. river's inference methods
        do not mutate their input (its own checks), so ``learn_one`` gets the dict ``predict_proba_one`` saw,
        as in river's own evaluation loop."""
        model, p = self._model, []
        for row, y_t in zip(np.asarray(X, float).tolist(), np.asarray(y, float).tolist(), strict=True):
            features = _river_features(row)
            p.append(_river_probability(model.predict_proba_one(features)))
            model.learn_one(features, bool(y_t))
        out = np.array(p, dtype=float)
        return out, out, out


@register
class SklearnForecaster(Forecaster):
    """A scikit-learn estimator with ``partial_fit``: p_t = ``predict_proba([1, x_t])`` of class 1 (0.5 until it
    has seen both classes), then ``partial_fit([1, x_t], [y_t], classes=[0, 1])``. A constant feature 1 is
    prepended, so that a game without contexts has one feature.

    Parameters
    ----------
    estimator : str
        The class under ``sklearn``, e.g. ``linear_model.SGDClassifier`` (with ``loss: log_loss``),
        ``naive_bayes.GaussianNB``.
    estimator_params : dict or None
        Its constructor's parameters (plain values); None: none, or ``{loss: log_loss}`` for the default
        SGDClassifier.
    """

    name = "sklearn"

    def __init__(self, estimator: str = "linear_model.SGDClassifier", estimator_params=None):
        if not isinstance(estimator, str) or not estimator:
            raise ValueError(f"{self.name}: estimator={estimator!r}: give a class, e.g. linear_model.SGDClassifier")
        self.estimator = estimator
        _check_params(self.name, "estimator_params", estimator_params)
        self.estimator_params = estimator_params

    def reset(self, rng):
        super().reset(rng)
        cls = _model_class("sklearn", self.estimator, self.name, "sklearn")
        params = self.estimator_params
        if params is None:  # SGDClassifier's default loss (hinge) gives no probabilities
            params = {"loss": "log_loss"} if self.estimator == "linear_model.SGDClassifier" else {}
        self._model = cls(**_with_seed(cls, dict(params), "random_state", rng))
        if not (hasattr(self._model, "partial_fit") and hasattr(self._model, "predict_proba")):
            raise ValueError(
                f"{self.name}: {self.estimator}({params}) has no partial_fit and predict_proba; choose an estimator "
                "that has both (SGDClassifier needs loss: log_loss or modified_huber)"
            )
        self._seen: set[int] = set()

    def predict(self, x: Context) -> float:
        return self._proba_one(_sklearn_rows(np.asarray(x, float).reshape(1, -1)))

    def update(self, x, p, y):
        self._learn(_sklearn_rows(np.asarray(x, float).reshape(1, -1)), y)

    def play_oblivious(self, X, y, u):
        """Every round in one loop, as :meth:`predict` then :meth:`update` play it (a ``partial_fit`` a row)."""
        rows = _sklearn_rows(np.asarray(X, float))
        p = []
        for t, y_t in enumerate(np.asarray(y, float).tolist()):
            row = rows[t : t + 1]
            p.append(self._proba_one(row))
            self._learn(row, y_t)
        out = np.array(p, dtype=float)
        return out, out, out

    def _proba_one(self, row: np.ndarray) -> float:
        """P(y = 1) of the (1, 1 + d) ``row``: 0.5 until the model has seen both classes."""
        if len(self._seen) < 2:
            return 0.5
        proba = self._model.predict_proba(row)[0]
        return min(max(float(proba[list(self._model.classes_).index(1)]), 0.0), 1.0)

    def _learn(self, row: np.ndarray, y: float) -> None:
        self._model.partial_fit(row, [int(y)], classes=[0, 1])
        self._seen.add(int(y))


def _river_features(values: list[float]) -> dict[int, float]:
    """A context as river's features: {coordinate: value}."""
    return dict(enumerate(values))


def _river_probability(proba: dict) -> float:
    """P(y = 1) from river's ``predict_proba_one``: class True (the same key as 1: True == 1, with one hash), 0.5
    before the model knows any class, 0 when it knows only the other, clamped to [0, 1] (NaN stays NaN)."""
    p = proba.get(True)
    if p is None:
        return 0.5 if not proba else 0.0
    return 0.0 if p < 0.0 else 1.0 if p > 1.0 else float(p)


def _sklearn_rows(X: np.ndarray) -> np.ndarray:
    """scikit-learn's rows of the (n, d) contexts ``X``: (1, x_t), a constant feature first."""
    return np.column_stack((np.ones(len(X)), X))
