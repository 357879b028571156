"""The project's forecasters; importing this package registers them all."""

from forecasters import baselines, defensive  # noqa: F401
