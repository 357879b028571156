"""Defend any forecaster: kernel DF whose context holds another forecaster's forecast (§7, §8).

``defended`` plays a base forecaster (any registered binary forecaster, by name and parameters)
beside kernel DF: in round t the base announces b_t from the nature's context x_t, and kernel DF
forecasts with the context z_t = (1, b_t, x_t). With the default kernel 1 + k_FS + pp' + <z, z'>
its forecasts are smoothly calibrated and, up to O(sqrt T), have no more squared loss than any
linear function of (1, b_t, x_t), the base forecast itself among them (w = (0, 1, 0)): no worse
than the base, or any linear recalibration of it, whatever the outcomes. The referee checks it on
the contexts z_t (:meth:`Defended.kernel_contexts`): the kernel, smCE and linear-regret certificates.

References
----------
Perdomo & Recht, §7 (Alg. 4, kernels with contexts) and §8 (sums of kernels: calibration and regret).
"""

from __future__ import annotations

import numpy as np

from arena.protocols import Context, Forecaster, as_forecast
from arena.registry import make_forecaster, register
from arena.search import DEFAULT_TOL
from forecasters.defensive import DEFAULT_KERNEL, KernelDF


@register
class Defended(KernelDF):
    """Kernel DF on the context (1, base forecast, nature's context).

    Parameters
    ----------
    base : str
        A registered binary forecaster (``arena-list forecasters``), e.g. ``running_mean``, ``ogd`` or
        ``replay`` (a published forecast column).
    base_params : dict
        Its parameters, e.g. ``{path: forecasts.csv, column: p}`` for ``replay``.
    kernel, tol, fast
        As :class:`forecasters.defensive.KernelDF` (default kernel 1 + k_FS + pp' + <z, z'>).

    Examples
    --------
    >>> from arena import play
    >>> r = play("binary", Defended(base="constant", base_params={"c": 0.9}), "iid_bernoulli", T=300, seed=0)
    >>> sorted(k for k, c in r.certificates.items() if c.holds)
    ['kernel', 'linear_regret', 'search_precision', 'smce']
    """

    name = "defended"
    games = ("binary",)
    play_oblivious = None  # round by round: the base forecaster plays too

    def __init__(self, base: str = "running_mean", base_params=None, kernel=DEFAULT_KERNEL, tol=DEFAULT_TOL, fast=True):
        if not isinstance(base, str) or not base:
            raise ValueError(
                f"{self.name}: base={base!r} is not a forecaster's name; give one, e.g. base: running_mean"
            )
        if base_params is not None and not isinstance(base_params, dict):
            raise ValueError(  # noqa: TRY004 (one error type for bad parameters)
                f"{self.name}: base_params={base_params!r} is not a mapping; give e.g. base_params: {{c: 0.5}}"
            )
        self.base, self.base_params = base, dict(base_params or {})
        self._base: Forecaster = make_forecaster(base, **self.base_params)
        if "binary" not in self._base.games:
            raise ValueError(f"{self.name}: base {base!r} does not play the binary game (it plays {self._base.games})")
        super().__init__(kernel=kernel, tol=tol, fast=fast)

    def reset(self, rng):
        super().reset(rng)
        self._base.game = getattr(self, "game", None)
        self._base.reset(np.random.default_rng(rng.integers(2**63)) if rng is not None else None)
        self._draws = np.random.default_rng(rng.integers(2**63)) if rng is not None else np.random.default_rng(0)
        self._contexts: list[np.ndarray] = []

    def predict(self, x: Context) -> float:
        f = as_forecast(self._base.predict(x), 0.0, 1.0, who=f"{self.name}'s base {self.base!r}")
        self._b = f.sample(self._draws.random()) if not f.is_point else f.points[0]
        z = np.concatenate(([1.0, f.mean], np.asarray(x, float).reshape(-1)))
        self._contexts.append(z)
        return super().predict(z)

    def update(self, x, p, y):
        self._base.update(x, self._b, y)
        super().update(self._contexts[-1], p, y)

    @property
    def length(self) -> int | None:  # type: ignore[override]
        """The base's longest horizon (a replayed forecast stream's rows), or None."""
        return self._base.length

    @property
    def can_play_oblivious(self) -> bool:
        return False

    def kernel_contexts(self, X: np.ndarray) -> np.ndarray:
        """The contexts z_t = (1, b_t, x_t) of the rounds played, for the referee's kernel certificates."""
        if len(self._contexts) != len(X):
            raise ValueError(f"{self.name}: {len(self._contexts)} rounds played, {len(X)} recorded")
        return np.array(self._contexts).reshape(len(X), -1)
