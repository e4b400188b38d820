"""The Pi producer's mapping, case by case: invocation status, tool outcomes and timing, compactions, refs, damage."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from gym_contract.producers import UnrecognisedArtifactError
from gym_contract.producers.pi import observe
from tests.outcome.test_pi_outcome import HEADER, USER, said
from tests.producers.pi_artifacts import jsonl
from tests.producers.test_recognition import breaks_off
from tests.support import run_in_process

AT = "2025-11-20T23:34:0{}.000Z"


def entry(second: int, message: dict[str, Any], **ids: Any) -> dict[str, Any]:
    return {"type": "message", "timestamp": AT.format(second), "message": message, **ids}


def call(*ids: str, **more: Any) -> dict[str, Any]:
    blocks = [{"type": "toolCall", "id": i, "name": "bash", "arguments": {"command": "ls"}} for i in ids]
    return said("toolUse", content=blocks, **more)


def result(call_id: str, **more: Any) -> dict[str, Any]:
    message = {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": "bash",
        "content": [{"type": "text", "text": "ok"}],
    }
    return {**message, "isError": False, **more}


def document(tmp_path: Path, lines: list[Any], **options: Any) -> dict[str, Any]:
    (tmp_path / "run.jsonl").write_text(jsonl(lines))
    observed: dict[str, Any] = observe(tmp_path / "run.jsonl", **options).document()
    return observed


def kinds(found: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [record for record in found["ng_agent_observations"]["records"] if record["kind"] == kind]


def gaps(found: dict[str, Any]) -> list[tuple[str, str | None]]:
    return [(g["code"], g["detail"]) for g in found["ng_agent_observations"]["gaps"]]


@pytest.mark.parametrize(
    ("last", "process", "status", "error_type"),
    [
        (said(), {}, "completed", None),
        (said("error", "429 Too Many Requests"), {}, "failed", "model_rate_limited"),
        (said("aborted"), {}, "incomplete", "agent_aborted"),
        (said("length"), {}, "incomplete", "model_output_limit"),
        (said(), {"timed_out": True}, "incomplete", "timeout"),
        (call("c"), {"exit_code": 3}, "failed", "process_exit_3"),
        (call("c"), {}, "unknown", None),
    ],
)
def test_the_invocation_ends_as_its_last_assistant_message_stopped(
    tmp_path: Path, last: dict[str, Any], process: dict[str, Any], status: str, error_type: str | None
) -> None:
    found = document(tmp_path, [HEADER, entry(0, USER), entry(1, last)], **process)
    invocation = kinds(found, "agent_invocation")[0]
    assert (invocation["invocation_id"], invocation["status"], invocation["error_type"]) == ("s-1", status, error_type)
    assert (("invocation_outcome_unavailable", None) in gaps(found)) == (status == "unknown")


def test_each_call_is_timed_from_its_message_to_its_result_and_its_outcome_kept(tmp_path: Path) -> None:
    lines = [
        HEADER,
        entry(0, USER),
        entry(1, call("fast", "slow", "lost", "unsaid", "early")),
        entry(2, result("fast", isError=True)),
        entry(5, result("slow")),
        entry(6, result("unsaid", isError=None)),
        {"type": "message", "timestamp": "2025-11-20T23:33:00.000Z", "message": result("early")},
        entry(7, said()),
    ]
    found = document(tmp_path, lines)
    calls = {c["tool_call_id"]: c for c in kinds(found, "tool_call")}
    assert [(c["status"], c["duration_ms"]) for c in calls.values()] == [
        ("failed", 1000),
        ("completed", 4000),
        ("incomplete", None),
        ("unknown", 5000),
        ("completed", None),
    ]
    assert {c["timing_source"] for c in calls.values()} == {"artifact"}
    assert {detail for code, detail in gaps(found) if code.startswith("tool_")} == {"lost", "unsaid", "early"}
    assert ("tool_timing_invalid", "early") in gaps(found)
    assert ("tool_outcome_unavailable", "unsaid") in gaps(found)
    assert found["run_summary"]["tool_errors"] == 1


def test_response_ids_become_model_call_refs_and_bound_each_compaction(tmp_path: Path) -> None:
    v3 = {**HEADER, "version": 3}
    lines = [
        v3,
        entry(0, USER, id="u1", parentId=None),
        entry(1, said(responseId="resp-1"), id="a1", parentId="u1"),
        {
            "type": "compaction",
            "id": "c1",
            "parentId": "a1",
            "timestamp": AT.format(2),
            "summary": "so far",
            "firstKeptEntryId": "a1",
            "tokensBefore": 9000,
        },
        entry(3, said(responseId="resp-2"), id="a2", parentId="c1"),
    ]
    found = document(tmp_path, lines, model_ref="policy")
    ref = {"type": "responses_api_models", "name": "policy"}
    assert kinds(found, "agent_invocation")[0]["model_calls"] == [
        {"model_call_id": None, "model_ref": ref, "response_id": "resp-1"},
        {"model_call_id": None, "model_ref": ref, "response_id": "resp-2"},
    ]
    compaction = kinds(found, "context_compaction")[0]
    assert (compaction["before_model_call"]["response_id"], compaction["after_model_call"]["response_id"]) == (
        "resp-1",
        "resp-2",
    )
    assert (compaction["first_kept_item_id"], compaction["tokens_before"], compaction["outcome"]) == (
        "a1",
        9000,
        "completed",
    )
    assert ("model_call_ownership_unavailable", None) not in gaps(found)
    assert ("compaction_tokens_after_unavailable", None) in gaps(found)


def test_a_branching_session_says_its_one_history_is_not_rebuilt(tmp_path: Path) -> None:
    lines = [
        {**HEADER, "version": 2},
        entry(0, USER, id="u1", parentId=None),
        entry(1, said(), id="a1", parentId="u1"),
        entry(2, said(), id="a2", parentId="u1"),
    ]
    assert ("agent_conversation_branching_unavailable", None) in gaps(document(tmp_path, lines))


def test_a_stream_compaction_that_never_ended_or_never_started_is_reported(tmp_path: Path) -> None:
    lines = [
        {"type": "auto_compaction_end", "result": {"summary": "s", "tokensBefore": 5}, "aborted": False},
        {"type": "message_end", "message": said()},
        {"type": "compaction_start", "reason": "manual"},
    ]
    found = document(tmp_path, lines)
    assert [(c["outcome"], c["trigger"]) for c in kinds(found, "context_compaction")] == [
        ("completed", None),
        ("unknown", "manual"),
    ]
    codes = [code for code, _ in gaps(found)]
    for code in ("compaction_start_unavailable", "compaction_result_unavailable", "compaction_outcome_unavailable"):
        assert code in codes
    assert kinds(found, "agent_invocation")[0]["invocation_id"] == "root"


def test_damaged_lines_are_gaps_and_the_rest_is_read(tmp_path: Path) -> None:
    (tmp_path / "run.jsonl").write_bytes(
        jsonl([HEADER, entry(0, USER)]).encode() + b"{broken\n[1]\n\xff\n" + jsonl([entry(1, said())]).encode()
    )
    found = observe(tmp_path / "run.jsonl").document()
    assert gaps(found)[:3] == [
        ("malformed_transcript_line", "run.jsonl:3"),
        ("invalid_transcript_record", "run.jsonl:4"),
        ("malformed_transcript_line", "run.jsonl:5"),
    ]
    assert kinds(found, "agent_invocation")[0]["status"] == "completed"


def test_a_folder_or_a_missing_file_is_refused_as_no_pi_artifact(tmp_path: Path) -> None:
    for path, why in ((tmp_path, "a folder, not a file"), (tmp_path / "absent.jsonl", "no such file")):
        with pytest.raises(UnrecognisedArtifactError) as refused:
            observe(path)
        assert refused.value.why == why


def test_a_file_whose_reading_breaks_off_keeps_what_was_read_and_says_the_rest_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read = jsonl([HEADER, entry(1, USER), entry(2, said())])
    session = tmp_path / "session.jsonl"
    session.write_text(read + jsonl([entry(3, USER)]))
    breaks_off(monkeypatch, session, read.encode())

    found = observe(session).document()

    assert gaps(found)[0] == ("transcript_unreadable", "session.jsonl")
    assert [item["role"] for item in kinds(found, "agent_invocation")[0]["conversation"]] == ["user", "assistant"]


def test_a_file_name_that_is_not_utf8_is_shown_not_a_traceback(tmp_path: Path) -> None:
    name = tmp_path / os.fsdecode(b"\xff-run.jsonl")
    name.write_bytes(b'{"type":"session","id":"s"}\n{broken\n')
    status, out, err = run_in_process("observe", "pi", str(name))
    assert (status, err) == (0, "")
    assert ("malformed_transcript_line", "\ufffd-run.jsonl:2") in gaps(json.loads(out))


def test_a_receipt_wrapper_may_hold_the_event_as_its_json_text(tmp_path: Path) -> None:
    lines = [
        {"t": 100.0, "line": json.dumps({"type": "tool_execution_start", "toolCallId": "c", "toolName": "bash"})},
        {"t": 102.5, "line": json.dumps({"type": "tool_execution_end", "toolCallId": "c", "isError": True})},
        {"t": 103.0, "line": json.dumps({"type": "message_end", "message": said("length")})},
        {"t": 104.0, "line": "{not json"},
    ]
    found = document(tmp_path, lines)
    assert [(c["duration_ms"], c["status"]) for c in kinds(found, "tool_call")] == [(2500, "failed")]
    assert found["ng_agent_outcome"]["failure_kind"] == "model_output_limit"
    assert ("invalid_transcript_record", "run.jsonl:4") in gaps(found)


def test_an_image_in_a_user_message_or_a_result_is_said_to_be_left_out(tmp_path: Path) -> None:
    image = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
    pasted = {**USER, "content": [{"type": "text", "text": "what is this?"}, image]}
    shot = result("c", content=[image])
    lines = [HEADER, entry(0, pasted), entry(1, call("c")), entry(2, shot), entry(3, said())]
    found = document(tmp_path, lines)
    assert kinds(found, "agent_invocation")[0]["conversation"][0] == {
        "type": "message",
        "role": "user",
        "content": "what is this?",
    }
    assert [code for code, _ in gaps(found)].count("unsupported_user_content_block") == 2
