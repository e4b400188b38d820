"""One strict-text policy for every reader: a lone surrogate is refused whatever number stands beside it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given

from gym_contract.diagnostics import Diagnostic
from gym_contract.producers.claude_code._files import stream_events
from gym_contract.reading._json_parsing import loads, parse_record
from gym_contract.validation import check_line
from tests.strategies import OUT_OF_RANGE_NUMBER_TOKENS, lines_beside_a_number
from tests.support import REPO

NOW = 1_786_100_000.0
ROLLOUT = b'{"_ng_task_index":1,"_ng_rollout_index":0,'


def _without_number(value: Any) -> Any:
    return {key: item for key, item in value.items() if key != "n"} if isinstance(value, dict) else value


def _verdicts(line: bytes) -> dict[str, Any]:
    """What each reader of the package makes of one line, the number `n` left out of what it accepted."""
    found: dict[str, Any] = {}
    try:
        found["loads"] = ("accepted", _without_number(loads(line)))
    except orjson.JSONDecodeError as error:
        found["loads"] = ("refused", str(error))
    parsed = parse_record(line)
    found["parse_record"] = (parsed.code, parsed.message) if isinstance(parsed, Diagnostic) else "accepted"
    for fast in (True, False):
        for kind in (None, "rollout"):
            checked = check_line(line, kind, now=NOW, fast=fast)
            found[f"check_line fast={fast} kind={kind}"] = [(d.code, d.message, d.path) for d in checked.diagnostics]
    found["stream_events"] = [_without_number(event) for event in stream_events([line])]
    return found


@given(lines_beside_a_number())
def test_law_a_number_beside_a_string_never_changes_what_a_reader_accepts(lines: tuple[bytes, bytes]) -> None:
    with_number, with_zero = lines
    assert _verdicts(with_number) == _verdicts(with_zero)


@pytest.mark.parametrize("number", OUT_OF_RANGE_NUMBER_TOKENS, ids=lambda n: n[:12].decode())
@pytest.mark.parametrize("first", [True, False], ids=["number first", "string first"])
def test_a_lone_surrogate_is_json_invalid_beside_any_number(number: bytes, first: bool) -> None:
    fields = [b'"n":' + number, b'"v":"a\\ud800b"']
    line = ROLLOUT + b",".join(fields if first else fields[::-1]) + b"}"
    refused = parse_record(line)
    assert isinstance(refused, Diagnostic)
    assert (refused.code, refused.message.split(":")[0]) == ("json_invalid", "no low surrogate in string")
    assert [d.code for d in check_line(line, now=NOW).diagnostics] == ["json_invalid"]


@pytest.mark.parametrize(
    ("escapes", "problem"),
    [
        (b"\\ud800", "no low surrogate in string"),
        (b"\\udc00", "invalid high surrogate in string"),
        (b"\\ud800\\u0041", "invalid low surrogate in string"),
        (b"\\ud800\\n", "no low surrogate in string"),
        (b"\\\\\\ud800", "no low surrogate in string"),
    ],
)
def test_the_fallback_says_what_orjson_says_at_the_same_place(escapes: bytes, problem: str) -> None:
    plain = b'[0    , "x' + escapes + b'"]'
    beside = b'[1e999, "x' + escapes + b'"]'
    with pytest.raises(orjson.JSONDecodeError) as from_orjson:
        loads(plain)
    with pytest.raises(orjson.JSONDecodeError) as from_fallback:
        loads(beside)
    assert str(from_orjson.value) == str(from_fallback.value)
    assert str(from_fallback.value).startswith(problem)


@pytest.mark.parametrize(
    "text",
    [b'["\\\\ud800", 1e999]', b'["\\ud800\\udc00", 1e999]', b'["\\\\\\\\ud800", 1e999]', b'["\\u00e9", 1e999]'],
)
def test_escapes_that_are_text_are_still_read_beside_a_number_out_of_range(text: bytes) -> None:
    assert loads(text)[0] == json.loads(text.replace(b"1e999", b"0"))[0]


def test_a_str_holding_a_lone_surrogate_is_refused_as_json_not_raised_as_unicode_error() -> None:
    with pytest.raises(orjson.JSONDecodeError, match="surrogates not allowed"):
        loads('{"a": "\ud800"}')


# ------------------------------------------------------------------------------------ the commands


def _gym(*arguments: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    done = subprocess.run(
        [sys.executable, "-m", "gym_contract", *arguments], input=stdin, capture_output=True, check=False
    )
    assert b"Traceback" not in done.stdout + done.stderr, done.stderr.decode(errors="replace")
    return done


def _rollout(number: bytes) -> bytes:
    source = (REPO / "examples" / "rollout-7-0.jsonl").read_bytes().splitlines()[0]
    return b'{"big": ' + number + b", " + source.replace(b'"Factor 391."', b'"Factor \\ud800 391."', 1)[1:]


def _diagnostics(done: subprocess.CompletedProcess[bytes]) -> list[tuple[Any, ...]]:
    return [(d["line"], d["code"], d["message"]) for d in json.loads(done.stdout)["diagnostics"]]


@pytest.mark.parametrize("how", ["--jobs 1", "--jobs 2", "stdin", "json document"])
def test_validate_refuses_the_line_the_same_way_on_every_path(tmp_path: Path, how: str) -> None:
    lines = [_rollout(b"0    "), _rollout(b"1e999"), _rollout(b"9" * 400)]
    path = tmp_path / ("rollouts.json" if how == "json document" else "rollouts.jsonl")
    found = []
    for line in lines:
        path.write_bytes(line + b"\n")
        if how == "stdin":
            done = _gym("validate", "-", "--format", "json", stdin=line + b"\n")
        else:
            done = _gym("validate", str(path), "--format", "json", *(how.split() if how.startswith("--") else ()))
        assert done.returncode == 1
        found.append([(line_number, code) for line_number, code, _ in _diagnostics(done)])
    assert found == [[(1, "json_invalid")]] * 3


@pytest.mark.parametrize("number", [b"1e999", b"9" * 400])
def test_project_reports_the_line_instead_of_failing_to_write_it(tmp_path: Path, number: bytes) -> None:
    path = tmp_path / "rollouts.jsonl"
    path.write_bytes(_rollout(number) + b"\n")
    done = _gym("project", str(path), "-o", str(tmp_path / "out.jsonl"))
    assert (tmp_path / "out.jsonl").read_bytes() == b""
    assert b"json_invalid" in done.stderr or b"damaged" in done.stderr


def test_observe_claude_code_takes_such_a_transcript_line_as_malformed(tmp_path: Path) -> None:
    config = tmp_path / "config"
    shutil.copytree(REPO / "examples" / "claude-code" / "spotter-v2.1.39", config)
    transcript = next((config / "projects").glob("*/*.jsonl"))
    events = [json.loads(line) for line in transcript.read_bytes().splitlines()]
    said = next(event for event in events if event.get("type") == "assistant")
    said = {**said, "uuid": "added", "parentUuid": events[-1].get("uuid")}
    said["message"] = {**said["message"], "content": [{"type": "text", "text": "x\ud800y"}]}
    added = b'{"n": 1e999, ' + json.dumps(said).encode()[1:]
    with transcript.open("ab") as handle:
        handle.write(added + b"\n")
    number = len(events) + 1

    done = _gym("observe", "claude-code", str(config), "--model-ref", "policy")

    assert done.returncode == 0
    gaps = json.loads(done.stdout)["ng_agent_observations"]["gaps"]
    assert {"code": "malformed_transcript_line", "invocation_id": None, "detail": f"{transcript.parent.name}/"
            f"{transcript.name}:{number}"} in gaps  # fmt: skip


@pytest.mark.parametrize(
    ("command", "said"),
    [(("observe", "atif"), b"json_invalid: no low surrogate in string"), (("outcome", "opencode"), b"not valid JSON")],
)
def test_the_document_readers_refuse_such_a_document_as_not_json(
    tmp_path: Path, command: tuple[str, ...], said: bytes
) -> None:
    document = tmp_path / "document.json"
    document.write_bytes(
        b'{"n": 1e999, "schema_version": "ATIF-v1.6", "session_id": "s", '
        b'"agent": {"name": "x\\ud800", "version": "1"}, "steps": []}\n'
    )
    done = _gym(*command, str(document))
    assert done.returncode == 2
    assert said in done.stderr
