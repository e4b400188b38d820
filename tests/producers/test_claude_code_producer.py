"""The Claude Code producer on the eight fixture recipes of PRODUCERS 5.3: exact records and gaps."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gym_contract import iter_diagnostics
from gym_contract.producers.claude_code import observe, read_run

POLICY = {"type": "responses_api_models", "name": "policy"}
T = 1784714400.0  # 2026-07-22T10:00:00Z


def ts(second: int) -> str:
    return f"2026-07-22T10:00:{second:02d}Z"


def assistant(uuid: str, message_id: str | None, content: Any, second: int, agent: str | None = None, session="S"):
    event: dict[str, Any] = {
        "type": "assistant",
        "sessionId": session,
        "timestamp": ts(second),
        "uuid": uuid,
        "message": {"role": "assistant", "id": message_id, "content": content},
    }
    return event | ({"agentId": agent} if agent else {})


def user(uuid: str, content: Any, second: int, agent: str | None = None, session="S", result=None):
    event: dict[str, Any] = {
        "type": "user",
        "sessionId": session,
        "timestamp": ts(second),
        "uuid": uuid,
        "message": {"role": "user", "content": content},
    }
    event |= {"agentId": agent} if agent else {}
    return event | ({"toolUseResult": result} if result is not None else {})


def tool_use(call_id: str, name: str = "Read") -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": {"path": "a.py"}}


def tool_result(call_id: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": "result", "is_error": False}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def write(config: Path, relative: str, *lines: Any) -> None:
    path = config / "projects" / "p" / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))


def ref(response_id: str) -> dict[str, Any]:
    return {"model_call_id": None, "model_ref": POLICY, "response_id": response_id}


def produced(config: Path, **options: Any) -> dict[str, Any]:
    bundle = observe(config, model_ref="policy", **options).observations.model_dump(mode="json")
    assert list(iter_diagnostics(bundle, "bundle")) == []
    return bundle


def gaps(bundle: dict[str, Any]) -> list[tuple[str, str | None, str | None]]:
    return [(g["code"], g["invocation_id"], g["detail"]) for g in bundle["gaps"]]


def records(bundle: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [r for r in bundle["records"] if r["kind"] == kind]


def invocation(invocation_id: str, **fields: Any) -> dict[str, Any]:
    return {
        "kind": "agent_invocation",
        "invocation_id": invocation_id,
        "parent_invocation_id": None,
        "spawned_by_tool_call_id": None,
        "status": "unknown",
        "duration_ms": None,
        "error_type": None,
        **fields,
    }


def tool(invocation_id: str, call_id: str, started: float | None, completed: float | None, **fields: Any):
    duration = (completed - started) * 1000 if started is not None and completed is not None else None
    return {
        "kind": "tool_call",
        "invocation_id": invocation_id,
        "tool_call_id": call_id,
        "sandbox_id": None,
        "tool_name": "Read",
        "started_at": started,
        "completed_at": completed,
        "duration_ms": duration,
        "timing_source": "artifact",
        "status": "completed",
        "error_type": None,
    } | fields


def compaction(outcome: str, **fields: Any) -> dict[str, Any]:
    return {
        "kind": "context_compaction",
        "invocation_id": "S",
        "observed_at": None,
        "trigger": None,
        "tokens_before": None,
        "tokens_after": None,
        "outcome": outcome,
        "summary": None,
        "first_kept_item_id": None,
        "before_model_call": None,
        "model_calls": [],
        "after_model_call": None,
        **fields,
    }


def without_conversation(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k not in ("conversation", "model_calls")}


SUCCESS = {"type": "result", "subtype": "success", "is_error": False, "duration_ms": 5000, "session_id": "S"}


def test_a_nested_tree_with_parallel_tools_links_every_subagent_to_its_spawning_call(tmp_path: Path) -> None:
    write(
        tmp_path,
        "S.jsonl",
        user("u1", "solve", 0),
        assistant("E1", "msg-root", [{"type": "thinking", "thinking": "plan", "signature": "sig"}], 1),
        assistant("E2", "msg-root", [tool_use("tool-fast"), tool_use("tool-child", "Agent")], 1),
        user("r1", [tool_result("tool-fast")], 2),
        user("r2", [tool_result("tool-child")], 4, result={"agentId": "child", "status": "completed"}),
    )
    write(
        tmp_path,
        "S/subagents/agent-child.jsonl",
        user("c1", "child task", 1, agent="child"),
        assistant("C2", "msg-child", [tool_use("tool-grandchild", "Agent")], 2, agent="child"),
        user(
            "c3",
            [tool_result("tool-grandchild")],
            3,
            agent="child",
            result={"agentId": "grandchild", "status": "timeout"},
        ),
    )
    write(
        tmp_path,
        "S/subagents/agent-grandchild.jsonl",
        assistant("G1", "msg-grandchild", [text("done")], 3, agent="grandchild"),
    )

    bundle = produced(tmp_path, stream=[SUCCESS])

    assert [without_conversation(r) for r in records(bundle, "agent_invocation")] == [
        invocation("S", status="completed", duration_ms=5000.0),
        invocation("child", parent_invocation_id="S", spawned_by_tool_call_id="tool-child", status="completed"),
        invocation(
            "grandchild",
            parent_invocation_id="child",
            spawned_by_tool_call_id="tool-grandchild",
            status="incomplete",
            error_type="timeout",
        ),
    ]
    root = records(bundle, "agent_invocation")[0]
    assert root["model_calls"] == [ref("msg-root")]
    assert root["conversation"] == [
        {"type": "message", "role": "user", "content": "solve"},
        {
            "type": "reasoning",
            "id": "E1:thinking:0",
            "summary": [{"type": "summary_text", "text": "plan"}],
            "encrypted_content": "sig",
            "content": None,
        },
        {
            "type": "function_call",
            "id": "tool-fast",
            "call_id": "tool-fast",
            "name": "Read",
            "arguments": '{"path":"a.py"}',
            "status": "completed",
        },
        {
            "type": "function_call",
            "id": "tool-child",
            "call_id": "tool-child",
            "name": "Agent",
            "arguments": '{"path":"a.py"}',
            "status": "completed",
        },
        {"type": "function_call_output", "id": None, "call_id": "tool-fast", "output": "result", "status": "completed"},
        {
            "type": "function_call_output",
            "id": None,
            "call_id": "tool-child",
            "output": "result",
            "status": "completed",
        },
    ]
    assert records(bundle, "agent_invocation")[2]["conversation"] == [
        {
            "type": "message",
            "id": "G1:text:0",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "done", "annotations": [], "logprobs": None}],
        }
    ]
    assert records(bundle, "tool_call") == [
        tool("S", "tool-fast", T + 1, T + 2),
        tool("S", "tool-child", T + 1, T + 4, tool_name="Agent"),
        tool("child", "tool-grandchild", T + 2, T + 3, tool_name="Agent", status="timeout"),
    ]
    assert gaps(bundle) == []


def test_a_compaction_boundary_and_its_summary_merge_into_one_observation_between_two_calls(tmp_path: Path) -> None:
    write(
        tmp_path,
        "S.jsonl",
        assistant("E1", "msg-before", [text("before")], 1),
        {"type": "system", "subtype": "compact_boundary", "sessionId": "S", "timestamp": ts(2), "uuid": "B"},
        {
            "type": "user",
            "sessionId": "S",
            "timestamp": "not a time",
            "uuid": "SUM",
            "isCompactSummary": True,
            "compactMetadata": {"tokensBefore": 1000, "tokensAfter": 200, "trigger": "auto"},
            "message": {"role": "user", "content": "Summary: earlier work"},
        },
        assistant("E2", "msg-after", [text("after")], 3),
    )

    bundle = produced(tmp_path)

    assert records(bundle, "context_compaction") == [
        compaction(
            "completed",
            observed_at=T + 2,
            trigger="auto",
            tokens_before=1000,
            tokens_after=200,
            summary="Summary: earlier work",
            before_model_call=ref("msg-before"),
            after_model_call=ref("msg-after"),
        )
    ]
    assert records(bundle, "agent_invocation")[0]["model_calls"] == [ref("msg-before"), ref("msg-after")]
    assert gaps(bundle) == [
        ("invocation_outcome_unavailable", "S", None),
        ("compaction_model_call_reference_unavailable", "S", None),
    ]


def test_compact_metadata_alone_is_a_compaction_whose_outcome_is_unknown(tmp_path: Path) -> None:
    metadata_only = {
        "type": "system",
        "sessionId": "S",
        "timestamp": ts(1),
        "uuid": "M",
        "compactMetadata": {"trigger": "auto"},
    }
    write(tmp_path, "S.jsonl", metadata_only)

    bundle = produced(tmp_path)

    assert records(bundle, "context_compaction") == [compaction("unknown", observed_at=T + 1, trigger="auto")]
    assert gaps(bundle) == [
        ("invocation_outcome_unavailable", "S", None),
        ("compaction_before_model_call_unavailable", "S", None),
        ("compaction_after_model_call_unavailable", "S", None),
        ("compaction_model_call_reference_unavailable", "S", None),
        ("compaction_outcome_unavailable", "S", None),
    ]


def test_malformed_transcripts_leave_one_gap_per_problem_and_the_rest_is_still_read(tmp_path: Path) -> None:
    write(
        tmp_path,
        "S.jsonl",
        '{"type": "user", broken',
        assistant("E1", "msg-1", [tool_use("t-bad-time")], 1) | {"timestamp": "yesterday"},
        assistant("E2", "msg-2", [tool_use("t-reversed")], 5),
        user("r1", [tool_result("t-reversed")], 3),
        user("r2", [tool_result("t-orphan")], 6),
    )
    write(tmp_path, "S/subagents/agent-lost.jsonl", assistant("L1", "msg-lost", [text("hi")], 2, agent="lost"))

    bundle = produced(tmp_path)

    assert [r["invocation_id"] for r in records(bundle, "agent_invocation")] == ["S", "lost"]
    assert records(bundle, "tool_call") == [
        tool("S", "t-bad-time", None, None, timing_source=None, status="incomplete"),
        tool("S", "t-reversed", T + 5, None),
        tool("S", "t-orphan", None, T + 6, tool_name=None),
    ]
    assert gaps(bundle) == [
        ("malformed_transcript_line", None, "p/S.jsonl:1"),
        ("invocation_outcome_unavailable", "S", None),
        ("subagent_parent_unavailable", "lost", None),
        ("invocation_outcome_unavailable", "lost", None),
        ("tool_start_timestamp_missing", "S", "t-bad-time"),
        ("tool_result_missing", "S", "t-bad-time"),
        ("tool_timing_invalid", "S", "t-reversed"),
        ("tool_start_missing", "S", "t-orphan"),
    ]


def test_a_subagent_link_that_would_close_a_cycle_is_dropped_with_the_parent_it_named(tmp_path: Path) -> None:
    write(
        tmp_path,
        "root.jsonl",
        assistant("E1", "msg-1", [tool_use("t-self", "Agent"), tool_use("t-a", "Agent")], 1, session="root"),
        user("r1", [tool_result("t-self")], 2, session="root", result={"agentId": "root", "status": "completed"}),
        user("r2", [tool_result("t-a")], 3, session="root", result={"agentId": "agent-a", "status": "completed"}),
    )
    back_edge = {"agentId": "root", "status": "completed"}
    write(
        tmp_path,
        "root/subagents/agent-agent-a.jsonl",
        assistant("A1", "msg-a", [tool_use("t-back", "Agent")], 2, agent="agent-a", session="root"),
        user("A2", [tool_result("t-back")], 3, agent="agent-a", session="root", result=back_edge),
    )

    bundle = produced(tmp_path)

    assert [without_conversation(r) for r in records(bundle, "agent_invocation")] == [
        invocation("root"),
        invocation("agent-a", parent_invocation_id="root", spawned_by_tool_call_id="t-a", status="completed"),
    ]
    assert gaps(bundle) == [
        ("cyclic_subagent_parent", "root", "root"),
        ("cyclic_subagent_parent", "root", "agent-a"),
        ("invocation_outcome_unavailable", "root", None),
    ]


def test_jsonl_files_outside_projects_are_not_transcripts(tmp_path: Path) -> None:
    (tmp_path / "skills").mkdir()
    (tmp_path / "projects").mkdir()
    (tmp_path / "skills" / "notes.jsonl").write_text(json.dumps({"sessionId": "S", "type": "user"}) + "\n")

    assert produced(tmp_path) == {
        "source": "claude_code",
        "records": [],
        "gaps": [{"code": "agent_transcript_unavailable", "invocation_id": None, "detail": None}],
    }


def test_unsupported_blocks_and_a_missing_response_id_are_gaps_and_the_text_around_them_stays(tmp_path: Path) -> None:
    image = {"type": "image", "source": {"type": "base64", "data": "AAAA"}}
    write(tmp_path, "S.jsonl", assistant("E1", None, [image, text("look")], 1), user("U1", [image, text("see")], 2))

    bundle = produced(tmp_path)

    only = records(bundle, "agent_invocation")[0]
    assert only["model_calls"] == []
    assert [item.get("id") for item in only["conversation"]] == ["E1:text:1", None]
    assert gaps(bundle) == [
        ("model_response_id_missing", "S", None),
        ("unsupported_assistant_content_block", "S", "image"),
        ("unsupported_user_content_block", "S", None),
        ("invocation_outcome_unavailable", "S", None),
    ]


def status(**fields: Any) -> dict[str, Any]:
    return {"type": "system", "subtype": "status", "session_id": "S", **fields}


def test_stream_compaction_attempts_that_failed_or_never_closed_become_bare_compactions(tmp_path: Path) -> None:
    write(tmp_path, "S.jsonl", user("u1", "go", 0), assistant("E1", "msg-1", [text("ok")], 1))
    stream = [
        status(status="compacting"),
        status(status="requesting"),
        status(status=None, compact_result="failed"),
        status(status=None, compact_result="failed"),  # no opener: still a failed attempt
        status(status="compacting"),
        status(status=None, compact_result="success"),  # the transcript's boundary speaks for it
        status(status="compacting"),
        SUCCESS | {"duration_ms": 1500},
    ]

    bundle = produced(tmp_path, stream=stream)

    assert records(bundle, "context_compaction") == [compaction("failed"), compaction("failed"), compaction("unknown")]
    bare = [
        ("compaction_before_model_call_unavailable", "S", None),
        ("compaction_after_model_call_unavailable", "S", None),
        ("compaction_model_call_reference_unavailable", "S", None),
    ]
    assert gaps(bundle) == [
        *bare,
        ("compaction_timestamp_missing", "S", None),
        *bare,
        ("compaction_timestamp_missing", "S", None),
        *bare,
        ("compaction_outcome_unavailable", "S", None),
        ("compaction_timestamp_missing", "S", None),
    ]
    assert without_conversation(records(bundle, "agent_invocation")[0]) == invocation(
        "S", status="completed", duration_ms=1500.0
    )


def test_without_a_model_server_no_reference_is_made_and_ownership_is_a_gap(tmp_path: Path) -> None:
    write(tmp_path, "S.jsonl", assistant("E1", "msg-1", [text("ok")], 1))

    bundle = observe(tmp_path).observations.model_dump(mode="json")

    assert records(bundle, "agent_invocation")[0]["model_calls"] == []
    assert gaps(bundle) == [
        ("invocation_outcome_unavailable", "S", None),
        ("model_call_ownership_unavailable", None, None),
    ]


def test_a_run_without_a_sandbox_says_so_only_when_the_host_tells(tmp_path: Path) -> None:
    write(tmp_path, "S.jsonl", assistant("E1", "msg-1", [text("ok")], 1))

    def sandbox_gaps(**host: Any) -> list[tuple[Any, ...]]:
        return [
            g
            for g in gaps(observe(tmp_path, model_ref="policy", **host).observations.model_dump(mode="json"))
            if "sandbox" in g[0]
        ]

    assert sandbox_gaps() == []  # the transcripts cannot tell where the tools ran
    assert sandbox_gaps(sandboxed=True) == []  # the sandbox's own runner observes it
    assert sandbox_gaps(sandboxed=False) == [("no_sandbox_runtime", None, None)]


def test_synthetic_api_error_messages_are_neither_calls_nor_conversation_but_end_the_run(tmp_path: Path) -> None:
    synthetic = assistant("X", "synthetic-1", [text("Prompt is too long")], 2) | {
        "isApiErrorMessage": True,
        "error": "invalid_request",
    }
    synthetic["message"]["model"] = "<synthetic>"
    write(tmp_path, "S.jsonl", user("u1", "go", 0), assistant("E1", "msg-1", [text("ok")], 1), synthetic)
    stream = [
        {
            "type": "assistant",
            "message": {"model": "<synthetic>", "content": [text("Prompt is too long")]},
            "error": "invalid_request",
            "is_api_error_message": True,
            "parent_tool_use_id": None,
        },
        {
            "type": "result",
            "subtype": "success",
            "is_error": True,
            "result": "Prompt is too long",
            "duration_ms": 900,
            "session_id": "S",
        },
    ]

    run = read_run(tmp_path, stream, "policy", exit_code=1)

    only = run.observations.model_dump(mode="json")["records"][0]
    assert only["model_calls"] == [ref("msg-1")]
    assert [item["type"] for item in only["conversation"]] == ["message", "message"]
    assert (only["status"], only["error_type"]) == ("failed", "agent_error")
    assert run.outcome is not None
    assert run.outcome.failure_kind == "model_context_limit"
    assert {
        k: run.summary[k]
        for k in ("result_success", "result_error", "result_missing", "context_overflow", "duration_s")
    } == {
        "result_success": False,
        "result_error": True,
        "result_missing": False,
        "context_overflow": True,
        "duration_s": 0.9,
    }


def test_a_sidecar_naming_the_spawning_call_links_a_subagent_whose_result_never_came(tmp_path: Path) -> None:
    write(tmp_path, "S.jsonl", assistant("E1", "msg-root", [tool_use("t-task", "Task")], 1))
    write(tmp_path, "S/subagents/agent-worker.jsonl", assistant("W1", "msg-w", [text("working")], 2, agent="worker"))
    sidecar = {"agentType": "general-purpose", "description": "look around", "toolUseId": "t-task"}
    (tmp_path / "projects" / "p" / "S" / "subagents" / "agent-worker.meta.json").write_text(json.dumps(sidecar))
    (tmp_path / "projects" / "p" / "S" / "subagents" / "agent-broken.meta.json").write_text("{not json")

    bundle = produced(tmp_path)

    assert [without_conversation(r) for r in records(bundle, "agent_invocation")] == [
        invocation("S"),
        invocation("worker", parent_invocation_id="S", spawned_by_tool_call_id="t-task"),
    ]
    assert gaps(bundle) == [
        ("malformed_transcript_line", None, "p/S/subagents/agent-broken.meta.json:1"),
        ("invocation_outcome_unavailable", "S", None),
        ("invocation_outcome_unavailable", "worker", None),
        ("tool_result_missing", "S", "t-task"),
    ]
