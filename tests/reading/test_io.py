"""The streaming readers: every damaged line is a located diagnostic, every other line is still read."""

from __future__ import annotations

import gzip
import io
import json
import random
import sys
import tracemalloc
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import orjson
import pytest
import zstandard
from hypothesis import given
from hypothesis import strategies as st

from gym_contract.diagnostics import Diagnostic
from gym_contract.reading._json_parsing import parse_record
from gym_contract.reading._records import RawLine, ReadStats, iter_lines, iter_records, read_json_document
from gym_contract.reading._sources import InputUnreadable, Source, open_source
from tests.support import Pieces

LINES = [{"kind": "trajectory", "i": i, "text": "é" * (i % 3)} for i in range(50)]
JSONL = b"".join(orjson.dumps(line) + b"\n" for line in LINES)


def write(tmp_path: Path, name: str, data: bytes) -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def records(path: str, **options: Any) -> list[tuple[int | None, Any]]:
    return list(iter_records(path, **options))


def codes(items: list[tuple[int | None, Any]]) -> list[tuple[int | None, str]]:
    return [(line, item.code) for line, item in items if isinstance(item, Diagnostic)]


def test_a_utf8_bom_at_the_start_is_not_part_of_the_first_record(tmp_path: Path) -> None:
    assert records(write(tmp_path, "bom.jsonl", b'\xef\xbb\xbf{"a":1}\n{"b":2}\n')) == [(1, {"a": 1}), (2, {"b": 2})]


def test_a_bom_split_across_reads_of_a_pipe_is_still_removed() -> None:
    lines = list(iter_lines(Source("<pipe>", Pieces(b'\xef\xbb\xbf{"a":1}\n', piece=1))))
    assert lines == [RawLine(1, b'{"a":1}')]


def test_compression_is_recognised_through_a_pipe_that_hands_out_one_byte_at_a_time() -> None:
    source = Source("<pipe>", Pieces(gzip.compress(b'{"a":1}\n'), piece=1))
    assert (source.compression, list(iter_lines(source))) == ("gzip", [RawLine(1, b'{"a":1}')])


def test_crlf_line_endings_are_read_like_lf(tmp_path: Path) -> None:
    path = write(tmp_path, "crlf.jsonl", b'{"a":1}\r\n{"b":2}\r\n')
    assert records(path) == [(1, {"a": 1}), (2, {"b": 2})]


def test_blank_and_whitespace_lines_are_skipped_but_keep_their_line_numbers(tmp_path: Path) -> None:
    stats = ReadStats()
    path = write(tmp_path, "blank.jsonl", b'\n{"a":1}\n  \t\n\r\n{"b":2}\n\n')
    assert records(path, stats=stats) == [(2, {"a": 1}), (5, {"b": 2})]
    assert stats == ReadStats(lines_seen=6, blank_lines=4, bytes_yielded=14)


def test_the_last_line_is_read_without_a_trailing_newline(tmp_path: Path) -> None:
    assert records(write(tmp_path, "last.jsonl", b'{"a":1}\n{"b":2}')) == [(1, {"a": 1}), (2, {"b": 2})]


def test_an_invalid_utf8_line_is_reported_and_the_lines_around_it_are_still_read(tmp_path: Path) -> None:
    path = write(tmp_path, "utf8.jsonl", b'{"a":1}\n{"b":"\xff"}\n{"c":3}\n')
    items = records(path)
    assert items[0] == (1, {"a": 1})
    assert items[2] == (3, {"c": 3})
    line, diagnostic = items[1]
    assert (line, diagnostic.code, diagnostic.line, diagnostic.source) == (2, "utf8_invalid", 2, path)
    assert "offset 6" in diagnostic.message


@pytest.mark.parametrize(
    ("text", "type_name"),
    [(b"[1, 2]", "array"), (b'"text"', "string"), (b"3.5", "number"), (b"null", "null"), (b"true", "true/false")],
)
def test_a_line_that_is_valid_json_but_not_an_object_names_its_type(text: bytes, type_name: str) -> None:
    diagnostic = parse_record(text)
    assert isinstance(diagnostic, Diagnostic)
    assert diagnostic.code == "record_not_object"
    assert f"JSON {type_name}," in diagnostic.message


def test_a_truncated_last_line_is_still_read_and_reported_as_invalid_json(tmp_path: Path) -> None:
    path = write(tmp_path, "cut.jsonl", b'{"a":1}\n{"b":[1, 2')
    items = records(path)
    assert items[0] == (1, {"a": 1})
    assert codes(items) == [(2, "json_invalid")]
    assert "unexpected end of data" in items[1][1].message


@pytest.mark.parametrize("token", [b"NaN", b"Infinity", b"-Infinity"])
def test_nan_and_infinity_are_reported_as_not_json(token: bytes) -> None:
    diagnostic = parse_record(b'{"reward": ' + token + b"}")
    assert isinstance(diagnostic, Diagnostic)
    assert diagnostic.code == "json_invalid"
    assert "NaN and Infinity are not JSON" in diagnostic.message


def test_other_syntax_errors_keep_orjsons_message_with_its_position() -> None:
    diagnostic = parse_record(b'{"a": 1,}')
    assert isinstance(diagnostic, Diagnostic)
    assert diagnostic.code == "json_invalid"
    assert "NaN" not in diagnostic.message
    assert "line 1 column" in diagnostic.message


def test_a_repeated_top_level_key_is_reported_with_an_empty_path() -> None:
    diagnostic = parse_record(b'{"reward": 1, "reward": 0}')
    assert isinstance(diagnostic, Diagnostic)
    assert (diagnostic.code, diagnostic.path) == ("json_duplicate_key", "")
    assert "'reward'" in diagnostic.message


def test_a_repeated_nested_key_is_reported_with_the_json_pointer_of_its_object() -> None:
    diagnostic = parse_record(b'{"a/b": [{"x": 1}, {"id": 1, "y~": {"k": 1, "k": 2}}]}')
    assert isinstance(diagnostic, Diagnostic)
    assert (diagnostic.code, diagnostic.path) == ("json_duplicate_key", "/a~1b/1/y~0")
    assert "'k'" in diagnostic.message


def test_compact_orjson_lines_are_accepted_without_the_slow_duplicate_check(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_slow_path(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the stdlib parser ran on a compact orjson line")

    monkeypatch.setattr(json, "loads", no_slow_path)  # the very module the parser uses
    for line in JSONL.splitlines():
        assert parse_record(line) == orjson.loads(line)


def test_lines_in_another_layout_without_repeated_keys_are_accepted() -> None:
    text = json.dumps({"a": [1, {"b": None, "c": "é"}], "d": 1e300}).encode()
    assert parse_record(text) == {"a": [1, {"b": None, "c": "é"}], "d": 1e300}


def test_100000_levels_of_nesting_are_invalid_json_not_a_recursion_error() -> None:
    diagnostic = parse_record(b"[" * 100_000 + b"]" * 100_000)
    assert isinstance(diagnostic, Diagnostic)
    assert diagnostic.code == "json_invalid"
    assert "nesting is deeper than orjson's 1024 levels" in diagnostic.message


def test_nesting_within_orjsons_limit_is_checked_for_repeated_keys_exactly() -> None:
    depth = 1023
    inner = b'{"k": 1, "k": 2}'
    diagnostic = parse_record(b'{"a": ' * depth + inner + b"}" * depth)
    assert isinstance(diagnostic, Diagnostic)
    assert (diagnostic.code, diagnostic.path) == ("json_duplicate_key", "/a" * depth)
    assert isinstance(parse_record(b'{"a": ' * depth + b"{}" + b"}" * depth), dict)


@pytest.mark.parametrize("chunk_bytes", [4, 1024])
def test_a_line_over_the_limit_is_reported_and_the_next_line_is_still_read(chunk_bytes: int) -> None:
    data = b'{"a":1}\n' + b'{"long":"' + b"x" * 100 + b'"}\n{"b":2}\r\n' + b"y" * 100
    items = list(iter_lines(Source("<test>", io.BytesIO(data)), max_line_bytes=32, chunk_bytes=chunk_bytes))
    assert items[0] == RawLine(1, b'{"a":1}')
    assert isinstance(items[1], Diagnostic)
    assert (items[1].code, items[1].line) == ("line_too_long", 2)
    assert "32-byte limit" in items[1].message
    assert items[2] == RawLine(3, b'{"b":2}')
    assert isinstance(items[3], Diagnostic)
    assert (items[3].code, items[3].line) == ("line_too_long", 4)
    assert len(items) == 4


def _lines_as_a_whole(data: bytes, limit: int) -> tuple[list[RawLine | tuple[str, int]], ReadStats]:
    """What reading ``data`` line by line gives, told from the whole text at once: the law for any way of reading it."""
    stats, items = ReadStats(), []
    lines = data.removeprefix(b"\xef\xbb\xbf").split(b"\n")
    if not lines[-1]:
        lines.pop()  # the text ends with a newline, or is empty: no line after it
    for number, line in enumerate(lines, start=1):
        stats.lines_seen = number
        line = line.removesuffix(b"\r")
        if len(line) > limit:
            items.append(("line_too_long", number))
        elif not line or line.isspace():
            stats.blank_lines += 1
        else:
            stats.bytes_yielded += len(line)
            items.append(RawLine(number, line))
    return items, stats


@given(
    data=st.lists(st.sampled_from([b"a", b"{}", b" ", b"\r", b"\n", b"\r\n", b"\xef\xbb\xbf"]), max_size=60).map(
        b"".join
    ),
    limit=st.integers(1, 12),
    chunk_bytes=st.integers(1, 16),
    piece=st.integers(1, 16),
)
def test_lines_are_the_same_however_the_input_is_cut_into_reads(
    data: bytes, limit: int, chunk_bytes: int, piece: int
) -> None:
    stats = ReadStats()
    source = Source("<pipe>", Pieces(data, piece=piece))
    read = list(iter_lines(source, max_line_bytes=limit, stats=stats, chunk_bytes=chunk_bytes))
    told = [(item.code, item.line) if isinstance(item, Diagnostic) else item for item in read]
    assert (told, stats) == _lines_as_a_whole(data, limit)


def test_a_line_exactly_at_the_limit_is_read_even_when_a_read_ends_between_its_cr_and_lf() -> None:
    data = b'{"a":"' + b"x" * 19 + b'"}\r\n'  # 27 bytes, then "\r" as the last byte of the fourth read
    items = list(iter_lines(Source("<test>", io.BytesIO(data)), max_line_bytes=27, chunk_bytes=8))
    assert items == [RawLine(1, data[:-2])]


def test_memory_stays_bounded_by_the_limit_and_the_chunk_size_on_a_huge_line() -> None:
    chunk, limit, line_bytes = 1024 * 1024, 4 * 1024 * 1024, 64 * 1024 * 1024
    block = b"x" * chunk

    class HugeLine:
        """64 MiB of one line, then a short record, made on the fly without holding them."""

        def __init__(self) -> None:
            self.left, self.tail = line_bytes, b'\n{"after":1}\n'

        def read(self, size: int) -> bytes:
            if self.left > 0:
                self.left -= size
                return block if size == chunk else block[:size]
            tail, self.tail = self.tail, b""
            return tail

    tracemalloc.start()
    try:
        items = list(iter_lines(Source("<huge>", HugeLine()), max_line_bytes=limit, chunk_bytes=chunk))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [item.code if isinstance(item, Diagnostic) else item for item in items] == [
        "line_too_long",
        RawLine(2, b'{"after":1}'),
    ]
    assert peak < limit + 3 * chunk


def test_an_empty_file_yields_nothing_and_an_empty_json_document_is_damaged(tmp_path: Path) -> None:
    assert records(write(tmp_path, "empty.jsonl", b"")) == []
    assert records(write(tmp_path, "blank.jsonl.gz", gzip.compress(b"\n\n"))) == []
    for content in (b"", b" \n\n"):  # a JSON document holds one value: none at all is no document
        [(line, damaged)] = records(write(tmp_path, "empty.json", content))
        assert isinstance(damaged, Diagnostic)
        assert (line, damaged.code, damaged.line) == (None, "json_invalid", 1)


@pytest.mark.parametrize("compress", [gzip.compress, zstandard.ZstdCompressor().compress], ids=["gzip", "zstd"])
def test_compressed_files_yield_the_same_records_as_plain_whatever_their_name(tmp_path: Path, compress: Any) -> None:
    plain = records(write(tmp_path, "plain.jsonl", JSONL))
    half = len(JSONL) // 2
    several_frames = compress(JSONL[:half]) + compress(JSONL[half:])
    assert records(write(tmp_path, "rollouts.data", compress(JSONL))) == plain
    assert records(write(tmp_path, "frames.jsonl", several_frames)) == plain


@pytest.mark.parametrize("compress", [gzip.compress, zstandard.ZstdCompressor().compress], ids=["gzip", "zstd"])
def test_a_truncated_stream_yields_the_records_before_it_then_input_truncated(tmp_path: Path, compress: Any) -> None:
    data = b"".join(orjson.dumps({"i": i, "pad": "z" * (i % 97)}) + b"\n" for i in range(20_000))
    compressed = compress(data)
    items = records(write(tmp_path, "cut.jsonl.gz", compressed[: len(compressed) * 3 // 4]))
    *good, (last_line, last) = items
    assert len(good) > 1000
    assert all(isinstance(record, dict) for _, record in good)
    assert [record["i"] for _, record in good] == list(range(len(good)))
    assert isinstance(last, Diagnostic)
    assert (last.code, last.line, last_line) == ("input_truncated", len(good) + 1, len(good) + 1)


@pytest.mark.parametrize("kept", [0.1, 0.9], ids=["cut early in the long line", "cut late in it"])
def test_a_line_over_the_limit_that_the_damage_cuts_short_is_one_damaged_line(tmp_path: Path, kept: float) -> None:
    """Reported once, as the truncation: a report's damaged lines are never more than its lines."""
    noise = random.Random(7).randbytes(100_000).hex().encode()  # barely compresses
    data = b'{"a":1}\n' + b'{"long":"' + noise + b'"}\n{"b":2}\n'
    compressed = gzip.compress(data)
    stats = ReadStats()
    path = write(tmp_path, "cut.jsonl.gz", compressed[: int(len(compressed) * kept)])
    items = records(path, max_line_bytes=64, stats=stats)
    assert codes(items) == [(2, "input_truncated")]
    assert items[0] == (1, {"a": 1})
    assert stats.lines_seen == 2


def test_a_damaged_gzip_stream_is_reported_once_and_ends_the_file(tmp_path: Path) -> None:
    damaged = bytearray(gzip.compress(JSONL))
    damaged[-6] ^= 0xFF  # inside the CRC
    assert codes(records(write(tmp_path, "crc.jsonl.gz", bytes(damaged)))) == [(len(LINES) + 1, "input_truncated")]


def test_consumed_counts_raw_bytes_on_disk_for_a_progress_bar(tmp_path: Path) -> None:
    compressed = gzip.compress(JSONL)
    with open_source(write(tmp_path, "progress.jsonl.gz", compressed)) as source:
        assert (source.name.endswith("progress.jsonl.gz"), source.size, source.compression) == (
            True,
            len(compressed),
            "gzip",
        )
        assert sum(1 for _ in iter_lines(source)) == len(LINES)
        assert source.consumed() == len(compressed)


def test_stdin_is_read_when_the_path_is_a_dash(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", SimpleNamespace(buffer=io.BytesIO(gzip.compress(b'{"a":1}\n[2]\n'))))
    items = records("-")
    assert items[0] == (1, {"a": 1})
    assert (items[1][1].code, items[1][1].source) == ("record_not_object", "<stdin>")
    with open_source("-") as source:
        assert (source.name, source.size) == ("<stdin>", None)


def test_a_missing_path_cannot_be_opened(tmp_path: Path) -> None:
    missing = str(tmp_path / "missing.jsonl")
    with pytest.raises(InputUnreadable) as raised:
        records(missing)
    assert str(raised.value) == f"cannot open {missing!r}: No such file or directory"
    assert "\n" not in str(raised.value)


def test_a_directory_cannot_be_opened(tmp_path: Path) -> None:
    with pytest.raises(InputUnreadable, match="Is a directory"):
        open_source(str(tmp_path))


def test_a_read_error_after_opening_is_a_diagnostic_not_an_exception() -> None:
    class FailingDisk:
        def __init__(self) -> None:
            self.reads = 0

        def read(self, size: int) -> bytes:
            self.reads += 1
            if self.reads > 2:
                raise OSError(5, "Input/output error")
            return b'{"a":1}\n{"b"'

    items = list(iter_lines(Source("<disk>", FailingDisk()), chunk_bytes=64))
    assert items[0] == RawLine(1, b'{"a":1}')
    assert isinstance(items[-1], Diagnostic)
    assert (items[-1].code, items[-1].line) == ("input_unreadable", 3)
    assert "Input/output error" in items[-1].message


def test_a_json_object_document_is_one_record(tmp_path: Path) -> None:
    path = write(tmp_path, "bundle.json", json.dumps({"kind": "bundle", "items": [1, 2]}, indent=2).encode())
    assert records(path) == [(None, {"kind": "bundle", "items": [1, 2]})]


def test_a_json_array_document_yields_each_element_and_flags_the_bad_ones(tmp_path: Path) -> None:
    text = b'[{"a": 1},\n 7,\n {"b": 1, "b": 2},\n {"c": {"d": 1, "d": 1}}]'
    items = records(write(tmp_path, "many.json.zst", zstandard.ZstdCompressor().compress(text)))
    assert items[0] == (None, {"a": 1})
    found = [(item.code, item.record, item.path) for _, item in items[1:]]
    assert found == [("record_not_object", 1, ""), ("json_duplicate_key", 2, ""), ("json_duplicate_key", 3, "/c")]


def test_a_json_document_with_a_syntax_error_gives_its_line(tmp_path: Path) -> None:
    items = records(write(tmp_path, "bad.json", b'{\n  "a": 1,\n  "b": NaN\n}\n'))
    assert [(item.code, item.line) for _, item in items] == [("json_invalid", 3)]


def test_a_json_document_over_the_limit_is_not_parsed() -> None:
    [(line, item)] = read_json_document(Source("<doc>", io.BytesIO(b"[" + b"1," * 100 + b"1]")), max_bytes=64)
    assert isinstance(item, Diagnostic)
    assert (line, item.code) == (None, "line_too_long")


def test_integers_stay_exact_beyond_64_bits() -> None:
    record = parse_record(b'{"big": 161828512205952623050752, "small": 7, "id": "12345678901234567890123"}')
    assert record == {"big": 161828512205952623050752, "small": 7, "id": "12345678901234567890123"}
    assert isinstance(record, dict)
    assert type(record["big"]) is int
    assert parse_record(b'{"f": 1.5e300, "digits": "00000000000000000000"}') == {
        "f": 1.5e300,
        "digits": "00000000000000000000",
    }


@pytest.mark.parametrize("piece", [1, 2, 64])
def test_a_blank_line_longer_than_the_limit_is_too_long_however_it_is_read(piece: int) -> None:
    # Found by Hypothesis: read a byte at a time, two spaces over a limit of one were a blank line,
    # three were too long; read whole, both were blank.
    for spaces in (2, 3, 40):
        source = Source("<pipe>", Pieces(b" " * spaces + b"\n1\n", piece=piece))
        read = list(iter_lines(source, max_line_bytes=1 if spaces < 40 else 8, chunk_bytes=piece))
        assert [(item.code, item.line) if isinstance(item, Diagnostic) else item for item in read] == [
            ("line_too_long", 1),
            RawLine(2, b"1"),
        ]
