"""Validation through the Python API: clean records, messages, keywords, order, rollouts, `validate`."""

from __future__ import annotations

import copy
from collections import OrderedDict
from typing import Any

import pytest

from gym_contract import ContractError, is_valid, iter_diagnostics, validate
from gym_contract.validation import detect_kind

NOW = 1_786_100_000.0
POLICY = {"type": "responses_api_models", "name": "policy"}


def invocation(invocation_id: str, **fields: Any) -> dict[str, Any]:
    return {"kind": "agent_invocation", "invocation_id": invocation_id, **fields}


def tool(invocation_id: str, tool_call_id: str, **fields: Any) -> dict[str, Any]:
    return {"kind": "tool_call", "invocation_id": invocation_id, "tool_call_id": tool_call_id, **fields}


def clean_bundle() -> dict[str, Any]:
    return {
        "source": "claude_code",
        "records": [
            invocation(
                "root",
                status="completed",
                model_calls=[{"model_ref": POLICY, "response_id": "msg-1"}],
                conversation=[
                    {"role": "user", "content": "solve", "type": "message"},
                    {"type": "function_call", "call_id": "spawn", "name": "Task", "arguments": "{}"},
                ],
            ),
            invocation("child", parent_invocation_id="root", spawned_by_tool_call_id="spawn"),
            tool("root", "spawn", started_at=1_786_000_000.0, completed_at=1_786_000_003.0, duration_ms=3000.0),
            {
                "kind": "context_compaction",
                "invocation_id": "root",
                "observed_at": 1_786_000_001.0,
                "tokens_before": 1000,
                "tokens_after": 200,
            },
        ],
        "gaps": [{"code": "no_sandbox_runtime"}],
    }


def clean_trajectory() -> dict[str, Any]:
    return {
        "schema_version": "1.0",
        "task_id": "7",
        "rollout_id": "7-0",
        "invocations": [
            invocation(
                "root", model_calls=[{"model_call_id": "call-a"}, {"model_ref": POLICY, "response_id": "resp_b"}]
            )
        ],
        "turns": [
            {
                "invocation_id": "root",
                "task_id": "7",
                "rollout_id": "7-0",
                "turn_no": 1,
                "timestamp": 1_786_000_000.0,
                "step_count": 0,
                "model_calls": [{"model_call_id": "call-a"}],
            },
        ],
        "model_calls": [
            {
                "model_call_id": "call-a",
                "started_at": 1_786_000_000.0,
                "completed_at": 1_786_000_000.5,
                "duration_ms": 500.0,
                "token_stats": {"prompt_tokens": 90, "completion_tokens": 20, "total_tokens": 110, "cached_tokens": 10},
            },
            {"model_call_id": "call-b", "response_metadata": {"response_id": "resp_b", "model_ref": POLICY}},
        ],
        "tool_calls": [tool("root", "t1", started_at=1_786_000_001.0, completed_at=1_786_000_001.2, duration_ms=200.0)],
        "gaps": [{"code": "resolution_unavailable", "invocation_id": "root", "detail": None}],
    }


def clean_capture() -> dict[str, Any]:
    return {
        "rollout_id": "7-0",
        "metrics": {
            "tokens_in": 90,
            "tokens_out": 20,
            "tokens_reasoning": None,
            "tokens_total": 110,
            "cached_tokens": 0,
            "latency_total_ms": 800.0,
            "num_calls": 1,
        },
        "calls": [
            {
                "model_call_id": "a",
                "call_index": 0,
                "tokens_in": 90,
                "tokens_out": 20,
                "tokens_total": 110,
                "cached_tokens": 0,
                "started_at": 1_786_000_000.0,
            }
        ],
    }


CLEAN = {"bundle": clean_bundle, "trajectory": clean_trajectory, "model_call_capture": clean_capture}


def diagnostics(record: dict[str, Any], kind: str | None = None) -> list[tuple[str, str, str]]:
    return [(d.code, d.severity, d.path) for d in iter_diagnostics(record, kind, now=NOW)]


@pytest.mark.parametrize("kind", sorted(CLEAN))
def test_clean_records_give_no_diagnostic(kind):
    assert diagnostics(CLEAN[kind](), kind) == []
    assert detect_kind(CLEAN[kind]()) == kind


def edit(kind: str, change) -> dict[str, Any]:
    record = copy.deepcopy(CLEAN[kind]())
    change(record)
    return record


# Each rule's violating and clean cases, with exact codes, severities and paths, are the
# conformance suite's (tests/conformance/, run by tests/test_conformance.py); what follows checks
# what the suite cannot say: messages, keywords, order, and the Python API.


def test_a_cycle_is_reported_once_whatever_its_length():
    bundle = {
        "source": "pi",
        "records": [
            invocation("a", parent_invocation_id="c"),
            invocation("b", parent_invocation_id="a"),
            invocation("c", parent_invocation_id="b"),
            invocation("d", parent_invocation_id="a"),
        ],
    }
    cycles = [d for d in iter_diagnostics(bundle, now=NOW) if d.code == "invocation_parent_cycle"]
    assert len(cycles) == 1
    assert cycles[0].message == "parent links form a cycle: a → c → b → a"
    assert cycles[0].path == "/records/0/parent_invocation_id"


def test_schema_violations_name_keyword_and_schema():
    record = edit("trajectory", lambda t: t["model_calls"][0]["token_stats"].update(prompt_tokens=-1))
    (violation,) = [d for d in iter_diagnostics(record, now=NOW) if d.code == "schema_violation"]
    assert violation.keyword == "minimum"
    assert violation.schema_id.endswith("/v1/trajectory.schema.json")
    assert violation.kind == "trajectory"


def test_a_bad_conversation_item_is_explained_by_its_own_branch():
    record = edit(
        "trajectory", lambda t: t["invocations"][0].update(conversation=[{"type": "function_call", "name": "x"}])
    )
    messages = [(d.path, d.message) for d in iter_diagnostics(record, now=NOW) if d.code == "schema_violation"]
    assert messages == [("/invocations/0/conversation/0", "'arguments' is a required property")]


def test_rollout_records_check_each_attachment_under_its_key():
    row = {
        "_ng_task_index": 7,
        "_ng_rollout_index": 0,
        "ng_trajectory": edit("trajectory", lambda t: t["turns"][0].update(task_id="8")),
        "ng_agent_observations": clean_bundle(),
        "ng_model_call_capture": clean_capture(),
    }
    found = diagnostics(row)
    assert found == [("turn_identity_mismatch", "error", "/ng_trajectory/turns/0/task_id")]


def test_rollout_with_a_bad_explicit_id():
    assert ("rollout_id_invalid", "error", "/_ng_rollout_id") in diagnostics({"_ng_rollout_id": "a/b"})


def test_rollout_attachment_that_is_not_an_object():
    assert diagnostics({"_ng_task_index": 1, "ng_trajectory": []}) == [("schema_violation", "error", "/ng_trajectory")]


def test_unknown_shapes_and_non_objects():
    assert diagnostics({"hello": 1}) == [("kind_unknown", "error", "")]
    assert [d.code for d in iter_diagnostics([1, 2])] == ["record_not_object"]
    with pytest.raises(ValueError, match="unknown kind"):
        list(iter_diagnostics({}, "turn"))


def test_validate_raises_once_with_every_diagnostic():
    record = edit(
        "trajectory", lambda t: (t["turns"][0].update(task_id="8"), t["tool_calls"].append(tool("root", "t1")))
    )
    with pytest.raises(ContractError) as caught:
        validate(record, now=NOW)
    assert {d.code for d in caught.value.diagnostics} == {"turn_identity_mismatch", "tool_call_duplicate"}
    assert "turn_identity_mismatch" in str(caught.value)


def test_warnings_do_not_make_a_record_invalid():
    record = edit("bundle", lambda b: b["gaps"].append({"code": "made_up_gap"}))
    assert is_valid(record, now=NOW)
    validate(record, now=NOW)


def test_several_problems_of_one_item_come_in_field_order():
    def break_call(call):
        call.update(started_at=12.0, completed_at=1_786_000_000_000.0, tokens_total=100)
        call.update(cached_tokens=call["tokens_in"] + 1)

    capture = edit("model_call_capture", lambda c: break_call(c["calls"][0]))
    found = [(d.code, d.path) for d in iter_diagnostics(capture, "model_call_capture", now=NOW)]
    assert found[:4] == [
        ("timestamp_implausible", "/calls/0/started_at"),
        ("timestamp_implausible", "/calls/0/completed_at"),
        ("token_total_mismatch", "/calls/0"),
        ("cached_tokens_exceed_prompt", "/calls/0"),
    ]

    def break_tool(tool):
        tool.update(started_at=12.0, completed_at=13.0, duration_ms=5.0)

    bundle = edit("bundle", lambda b: break_tool(b["records"][2]))
    found = [(d.code, d.path) for d in iter_diagnostics(bundle, "bundle", now=NOW)]
    assert found == [
        ("timestamp_implausible", "/records/2/started_at"),
        ("timestamp_implausible", "/records/2/completed_at"),
        ("duration_mismatch", "/records/2/duration_ms"),
    ]


def test_rules_see_objects_and_arrays_of_any_mapping_and_list_subclass():
    class Records(list):
        pass

    bundle = clean_bundle()
    bundle["records"] = Records(OrderedDict(record) for record in bundle["records"])
    bundle["records"].append(OrderedDict(invocation("root")))
    assert ("invocation_id_duplicate", "error", "/records/4/invocation_id") in diagnostics(bundle, "bundle")
    bundle["records"][1]["spawned_by_tool_call_id"] = "nope"
    assert ("spawned_by_tool_call_missing", "warning", "/records/1/spawned_by_tool_call_id") in diagnostics(
        bundle, "bundle"
    )
