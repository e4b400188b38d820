"""Real artifacts of each registered producer, cut small enough to observe often: the producer laws start from them.

A producer joins the laws by adding its seed here; the suite fails for a registered producer
without one.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from tests.producers.openclaw_stores import home_files, pinchbench_files
from tests.producers.opencode_layouts import database_bytes, exports_of, sandbox_agent_export, storage_files
from tests.support import REPO

CLAUDE_CODE = REPO / "examples" / "claude-code"
PI = REPO / "examples" / "pi" / "pi-mono-2025-11"


@dataclass(frozen=True)
class Seed:
    """One run's artifacts as files under an input root, what `observe` is given, and its other options.

    ``path`` is the argument `observe` takes, relative to the root; ``options`` names a keyword
    argument whose value is a path under the root (Claude Code's ``stream``).
    """

    files: dict[str, bytes]
    path: str
    options: dict[str, str] = field(default_factory=dict)


def _cut(path: Path, keep: int) -> bytes:
    """A transcript's first lines, then its last ones: the start of the run, and how it ended."""
    lines = path.read_bytes().splitlines(keepends=True)
    return b"".join(lines if len(lines) <= 2 * keep else lines[:keep] + lines[-keep:])


@cache
def claude_code() -> Seed:
    """The shipped Claude Code run: its main session cut short, both subagents (one the compaction summariser)
    and the stream."""
    config = CLAUDE_CODE / "spotter-v2.1.39"
    files = {
        f"config/{path.relative_to(config).as_posix()}": _cut(path, 20) for path in sorted(config.rglob("*.jsonl"))
    }
    # The session keeps the subagent's spawn and result and the lines that record the compaction.
    session = next(name for name in files if name.count("/") == 3)
    lines = (config / session.removeprefix("config/")).read_bytes().splitlines(keepends=True)
    spawn = next(index for index, line in enumerate(lines) if b'"name":"Task"' in line)
    compaction = [line for line in lines if b'"compact_boundary"' in line or b'"isCompactSummary"' in line]
    files[session] = b"".join(lines[:20] + lines[spawn : spawn + 40] + compaction + lines[-20:])
    files["stream.jsonl"] = (CLAUDE_CODE / "spotter-v2.1.39.stream.jsonl").read_bytes()
    assert all(json.loads(line) for content in files.values() for line in content.splitlines())
    return Seed(files, "config", {"stream": "stream.jsonl"})


CODEX = REPO / "examples" / "codex"
CODEX_CASES = REPO / "tests" / "conformance" / "producers" / "codex"


@cache
def codex() -> Seed:
    """A `CODEX_HOME`-like directory: the shipped real rollout file cut short, the turn of the real one that
    compacts, and the subagent conformance case's parent and child (no real rollout of a subagent is shipped)."""
    real = next((CODEX / "codemie-codex-tui-0.125.0").glob("rollout-*.jsonl"))
    compacting = next((CODEX / "localpush-codex-0.104.0").glob("rollout-*.jsonl"))
    files = {
        f"sessions/2026/05/11/{real.name}": _cut(real, 25),
        f"sessions/2026/02/23/{compacting.name}": _cut(compacting, 30),
    }
    # The cut keeps the compaction: its lines sit in the middle of the turn.
    lines = compacting.read_bytes().splitlines(keepends=True)
    compaction = [line for line in lines if b'"type":"compacted"' in line or b'"context_compacted"' in line]
    files[f"sessions/2026/02/23/{compacting.name}"] = b"".join(lines[:30] + compaction + lines[-30:])
    for path in sorted((CODEX_CASES / "subagent" / "sessions").rglob("*.jsonl")):
        files[f"sessions/{path.relative_to(CODEX_CASES / 'subagent' / 'sessions').as_posix()}"] = path.read_bytes()
    assert all(json.loads(line) for content in files.values() for line in content.splitlines())
    return Seed(files, ".")


OPENCODE_CASES = REPO / "tests" / "conformance" / "producers" / "opencode"


def _opencode_sessions() -> list[dict[str, Any]]:
    """A real OpenCode 1.1.49 session, beside the subagent and compaction cases' sessions (written in its shapes)."""
    # The cases share ids; the compaction's session gets ids of its own, as a later run would.
    text = (OPENCODE_CASES / "compaction" / "export.json").read_text()
    for old, new in (("ses_0f3a5e1c2ffe7Qb1Kx9Zt2Lm4N", "ses_0f3a5e1c2ffe7Qb1Kx9Zt2Lm4C"), ("_f0c5a1e", "_f0c5b1e")):
        text = text.replace(old, new)
    compaction = json.loads(text)
    return [sandbox_agent_export(), *exports_of(OPENCODE_CASES / "subagent" / "storage"), compaction]


@cache
def opencode() -> Seed:
    """OpenCode's per-file storage/ in its data folder: a real session, a subagent's two sessions and a compaction."""
    return Seed(storage_files(_opencode_sessions(), "data/storage"), "data")


@cache
def opencode_database() -> Seed:
    """The same sessions in an opencode.db, as OpenCode 1.2 and later store them, in its data folder."""
    return Seed({"data/opencode.db": database_bytes(_opencode_sessions())}, "data")


@cache
def opencode_export() -> Seed:
    """The real session as its `opencode export` document."""
    return Seed({"export.json": json.dumps(sandbox_agent_export(), indent=2).encode()}, "export.json")


@cache
def pi() -> Seed:
    """The shipped Pi session with compactions: its start, each compaction with the lines around it, and its end."""
    lines = (PI / "before-compaction.jsonl").read_bytes().splitlines(keepends=True)
    compactions = [index for index, line in enumerate(lines) if line.startswith(b'{"type":"compaction"')]
    kept = sorted(
        {*range(30), *(i for at in compactions for i in range(at - 4, at + 6)), *range(len(lines) - 20, len(lines))}
    )
    assert compactions
    assert all(json.loads(lines[index]) for index in kept)
    return Seed({"session.jsonl": b"".join(lines[index] for index in kept)}, "session.jsonl")


@cache
def openclaw() -> Seed:
    """An OpenClaw home built from the documented layout (no licensed real store is known): two agents' stores, a
    root with parallel tools and a compaction, a subagent whose transcript branches, and its own subagent."""
    return Seed({f"home/{name}": content for name, content in home_files().items()}, "home")


@cache
def openclaw_pinchbench() -> Seed:
    """The same stores as PinchBench copies them out of its sandbox, beside the root's transcript."""
    return Seed({f"out/{name}": content for name, content in pinchbench_files().items()}, "out")


SEEDS: dict[str, Callable[[], Seed]] = {
    "claude-code": claude_code,
    "codex": codex,
    "openclaw": openclaw,
    "opencode": opencode,
    "pi": pi,
}
"""Harness name (as the registry names it) → its seed."""

OPENCODE_FORMS: dict[str, Callable[[], Seed]] = {
    "storage": opencode,
    "sqlite": opencode_database,
    "export": opencode_export,
}
"""OpenCode's seed in each artifact form it reads: the laws hold for every one."""

OPENCLAW_FORMS: dict[str, Callable[[], Seed]] = {"home": openclaw, "pinchbench": openclaw_pinchbench}
"""OpenClaw's seed in each folder form it reads: the laws hold for both."""
