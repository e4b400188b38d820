"""Streaming readers for rollout files: JSON, JSONL, gzip, zstd, stdin; damaged lines become diagnostics."""

from __future__ import annotations

import gzip
import io
import json
import os
import re
import stat
import sys
import threading
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

import orjson
import zstandard

from gym_contract.diagnostics import Diagnostic

DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024
CHUNK_BYTES = 1024 * 1024
STDIN_NAME = "<stdin>"
ORJSON_MAX_DEPTH = 1024

_BOM = b"\xef\xbb\xbf"
_GZIP_MAGIC = b"\x1f\x8b"
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_NON_FINITE = re.compile(r"-?(?:NaN|Infinity)")
_JSON_TYPE_NAMES: dict[type, str] = {list: "array", str: "string", int: "number", float: "number", bool: "true/false"}


class InputUnreadable(Exception):  # noqa: N818 - the name says what happened, and is public API
    """The input cannot be opened at all: a missing file, a directory, no permission."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"cannot open {path!r}: {reason}")


class _DamagedStreamError(Exception):
    """A compressed stream that is corrupt or stops before its end marker."""


class _Readable(Protocol):
    def read(self, size: int, /) -> bytes: ...


class _CountingReader:
    """The raw input, counting what it hands out so that progress can be shown over compressed files."""

    def __init__(self, stream: _Readable) -> None:
        self._stream = stream
        self._pushed_back = b""
        self.count = 0

    def peek(self, size: int) -> bytes:
        # A pipe may hand over fewer bytes than asked: keep reading until the magic number is complete.
        while len(self._pushed_back) < size:
            more = self._stream.read(size - len(self._pushed_back))
            if not more:
                break
            self.count += len(more)
            self._pushed_back += more
        return self._pushed_back[:size]

    def read(self, size: int) -> bytes:
        if self._pushed_back:
            head, self._pushed_back = self._pushed_back[:size], self._pushed_back[size:]
            return head
        data = self._stream.read(size)
        self.count += len(data)
        return data

    def seek(self, offset: int, /) -> int:
        raise io.UnsupportedOperation("a rollout input is read once, front to back")

    def close(self) -> None:
        """Closing the raw stream is the `Source`'s decision, not the decoder's."""


class _GzipMembers:
    """One or more concatenated gzip members; damage becomes `_DamagedStreamError`."""

    def __init__(self, raw: _CountingReader) -> None:
        self._file = gzip.GzipFile(fileobj=raw, mode="rb")

    def read(self, size: int) -> bytes:
        # read1, not read: read() drops what it decoded when a later piece of the same call is damaged.
        # BadGzipFile is an OSError: caught here, so that only a failing disk passes up as OSError.
        try:
            return self._file.read1(size)
        except (EOFError, gzip.BadGzipFile, zlib.error) as error:
            raise _DamagedStreamError(f"the gzip stream is damaged or ends early ({error})") from error

    def close(self) -> None:
        self._file.close()


class _ZstdFrames:
    """One or more concatenated zstd frames; a stream that stops inside a frame becomes `_DamagedStreamError`."""

    # zstandard's stream_reader ends silently on a truncated frame; a decompressobj per frame tells by its
    # `eof`. Its decompress() has no output limit, so input goes in small pieces: ~300 KiB of output each
    # for typical JSONL, 512 MiB at worst (zstd expands at most ~32,000-fold: a zip bomb).
    _FEED_BYTES = 16 * 1024

    def __init__(self, raw: _CountingReader) -> None:
        self._raw = raw
        self._decompressor = zstandard.ZstdDecompressor()
        self._frame = self._decompressor.decompressobj()
        self._inside_frame = False
        self._left_over = b""

    def read(self, size: int) -> bytes:
        # What one piece decodes to, so that nothing decoded is lost when a later piece is damaged.
        while True:
            piece = self._left_over or self._raw.read(self._FEED_BYTES)
            self._left_over = b""
            if not piece:
                if self._inside_frame:
                    raise _DamagedStreamError("the zstd stream ends inside a frame")
                return b""
            try:
                output = self._frame.decompress(piece)
            except zstandard.ZstdError as error:
                raise _DamagedStreamError(f"the zstd stream is damaged ({error})") from error
            self._inside_frame = not self._frame.eof
            if not self._inside_frame:
                self._left_over = self._frame.unused_data
                self._frame = self._decompressor.decompressobj()
            if output:
                return output

    def close(self) -> None:
        """Nothing to release: the raw stream belongs to the `Source`."""


class Source:
    """An open input: `read` gives decompressed bytes, `consumed` the raw bytes taken so far."""

    def __init__(
        self, name: str, stream: _Readable, *, size: int | None = None, close_stream: Callable[[], None] | None = None
    ) -> None:
        self.name = name
        self.size = size
        self._raw = _CountingReader(stream)
        self._close_stream = close_stream
        magic = self._raw.peek(len(_ZSTD_MAGIC))
        # Magic bytes, not the file name: stdin has none, and a misnamed file is common.
        self._decoded: _GzipMembers | _ZstdFrames | _CountingReader
        if magic.startswith(_GZIP_MAGIC):
            self.compression: str | None = "gzip"
            self._decoded = _GzipMembers(self._raw)
        elif magic == _ZSTD_MAGIC:
            self.compression = "zstd"
            self._decoded = _ZstdFrames(self._raw)
        else:
            self.compression = None
            self._decoded = self._raw

    def read(self, size: int) -> bytes:
        """Up to about `size` decompressed bytes (b"" at the end); raises OSError or `_DamagedStreamError`."""
        return self._decoded.read(size)

    def consumed(self) -> int:
        return self._raw.count

    def close(self) -> None:
        """Release the input; closing twice is harmless (a stream not opened here is left open)."""
        self._decoded.close()
        if self._close_stream is not None:
            self._close_stream()

    def __enter__(self) -> Source:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def open_source(path: str) -> Source:
    """Open a file, or stdin for "-"; raises `InputUnreadable` when it cannot be opened at all."""
    if path == "-":
        if sys.stdin is None:
            raise InputUnreadable(STDIN_NAME, "there is no standard input")
        try:
            # The caller's stdin is not ours to close.
            return Source(STDIN_NAME, sys.stdin.buffer)
        except OSError as error:
            raise InputUnreadable(STDIN_NAME, error.strerror or str(error)) from error
    try:
        file = open(path, "rb", buffering=0)  # noqa: SIM115 - the Source owns and closes it
    except OSError as error:
        raise InputUnreadable(path, error.strerror or str(error)) from error
    try:
        info = os.fstat(file.fileno())
        return Source(path, file, size=info.st_size if stat.S_ISREG(info.st_mode) else None, close_stream=file.close)
    except BaseException as error:
        file.close()
        if isinstance(error, OSError):
            raise InputUnreadable(path, error.strerror or str(error)) from error
        raise


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
    """The decompressed input in chunks, without a leading UTF-8 byte order mark."""
    head = b""
    # A pipe may deliver the three BOM bytes in separate reads.
    while len(head) < len(_BOM) and (more := source.read(chunk_bytes)):
        head += more
    if head := head.removeprefix(_BOM):
        yield head
    while chunk := source.read(chunk_bytes):
        yield chunk


def _too_long(number: int, limit: int) -> Diagnostic:
    return Diagnostic.of("line_too_long", f"the line is longer than the {limit:,}-byte limit; not parsed", line=number)


def _complete_line(number: int, data: bytes, max_line_bytes: int, stats: ReadStats) -> RawLine | Diagnostic | None:
    stats.lines_seen = number
    if data.endswith(b"\r"):
        data = data[:-1]
    if not data or data.isspace():
        stats.blank_lines += 1
        return None
    if len(data) > max_line_bytes:
        return _too_long(number, max_line_bytes)
    stats.bytes_yielded += len(data)
    return RawLine(number, data)


def iter_lines(
    source: Source,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    *,
    stats: ReadStats | None = None,
    chunk_bytes: int = CHUNK_BYTES,
) -> Iterator[RawLine | Diagnostic]:
    """Non-blank lines of `source` with their line numbers; problems in the input come as diagnostics."""
    stats = stats if stats is not None else ReadStats()
    chunks = _chunks(source, chunk_bytes)
    finished = 0  # lines whose newline has been read
    partial = bytearray()  # the start of a line that a chunk boundary cut
    overflowing = False  # the current line passed the limit: its bytes are dropped up to its newline
    while True:
        try:
            chunk = next(chunks, b"")
        except _DamagedStreamError as damage:
            yield Diagnostic.of("input_truncated", f"{damage}; line {finished + 1} onwards is lost", line=finished + 1)
            return
        except OSError as error:
            message = f"reading stopped: {error.strerror or error}"
            yield Diagnostic.of("input_unreadable", message, line=finished + 1)
            return
        if not chunk:
            break
        if overflowing and b"\n" not in chunk:
            continue
        pieces = chunk.split(b"\n")
        for piece in pieces[:-1]:
            finished += 1
            if overflowing:
                overflowing = False
                stats.lines_seen = finished
                continue
            if partial:
                partial += piece
                piece, partial = bytes(partial), bytearray()
            if (item := _complete_line(finished, piece, max_line_bytes, stats)) is not None:
                yield item
        if not overflowing:
            partial += pieces[-1]
            # One spare byte: the line may still end in the "\r" of a CRLF, which does not count.
            if len(partial) > max_line_bytes + 1:
                yield _too_long(finished + 1, max_line_bytes)
                overflowing, partial = True, bytearray()
    if overflowing:
        stats.lines_seen = finished + 1
    elif partial and (item := _complete_line(finished + 1, bytes(partial), max_line_bytes, stats)) is not None:
        yield item


def _json_type(value: Any) -> str:
    return "null" if value is None else _JSON_TYPE_NAMES.get(type(value), type(value).__name__)


def _decode_failure(data: bytes, error: orjson.JSONDecodeError) -> tuple[Diagnostic, int]:
    """Why orjson refused `data`, and on which line of `data`."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as bad:
        message = f"the text is not valid UTF-8: byte 0x{data[bad.start]:02x} at offset {bad.start} ({bad.reason})"
        return Diagnostic.of("utf8_invalid", message), data.count(b"\n", 0, bad.start) + 1
    # orjson's own words ("unexpected character") do not say that the value was a NaN or an Infinity.
    # Its position is the token, or the letter after a minus sign.
    position = error.pos
    if _NON_FINITE.match(text, position) or (position > 0 and _NON_FINITE.match(text, position - 1)):
        message = f"NaN and Infinity are not JSON ({error})"
    elif "depth" in error.msg or "recursion" in error.msg:
        message = f"nesting is deeper than orjson's {ORJSON_MAX_DEPTH} levels ({error})"
    else:
        message = str(error)
    return Diagnostic.of("json_invalid", message), error.lineno


def _proven_free_of_duplicates(value: Any, data: bytes) -> bool:
    """True when `data` is exactly orjson's own output for `value`, which cannot repeat a key."""
    try:
        if orjson.dumps(value) == data:
            return True
        return b"\n" in data and orjson.dumps(value, option=orjson.OPT_INDENT_2) == data.strip()
    except orjson.JSONEncodeError:
        # orjson writes at most 254 levels; deeper values go the exact way.
        return False


class _DuplicatedObject(dict[str, Any]):
    """An object whose text repeats a key: the dict keeps the last value, `repeated_key` names the key."""

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        super().__init__(pairs)
        counts = Counter(key for key, _ in pairs)
        self.repeated_key = next(key for key, count in counts.items() if count > 1)


_DEEP_PARSE_LOCK = threading.Lock()


def _parse_with_pairs_hook(data: bytes, hook: Callable[[list[tuple[str, Any]]], Any]) -> Any:
    try:
        return json.loads(data, object_pairs_hook=hook)
    except RecursionError:
        pass
    # The stdlib's C scanner spends one Python recursion level per nesting level, and orjson has already
    # bounded the depth: lifting the limit by that much, and putting it back, is safe.
    with _DEEP_PARSE_LOCK:
        previous = sys.getrecursionlimit()
        sys.setrecursionlimit(previous + ORJSON_MAX_DEPTH + 100)
        try:
            return json.loads(data, object_pairs_hook=hook)
        finally:
            sys.setrecursionlimit(previous)


def _pointer(segments: tuple[str | int, ...]) -> str:
    return "".join("/" + str(segment).replace("~", "~0").replace("/", "~1") for segment in segments)


def _duplicates(data: bytes) -> list[tuple[tuple[str | int, ...], str]]:
    """Every object of `data` (already valid JSON) that repeats a key: its path and the first repeated key."""
    repeats = 0

    def keep_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        nonlocal repeats
        obj = dict(pairs)
        if len(obj) == len(pairs):
            return obj
        repeats += 1
        return _DuplicatedObject(pairs)

    value = _parse_with_pairs_hook(data, keep_pairs)
    found: list[tuple[tuple[str | int, ...], str]] = []
    # Paths are only needed when something repeats; the walk is iterative, so depth does not matter.
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(value, ())] if repeats else []
    while stack:
        value, path = stack.pop()
        if isinstance(value, _DuplicatedObject):
            found.append((path, value.repeated_key))
        if isinstance(value, dict):
            stack.extend((child, (*path, key)) for key, child in reversed(value.items()))
        elif isinstance(value, list):
            stack.extend((child, (*path, index)) for index, child in reversed(list(enumerate(value))))
    return found


def duplicate_key(path: tuple[str | int, ...], key: str) -> Diagnostic:
    where = f"the object at {_pointer(path)}" if path else "the top-level object"
    message = f"key {key!r} appears more than once in {where}; parsers keep only one of the values"
    return Diagnostic.of("json_duplicate_key", message, _pointer(path))


Duplicates = list[tuple[tuple[str | int, ...], str]]
"""Objects that repeat a key: each one's path and the first key it repeats."""


def parse_with_duplicates(data: bytes) -> tuple[Any, Duplicates] | Diagnostic:
    """One JSON value and every object in it that repeats a key, or why ``data`` is not JSON."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as error:
        return _decode_failure(data, error)[0]
    return value, ([] if _proven_free_of_duplicates(value, data) else _duplicates(data))


def not_an_object(value: Any) -> Diagnostic:
    return Diagnostic.of("record_not_object", f"the record is a JSON {_json_type(value)}, not an object")


def parse_record(data: bytes) -> dict[str, Any] | Diagnostic:
    """One JSONL record parsed, or the diagnostic that says why it is not one (without a line)."""
    parsed = parse_with_duplicates(data)
    if isinstance(parsed, Diagnostic):
        return parsed
    value, repeated = parsed
    if type(value) is not dict:
        return not_an_object(value)
    return duplicate_key(*repeated[0]) if repeated else value


IgnoreDuplicate = Callable[[dict[str, Any], tuple[str | int, ...]], bool]
"""Told a record and the path of an object in it that repeats a key: whether that does not count."""


def read_json_document(
    source: Source, max_bytes: int, *, stats: ReadStats | None = None, ignore: IgnoreDuplicate | None = None
) -> Iterator[tuple[int | None, dict[str, Any] | Diagnostic]]:
    """The records of one JSON document: an object is one record, an array gives one per element."""
    stats = stats if stats is not None else ReadStats()
    document = bytearray()
    try:
        for chunk in _chunks(source, CHUNK_BYTES):
            document += chunk
            if len(document) > max_bytes:
                message = f"the JSON document is larger than the limit of {max_bytes:,} bytes; it was not parsed"
                yield None, Diagnostic.of("line_too_long", message)
                return
    except _DamagedStreamError as damage:
        yield None, Diagnostic.of("input_truncated", f"{damage}; the document was not parsed")
        return
    except OSError as error:
        yield None, Diagnostic.of("input_unreadable", f"reading stopped: {error.strerror or error}")
        return
    data = bytes(document)
    del document  # the copy is the one parsed: do not hold the document twice
    stats.lines_seen = data.count(b"\n") + (bool(data) and not data.endswith(b"\n"))
    if not data or data.isspace():
        return
    stats.bytes_yielded = len(data)
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as error:
        diagnostic, line = _decode_failure(data, error)
        yield None, diagnostic.at(line=line)
        return
    repeated = [] if _proven_free_of_duplicates(value, data) else _duplicates(data)
    if isinstance(value, dict):
        counted = [(path, key) for path, key in repeated if ignore is None or not ignore(value, path)]
        yield None, (duplicate_key(*counted[0]) if counted else value)
        return
    if not isinstance(value, list):
        message = f"the document is a JSON {_json_type(value)}, not an object or an array of objects"
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
            message = f"element {index} of the array is a JSON {_json_type(element)}, not an object"
            yield None, Diagnostic.of("record_not_object", message, record=index)
        else:
            yield None, element


def is_json_document(path: str) -> bool:
    """Whether an input holds one JSON document (`.json`, also compressed) rather than JSONL."""
    name = path.lower()
    for suffix in (".gz", ".zst"):
        name = name.removesuffix(suffix)
    return name.endswith(".json")


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
