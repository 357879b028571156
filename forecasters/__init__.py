"""The project's forecasters; importing this package registers them all."""

from forecasters import (  # noqa: F401
    adapters,
    baselines,
    comparecast,
    controls,
    decision,
    defended,
    defensive,
    experts,
    quantile,
    replay,
)
