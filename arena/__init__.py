"""Defensive Forecasting Arena: forecasters against natures under a referee.

>>> import arena
>>> r = arena.play("binary", "bit", "anti_forecaster", T=50, seed=0)
>>> r.certificates["bit"].holds
True
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("defensive-forecasting-arena")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0.1.0+src"

from arena.protocols import Bernoulli, Forecast, Forecaster, Nature, OutcomeLaw, ProtocolError  # noqa: E402
from arena.registry import register  # noqa: E402
from arena.runner import Result, play  # noqa: E402
from arena import env as _env  # noqa: E402,F401  (registers the Gymnasium ids)

__all__ = ["play", "Result", "Forecast", "Forecaster", "Nature", "OutcomeLaw", "Bernoulli", "ProtocolError",
           "register", "__version__"]
