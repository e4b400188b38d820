"""Shared test configuration: bounded Hypothesis profiles."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

# `ci` is bounded and deterministic so that a CI run takes the same time and finds the same cases;
# `thorough` runs a law 100,000 times, to hunt counter-examples: HYPOTHESIS_PROFILE=thorough pytest tests/...
settings.register_profile(
    "ci",
    max_examples=30,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "dev",
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "thorough",
    max_examples=100_000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
# The commands colour their text on request; the tests that want colour ask for it themselves.
for _variable in ("FORCE_COLOR", "NO_COLOR"):
    os.environ.pop(_variable, None)

settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))
