"""A forked Codex session: the parent's rollout its file copies is the parent's work, counted once, in the parent.

Each parent is a real rollout file of `examples/codex` with a `spawn_agent` call put into its last turn.
The child's file is built as Codex writes a fork (codex-rs `spawn_agent` with `fork_context`, recorded
through `InitialHistory::Forked`): the child's own `session_meta`, the parent's rollout lines as they
stood, the `function_call_output` Codex adds for the spawn call, then the child's own turn. No real
forked rollout file with a licence was found, so the child's lines are built from those facts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gym_contract import iter_diagnostics
from tests.support import REPO, run_in_process

CODEX = REPO / "examples" / "codex"
TOOLS_AND_TURNS = next((CODEX / "codemie-codex-tui-0.125.0").glob("rollout-*.jsonl"))
COMPACTING = next((CODEX / "localpush-codex-0.104.0").glob("rollout-*.jsonl"))
CHILD = "019e1700-0000-7000-8000-00000000f0c1"
KEYS = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens")
# The text codex-rs gives the child as the output of the spawn call that forked it.
FORKED_NOTE = (
    "You are the newly spawned agent. The prior conversation history was forked from your parent agent. "
    "Treat the next user message as your new task, and use the forked history only as background context."
)
CHILD_USAGE = {"input_tokens": 5000, "cached_input_tokens": 1000, "output_tokens": 300, "reasoning_output_tokens": 40}


def line(kind: str, payload: dict[str, Any], at: str) -> dict[str, Any]:
    return {"timestamp": at, "type": kind, "payload": payload}


def last_totals(lines: list[dict[str, Any]]) -> dict[str, int]:
    counts = [x["payload"] for x in lines if x["payload"].get("type") == "token_count" and x["payload"].get("info")]
    return {key: counts[-1]["info"]["total_token_usage"][key] for key in KEYS}


def fork(real: Path, tmp_path: Path, *, carried_on: bool) -> dict[str, Any]:
    """Write the parent (the real file with a spawn call) and its forked child; describe what each holds."""
    lines = [json.loads(text) for text in real.read_text().splitlines() if text.strip()]
    parent = lines[0]["payload"]["id"]
    # The spawn is made in the last turn, before it ends: the copy holds every earlier line.
    cut = max(i for i, x in enumerate(lines) if x["payload"].get("type") == "task_complete")
    at = lines[cut - 1]["timestamp"]
    spawn = line(
        "response_item",
        {"type": "function_call", "name": "spawn_agent", "arguments": '{"fork_context": true}', "call_id": "call_fork"},
        at,
    )
    spawned = {"type": "function_call_output", "call_id": "call_fork", "output": json.dumps({"agent_id": CHILD})}
    copied = [*lines[:cut], spawn]
    parent_lines = [*copied, line("response_item", spawned, at), *lines[cut:]]
    copy_totals = last_totals(copied)
    first_total = {key: copy_totals[key] + CHILD_USAGE[key] if carried_on else CHILD_USAGE[key] for key in KEYS}
    child_meta = {
        "id": CHILD,
        "cli_version": "0.125.0",
        "forked_from_id": parent,
        "source": {"subagent": {"thread_spawn": {"parent_thread_id": parent, "depth": 1}}},
    }
    own = [
        line("event_msg", {"type": "task_started", "turn_id": "turn-child"}, "2030-01-01T00:00:01.000Z"),
        line(
            "response_item",
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "find the tests"}]},
            "2030-01-01T00:00:01.001Z",
        ),
        line(
            "response_item",
            {"type": "function_call", "name": "exec_command", "arguments": "{}", "call_id": "call_child"},
            "2030-01-01T00:00:02.000Z",
        ),
        line(
            "event_msg",
            {"type": "token_count", "info": {"total_token_usage": first_total, "last_token_usage": CHILD_USAGE}},
            "2030-01-01T00:00:02.100Z",
        ),
        line(
            "response_item",
            {"type": "function_call_output", "call_id": "call_child", "output": "tests/test_parser.py"},
            "2030-01-01T00:00:03.000Z",
        ),
        line(
            "event_msg",
            {"type": "task_complete", "turn_id": "turn-child", "duration_ms": 2500},
            "2030-01-01T00:00:03.500Z",
        ),
    ]
    child_lines = [
        line("session_meta", child_meta, "2030-01-01T00:00:00.000Z"),
        *[{**x, "timestamp": "2030-01-01T00:00:00.001Z"} for x in copied],  # Codex stamps the copy when it writes it
        line("response_item", {"type": "function_call_output", "call_id": "call_fork", "output": FORKED_NOTE}, at),
        *own,
    ]
    folder = tmp_path / "sessions"
    folder.mkdir()
    for name, content in (("rollout-1-parent.jsonl", parent_lines), ("rollout-2-child.jsonl", child_lines)):
        (folder / name).write_text("".join(json.dumps(x) + "\n" for x in content))
    return {
        "folder": folder,
        "parent": parent,
        "parent_lines": parent_lines,
        "copied_items": sum(1 for x in copied if x["type"] == "response_item") + 1,
        "own_items": sum(1 for x in own if x["type"] == "response_item"),
    }


def observe(folder: Path) -> dict[str, Any]:
    status, out, err = run_in_process("observe", "codex", str(folder), "--exit-code", "0")
    assert (status, err) == (0, "")
    document: dict[str, Any] = json.loads(out)
    assert [d for d in iter_diagnostics(document["ng_agent_observations"], "bundle") if d.severity == "error"] == []
    return document


def by_invocation(document: dict[str, Any], kind: str) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for record in document["ng_agent_observations"]["records"]:
        if record["kind"] == kind:
            found.setdefault(record["invocation_id"], []).append(record)
    return found


@pytest.mark.parametrize("real", [TOOLS_AND_TURNS, COMPACTING], ids=["tools-and-turns", "compacting"])
@pytest.mark.parametrize("carried_on", [True, False], ids=["totals-carried-on", "totals-afresh"])
def test_a_forked_child_owns_only_its_own_tool_calls_turns_compactions_and_tokens(
    real: Path, carried_on: bool, tmp_path: Path
) -> None:
    built = fork(real, tmp_path, carried_on=carried_on)
    parent, parent_lines = built["parent"], built["parent_lines"]
    document = observe(built["folder"])
    payloads = [x["payload"] for x in parent_lines]
    parent_calls = {
        p["call_id"]
        for p in payloads
        if p.get("type") in ("function_call", "custom_tool_call", "web_search_end") and p.get("call_id")
    }
    parent_compactions = sum(1 for x in parent_lines if x["type"] == "compacted")

    tools = by_invocation(document, "tool_call")
    compactions = by_invocation(document, "context_compaction")
    [child] = by_invocation(document, "agent_invocation")[CHILD]
    summary = document["run_summary"]

    assert {r["tool_call_id"] for r in tools[parent]} == parent_calls
    assert [r["tool_call_id"] for r in tools[CHILD]] == ["call_child"]
    assert summary["tool_calls"] == len(parent_calls) + 1
    assert summary["subagent_calls"] == 1
    assert len(compactions.get(parent, [])) == parent_compactions == (1 if real is COMPACTING else 0)
    assert CHILD not in compactions
    assert summary["compactions"] == parent_compactions
    assert summary["main_turns"] == sum(1 for p in payloads if p.get("type") == "task_started")
    assert summary["subagent_turns"] == 1
    parent_totals = last_totals(parent_lines)
    assert summary["input_tokens"] == parent_totals["input_tokens"] + CHILD_USAGE["input_tokens"]
    assert summary["output_tokens"] == parent_totals["output_tokens"] + CHILD_USAGE["output_tokens"]
    assert summary["cached_tokens"] == parent_totals["cached_input_tokens"] + CHILD_USAGE["cached_input_tokens"]
    assert (child["parent_invocation_id"], child["spawned_by_tool_call_id"]) == (parent, "call_fork")
    assert (child["status"], child["duration_ms"]) == ("completed", 2500)
    # The copied history was the child's model's context: its conversation keeps it, then its own items.
    assert len(child["conversation"]) == built["copied_items"] + built["own_items"]
    note = child["conversation"][built["copied_items"] - 1]
    assert (note["type"], note["call_id"], note["output"]) == ("function_call_output", "call_fork", FORKED_NOTE)


def test_a_fork_of_a_fork_copies_two_histories_and_each_session_keeps_its_own_calls(tmp_path: Path) -> None:
    def meta(session: str, parent: str | None) -> dict[str, Any]:
        spawn = {"subagent": {"thread_spawn": {"parent_thread_id": parent, "depth": 1}}} if parent else "exec"
        return line("session_meta", {"id": session, "source": spawn}, "2030-01-01T00:00:00.000Z")

    def call(call_id: str, name: str = "exec_command") -> dict[str, Any]:
        payload = {"type": "function_call", "name": name, "arguments": "{}", "call_id": call_id}
        return line("response_item", payload, "2030-01-01T00:00:01.000Z")

    def output(call_id: str, text: str = "ok") -> dict[str, Any]:
        payload = {"type": "function_call_output", "call_id": call_id, "output": text}
        return line("response_item", payload, "2030-01-01T00:00:02.000Z")

    root_before = [meta("root", None), call("root_1"), output("root_1"), call("spawn_mid", "spawn_agent")]
    root = [*root_before, output("spawn_mid", json.dumps({"agent_id": "mid"})), call("root_2"), output("root_2")]
    # An earlier spawn of the middle session that started an agent: its output names it and closes no copy.
    mid_before = [
        meta("mid", "root"),
        *root_before,
        output("spawn_mid", FORKED_NOTE),
        call("spawn_other", "spawn_agent"),
        output("spawn_other", json.dumps({"agent_id": "other"})),
        call("mid_1"),
        output("mid_1"),
        call("spawn_leaf", "spawn_agent"),
    ]
    mid = [*mid_before, output("spawn_leaf", json.dumps({"agent_id": "leaf"}))]
    leaf = [meta("leaf", "mid"), *mid_before, output("spawn_leaf", FORKED_NOTE), call("leaf_1"), output("leaf_1")]
    folder = tmp_path / "sessions"
    folder.mkdir()
    for name, content in (("rollout-1.jsonl", root), ("rollout-2.jsonl", mid), ("rollout-3.jsonl", leaf)):
        (folder / name).write_text("".join(json.dumps(x) + "\n" for x in content))

    document = observe(folder)
    tools = by_invocation(document, "tool_call")

    assert {key: sorted(r["tool_call_id"] for r in records) for key, records in tools.items()} == {
        "root": ["root_1", "root_2", "spawn_mid"],
        "mid": ["mid_1", "spawn_leaf", "spawn_other"],
        "leaf": ["leaf_1"],
    }
    assert document["run_summary"]["subagent_calls"] == 3


def test_a_copy_codex_did_not_close_is_read_as_the_sessions_own(tmp_path: Path) -> None:
    """`codex fork` copies a session without the spawn output that ends the copy: nothing tells the copy apart."""
    parent = [line("session_meta", {"id": "first"}, "2030-01-01T00:00:00.000Z")]
    calls = [
        line("response_item", {"type": "function_call", "name": "x", "arguments": "{}", "call_id": f"c{n}"}, at)
        for n, at in ((1, "2030-01-01T00:00:01.000Z"), (2, "2030-01-01T00:00:03.000Z"))
    ]
    forked = [line("session_meta", {"id": "second", "forked_from_id": "first"}, "2030-01-01T00:00:02.000Z")]
    path = tmp_path / "rollout-2.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in [*forked, *parent, calls[0], calls[1]]))

    document = observe(path)

    assert sorted(r["tool_call_id"] for r in by_invocation(document, "tool_call")["second"]) == ["c1", "c2"]
