"""`gym-contract observe openclaw` and `observe pinchbench` on stores the tests build, read as plain JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gym_contract import iter_diagnostics
from gym_contract.producers import producer
from tests.producers.openclaw_stores import (
    CHILD_KEY,
    GRANDCHILD_KEY,
    ROOT_KEY,
    Transcript,
    call,
    home_files,
    pinchbench_files,
    text,
)
from tests.producers.seeds import OPENCLAW_FORMS
from tests.producers.test_producer_laws import MARKER, PROCESS, artifacts, breaches, damage, observed_bytes
from tests.support import REPO, run_in_process


def put(root: Path, files: dict[str, bytes]) -> Path:
    for name, content in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
    return root


def observed(harness: str, *arguments: str) -> dict[str, Any]:
    status, out, err = run_in_process("observe", harness, *arguments)
    assert (status, err) == (0, "")
    document: dict[str, Any] = json.loads(out)
    for key, kind in (("ng_agent_observations", "bundle"), ("ng_agent_outcome", "agent_outcome")):
        if document[key] is not None:
            assert [d for d in iter_diagnostics(document[key], kind) if d.severity == "error"] == []
    return document


def records(document: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [record for record in document["ng_agent_observations"]["records"] if record["kind"] == kind]


def gaps(document: dict[str, Any]) -> list[tuple[str, str | None, str | None]]:
    listed = [
        (found["code"], found["invocation_id"], found["detail"]) for found in document["ng_agent_observations"]["gaps"]
    ]
    return sorted(listed, key=lambda found: tuple(part or "" for part in found))


def plain_stores(agents: Path) -> dict[str, dict[str, Any]]:
    """Session key → its store entry and folder, read with plain json."""
    found = {}
    for store in sorted(agents.glob("*/sessions/sessions.json")):
        for key, entry in json.loads(store.read_text()).items():
            found[key] = {**entry, "folder": store.parent}
    return found


def plain_entries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_a_multi_agent_home_gives_the_subagent_tree_the_tool_timings_and_the_gaps(tmp_path: Path) -> None:
    home = put(tmp_path / "home", home_files())
    document = observed("openclaw", str(home), "--model-ref", "policy", "--exit-code", "0")
    stores = plain_stores(home / ".openclaw" / "agents")

    # The tree: one invocation per session key, its parent the key `spawnedBy` or `parentSessionKey` names.
    tree = {key: entry.get("spawnedBy") or entry.get("parentSessionKey") for key, entry in stores.items()}
    invocations = records(document, "agent_invocation")
    assert {record["invocation_id"]: record["parent_invocation_id"] for record in invocations} == tree
    assert [record["invocation_id"] for record in invocations] == [ROOT_KEY, CHILD_KEY, GRANDCHILD_KEY]
    # Tools: one record per toolCall block; each result ends its call and `details.durationMs` starts it.
    expected_tools = {}
    for key, entry in stores.items():
        entries = plain_entries(entry["folder"] / f"{entry['sessionId']}.jsonl")
        messages = [item["message"] for item in entries if item["type"] == "message"]
        for block in (b for m in messages if m["role"] == "assistant" for b in m["content"]):
            if block["type"] == "toolCall":
                expected_tools[(key, block["id"])] = (None, None, None)
        for message in (m for m in messages if m["role"] == "toolResult"):
            end, duration = message["timestamp"] / 1000, message["details"]["durationMs"]
            expected_tools[(key, message["toolCallId"])] = (end - duration / 1000, end, duration)
    tools = records(document, "tool_call")
    assert {
        (record["invocation_id"], record["tool_call_id"]): (
            record["started_at"],
            record["completed_at"],
            record["duration_ms"],
        )
        for record in tools
    } == expected_tools
    assert {record["timing_source"] for record in tools if record["started_at"] is not None} == {"artifact"}
    # The two reads of one response overlap: each is timed by its own result.
    first, second = tools[0], tools[1]
    assert second["started_at"] < first["completed_at"]
    # Every gap HARNESSES 2.4 names for this store, and the end no transcript states.
    assert gaps(document) == [
        ("agent_conversation_branching_unavailable", CHILD_KEY, None),
        ("compaction_model_call_boundary_unavailable", ROOT_KEY, None),
        ("invocation_outcome_unavailable", GRANDCHILD_KEY, None),
        ("subagent_spawn_tool_unavailable", CHILD_KEY, None),
        ("subagent_spawn_tool_unavailable", GRANDCHILD_KEY, None),
        ("tool_timing_unavailable", GRANDCHILD_KEY, "call-g"),
    ]
    # Unlike the reference, each session's end is set where its last stop reason states it.
    assert [record["status"] for record in invocations] == ["completed", "completed", "unknown"]
    compactions = [
        item for entry in stores.values() for item in plain_entries(entry["folder"] / f"{entry['sessionId']}.jsonl")
    ]
    assert len(records(document, "context_compaction")) == sum(
        1 for item in compactions if item["type"] == "compaction"
    )
    summary = document["run_summary"]
    assert (summary["tool_calls"], summary["tool_errors"], summary["subagent_calls"]) == (len(expected_tools), 1, 2)
    assert document["ng_agent_outcome"]["harness"] == "openclaw"


def test_a_pinchbench_folder_gives_the_same_bundle_as_the_store_it_holds(tmp_path: Path) -> None:
    out = put(tmp_path / "out", pinchbench_files())
    from_folder = observed("pinchbench", str(out), "--model-ref", "policy", "--exit-code", "0")
    from_store = observed("openclaw", str(out / "openclaw_sessions"), "--model-ref", "policy", "--exit-code", "0")
    told = observed("openclaw", str(out), "--model-ref", "policy", "--exit-code", "0")

    assert from_folder["ng_agent_observations"] == from_store["ng_agent_observations"]
    assert from_folder["ng_agent_outcome"] == from_store["ng_agent_outcome"]
    assert told == from_folder
    assert (from_folder["run_summary"]["artifact_form"], from_store["run_summary"]["artifact_form"]) == (
        "pinchbench",
        "state",
    )


def test_pinchbench_reads_the_session_its_transcript_names_and_says_when_no_store_holds_it(tmp_path: Path) -> None:
    files = pinchbench_files()
    files["openclaw_sessions/agents/other/sessions/sessions.json"] = json.dumps(
        {"agent:other:main": {"sessionId": "s-other"}}
    ).encode()
    files["openclaw_sessions/agents/other/sessions/s-other.jsonl"] = Transcript("s-other", 0).bytes()
    out = put(tmp_path / "out", files)
    document = observed("pinchbench", str(out))
    assert [r["invocation_id"] for r in records(document, "agent_invocation")] == [ROOT_KEY, CHILD_KEY, GRANDCHILD_KEY]

    (out / "openclaw_sessions" / "agents" / "main" / "sessions" / "sessions.json").unlink()
    alone = observed("pinchbench", str(out))
    assert [r["invocation_id"] for r in records(alone, "agent_invocation")] == ["s-root"]
    assert ("subagent_hierarchy_unavailable", None, "root_session_not_found") in gaps(alone)


def test_links_and_paths_that_leave_the_folder_are_refused_and_said(tmp_path: Path) -> None:
    secret = tmp_path / "outside" / "secret.jsonl"
    secret.parent.mkdir()
    secret.write_bytes(Transcript("OUTSIDE-THE-INPUT", 0).bytes())
    files = home_files()
    main = json.loads(files[".openclaw/agents/main/sessions/sessions.json"])
    main["agent:main:subagent:climb"] = {"sessionFile": "../../../../../outside/secret.jsonl", "spawnedBy": ROOT_KEY}
    main["agent:main:subagent:linked"] = {"sessionId": "s-linked", "spawnedBy": ROOT_KEY}
    files[".openclaw/agents/main/sessions/sessions.json"] = json.dumps(main).encode()
    home = put(tmp_path / "home", files)
    (home / ".openclaw/agents/main/sessions/s-linked.jsonl").symlink_to(secret)
    (home / ".openclaw/agents/elsewhere").mkdir()
    (home / ".openclaw/agents/elsewhere/sessions").symlink_to(secret.parent, target_is_directory=True)
    (secret.parent / "sessions.json").write_text(json.dumps({"OUTSIDE-THE-INPUT": {"sessionId": "secret"}}))

    status, out, err = run_in_process("observe", "openclaw", str(home))
    assert (status, err) == (0, "")
    assert "OUTSIDE-THE-INPUT" not in out
    found = gaps(json.loads(out))
    assert ("agent_session_store_unreadable", None, "elsewhere/sessions/sessions.json") in found
    assert ("agent_transcript_unavailable", "agent:main:subagent:climb", None) in found
    assert ("agent_transcript_unavailable", "agent:main:subagent:linked", "s-linked") in found


def test_the_store_faults_the_reference_names_are_gaps(tmp_path: Path) -> None:
    files = home_files()
    worker = {
        GRANDCHILD_KEY: {"sessionId": "s-counter", "parentSessionKey": CHILD_KEY},
        ROOT_KEY: {"sessionId": "s-twin"},  # the same key in two stores: no one session
        "agent:worker:subagent:torn": {"sessionId": "s-torn", "spawnedBy": ROOT_KEY, "parentSessionKey": CHILD_KEY},
        "agent:worker:subagent:gone": {"sessionId": "s-gone", "spawnedBy": "agent:worker:main"},
        "agent:worker:bad": ["not", "an", "entry"],
    }
    files[".openclaw/agents/worker/sessions/sessions.json"] = json.dumps(worker).encode()
    files[".openclaw/agents/broken/sessions/sessions.json"] = b'{"agent:broken:main": '
    document = observed("openclaw", str(put(tmp_path / "home", files)))
    found = gaps(document)
    for expected in [
        ("agent_session_identity_ambiguous", None, ROOT_KEY),
        ("agent_session_entry_unparseable", None, "agent:worker:bad"),
        ("agent_session_store_unreadable", None, "broken/sessions/sessions.json"),
        ("subagent_parent_ambiguous", "agent:worker:subagent:torn", None),
        ("subagent_hierarchy_incomplete", None, None),
        ("agent_transcript_unavailable", "agent:worker:subagent:gone", "s-gone"),
        ("context_compaction_unavailable", "agent:worker:subagent:gone", None),
    ]:
        assert expected in found
    parents = {r["invocation_id"]: r["parent_invocation_id"] for r in records(document, "agent_invocation")}
    assert ROOT_KEY not in parents
    assert (parents["agent:worker:subagent:torn"], parents["agent:worker:subagent:gone"]) == (None, "agent:worker:main")


def test_a_parent_no_store_holds_is_named_once_as_the_invocation_that_could_not_be_built(tmp_path: Path) -> None:
    files = home_files()
    orphans = {
        "agent:worker:subagent:a": {"sessionId": "s-a", "spawnedBy": "agent:worker:main"},
        "agent:worker:subagent:b": {"sessionId": "s-b", "parentSessionKey": "agent:worker:main"},
    }
    files[".openclaw/agents/worker/sessions/sessions.json"] = json.dumps(orphans).encode()

    document = observed("openclaw", str(put(tmp_path / "home", files)))

    parents = {r["invocation_id"]: r["parent_invocation_id"] for r in records(document, "agent_invocation")}
    assert (parents["agent:worker:subagent:a"], parents["agent:worker:subagent:b"]) == ("agent:worker:main",) * 2
    assert "agent:worker:main" not in parents
    found = gaps(document)
    assert [gap for gap in found if gap[0] == "agent_invocation_unavailable"] == [
        ("agent_invocation_unavailable", "agent:worker:main", None)
    ]
    assert ("subagent_hierarchy_incomplete", None, None) in found


def test_a_transcript_s_tool_faults_are_gaps_and_its_end_is_set(tmp_path: Path) -> None:
    run = Transcript("s-tools", 1_767_225_600)
    run.user("go")
    run.assistant(
        "r1", call("dup", "read"), call("dup", "read"), call("slow", "exec"), call("aeons", "exec"), stop="toolUse"
    )
    run.result("dup", "read", "x", 5)
    run.result("stray", "read", "y", 5)
    run.result("slow", "exec", "z", None, status="timeout")
    run.result("aeons", "exec", "w", 5e15)  # longer than the epoch: it began at no instant
    run.assistant("r2", text("partial"), stop="length")
    path = tmp_path / "s-tools.jsonl"
    path.write_bytes(run.bytes() + b"not json\n")
    document = observed("openclaw", str(path))
    assert [(r["tool_call_id"], r["status"], r["started_at"] is None) for r in records(document, "tool_call")] == [
        ("slow", "timeout", False),
        ("aeons", "completed", True),
    ]
    assert records(document, "tool_call")[0]["timing_source"] == "artifact"  # from its call's message to its result
    found = gaps(document)
    for expected in [
        ("tool_call_identity_ambiguous", "s-tools", "dup"),
        ("tool_result_unowned", "s-tools", "stray"),
        ("subagent_hierarchy_unavailable", "s-tools", None),
        ("agent_artifact_record_unparseable", None, "s-tools.jsonl:9"),
        ("tool_timing_unavailable", "s-tools", "aeons"),
    ]:
        assert expected in found
    invocation = records(document, "agent_invocation")[0]
    assert (invocation["status"], invocation["error_type"]) == ("incomplete", "model_output_limit")


@pytest.mark.parametrize("name", ["home", "pinchbench"])
def test_the_shipped_examples_are_the_stores_the_tests_build(name: str) -> None:
    built = home_files() if name == "home" else pinchbench_files()
    folder = REPO / "examples" / "openclaw" / name
    shipped = {path.relative_to(folder).as_posix(): path.read_bytes() for path in folder.rglob("*") if path.is_file()}
    assert shipped == built


def test_a_path_that_does_not_exist_is_exit_2(tmp_path: Path) -> None:
    for harness in ("openclaw", "pinchbench"):
        status, out, err = run_in_process("observe", harness, str(tmp_path / "absent"))
        assert (status, out) == (2, "")
        assert "no such file" in err


@pytest.mark.parametrize("form", sorted(OPENCLAW_FORMS))
@given(data=st.data(), process=PROCESS)
def test_no_harm_to_either_folder_form_makes_the_producer_raise(
    form: str, data: st.DataObject, process: dict[str, Any]
) -> None:
    declared, seed = producer("openclaw"), OPENCLAW_FORMS[form]()
    harms = data.draw(damage(seed), label="harms")
    with artifacts(seed, harms) as (path, options):
        first = observed_bytes(declared, path, options, process)
        again = observed_bytes(declared, path, options, process)
    assert breaches(declared, first, again) == []
    assert MARKER not in first, "a file linked from outside the input was read"


def test_without_a_store_each_transcript_is_read_alone(tmp_path: Path) -> None:
    files = {name: content for name, content in home_files().items() if not name.endswith("sessions.json")}
    files[".openclaw/agents/main/sessions/s-root.trajectory.jsonl"] = b'{"finalStatus": "success"}\n'
    files[".openclaw/agents/main/sessions/copy.jsonl"] = files[".openclaw/agents/main/sessions/s-root.jsonl"]
    document = observed("openclaw", str(put(tmp_path / "home", files)))

    invocations = records(document, "agent_invocation")
    assert [(r["invocation_id"], r["parent_invocation_id"]) for r in invocations] == [
        ("s-root", None),
        ("s-reader", None),
        ("s-counter", None),
    ]
    found = gaps(document)
    assert ("agent_session_identity_ambiguous", None, "s-root") in found
    assert [f for f in found if f[0] == "subagent_hierarchy_unavailable"] == [
        ("subagent_hierarchy_unavailable", key, None) for key in ("s-counter", "s-reader", "s-root")
    ]
    assert document["ng_agent_outcome"] is None  # three runs, as far as the files say: no one outcome


def test_openclaw_s_own_fields_are_read_and_pi_s_reading_is_unchanged(tmp_path: Path) -> None:
    run = Transcript("s-fields", 1_767_225_600)
    run.user("go")
    run.assistant(
        "r1",
        {"type": "reasoning", "text": "look first"},
        {"type": "toolCall", "id": "cut", "name": "exec", "partialArgs": {"command": "ls"}},
        stop="toolUse",
        reasoning_content="plan",
    )
    run.add("compaction", summary="s", firstKeptEntryId="00000001", tokensBefore=10, timestamp=1_767_225_700_000)
    path = tmp_path / "s-fields.jsonl"
    path.write_bytes(run.bytes())
    document = observed("openclaw", str(path))
    conversation = records(document, "agent_invocation")[0]["conversation"]
    said = [(item["type"], item.get("summary", [{}])[0].get("text")) for item in conversation]
    assert ("reasoning", "plan") in said
    assert ("reasoning", "look first") in said
    assert next(item for item in conversation if item["type"] == "function_call")["arguments"] == '{"command":"ls"}'
    (compaction,) = records(document, "context_compaction")
    assert compaction["observed_at"] == 1_767_225_700.0
    assert ("compaction_tokens_after_unavailable", "s-fields", None) in gaps(document)
    # The Pi producer reads the same file as Pi writes it: a `reasoning` block is none of Pi's.
    status, out, _ = run_in_process("observe", "pi", str(path))
    assert status == 0
    assert ("unsupported_assistant_content_block", "s-fields", "reasoning") in gaps(json.loads(out))
