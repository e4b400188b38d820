"""The producer laws for OpenCode in each artifact form it reads: storage/, opencode.db and the export.

The registry's seed is the storage/ form; the same sessions as an SQLite store and a real session's
export are harmed the same ways here, so that a damaged database (truncated, overwritten, emptied,
swapped for a link out of the input) gives gaps, never a traceback.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gym_contract.producers import producer
from gym_contract.reading._json_parsing import loads
from tests.producers.seeds import OPENCODE_FORMS
from tests.producers.test_producer_laws import (
    APPENDING,
    MARKER,
    PROCESS,
    REFUSED,
    artifacts,
    breaches,
    damage,
    observed_bytes,
    observed_or_refused,
)

OPENCODE = producer("opencode")
DAMAGED_EXPORT = b"an OpenCode export that is not valid JSON"


@pytest.mark.parametrize("form", sorted(OPENCODE_FORMS))
def test_each_form_of_the_seed_is_read_clean(form: str) -> None:
    with artifacts(OPENCODE_FORMS[form](), []) as (path, options):
        document = loads(observed_bytes(OPENCODE, path, options, {"exit_code": 0}))
    kinds = {record["kind"] for record in document["ng_agent_observations"]["records"]}
    assert {"agent_invocation", "tool_call"} <= kinds
    assert not [gap for gap in document["ng_agent_observations"]["gaps"] if "artifact" in gap["code"]]


def test_the_storage_and_database_forms_give_the_same_document() -> None:
    documents = []
    for form in ("storage", "sqlite"):
        with artifacts(OPENCODE_FORMS[form](), []) as (path, options):
            documents.append(observed_bytes(OPENCODE, path, options, {"exit_code": 0}))
    assert documents[0] == documents[1]


@pytest.mark.parametrize("form", sorted(OPENCODE_FORMS))
@given(data=st.data(), process=PROCESS)
def test_no_harm_to_any_form_makes_the_producer_raise_but_to_refuse(
    form: str, data: st.DataObject, process: dict[str, Any]
) -> None:
    seed = OPENCODE_FORMS[form]()
    harms = data.draw(damage(seed), label="harms")
    with artifacts(seed, harms) as (path, options):
        first = observed_or_refused(OPENCODE, path, options, process)
        again = observed_or_refused(OPENCODE, path, options, process)
    if first.startswith(REFUSED):  # harm that left no form of OpenCode's: refused, the same way each time
        assert first == again
        # A line added to an artifact is damage to it, never a reason to take it for something else; an
        # export is one JSON document, and one that no longer parses is refused as the export it is.
        if not first.startswith(REFUSED + DAMAGED_EXPORT):
            assert not all(harm in APPENDING for harm, _, _ in harms), first.decode()
        return
    assert breaches(OPENCODE, first, again) == []
    if not any(harm == "symlink_out" and name == seed.path for harm, name, _ in harms):
        assert MARKER not in first, "a file linked from outside the input was read"


def _observe(path: Path) -> dict[str, Any]:
    document: dict[str, Any] = loads(observed_bytes(OPENCODE, path, {}, {}))
    return document


def test_a_file_with_sqlites_header_and_nothing_behind_it_is_a_gap(tmp_path: Path) -> None:
    (tmp_path / "opencode.db").write_bytes(b"SQLite format 3\x00" + b"\x00" * 84)

    document = _observe(tmp_path / "opencode.db")

    assert document["ng_agent_observations"]["records"] == []
    assert "agent_artifact_unavailable" in {gap["code"] for gap in document["ng_agent_observations"]["gaps"]}


def test_a_database_of_another_schema_names_the_missing_table(tmp_path: Path) -> None:
    connection = sqlite3.connect(tmp_path / "opencode.db")
    connection.execute("create table session (id text, parent_id text, time_created integer)")
    connection.execute("insert into session values ('ses_1', null, 1)")
    connection.commit()
    connection.close()

    bundle = _observe(tmp_path / "opencode.db")["ng_agent_observations"]
    gaps = bundle["gaps"]

    assert [record["invocation_id"] for record in bundle["records"]] == ["ses_1"]
    details = [gap["detail"] for gap in gaps if gap["code"] == "agent_artifact_unavailable"]
    assert details == [
        "opencode.db table message: no such table: message",
        "opencode.db table part: no such table: part",
    ]


def test_a_locked_database_is_a_gap_not_a_wait(tmp_path: Path) -> None:
    path = tmp_path / "opencode.db"
    writer = sqlite3.connect(path)
    writer.execute("create table session (id text)")
    writer.commit()
    writer.execute("begin exclusive")
    try:
        gaps = _observe(path)["ng_agent_observations"]["gaps"]
    finally:
        writer.rollback()
        writer.close()
    # Said once: the store is not waited for again, table after table, for the same answer.
    unavailable = [gap["detail"] for gap in gaps if gap["code"] == "agent_artifact_unavailable"]
    assert unavailable == ["opencode.db table session: database is locked"]


def test_the_database_is_never_written(tmp_path: Path) -> None:
    with artifacts(OPENCODE_FORMS["sqlite"](), []) as (path, options):
        database = path / "opencode.db"
        before, stamp = database.read_bytes(), database.stat().st_mtime_ns
        observed_bytes(OPENCODE, path, options, {})
        assert (database.read_bytes(), database.stat().st_mtime_ns) == (before, stamp)
        assert sorted(item.name for item in path.iterdir()) == ["opencode.db"]


def test_a_schema_or_a_value_that_is_not_utf8_is_a_gap(tmp_path: Path) -> None:
    path = tmp_path / "opencode.db"
    connection = sqlite3.connect(path)
    connection.execute("create table session (id text, parent_id text, time_created integer)")
    connection.execute("create table message (id text, session_id text, time_created integer, data text)")
    connection.execute("insert into session values ('ses_1', null, 1)")
    # A message whose id is not text, then a table whose column name is not: as a damaged file has them.
    connection.execute("insert into message values (cast(x'ff' as text), 'ses_1', 1, '{}')")
    connection.execute("create table part (id text, message_id text, session_id text, time_created integer, data text)")
    connection.execute("pragma writable_schema = 1")
    broken = b"create table part (id text, message_id text, session_id text, time_created integer, data text, \xff int)"
    connection.execute("update sqlite_master set sql = cast(? as text) where name = 'part'", (broken,))
    connection.commit()
    connection.close()

    bundle = _observe(path)["ng_agent_observations"]

    assert [record["invocation_id"] for record in bundle["records"]] == ["ses_1"]
    assert [(gap["code"], gap["detail"]) for gap in bundle["gaps"]][:2] == [
        ("agent_artifact_unavailable", "opencode.db table part: not UTF-8"),
        ("agent_artifact_record_unparseable", "message row"),
    ]
