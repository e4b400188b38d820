"""`gym-contract observe pi` on real Pi sessions, in every layout and as `--mode json` captures of both generations."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gym_contract import iter_diagnostics
from tests.producers.pi_artifacts import COMPACTED, LARGE, jsonl, rows, seconds, stops, stream, tool_calls, v3
from tests.support import run_in_process


def observed(*arguments: str) -> dict[str, Any]:
    status, out, err = run_in_process("observe", "pi", *arguments)
    assert (status, err) == (0, "")
    document: dict[str, Any] = json.loads(out)
    for key, kind in (("ng_agent_observations", "bundle"), ("ng_agent_outcome", "agent_outcome")):
        assert [d for d in iter_diagnostics(document[key], kind) if d.severity == "error"] == []
    return document


def records(document: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [record for record in document["ng_agent_observations"]["records"] if record["kind"] == kind]


def gap_codes(document: dict[str, Any]) -> list[str]:
    return [found["code"] for found in document["ng_agent_observations"]["gaps"]]


def signalled(document: dict[str, Any]) -> dict[str, Any]:
    return {signal["field"]: signal["value"] for signal in document["ng_agent_outcome"]["signals"]}


@pytest.mark.parametrize("session", [LARGE, COMPACTED], ids=lambda path: path.stem)
def test_a_shipped_session_gives_one_tool_call_per_block_its_stops_and_its_compactions(session: Path) -> None:
    entries = rows(session)
    document = observed(str(session), "--model-ref", "policy")

    calls = records(document, "tool_call")
    assert [call["tool_call_id"] for call in calls] == tool_calls(entries)
    assert {call["timing_source"] for call in calls if call["started_at"] is not None} == {"artifact"}
    compactions = [entry for entry in entries if entry["type"] == "compaction"]
    assert [(c["tokens_before"], c["summary"]) for c in records(document, "context_compaction")] == [
        (entry["tokensBefore"], entry["summary"]) for entry in compactions
    ]
    assert [c["first_kept_item_id"] for c in records(document, "context_compaction")] == [
        f"entry-{entry['firstKeptEntryIndex']}" for entry in compactions
    ]
    # Every aborted or failed message is in the outcome, though later work recovered from each.
    signals = signalled(document)
    for index in stops(entries, "aborted", "error"):
        assert signals[f"lines[{index}].message.stopReason"].endswith("not terminal: work followed")
    summary = document["run_summary"]
    assert summary["stop_reasons"]["aborted"] == len(stops(entries, "aborted"))
    assert summary["stop_reasons"]["error"] == len(stops(entries, "error")) == 1
    assert (summary["tool_calls"], summary["compactions"]) == (len(tool_calls(entries)), len(compactions))
    assert summary["artifact_form"] == "session v1"
    assert document["ng_agent_outcome"]["response_status"] == "completed"


def test_parallel_calls_of_one_message_start_at_its_end_and_end_at_their_own_results() -> None:
    entries = rows(LARGE)
    document = observed(str(LARGE))
    message = next(e for e in entries if e["type"] == "message" and len(tool_calls([e])) == 3)
    results = {
        e["message"]["toolCallId"]: seconds(e)
        for e in entries
        if e["type"] == "message" and e["message"]["role"] == "toolResult"
    }
    calls = {call["tool_call_id"]: call for call in records(document, "tool_call")}
    for call_id in tool_calls([message]):
        assert calls[call_id]["started_at"] == pytest.approx(seconds(message))
        assert calls[call_id]["completed_at"] == pytest.approx(results[call_id])


def test_the_v3_layout_of_the_same_records_gives_the_same_calls_and_names_the_first_kept_entry(tmp_path: Path) -> None:
    entries = v3(rows(COMPACTED))
    (tmp_path / "session.jsonl").write_text(jsonl(entries))
    document = observed(str(tmp_path / "session.jsonl"))

    assert [call["tool_call_id"] for call in records(document, "tool_call")] == tool_calls(entries)
    kept = [entry["firstKeptEntryId"] for entry in entries if entry["type"] == "compaction"]
    assert [c["first_kept_item_id"] for c in records(document, "context_compaction")] == kept
    assert document["run_summary"]["artifact_form"] == "session v3"
    assert "agent_conversation_branching_unavailable" not in gap_codes(document)


@pytest.mark.parametrize("generation", ["auto_compaction", "compaction"])
@pytest.mark.parametrize("timed", [True, False], ids=["receipts", "bare"])
def test_a_mode_json_capture_of_either_generation_gives_every_call_and_compaction(
    tmp_path: Path, generation: Any, timed: bool
) -> None:
    entries = v3(rows(COMPACTED))
    (tmp_path / "stdout.jsonl").write_text(jsonl(stream(entries, generation, timed=timed)))
    document = observed(str(tmp_path / "stdout.jsonl"), "--exit-code", "0")

    calls = records(document, "tool_call")
    assert [call["tool_call_id"] for call in calls] == tool_calls(entries)
    compactions = records(document, "context_compaction")
    assert [(c["trigger"], c["outcome"]) for c in compactions] == [("threshold", "completed")] * 2
    assert [c["first_kept_item_id"] for c in compactions] == [
        entry["firstKeptEntryId"] for entry in entries if entry["type"] == "compaction"
    ]
    untimed = {
        found["detail"]
        for found in document["ng_agent_observations"]["gaps"]
        if found["code"] == "tool_timing_unavailable"
    }
    if timed:
        assert {call["timing_source"] for call in calls if call["started_at"] is not None} == {"harness"}
        assert untimed == {call["tool_call_id"] for call in calls if call["completed_at"] is None}
    else:
        assert {call["timing_source"] for call in calls} == {None}
        assert untimed == {call["tool_call_id"] for call in calls}
    assert document["run_summary"]["artifact_form"] == "stream"
    assert document["ng_agent_observations"]["records"][0]["invocation_id"] == entries[0]["id"]
