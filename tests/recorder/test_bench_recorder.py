"""The recorder's benchmark runs end to end on a few calls (its figures mean something only on many), and the memory
it reports grows with the records alone."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support import REPO

SCRIPT = REPO / "tools" / "bench_recorder.py"


def _bench(*args: str) -> dict[str, dict[str, float]]:
    result = subprocess.run(
        [sys.executable, str(SCRIPT), *args, "--json"], capture_output=True, text=True, check=False, timeout=600
    )
    assert result.returncode == 0, result.stderr
    figures: dict[str, dict[str, float]] = json.loads(result.stdout[result.stdout.index("{") :])
    return figures


def test_the_benchmark_reports_every_figure() -> None:
    figures = _bench("--calls", "200", "--passes", "1", "--memory-sizes", "100")
    assert (
        set(figures["microseconds_per_event"])
        == set(figures["ratio_to_empty_call"])
        == {
            "tool call, start and end",
            "tool call in a with block",
            "tool call by id from hooks",
            "model call",
        }
    )
    assert all(value > 0 for value in figures["ratio_to_empty_call"].values())
    assert set(figures["bytes_per_tool_call"]) == {"100"}


def test_memory_grows_with_the_records_alone() -> None:
    held = _bench("--calls", "10", "--passes", "1", "--memory-sizes", "2000", "20000")["bytes_per_tool_call"]
    small, large = held["2000"], held["20000"]
    # Ten times the calls hold about ten times the bytes: nothing else accumulates per call or per event.
    assert 0 < large < 1.5 * small


@pytest.mark.slow
def test_the_full_benchmark() -> None:
    """`python -m pytest -m slow tests/recorder` runs the real measurement: 100,000 tool calls, median of 7 passes."""
    figures = _bench()
    print(json.dumps(figures, indent=2))
    assert figures["microseconds_per_event"]["tool call, start and end"] < 20
