"""OpenCode's records laid out as each version stores them: an export, a storage/ tree, an opencode.db.

The tests take real sessions (exports, or the server's session and message listings) and write the
same records in the two stores OpenCode keeps on disk, as OpenCode writes them: per-file JSON under
`storage/` up to 1.1 (indented, ids inside each record), and the SQLite tables of 1.2 and later,
whose `data` columns leave out the ids the row's own columns hold.
"""

from __future__ import annotations

import json
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

from tests.support import REPO

SHIPPED_EXPORT = REPO / "examples" / "reference" / "opencode-1.17.11-export.json"
SANDBOX_AGENT = REPO / "tests" / "data" / "opencode" / "sandbox-agent-1.1.49"

# The tables of packages/opencode/src/session/session.sql.ts that hold a session's records.
SCHEMA = """
create table session (
  id text primary key, project_id text not null, workspace_id text, parent_id text, slug text not null,
  directory text not null, path text, title text not null, version text not null, share_url text,
  agent text, model text, time_created integer not null, time_updated integer not null,
  time_compacting integer, time_archived integer
);
create table message (
  id text primary key, session_id text not null references session(id),
  time_created integer not null, time_updated integer not null, data text not null
);
create table part (
  id text primary key, message_id text not null references message(id), session_id text not null,
  time_created integer not null, time_updated integer not null, data text not null
);
create index message_session_time_created_id_idx on message (session_id, time_created, id);
create index part_message_id_id_idx on part (message_id, id);
"""


def sandbox_agent_export() -> dict[str, Any]:
    """The real OpenCode 1.1.49 session, its info and its messages joined as `opencode export` writes them."""
    info = json.loads((SANDBOX_AGENT / "session.json").read_text())
    return {"info": info, "messages": json.loads((SANDBOX_AGENT / "messages.json").read_text())}


def shipped_export_with_ids() -> dict[str, Any]:
    """The shipped 1.17.11 export with its redacted ids made unique again, in the order they were written.

    Its publisher replaced every message id with `msg_123` and every part id with `prt_123`; a store
    keys records by id, so the records get distinct ids that sort as the export orders them.
    """
    export = json.loads(SHIPPED_EXPORT.read_text())
    for index, message in enumerate(export["messages"]):
        message_id = f"msg_{index:04d}"
        message["info"]["id"] = message_id
        if "parentID" in message["info"]:
            message["info"]["parentID"] = "msg_0000"
        for position, part in enumerate(message["parts"]):
            part.update(id=f"prt_{index:04d}_{position:04d}", messageID=message_id)
    return export


def _created(record: dict[str, Any]) -> int:
    time = record.get("time")
    return time.get("created", 0) if isinstance(time, dict) else 0


def storage_files(exports: list[dict[str, Any]], prefix: str = "storage") -> dict[str, bytes]:
    """`session/<project>/<id>.json`, `message/<session>/<id>.json` and `part/<message>/<id>.json`, indented."""
    files: dict[str, bytes] = {}

    def put(name: str, record: dict[str, Any]) -> None:
        files[f"{prefix}/{name}"] = json.dumps(record, indent=2, ensure_ascii=False).encode()

    for export in exports:
        info = export["info"]
        put(f"session/{info.get('projectID', 'global')}/{info['id']}.json", info)
        for message in export["messages"]:
            put(f"message/{info['id']}/{message['info']['id']}.json", message["info"])
            for part in message["parts"]:
                put(f"part/{message['info']['id']}/{part['id']}.json", part)
    return files


def write_database(path: Path, exports: list[dict[str, Any]]) -> Path:
    """An `opencode.db` holding the sessions, with the row's ids stripped from each `data` column."""
    connection = sqlite3.connect(path)
    try:
        connection.executescript(SCHEMA)
        for export in exports:
            info = export["info"]
            time = info.get("time", {})
            connection.execute(
                "insert into session (id, project_id, parent_id, slug, directory, title, version, time_created, "
                "time_updated) values (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    info["id"],
                    info.get("projectID", "global"),
                    info.get("parentID"),
                    info.get("slug", ""),
                    info.get("directory", ""),
                    info.get("title", ""),
                    info.get("version", ""),
                    time.get("created", 0),
                    time.get("updated", 0),
                ),
            )
            for message in export["messages"]:
                record = message["info"]
                data = {key: value for key, value in record.items() if key not in ("id", "sessionID")}
                created = _created(record)
                connection.execute(
                    "insert into message values (?, ?, ?, ?, ?)",
                    (record["id"], info["id"], created, created, json.dumps(data)),
                )
                for part in message["parts"]:
                    stripped = {
                        key: value for key, value in part.items() if key not in ("id", "sessionID", "messageID")
                    }
                    connection.execute(
                        "insert into part values (?, ?, ?, ?, ?, ?)",
                        (
                            part["id"],
                            record["id"],
                            part.get("sessionID", info["id"]),
                            created,
                            created,
                            json.dumps(stripped),
                        ),
                    )
        connection.commit()
    finally:
        connection.close()
    return path


def database_bytes(exports: list[dict[str, Any]]) -> bytes:
    with tempfile.TemporaryDirectory() as folder:
        return write_database(Path(folder) / "opencode.db", exports).read_bytes()


def exports_of(folder: Path) -> list[dict[str, Any]]:
    """The exports of a storage/ tree written by `storage_files`, read back (for the cases' own checks)."""
    exports = []
    for session_file in sorted((folder / "session").glob("*/*.json")):
        info = json.loads(session_file.read_text())
        messages = []
        for message_file in sorted((folder / "message" / info["id"]).glob("*.json")):
            record = json.loads(message_file.read_text())
            parts = [json.loads(p.read_text()) for p in sorted((folder / "part" / record["id"]).glob("*.json"))]
            messages.append({"info": record, "parts": parts})
        exports.append(
            {"info": info, "messages": sorted(messages, key=lambda m: (_created(m["info"]), m["info"]["id"]))}
        )
    return exports
