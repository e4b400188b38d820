"""`outcome` and `observe` read only their harness's artifacts: anything else is refused, never classified."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gym_contract import cli
from gym_contract.reading._json_parsing import loads
from tests.support import REPO

CLAUDE_STREAM = REPO / "examples" / "claude-code" / "spotter-v2.1.39.stream.jsonl"
CLAUDE_CONFIG = REPO / "examples" / "claude-code" / "spotter-v2.1.39"
OPENCODE_EVENTS = REPO / "examples" / "opencode" / "run-error.jsonl"
OPENCODE_EXPORT = REPO / "examples" / "reference" / "opencode-1.17.11-export.json"
ROLLOUTS = REPO / "examples" / "rollouts.jsonl"
# What Claude Code's stream-json output is made of, as docs/concepts/outcomes.md says.
STREAM_EVENT_TYPES = {"system", "assistant", "user", "result", "stream_event"}


def is_claude_code_stream(data: bytes) -> bool:
    """Whether `outcome claude-code` and `observe claude-code --stream` take a file of these bytes: one
    that holds nothing, or a line that is a stream-json event."""
    lines = [line for line in data.splitlines() if line.strip()]
    for line in lines:
        try:
            event = loads(line)  # the package's reader: any number, nesting refused past its limit
        except ValueError:
            continue
        if isinstance(event, dict) and isinstance(event.get("type"), str) and event["type"] in STREAM_EVENT_TYPES:
            return True
    return not lines


def refused(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert cli.main(list(args)) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.splitlines()
    return line


@pytest.fixture
def csv(tmp_path: Path) -> str:
    path = tmp_path / "data.csv"
    path.write_text("task,reward\n7,1.0\n", encoding="utf-8")
    return str(path)


def test_outcome_claude_code_refuses_a_csv_rather_than_call_it_a_crash(csv: str):
    result = subprocess.run(
        [sys.executable, "-m", "gym_contract", "outcome", "claude-code", csv],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (result.returncode, result.stdout) == (2, "")
    assert "agent_crash" not in result.stdout
    assert result.stderr == (
        f"gym-contract: {csv}: not Claude Code stream-json output: none of its 2 lines is an event of it "
        "(a JSON object whose type is system, assistant, user, result or stream_event)\n"
    )


@pytest.mark.parametrize("other", [OPENCODE_EVENTS, ROLLOUTS])
def test_outcome_claude_code_refuses_another_harnesss_events_and_rollout_records(capsys, other: Path):
    assert "not Claude Code stream-json output" in refused(capsys, "outcome", "claude-code", str(other))


def test_an_empty_stream_is_a_run_that_printed_nothing_and_is_classified(tmp_path: Path, capsys):
    empty = tmp_path / "stream.jsonl"
    empty.write_text("\n", encoding="utf-8")
    assert cli.main(["outcome", "claude-code", str(empty), "--exit-code", "137"]) == 0
    assert json.loads(capsys.readouterr().out)["failure_kind"] == "agent_crash"


def test_a_stream_with_damaged_lines_among_its_events_is_still_read(tmp_path: Path, capsys):
    stream = tmp_path / "stream.jsonl"
    stream.write_bytes(b"Loading...\n" + CLAUDE_STREAM.read_bytes())
    assert cli.main(["outcome", "claude-code", str(stream)]) == 0
    assert json.loads(capsys.readouterr().out)["response_status"] == "completed"


def test_outcome_opencode_refuses_an_export_and_events_that_are_not_opencodes(tmp_path: Path, capsys, csv: str):
    record = tmp_path / "rollout.json"
    record.write_text(ROLLOUTS.read_text(encoding="utf-8").splitlines()[0], encoding="utf-8")
    said = refused(capsys, "outcome", "opencode", str(record))
    assert said == (
        f"gym-contract: {record}: not an `opencode export` document: it has neither an info object nor a messages list"
    )
    said = refused(capsys, "outcome", "opencode", str(OPENCODE_EXPORT), "--events", csv)
    assert said.startswith(f"gym-contract: {csv}: not `opencode run --format json` output: none of its 2 lines")
    said = refused(capsys, "outcome", "opencode", str(OPENCODE_EXPORT), "--events", str(CLAUDE_STREAM))
    assert "not `opencode run --format json` output" in said
    assert cli.main(["outcome", "opencode", str(OPENCODE_EXPORT), "--events", str(OPENCODE_EVENTS)]) == 0


def test_observe_claude_code_refuses_a_stream_that_is_not_claude_codes(capsys, csv: str):
    said = refused(capsys, "observe", "claude-code", str(CLAUDE_CONFIG), "--stream", csv)
    assert said.startswith(f"gym-contract: {csv}: not Claude Code stream-json output")
    assert cli.main(["observe", "claude-code", str(CLAUDE_CONFIG), "--stream", str(CLAUDE_STREAM)]) == 0


@pytest.mark.parametrize("kind", ["[]", "{}", "null", "7"])
def test_an_event_whose_type_is_no_string_is_no_event_and_no_traceback(tmp_path: Path, capsys, kind: str):
    stream = tmp_path / "stream.jsonl"
    stream.write_text(f'{{"type": {kind}, "subtype": "init"}}\n', encoding="utf-8")
    assert "not Claude Code stream-json output" in refused(capsys, "outcome", "claude-code", str(stream))


def test_outcome_codex_refuses_opencodes_error_lines_as_observe_codex_does(tmp_path: Path, capsys):
    # OpenCode's `run --format json` prints `{"type": "error", …}` lines, as Codex's exec stream does.
    errors = tmp_path / "errors.jsonl"
    errors.write_text(OPENCODE_EVENTS.read_text(encoding="utf-8").splitlines()[-1] + "\n", encoding="utf-8")
    for path in (errors, OPENCODE_EVENTS):
        said = refused(capsys, "outcome", "codex", str(path))
        assert said.startswith(f"gym-contract: {path}: not Codex rollout file or `codex exec --json` output: ")
        assert said.endswith("other harnesses print error lines too)")
        assert cli.main(["observe", "codex", str(path)]) == 2
        capsys.readouterr()


def test_outcome_codex_reads_an_error_event_of_a_stream_another_line_shows_to_be_codexs(tmp_path: Path, capsys):
    stream = tmp_path / "exec.jsonl"
    events = [
        {"type": "thread.started", "thread_id": "t"},
        {"type": "turn.started"},
        {"type": "error", "message": "unexpected status 503 Service Unavailable"},
    ]
    stream.write_text("".join(json.dumps(event) + "\n" for event in events), encoding="utf-8")
    assert cli.main(["outcome", "codex", str(stream)]) == 0
    assert json.loads(capsys.readouterr().out)["failure_kind"] == "model_server_error"
