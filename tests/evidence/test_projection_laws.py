"""Laws of the projection over realistic rollouts: what the contract's writers write, its validator accepts."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given

from gym_contract import collect, iter_diagnostics
from gym_contract._vocabulary import CAPTURE, OBSERVATIONS, TRAJECTORY
from gym_contract.validation import rule_errors
from tests.rollout_strategies import Rollout, rollouts
from tests.strategies import hostile_records, json_copy

NOW = 1_786_100_000.0


def _collected(rollout: Rollout, record: dict[str, Any] | None = None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as directory:
        rollout.write_capture(Path(directory))
        return collect(json_copy(record if record is not None else rollout.record), [directory])


def _errors(record: dict[str, Any], prefix: str = "") -> list[str]:
    return [
        f"{d.code} {d.path}: {d.message}"
        for d in iter_diagnostics(record, "rollout", now=NOW)
        if d.severity == "error" and d.path.startswith(prefix)
    ]


def _gap_codes(holder: Any) -> set[str]:
    return {gap["code"] for gap in (holder or {}).get("gaps", [])}


@given(rollouts())
def test_the_trajectory_and_capture_that_collect_writes_have_no_error(rollout):
    collected = _collected(rollout)
    assert _errors(collected, f"/{TRAJECTORY}") == []
    assert _errors(collected, f"/{CAPTURE}") == []


@given(rollouts())
def test_a_rollout_that_validates_still_validates_once_collected(rollout):
    if _errors(rollout.record):
        return
    assert _errors(_collected(rollout)) == []


@given(rollouts())
def test_observations_that_break_the_rules_are_neither_joined_nor_projected_and_gaps_say_so(rollout):
    broken = rule_errors(rollout.record[OBSERVATIONS], "bundle")
    collected = _collected(rollout)
    if not broken:
        assert "agent_observations_invalid" not in _gap_codes(collected.get(TRAJECTORY))
        return
    assert collected[OBSERVATIONS] == rollout.record[OBSERVATIONS]
    assert {"code": "agent_observation_join_failed", "detail": broken[0].code} in collected[CAPTURE]["gaps"]
    if TRAJECTORY in collected:
        assert {"code": "agent_observations_invalid", "invocation_id": None, "detail": broken[0].code} in collected[
            TRAJECTORY
        ]["gaps"]


@given(rollouts())
def test_a_producer_trajectory_that_breaks_the_rules_is_discarded_with_its_gap(rollout):
    given_trajectory = rollout.record.get(TRAJECTORY)
    broken = [d for d in rule_errors(given_trajectory, "trajectory")] if given_trajectory else []
    collected = _collected(rollout)
    if broken and TRAJECTORY in collected:
        gap = {"code": "producer_trajectory_invalid", "invocation_id": None, "detail": broken[0].code}
        assert gap in collected[TRAJECTORY]["gaps"]
        assert all(turn["invocation_id"] != "producer_only" for turn in collected[TRAJECTORY]["turns"])


@given(rollouts())
def test_collecting_is_deterministic_and_collecting_again_changes_nothing(rollout):
    once = _collected(rollout)
    assert _collected(rollout) == once
    assert _collected(rollout, once) == once


@given(hostile_records())
def test_whatever_the_record_holds_the_trajectory_and_capture_collect_writes_have_no_error(record):
    if not isinstance(record, dict):
        return
    row = {"_ng_task_index": 3, "_ng_rollout_index": 1, **record}
    collected = _collected(Rollout(row), row)
    assert _errors(collected, f"/{TRAJECTORY}") == []
    assert _errors(collected, f"/{CAPTURE}") == []
