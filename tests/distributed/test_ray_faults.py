"""A node lost while a job runs: Ray runs its tasks again elsewhere, and the report is the one of a single process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gym_contract import distributed
from gym_contract.checking import check_files
from tests.support import REPO

ray = pytest.importorskip("ray")  # the ray extra: without it, these tests say so and skip
cluster_utils = pytest.importorskip("ray.cluster_utils")
pytestmark = pytest.mark.ray


@pytest.fixture
def cluster() -> Any:
    """A head that runs no task and two worker nodes of one CPU each, all on this machine."""
    nodes = cluster_utils.Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    workers = [nodes.add_node(num_cpus=1) for _ in range(2)]
    nodes.wait_for_nodes()
    ray.shutdown()  # a cluster that an earlier test of this process left running
    ray.init(address=nodes.address, log_to_driver=False)
    yield nodes, workers
    ray.shutdown()
    nodes.shutdown()


def test_a_worker_node_killed_mid_job_leaves_the_report_as_it_would_be(cluster: Any, tmp_path: Path):
    nodes, workers = cluster
    corpus = tmp_path / "corpus.jsonl"
    subprocess.run(
        [sys.executable, str(REPO / "tools" / "make_corpus.py"), str(corpus), "--records", "60", "--seed", "5",
         "--record-kb", "30", "--invalid-share", "0.2"],
        check=True,
        capture_output=True,
    )  # fmt: skip
    killed: list[Any] = []
    left_when_killed: list[int] = []

    def kill_a_node_after_the_first_share(done: int, total: int | None) -> None:
        if not killed:
            left_when_killed.append((total or 0) - done)
            # Without grace, as a lost machine goes; a fresh node joins so that the job keeps two.
            killed.append(workers[0])
            nodes.remove_node(workers[0], allow_graceful=False)
            nodes.add_node(num_cpus=1)

    report = distributed.validate_dataset(
        [str(corpus)], block_bytes=48 * 1024, per_record=True, progress=kill_a_node_after_the_first_share
    )
    assert killed, "the job ended before a node could be lost"
    assert left_when_killed[0] > 1_000_000, "most of the corpus was still to check when the node went"
    here = check_files([str(corpus)], per_record=True)
    assert report.invalid_records > 0
    assert {**report.to_dict(), "seconds": 0, "mb_per_s": 0} == {**here.to_dict(), "seconds": 0, "mb_per_s": 0}
    assert report.flagged == here.flagged
