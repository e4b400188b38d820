"""A harness file saved with a UTF-8 byte-order mark is read as the same file without one, as `validate` reads it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support import REPO, run_in_process

EXAMPLES = REPO / "examples"
BOM = b"\xef\xbb\xbf"
CLAUDE_CONFIG = EXAMPLES / "claude-code" / "spotter-v2.1.39"
CLAUDE_STREAM = EXAMPLES / "claude-code" / "spotter-v2.1.39.stream.jsonl"

FILES = [
    ("codex", next((EXAMPLES / "codex" / "localpush-codex-0.104.0").glob("rollout-*.jsonl"))),
    ("codex", EXAMPLES / "codex" / "exec-json" / "exec-run.jsonl"),
    ("pi", EXAMPLES / "pi" / "pi-mono-2025-11" / "before-compaction.jsonl"),
    ("openclaw", EXAMPLES / "openclaw" / "pinchbench" / "0001_transcripts" / "task_03_summary.jsonl"),
    ("opencode", EXAMPLES / "reference" / "opencode-1.17.11-export.json"),
]


def with_mark(path: Path) -> None:
    path.write_bytes(BOM + path.read_bytes())


def observed(*args: str) -> str:
    status, out, err = run_in_process("observe", *args)
    assert (status, err) == (0, "")
    return out


@pytest.mark.parametrize(("harness", "source"), FILES, ids=[f"{h}-{p.name}" for h, p in FILES])
def test_a_file_with_a_byte_order_mark_reads_as_the_file_without_it(harness: str, source: Path, tmp_path: Path) -> None:
    plain, marked = tmp_path / "plain" / source.name, tmp_path / "marked" / source.name
    for copy in (plain, marked):
        copy.parent.mkdir()
        shutil.copy(source, copy)
    with_mark(marked)

    assert observed(harness, str(marked)) == observed(harness, str(plain))


def test_claude_code_transcripts_and_stream_with_a_byte_order_mark_read_as_without(tmp_path: Path) -> None:
    plain, marked = tmp_path / "plain", tmp_path / "marked"
    for copy in (plain, marked):
        shutil.copytree(CLAUDE_CONFIG, copy / "config")
        shutil.copy(CLAUDE_STREAM, copy / "stream.jsonl")
    for transcript in (marked / "config" / "projects").rglob("*.jsonl"):
        with_mark(transcript)
    with_mark(marked / "stream.jsonl")

    documents = [
        observed("claude-code", str(copy / "config"), "--stream", str(copy / "stream.jsonl"), "--exit-code", "0")
        for copy in (plain, marked)
    ]

    assert documents[0] == documents[1]
    assert '"harness_version": "2.1.39"' in documents[1]
