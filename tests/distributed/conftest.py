"""One local Ray cluster of 2 CPUs, as CI has, shared by the Ray tests a test process runs."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest


@pytest.fixture(scope="package")
def _cluster_kept_for_the_package() -> Iterator[None]:
    yield
    if "ray" in sys.modules:
        sys.modules["ray"].shutdown()


@pytest.fixture
def local_cluster(_cluster_kept_for_the_package: None) -> str:
    """This process joined to the package's local cluster, and the cluster's address.

    Started by the first test that asks for it and kept for the next ones: starting a cluster takes
    seconds. A test that needs a cluster of another shape shuts this one down, and the next test
    that asks starts it again.
    """
    ray = pytest.importorskip("ray")  # the ray extra: without it, the Ray tests say so and skip
    if not ray.is_initialized():
        ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    return str(ray.get_runtime_context().gcs_address)
