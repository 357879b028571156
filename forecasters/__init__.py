"""The project's forecasters; importing this package registers them all."""

from forecasters import baselines, controls, decision, defensive, experts, quantile  # noqa: F401
