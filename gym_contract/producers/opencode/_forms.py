"""Read OpenCode's three artifact forms (export JSON, SQLite `opencode.db`, per-file `storage/`) into one store."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import orjson

from gym_contract._values import nonempty, obj, text
from gym_contract.models import ObservationGap
from gym_contract.producers._kit import (
    UnrecognisedArtifactError,
    artifact_bytes,
    artifact_name,
    gap,
    is_stdin,
    readable_name,
    resolved,
    unreadable,
    within,
    without_bom,
)
from gym_contract.reading._json_parsing import loads

__all__ = ["Message", "Part", "Session", "Store", "export_document", "gap", "read_store"]

MAX_FILE_BYTES: Final = 256 * 1024 * 1024
"""An export or storage file larger than this is reported, never read whole."""
SQLITE_MAGIC: Final = b"SQLite format 3\x00"
_STORAGE_KINDS: Final = ("session", "message", "part")


@dataclass
class Part:
    """One message part: its id, the session it names, and its record with the ids merged back."""

    part_id: str
    session_id: str | None
    data: dict[str, Any]


@dataclass
class Message:
    message_id: str
    session_id: str | None
    info: dict[str, Any]
    parts: list[Part] = field(default_factory=list)


@dataclass
class Session:
    session_id: str
    parent_id: str | None
    info: dict[str, Any]


@dataclass
class Store:
    """The sessions, messages and parts of one artifact, in OpenCode's order, whatever form held them."""

    form: str | None = None
    sessions: list[Session] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)
    gaps: list[ObservationGap] = field(default_factory=list)


def read_store(path: str | os.PathLike[str]) -> Store:
    """The store at ``path``: an export, a database, a storage folder or a data folder holding one; told by content."""
    where = Path(path)
    if is_stdin(path):
        return _read_export(path)
    if where.is_dir():
        found = _in_folder(where)
        if found is None:
            raise UnrecognisedArtifactError(path, "no opencode.db or storage/ folder (session/ with message/ or part/)")
        if isinstance(found, str):  # OpenCode's store by its name, which cannot be read as one
            return Store(gaps=[gap("agent_artifact_unavailable", detail=found)])
        kind, target = found
        return _read_database(target) if kind == "sqlite" else _read_storage(target, where)
    if not where.is_file():  # a pipe or a device would block or never end: only a regular file is opened
        raise UnrecognisedArtifactError(path, "not a regular file" if os.path.lexists(where) else "no such file")
    try:
        head = _head(where)
    except OSError as error:  # what the file is cannot be told, and nothing else of the run was given
        raise unreadable(path, error) from None
    if head.startswith(SQLITE_MAGIC):
        return _read_database(where)
    return _read_export(where)


def _head(path: Path) -> bytes:
    with path.open("rb") as handle:
        return handle.read(len(SQLITE_MAGIC))


def _is_storage(folder: Path) -> bool:
    return (folder / "session").is_dir() and ((folder / "message").is_dir() or (folder / "part").is_dir())


def _in_folder(folder: Path) -> tuple[str, Path] | str | None:
    """What a folder holds: a storage tree itself, or a data folder (`opencode/` under XDG_DATA_HOME too).

    A database named as OpenCode names its own that cannot be read as one (a link out of the folder, a
    file that is no SQLite database) is said as its name and why; None when the folder holds no store.
    """
    root = resolved(folder)
    refused: str | None = None
    failed: tuple[str | None, OSError] | None = None
    """The first file or folder of the store that could not be read (None: the folder itself), and why."""
    for candidate in (folder, folder / "opencode"):
        if not candidate.is_dir() or not within(candidate, root):
            continue
        if _is_storage(candidate):
            return "storage", candidate
        try:
            names = _database_names(candidate)
        except OSError as error:
            failed = failed or (None if candidate == folder else readable_name(candidate.name), error)
            names = []
        for name in names:
            database = candidate / name
            if not within(database, root):
                refused = refused or f"{readable_name(name)}: links outside the input"
                continue
            try:
                sqlite = database.is_file() and _head(database).startswith(SQLITE_MAGIC)
            except OSError as error:
                failed = failed or (readable_name(name), error)
                continue
            if not sqlite:
                refused = refused or f"{readable_name(name)}: not a SQLite database"
            else:
                return "sqlite", database
        if _is_storage(candidate / "storage") and within(candidate / "storage", root):
            return "storage", candidate / "storage"
    if failed is not None:  # the run's store, unread: gaps alone would pass the run off as one that left nothing
        raise unreadable(folder, failed[1], failed[0])
    return refused


def _database_names(folder: Path) -> list[str]:
    """`opencode.db` first, then a release channel's `opencode-<channel>.db`, by name; OSError if unlisted."""
    names = sorted(entry.name for entry in os.scandir(folder) if entry.name.endswith(".db"))
    channels = [name for name in names if name.startswith("opencode-")]
    return (["opencode.db"] if "opencode.db" in names else []) + channels


# ------------------------------------------------------------------------------------------ export


def _read_json(path: Path) -> tuple[Any, str | None]:
    """A JSON file's value, or why it has none."""
    try:
        raw = _json_text(path)
    except OSError as error:
        return None, f"cannot be read ({error.strerror or type(error).__name__})"
    if raw is None:
        return None, f"larger than {MAX_FILE_BYTES} bytes"
    try:
        return loads(raw), None
    except (ValueError, RecursionError):
        return None, "not JSON"


def _json_text(path: Path) -> bytes | None:
    """The file's bytes without a byte-order mark; None for a file too large to read whole."""
    if path.stat().st_size > MAX_FILE_BYTES:
        return None
    return without_bom(path.read_bytes())


def _read_export(path: str | os.PathLike[str]) -> Store:
    """An `opencode export` document: the session's `info` and its `messages[]`, each with `info` and `parts[]`.

    It may come from stdin ("-") or be gzip or zstd compressed, as `validate` reads a file; the database
    cannot: SQLite reads its own file.
    """
    store = Store(form="export")
    try:
        raw = artifact_bytes(path, MAX_FILE_BYTES)
    except OSError as error:
        raise unreadable(path, error) from None
    if raw is None:  # a file too large to tell: a gap says why
        detail = f"{artifact_name(path)}: larger than {MAX_FILE_BYTES} bytes"
        store.gaps.append(gap("agent_artifact_unavailable", detail=detail))
        return store
    if raw.startswith(SQLITE_MAGIC):
        why = "an opencode.db is read from its own file, neither from stdin nor compressed"
        raise UnrecognisedArtifactError(path, why)
    try:
        document = loads(raw)
    except orjson.JSONDecodeError as error:
        raise UnrecognisedArtifactError(path, _not_json(raw, error)) from None
    except (ValueError, RecursionError):
        raise UnrecognisedArtifactError(path, _not_json(raw, None)) from None
    if not _is_export(document):
        raise UnrecognisedArtifactError(path, "JSON, but no export: no object with `info` and `messages`")
    info = obj(document.get("info"))
    session_id = nonempty(info.get("id")) if info is not None else None
    if info is None or session_id is None:
        store.gaps.append(gap("agent_artifact_record_unparseable", detail="info: no session id"))
        return store
    store.sessions.append(Session(session_id, nonempty(info.get("parentID")), info))
    raw_messages = document.get("messages")
    if not isinstance(raw_messages, list):
        store.gaps.append(gap("agent_artifact_record_unparseable", session_id, "messages: not a list"))
        return store
    for index, entry in enumerate(raw_messages):
        message_info = obj(entry.get("info")) if isinstance(entry, dict) else None
        if message_info is None:
            store.gaps.append(gap("agent_artifact_record_unparseable", session_id, f"messages[{index}]"))
            continue
        message_id = nonempty(message_info.get("id")) or f"messages[{index}]"
        # The export nests a message under its session, which owns it whatever the record repeats.
        message = Message(message_id, session_id, {**message_info, "id": message_id, "sessionID": session_id})
        parts = entry.get("parts")
        if parts is not None and not isinstance(parts, list):
            store.gaps.append(gap("agent_artifact_record_unparseable", session_id, f"messages[{index}].parts"))
        for position, part in enumerate(parts if isinstance(parts, list) else []):
            if not isinstance(part, dict):
                where = f"messages[{index}].parts[{position}]"
                store.gaps.append(gap("agent_artifact_record_unparseable", session_id, where))
                continue
            part_id = nonempty(part.get("id")) or f"{message_id}:parts[{position}]"
            owner = nonempty(part.get("sessionID")) or session_id
            message.parts.append(Part(part_id, owner, {**part, "id": part_id, "messageID": message_id}))
        store.messages.append(message)
    return store


def _not_json(raw: bytes, error: orjson.JSONDecodeError | None) -> str:
    """Why a file that is not JSON is refused: empty, an export damaged (cut short) and where, or another file.

    Text naming an export's two keys is an export whose evidence cannot be read: where its JSON breaks
    is said, as `gym-contract outcome opencode` says it, rather than a document with nothing in it.
    """
    if not raw:
        return "the file is empty"
    if not (raw.lstrip().startswith(b"{") and b'"info"' in raw and b'"messages"' in raw):
        return "not JSON, and no SQLite database"
    where = f" (line {error.lineno}, column {error.colno}): {error.msg}" if error is not None else ""
    return f"an OpenCode export that is not valid JSON{where}"


def _is_export(document: Any) -> bool:
    """Whether a JSON value has the shape `opencode export` writes: an object with `info` and `messages`."""
    return isinstance(document, dict) and "info" in document and "messages" in document


# ------------------------------------------------------------------------------------------ SQLite


def _read_database(path: Path) -> Store:
    """OpenCode's `opencode.db` (≥ 1.2), opened read-only: rows strip their ids from `data`, which are merged back."""
    store = Store(form="sqlite")
    uri = f"{path.absolute().as_uri()}?mode=ro"
    try:
        connection = sqlite3.connect(uri, uri=True, timeout=2)
    except sqlite3.Error as error:
        store.gaps.append(gap("agent_artifact_unavailable", detail=f"{path.name}: {error}"))
        return store
    try:
        connection.row_factory = sqlite3.Row
        connection.text_factory = _text_or_bytes
        # One read transaction: the three tables are read as one state of a store OpenCode may still write.
        connection.isolation_level = None
        connection.execute("begin")
        if _tables(connection).isdisjoint(_STORAGE_KINDS):
            raise UnrecognisedArtifactError(path, "a SQLite database without OpenCode's session, message, part tables")
        sessions = _rows(connection, "session", "time_created, id", store, path)
        # A locked store would keep each later read waiting as long again, for the same answer.
        locked = sessions is None
        messages = [] if locked else _rows(connection, "message", "time_created, id", store, path) or []
        parts = [] if locked else _rows(connection, "part", "time_created, id", store, path) or []
    except sqlite3.Error as error:
        store.gaps.append(gap("agent_artifact_unavailable", detail=f"{path.name}: {error}"))
        return store
    finally:
        connection.close()
    for row in sessions or []:
        session_id = nonempty(row.get("id"))
        if session_id is None:
            store.gaps.append(gap("agent_artifact_record_unparseable", detail="session row without an id"))
            continue
        info: dict[str, Any] = {"id": session_id, "parentID": text(row.get("parent_id"))}
        info["version"] = text(row.get("version"))
        info["time"] = {"created": row.get("time_created"), "updated": row.get("time_updated")}
        store.sessions.append(Session(session_id, nonempty(row.get("parent_id")), info))
    by_id: dict[str, Message] = {}
    for row in messages:
        message_id, data = nonempty(row.get("id")), _data(row.get("data"))
        if message_id is None or data is None:
            store.gaps.append(gap("agent_artifact_record_unparseable", detail=message_id or "message row"))
            continue
        session_id = text(row.get("session_id"))
        message = Message(message_id, session_id, {**data, "id": message_id, "sessionID": session_id})
        store.messages.append(message)
        by_id.setdefault(message_id, message)
    for row in parts:
        part_id, data = nonempty(row.get("id")), _data(row.get("data"))
        if part_id is None or data is None:
            store.gaps.append(gap("agent_artifact_record_unparseable", detail=part_id or "part row"))
            continue
        holder = by_id.get(text(row.get("message_id")) or "")
        owner = text(row.get("session_id")) or (holder.session_id if holder is not None else None)
        merged = {**data, "id": part_id, "sessionID": owner, "messageID": text(row.get("message_id"))}
        _attach(store, holder, Part(part_id, owner, merged))
    return store


def _tables(connection: sqlite3.Connection) -> set[str]:
    """The database's table names; the three OpenCode reads when they cannot be listed (locked, damaged),
    so that each table's read reports what stops it."""
    try:
        return {row[0] for row in connection.execute("select name from sqlite_master where type = 'table'")}
    except (sqlite3.Error, UnicodeDecodeError):
        return set(_STORAGE_KINDS)


def _rows(
    connection: sqlite3.Connection, table: str, order: str, store: Store, path: Path
) -> list[dict[str, Any]] | None:
    """The table's rows; [] when it cannot be read (a gap says why), None when the store is locked."""
    try:
        cursor = connection.execute(f"select * from {table} order by {order}")
        return [dict(row) for row in cursor]
    except sqlite3.Error as error:  # locked, damaged, not OpenCode's schema
        store.gaps.append(gap("agent_artifact_unavailable", detail=f"{path.name} table {table}: {error}"))
        return None if isinstance(error, sqlite3.OperationalError) and "locked" in str(error) else []
    except UnicodeDecodeError:  # a damaged schema: its column names, or SQLite's message about them, are not text
        store.gaps.append(gap("agent_artifact_unavailable", detail=f"{path.name} table {table}: not UTF-8"))
        return []


def _text_or_bytes(raw: bytes) -> str | bytes:
    """A TEXT value as a string; one that is not UTF-8 stays bytes, which no id or `data` reader takes."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw


def _data(value: Any) -> dict[str, Any] | None:
    """A row's `data` column: a JSON object as text (or bytes), else None."""
    if not isinstance(value, (str, bytes)):
        return None
    try:
        parsed = loads(value)
    except (ValueError, RecursionError):
        return None
    return parsed if isinstance(parsed, dict) else None


def _attach(store: Store, message: Message | None, part: Part) -> None:
    if message is None:
        store.gaps.append(gap("agent_artifact_record_unowned", detail=part.part_id))
    else:
        message.parts.append(part)


# ------------------------------------------------------------------------------------------ storage


def _read_storage(folder: Path, root: Path) -> Store:
    """The per-file layout of OpenCode ≤ 1.1: `session/<project>/<id>.json`, `message/<session>/<id>.json`, `part/…`."""
    store = Store(form="storage")
    inside = resolved(root)
    records = {kind: list(_records(folder, kind, inside, store)) for kind in _STORAGE_KINDS}
    seen: set[str] = set()
    for owner_dir, name, record in records["session"]:
        session_id = nonempty(record.get("id")) or name
        if session_id in seen:
            store.gaps.append(gap("agent_artifact_record_unparseable", detail=f"session/{owner_dir}/{name}.json"))
            continue
        seen.add(session_id)
        store.sessions.append(Session(session_id, nonempty(record.get("parentID")), record))
    store.sessions.sort(key=lambda session: (_created(session.info), session.session_id))
    by_id: dict[str, Message] = {}
    for owner_dir, name, record in records["message"]:
        message_id = nonempty(record.get("id")) or name
        session_id = nonempty(record.get("sessionID")) or owner_dir
        message = Message(message_id, session_id, {**record, "id": message_id, "sessionID": session_id})
        store.messages.append(message)
        by_id.setdefault(message_id, message)
    store.messages.sort(key=lambda message: (_created(message.info), message.message_id))
    for owner_dir, name, record in sorted(records["part"], key=lambda found: nonempty(found[2].get("id")) or found[1]):
        part_id = nonempty(record.get("id")) or name
        message_id = nonempty(record.get("messageID")) or owner_dir
        holder = by_id.get(message_id)
        owner = nonempty(record.get("sessionID")) or (holder.session_id if holder is not None else None)
        _attach(store, holder, Part(part_id, owner, {**record, "id": part_id, "messageID": message_id}))
    return store


def _created(info: dict[str, Any]) -> float:
    """`time.created` in ms for ordering; a record without one sorts first, as OpenCode's id order would put it."""
    time = obj(info.get("time")) or {}
    created = time.get("created")
    return float(created) if isinstance(created, (int, float)) and not isinstance(created, bool) else float("-inf")


def _records(folder: Path, kind: str, inside: Path | None, store: Store) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """Every `<kind>/<owner>/<id>.json` object with its owner folder and file stem, in name order."""
    for owner in _entries(folder / kind):
        if not owner.is_dir():
            continue
        for entry in _entries(owner):
            if not entry.name.endswith(".json") or entry.is_dir():
                continue
            where = readable_name(f"{kind}/{owner.name}/{entry.name}")
            if not within(entry, inside):
                store.gaps.append(gap("agent_artifact_record_unparseable", detail=f"{where}: links outside the input"))
                continue
            if not entry.is_file():
                store.gaps.append(gap("agent_artifact_record_unparseable", detail=f"{where}: not a regular file"))
                continue
            record, problem = _read_json(entry)
            if problem is not None or not isinstance(record, dict):
                store.gaps.append(gap("agent_artifact_record_unparseable", detail=f"{where}: {problem or 'no object'}"))
                continue
            yield readable_name(owner.name), readable_name(entry.name.removesuffix(".json")), record


def _entries(folder: Path) -> list[Path]:
    try:
        return sorted((Path(entry.path) for entry in os.scandir(folder)), key=lambda path: path.name)
    except OSError:
        return []


def export_document(store: Store, session: Session) -> dict[str, Any]:
    """One session's records in the shape `opencode export` writes, for the outcome classifier."""
    messages = [
        {"info": message.info, "parts": [part.data for part in message.parts]}
        for message in store.messages
        if message.session_id == session.session_id
    ]
    return {"info": session.info, "messages": messages}
