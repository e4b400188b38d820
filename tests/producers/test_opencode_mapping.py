"""The OpenCode mapping rule by rule, on small opencode.db stores: tree, tools, timing, spawns, compactions, gaps."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from gym_contract.producers import UnrecognisedArtifactError
from gym_contract.producers.opencode import observe

T = 1785900000000  # epoch milliseconds, as OpenCode writes every time


def store(
    tmp_path: Path, messages: list[tuple[str, dict[str, Any], list[dict[str, Any]]]], sessions: Any = None
) -> Path:
    """An opencode.db with the given (session, message info, parts) rows, ids `m<i>` and `p<j>` in order."""
    path = tmp_path / "opencode.db"
    connection = sqlite3.connect(path)
    connection.execute("create table session (id text primary key, parent_id text, time_created integer)")
    connection.execute("create table message (id text primary key, session_id text, time_created integer, data text)")
    connection.execute(
        "create table part (id text primary key, message_id text, session_id text, time_created integer, data text)"
    )
    for index, (session_id, parent_id) in enumerate(sessions or [("root", None)]):
        connection.execute("insert into session values (?, ?, ?)", (session_id, parent_id, index))
    number = 0
    for index, (session_id, info, parts) in enumerate(messages):
        connection.execute(
            "insert into message values (?, ?, ?, ?)", (f"m{index}", session_id, index, json.dumps(info))
        )
        for part in parts:
            connection.execute(
                "insert into part values (?, ?, ?, ?, ?)",
                (f"p{number:02d}", f"m{index}", session_id, index, json.dumps(part)),
            )
            number += 1
    connection.commit()
    connection.close()
    return path


def user(created: int = T) -> dict[str, Any]:
    return {"role": "user", "time": {"created": created}}


def assistant(created: int = T, completed: int | None = T + 1, **more: Any) -> dict[str, Any]:
    time = {"created": created} if completed is None else {"created": created, "completed": completed}
    return {"role": "assistant", "time": time, **more}


def tool(
    call_id: str | None,
    status: str = "completed",
    start: int = T,
    end: int | None = T + 100,
    compacted: int | None = None,
    **state: Any,
) -> dict[str, Any]:
    timing: dict[str, int] = {"start": start} if end is None else {"start": start, "end": end}
    if compacted is not None:
        timing["compacted"] = compacted
    part = {
        "type": "tool",
        "tool": "bash",
        "state": {"status": status, "input": {"command": "ls"}, "time": timing, **state},
    }
    return {**part, "callID": call_id} if call_id is not None else part


def bundle(path: Path, **process: Any) -> dict[str, Any]:
    document: dict[str, Any] = observe(path, **process).document()["ng_agent_observations"]
    return document


def records(document: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [record for record in document["records"] if record["kind"] == kind]


def codes(document: dict[str, Any]) -> list[tuple[str, str | None, str | None]]:
    return [(gap["code"], gap["invocation_id"], gap["detail"]) for gap in document["gaps"]]


def test_a_tree_with_parallel_tools_reasoning_pruning_and_a_compaction(tmp_path: Path) -> None:
    path = store(
        tmp_path,
        [
            ("root", user(), [{"type": "text", "text": "solve"}, {"type": "text", "text": "hidden", "ignored": True}]),
            (
                "root",
                assistant(),
                [
                    tool("task-1", metadata={"sessionId": "child"}, output="done", start=T + 1000, end=T + 3000),
                    tool("bash-1", output="/workspace", start=T + 1200, end=T + 1600, compacted=T + 1700),
                ],
            ),
            ("child", user(), [{"type": "text", "text": "inspect"}]),
            ("child", assistant(), [{"type": "reasoning", "text": "checking files"}]),
            ("child", user(T + 5), [{"type": "compaction", "auto": True, "overflow": True, "tail_start_id": "m3"}]),
            ("child", assistant(summary=True, parentID="m4"), [{"type": "text", "text": "condensed context"}]),
        ],
        sessions=[("root", None), ("child", "root")],
    )

    document = bundle(path, exit_code=0)

    root, child = records(document, "agent_invocation")
    assert (child["parent_invocation_id"], child["spawned_by_tool_call_id"], child["status"]) == (
        "root",
        "task-1",
        "completed",
    )
    assert [item["content"] for item in root["conversation"] if item["type"] == "message"] == ["solve"]
    assert root["conversation"][4] == {
        "type": "function_call_output",
        "call_id": "bash-1",
        "output": "[Old tool result content cleared]",
        "id": None,
        "status": "completed",
    }
    tools = {record["tool_call_id"]: record for record in records(document, "tool_call")}
    assert {key: (r["started_at"], r["duration_ms"]) for key, r in tools.items()} == {
        "task-1": (1785900001.0, 2000.0),
        "bash-1": (1785900001.2, 400.0),
    }
    (compaction,) = records(document, "context_compaction")
    assert (compaction["trigger"], compaction["summary"], compaction["first_kept_item_id"]) == (
        "overflow",
        "condensed context",
        "p05",
    )
    assert (compaction["outcome"], compaction["observed_at"]) == ("completed", 1785900000.005)
    assert codes(document) == [
        ("compaction_token_counts_unavailable", "child", None),
        ("compaction_model_call_boundary_unavailable", "child", None),
        ("model_call_ownership_unavailable", None, None),
    ]
    summary = observe(path).summary
    # The summary message is the summariser's, not a turn of the subagent.
    assert (summary.main_turns, summary.subagent_turns, summary.subagent_calls, summary.compactions) == (1, 1, 1, 1)


def test_a_compaction_whose_tail_names_no_item_and_two_summaries(tmp_path: Path) -> None:
    path = store(
        tmp_path,
        [
            ("root", user(), [{"type": "text", "text": "keep this"}]),
            ("root", user(), [{"type": "compaction", "tail_start_id": "m0"}]),
            ("root", assistant(summary=True, parentID="m1"), [{"type": "text", "text": "one"}]),
            ("root", assistant(summary=True, parentID="m1"), [{"type": "text", "text": "two"}]),
        ],
    )

    document = bundle(path)

    (compaction,) = records(document, "context_compaction")
    assert (compaction["trigger"], compaction["summary"], compaction["outcome"]) == ("manual", None, "unknown")
    assert codes(document)[:3] == [
        ("compaction_summary_ambiguous", "root", None),
        ("compaction_first_kept_item_unavailable", "root", "m0"),
        ("compaction_summary_unavailable", "root", None),
    ]


def test_statuses_from_messages_children_and_the_process(tmp_path: Path) -> None:
    error = {"name": "APIError", "data": {"message": "Overloaded", "statusCode": 529}}
    path = store(
        tmp_path,
        [
            ("root", assistant(), [tool("task-1", status="error", error="boom", metadata={"sessionId": "quiet"})]),
            ("failing", assistant(error=error), []),
            ("quiet", user(), []),
        ],
        sessions=[("root", None), ("failing", "root"), ("quiet", "root")],
    )

    without, timed_out = (records(bundle(path, **process), "agent_invocation") for process in ({}, {"timed_out": True}))

    assert [(r["status"], r["error_type"]) for r in without] == [
        ("completed", None),
        ("failed", "APIError"),
        ("failed", "tool_error"),  # a child that says nothing takes the status of the call that spawned it
    ]
    assert (timed_out[0]["status"], timed_out[0]["error_type"]) == ("incomplete", "timeout")
    assert records(bundle(path, exit_code=2), "agent_invocation")[0]["error_type"] == "process_exit_2"
    assert ("subagent_spawn_tool_unavailable", "failing", None) in codes(bundle(path))
    assert ("agent_run_timeout", None, None) in codes(bundle(path, timed_out=True))


def test_timing_identity_and_tree_faults_become_gaps_not_contradictions(tmp_path: Path) -> None:
    path = store(
        tmp_path,
        [
            (
                "root",
                assistant(),
                [
                    tool("task-1", start=T + 2000, end=T + 1000, metadata={"sessionId": "child"}),
                    tool("task-2", metadata={"sessionId": "child"}),
                    tool(None),
                    tool("twice"),
                    tool("twice"),
                    tool("open", status="running", end=None),
                ],
            ),
        ],
        sessions=[("root", None), ("child", "missing-parent"), ("a", "b"), ("b", "a")],
    )

    document = bundle(path)

    tools = {record["tool_call_id"]: record for record in records(document, "tool_call")}
    assert sorted(tools) == ["open", "task-1", "task-2"]
    assert (tools["task-1"]["started_at"], tools["task-1"]["completed_at"]) == (1785900002.0, None)
    assert (tools["open"]["status"], tools["open"]["completed_at"]) == ("incomplete", None)
    invocations = {record["invocation_id"]: record for record in records(document, "agent_invocation")}
    assert invocations["b"]["parent_invocation_id"] is None  # the link that closes the cycle is dropped
    assert codes(document) == [
        ("tool_call_identity_unavailable", "root", "p02"),
        ("subagent_parent_unavailable", "child", "missing-parent"),
        ("subagent_spawn_ambiguous", "child", None),
        ("subagent_spawn_tool_unavailable", "a", None),
        ("cyclic_subagent_parent", "b", "a"),
        ("tool_timing_invalid", "root", "task-1"),
        ("tool_timing_unavailable", "root", "task-1"),
        ("tool_call_identity_ambiguous", "root", "twice"),
        ("model_call_ownership_unavailable", None, None),
    ]
    # The part without a call id is still a call in the conversation, under the part's own id.
    calls = [item["call_id"] for item in invocations["root"]["conversation"]]
    assert calls == ["task-1", "task-2", "p02", "twice", "twice", "open"]


def test_records_no_session_owns_are_named(tmp_path: Path) -> None:
    path = store(tmp_path, [("root", assistant(), [{"type": "text", "text": "kept"}]), ("ghost", user(), [])])
    connection = sqlite3.connect(path)
    connection.execute("update message set session_id = null where id = 'm0'")
    connection.execute("insert into part values ('p99', 'm404', 'root', 9, '{\"type\":\"text\",\"text\":\"lost\"}')")
    connection.execute("insert into part values ('p98', 'm0', 'root', 9, 'not json')")
    connection.commit()
    connection.close()

    document = bundle(path)

    (root,) = records(document, "agent_invocation")
    assert root["status"] == "unknown"
    assert root["conversation"][0]["content"][0]["text"] == "kept"
    assert codes(document)[:4] == [
        ("agent_artifact_record_unparseable", None, "p98"),
        ("agent_artifact_record_unowned", None, "p99"),
        ("agent_artifact_record_unowned", None, "m0"),
        ("agent_artifact_record_unowned", None, "m1"),
    ]


def test_a_data_folder_is_found_under_xdg_data_home_and_a_link_out_is_not_followed(tmp_path: Path) -> None:
    data = tmp_path / "xdg" / "opencode"
    data.mkdir(parents=True)
    store(data, [("root", assistant(), [tool("c1")])])

    assert [r["tool_call_id"] for r in records(bundle(tmp_path / "xdg"), "tool_call")] == ["c1"]

    (tmp_path / "elsewhere").mkdir()
    (data / "opencode.db").rename(tmp_path / "elsewhere" / "opencode.db")
    (data / "opencode.db").symlink_to(tmp_path / "elsewhere" / "opencode.db")

    linked = bundle(tmp_path / "xdg")

    assert linked["records"] == []
    assert codes(linked)[0][0] == "agent_artifact_unavailable"
    assert records(bundle(data / "opencode.db"), "tool_call")  # a file named on the command line is read where it leads


def test_a_pipe_is_never_opened_as_an_artifact(tmp_path: Path) -> None:
    import os

    os.mkfifo(tmp_path / "export.json")
    storage = tmp_path / "data" / "storage"
    for folder in ("session/global", "message/ses_1", "part/msg_1"):
        (storage / folder).mkdir(parents=True)
    os.mkfifo(storage / "session" / "global" / "ses_1.json")

    with pytest.raises(UnrecognisedArtifactError, match="not a regular file"):
        bundle(tmp_path / "export.json")
    assert codes(bundle(tmp_path / "data"))[0] == (
        "agent_artifact_record_unparseable",
        None,
        "session/global/ses_1.json: not a regular file",
    )
