"""The benchmark scripts run end to end on tiny inputs (their figures are meaningful only on large ones)."""

from __future__ import annotations

import gc
import json
import subprocess
import sys

import pytest

from tests.support import REPO


def _bench(*args: str, script: str = "bench_validate.py") -> subprocess.CompletedProcess[str]:
    command = [sys.executable, str(REPO / "tools" / script), *args]
    return subprocess.run(command, capture_output=True, text=True, check=False, timeout=600)


def test_the_benchmark_reports_every_ratio():
    result = _bench("--records", "4", "--passes", "1", "--sample", "2", "--json")
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout[result.stdout.index("{") :])
    assert set(figures["ratios"]) == {
        "vs orjson + jsonschema_rs",
        "typed decoding vs orjson + jsonschema_rs",
        "ceiling vs orjson + jsonschema_rs",
        "vs orjson + jsonschema",
        "vs pydantic",
        "jobs 2 vs jobs 1",
    }
    assert all(rate > 0 for rate in figures["mb_per_s"].values())
    # Every in-process measurement runs with the setup's heap out of the collector's walks, and says so.
    assert "frozen out of the garbage collector (gc.freeze())" in figures["conditions"]
    assert f"conditions: {figures['conditions']}" in result.stdout


def test_the_benchmark_leaves_out_two_jobs_when_asked_and_unfreezes_the_heap():
    result = _bench("--records", "2", "--passes", "1", "--sample", "1", "--one-job", "--json")
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout[result.stdout.index("{") :])
    assert "jobs 2 vs jobs 1" not in figures["ratios"]
    assert "gym-contract validate --jobs 2" not in figures["mb_per_s"]
    frozen = int(figures["conditions"].split("heap (")[1].split(" objects")[0])
    assert frozen > 1000  # the imports and validators at least: the heap was really frozen

    sys.path.insert(0, str(REPO / "tools"))
    try:
        import bench_validate
    finally:
        sys.path.remove(str(REPO / "tools"))
    with bench_validate.frozen_heap() as count:
        assert count > 1000
        assert gc.get_freeze_count() > 1000
    assert gc.get_freeze_count() == 0  # what the benchmark froze is the collector's again


def test_the_benchmark_runs_on_a_user_file_and_refuses_what_it_cannot_measure(tmp_path):
    # Real NeMo Gym rollouts without any attachment: every peer measures what is there.
    reference = REPO / "examples" / "reference" / "nemo_gym_claude_code_math_rollouts.jsonl"
    result = _bench(str(reference), "--passes", "1", "--sample", "2")
    assert result.returncode == 0, result.stderr
    assert "corpus: 5 records" in result.stdout
    not_rollouts = tmp_path / "bundles.jsonl"
    not_rollouts.write_text('{"source": "pi", "records": []}\n')
    refused = _bench(str(not_rollouts))
    assert refused.returncode == 2
    assert refused.stderr.strip().endswith("the benchmark needs a plain (uncompressed) JSONL file of them")
    assert "Traceback" not in refused.stderr


@pytest.mark.slow
def test_the_full_benchmark():
    """`python -m pytest -m slow` runs the real measurement (a ~150 MB corpus, several minutes)."""
    result = _bench("--records", "1000", "--passes", "5")
    assert result.returncode == 0, result.stderr
    print(result.stdout)


def test_the_join_benchmark_runs_and_reports_growth():
    command = [sys.executable, str(REPO / "tools" / "bench_join.py"), "--sizes", "1000", "5000", "--passes", "1"]
    result = subprocess.run(command, capture_output=True, text=True, check=False, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "per 1× of input" in result.stdout.splitlines()[-1]


def test_the_whole_process_benchmark_reports_every_ratio():
    # Tiny real rollouts stand in for each input: the figures only mean something on large ones.
    reference = REPO / "examples" / "reference" / "nemo_gym_claude_code_math_rollouts.jsonl"
    result = _bench(
        str(reference),
        "--passes",
        "1",
        "--invalid",
        str(reference),
        "--rss",
        str(reference),
        "--json",
        script="bench_process.py",
    )
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout[result.stdout.index("{") :])
    assert set(figures["ratios"]) == {
        "whole process vs peer",
        "jobs 2 vs jobs 1",
        "two commands on halves vs jobs 1",
        "jobs 2 vs two commands on halves",
        "start-up, empty file vs import orjson, msgspec",
        "start-up, --version vs import orjson, msgspec",
        "start-up, --help vs import argparse",
        "invalid-record rate vs clean rate",
    }
    assert all(ratio > 0 for ratio in figures["ratios"].values())
    assert figures["conditions"].startswith("each command in a process of its own, started afresh every pass")
    assert 0 < figures["memory"]["peak RSS of validate, MB"] < 1000


def test_the_whole_process_benchmark_names_a_file_it_is_given_that_does_not_exist(tmp_path):
    reference = REPO / "examples" / "reference" / "nemo_gym_claude_code_math_rollouts.jsonl"
    missing = tmp_path / "defective.jsonl"
    result = _bench(str(reference), "--invalid", str(missing), script="bench_process.py")
    assert result.returncode == 2
    assert f"{missing}: no such file" in result.stderr
    assert "Traceback" not in result.stderr
