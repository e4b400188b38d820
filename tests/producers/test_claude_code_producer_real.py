"""The Claude Code producer on real transcripts (2.1.29, 2.1.38, 2.1.39), checked against counts read independently."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from gym_contract import iter_diagnostics
from gym_contract.cli import main
from gym_contract.producers.claude_code import read_run
from tests.support import REPO as ROOT

SPOTTER_39 = ROOT / "examples" / "claude-code" / "spotter-v2.1.39"
DATA = ROOT / "tests" / "data" / "claude-code"
CLAUDELESS = sorted((DATA / "claudeless-v2.1.29").glob("*.projects"))
SPOTTER_38 = sorted((DATA / "spotter-v2.1.38").glob("*.jsonl"))
INTERNAL = ("acompact-", "aprompt_suggestion-")


@dataclass
class Counted:
    """What the transcript files hold, read with plain JSON and none of the producer's code."""

    invocations: set[str] = field(default_factory=set)
    parents: dict[str, tuple[str, str]] = field(default_factory=dict)  # child → (parent, spawning tool call)
    internal: set[str] = field(default_factory=set)
    tool_calls: set[str] = field(default_factory=set)
    failed_tool_calls: set[str] = field(default_factory=set)
    compactions: int = 0
    summaries: int = 0
    root_responses: set[str] = field(default_factory=set)
    subagent_responses: set[str] = field(default_factory=set)


def lines(path: Path) -> Iterator[dict[str, Any]]:
    for raw in path.read_text(encoding="utf-8").splitlines():
        if raw.strip():
            yield json.loads(raw)


def count(projects: Path) -> Counted:
    counted = Counted()
    for path in sorted(projects.rglob("*.jsonl")):
        for event in lines(path):
            if not isinstance(event.get("sessionId"), str):
                continue
            agent = event.get("agentId") or None
            if agent is not None and agent.startswith(INTERNAL):
                counted.internal.add(agent)
                continue
            owner = agent or event["sessionId"]
            counted.invocations.add(owner)
            counted.compactions += event.get("subtype") == "compact_boundary"
            counted.summaries += event.get("isCompactSummary") is True
            message = event.get("message") if isinstance(event.get("message"), dict) else {}
            content = message.get("content") if isinstance(message.get("content"), list) else []
            synthetic = message.get("model") == "<synthetic>"
            if event.get("type") == "assistant" and not synthetic and message.get("id"):
                (counted.subagent_responses if agent else counted.root_responses).add(message["id"])
            for block in content:
                if block.get("type") == "tool_use" and event.get("type") == "assistant":
                    counted.tool_calls.add(block["id"])
                if block.get("type") == "tool_result" and block.get("is_error") is True:
                    counted.failed_tool_calls.add(block["tool_use_id"])
            spawned = event.get("toolUseResult")
            if isinstance(spawned, dict) and spawned.get("agentId"):
                results = [b["tool_use_id"] for b in content if b.get("type") == "tool_result"]
                counted.parents[spawned["agentId"]] = (owner, results[0])
                counted.invocations.add(spawned["agentId"])
    return counted


def config_of(projects: Path, tmp_path: Path) -> Path:
    """A CLAUDE_CONFIG_DIR whose `projects/` holds a copy of the given folder."""
    shutil.copytree(projects, tmp_path / "config" / "projects")
    return tmp_path / "config"


def check(config: Path) -> tuple[dict[str, Any], Counted]:
    run = read_run(config, model_ref="policy")
    document = run.document()
    assert list(iter_diagnostics(document["ng_agent_observations"], "bundle")) == []
    return document, count(config / "projects")


def assert_matches(document: dict[str, Any], counted: Counted) -> None:
    bundle, summary = document["ng_agent_observations"], document["run_summary"]
    invocations = {r["invocation_id"]: r for r in bundle["records"] if r["kind"] == "agent_invocation"}
    assert set(invocations) == counted.invocations
    assert {
        child: (r["parent_invocation_id"], r["spawned_by_tool_call_id"])
        for child, r in invocations.items()
        if r["parent_invocation_id"] is not None
    } == counted.parents
    tools = [r for r in bundle["records"] if r["kind"] == "tool_call"]
    assert {r["tool_call_id"] for r in tools if r["tool_name"] is not None} == counted.tool_calls
    assert len([r for r in bundle["records"] if r["kind"] == "context_compaction"]) == counted.compactions
    assert summary["tool_calls"] == len(counted.tool_calls)
    assert summary["tool_errors"] == len(counted.failed_tool_calls)
    assert summary["main_turns"] == len(counted.root_responses)
    assert summary["subagent_turns"] == len(counted.subagent_responses)
    assert summary["subagent_calls"] == len(counted.parents)
    assert set(summary["internal_agents"]) == counted.internal


def test_the_2_1_39_session_yields_its_subagent_its_compaction_and_every_tool_call() -> None:
    document, counted = check(SPOTTER_39)

    assert_matches(document, counted)
    assert (len(counted.invocations), counted.compactions, counted.summaries, len(counted.tool_calls)) == (2, 1, 1, 254)
    assert document["run_summary"]["internal_agents"] == {"acompact-946d2b": "compaction_summariser"}
    compaction = next(r for r in document["ng_agent_observations"]["records"] if r["kind"] == "context_compaction")
    assert (compaction["trigger"], compaction["tokens_before"], compaction["outcome"]) == (
        "manual",
        142431,
        "completed",
    )
    assert compaction["summary"].startswith("This session is being continued from a previous conversation")
    assert [g["code"] for g in document["ng_agent_observations"]["gaps"]] == [
        "invocation_outcome_unavailable",
        "compaction_model_call_reference_unavailable",
    ]


@pytest.mark.parametrize("transcript", SPOTTER_38, ids=lambda p: p.stem)
def test_each_2_1_38_transcript_matches_what_its_file_holds(transcript: Path, tmp_path: Path) -> None:
    folder = tmp_path / "projects-copy" / "-home-user-spotter"
    folder.mkdir(parents=True)
    session = next(e["sessionId"] for e in lines(transcript) if isinstance(e.get("sessionId"), str))
    shutil.copy(transcript, folder / f"{session}.jsonl")

    document, counted = check(config_of(tmp_path / "projects-copy", tmp_path))

    assert_matches(document, counted)


def test_the_2_1_38_subagent_whose_transcript_was_not_kept_is_emitted_empty_with_its_gap(tmp_path: Path) -> None:
    transcript = DATA / "spotter-v2.1.38" / "subagent.jsonl"
    (tmp_path / "p").mkdir()
    shutil.copy(transcript, tmp_path / "p" / "491e126e-1e71-469c-ade2-fcc8af567c74.jsonl")

    document, _ = check(config_of(tmp_path, tmp_path))

    gaps = [(g["code"], g["invocation_id"]) for g in document["ng_agent_observations"]["gaps"]]
    assert ("subagent_transcript_missing", "afb92ff") in gaps
    child = next(r for r in document["ng_agent_observations"]["records"] if r["invocation_id"] == "afb92ff")
    assert (child["conversation"], child["model_calls"], child["status"]) == ([], [], "completed")


@pytest.mark.parametrize("projects", CLAUDELESS, ids=lambda p: p.name.removesuffix(".projects"))
def test_each_2_1_29_session_matches_what_its_files_hold(projects: Path, tmp_path: Path) -> None:
    document, counted = check(config_of(projects, tmp_path))

    assert_matches(document, counted)


def test_the_2_1_29_compact_command_and_prompt_suggestion_helpers_are_told_apart() -> None:
    projects = DATA / "claudeless-v2.1.29" / "compact-command.projects"
    counted = count(projects)

    assert (counted.compactions, counted.summaries) == (1, 1)
    assert counted.internal == {"aprompt_suggestion-e6d768", "aprompt_suggestion-029c25"}


def test_synthetic_api_error_messages_in_real_transcripts_are_not_model_calls(tmp_path: Path) -> None:
    projects = DATA / "claudeless-v2.1.29" / "model-haiku.projects"

    document, _ = check(config_of(projects, tmp_path))

    synthetic_ids = {
        e["message"]["id"]
        for path in projects.rglob("*.jsonl")
        for e in lines(path)
        if isinstance(e.get("message"), dict) and e["message"].get("model") == "<synthetic>"
    }
    referenced = {
        ref["response_id"]
        for r in document["ng_agent_observations"]["records"]
        if r["kind"] == "agent_invocation"
        for ref in r["model_calls"]
    }
    assert synthetic_ids
    assert not synthetic_ids & referenced


def real_configs(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    yield "spotter-v2.1.39", SPOTTER_39
    for transcript in SPOTTER_38:
        folder = tmp_path / transcript.stem / "projects" / "-home-user-spotter"
        folder.mkdir(parents=True)
        session = next(e["sessionId"] for e in lines(transcript) if isinstance(e.get("sessionId"), str))
        shutil.copy(transcript, folder / f"{session}.jsonl")
        yield f"spotter-v2.1.38/{transcript.stem}", tmp_path / transcript.stem
    for projects in CLAUDELESS:
        yield f"claudeless-v2.1.29/{projects.stem}", config_of(projects, tmp_path / projects.stem)


def test_the_observe_command_prints_a_valid_document_matching_each_real_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    checked = []
    for name, config in real_configs(tmp_path):
        status = main(["observe", "claude-code", str(config), "--model-ref", "policy"])
        out, err = capsys.readouterr()
        document = json.loads(out)
        assert (name, status, err) == (name, 0, "")
        assert list(iter_diagnostics(document["ng_agent_observations"], "bundle")) == []
        assert_matches(document, count(config / "projects"))
        checked.append(name)
    assert len(checked) == 1 + len(SPOTTER_38) + len(CLAUDELESS) == 47


def test_the_host_says_the_run_had_no_sandbox(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    name, config = next(iter(real_configs(tmp_path)))
    assert main(["observe", "claude-code", str(config), "--model-ref", "policy", "--no-sandbox"]) == 0, name
    gaps = json.loads(capsys.readouterr().out)["ng_agent_observations"]["gaps"]
    assert [g for g in gaps if g["code"] == "no_sandbox_runtime"] == [
        {"code": "no_sandbox_runtime", "invocation_id": None, "detail": None}
    ]
