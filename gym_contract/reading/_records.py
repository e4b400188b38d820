"""Reading rollout inputs record by record: JSONL lines and JSON documents; damage becomes diagnostics."""

from __future__ import annotations

import codecs
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from gym_contract._values import json_type
from gym_contract.diagnostics import Diagnostic
from gym_contract.reading._json_parsing import (
    decode_failure,
    duplicate_key,
    find_duplicates,
    loads,
    parse_record,
    proven_free_of_duplicates,
)
from gym_contract.reading._sources import DamagedStreamError, Source, open_source, uncompressed_name

DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024
CHUNK_BYTES = 1024 * 1024


@dataclass(frozen=True, slots=True)
class RawLine:
    """One non-blank physical line, without its line ending."""

    number: int
    data: bytes


@dataclass(slots=True)
class ReadStats:
    """Counters a reader fills in as it goes, for the run summary."""

    lines_seen: int = 0
    blank_lines: int = 0
    bytes_yielded: int = 0


def _chunks(source: Source, chunk_bytes: int) -> Iterator[bytes]:
    """The decompressed input in chunks, without a leading UTF-8 byte order mark (a share of a file,
    which starts inside it, has none to skip)."""
    head = b""
    # A pipe may deliver the three BOM bytes in separate reads.
    while source.at_start and len(head) < len(codecs.BOM_UTF8) and (more := source.read(chunk_bytes)):
        head += more
    if head := head.removeprefix(codecs.BOM_UTF8):
        yield head
    while chunk := source.read(chunk_bytes):
        yield chunk


def _too_long(number: int, limit: int) -> Diagnostic:
    return Diagnostic.of("line_too_long", f"the line is longer than the {limit:,}-byte limit; not parsed", line=number)


def _complete_line(number: int, data: bytes, max_line_bytes: int, stats: ReadStats) -> RawLine | Diagnostic | None:
    stats.lines_seen = number
    if data.endswith(b"\r"):
        data = data[:-1]
    if len(data) > max_line_bytes:
        return _too_long(number, max_line_bytes)
    if not data or data.isspace():
        stats.blank_lines += 1
        return None
    stats.bytes_yielded += len(data)
    return RawLine(number, data)


def iter_lines(
    source: Source,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    *,
    stats: ReadStats | None = None,
    chunk_bytes: int = CHUNK_BYTES,
) -> Iterator[RawLine | Diagnostic]:
    """Non-blank lines of `source` with their line numbers; problems in the input come as diagnostics.

    A line longer than ``max_line_bytes`` is reported and its bytes dropped as they come, blank or
    not, so that memory stays bounded by the limit and the size of a read, however long the line.
    It is reported once its end is read: a line that the input's damage cuts short is the truncation's
    to report, one diagnostic for one line.
    """
    stats = stats if stats is not None else ReadStats()
    chunks = _chunks(source, chunk_bytes)
    finished = 0  # lines whose newline has been read
    # The bytes read after the last newline, the start of a line; a line is copied out of it once.
    pending = bytearray()
    overflowing = False  # the current line passed the limit: its bytes are dropped up to its newline
    while True:
        try:
            chunk = next(chunks, b"")
        except DamagedStreamError as damage:
            # The line where reading broke is counted, as it is reported: a report's lines add up.
            stats.lines_seen = finished + 1
            yield Diagnostic.of("input_truncated", f"{damage}; line {finished + 1} onwards is lost", line=finished + 1)
            return
        except OSError as error:
            stats.lines_seen = finished + 1
            message = f"reading stopped: {error.strerror or error}"
            yield Diagnostic.of("input_unreadable", message, line=finished + 1)
            return
        if not chunk:
            break
        searched = len(pending)  # what was pending holds no newline
        if overflowing:
            cut = chunk.find(b"\n")
            if cut < 0:
                continue
            finished += 1
            stats.lines_seen = finished
            yield _too_long(finished, max_line_bytes)
            overflowing, searched = False, 0
            pending += memoryview(chunk)[cut + 1 :]
        else:
            pending += chunk
        start = 0
        with memoryview(pending) as view:
            while (end := pending.find(b"\n", searched)) >= 0:
                finished += 1
                if end - start > max_line_bytes + 1:  # over the limit even without a "\r": not copied
                    stats.lines_seen = finished
                    yield _too_long(finished, max_line_bytes)
                elif (item := _complete_line(finished, bytes(view[start:end]), max_line_bytes, stats)) is not None:
                    yield item
                start = searched = end + 1
        del pending[:start]
        # One spare byte: the line may still end in the "\r" of a CRLF, which does not count.
        if len(pending) > max_line_bytes + 1:
            overflowing = True
            pending.clear()
    if overflowing:
        stats.lines_seen = finished + 1
        yield _too_long(finished + 1, max_line_bytes)
    elif pending and (item := _complete_line(finished + 1, bytes(pending), max_line_bytes, stats)) is not None:
        yield item


def read_whole(source: Source, max_bytes: int | None = None) -> bytes | None:
    """All of the decompressed input, without a leading byte order mark; None once it passes ``max_bytes``,
    which stops the reading there. Raises `DamagedStreamError` or OSError."""
    document = bytearray()
    for chunk in _chunks(source, CHUNK_BYTES):
        document += chunk
        if max_bytes is not None and len(document) > max_bytes:
            return None
    # The copy is the one kept: the buffer goes with this frame, and the input is not held twice.
    return bytes(document)


IgnoreDuplicate = Callable[[dict[str, Any], tuple[str | int, ...]], bool]
"""Told a record and the path of an object in it that repeats a key: whether that does not count."""


def read_json_document(
    source: Source, max_bytes: int, *, stats: ReadStats | None = None, ignore: IgnoreDuplicate | None = None
) -> Iterator[tuple[int | None, dict[str, Any] | Diagnostic]]:
    """The records of one JSON document: an object is one record, an array gives one per element."""
    stats = stats if stats is not None else ReadStats()
    try:
        data = read_whole(source, max_bytes)
    except DamagedStreamError as damage:
        yield None, Diagnostic.of("input_truncated", f"{damage}; the document was not parsed")
        return
    except OSError as error:
        yield None, Diagnostic.of("input_unreadable", f"reading stopped: {error.strerror or error}")
        return
    if data is None:
        message = f"the JSON document is larger than the limit of {max_bytes:,} bytes; it was not parsed"
        yield None, Diagnostic.of("line_too_long", message)
        return
    stats.lines_seen = data.count(b"\n") + (bool(data) and not data.endswith(b"\n"))
    if not data or data.isspace():
        # No JSON value at all is a damaged document, as `json.loads("")` says, not a document of no records.
        stats.lines_seen = max(stats.lines_seen, 1)
        yield None, Diagnostic.of("json_invalid", "the document is empty: a JSON document holds one value", line=1)
        return
    stats.bytes_yielded = len(data)
    try:
        value = loads(data)
    except orjson.JSONDecodeError as error:
        diagnostic, line = decode_failure(data, error)
        yield None, diagnostic.at(line=line)
        return
    repeated = [] if proven_free_of_duplicates(value, data) else find_duplicates(data)
    if isinstance(value, dict):
        counted = [(path, key) for path, key in repeated if ignore is None or not ignore(value, path)]
        yield None, (duplicate_key(*counted[0]) if counted else value)
        return
    if not isinstance(value, list):
        message = f"the document is a JSON {json_type(value)}, not an object or an array of objects"
        yield None, Diagnostic.of("record_not_object", message)
        return
    # In an array, the first segment of a path is the record's index; the rest is the path inside it.
    repeated_by_record: dict[str | int, tuple[tuple[str | int, ...], str]] = {}
    for path, key in repeated:
        element = value[path[0]] if isinstance(path[0], int) else None
        if ignore is None or not (isinstance(element, dict) and ignore(element, path[1:])):
            repeated_by_record.setdefault(path[0], (path[1:], key))
    for index, element in enumerate(value):
        if index in repeated_by_record:
            yield None, duplicate_key(*repeated_by_record[index]).at(record=index)
        elif not isinstance(element, dict):
            message = f"element {index} of the array is a JSON {json_type(element)}, not an object"
            yield None, Diagnostic.of("record_not_object", message, record=index)
        else:
            yield None, element


def is_json_document(path: str) -> bool:
    """Whether an input holds one JSON document (`.json`, also compressed) rather than JSONL."""
    return uncompressed_name(path).lower().endswith(".json")


def iter_records(
    path: str, *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES, stats: ReadStats | None = None
) -> Iterator[tuple[int | None, dict[str, Any] | Diagnostic]]:
    """`(line, record or diagnostic)` for every record of a file or of stdin ("-"), located and named.

    `.json` (also `.json.gz`, `.json.zst`) is one document; anything else is JSONL. Raises
    `InputUnreadable` only when the input cannot be opened at all.
    """
    with open_source(path) as source:
        yield from records_of(source, json_document=is_json_document(path), max_line_bytes=max_line_bytes, stats=stats)


def records_of(
    source: Source, *, json_document: bool, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES, stats: ReadStats | None = None
) -> Iterator[tuple[int | None, dict[str, Any] | Diagnostic]]:
    """The records of an open source, as `iter_records` gives them."""
    if json_document:
        for line, item in read_json_document(source, max_line_bytes, stats=stats):
            yield line, item.at(source=source.name) if isinstance(item, Diagnostic) else item
        return
    for raw in iter_lines(source, max_line_bytes, stats=stats):
        if isinstance(raw, Diagnostic):
            yield raw.line, raw.at(source=source.name)
            continue
        record = parse_record(raw.data)
        if isinstance(record, Diagnostic):
            record = record.at(line=raw.number, source=source.name)
        yield raw.number, record
