"""Each producer tells its artifact forms from their content: anything else is refused in one line, exit 2.

What a harness left is read whole, gaps for its damage; what it did not leave — another harness's
files, a file of something else, an empty file or folder — is no run of that harness, and a
document of gaps alone would pass it off as one.
"""

from __future__ import annotations

import builtins
import errno
import io
import json
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

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
OPENCODE_RUN = EXAMPLES / "opencode" / "run-error.jsonl"
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
    "OpenCode run output": copied(OPENCODE_RUN),
    "an error event alone": written("error.jsonl", '{"type": "error", "message": "x"}\n'),
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


def test_an_export_cut_short_is_refused_where_its_json_breaks_as_outcome_says_it(tmp_path: Path) -> None:
    text = OPENCODE_EXPORT.read_text()
    path = written("export.json", text[: len(text) // 2])(tmp_path)

    status, out, err = run_in_process("observe", "opencode", str(path))

    assert (status, out) == (2, "")
    assert err.startswith(
        f"gym-contract: cannot read {path}: an OpenCode export that is not valid JSON (line 1, column "
    )
    assert err.count("\n") == 1
    said_by_outcome = re.search(r"\(line \d+, column \d+\)", run_in_process("outcome", "opencode", str(path))[2])
    assert said_by_outcome is not None
    assert said_by_outcome.group(0) in err


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


# ------------------------------------------------------------------------ inputs that cannot be read


def _opening(monkeypatch: pytest.MonkeyPatch, targets: tuple[Path, ...], opened: Callable[[Path], Any]) -> None:
    """Opening ``targets`` gives ``opened(target)`` instead, by `Path.open` or by `open`, which the readers
    of one file use (`open_source`); any other file is opened as ever."""
    chosen = {target.absolute() for target in targets}

    def instead_of(real: Callable[..., Any]) -> Callable[..., Any]:
        def open_(file: Any, *args: Any, **kwargs: Any) -> Any:
            if isinstance(file, (str, os.PathLike)) and Path(file).absolute() in chosen:
                return opened(Path(file))
            return real(file, *args, **kwargs)

        return open_

    monkeypatch.setattr(Path, "open", instead_of(Path.open))
    monkeypatch.setattr(builtins, "open", instead_of(builtins.open))


def unopenable(monkeypatch: pytest.MonkeyPatch, *targets: Path) -> None:
    """Opening ``targets`` fails as it does for a user without read permission: the tests may run as
    root, whom a file's mode does not stop."""

    def refused(target: Path) -> Any:
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(target))

    _opening(monkeypatch, targets, refused)


class _BreaksOff(io.FileIO):
    """A file whose first ``left`` bytes can be read; then reading fails as a disk error part way through would."""

    def __init__(self, path: Path, left: int) -> None:
        super().__init__(path, "rb")
        self._left = left

    def read(self, size: int | None = -1) -> bytes:
        if self._left <= 0:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        data = super().read(self._left if size is None or size < 0 else min(size, self._left)) or b""
        self._left -= len(data)
        return data


def breaks_off(monkeypatch: pytest.MonkeyPatch, target: Path, read: bytes) -> None:
    """Reading ``target``, which starts with ``read``, gives that, then fails as a disk error part way through would."""
    assert target.read_bytes().startswith(read)
    _opening(monkeypatch, (target,), lambda path: _BreaksOff(path, len(read)))


SINGLE_FILES = [("pi", PI_SESSION), ("codex", CODEX_ROLLOUT), ("openclaw", PI_SESSION), ("opencode", OPENCODE_EXPORT)]


@pytest.mark.parametrize(("harness", "source"), SINGLE_FILES, ids=[harness for harness, _ in SINGLE_FILES])
def test_a_file_that_cannot_be_read_is_refused_naming_it_and_why(
    harness: str, source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = copied(source)(tmp_path)
    unopenable(monkeypatch, path)

    status, out, err = run_in_process("observe", harness, str(path))

    assert (status, out) == (2, "")
    said = f"Permission denied; {harness} reads: {forms_read(harness)} (see observe --list)"
    assert err == f"gym-contract: cannot read {path}: {said}\n"


def test_a_codex_folder_whose_only_rollout_cannot_be_read_is_refused_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rollout = copied(CODEX_ROLLOUT)(tmp_path)
    unopenable(monkeypatch, rollout)

    status, out, err = run_in_process("observe", "codex", str(tmp_path))

    assert (status, out) == (2, "")
    assert err.startswith(f"gym-contract: cannot read {tmp_path}: {rollout.name}: Permission denied; codex reads: ")


def test_an_unreadable_rollout_beside_readable_ones_is_a_gap_and_the_rest_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copied(CODEX_ROLLOUT)(tmp_path)
    locked = written("rollout-2026-01-01T00-00-00-locked.jsonl", CODEX_ROLLOUT.read_text())(tmp_path)
    unopenable(monkeypatch, locked)

    status, out, err = run_in_process("observe", "codex", str(tmp_path))

    assert (status, err) == (0, "")
    document = json.loads(out)
    assert {"code": "transcript_unreadable", "invocation_id": None, "detail": locked.name} in document[
        "ng_agent_observations"
    ]["gaps"]
    assert document["ng_agent_observations"]["records"]


def test_an_opencode_data_folder_whose_database_cannot_be_read_is_refused_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    database = tmp_path / "opencode.db"
    database.write_bytes(b"SQLite format 3\x00" + b"\x00" * 84)
    unopenable(monkeypatch, database)

    status, out, err = run_in_process("observe", "opencode", str(tmp_path))

    assert (status, out) == (2, "")
    assert err.startswith(f"gym-contract: cannot read {tmp_path}: opencode.db: Permission denied; opencode reads: ")


@pytest.mark.parametrize("harness", ["codex", "pi", "openclaw", "opencode"])
def test_a_link_to_nothing_is_refused_as_no_regular_file(harness: str, tmp_path: Path) -> None:
    path = tmp_path / "d"
    path.symlink_to(tmp_path / "nonexistent")

    status, out, err = run_in_process("observe", harness, str(path))

    assert (status, out) == (2, "")
    assert err.startswith(f"gym-contract: cannot read {path}: not a regular file; {harness} reads: ")


def test_claude_code_refuses_a_folder_that_holds_none_of_its_files(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("a folder of something else\n")

    for path in (empty_folder(tmp_path), tmp_path):
        status, out, err = run_in_process("observe", "claude-code", str(path))

        assert (status, out) == (2, "")
        said = (
            "neither projects/ nor .claude.json in the folder; claude-code reads: config directory (see observe --list)"
        )
        assert err == f"gym-contract: cannot read {path}: {said}\n"
