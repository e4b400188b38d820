"""Lineage never raises: any JSON value in any item hashes, any capture chains, any capture file prints."""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from gym_contract._limits import MAX_DEPTH
from gym_contract._values import NumberText
from gym_contract.capture import derive_record, read_capture
from gym_contract.cli._lineage import as_json
from gym_contract.lineage import (
    FINGERPRINT_VERSION,
    RESOLVED,
    ROOT,
    UNRESOLVED,
    LineageIndex,
    assistant_fingerprint,
    chain,
    conversation_digest,
    stamp,
)
from gym_contract.reading._json_parsing import loads
from tests.strategies import file_lines, hostile_records, json_values, jsonl, nested
from tests.support import run_in_process

HEX = re.compile(r"[0-9a-f]{64}")
ITEMS = st.lists(hostile_records(), max_size=3)
MISSPELT = {"role": "assistan", "content": [{"type": []}]}
"""A message of no known role whose part has a type that is not a string (found by fuzzing)."""


@contextlib.contextmanager
def room_for_any_json() -> Iterator[None]:
    """Let Python's json module write what the fingerprint hashes: deep nesting, integers of any length."""
    limit, digits = sys.getrecursionlimit(), sys.get_int_max_str_digits()
    sys.setrecursionlimit(20_000)
    sys.set_int_max_str_digits(0)
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)
        sys.set_int_max_str_digits(digits)


def frame(tag: int, value: str) -> bytes:
    data = value.encode("utf-8", "surrogatepass")
    return bytes([tag]) + len(data).to_bytes(8, "big") + data


def _marked(value: Any) -> tuple[Any, dict[str, str]]:
    """``value`` with each `NumberText` replaced by a string that stands for it, and what each stands for."""
    texts: dict[str, str] = {}
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any]] = [(value, root, 0)]
    while stack:
        item, parent, slot = stack.pop()
        if isinstance(item, NumberText):
            marker = f"\x00number {len(texts)}\x00"
            texts[json.dumps(marker, ensure_ascii=False)] = item.text
            item = marker
        elif isinstance(item, dict):
            copy: Any = dict(item)
            stack.extend((child, copy, key) for key, child in item.items())
            item = copy
        elif isinstance(item, list):
            copy = list(item)
            stack.extend((child, copy, index) for index, child in enumerate(item))
            item = copy
        parent[slot] = item
    return root[0], texts


def part_fingerprint(part: dict[str, Any]) -> str:
    """The fingerprint of an assistant message holding one part, as the lineage page specifies it: what
    Python's json module writes, and a number Python cannot hold (`NumberText`) as its JSON text."""
    marked, texts = _marked(part)
    encoder = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    with room_for_any_json():
        try:
            canonical = encoder.encode(marked)
        except RecursionError:
            # Python 3.12's C encoder has a depth limit of its own that no recursion limit raises; the json
            # module's Python encoder writes the same text and goes as deep as the recursion limit allows.
            canonical = "".join(encoder.iterencode(marked))
    for marker, number in texts.items():
        canonical = canonical.replace(marker, number)
    fields = frame(0x04, part["type"]) + frame(0x05, canonical)
    return hashlib.sha256(b"nemo-gym-lineage" + fields).hexdigest()


def assistant_part(value: Any) -> dict[str, Any]:
    return {"type": "measurement", "value": value}


# ------------------------------------------------------------------------------------------ laws


@given(ITEMS, ITEMS)
def test_any_items_hash_and_stamp_without_raising(request: list[Any], output: list[Any]) -> None:
    fingerprint = assistant_fingerprint(request)
    assert fingerprint == "" or HEX.fullmatch(fingerprint)
    assert HEX.fullmatch(conversation_digest(output))
    entry = stamp("call", request, output)
    assert entry.fingerprint_version == FINGERPRINT_VERSION
    assert entry.continuation_fingerprint == "" or HEX.fullmatch(entry.continuation_fingerprint)


@given(json_values())
def test_canonical_json_is_what_pythons_json_module_writes_at_any_depth_and_any_integer_size(value: Any) -> None:
    part = assistant_part(value)
    assert assistant_fingerprint([{"role": "assistant", "content": [part]}]) == part_fingerprint(part)


@given(ITEMS, ITEMS, ITEMS)
def test_any_request_resolves_and_a_call_continued_whole_resolves_to_that_call(
    request: list[Any], output: list[Any], other: list[Any]
) -> None:
    index = LineageIndex([stamp("call", request, output)])
    assert index.resolve(other).status in (ROOT, RESOLVED, UNRESOLVED)
    continued = index.resolve([*request, *output])
    if assistant_fingerprint(output):
        assert (continued.status, continued.parent_call_id) == (RESOLVED, "call")


@given(st.lists(hostile_records(), max_size=5))
def test_any_capture_chains_every_call_into_exactly_one_conversation(exchanges: list[Any]) -> None:
    records = [derive_record(exchange if isinstance(exchange, dict) else {}, n) for n, exchange in enumerate(exchanges)]
    lineage = chain(records)
    placed = [call for conversation in lineage.conversations for call in conversation.calls]
    assert sorted(placed) == sorted(lineage.calls)


@given(file_lines(hostile_records()), st.sampled_from(["json", "text"]))
def test_the_command_takes_any_capture_file_and_its_json_reads_back_as_the_lineage(
    lines: list[bytes], output: str
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "r-1.capture.jsonl"
        path.write_bytes(jsonl(lines))
        status, out, err = run_in_process("lineage", str(path), "--format", output)
        capture = read_capture(path, "r-1")
        expected = as_json(chain(capture.records), capture.damaged_lines)
    assert status in (0, 1, 2)
    assert all(line.startswith("gym-contract: ") for line in err.splitlines())
    if output == "json":
        assert loads(out) == expected


# ------------------------------------------------------------------------------ crash classes pinned


def test_content_nested_a_thousand_levels_hashes_as_its_canonical_json() -> None:
    part = assistant_part(nested("deep", 1000))
    assert assistant_fingerprint([{"role": "assistant", "content": [part]}]) == part_fingerprint(part)


def test_content_nested_three_thousand_levels_hashes_as_the_json_module_writes_it_on_every_python() -> None:
    # Found by Hypothesis on Python 3.12, whose C json encoder stops at a depth of its own.
    part = assistant_part(nested(None, 3000, "mixed"))
    assert assistant_fingerprint([{"role": "assistant", "content": [part]}]) == part_fingerprint(part)


def test_an_integer_of_more_than_4300_digits_hashes_as_its_digits_like_the_text_a_reader_keeps() -> None:
    as_integer = [{"role": "assistant", "content": [assistant_part(10**5000)]}]
    as_text = [{"role": "assistant", "content": [assistant_part(NumberText("1" + "0" * 5000))]}]
    assert (
        assistant_fingerprint(as_integer)
        == assistant_fingerprint(as_text)
        == part_fingerprint(assistant_part(10**5000))
    )


def test_a_part_whose_type_is_not_a_string_is_hashed_whole_with_an_empty_type() -> None:
    digest_fields = frame(0x01, "assistan") + frame(0x04, "") + frame(0x05, '{"type":[]}')
    assert assistant_fingerprint([MISSPELT]) == ""
    assert conversation_digest([MISSPELT]) == hashlib.sha256(b"nemo-gym-lineage-context" + digest_fields).hexdigest()
    assert stamp("call", [MISSPELT], [MISSPELT]).context_length == 3


def test_an_item_whose_type_is_not_a_string_is_hashed_whole_with_an_empty_type() -> None:
    fields = frame(0x0A, "") + frame(0x0B, '{"type":{"name":"function_call"}}')
    item = {"type": {"name": "function_call"}}
    assert assistant_fingerprint([item]) == ""
    assert conversation_digest([item]) == hashlib.sha256(b"nemo-gym-lineage-context" + fields).hexdigest()


def test_a_captured_request_whose_part_type_is_not_a_string_is_chained(tmp_path: Path) -> None:
    path = tmp_path / "r-1.capture.jsonl"
    path.write_text(json.dumps({"dialect": "messages", "request": {"messages": [MISSPELT]}}) + "\n")
    assert chain(read_capture(path, "r-1").records).calls["#0"].resolution.status == ROOT
    assert run_in_process("lineage", str(path))[0] == 0


def at_stack_depth(frames: int, work: Any) -> Any:
    return work() if frames == 0 else at_stack_depth(frames - 1, work)


def test_argument_text_nested_deeper_than_the_readers_limit_is_kept_as_text_at_any_stack_depth() -> None:
    def arguments_field(arguments: str) -> list[Any]:
        fingerprint = assistant_fingerprint(
            [{"role": "assistant", "tool_calls": [{"function": {"arguments": arguments}}]}]
        )
        candidates = {"canonical": arguments.replace(" ", ""), "as written": arguments}
        expected = {
            name: hashlib.sha256(
                b"nemo-gym-lineage" + frame(0x06, "") + frame(0x07, "") + frame(0x08, text)
            ).hexdigest()
            for name, text in candidates.items()
        }
        return [name for name, digest in expected.items() if digest == fingerprint]

    within, beyond = "[ " * MAX_DEPTH + "]" * MAX_DEPTH, "[ " * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)
    for frames in (0, 600):
        assert at_stack_depth(frames, lambda: arguments_field(within)) == ["canonical"]
        assert at_stack_depth(frames, lambda: arguments_field(beyond)) == ["as written"]


def test_a_capture_line_with_a_time_no_double_holds_is_read_and_chained(tmp_path: Path) -> None:
    path = tmp_path / "r-1.capture.jsonl"
    path.write_text(json.dumps({"request": {"input": "hi"}, "started_at": 10**400}) + "\n")
    capture = read_capture(path, "r-1")
    assert (capture.damaged_lines, capture.records[0].started_at) == ((), None)
    assert run_in_process("lineage", str(path), "--format", "json")[0] == 0
