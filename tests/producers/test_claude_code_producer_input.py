"""Malformed Claude Code input yields gaps, never an exception; the CLI prints one checked document."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gym_contract import iter_diagnostics
from gym_contract.producers import UnrecognisedArtifactError
from gym_contract.producers.claude_code import SUMMARY_FIELDS, observe, outcome, read_run, run_summary
from tests.producers.test_recognition import unopenable
from tests.support import REPO as ROOT

EXAMPLE = ROOT / "examples" / "claude-code" / "spotter-v2.1.39"


def gaps(bundle: Any) -> list[tuple[str, str | None, str | None]]:
    return [(g.code, g.invocation_id, g.detail) for g in bundle.gaps]


def session(config: Path, *lines: str | bytes, name: str = "S.jsonl") -> Path:
    path = config / "projects" / "p" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join((line.encode() if isinstance(line, str) else line) + b"\n" for line in lines))
    return path


def test_a_config_directory_that_is_no_folder_is_refused_as_no_artifact(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("{}")
    for path in (tmp_path / "absent", tmp_path / "file"):
        with pytest.raises(UnrecognisedArtifactError, match="not a directory"):
            observe(path, model_ref="policy")


def test_a_folder_holding_nothing_of_claude_codes_is_refused(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not a config directory")
    with pytest.raises(UnrecognisedArtifactError) as refused:
        observe(tmp_path, model_ref="policy")
    assert refused.value.why == "neither projects/ nor .claude.json in the folder"

    (tmp_path / "projects").write_text("")  # a file by the name, not the transcripts' folder
    with pytest.raises(UnrecognisedArtifactError, match=r"neither projects/ nor \.claude\.json"):
        observe(tmp_path, model_ref="policy")


def test_a_config_directory_whose_every_transcript_fails_to_open_is_refused_naming_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    unopenable(
        monkeypatch, session(tmp_path, '{"type":"user","sessionId":"S","message":{"role":"user","content":"hi"}}')
    )

    with pytest.raises(UnrecognisedArtifactError) as refused:
        observe(tmp_path, model_ref="policy")

    assert refused.value.why == "projects/p/S.jsonl: Permission denied"


def test_a_config_directory_with_projects_but_no_session_is_a_gap(tmp_path: Path) -> None:
    (tmp_path / "projects").mkdir()

    assert gaps(observe(tmp_path, model_ref="policy").observations) == [("agent_transcript_unavailable", None, None)]


def test_a_config_directory_claude_code_kept_no_transcripts_in_is_a_gap_naming_projects(tmp_path: Path) -> None:
    (tmp_path / ".claude.json").write_text("{}")  # a run without session persistence leaves its state, no projects/

    assert gaps(observe(tmp_path, model_ref="policy").observations) == [
        ("transcript_dir_missing", None, "projects"),
        ("agent_transcript_unavailable", None, None),
    ]


def test_an_unreadable_transcript_is_a_gap_naming_the_file_and_the_others_are_still_read(tmp_path: Path) -> None:
    session(tmp_path, '{"type":"user","sessionId":"S","message":{"role":"user","content":"hi"}}')
    (tmp_path / "projects" / "p" / "T.jsonl").symlink_to(tmp_path / "gone.jsonl")  # listed, but cannot be opened

    bundle = observe(tmp_path, model_ref="policy").observations

    assert gaps(bundle) == [("transcript_unreadable", None, "p/T.jsonl"), ("invocation_outcome_unavailable", "S", None)]


def test_broken_lines_non_objects_and_invalid_utf8_are_gaps_with_their_place_and_no_raw_text(tmp_path: Path) -> None:
    session(
        tmp_path,
        '{"type":"user","sessionId":"S","message":{"role":"user","content":"hi"}}',
        "not json at all",
        "[1, 2]",
        b"\xff\xfe",
        "",
        '{"type":"user","message":{"role":"user","content":"no session id: skipped"}}',
    )

    bundle = observe(tmp_path, model_ref="policy").observations

    assert gaps(bundle) == [
        ("malformed_transcript_line", None, "p/S.jsonl:2"),
        ("invalid_transcript_record", None, "p/S.jsonl:3"),
        ("malformed_transcript_line", None, "p/S.jsonl:4"),
        ("invocation_outcome_unavailable", "S", None),
    ]
    assert "not json" not in bundle.model_dump_json()


def test_a_line_over_the_size_limit_is_skipped_whole_and_the_next_line_is_read(tmp_path: Path) -> None:
    huge = json.dumps({"type": "user", "sessionId": "S", "message": {"role": "user", "content": "x" * 5000}})
    session(tmp_path, huge, '{"type":"user","sessionId":"S","message":{"role":"user","content":"after"}}')

    bundle = read_run(tmp_path, model_ref="policy", max_line_bytes=1000).observations

    assert gaps(bundle)[0] == ("malformed_transcript_line", None, "p/S.jsonl:1")
    assert [item["content"] for item in bundle.model_dump(mode="json")["records"][0]["conversation"]] == ["after"]


def test_blocks_of_unknown_types_and_shapes_are_gaps(tmp_path: Path) -> None:
    event = {
        "type": "assistant",
        "sessionId": "S",
        "uuid": "E",
        "message": {
            "role": "assistant",
            "id": "m",
            "content": ["bare string", {"type": "server_tool_use"}, {"type": "tool_use", "name": "Read"}],
        },
    }
    reply = {
        "type": "user",
        "sessionId": "S",
        "message": {"role": "user", "content": [7, {"type": "tool_result"}, {"type": "document"}]},
    }
    session(tmp_path, json.dumps(event), json.dumps(reply))

    assert gaps(observe(tmp_path, model_ref="policy").observations) == [
        ("invalid_assistant_content", "S", None),
        ("unsupported_assistant_content_block", "S", "server_tool_use"),
        ("tool_call_id_missing", "S", None),
        ("invalid_user_content", "S", None),
        ("tool_result_id_missing", "S", None),
        ("unsupported_user_content_block", "S", None),
        ("invocation_outcome_unavailable", "S", None),
    ]


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
EVENT = st.fixed_dictionaries(
    {"sessionId": st.sampled_from(["S", "T"])},
    optional={
        "type": st.sampled_from(["user", "assistant", "system", "progress"]),
        "agentId": st.sampled_from(["a1", "a2", "", "acompact-1"]),
        "subtype": st.sampled_from(["compact_boundary", "status"]),
        "isCompactSummary": st.booleans(),
        "compactMetadata": JSON_VALUES,
        "timestamp": st.sampled_from(["2026-07-22T10:00:00Z", "bad", 1784714400, None]),
        "toolUseResult": st.fixed_dictionaries(
            {}, optional={"agentId": st.sampled_from(["a1", "a2", "S"]), "status": JSON_VALUES}
        ),
        "message": st.fixed_dictionaries(
            {},
            optional={
                "role": st.sampled_from(["user", "assistant", "developer"]),
                "id": st.sampled_from(["m1", "m2", None]),
                "content": JSON_VALUES
                | st.lists(
                    st.fixed_dictionaries(
                        {"type": st.sampled_from(["text", "thinking", "tool_use", "tool_result", "image"])},
                        optional={
                            "id": st.sampled_from(["t1", "t2"]),
                            "tool_use_id": st.sampled_from(["t1", "t2"]),
                            "text": JSON_VALUES,
                            "name": JSON_VALUES,
                            "is_error": JSON_VALUES,
                        },
                    ),
                    max_size=3,
                ),
            },
        ),
    },
)


@given(st.lists(st.one_of(EVENT, JSON_VALUES), max_size=8), st.lists(JSON_VALUES | EVENT, max_size=4))
def test_any_transcript_lines_and_stream_give_a_clean_bundle_and_never_raise(
    events: list[Any], stream: list[Any]
) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        session(Path(folder), *(json.dumps(e) for e in events))
        run = read_run(folder, stream, "policy")
    assert [
        d.code for d in iter_diagnostics(run.observations.model_dump(mode="json"), "bundle") if d.severity == "error"
    ] == []
    assert list(run.summary)[: len(SUMMARY_FIELDS)] == list(SUMMARY_FIELDS)


def test_outcome_and_run_summary_read_a_stream_file(tmp_path: Path) -> None:
    stream = tmp_path / "out.jsonl"
    stream.write_text(
        '{"type":"system","subtype":"init","session_id":"S","tools":["Read"],"claude_code_version":"2.1.39"}\n'
        "not json\n"
        '{"type":"result","subtype":"error_max_turns","is_error":true,"duration_ms":2500,"num_turns":3,"session_id":"S",'
        '"usage":{"input_tokens":10,"cache_read_input_tokens":200,"cache_creation_input_tokens":30,"output_tokens":40}}\n'
    )
    call = {"type": "tool_use", "id": "t", "name": "Nope", "input": {}}
    refusal = {"type": "tool_result", "tool_use_id": "t", "content": "No such tool", "is_error": True}
    session(
        tmp_path,
        json.dumps(
            {
                "type": "assistant",
                "sessionId": "S",
                "timestamp": 1784714400,
                "message": {"role": "assistant", "id": "m", "content": [call]},
            }
        ),
        json.dumps(
            {
                "type": "user",
                "sessionId": "S",
                "timestamp": 1784714401,
                "message": {"role": "user", "content": [refusal]},
            }
        ),
    )

    assert outcome(stream, exit_code=1).failure_kind == "agent_max_turns"
    assert run_summary(tmp_path, stream) == {
        "result_success": False,
        "result_error": True,
        "result_missing": False,
        "context_overflow": False,
        "duration_s": 2.5,
        "main_turns": 1,
        "subagent_turns": 0,
        "subagent_calls": 0,
        "tool_calls": 1,
        "tool_errors": 1,
        "unknown_tool_calls": 1,
        "compactions": 0,
        # The result's usage totals: cache reads and writes are prompt tokens too.
        "input_tokens": 240,
        "output_tokens": 40,
        "cached_tokens": 200,
        "reasoning_tokens": None,
        "internal_agents": {},
    }
    root = observe(tmp_path, stream=stream, model_ref="policy").observations.model_dump(mode="json")["records"][0]
    assert (root["status"], root["error_type"], root["duration_ms"]) == ("incomplete", "error_max_turns", 2500.0)


def test_a_missing_result_is_a_timeout_or_a_crash_by_what_the_host_saw(tmp_path: Path) -> None:
    session(tmp_path, '{"type":"user","sessionId":"S","message":{"role":"user","content":"hi"}}')
    stream = ['{"type":"system","subtype":"init","session_id":"S"}']

    timed_out = read_run(tmp_path, stream, "policy", timed_out=True, measured_duration_s=60.0)
    crashed = read_run(tmp_path, stream, "policy", exit_code=137)

    assert timed_out.outcome is not None
    assert crashed.outcome is not None
    assert (timed_out.outcome.failure_kind, crashed.outcome.failure_kind) == ("agent_timeout", "agent_crash")
    assert (timed_out.summary["result_missing"], timed_out.summary["duration_s"]) == (True, 60.0)
    root = crashed.observations.model_dump(mode="json")["records"][0]
    assert (root["status"], root["error_type"]) == ("failed", "process_exit_137")


def cli(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gym_contract", *arguments], capture_output=True, text=True, check=False
    )


def test_the_cli_prints_one_valid_document_whose_summary_matches_the_transcript() -> None:
    done = cli("observe", "claude-code", str(EXAMPLE), "--model-ref", "policy")

    assert (done.returncode, done.stderr) == (0, "")
    document = json.loads(done.stdout)
    assert list(document) == ["ng_agent_observations", "ng_agent_outcome", "run_summary"]
    assert list(iter_diagnostics(document["ng_agent_observations"], "bundle")) == []
    assert document["ng_agent_outcome"] is None
    assert document["run_summary"] == {
        "result_success": None,
        "result_error": None,
        "result_missing": None,
        "context_overflow": None,
        "duration_s": None,
        "main_turns": 217,
        "subagent_turns": 3,
        "subagent_calls": 1,
        "tool_calls": 254,
        "tool_errors": 12,
        "unknown_tool_calls": None,
        "compactions": 1,
        "input_tokens": None,
        "output_tokens": None,
        "cached_tokens": None,
        "reasoning_tokens": None,
        "internal_agents": {"acompact-946d2b": "compaction_summariser"},
    }


def test_the_cli_reads_the_stream_and_process_facts(tmp_path: Path) -> None:
    stream = tmp_path / "out.jsonl"
    stream.write_text(
        '{"type":"result","subtype":"success","is_error":false,"duration_ms":1000,"session_id":"ae4a77f8-aedd-4bc1-888f-c94edc91af04"}\n'
    )

    done = cli("observe", "claude-code", str(EXAMPLE), "--stream", str(stream), "--exit-code", "0")

    document = json.loads(done.stdout)
    assert done.returncode == 0
    assert list(iter_diagnostics(document["ng_agent_outcome"], "agent_outcome")) == []
    assert (document["ng_agent_outcome"]["response_status"], document["run_summary"]["result_success"]) == (
        "completed",
        True,
    )


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            ("absent-dir",),
            "gym-contract: cannot read absent-dir: not a directory; claude-code reads: config directory "
            "(see observe --list)\n",
        ),
        (
            (str(EXAMPLE), "--stream", "absent.jsonl"),
            "gym-contract: absent.jsonl: no such file\n",
        ),
    ],
)
def test_the_cli_says_in_one_line_when_an_input_cannot_be_read(arguments: tuple[str, ...], message: str) -> None:
    done = cli("observe", "claude-code", *arguments)

    assert (done.returncode, done.stdout, done.stderr) == (2, "", message)


def test_a_transcript_linked_from_outside_the_projects_folder_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "host"
    outside.mkdir()
    secret = '{"type":"user","sessionId":"S","uuid":"u","message":{"role":"user","content":"host secret"}}\n'
    (outside / "S.jsonl").write_text(secret)
    (outside / "agent-a1.meta.json").write_text('{"agentType": "host secret"}')
    config = tmp_path / "config"
    session(config)  # an empty session of the run's own
    folder = config / "projects" / "p"
    (folder / "linked.jsonl").symlink_to(outside / "S.jsonl")
    (folder / "S" / "subagents").mkdir(parents=True)
    (folder / "S" / "subagents" / "agent-a1.meta.json").symlink_to(outside / "agent-a1.meta.json")
    # Inside the folder, a link is followed as before; a linked projects folder is the run's own.
    (folder / "inside.jsonl").symlink_to(folder / "S.jsonl")
    linked_config = tmp_path / "linked-config"
    linked_config.mkdir()
    (linked_config / "projects").symlink_to(config / "projects", target_is_directory=True)

    for root in (config, linked_config):
        bundle = observe(root, model_ref="policy").observations
        assert "host secret" not in bundle.model_dump_json()
        assert [(g.code, g.detail) for g in bundle.gaps if g.code == "transcript_unreadable"] == [
            ("transcript_unreadable", "p/linked.jsonl"),
            ("transcript_unreadable", "p/S/subagents/agent-a1.meta.json"),
        ]
