"""Test-suite settings: hypothesis without wall-clock deadlines (the CI machine is shared and
noisy), and derandomized under CI so that a run is reproducible from its commit."""

import os

from hypothesis import HealthCheck, settings

settings.register_profile("ci", derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if os.environ.get("CI") else "dev")
