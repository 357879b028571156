"""The project's forecasters; importing this package registers them all."""

from forecasters import baselines, comparecast, controls, decision, defended, defensive, experts, quantile, replay  # noqa: F401
