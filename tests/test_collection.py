"""The suite collects the same tests in every process, as running it on several cores needs."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from tests.support import REPO


def _collected(hash_seed: str) -> list[str]:
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-n", "0", "-p", "no:cacheprovider"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONHASHSEED": hash_seed},
    )
    return [line for line in result.stdout.splitlines() if "::" in line]


def test_two_processes_a_second_apart_collect_the_same_tests():
    # pytest-xdist refuses to run when its workers collect differently: a test id built from the
    # time (a gzip header) or from set order (the hash seed) would make the suite fail at random.
    first = _collected("1")
    time.sleep(1.1)
    assert _collected("2") == first
    assert len(first) > 1000
