"""Shared test configuration: bounded Hypothesis profiles, and compiled bytecode shared by the test processes."""

from __future__ import annotations

import os
import sys

from hypothesis import HealthCheck, settings

if sys.dont_write_bytecode:
    # With PYTHONDONTWRITEBYTECODE set, every process of the suite — each worker, each of the hundreds
    # of commands the tests start — compiles the package's modules, and rewrites the test modules'
    # asserts, anew. The suite writes them once, as Python does by default, into __pycache__ folders
    # that git ignores, and every later process reads them.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.dont_write_bytecode = False

# Every profile but `thorough` is bounded, so that the whole suite runs in minutes:
# - `dev` (a plain `pytest`) draws 30 new examples per law on every run, so that repeated runs
#   explore further;
# - `ci` (when CI is set) draws the same 30 every time, so that a CI run takes the same time and finds
#   the same cases;
# - `thorough` runs a law 100,000 times, to hunt counter-examples: HYPOTHESIS_PROFILE=thorough pytest tests/...
_UNBOUNDED_TIME = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large]}
settings.register_profile("dev", max_examples=30, **_UNBOUNDED_TIME)
settings.register_profile("ci", max_examples=30, derandomize=True, **_UNBOUNDED_TIME)
settings.register_profile("thorough", max_examples=100_000, **_UNBOUNDED_TIME)
# The commands colour their text on request; the tests that want colour ask for it themselves.
for _variable in ("FORCE_COLOR", "NO_COLOR"):
    os.environ.pop(_variable, None)

settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))
