"""The common cases the rules tell first, at their edges: the same diagnostics as the long way, and the same tallies."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from gym_contract import iter_diagnostics
from gym_contract.report import Report
from tests.validation.test_validation import NOW, POLICY, clean_bundle, clean_capture, clean_trajectory, invocation


def found(record: dict[str, Any], kind: str) -> list[tuple[str, str]]:
    """The findings of the semantic rules (the schema's are pinned elsewhere)."""
    return [(d.code, d.path) for d in iter_diagnostics(record, kind, now=NOW) if d.code != "schema_violation"]


def conversation(*call_ids: Any) -> list[Any]:
    """A parent's conversation: messages and outputs between its function calls, and items of odd shapes."""
    items: list[Any] = [{"type": "message", "role": "user", "content": "go"}, "not an object"]
    for call_id in call_ids:
        items.append({"type": "function_call", "call_id": call_id, "name": "Task", "arguments": "{}"})
        items.append({"type": "function_call_output", "call_id": call_id, "output": "done"})
    return items


@pytest.mark.parametrize("kind", ["bundle", "trajectory"])
def test_spawning_calls_are_found_wherever_they_sit_in_the_parent_conversation(kind: str) -> None:
    # The first child's call is the last of the conversation, so that the later children's calls were all
    # read by then; a call id that is not a string names no call; the missing one is read for to the end.
    children = [
        invocation("late", parent_invocation_id="root", spawned_by_tool_call_id="call-9"),
        invocation("early", parent_invocation_id="root", spawned_by_tool_call_id="call-1"),
        invocation("numbered", parent_invocation_id="root", spawned_by_tool_call_id="7"),
        invocation("missing", parent_invocation_id="root", spawned_by_tool_call_id="call-5"),
        invocation("again", parent_invocation_id="root", spawned_by_tool_call_id="call-9"),
    ]
    root = invocation("root", conversation=conversation("call-1", 7, "call-3", "call-9"))
    if kind == "bundle":
        record = clean_bundle()
        record["records"] = [root, *children]
        base = "/records"
    else:
        record = clean_trajectory()
        record["invocations"] = [root, *children]
        base = "/invocations"
    assert [d for d in found(record, kind) if d[0] == "spawned_by_tool_call_missing"] == [
        ("spawned_by_tool_call_missing", f"{base}/3/spawned_by_tool_call_id"),
        ("spawned_by_tool_call_missing", f"{base}/4/spawned_by_tool_call_id"),
    ]


def timed(started: Any, completed: Any, duration: Any) -> dict[str, Any]:
    return {"invocation_id": "root", "started_at": started, "completed_at": completed, "duration_ms": duration}


def test_intervals_at_the_edges_of_the_common_case() -> None:
    start = 1_786_000_000.0
    trajectory = clean_trajectory()
    trajectory["tool_calls"] = [
        {**timed(start, start + 1.0, 1011.0), "tool_call_id": "within"},  # 1 ms + 1 % of 1000 ms: agrees
        {**timed(start, start + 1.0, 1011.5), "tool_call_id": "beyond"},
        {**timed(1_786_000_000, 1_786_000_001, 1000), "tool_call_id": "integers"},  # the long way, agrees
        {**timed(start + 1.0, start, -1000.0), "tool_call_id": "reversed"},  # agrees with its own reversal
        {**timed(start, 1e12, None), "tool_call_id": "future"},
        {**timed(start, start + 1.0, True), "tool_call_id": "boolean"},  # not a duration: nothing to compare
    ]
    assert found(trajectory, "trajectory") == [
        ("duration_mismatch", "/tool_calls/1/duration_ms"),
        ("tool_timing_reversed", "/tool_calls/3/completed_at"),
        ("timestamp_implausible", "/tool_calls/4/completed_at"),
    ]


def test_token_counts_at_the_edges_of_the_common_case() -> None:
    trajectory = clean_trajectory()
    call = trajectory["model_calls"][0]
    variants = [
        {"prompt_tokens": 90, "completion_tokens": 20, "total_tokens": 110, "cached_tokens": 90},  # cache = prompt
        {"prompt_tokens": 90, "completion_tokens": 20, "total_tokens": 111, "cached_tokens": 0},
        {"prompt_tokens": 90, "completion_tokens": 20, "total_tokens": 110, "cached_tokens": 91},
        {"prompt_tokens": 90, "completion_tokens": True, "total_tokens": 91, "cached_tokens": None},  # no count
        {"prompt_tokens": 90, "completion_tokens": -1, "total_tokens": 89, "cached_tokens": 0},
    ]
    trajectory["model_calls"] = [
        {**copy.deepcopy(call), "model_call_id": f"call-{index}", "token_stats": stats}
        for index, stats in enumerate(variants)
    ]
    trajectory["turns"][0]["model_calls"] = []
    trajectory["invocations"][0]["model_calls"] = []
    assert found(trajectory, "trajectory") == [
        ("token_total_mismatch", "/model_calls/1/token_stats"),
        ("cached_tokens_exceed_prompt", "/model_calls/2/token_stats"),
    ]


def test_a_reference_without_a_call_id_resolves_by_its_model_and_response() -> None:
    trajectory = clean_trajectory()
    trajectory["invocations"][0]["model_calls"] = [
        {"model_call_id": "", "model_ref": POLICY, "response_id": "resp_b"},  # an empty id counts as none
        {"model_ref": POLICY, "response_id": "resp_nowhere"},
        {"model_ref": {"type": "responses_api_models", "name": "other"}, "response_id": "resp_b"},
        {"model_call_id": "call-nowhere", "model_ref": POLICY, "response_id": "resp_b"},  # the id decides
    ]
    assert found(trajectory, "trajectory") == [
        ("model_call_reference_dangling", "/invocations/0/model_calls/1"),
        ("model_call_reference_dangling", "/invocations/0/model_calls/2"),
        ("model_call_reference_dangling", "/invocations/0/model_calls/3"),
    ]


def test_a_capture_sum_that_hides_an_unknown_is_found_among_sums_that_do_not() -> None:
    capture = clean_capture()
    second = {**capture["calls"][0], "model_call_id": "b", "call_index": 1, "tokens_out": None}
    capture["calls"].append(second)
    assert found(capture, "model_call_capture") == [("metrics_partial_sum", "/metrics/tokens_out")]
    second["tokens_out"] = 20
    assert found(capture, "model_call_capture") == []


def test_a_report_sums_the_known_token_counts_and_counts_the_unknown() -> None:
    trajectory = clean_trajectory()  # call-b has no token_stats: every count of it is unknown
    capture = clean_capture()
    capture["calls"].append({**capture["calls"][0], "model_call_id": "b", "call_index": 1, "tokens_in": True})
    report = Report()
    report.add_record("rollout", {"ng_trajectory": trajectory, "ng_model_call_capture": capture}, [])
    report.add_record("rollout", {"ng_model_call_capture": capture}, [])  # no trajectory: the capture is tallied
    tokens = report.to_dict()["tokens"]
    assert report.model_calls == 4
    assert tokens["prompt_tokens"] == {"sum": 90 + 90, "unknown": 1 + 1}
    assert tokens["completion_tokens"] == {"sum": 20 + 40, "unknown": 1}
    assert tokens["reasoning_tokens"] == {"sum": 0, "unknown": 2 + 2}
    assert tokens["cached_tokens"] == {"sum": 10, "unknown": 1}
