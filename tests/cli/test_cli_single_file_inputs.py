"""Every single-file input of `observe` and `lineage` is read as `validate` reads one: "-" for stdin, gzip
and zstd told from their first bytes, a damaged stream refused in one line, never a traceback."""

from __future__ import annotations

import gzip
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import zstandard

from tests.support import REPO

EXAMPLES = REPO / "examples"
CLAUDE_CONFIG = EXAMPLES / "claude-code" / "spotter-v2.1.39"
# Each command and the example file it is given last: a harness's single-file forms, and a capture file.
COMMANDS = {
    "codex exec --json": (["observe", "codex"], EXAMPLES / "codex" / "exec-json" / "exec-run.jsonl"),
    "codex rollout": (
        ["observe", "codex"],
        next((EXAMPLES / "codex" / "localpush-codex-0.104.0").glob("rollout-*.jsonl")),
    ),
    "pi session": (["observe", "pi"], EXAMPLES / "pi" / "pi-mono-2025-11" / "before-compaction.jsonl"),
    "openclaw transcript": (
        ["observe", "openclaw"],
        EXAMPLES / "openclaw" / "home" / ".openclaw" / "agents" / "main" / "sessions" / "s-root.jsonl",
    ),
    "opencode export": (["observe", "opencode"], EXAMPLES / "reference" / "opencode-1.17.11-export.json"),
    "claude-code stream": (
        ["observe", "claude-code", str(CLAUDE_CONFIG), "--stream"],
        EXAMPLES / "claude-code" / "spotter-v2.1.39.stream.jsonl",
    ),
    "lineage": (["lineage", "--format", "json"], EXAMPLES / "capture" / "7-0.capture.jsonl"),
}
HARNESSES = ["codex exec --json", "pi session", "openclaw transcript", "opencode export"]


def run(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    result = subprocess.run(
        [sys.executable, "-m", "gym_contract", *args], input=stdin, capture_output=True, check=False
    )
    assert b"Traceback" not in result.stderr
    return result


def said(result: subprocess.CompletedProcess[bytes]) -> str:
    """The one line a refusal says on stderr."""
    lines = result.stderr.decode().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


@pytest.mark.parametrize("command", COMMANDS)
def test_stdin_gzip_and_zstd_give_what_the_plain_file_gives(command: str, tmp_path: Path) -> None:
    args, example = COMMANDS[command]
    data = example.read_bytes()
    packed = {"gz": gzip.compress(data), "zst": zstandard.ZstdCompressor().compress(data)}
    for suffix, content in packed.items():
        (tmp_path / f"{example.name}.{suffix}").write_bytes(content)
    (tmp_path / "misnamed").mkdir()  # gzip under the plain name: the bytes tell the compression, not the name
    (tmp_path / "misnamed" / example.name).write_bytes(packed["gz"])
    plain = run(*args, str(example))
    assert plain.returncode == 0, plain.stderr
    assert json.loads(plain.stdout)

    ways = [
        run(*args, "-", stdin=data),
        run(*args, "-", stdin=packed["gz"]),
        run(*args, str(tmp_path / f"{example.name}.gz")),
        run(*args, str(tmp_path / f"{example.name}.zst")),
        run(*args, str(tmp_path / "misnamed" / example.name)),
    ]

    for read in ways:
        assert (read.returncode, read.stdout, read.stderr) == (0, plain.stdout, b"")


@pytest.mark.parametrize("command", [*HARNESSES, "claude-code stream"])
def test_a_damaged_gzip_is_refused_in_one_line(command: str, tmp_path: Path) -> None:
    args, example = COMMANDS[command]
    damaged = tmp_path / f"{example.name}.gz"
    damaged.write_bytes(gzip.compress(example.read_bytes())[:60])  # cut short inside the first line

    for given, stdin in ((str(damaged), b""), ("-", damaged.read_bytes())):
        result = run(*args, given, stdin=stdin)

        assert (result.returncode, result.stdout) == (2, b"")
        assert said(result).startswith("gym-contract: ")
        assert given in said(result)
        assert "the gzip stream is damaged or ends early" in said(result)


def test_lineage_names_a_damaged_gzip_on_stdin_as_validate_does(tmp_path: Path) -> None:
    damaged = gzip.compress(COMMANDS["lineage"][1].read_bytes())[:60]

    result = run("lineage", "-", stdin=damaged)

    # A stream cut short is a damaged line, as for a file: its calls cannot be chained (exit 1).
    assert result.returncode == 1
    assert result.stderr.decode().startswith("gym-contract: <stdin>:1: input_truncated: the gzip stream is damaged")
    assert result.stdout.decode().startswith("<stdin>: 0 calls")


@pytest.mark.parametrize("command", HARNESSES)
def test_empty_stdin_is_refused_as_an_empty_file(command: str) -> None:
    args, _ = COMMANDS[command]

    result = run(*args, "-")

    assert (result.returncode, result.stdout) == (2, b"")
    assert said(result).startswith("gym-contract: cannot read -: the file is empty; ")


def test_a_damaged_line_of_a_compressed_file_keeps_its_number(tmp_path: Path) -> None:
    session = (EXAMPLES / "pi" / "pi-mono-2025-11" / "before-compaction.jsonl").read_bytes().split(b"\n")
    damaged = b"\n".join([session[0], b"", b"{not json", *session[1:]])
    packed = tmp_path / "session.jsonl.zst"
    packed.write_bytes(zstandard.ZstdCompressor().compress(damaged))

    for given, stdin, name in ((str(packed), b"", packed.name), ("-", gzip.compress(damaged), "<stdin>")):
        result = run("observe", "pi", given, stdin=stdin)

        assert result.returncode == 0, result.stderr
        gaps = json.loads(result.stdout)["ng_agent_observations"]["gaps"]
        assert {"code": "malformed_transcript_line", "invocation_id": None, "detail": f"{name}:3"} in gaps


def test_an_opencode_database_on_stdin_is_refused_saying_it_is_read_from_its_file(tmp_path: Path) -> None:
    database = tmp_path / "opencode.db"
    with sqlite3.connect(database) as connection:
        connection.execute("create table session (id text)")
    connection.close()

    result = run("observe", "opencode", "-", stdin=database.read_bytes())

    assert (result.returncode, result.stdout) == (2, b"")
    assert said(result).startswith(
        "gym-contract: cannot read -: an opencode.db is read from its own file, neither from stdin nor compressed; "
    )
