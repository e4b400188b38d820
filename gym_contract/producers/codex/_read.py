"""Read Codex rollout files (one, or a directory of them) or an `exec --json` stdout by line; damage becomes gaps."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

import orjson

from gym_contract._values import text
from gym_contract.models import ObservationGap
from gym_contract.producers._kit import (
    UnrecognisedArtifactError,
    artifact_name,
    gap,
    is_stdin,
    numbered_lines,
    resolved,
    unreadable,
    within,
)
from gym_contract.reading._json_parsing import loads

Form = Literal["rollout", "exec"]

ROLLOUT_LINES: Final = frozenset({"session_meta", "turn_context", "response_item", "event_msg", "compacted"})
EXEC_EVENTS: Final = frozenset(
    {
        "thread.started",
        "turn.started",
        "turn.completed",
        "turn.failed",
        "item.started",
        "item.updated",
        "item.completed",
        "item.plan.delta",
        "request_user_input",
        "error",
    }
)
ROLLOUT_FILE_PREFIX: Final = "rollout-"


@dataclass(frozen=True)
class Line:
    """One parsed line with its place: the file (as the input names it) and its 1-based number."""

    file: str
    number: int
    event: dict[str, Any]

    @property
    def where(self) -> str:
        return f"{self.file}:{self.number}"


@dataclass
class Artifact:
    """One file read: its lines, in order, and the form they were told to be."""

    file: str
    form: Form
    lines: list[Line] = field(default_factory=list)


@dataclass
class Read:
    """Every Codex artifact found under the input, in path order, and the gaps reading left."""

    artifacts: list[Artifact] = field(default_factory=list)
    gaps: list[ObservationGap] = field(default_factory=list)
    unreadable: list[tuple[str, OSError]] = field(default_factory=list)
    """Each file that could not be opened or read, by its name, and why."""


def form_of(event: dict[str, Any]) -> Form | None:
    """The artifact form an event belongs to: a rollout line carries a `payload`, an exec event does not."""
    kind = text(event.get("type"))
    if kind in ROLLOUT_LINES and "payload" in event:
        return "rollout"
    if kind in EXEC_EVENTS:
        return "exec"
    return None


def tells_codex(event: dict[str, Any]) -> bool:
    """Whether a line shows its file is Codex's: a rollout line with its payload object, or an exec event but `error`.

    Other harnesses print `{"type": "error", …}` lines too (OpenCode's `run --format json` does), so
    an `error` event is read only in a file that some other line shows to be Codex's.
    """
    form = form_of(event)
    if form == "rollout":
        return isinstance(event["payload"], dict)
    return form == "exec" and event.get("type") != "error"


def read(path: str | os.PathLike[str], max_line_bytes: int) -> Read:
    """The Codex artifacts at ``path``: one rollout file or `exec --json` stdout, or a directory of rollout files.

    One file may be stdin ("-"), and gzip or zstd compressed, as `validate` reads it. A directory (a
    `CODEX_HOME`, its `sessions/`, or any folder) is searched for `rollout-*.jsonl` files at any depth,
    sorted by their path under it; a file linked from outside the directory is not read. Each file's
    form is told from its content. Raises `UnrecognisedArtifactError` for a path that
    is none of these (nothing there, no regular file, a folder without a rollout file, a file without a
    Codex line) or that cannot be read: a file, a folder, or a folder whose every rollout file fails to open.
    """
    found = Read()
    root = Path(path)
    if is_stdin(path):
        return _read_one(found, path, max_line_bytes)
    if not os.path.lexists(root):
        raise UnrecognisedArtifactError(root, "no such file or directory")
    if root.is_dir():
        _read_folder(found, root, max_line_bytes)
        return found
    if not root.is_file():  # a dangling link, a pipe or a device: no file to read, or one that would never end
        raise UnrecognisedArtifactError(root, "not a regular file")
    return _read_one(found, root, max_line_bytes)


def _read_one(found: Read, path: str | os.PathLike[str], max_line_bytes: int) -> Read:
    """The one file given, stdin included: refused when it holds no Codex line or cannot be read to its end."""
    why = _read_file(found, path, artifact_name(path), max_line_bytes)
    if why is not None:
        raise UnrecognisedArtifactError(path, why)
    if found.unreadable:
        raise unreadable(path, found.unreadable[0][1])
    return found


def _read_folder(found: Read, root: Path, max_line_bytes: int) -> None:
    """Every rollout file under ``root``; refused when the folder, or every rollout file in it, cannot be read."""
    try:
        files = sorted(_rollout_files(root), key=lambda file: file.relative_to(root).as_posix())
    except OSError as error:
        if Path(error.filename or root) == root:  # the folder itself cannot be listed: nothing of it can be read
            raise unreadable(root, error) from None
        found.gaps.append(gap("transcript_dir_unreadable"))
        return
    if not files:
        raise UnrecognisedArtifactError(root, f"no {ROLLOUT_FILE_PREFIX}*.jsonl file in the folder")
    inside = resolved(root)
    for file in files:
        name = file.relative_to(root).as_posix()
        if within(file, inside):
            _read_file(found, file, name, max_line_bytes)
        else:
            found.gaps.append(gap("transcript_unreadable", detail=name))
    if found.unreadable and not found.artifacts:  # gaps alone would pass the run off as one that left nothing
        first, failure = found.unreadable[0]
        raise unreadable(root, failure, first)


def _rollout_files(root: Path) -> Iterator[Path]:
    def fail(error: OSError) -> None:
        raise error

    for folder, _dirs, names in os.walk(root, onerror=fail):
        for name in names:
            if name.startswith(ROLLOUT_FILE_PREFIX) and name.endswith(".jsonl"):
                yield Path(folder) / name


def _read_file(found: Read, path: str | os.PathLike[str], name: str, max_line_bytes: int) -> str | None:
    """Read one file into ``found``; when it was read and holds no Codex line, what it holds instead."""
    lines: list[Line] = []
    try:
        for number, raw in numbered_lines(path, max_line_bytes):
            event = _parse(found, name, number, raw)
            if event is not None:
                lines.append(Line(name, number, event))
    except OSError as error:  # what the file is cannot be told: the gap says it went unread
        found.gaps.append(gap("transcript_unreadable", detail=name))
        found.unreadable.append((name, error))
        return None
    form = next((form_of(line.event) for line in lines if tells_codex(line.event)), None)
    if form is None:
        if lines:  # JSON objects, none of them a Codex line: nothing here is read as evidence
            found.gaps.append(gap("invalid_transcript_record", detail=f"{name}:{lines[0].number}"))
        if not lines and not found.gaps:  # no line at all, not even a damaged one
            return "the file is empty"
        errors = any(line.event.get("type") == "error" for line in lines)
        return "no line is a Codex rollout line or `exec --json` event" + (
            " but `error`, which other harnesses print too" if errors else ""
        )
    artifact = Artifact(name, form)
    for line in lines:
        if form_of(line.event) == form:
            artifact.lines.append(line)
        else:
            found.gaps.append(gap("invalid_transcript_record", detail=line.where))
    found.artifacts.append(artifact)
    return None


def _parse(found: Read, name: str, number: int, raw: bytes | None) -> dict[str, Any] | None:
    if raw is not None and not raw.strip():
        return None
    try:
        if raw is None:  # a line over the length limit, skipped to its end
            raise orjson.JSONDecodeError("too long", "", 0)
        event = loads(raw)
    except ValueError:  # not JSON (orjson's JSONDecodeError), nested past the readers' limit included
        found.gaps.append(gap("malformed_transcript_line", detail=f"{name}:{number}"))
        return None
    if not isinstance(event, dict):
        found.gaps.append(gap("invalid_transcript_record", detail=f"{name}:{number}"))
        return None
    return event
