"""Read Claude Code session transcripts and stream-json output line by line; damage becomes gaps."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import orjson

from gym_contract.models import ObservationGap
from gym_contract.producers._kit import (
    MAX_LINE_BYTES,
    UnrecognisedArtifactError,
    gap,
    numbered_lines,
    resolved,
    unreadable,
    within,
    without_bom,
)
from gym_contract.reading._json_parsing import loads

CONFIG_FILE: Final = ".claude.json"
"""The file Claude Code keeps its state in, inside `CLAUDE_CONFIG_DIR` when that is set."""


@dataclass(frozen=True)
class TranscriptEvent:
    """One parsed transcript line with its place: file (relative to `projects/`) and 1-based line."""

    file: str
    line: int
    event: dict[str, Any]


@dataclass
class TranscriptRead:
    """Every usable event of a config directory, in file then line order, and the gaps reading left."""

    events: list[TranscriptEvent] = field(default_factory=list)
    gaps: list[ObservationGap] = field(default_factory=list)
    # agent id → its `agent-<id>.meta.json` sidecar (Claude Code writes `agentType`, and in newer
    # versions `toolUseId`, the call that spawned the subagent)
    sidecars: dict[str, dict[str, Any]] = field(default_factory=dict)


def read_transcripts(config_dir: str | os.PathLike[str], max_line_bytes: int = MAX_LINE_BYTES) -> TranscriptRead:
    """The events of `<config>/projects/**/*.jsonl`, sorted by path; lines without a string `sessionId` skipped.

    A config directory Claude Code wrote (its `.claude.json` is there) without `projects/` kept no
    transcript, as a run without session persistence leaves it: the gap `transcript_dir_missing`.
    Raises `UnrecognisedArtifactError` for a folder holding neither (no evidence of Claude Code at
    all), one whose `projects/` cannot be listed, and one whose every transcript fails to open: gaps
    alone would pass such a folder off as a run that left nothing.
    """
    read = TranscriptRead()
    config = Path(config_dir)
    projects = config / "projects"
    try:
        listed = sorted(_jsonl_files(projects), key=lambda path: path.relative_to(projects).as_posix())
    except OSError as error:
        if Path(error.filename or projects) != projects:  # a folder under projects/: what it holds is a gap
            read.gaps.append(gap("transcript_dir_unreadable"))
            return read
        if not isinstance(error, (FileNotFoundError, NotADirectoryError)):
            raise unreadable(config_dir, error, "projects") from None
        if not (config / CONFIG_FILE).is_file():
            raise UnrecognisedArtifactError(config_dir, f"neither projects/ nor {CONFIG_FILE} in the folder") from None
        read.gaps.append(gap("transcript_dir_missing", detail="projects"))
        return read
    inside = resolved(projects)
    failures: list[tuple[str, OSError]] = []
    opened = 0
    for path in listed:
        name = path.relative_to(projects).as_posix()
        if not within(path, inside):
            read.gaps.append(gap("transcript_unreadable", detail=name))
            continue
        try:
            for number, raw in numbered_lines(path, max_line_bytes):
                _take(read, name, number, raw)
            opened += 1
        except OSError as error:
            read.gaps.append(gap("transcript_unreadable", detail=name))
            failures.append((name, error))
    if failures and not opened:
        first, failure = failures[0]
        raise unreadable(config_dir, failure, f"projects/{first}")
    for path in sorted(_sidecar_files(projects), key=lambda path: path.relative_to(projects).as_posix()):
        _take_sidecar(read, projects, path)
    return read


def _sidecar_files(root: Path) -> Iterator[Path]:
    try:
        yield from root.glob("**/subagents/**/agent-*.meta.json")
    except OSError:
        return  # the transcripts' walk has already reported an unreadable folder


def _take_sidecar(read: TranscriptRead, projects: Path, path: Path) -> None:
    name = path.relative_to(projects).as_posix()
    if not within(path, resolved(projects)):
        read.gaps.append(gap("transcript_unreadable", detail=name))
        return
    try:
        sidecar = loads(without_bom(path.read_bytes()[: MAX_LINE_BYTES + 1]))
    except OSError:
        read.gaps.append(gap("transcript_unreadable", detail=name))
        return
    except orjson.JSONDecodeError:
        read.gaps.append(gap("malformed_transcript_line", detail=f"{name}:1"))
        return
    if not isinstance(sidecar, dict):
        read.gaps.append(gap("invalid_transcript_record", detail=f"{name}:1"))
        return
    read.sidecars[path.name.removeprefix("agent-").removesuffix(".meta.json")] = sidecar


def _jsonl_files(root: Path) -> Iterator[Path]:
    def fail(error: OSError) -> None:
        raise error

    for folder, _dirs, names in os.walk(root, onerror=fail):
        for name in names:
            if name.endswith(".jsonl"):
                yield Path(folder) / name


def _take(read: TranscriptRead, name: str, number: int, raw: bytes | None) -> None:
    where = f"{name}:{number}"
    if raw is not None and not raw.strip():
        return
    try:
        event = loads(raw) if raw is not None else None
    except orjson.JSONDecodeError:
        event = None
    if raw is None or event is None:
        read.gaps.append(gap("malformed_transcript_line", detail=where))
        return
    if not isinstance(event, dict):
        read.gaps.append(gap("invalid_transcript_record", detail=where))
        return
    if not isinstance(event.get("sessionId"), str):
        return  # file-history snapshots, queue operations and similar bookkeeping lines
    read.events.append(TranscriptEvent(name, number, event))


def stream_events(lines: Iterable[Any]) -> list[dict[str, Any]]:
    """The JSON objects of a stream-json stdout, given as raw lines or parsed events; other lines skipped."""
    events: list[dict[str, Any]] = []
    for number, line in enumerate(lines):
        if isinstance(line, dict):
            events.append(line)
            continue
        if not isinstance(line, (str, bytes)):
            continue
        line = without_bom(line) if number == 0 else line  # the stdout file's first line may carry one
        if not line.strip():
            continue
        try:
            parsed = loads(line)
        except ValueError:  # not JSON, or (given as str) text that is not even UTF-8
            continue  # Claude Code prints the odd non-JSON line; the reference skips them too
        if isinstance(parsed, dict):
            events.append(parsed)
    return events
