"""Coverage rules: each criterion rated V, O and X on hand-written rollouts, with the reasons that decided."""

from __future__ import annotations

import copy
import json
import pickle
from typing import Any

import pytest

from gym_contract._objects import readable
from gym_contract.checking import check_files
from gym_contract.coverage import CRITERIA, CoverageMatrix, coverage_matrix, rollout_coverage
from gym_contract.report import Report
from gym_contract.validation._fastpath import skeleton
from tests.support import REPO

POLICY = {"type": "responses_api_models", "name": "policy"}
EXAMPLES = REPO / "examples" / "rollouts.jsonl"


def model_call(call_id: str, **overrides: Any) -> dict[str, Any]:
    call: dict[str, Any] = {
        "model_call_id": call_id,
        "started_at": 1_786_000_000.0,
        "completed_at": 1_786_000_001.0,
        "duration_ms": 1000.0,
        "request": {"input": "q"},
        "response": {"output": []},
        "response_metadata": {
            "response_id": f"resp_{call_id}",
            "model_ref": POLICY,
            "model": "m",
            "dialect": "responses",
            "status_code": 200,
        },
        "token_stats": {
            "prompt_tokens": 90,
            "completion_tokens": 20,
            "reasoning_tokens": 5,
            "total_tokens": 110,
            "cached_tokens": 0,
        },
    }
    call.update(overrides)
    return call


def tool_call(tool_call_id: str, started: float | None, completed: float | None, **overrides: Any) -> dict[str, Any]:
    tool: dict[str, Any] = {
        "kind": "tool_call",
        "invocation_id": "root",
        "tool_call_id": tool_call_id,
        "tool_name": "lookup",
        "started_at": started,
        "completed_at": completed,
        "duration_ms": None if started is None or completed is None else (completed - started) * 1000,
        "timing_source": "executor",
        "status": "completed",
        "output": "found",
    }
    tool.update(overrides)
    return tool


def conversation(*call_ids: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = [{"type": "message", "role": "user", "content": "q"}]
    for call_id in call_ids:
        items.append({"type": "function_call", "call_id": call_id, "name": "lookup", "arguments": "{}"})
        items.append({"type": "function_call_output", "call_id": call_id, "output": "found"})
    return items


def turn(turn_no: int, **overrides: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "invocation_id": "root",
        "task_id": "7",
        "rollout_id": "7-0",
        "turn_no": turn_no,
        "timestamp": 1_786_000_000.0 + turn_no,
        "question": [{"role": "user", "content": "q"}],
        "answer": "a",
        "reasoning_content": "r",
        "resolved": True,
        "step_count": turn_no,
        "model_calls": [{"model_call_id": f"call-{turn_no}"}],
    }
    fields.update(overrides)
    return fields


def complete_rollout() -> dict[str, Any]:
    """A rollout whose evidence is complete on every criterion."""
    trajectory = {
        "schema_version": "1.0",
        "task_id": "7",
        "rollout_id": "7-0",
        "invocations": [
            {
                "kind": "agent_invocation",
                "invocation_id": "root",
                "status": "completed",
                "model_calls": [{"model_call_id": "call-1"}, {"model_call_id": "call-2"}],
                "conversation": conversation("t1", "t2"),
            }
        ],
        "turns": [turn(1), turn(2)],
        "model_calls": [model_call("call-1"), model_call("call-2")],
        # Parallel calls, each with its own interval.
        "tool_calls": [
            tool_call("t1", 1_786_000_002.0, 1_786_000_004.0),
            tool_call("t2", 1_786_000_003.0, 1_786_000_005.0),
        ],
        "gaps": [],
    }
    return {
        "_ng_task_index": 7,
        "_ng_rollout_index": 0,
        "agent_ref": {"name": "my_agent"},
        "ng_agent_observations": {"source": "claude_code", "records": trajectory["invocations"], "gaps": []},
        "ng_trajectory": trajectory,
    }


def rated(record: dict[str, Any], criterion: str) -> tuple[str, tuple[str, ...]]:
    coverage = rollout_coverage(record)
    assert coverage is not None
    verdict = coverage.verdict(criterion)
    return verdict.verdict, verdict.reasons


def changed(**trajectory_changes: Any) -> dict[str, Any]:
    record = complete_rollout()
    record["ng_trajectory"].update(copy.deepcopy(trajectory_changes))
    return record


def with_gap(code: str) -> dict[str, Any]:
    return changed(gaps=[{"code": code, "invocation_id": None, "detail": None}])


def test_a_complete_rollout_is_rated_v_on_every_criterion() -> None:
    coverage = rollout_coverage(complete_rollout())
    assert coverage is not None
    assert [v.verdict for v in coverage.verdicts] == ["V"] * 7


# ------------------------------------------------------------------------------------------ V / O / X per criterion

CASES: list[tuple[str, str, dict[str, Any], str]] = [
    # C1: statistics and metadata in the standard schema
    (
        "C1",
        "O",
        changed(model_calls=[model_call("call-1"), model_call("call-2", response_metadata={"model": "m"})]),
        "model call without response_metadata.dialect",
    ),
    ("C1", "O", with_gap("model_call_capture_incomplete"), "gap model_call_capture_incomplete"),
    ("C1", "X", changed(model_calls=[]), "no model calls"),
    # C2: token counts, by what each dialect reports
    (
        "C2",
        "O",
        changed(model_calls=[model_call("call-1"), model_call("call-2", token_stats={"prompt_tokens": 3})]),
        "token_stats.completion_tokens unknown",
    ),
    (
        "C2",
        "O",
        changed(
            model_calls=[
                model_call("call-1", token_stats={**model_call("x")["token_stats"], "reasoning_tokens": None}),
                model_call("call-2"),
            ]
        ),
        "token_stats.reasoning_tokens unknown (responses dialect reports it)",
    ),
    (
        "C2",
        "X",
        changed(model_calls=[model_call("call-1", token_stats={}), model_call("call-2", token_stats={})]),
        "no model call has a token count",
    ),
    # C3: turns with every per-turn field
    ("C3", "O", changed(turns=[turn(1), turn(2, resolved=None)]), "turns[].resolved null"),
    (
        "C3",
        "O",
        changed(turns=[turn(1), {k: v for k, v in turn(2).items() if k != "answer"}]),
        "turns[].answer missing",
    ),
    ("C3", "O", with_gap("resolution_unavailable"), "gap resolution_unavailable"),
    ("C3", "X", changed(turns=[]), "no turns"),
    # C4: conversations of every invocation, every model call owned by one
    (
        "C4",
        "O",
        changed(model_calls=[model_call("call-1"), model_call("call-2"), model_call("stray")]),
        "model call that no invocation's model_calls reference resolves to",
    ),
    ("C4", "O", with_gap("multimodal_history_redacted"), "gap multimodal_history_redacted"),
    (
        "C4",
        "X",
        changed(invocations=[{"kind": "agent_invocation", "invocation_id": "root", "conversation": []}]),
        "no invocation with a conversation",
    ),
    # C5: output, status, timestamps and duration of every tool call
    (
        "C5",
        "O",
        changed(tool_calls=[tool_call("t1", 1.7e9, 1.7e9 + 1, status="unknown")]),
        "tool_calls[].status unknown",
    ),
    (
        "C5",
        "O",
        changed(tool_calls=[tool_call("t1", 1.7e9, 1.7e9 + 1, duration_ms=None)]),
        "tool_calls[].duration_ms null",
    ),
    (
        "C5",
        "O",
        changed(tool_calls=[tool_call("t9", 1.7e9, 1.7e9 + 1)]),
        "tool call without a function_call_output in its invocation's conversation",
    ),
    ("C5", "X", changed(tool_calls=[]), "no tool calls"),
    # C6: each tool call timed on its own
    (
        "C6",
        "O",
        changed(tool_calls=[tool_call("t1", 1.7e9, 1.7e9 + 2), tool_call("t2", 1.7e9, 1.7e9 + 2)]),
        "overlapping tool calls share one identical interval",
    ),
    (
        "C6",
        "O",
        changed(tool_calls=[tool_call("t1", 1.7e9, 1.7e9 + 2), tool_call("t2", None, None)]),
        "tool call without its own started_at and completed_at",
    ),
    ("C6", "O", with_gap("tool_timing_unavailable"), "gap tool_timing_unavailable"),
    (
        "C6",
        "X",
        changed(tool_calls=[tool_call("t1", None, None)]),
        "no tool call has started_at and completed_at",
    ),
    # C7: agent-side evidence
    ("C7", "O", with_gap("no_sandbox_runtime"), "gap no_sandbox_runtime"),
    (
        "C7",
        "X",
        {"_ng_task_index": 7, "_ng_rollout_index": 0, "ng_model_call_capture": {"rollout_id": "7-0", "calls": []}},
        "no agent-side evidence (observations, invocations, turns or tool calls)",
    ),
]


@pytest.mark.parametrize(
    ("criterion", "expected", "record", "reason"), CASES, ids=[f"{c[0]}-{c[1]}-{c[3]}" for c in CASES]
)
def test_each_criterion_is_rated_with_the_reason_that_decided(
    criterion: str, expected: str, record: dict[str, Any], reason: str
) -> None:
    verdict, reasons = rated(record, criterion)
    assert verdict == expected
    assert reason in reasons


def test_every_criterion_has_a_v_an_o_and_an_x_case() -> None:
    cases = {(criterion, verdict) for criterion, verdict, _, _ in CASES} | {(f"C{n}", "V") for n in range(1, 8)}
    assert cases == {(f"C{n}", v) for n in range(1, 8) for v in "VOX"}


def test_a_gap_the_registry_does_not_tie_to_a_criterion_leaves_it_at_v() -> None:
    assert rated(with_gap("no_sandbox_runtime"), "C5")[0] == "V"
    assert rated(with_gap("some_unregistered_code"), "C7")[0] == "V"


def test_anthropic_calls_need_no_reasoning_count_and_chat_calls_need_neither_extra_count() -> None:
    stats = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2, "reasoning_tokens": None}
    messages = {**model_call("x")["response_metadata"], "dialect": "messages"}
    chat = {**model_call("x")["response_metadata"], "dialect": "chat"}
    anthropic = changed(
        model_calls=[model_call("call-1", response_metadata=messages, token_stats={**stats, "cached_tokens": 4})]
    )
    assert rated(anthropic, "C2")[0] == "V"
    no_cache = changed(model_calls=[model_call("call-1", response_metadata=messages, token_stats=stats)])
    assert rated(no_cache, "C2") == ("O", ("token_stats.cached_tokens unknown (messages dialect reports it)",))
    assert rated(changed(model_calls=[model_call("call-1", response_metadata=chat, token_stats=stats)]), "C2")[0] == "V"


def test_a_model_call_owned_by_model_ref_and_response_id_counts_as_owned() -> None:
    record = changed(model_calls=[model_call("call-1"), model_call("call-2", model_call_id=None)])
    record["ng_trajectory"]["invocations"][0]["model_calls"][1] = {"model_ref": POLICY, "response_id": "resp_call-2"}
    assert rated(record, "C4")[0] == "V"


def test_payload_values_never_decide_so_a_skeleton_is_rated_like_the_whole_record() -> None:
    record = complete_rollout()
    skeleton = copy.deepcopy(record)
    for call in skeleton["ng_trajectory"]["model_calls"]:
        call["request"] = call["response"] = None
    for tool in skeleton["ng_trajectory"]["tool_calls"]:
        tool["output"] = None
    for item in skeleton["ng_trajectory"]["turns"]:
        item["question"] = item["answer"] = item["reasoning_content"] = None
    assert rollout_coverage(skeleton) == rollout_coverage(record)


def test_without_a_trajectory_the_observations_and_the_capture_are_rated() -> None:
    record = complete_rollout()
    del record["ng_trajectory"]
    record["ng_model_call_capture"] = {
        "rollout_id": "7-0",
        "calls": [
            {
                "model_call_id": "call-1",
                "dialect": "chat",
                "model": "m",
                "status_code": 200,
                "tokens_in": 3,
                "tokens_out": 1,
                "tokens_total": 4,
            }
        ],
        "gaps": [{"code": "model_call_capture_records_unreadable", "detail": "count=1"}],
    }
    coverage = rollout_coverage(record)
    assert coverage is not None
    assert [v.verdict for v in coverage.verdicts] == ["O", "O", "X", "O", "X", "X", "V"]
    assert "gap model_call_capture_records_unreadable" in coverage.verdict("C1").reasons


def test_records_of_other_kinds_and_odd_shapes_are_not_rated_and_never_raise() -> None:
    assert rollout_coverage({"source": "pi", "records": []}) is None
    odd = {
        "_ng_task_index": 1,
        "_ng_rollout_index": 0,
        "ng_trajectory": {
            "task_id": "1",
            "rollout_id": "1-0",
            "model_calls": [None, 3, {"token_stats": [], "response_metadata": "x"}],
            "invocations": "no",
            "tool_calls": [{"started_at": "x"}],
            "turns": [[]],
            "gaps": [{"code": 5}],
        },
    }
    coverage = rollout_coverage(odd)
    assert coverage is not None
    assert coverage.verdict("C1").verdict == "O"
    unhashable = changed(
        model_calls=[model_call("call-1", model_call_id=["x"], response_metadata={"model_ref": {"type": []}})],
        tool_calls=[{**tool_call("t1", 1.7e9, 1.7e9 + 1), "invocation_id": {"a": 1}, "tool_call_id": [1]}],
        invocations=[{"invocation_id": [], "model_calls": [{"model_call_id": {}}], "conversation": [{"call_id": []}]}],
    )
    verdicts = rollout_coverage(unhashable)
    assert verdicts is not None
    assert (verdicts.verdict("C4").verdict, verdicts.verdict("C5").verdict) == ("O", "O")


# ------------------------------------------------------------------------------------------ aggregation


def test_rollouts_are_grouped_by_observation_source_else_agent_name() -> None:
    without_observations = complete_rollout()
    del without_observations["ng_agent_observations"]
    matrix = coverage_matrix([complete_rollout(), without_observations, with_gap("no_sandbox_runtime")])
    assert matrix.rollouts == {"claude_code": 2, "my_agent": 1}
    assert matrix.cell("C7", "claude_code") == "V 50% O 50%"
    assert matrix.cell("C7") == "V 67% O 33%"
    by_agent = coverage_matrix([complete_rollout(), without_observations], by="agent")
    assert by_agent.rollouts == {"my_agent": 2}


def test_a_mixed_cell_never_shows_a_present_verdict_as_none_or_all() -> None:
    matrix = coverage_matrix([complete_rollout()] * 299 + [with_gap("no_sandbox_runtime")])
    assert matrix.cell("C7") == "V >99% O <1%"
    assert coverage_matrix([complete_rollout()] * 3).cell("C7") == "V"


def test_the_matrix_gives_counts_per_verdict_and_the_reasons_that_kept_rollouts_from_v() -> None:
    summary = coverage_matrix([complete_rollout(), with_gap("no_sandbox_runtime")]).to_dict()
    row = summary["producers"]["claude_code"]
    assert (row["rollouts"], row["V"]["C7"], row["O"]["C7"], row["X"]["C7"]) == (2, 1, 1, 0)
    assert summary["why_not_v"] == {"C7": {"gap no_sandbox_runtime": 1}}


def test_matrices_pickle_and_merge_by_addition() -> None:
    first = coverage_matrix([complete_rollout()])
    second = pickle.loads(pickle.dumps(coverage_matrix([with_gap("no_sandbox_runtime")])))
    first.merge(second)
    assert first.to_dict() == coverage_matrix([complete_rollout(), with_gap("no_sandbox_runtime")]).to_dict()
    assert CoverageMatrix().to_dict()["rollouts"] == 0


def test_the_validation_report_holds_the_same_matrix_on_the_fast_and_the_precise_path() -> None:
    fast = check_files([str(EXAMPLES)], now=1_790_000_000.0)
    precise = check_files([str(EXAMPLES)], now=1_790_000_000.0, fast=False)
    assert fast.to_dict()["coverage"] == precise.to_dict()["coverage"]
    records = [json.loads(line) for line in EXAMPLES.read_text().splitlines()]
    assert fast.coverage.to_dict() == coverage_matrix(records).to_dict()  # every example carries observations


def test_a_report_merges_the_coverage_of_its_parts() -> None:
    whole = Report()
    for _ in range(2):
        part = Report()
        part.add_record("rollout", complete_rollout(), [])
        whole.merge(pickle.loads(pickle.dumps(part)))
    assert whole.to_dict()["coverage"]["producers"]["claude_code"]["rollouts"] == 2


def test_the_quick_checks_for_complete_evidence_agree_with_the_rules() -> None:
    from gym_contract.coverage import _rules as _coverage_rules

    records = [complete_rollout(), *(case[2] for case in CASES)]
    records += [json.loads(line) for line in EXAMPLES.read_text().splitlines()]
    for record in records:
        # As parsed, and as the fast path decodes it when it takes the line: each form rated alike.
        forms = [readable(record), skeleton(json.dumps(record, separators=(",", ":")).encode(), "rollout")]
        for form in (form for form in forms if form is not None):
            coverage = rollout_coverage(form, "rollout")
            assert coverage is not None
            evidence = _coverage_rules.evidence_of(readable(form), "rollout")
            by_rules = [_coverage_rules.RULES[criterion](evidence) for criterion in CRITERIA]
            assert [(v.verdict, v.reasons) for v in coverage.verdicts] == by_rules
        assert rollout_coverage(forms[0], "rollout") == rollout_coverage(record)


def test_a_gap_on_complete_evidence_is_rated_as_the_rules_rate_it() -> None:
    """Complete evidence under a gap is told by the quick checks, yet rated O with the rule's own reasons."""
    from gym_contract import schemas
    from gym_contract.coverage import _rules as _coverage_rules

    for code, entry in schemas.gap_codes().items():
        record = with_gap(code)
        coverage = rollout_coverage(record)
        assert coverage is not None
        evidence = _coverage_rules.evidence_of(readable(record), "rollout")
        by_rules = [_coverage_rules.RULES[criterion](evidence) for criterion in CRITERIA]
        assert [(v.verdict, v.reasons) for v in coverage.verdicts] == by_rules
        for criterion in entry.get("criteria") or ():
            assert coverage.verdict(criterion).reasons == (f"gap {code}",)
