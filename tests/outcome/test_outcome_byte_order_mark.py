"""The classifiers read a first line that carries a UTF-8 byte-order mark as the line without it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gym_contract.outcome import classify_claude_code, classify_codex, classify_pi
from tests.support import REPO

EXAMPLES = REPO / "examples"
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
    marked = [b"\xef\xbb\xbf" + lines[0], *lines[1:]]
    if as_text:
        lines, marked = [line.decode() for line in lines], [line.decode() for line in marked]

    assert classify(marked, exit_code=0) == classify(lines, exit_code=0)
