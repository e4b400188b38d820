"""OpenClaw's session stores: where a folder holds them, and the session tree they state."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import orjson

from gym_contract._values import nonempty, text
from gym_contract.models import ObservationGap
from gym_contract.producers._kit import MAX_LINE_BYTES, gap, is_stdin, readable_name, resolved, within, without_bom
from gym_contract.reading._json_parsing import loads

Form = Literal["home", "state", "agents", "pinchbench", "transcript", "none"]


@dataclass
class Session:
    """One session the stores list: its key (the invocation's id), its parent's key, and its transcript file."""

    key: str
    parent: str | None
    session_id: str | None
    transcript: Path | None
    """None when no file of the session is in the store's folder, or the one there is refused."""


@dataclass
class Layout:
    """What a folder holds: the form it was read as, the agents folder, and the PinchBench transcript if any."""

    form: Form
    agents: Path | None = None
    transcript: Path | None = None
    """The run's own transcript: PinchBench's `0001_transcripts/<task>.jsonl`, or the file given."""
    gaps: list[ObservationGap] = field(default_factory=list)


def layout(path: Path) -> Layout:
    """The form of ``path``: a transcript file (stdin too), a PinchBench output folder, an OpenClaw home, state or
    agents folder."""
    if is_stdin(path) or path.is_file():
        return Layout("transcript", transcript=path)
    if not path.is_dir():
        return Layout("none")
    if is_pinchbench(path):
        return pinchbench_layout(path)
    for form, agents in (("home", path / ".openclaw" / "agents"), ("state", path / "agents")):
        if agents.is_dir():
            return Layout(form, agents=agents)  # type: ignore[arg-type]
    return Layout("agents", agents=path)


def is_pinchbench(path: Path) -> bool:
    """Whether a folder is a PinchBench output folder: it holds `0001_transcripts/` or `openclaw_sessions/`."""
    return (path / "0001_transcripts").is_dir() or (path / "openclaw_sessions").is_dir()


def holds_sessions(agents: Path) -> bool:
    """Whether an agents folder holds an `<id>/sessions/` folder, as OpenClaw writes one per agent.

    A folder that cannot be listed may hold one: what it holds is then reported by the gaps of its read.
    """
    try:
        return any((folder / "sessions").is_dir() for folder in agents.iterdir())
    except OSError:
        return agents.exists()


def pinchbench_layout(path: Path) -> Layout:
    """A PinchBench output folder: the run's transcript in `0001_transcripts/`, the stores in `openclaw_sessions/`."""
    found = Layout("pinchbench", agents=path / "openclaw_sessions" / "agents")
    inside = resolved(path)
    candidates = sorted(entry for entry in _listed(path / "0001_transcripts", found) if entry.name.endswith(".jsonl"))
    kept = [entry for entry in candidates if _plain_file(entry, inside)]
    refused = [entry for entry in candidates if entry not in kept]
    found.gaps += [gap("agent_transcript_unavailable", detail=readable_name(entry.name)) for entry in refused]
    if len(kept) > 1:
        # PinchBench writes one run per folder; a second transcript leaves no one session the run is.
        found.gaps.append(gap("subagent_hierarchy_unavailable", detail="root_session_ambiguous"))
    found.transcript = kept[0] if len(kept) == 1 else None
    return found


def _listed(folder: Path, found: Layout) -> list[Path]:
    try:
        return list(folder.iterdir()) if folder.is_dir() else []
    except OSError:
        found.gaps.append(gap("agent_transcript_unavailable", detail=folder.name))
        return []


@dataclass
class _Entry:
    value: dict[str, Any]
    folder: Path


def stores(root: Path, agents: Path, gaps: list[ObservationGap]) -> dict[str, _Entry]:
    """Every session key of `agents/<id>/sessions/sessions.json` under ``root``; a store out of ``root`` is refused.

    A store that is a link, or whose folder leads out of ``root``, is not read (gap
    `agent_session_store_unreadable`, naming it); neither is one that is not a JSON object. A key
    that two stores both hold names no one session (gap `agent_session_identity_ambiguous`).
    """
    inside = resolved(root)
    try:
        folders = sorted(agents.iterdir()) if agents.is_dir() and not agents.is_symlink() else []
    except OSError:
        gaps.append(gap("agent_session_store_unreadable", detail=readable_name(agents.name)))
        return {}
    entries: dict[str, _Entry] = {}
    doubled: set[str] = set()
    for folder in folders:
        store = folder / "sessions" / "sessions.json"
        name = f"{folder.name}/sessions/sessions.json"
        if not store.exists() and not store.is_symlink():
            continue
        if any(part.is_symlink() for part in (folder, store.parent, store)) or not within(store, inside):
            gaps.append(gap("agent_session_store_unreadable", detail=name))
            continue
        data = _store(store)
        if data is None:
            gaps.append(gap("agent_session_store_unreadable", detail=name))
            continue
        for key, value in data.items():
            if not isinstance(value, dict) or not key:
                gaps.append(gap("agent_session_entry_unparseable", detail=key or name))
            elif key in entries or key in doubled:
                gaps.append(gap("agent_session_identity_ambiguous", detail=key))
                entries.pop(key, None)
                doubled.add(key)
            else:
                entries[key] = _Entry(value, store.parent)
    return entries


def _store(store: Path) -> dict[str, Any] | None:
    try:
        with store.open("rb") as handle:
            raw = handle.read(MAX_LINE_BYTES + 1)
        data = loads(without_bom(raw)) if len(raw) <= MAX_LINE_BYTES else None
    except (OSError, orjson.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


def tree(root: Path, entries: dict[str, _Entry], gaps: list[ObservationGap]) -> list[Session]:
    """The sessions in tree order: each root (no parent key), then its children by key, level by level.

    A child names its parent by `spawnedBy` or `parentSessionKey`; two that differ make its parent
    ambiguous (gap `subagent_parent_ambiguous`, and it is read as a root). A parent key no store
    holds is kept as the parent (a missing parent is allowed) and the tree is incomplete: the
    invocation that key names cannot be built (gap `agent_invocation_unavailable`, one per key).
    """
    parents: dict[str, str | None] = {}
    for key, entry in entries.items():
        spawned_by, parent_key = nonempty(entry.value.get("spawnedBy")), nonempty(entry.value.get("parentSessionKey"))
        if spawned_by and parent_key and spawned_by != parent_key:
            gaps.append(gap("subagent_parent_ambiguous", key))
            parents[key] = None
        else:
            parents[key] = spawned_by or parent_key
    missing = sorted({parent for parent in parents.values() if parent is not None and parent not in entries})
    if missing:
        gaps.append(gap("subagent_hierarchy_incomplete"))
        gaps += [gap("agent_invocation_unavailable", key) for key in missing]
    ordered = sorted(key for key, parent in parents.items() if parent is None or parent not in entries)
    while len(ordered) < len(parents):
        placed = set(ordered)
        children = sorted(key for key in parents.keys() - placed if parents[key] in placed)
        if not children:  # a cycle of parents: each is read as a root, the tree it states cannot be
            gaps.append(gap("subagent_hierarchy_incomplete"))
            cyclic = sorted(parents.keys() - placed)
            for key in cyclic:
                parents[key] = None
            ordered += cyclic
            break
        ordered += children
    inside = resolved(root)
    return [_session(key, parents[key], entries[key], inside, gaps) for key in ordered]


def _session(key: str, parent: str | None, entry: _Entry, inside: Path | None, gaps: list[ObservationGap]) -> Session:
    """One store entry's session; its transcript is the `sessionFile`'s name or `<sessionId>.jsonl` by the store."""
    session_id = nonempty(entry.value.get("sessionId"))
    # Only a name is taken from the store: a path in it, absolute or climbing, never leads out of its folder.
    named = [written for written in (text(entry.value.get("sessionFile")),) if written]
    if session_id is not None:
        named.append(f"{session_id}.jsonl")
    candidates = [entry.folder / Path(name).name for name in named if "\x00" not in name]
    transcript = next((candidate for candidate in candidates if _plain_file(candidate, inside)), None)
    if transcript is None:
        gaps.append(gap("agent_transcript_unavailable", key, session_id))
    return Session(key, parent, session_id, transcript)


def loose_transcripts(root: Path, agents: Path, gaps: list[ObservationGap]) -> list[Path]:
    """The transcripts `agents/<id>/sessions/*.jsonl` when no store lists them; a link or a path out is refused.

    `<id>.trajectory.jsonl`, which newer OpenClaw writes beside a transcript, is not one.
    """
    inside = resolved(root)
    found: list[Path] = []
    try:
        folders = sorted(agents.iterdir()) if agents.is_dir() and not agents.is_symlink() else []
        for folder in folders:
            sessions = folder / "sessions"
            if folder.is_symlink() or sessions.is_symlink() or not sessions.is_dir():
                continue
            for path in sorted(sessions.iterdir()):
                if not path.name.endswith(".jsonl") or path.name.endswith(".trajectory.jsonl"):
                    continue
                if _plain_file(path, inside):
                    found.append(path)
                else:
                    gaps.append(gap("agent_transcript_unavailable", detail=readable_name(path.name)))
    except OSError:
        gaps.append(gap("agent_transcript_unavailable", detail=readable_name(agents.name)))
    return found


def _plain_file(candidate: Path, inside: Path | None) -> bool:
    """Whether ``candidate`` is a file, no link, inside ``inside``; a name the system refuses is none."""
    try:
        return not candidate.is_symlink() and candidate.is_file() and within(candidate, inside)
    except (OSError, ValueError):  # a name too long for the file system
        return False
