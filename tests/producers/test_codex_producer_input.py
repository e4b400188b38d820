"""The Codex producer on damaged, odd and hand-made input: every fact it cannot read is a gap, never an exception."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gym_contract import iter_diagnostics
from gym_contract.producers import UnrecognisedArtifactError
from gym_contract.producers.codex import observe
from tests.support import run_in_process


def line(kind: str, payload: Any, at: str = "2026-05-11T08:00:01.000Z") -> dict[str, Any]:
    return {"timestamp": at, "type": kind, "payload": payload}


def meta(session: str, parent: str | None = None) -> dict[str, Any]:
    source: Any = {"subagent": {"thread_spawn": {"parent_thread_id": parent, "depth": 1}}} if parent else "exec"
    return line("session_meta", {"id": session, "cli_version": "0.125.0", "source": source}, "2026-05-11T08:00:00.000Z")


def call(call_id: str, at: str, name: str = "exec_command") -> dict[str, Any]:
    return line("response_item", {"type": "function_call", "name": name, "arguments": "{}", "call_id": call_id}, at)


def output(call_id: str, at: str, text: str = "ok") -> dict[str, Any]:
    return line("response_item", {"type": "function_call_output", "call_id": call_id, "output": text}, at)


def write(path: Path, *events: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join((e if isinstance(e, bytes) else json.dumps(e).encode()) + b"\n" for e in events))
    return path


def document(path: Path, **process: Any) -> dict[str, Any]:
    found = observe(path, **process).document()
    for key, kind in (("ng_agent_observations", "bundle"), ("ng_agent_outcome", "agent_outcome")):
        if found[key] is not None:
            assert [d for d in iter_diagnostics(found[key], kind) if d.severity == "error"] == []
    return found


def gaps(found: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(gap["code"], gap["detail"]) for gap in found["ng_agent_observations"]["gaps"]]


def tools(found: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["tool_call_id"]: r for r in found["ng_agent_observations"]["records"] if r["kind"] == "tool_call"}


def test_damaged_lines_are_gaps_with_their_line_numbers_and_the_rest_is_read(tmp_path: Path) -> None:
    path = write(
        tmp_path / "rollout-x.jsonl",
        meta("s"),
        b"{broken",
        b"[1, 2]",
        {"type": "assistant", "message": "a Claude Code line"},
        line("event_msg", "not an object"),
        call("c", "2026-05-11T08:00:02.000Z"),
        output("c", "2026-05-11T08:00:03.500Z"),
    )

    found = document(path)

    assert gaps(found)[:4] == [
        ("malformed_transcript_line", "rollout-x.jsonl:2"),
        ("invalid_transcript_record", "rollout-x.jsonl:3"),
        ("invalid_transcript_record", "rollout-x.jsonl:4"),
        ("invalid_transcript_record", "rollout-x.jsonl:5"),
    ]
    assert tools(found)["c"]["duration_ms"] == 1500.0


def test_a_line_over_the_limit_is_a_gap_not_held_whole(tmp_path: Path) -> None:
    path = write(tmp_path / "r.jsonl", meta("s"), output("c", "2026-05-11T08:00:03.000Z", "x" * 5000))

    found = document(path, max_line_bytes=1000)

    assert ("malformed_transcript_line", "r.jsonl:2") in gaps(found)


def test_calls_without_outputs_outputs_without_calls_and_reversed_times_are_gaps(tmp_path: Path) -> None:
    path = write(
        tmp_path / "r.jsonl",
        meta("s"),
        call("open", "2026-05-11T08:00:02.000Z"),
        output("orphan", "2026-05-11T08:00:02.500Z"),
        call("reversed", "2026-05-11T08:00:05.000Z"),
        output("reversed", "2026-05-11T08:00:04.000Z"),
        call("twice", "2026-05-11T08:00:06.000Z"),
        call("twice", "2026-05-11T08:00:06.100Z"),
        line("response_item", {"type": "function_call", "name": "x", "arguments": "{}"}),
    )

    found = document(path)
    records = tools(found)

    assert records["open"]["status"] == "incomplete"
    assert records["orphan"]["started_at"] is None
    assert records["reversed"]["completed_at"] is None
    assert "twice" not in records
    assert {
        ("tool_result_missing", "open"),
        ("tool_start_missing", "orphan"),
        ("tool_timing_invalid", "reversed"),
        ("ambiguous_tool_artifact", "twice"),
        ("tool_call_id_missing", None),
    } <= set(gaps(found))


def test_end_events_give_status_and_executor_time(tmp_path: Path) -> None:
    end: dict[str, Any] = {"type": "exec_command_end", "call_id": "declined", "exit_code": None, "status": "declined"}
    path = write(
        tmp_path / "r.jsonl",
        meta("s"),
        call("declined", "2026-05-11T08:00:02.000Z"),
        line("event_msg", end, "2026-05-11T08:00:02.100Z"),
        call("mcp", "2026-05-11T08:00:03.000Z", name="search"),
        line(
            "event_msg",
            {
                "type": "mcp_tool_call_end",
                "call_id": "mcp",
                "duration": {"secs": 1, "nanos": 0},
                "result": {"Err": "x"},
            },
            "2026-05-11T08:00:04.200Z",
        ),
        line("response_item", {"type": "custom_tool_call", "call_id": "patch", "name": "apply_patch", "input": "*"}),
        line(
            "event_msg", {"type": "patch_apply_end", "call_id": "patch", "success": False}, "2026-05-11T08:00:01.500Z"
        ),
    )

    records = tools(document(path))

    assert (records["declined"]["status"], records["declined"]["error_type"]) == ("cancelled", "declined")
    assert (records["mcp"]["status"], records["mcp"]["duration_ms"]) == ("failed", 1000.0)
    assert records["mcp"]["started_at"] == records["mcp"]["completed_at"] - 1
    assert records["patch"]["status"] == "failed"


def test_items_the_contract_cannot_hold_are_left_out_with_a_gap(tmp_path: Path) -> None:
    path = write(
        tmp_path / "r.jsonl",
        meta("s"),
        line("response_item", {"type": "message", "role": "narrator", "content": 3}),
        line("response_item", {"type": "image_generation_call", "id": "i"}),
        line("response_item", {"type": "ghost_snapshot", "ghost_commit": {}}),
        line(
            "response_item",
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "hi"}]},
        ),
    )

    found = document(path)
    conversation = found["ng_agent_observations"]["records"][0]["conversation"]

    assert [item.get("role") for item in conversation] == ["assistant"]
    assert conversation[0]["id"] == "s:5"
    assert ("invalid_transcript_record", "r.jsonl:2") in gaps(found)
    assert ("unsupported_assistant_content_block", "image_generation_call") in gaps(found)


def test_a_directory_links_subagents_and_reports_what_it_cannot_link(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions" / "2026" / "05" / "11"
    write(sessions / "rollout-1-root.jsonl", meta("root"))
    write(sessions / "rollout-2-orphan.jsonl", meta("orphan", parent="gone"))
    write(sessions / "rollout-3-self.jsonl", meta("self", parent="self"))
    write(sessions / "rollout-4-again.jsonl", meta("root"))
    write(sessions / "history.jsonl", {"session_id": "root", "ts": 1, "text": "not a session"})
    outside = write(tmp_path.parent / f"{tmp_path.name}-outside" / "rollout-9.jsonl", meta("outside"))
    (sessions / "rollout-5-link.jsonl").symlink_to(outside)

    found = document(tmp_path, exit_code=0)
    invocations = [r for r in found["ng_agent_observations"]["records"] if r["kind"] == "agent_invocation"]

    assert [(r["invocation_id"], r["parent_invocation_id"]) for r in invocations] == [
        ("root", None),
        ("orphan", "gone"),
        ("self", None),
    ]
    assert {
        ("agent_session_identity_ambiguous", "root"),
        ("subagent_parent_unavailable", "gone"),
        ("subagent_spawn_tool_unavailable", None),
        ("cyclic_subagent_parent", "self"),
        ("transcript_unreadable", "sessions/2026/05/11/rollout-5-link.jsonl"),
    } <= set(gaps(found))
    assert found["ng_agent_outcome"] is None, "two roots: no one run for the process facts to speak of"


def test_the_cli_exits_2_for_a_path_that_is_not_there(tmp_path: Path) -> None:
    status, out, err = run_in_process("observe", "codex", str(tmp_path / "absent"))

    assert (status, out) == (2, "")
    assert "cannot read" in err


def test_an_executor_duration_the_call_lines_refute_or_no_float_holds_is_not_taken(tmp_path: Path) -> None:
    def end(call_id: str, secs: int) -> dict[str, Any]:
        duration = {"secs": secs, "nanos": 0}
        return line("event_msg", {"type": "exec_command_end", "call_id": call_id, "exit_code": 0, "duration": duration})

    path = write(
        tmp_path / "r.jsonl",
        meta("s"),
        call("long", "2026-05-11T08:00:00.500Z"),
        end("long", 3600),
        call("huge", "2026-05-11T08:00:00.500Z"),
        end("huge", 10**400),
    )

    found = document(path)
    records = tools(found)

    assert records["long"]["duration_ms"] == records["huge"]["duration_ms"] == 500.0
    assert ("tool_timing_invalid", "long") in gaps(found)


def test_error_events_alone_are_no_codex_run_but_are_read_in_one(tmp_path: Path) -> None:
    # OpenCode's `run --format json` prints `{"type": "error", …}` lines too: they show no harness.
    alone = write(tmp_path / "alone.jsonl", {"type": "error", "message": "x"})
    with pytest.raises(UnrecognisedArtifactError) as refused:
        observe(alone)
    assert refused.value.why.endswith("but `error`, which other harnesses print too")

    stream = write(
        tmp_path / "exec.jsonl", {"type": "error", "message": "x"}, {"type": "thread.started", "thread_id": "t"}
    )
    found = document(stream)

    assert [record["invocation_id"] for record in found["ng_agent_observations"]["records"]] == ["t"]
    assert found["ng_agent_outcome"]["failure_kind"] == "unknown_error"
