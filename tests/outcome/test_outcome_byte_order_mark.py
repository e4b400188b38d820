"""The classifiers, and `gym-contract outcome` and `decide` on files, skip a byte-order mark before the first line."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gym_contract.outcome import classify_claude_code, classify_codex, classify_pi
from tests.support import REPO, run_in_process

EXAMPLES = REPO / "examples"
BOM = b"\xef\xbb\xbf"
ARTIFACTS: list[tuple[Callable[..., Any], Path]] = [
    (classify_claude_code, EXAMPLES / "claude-code" / "spotter-v2.1.39.stream.jsonl"),
    (classify_codex, next((EXAMPLES / "codex" / "localpush-codex-0.104.0").glob("rollout-*.jsonl"))),
    (classify_codex, EXAMPLES / "codex" / "exec-json" / "exec-run.jsonl"),
    (classify_pi, EXAMPLES / "pi" / "pi-mono-2025-11" / "before-compaction.jsonl"),
]


@pytest.mark.parametrize(("classify", "artifact"), ARTIFACTS, ids=[path.name for _, path in ARTIFACTS])
@pytest.mark.parametrize("as_text", [False, True], ids=["bytes", "str"])
def test_a_byte_order_mark_before_the_first_line_changes_nothing(
    classify: Callable[..., Any], artifact: Path, as_text: bool
) -> None:
    lines: list[Any] = artifact.read_bytes().splitlines()
    marked = [BOM + lines[0], *lines[1:]]
    if as_text:
        lines, marked = [line.decode() for line in lines], [line.decode() for line in marked]

    assert classify(marked, exit_code=0) == classify(lines, exit_code=0)


OPENCODE_EXPORT = EXAMPLES / "reference" / "opencode-1.17.11-export.json"
OPENCODE_EVENTS = EXAMPLES / "opencode" / "run-error.jsonl"
CLI_ARTIFACTS: list[tuple[str, Path]] = [
    ("opencode", OPENCODE_EXPORT),
    ("claude-code", EXAMPLES / "claude-code" / "spotter-v2.1.39.stream.jsonl"),
    ("codex", next((EXAMPLES / "codex" / "localpush-codex-0.104.0").glob("rollout-*.jsonl"))),
    ("codex", EXAMPLES / "codex" / "exec-json" / "exec-run.jsonl"),
    ("pi", EXAMPLES / "pi" / "pi-mono-2025-11" / "before-compaction.jsonl"),
]


def outcome_of(*args: str) -> str:
    status, out, err = run_in_process("outcome", *args)
    assert (status, err) == (0, "")
    return out


def saved(tmp_path: Path, name: str, content: bytes) -> tuple[str, str]:
    """The content saved as it is and with a byte-order mark before it."""
    plain, marked = tmp_path / f"plain-{name}", tmp_path / f"marked-{name}"
    plain.write_bytes(content)
    marked.write_bytes(BOM + content)
    return str(plain), str(marked)


@pytest.mark.parametrize(("harness", "artifact"), CLI_ARTIFACTS, ids=[f"{h}-{p.name}" for h, p in CLI_ARTIFACTS])
def test_outcome_reads_an_artifact_saved_with_a_byte_order_mark_as_the_artifact_without_it(
    harness: str, artifact: Path, tmp_path: Path
) -> None:
    plain, marked = saved(tmp_path, artifact.name, artifact.read_bytes())

    assert outcome_of(harness, marked) == outcome_of(harness, plain)


@pytest.mark.parametrize(
    ("harness", "artifact"), CLI_ARTIFACTS[1:], ids=[f"{h}-{p.name}" for h, p in CLI_ARTIFACTS[1:]]
)
def test_a_one_line_artifact_with_a_byte_order_mark_is_still_the_harnesss_own(
    harness: str, artifact: Path, tmp_path: Path
) -> None:
    # The only line is the one that tells the file is the harness's: the mark must not hide it.
    plain, marked = saved(tmp_path, artifact.name, artifact.read_bytes().splitlines(keepends=True)[0])

    assert outcome_of(harness, marked) == outcome_of(harness, plain)


def test_outcome_opencode_events_and_decide_read_files_with_a_byte_order_mark(tmp_path: Path) -> None:
    export, marked_export = saved(tmp_path, "export.json", OPENCODE_EXPORT.read_bytes())
    events, marked_events = saved(tmp_path, "events.jsonl", OPENCODE_EVENTS.read_bytes().splitlines(keepends=True)[0])
    outcome = outcome_of("opencode", export, "--events", events)
    plain, marked = saved(tmp_path, "outcome.json", outcome.encode())
    policy, marked_policy = saved(tmp_path, "policy.json", b'{"max_retries": 1}')

    decided = run_in_process("decide", plain, "--policy", policy)

    assert outcome_of("opencode", marked_export, "--events", marked_events) == outcome
    assert decided[0] == 0
    assert run_in_process("decide", marked, "--policy", marked_policy) == decided
