"""Projection to `ng_trajectory` (CONTRACT 2.2–2.4): each rule with hand-written evidence and exact output."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gym_contract import iter_diagnostics
from gym_contract.projection import attach_trajectory, build_trajectory, project, trajectory_identity

POLICY = {"type": "responses_api_models", "name": "policy"}
ROW = {"_ng_task_index": 7, "_ng_rollout_index": 0}


def gaps(record) -> list[tuple[str, str | None, str | None]]:
    return [(g.code, g.invocation_id, g.detail) for g in record.gaps]


def captured(call_id: str | None, index: int = 0, **fields: Any) -> dict[str, Any]:
    return {"model_call_id": call_id, "call_index": index, "model_ref": POLICY, **fields}


def producer(**fields: Any) -> dict[str, Any]:
    return {"schema_version": "1.0", "task_id": "7", "rollout_id": "7-0", **fields}


TURN = {"invocation_id": "root", "task_id": "7", "rollout_id": "7-0", "turn_no": 1, "timestamp": 2.0, "step_count": 0}
CONVERSATION = [
    {"role": "user", "content": "q", "type": "message"},
    {"type": "function_call", "call_id": "t1", "name": "lookup", "arguments": "{}"},
    {"type": "function_call_output", "call_id": "t1", "output": "from the conversation"},
]


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ({"task_id": 12, "problem_id": "p", "_ng_task_index": 7, "_ng_rollout_index": 0}, ("12", "7-0")),
        ({"problem_id": "p", "_ng_task_index": 7, "_ng_rollout_index": 0}, ("p", "7-0")),
        ({"instance_id": "i", "_ng_task_index": 7, "_ng_rollout_index": 0}, ("i", "7-0")),
        ({"_ng_task_index": 7, "_ng_rollout_index": 0, "_ng_attempt_index": 2}, ("7", "7-0-a2")),
        ({"_ng_task_index": 7, "_ng_rollout_index": 0, "_ng_rollout_id": "x"}, ("7", "x")),
    ],
)
def test_identity_comes_from_the_input_row(row, expected):
    assert trajectory_identity(row) == expected


def test_only_capture_gives_model_calls_and_the_completeness_gaps():
    capture = {
        "rollout_id": "7-0",
        "metrics": {"num_calls": 1},
        "calls": [
            captured(
                "a",
                response_id="resp_a",
                latency_total_ms=800.0,
                tokens_in=90,
                tokens_out=True,
                tokens_total=1.5,
                request=None,
                request_raw="raw request",
                response={"id": "resp_a", "status": "completed"},
            ),
            "not a call",
        ],
        "gaps": [{"code": "model_call_capture_records_unreadable", "detail": "count=1"}, {"detail": "no code"}],
    }
    record = build_trajectory(ROW, {"ng_model_call_capture": capture})
    (call,) = record.model_dump(mode="json")["model_calls"]
    assert call == {
        "model_call_id": "a",
        "started_at": None,
        "completed_at": None,
        "duration_ms": 800.0,
        "request": "raw request",
        "response": {"id": "resp_a", "status": "completed"},
        "response_metadata": {
            "response_id": "resp_a",
            "model_ref": POLICY,
            "model": None,
            "dialect": None,
            "status_code": None,
            "response_status": "completed",
            "finish_reason": None,
            "error_category": None,
            "latency_ttft_ms": None,
        },
        # bools and floats are not token counts: they stay unknown
        "token_stats": {
            "prompt_tokens": 90,
            "completion_tokens": None,
            "reasoning_tokens": None,
            "total_tokens": None,
            "cached_tokens": None,
        },
    }
    assert gaps(record) == [
        ("model_call_capture_records_unreadable", None, "count=1"),
        ("model_call_capture_gap_invalid", None, None),
        ("turns_unavailable", None, None),
        ("conversation_unavailable", None, None),
    ]


def test_producer_calls_merge_with_captured_ones_by_exact_id_once():
    given = producer(
        invocations=[{"invocation_id": "root", "conversation": CONVERSATION}],
        turns=[TURN],
        model_calls=[
            {
                "model_call_id": "a",
                "response_metadata": {"model": "from-producer", "dialect": "responses"},
                "token_stats": {"prompt_tokens": 1},
            },
            {"model_call_id": None},
        ],
    )
    capture = {
        "rollout_id": "7-0",
        "metrics": {"num_calls": 3},
        "calls": [captured("a", model="m", tokens_in=90, latency_total_ms=5.0), captured(None, 1), captured("b", 2)],
    }
    record = build_trajectory(ROW, {"ng_trajectory": given, "ng_model_call_capture": capture})
    calls = record.model_dump(mode="json")["model_calls"]
    assert [c["model_call_id"] for c in calls] == ["a", None, None, "b"]
    assert calls[0]["response_metadata"]["model"] == "m"
    assert calls[0]["response_metadata"]["dialect"] == "responses"  # kept: the capture did not know it
    assert calls[0]["token_stats"]["prompt_tokens"] == 90
    assert calls[0]["duration_ms"] == 5.0


def test_a_second_capture_with_a_used_id_makes_the_projection_fail_naming_the_rule():
    capture = {"rollout_id": "7-0", "metrics": {"num_calls": 2}, "calls": [captured("a"), captured("a", 1)]}
    record = project(ROW, {"ng_model_call_capture": capture})
    assert gaps(record) == [("trajectory_projection_failed", None, "model_call_id_duplicate")]
    assert (record.task_id, record.rollout_id) == ("7", "7-0")


def test_a_producer_trajectory_with_other_ids_is_kept_under_the_canonical_ones():
    given = producer(
        task_id="other",
        invocations=[{"invocation_id": "root", "conversation": CONVERSATION}],
        turns=[{**TURN, "task_id": "other"}],
        gaps=[{"code": "resolution_unavailable", "invocation_id": "root"}],
    )
    record = build_trajectory(ROW, {"ng_trajectory": given})
    assert record.turns[0].task_id == "7"
    assert gaps(record) == [
        ("producer_trajectory_identity_mismatch", None, "task_id"),
        ("resolution_unavailable", "root", None),
        ("model_calls_unavailable", None, None),
    ]


def test_an_invalid_producer_trajectory_is_dropped_with_a_gap():
    record = build_trajectory(ROW, {"ng_trajectory": producer(turns=[{"turn_no": 0}])})
    assert gaps(record)[0] == ("producer_trajectory_invalid", None, "ValidationError")
    assert record.turns == []


def test_observations_add_invocations_but_producer_invocations_win():
    given = producer(invocations=[{"invocation_id": "root", "status": "completed", "conversation": CONVERSATION}])
    bundle = {
        "source": "pi",
        "records": [
            {"kind": "agent_invocation", "invocation_id": "root", "status": "failed"},
            {"kind": "agent_invocation", "invocation_id": "child", "parent_invocation_id": "root"},
        ],
        "gaps": [{"code": "subagent_hierarchy_unavailable"}],
    }
    record = build_trajectory(ROW, {"ng_trajectory": given, "ng_agent_observations": bundle})
    assert [(i.invocation_id, i.status) for i in record.invocations] == [("root", "completed"), ("child", "unknown")]
    assert ("subagent_hierarchy_unavailable", None, None) in gaps(record)


def test_observed_tools_overlay_producer_tools_and_take_outputs_from_the_conversation():
    given = producer(
        invocations=[{"invocation_id": "root", "conversation": CONVERSATION}],
        tool_calls=[
            {
                "invocation_id": "root",
                "tool_call_id": "t1",
                "status": "completed",
                "tool_name": "lookup",
                "output": "producer",
            },
            {"invocation_id": "root", "tool_call_id": "t2", "status": "failed", "output": "kept as is"},
        ],
    )
    bundle = {
        "source": "pi",
        "records": [
            {
                "kind": "tool_call",
                "invocation_id": "root",
                "tool_call_id": "t1",
                "status": "unknown",
                "started_at": 1.0,
                "completed_at": 2.0,
                "duration_ms": 1000.0,
                "timing_source": "harness",
            },
            {"kind": "tool_call", "invocation_id": "root", "tool_call_id": "t3", "status": "timeout"},
        ],
    }
    record = build_trajectory(ROW, {"ng_trajectory": given, "ng_agent_observations": bundle})
    tools = record.model_dump(mode="json")["tool_calls"]
    assert [(t["tool_call_id"], t["status"], t["output"]) for t in tools] == [
        ("t1", "completed", "from the conversation"),  # known status kept over an observed "unknown"
        ("t2", "failed", "kept as is"),
        ("t3", "timeout", None),
    ]
    assert tools[0]["tool_name"] == "lookup"
    assert tools[0]["timing_source"] == "harness"


def test_turns_are_sorted_by_time_invocation_and_number():
    turns = [
        {**TURN, "turn_no": 2, "timestamp": 5.0},
        {**TURN, "invocation_id": "b", "timestamp": 1.0},
        {**TURN, "timestamp": 1.0},
    ]
    record = build_trajectory(ROW, {"ng_trajectory": producer(turns=turns)})
    assert [(t.timestamp, t.invocation_id, t.turn_no) for t in record.turns] == [
        (1.0, "b", 1),
        (1.0, "root", 1),
        (5.0, "root", 2),
    ]


def test_attaching_strips_payloads_from_the_capture_after_success():
    capture = {
        "rollout_id": "7-0",
        "metrics": {"num_calls": 1},
        "calls": [captured("a", request={"input": "q"}, response={"id": "r"}, response_raw="x")],
    }
    result = {"ng_model_call_capture": capture, "reward": 1.0}
    attached = attach_trajectory(ROW, result)
    assert attached["ng_trajectory"]["model_calls"][0]["request"] == {"input": "q"}
    assert set(attached["ng_model_call_capture"]["calls"][0]) == {"model_call_id", "call_index", "model_ref"}
    assert result["ng_model_call_capture"]["calls"][0]["request"] == {"input": "q"}  # the input is not changed
    assert attached["reward"] == 1.0


def test_a_failed_attachment_keeps_the_payloads_and_records_the_failure():
    capture = {
        "rollout_id": "7-0",
        "metrics": {"num_calls": 1},
        "calls": [captured("a", latency_total_ms=-1, request={"input": "q"})],
    }
    attached = attach_trajectory(ROW, {"ng_model_call_capture": capture, "ng_trajectory": producer()})
    assert "ng_trajectory" not in attached
    assert attached["ng_model_call_capture"]["gaps"] == [
        {"code": "trajectory_projection_failed", "detail": "ValidationError"}
    ]
    assert attached["ng_model_call_capture"]["calls"][0]["request"] == {"input": "q"}


def test_a_failure_without_capture_goes_to_the_observations_or_a_minimal_trajectory():
    broken_bundle = {"source": "pi", "records": [{"kind": "tool_call", "invocation_id": "r", "tool_call_id": "t"}]}
    row_without_ids: dict[str, Any] = {}
    attached = attach_trajectory(row_without_ids, {"ng_agent_observations": broken_bundle})
    assert attached["ng_agent_observations"]["gaps"] == [{"code": "trajectory_projection_failed", "detail": "KeyError"}]
    minimal = attach_trajectory(row_without_ids, {"ng_trajectory": producer()})
    assert minimal["ng_trajectory"]["gaps"] == [
        {"code": "trajectory_projection_failed", "invocation_id": None, "detail": "KeyError"}
    ]


def test_a_result_with_no_evidence_is_left_alone():
    assert attach_trajectory(ROW, {"reward": 0.0}) == {"reward": 0.0}


# ----------------------------------------------------------------------------------------------- laws

CALL_IDS = st.sampled_from(["a", "b", "c", None])
# The capture middleware mints a model_call_id for every call; only producers leave theirs empty.
CAPTURED_IDS = st.sampled_from(["a", "b", "c", "d"])


@st.composite
def results(draw):
    calls = [
        captured(
            draw(CAPTURED_IDS),
            i,
            latency_total_ms=draw(st.sampled_from([1.0, 2.0, None])),
            tokens_in=draw(st.sampled_from([None, 3])),
        )
        for i in range(draw(st.integers(0, 4)))
    ]
    given = producer(
        invocations=[{"invocation_id": "root", "conversation": draw(st.sampled_from([[], CONVERSATION]))}],
        turns=draw(st.sampled_from([[], [TURN]])),
        model_calls=[{"model_call_id": draw(CALL_IDS)} for _ in range(draw(st.integers(0, 2)))],
    )
    result: dict[str, Any] = {"ng_trajectory": given}
    if calls:
        result["ng_model_call_capture"] = {"rollout_id": "7-0", "metrics": {"num_calls": len(calls)}, "calls": calls}
    return result


@given(results())
def test_projection_is_deterministic_and_its_output_validates(result):
    first, second = project(ROW, copy.deepcopy(result)), project(ROW, copy.deepcopy(result))
    assert first == second
    errors = [d for d in iter_diagnostics(first.model_dump(mode="json"), "trajectory") if d.severity == "error"]
    assert errors == []


@given(results())
def test_reprojecting_its_own_output_with_the_same_capture_changes_nothing(result):
    once = project(ROW, result)
    if any(g.code == "trajectory_projection_failed" for g in once.gaps):
        return
    again = project(ROW, {**result, "ng_trajectory": once.model_dump(mode="json")})
    assert again == once
