"""The OpenCode producer on real sessions in all three forms, through `gym-contract observe opencode`.

Every count the tests hold the document to is taken from the artifact with plain `json`, never from
the producer; the storage/ folder and the opencode.db are written from the same records the export
holds, as OpenCode lays them out.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gym_contract.producers.opencode import observe
from tests.producers.opencode_layouts import (
    SHIPPED_EXPORT,
    sandbox_agent_export,
    shipped_export_with_ids,
    storage_files,
    write_database,
)
from tests.producers.seeds import _opencode_sessions
from tests.support import run_in_process


def cli(*arguments: str | Path) -> tuple[int, dict[str, Any], str]:
    status, out, err = run_in_process("observe", "opencode", *map(str, arguments))
    return status, json.loads(out) if out else {}, err


def lay_out(folder: Path, exports: list[dict[str, Any]]) -> dict[str, Path]:
    """The sessions as an export (the first), a storage/ folder in a data folder, and an opencode.db."""
    (folder / "export.json").write_text(json.dumps(exports[0]))
    for name, content in storage_files(exports, "data/storage").items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(content)
    (folder / "db").mkdir()
    write_database(folder / "db" / "opencode.db", exports)
    return {"export": folder / "export.json", "storage": folder / "data", "sqlite": folder / "db" / "opencode.db"}


def counted(exports: list[dict[str, Any]]) -> dict[str, Any]:
    """What the artifact holds, counted by hand: sessions, tool parts with a call id, compaction parts."""
    parts = [part for export in exports for message in export["messages"] for part in message["parts"]]
    return {
        "sessions": sorted(export["info"]["id"] for export in exports),
        "tool_calls": sorted(part["callID"] for part in parts if part["type"] == "tool" and part.get("callID")),
        "compactions": sum(1 for part in parts if part["type"] == "compaction"),
        "failed_tools": sum(1 for part in parts if part["type"] == "tool" and part["state"]["status"] == "error"),
    }


def seen(document: dict[str, Any]) -> dict[str, Any]:
    records = document["ng_agent_observations"]["records"]
    return {
        "sessions": sorted(r["invocation_id"] for r in records if r["kind"] == "agent_invocation"),
        "tool_calls": sorted(r["tool_call_id"] for r in records if r["kind"] == "tool_call"),
        "compactions": sum(1 for r in records if r["kind"] == "context_compaction"),
        "failed_tools": document["run_summary"]["tool_errors"],
    }


def test_the_shipped_export_is_observed_whole() -> None:
    export = json.loads(SHIPPED_EXPORT.read_text())

    status, document, err = cli(SHIPPED_EXPORT, "--exit-code", "0")

    assert (status, err) == (0, "")
    assert seen(document) == counted([export])
    assert document["ng_agent_outcome"]["response_status"] == "completed"
    (tool,) = [r for r in document["ng_agent_observations"]["records"] if r["kind"] == "tool_call"]
    part = export["messages"][2]["parts"][2]
    assert (tool["started_at"], tool["completed_at"]) == (
        part["state"]["time"]["start"] / 1000,
        part["state"]["time"]["end"] / 1000,
    )


@pytest.mark.parametrize(
    "sessions",
    [lambda: [shipped_export_with_ids()], lambda: [sandbox_agent_export()], _opencode_sessions],
    ids=["shipped-1.17.11-export", "sandbox-agent-1.1.49", "sessions-with-subagent-and-compaction"],
)
def test_the_three_forms_give_one_document_that_holds_what_the_artifact_holds(sessions: Any, tmp_path: Path) -> None:
    exports = sessions()
    paths = lay_out(tmp_path, exports)

    results = {form: cli(path, "--exit-code", "0") for form, path in paths.items()}

    assert {form: (status, err) for form, (status, _, err) in results.items()} == dict.fromkeys(paths, (0, ""))
    storage, sqlite = results["storage"][1], results["sqlite"][1]
    assert storage == sqlite
    assert seen(storage) == counted(exports)
    if len(exports) == 1:
        assert results["export"][1] == storage


def test_the_tokens_of_a_step_are_counted_once() -> None:
    export = sandbox_agent_export()
    # Each assistant message repeats its step-finish part's counts: the summary must equal one of the two sums.
    steps = [
        part["tokens"] for message in export["messages"] for part in message["parts"] if part["type"] == "step-finish"
    ]
    assert steps == [
        message["info"]["tokens"] for message in export["messages"] if message["info"]["role"] == "assistant"
    ]

    summary = observe_export(export).summary

    assert summary.output_tokens == sum(step["output"] for step in steps)
    assert summary.cached_tokens == sum(step["cache"]["read"] for step in steps)
    assert summary.input_tokens == sum(step["input"] + step["cache"]["read"] + step["cache"]["write"] for step in steps)
    assert (summary.main_turns, summary.subagent_turns, summary.tool_calls) == (3, 0, 1)


def observe_export(export: dict[str, Any], **process: Any) -> Any:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "export.json"
        path.write_text(json.dumps(export))
        return observe(path, **process)


def test_an_unreadable_path_and_an_empty_folder_are_exit_2(tmp_path: Path) -> None:
    status, _, err = cli(tmp_path / "absent")
    assert status == 2
    assert "no such file" in err

    status, document, err = cli(tmp_path)

    assert (status, document) == (2, {})
    assert err.startswith(f"gym-contract: cannot read {tmp_path}: no opencode.db or storage/ folder")


def test_a_data_folder_whose_database_is_no_sqlite_file_is_a_gap_naming_it(tmp_path: Path) -> None:
    (tmp_path / "opencode.db").write_bytes(b"")

    status, document, err = cli(tmp_path)

    assert (status, err) == (0, "")
    gaps = [(gap["code"], gap["detail"]) for gap in document["ng_agent_observations"]["gaps"]]
    assert gaps[0] == ("agent_artifact_unavailable", "opencode.db: not a SQLite database")
