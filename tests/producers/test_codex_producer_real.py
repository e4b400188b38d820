"""`gym-contract observe codex` on the shipped Codex artifacts, each fact counted again here with plain JSON reading."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from gym_contract import iter_diagnostics
from tests.support import REPO, run_in_process

CODEX = REPO / "examples" / "codex"
ROLLOUT = next((CODEX / "codemie-codex-tui-0.125.0").glob("rollout-*.jsonl"))
COMPACTING = next((CODEX / "localpush-codex-0.104.0").glob("rollout-*.jsonl"))
EXEC = CODEX / "exec-json" / "exec-run.jsonl"
CALL_ITEMS = ("function_call", "custom_tool_call", "local_shell_call")


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def payloads(path: Path, line_type: str, payload_type: str | None = None) -> list[dict[str, Any]]:
    return [
        line["payload"]
        for line in lines(path)
        if line["type"] == line_type and (payload_type is None or line["payload"].get("type") == payload_type)
    ]


def observe(*arguments: str) -> dict[str, Any]:
    status, out, err = run_in_process("observe", "codex", *arguments)
    assert (status, err) == (0, "")
    document: dict[str, Any] = json.loads(out)
    for key, kind in (("ng_agent_observations", "bundle"), ("ng_agent_outcome", "agent_outcome")):
        assert [d for d in iter_diagnostics(document[key], kind) if d.severity == "error"] == []
    return document


def tool_records(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    records = [r for r in document["ng_agent_observations"]["records"] if r["kind"] == "tool_call"]
    by_id = {record["tool_call_id"]: record for record in records}
    assert len(by_id) == len(records), "one record per call id"
    return by_id


def test_the_real_rollout_gives_one_tool_call_per_call_in_the_file() -> None:
    document = observe(str(ROLLOUT), "--exit-code", "0")
    calls = [item["call_id"] for kind in CALL_ITEMS for item in payloads(ROLLOUT, "response_item", kind)]
    searches = [event["call_id"] for event in payloads(ROLLOUT, "event_msg", "web_search_end")]

    records = tool_records(document)

    assert len(calls) == len(set(calls)) == 102
    assert len(searches) == 3
    assert set(records) == set(calls) | set(searches)
    assert document["run_summary"]["tool_calls"] == len(records) == 105
    names = {item["call_id"]: item["name"] for kind in CALL_ITEMS for item in payloads(ROLLOUT, "response_item", kind)}
    assert all(records[call_id]["tool_name"] == name for call_id, name in names.items())


def test_the_real_rollout_gives_each_exec_command_end_its_duration_and_exit_status() -> None:
    document = observe(str(ROLLOUT))
    ends = payloads(ROLLOUT, "event_msg", "exec_command_end")
    records = tool_records(document)

    assert len(ends) == 43
    for end in ends:
        record = records[end["call_id"]]
        duration = end["duration"]["secs"] * 1000 + end["duration"]["nanos"] / 1_000_000
        assert record["duration_ms"] == pytest.approx(duration, abs=1e-6)
        assert record["completed_at"] - record["started_at"] == pytest.approx(duration / 1000, abs=1e-6)
        assert record["status"] == ("completed" if end["exit_code"] == 0 else "failed")
        assert record["timing_source"] == "artifact"
    failed = sum(1 for end in ends if end["exit_code"] != 0)
    assert document["run_summary"]["tool_errors"] == failed == 4


def test_the_real_rollout_gives_the_token_totals_it_states() -> None:
    document = observe(str(ROLLOUT))
    counts = payloads(ROLLOUT, "event_msg", "token_count")
    last = [event for event in counts if event.get("info")][-1]["info"]["total_token_usage"]
    # The file repeats token_count events: summing them would count the same responses many times over.
    assert len(counts) == 66

    summary = document["run_summary"]

    assert summary["input_tokens"] == last["input_tokens"] == 6_055_836
    assert summary["cached_tokens"] == last["cached_input_tokens"]
    assert summary["output_tokens"] == last["output_tokens"]
    assert summary["reasoning_tokens"] == last["reasoning_output_tokens"]
    assert summary["main_turns"] == len(payloads(ROLLOUT, "event_msg", "task_started")) == 2
    assert summary["duration_s"] * 1000 == sum(
        e["duration_ms"] for e in payloads(ROLLOUT, "event_msg", "task_complete")
    )


def test_the_real_rollout_keeps_its_conversation_in_order() -> None:
    document = observe(str(ROLLOUT))
    invocation = document["ng_agent_observations"]["records"][0]
    items = payloads(ROLLOUT, "response_item")

    assert invocation["invocation_id"] == payloads(ROLLOUT, "session_meta")[0]["id"]
    assert [item["type"] for item in invocation["conversation"]] == [item["type"] for item in items]
    assert document["ng_agent_outcome"]["response_status"] == "completed"
    assert document["ng_agent_outcome"]["harness_version"] == "0.125.0"


def test_the_real_compacting_rollout_gives_its_compaction() -> None:
    document = observe(str(COMPACTING.parent))
    compacted = [line for line in lines(COMPACTING) if line["type"] == "compacted"]
    records = [r for r in document["ng_agent_observations"]["records"] if r["kind"] == "context_compaction"]

    assert len(compacted) == len(payloads(COMPACTING, "event_msg", "context_compacted")) == 1
    assert len(records) == document["run_summary"]["compactions"] == 1
    assert records[0]["summary"] == compacted[0]["payload"]["message"]
    calls = [item["call_id"] for kind in CALL_ITEMS for item in payloads(COMPACTING, "response_item", kind)]
    assert set(tool_records(document)) == set(calls)
    last = payloads(COMPACTING, "event_msg", "token_count")[-1]["info"]["total_token_usage"]
    assert document["run_summary"]["input_tokens"] == last["input_tokens"]


def test_the_exec_json_stream_gives_its_tool_items_and_the_totals_of_its_last_turn() -> None:
    document = observe(str(EXEC), "--exit-code", "0")
    events = lines(EXEC)
    tools = {
        event["item"]["id"]: event["item"]
        for event in events
        if event["type"] == "item.completed" and event["item"]["type"] in ("command_execution", "file_change")
    }
    usage = [event for event in events if event["type"] == "turn.completed"][-1]["usage"]
    records = tool_records(document)

    assert set(records) == set(tools)
    for item_id, item in tools.items():
        failed = item.get("exit_code") not in (None, 0)
        assert records[item_id]["status"] == ("failed" if failed else "completed")
        assert records[item_id]["started_at"] is records[item_id]["duration_ms"] is None
    gaps = document["ng_agent_observations"]["gaps"]
    assert sorted(gap["detail"] for gap in gaps if gap["code"] == "tool_timing_unavailable") == sorted(tools)
    assert "conversation_partial" in {gap["code"] for gap in gaps}
    summary = document["run_summary"]
    assert (summary["input_tokens"], summary["cached_tokens"], summary["output_tokens"]) == (
        usage["input_tokens"],
        usage["cached_input_tokens"],
        usage["output_tokens"],
    )
    invocation = document["ng_agent_observations"]["records"][0]
    thread = next(event["thread_id"] for event in events if event["type"] == "thread.started")
    assert invocation["invocation_id"] == thread
    assert [item["type"] for item in invocation["conversation"]] == ["reasoning", "reasoning", "message"]
    assert document["ng_agent_outcome"]["response_status"] == "completed"


def test_the_outcome_command_reads_both_forms() -> None:
    for path in (ROLLOUT, EXEC):
        status, out, err = run_in_process("outcome", "codex", str(path), "--exit-code", "0")
        assert (status, err) == (0, "")
        assert json.loads(out)["response_status"] == "completed"
    status, out, err = run_in_process("outcome", "codex", str(REPO / "examples" / "policy.json"))
    assert (status, out) == (2, "")
    assert "Codex" in err


def test_the_guide_lists_exactly_the_gaps_the_registry_has_for_codex() -> None:
    guide = (REPO / "docs" / "guides" / "codex.md").read_text()
    section = guide.split("## The gaps it reports", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"\[`([a-z_]+)`\]\(\.\./reference/gap-codes\.md#\1\)", section))
    registry = json.loads((REPO / "schemas" / "v1" / "gap_codes.json").read_text())["codes"]

    assert listed == {entry["code"] for entry in registry if "codex" in entry["emitted_by"]}
