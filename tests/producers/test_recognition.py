"""Each producer tells its artifact forms from their content: anything else is refused in one line, exit 2.

What a harness left is read whole, gaps for its damage; what it did not leave — another harness's
files, a file of something else, an empty file or folder — is no run of that harness, and a
document of gaps alone would pass it off as one.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from gym_contract.producers import producer
from gym_contract.producers.openclaw import PINCHBENCH_FORM
from gym_contract.producers.otel import FORMS as OTEL_FORMS
from tests.support import REPO, run_in_process

EXAMPLES = REPO / "examples"
CLAUDE_TRANSCRIPT = next((EXAMPLES / "claude-code" / "spotter-v2.1.39" / "projects").glob("*/*.jsonl"))
CODEX_ROLLOUT = next((EXAMPLES / "codex" / "localpush-codex-0.104.0").glob("rollout-*.jsonl"))
PI_SESSION = EXAMPLES / "pi" / "pi-mono-2025-11" / "before-compaction.jsonl"
OPENCODE_EXPORT = EXAMPLES / "reference" / "opencode-1.17.11-export.json"
ROLLOUTS = EXAMPLES / "rollouts.jsonl"
PI_HEADER = '{"type":"session","version":3,"id":"s-1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}\n'


def forms_read(harness: str) -> str:
    """The forms a harness's refusal names, as `observe --list` names them."""
    if harness == "pinchbench":
        return PINCHBENCH_FORM.name
    if harness == "otel":
        return ", ".join(form.name for form in OTEL_FORMS)
    return ", ".join(form.name for form in producer(harness).forms)


def copied(source: Path) -> Callable[[Path], Path]:
    def place(folder: Path) -> Path:
        return Path(shutil.copy(source, folder / source.name))

    return place


def written(name: str, content: str) -> Callable[[Path], Path]:
    def place(folder: Path) -> Path:
        (folder / name).write_text(content)
        return folder / name

    return place


def empty_folder(folder: Path) -> Path:
    (folder / "empty").mkdir()
    return folder / "empty"


CONFUSIONS: dict[str, Callable[[Path], Path]] = {
    "random JSON": written("data.json", '{"name": "x", "values": [1, 2, 3]}\n'),
    "JSON lines of something else": written("rows.jsonl", '{"id": 1}\n{"id": 2}\n'),
    "text": written("notes.txt", "a plain text file\nof two lines\n"),
    "empty file": written("empty.jsonl", ""),
    "empty folder": empty_folder,
    "Claude Code transcript": copied(CLAUDE_TRANSCRIPT),
    "Codex rollout": copied(CODEX_ROLLOUT),
    "Pi session": copied(PI_SESSION),
    "OpenCode export": copied(OPENCODE_EXPORT),
    "rollout records": copied(ROLLOUTS),
}
# What each harness rightly reads among them: OpenClaw's transcripts are Pi sessions.
OWN = {"codex": {"Codex rollout"}, "pi": {"Pi session"}, "openclaw": {"Pi session"}, "opencode": {"OpenCode export"}}
HARNESSES = ("codex", "opencode", "pi", "openclaw", "pinchbench", "otel")
CASES = [
    (harness, confusion) for harness in HARNESSES for confusion in CONFUSIONS if confusion not in OWN.get(harness, ())
]


@pytest.mark.parametrize(("harness", "confusion"), CASES, ids=[f"{h}-{c}" for h, c in CASES])
def test_an_input_that_is_none_of_the_forms_is_refused_in_one_line_naming_them(
    harness: str, confusion: str, tmp_path: Path
) -> None:
    path = CONFUSIONS[confusion](tmp_path)

    status, out, err = run_in_process("observe", harness, str(path))

    assert (status, out) == (2, "")
    assert err.startswith(f"gym-contract: cannot read {path}: ")
    assert err.endswith(f"; {harness} reads: {forms_read(harness)} (see observe --list)\n")
    assert err.count("\n") == 1


def test_claude_code_refuses_a_path_that_is_no_folder_in_the_same_words(tmp_path: Path) -> None:
    path = copied(CLAUDE_TRANSCRIPT)(tmp_path)

    status, out, err = run_in_process("observe", "claude-code", str(path))

    assert (status, out) == (2, "")
    said = "not a directory; claude-code reads: config directory (see observe --list)"
    assert err == f"gym-contract: cannot read {path}: {said}\n"


SHIPPED = [
    ("claude-code", EXAMPLES / "claude-code" / "spotter-v2.1.39"),
    *[("codex", rollout.parent) for rollout in sorted((EXAMPLES / "codex").glob("*/rollout-*.jsonl"))],
    ("codex", EXAMPLES / "codex"),
    *[("codex", file) for file in sorted((EXAMPLES / "codex").glob("*/*.jsonl"))],
    *[("pi", file) for file in sorted((EXAMPLES / "pi").glob("*/*.jsonl"))],
    ("openclaw", EXAMPLES / "openclaw" / "home"),
    ("openclaw", EXAMPLES / "openclaw" / "pinchbench"),
    ("pinchbench", EXAMPLES / "openclaw" / "pinchbench"),
    *[("openclaw", file) for file in sorted((EXAMPLES / "openclaw").glob("home/.openclaw/agents/*/sessions/*.jsonl"))],
    ("opencode", OPENCODE_EXPORT),
]


@pytest.mark.parametrize(("harness", "path"), SHIPPED, ids=[f"{h}-{p.relative_to(EXAMPLES)}" for h, p in SHIPPED])
def test_every_shipped_example_is_read(harness: str, path: Path) -> None:
    status, out, err = run_in_process("observe", harness, str(path))

    assert (status, err) == (0, "")
    assert json.loads(out)["ng_agent_observations"]["records"]


def test_exported_spans_are_read_as_otel(tmp_path: Path) -> None:
    spans = tmp_path / "spans.json"
    assert run_in_process("export", "otel", str(ROLLOUTS), "-o", str(spans))[0] == 0

    status, out, err = run_in_process("observe", "otel", str(spans))

    assert (status, err) == (0, "")
    assert out.strip()


@pytest.mark.parametrize("harness", ["pi", "openclaw"])
def test_a_session_holding_only_its_header_is_read(harness: str, tmp_path: Path) -> None:
    path = written("s-1.jsonl", PI_HEADER)(tmp_path)

    status, out, err = run_in_process("observe", harness, str(path))

    assert (status, err) == (0, "")
    assert json.loads(out)["ng_agent_observations"]["source"] == producer(harness).source


def test_a_damaged_pi_session_is_read_and_each_damaged_line_named_by_its_number(tmp_path: Path) -> None:
    # Lines that are no entry of a session are reported, never counted as entries: the session stays empty.
    path = written("s-1.jsonl", PI_HEADER + '{"id": 1}\nnot json\n[1, 2]\n')(tmp_path)

    status, out, err = run_in_process("observe", "pi", str(path))

    assert (status, err) == (0, "")
    document = json.loads(out)
    gaps = [(gap["code"], gap["detail"]) for gap in document["ng_agent_observations"]["gaps"]]
    assert ("invalid_transcript_record", "s-1.jsonl:2") in gaps
    assert ("malformed_transcript_line", "s-1.jsonl:3") in gaps
    assert ("invalid_transcript_record", "s-1.jsonl:4") in gaps
    assert document["ng_agent_observations"]["records"] == []
    assert document["run_summary"]["main_turns"] is None


def test_a_damaged_codex_rollout_is_read_and_the_damaged_line_named(tmp_path: Path) -> None:
    lines = CODEX_ROLLOUT.read_text().splitlines()
    path = written(CODEX_ROLLOUT.name, "\n".join([lines[0], "not json", *lines[1:]]) + "\n")(tmp_path)

    status, out, err = run_in_process("observe", "codex", str(path))

    assert (status, err) == (0, "")
    document = json.loads(out)
    assert ("malformed_transcript_line", f"{path.name}:2") in [
        (gap["code"], gap["detail"]) for gap in document["ng_agent_observations"]["gaps"]
    ]
    assert document["ng_agent_observations"]["records"]


def test_an_export_cut_short_is_an_opencode_artifact_damaged_not_another_file(tmp_path: Path) -> None:
    text = OPENCODE_EXPORT.read_text()
    path = written("export.json", text[: len(text) // 2])(tmp_path)

    status, out, err = run_in_process("observe", "opencode", str(path))

    assert (status, err) == (0, "")
    gaps = [(gap["code"], gap["detail"]) for gap in json.loads(out)["ng_agent_observations"]["gaps"]]
    assert ("agent_artifact_unavailable", "export.json: not JSON") in gaps


def test_a_sqlite_database_of_another_program_is_refused(tmp_path: Path) -> None:
    import sqlite3

    connection = sqlite3.connect(tmp_path / "app.db")
    connection.execute("create table users (id integer)")
    connection.commit()
    connection.close()

    status, out, err = run_in_process("observe", "opencode", str(tmp_path / "app.db"))

    assert (status, out) == (2, "")
    assert "a SQLite database without OpenCode's session, message, part tables" in err


@pytest.mark.parametrize(
    ("harness", "said"),
    [
        ("codex", "the file is empty"),
        ("pi", "the file is empty"),
        ("openclaw", "the file is empty"),
        ("opencode", "the file is empty"),
        ("otel", "the input is empty"),
    ],
)
def test_an_empty_file_is_said_to_be_empty(harness: str, said: str, tmp_path: Path) -> None:
    path = written("empty.jsonl", "")(tmp_path)

    status, _, err = run_in_process("observe", harness, str(path))

    assert status == 2
    assert err.startswith(f"gym-contract: cannot read {path}: {said}; ")
