"""The project's forecasters; importing this package registers them all."""

from forecasters import baselines, decision, defensive, experts, quantile  # noqa: F401
