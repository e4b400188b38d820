"""Evidence that contradicts itself or the contract: what the projection writes instead (vs the reference)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gym_contract import collect, iter_diagnostics, project
from gym_contract.projection import build_trajectory

ROW = {"_ng_task_index": 7, "_ng_rollout_index": 0}
NOW = 1_786_100_000.0


def gaps(record) -> list[tuple[str, str | None, str | None]]:
    return [(g.code, g.invocation_id, g.detail) for g in record.gaps]


def bundle(*records: dict[str, Any]) -> dict[str, Any]:
    return {"source": "pi", "records": list(records), "gaps": []}


def invocation(invocation_id: str, **fields: Any) -> dict[str, Any]:
    return {"kind": "agent_invocation", "invocation_id": invocation_id, **fields}


def tool(tool_call_id: str, **fields: Any) -> dict[str, Any]:
    return {"kind": "tool_call", "invocation_id": "root", "tool_call_id": tool_call_id, **fields}


def producer(**fields: Any) -> dict[str, Any]:
    return {"schema_version": "1.0", "task_id": "7", "rollout_id": "7-0", **fields}


def errors(record) -> list[str]:
    return [
        d.code for d in iter_diagnostics(record.model_dump(mode="json"), "trajectory", now=NOW) if d.severity == "error"
    ]


# ------------------------------------------------------------------------------- refused like the reference


def test_a_bundle_with_a_reversed_tool_is_not_used_and_the_gap_names_the_rule():
    broken = bundle(invocation("root"), tool("t1", started_at=5.0, completed_at=1.0))
    record = build_trajectory(ROW, {"ng_agent_observations": broken})
    assert ("agent_observations_invalid", None, "tool_timing_reversed") in gaps(record)
    assert (record.invocations, record.tool_calls) == ([], [])


def test_a_bundle_that_breaks_the_rules_is_not_joined_and_its_capture_says_why(tmp_path: Path):
    broken = bundle(invocation("root"), invocation("root"))
    collected = collect({**ROW, "ng_agent_observations": broken}, [tmp_path])
    assert collected["ng_agent_observations"] == broken
    assert {"code": "agent_observation_join_failed", "detail": "invocation_id_duplicate"} in collected[
        "ng_model_call_capture"
    ]["gaps"]


def test_a_producer_trajectory_with_a_reversed_tool_is_discarded_with_its_gap():
    given = producer(tool_calls=[tool("t1", started_at=5.0, completed_at=1.0)])
    record = build_trajectory(ROW, {"ng_trajectory": given})
    assert gaps(record)[0] == ("producer_trajectory_invalid", None, "tool_timing_reversed")
    assert record.tool_calls == []


def test_a_producer_trajectory_whose_tree_has_a_cycle_is_discarded():
    # The reference checks cycles in bundles only; a cyclic tree would send any consumer round in circles.
    given = producer(
        invocations=[
            {"invocation_id": "a", "parent_invocation_id": "b"},
            {"invocation_id": "b", "parent_invocation_id": "a"},
        ]
    )
    record = build_trajectory(ROW, {"ng_trajectory": given})
    assert gaps(record)[0] == ("producer_trajectory_invalid", None, "invocation_parent_cycle")


def test_two_captured_calls_with_one_id_fail_the_projection_naming_the_rule():
    capture = {"rollout_id": "7-0", "metrics": {"num_calls": 2}, "calls": [{"model_call_id": "a", "call_index": 0}] * 2}
    record = project(ROW, {"ng_model_call_capture": capture})
    assert gaps(record) == [("trajectory_projection_failed", None, "model_call_id_duplicate")]


# ------------------------------------------------------------------------------- resolved and named


def test_an_observed_parent_link_that_closes_a_cycle_with_the_producer_is_dropped():
    given = producer(invocations=[{"invocation_id": "lead", "parent_invocation_id": "helper"}])
    observed = bundle(invocation("helper", parent_invocation_id="lead", spawned_by_tool_call_id="spawn"))
    record = build_trajectory(ROW, {"ng_trajectory": given, "ng_agent_observations": observed})
    helper = record.invocations[1]
    assert (helper.invocation_id, helper.parent_invocation_id, helper.spawned_by_tool_call_id) == ("helper", None, None)
    assert ("cyclic_subagent_parent", "helper", "lead") in gaps(record)
    assert errors(record) == []


def test_a_tool_observed_twice_alike_is_one_record_and_no_gap():
    observed = bundle(invocation("root"), tool("t1", started_at=1.0), tool("t1", started_at=1.0, completed_at=2.0))
    record = build_trajectory(ROW, {"ng_agent_observations": observed})
    assert [(t.tool_call_id, t.started_at, t.completed_at) for t in record.tool_calls] == [("t1", 1.0, 2.0)]
    assert not any(code == "duplicate_tool_call" for code, _, _ in gaps(record))


def test_a_tool_observed_twice_with_different_timing_keeps_the_later_facts_and_says_so():
    observed = bundle(
        invocation("root"),
        tool("t1", started_at=1.0, completed_at=2.0, status="completed"),
        tool("t1", started_at=1.5, completed_at=3.0, status="unknown"),
    )
    record = build_trajectory(ROW, {"ng_agent_observations": observed})
    assert [(t.started_at, t.completed_at, t.status) for t in record.tool_calls] == [(1.5, 3.0, "completed")]
    assert ("duplicate_tool_call", "root", "t1") in gaps(record)


def test_an_observation_that_makes_a_producer_tool_finish_before_it_starts_loses_the_finish():
    # The reference fails the whole bundle here (agent_observations_invalid), keeping part of it.
    given = producer(tool_calls=[tool("t1", started_at=10.0)])
    observed = bundle(invocation("root"), tool("t1", completed_at=5.0))
    record = build_trajectory(ROW, {"ng_trajectory": given, "ng_agent_observations": observed})
    assert [(t.started_at, t.completed_at) for t in record.tool_calls] == [(10.0, None)]
    assert ("tool_timing_invalid", "root", "t1") in gaps(record)
    assert errors(record) == []


def test_an_observation_overlays_the_last_of_the_producers_duplicate_tool_records_as_the_reference_does():
    given = producer(tool_calls=[tool("t1", status="failed"), tool("t1", status="failed")])
    observed = bundle(invocation("root"), tool("t1", status="completed"))
    record = build_trajectory(ROW, {"ng_trajectory": given, "ng_agent_observations": observed})
    assert [t.status for t in record.tool_calls] == ["failed", "completed"]


# ------------------------------------------------------------------------------- kept where the reference drops


def test_unknown_keys_on_conversation_items_are_kept_in_the_trajectory():
    # The reference's models drop them when it projects; a Claude `signature` on reasoning is one such key.
    items = [
        {"type": "message", "role": "user", "content": "q", "x_extra": 1},
        {"type": "reasoning", "id": "r", "summary": [], "signature": "abc"},
        {"type": "function_call", "call_id": "c", "name": "n", "arguments": "{}", "provider_meta": {"a": 1}},
    ]
    record = build_trajectory(ROW, {"ng_agent_observations": bundle(invocation("root", conversation=items))})
    (kept,) = record.model_dump(mode="json")["invocations"]
    assert [
        item.get(key) for item, key in zip(kept["conversation"], ["x_extra", "signature", "provider_meta"], strict=True)
    ] == [
        1,
        "abc",
        {"a": 1},
    ]


# ------------------------------------------------------------------------------- identity


def test_indices_that_make_an_unusable_rollout_id_give_no_trajectory_and_no_exception(tmp_path: Path):
    row = {"_ng_task_index": "a b", "_ng_rollout_index": 0}
    collected = collect({**row, "ng_agent_observations": bundle(invocation("root"))}, [tmp_path])
    assert "ng_trajectory" not in collected
    assert collected["ng_agent_observations"]["gaps"] == [
        {"code": "trajectory_projection_failed", "detail": "ValueError"}
    ]
