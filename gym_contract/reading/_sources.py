"""Opening rollout inputs — files, stdin, gzip and zstd streams — counting the raw bytes consumed."""

from __future__ import annotations

import io
import os
import select
import stat
import sys
from collections.abc import Callable, Iterable
from itertools import pairwise
from typing import Any, Protocol

STDIN_NAME = "<stdin>"

_GZIP_MAGIC = b"\x1f\x8b"
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
# A skippable frame's magic number is 0x184D2A50 to 0x184D2A5F, little-endian: the first byte varies.
_SKIPPABLE_MAGIC_TAIL = b"\x2a\x4d\x18"


def uncompressed_name(name: str) -> str:
    """A file's name without its compression's suffix (`.gz`, `.zst`), which says nothing of what it holds."""
    for suffix in (".gz", ".zst"):
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
    return name


def _starts_zstd(magic: bytes) -> bool:
    """Whether a stream starts with a zstd frame, or with a skippable frame (`pzstd` writes one first)."""
    skippable = len(magic) == 4 and 0x50 <= magic[0] <= 0x5F and magic[1:] == _SKIPPABLE_MAGIC_TAIL
    return magic == _ZSTD_MAGIC or skippable


class InputUnreadable(Exception):  # noqa: N818 - the name says what happened, and is public API
    """The input cannot be opened at all: a missing file, a directory, no permission."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"cannot open {path!r}: {reason}")

    def __reduce__(self) -> tuple[type[InputUnreadable], tuple[str, str]]:
        # Raised in a worker process, it is pickled back to the parent with what it was made of.
        return (InputUnreadable, (self.path, self.reason))


class DamagedStreamError(Exception):
    """A compressed stream that is corrupt or stops before its end marker."""


class _Readable(Protocol):
    def read(self, size: int, /) -> bytes: ...


class _AsItArrives:
    """A buffered stream read with `read1`: at most one read of the underlying pipe per call."""

    def __init__(self, buffer: Any) -> None:  # anything with `read1`: stdin's buffer
        self._buffer = buffer

    def read(self, size: int) -> bytes:
        data: bytes = self._buffer.read1(size)
        return data


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
    """One or more concatenated gzip members; damage becomes `DamagedStreamError`."""

    def __init__(self, raw: _CountingReader) -> None:
        import gzip  # imported by the first gzip input: most runs read none
        import zlib

        self._file = gzip.GzipFile(fileobj=raw, mode="rb")
        self._damage = (EOFError, gzip.BadGzipFile, zlib.error)

    def read(self, size: int) -> bytes:
        # read1, not read: read() drops what it decoded when a later piece of the same call is damaged.
        # BadGzipFile is an OSError: caught here, so that only a failing disk passes up as OSError.
        try:
            return self._file.read1(size)
        except self._damage as error:
            raise DamagedStreamError(f"the gzip stream is damaged or ends early ({error})") from error

    def close(self) -> None:
        self._file.close()


class _ZstdFrames:
    """One or more concatenated zstd frames, skippable frames among them (their content is skipped), with
    or without a content size; a stream that stops inside a frame becomes `DamagedStreamError`."""

    # zstandard's stream_reader ends silently on a truncated frame; a decompressobj per frame tells by its
    # `eof`. Its decompress() has no output limit, so input goes in small pieces: ~300 KiB of output each
    # for typical JSONL, 512 MiB at worst (zstd expands at most ~32,000-fold: a zip bomb).
    _FEED_BYTES = 16 * 1024

    def __init__(self, raw: _CountingReader) -> None:
        import zstandard  # imported by the first zstd input: most runs read none

        self._raw = raw
        self._damage = zstandard.ZstdError
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
                    raise DamagedStreamError("the zstd stream ends inside a frame")
                return b""
            try:
                output = self._frame.decompress(piece)
            except self._damage as error:
                raise DamagedStreamError(f"the zstd stream is damaged ({error})") from error
            self._inside_frame = not self._frame.eof
            if not self._inside_frame:
                self._left_over = self._frame.unused_data
                self._frame = self._decompressor.decompressobj()
            if output:
                return output

    def close(self) -> None:
        """Nothing to release: the raw stream belongs to the `Source`."""


class _Bounded:
    """Reads at most ``length`` bytes of a stream from where it stands: a share of a file."""

    def __init__(self, stream: Any, length: int) -> None:
        self._stream = stream
        self._left = length

    def read(self, size: int) -> bytes:
        data: bytes = self._stream.read(min(size, self._left)) if self._left > 0 else b""
        self._left -= len(data)
        return data


def size_on_disk(path: str) -> int | None:
    """A file's size, or None for stdin and for what cannot be stat-ed (said, in its turn, by whoever opens it)."""
    if path == "-":
        return None
    try:
        return os.stat(path).st_size
    except OSError:
        return None


def read_once(path: str) -> bool:
    """Whether ``path`` names a pipe or a device, whose bytes a read takes away, not a file or a directory;
    False when it cannot be stat-ed (said, in its turn, by whoever opens it)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def raw_from(path: str, offset: int) -> io.BufferedReader:
    """A local file's raw bytes from ``offset`` on, for the caller to close; raises `InputUnreadable`."""
    try:
        stream = open(path, "rb")  # noqa: SIM115 - the caller's to close
    except OSError as error:
        raise InputUnreadable(path, error.strerror or str(error)) from None
    stream.seek(offset)
    return stream


def share_of(name: str, stream: Any, length: int, *, at_start: bool) -> Source:
    """The next ``length`` bytes of an open stream as a source named ``name``; closing it closes the stream.

    ``at_start``: whether the share starts where the input does (see `Source.at_start`)."""
    return Source(name, _Bounded(stream, length), size=length, close_stream=stream.close, at_start=at_start)


def line_cuts(open_at: Callable[[int], Any], size: int, offsets: Iterable[int]) -> list[tuple[int, int]]:
    """Byte ranges covering ``size`` bytes, each cut at the first line that starts after one of ``offsets``.

    ``open_at(offset)`` opens the input there; each stream is closed once its line end is found.
    Empty ranges (two offsets in one long line) are dropped.
    """
    cuts = [0]
    for offset in offsets:
        cuts.append(max(_line_start_after(open_at(offset), offset, size), cuts[-1]))
    cuts.append(size)
    return [(start, end) for start, end in pairwise(cuts) if end > start]


def _line_start_after(stream: Any, offset: int, size: int) -> int:
    try:
        position = offset
        while chunk := bytes(stream.read(64 * 1024)):
            newline = chunk.find(b"\n")
            if newline >= 0:
                return position + newline + 1
            position += len(chunk)
        return size
    finally:
        stream.close()


class Source:
    """An open input: `read` gives decompressed bytes, `consumed` the raw bytes taken so far."""

    def __init__(
        self,
        name: str,
        stream: _Readable,
        *,
        size: int | None = None,
        close_stream: Callable[[], None] | None = None,
        at_start: bool = True,
        arrives_on: int | None = None,
    ) -> None:
        self.name = name
        self.size = size
        self.at_start = at_start
        self._arrives_on = arrives_on  # the descriptor of a pipe or terminal read as it arrives
        """Whether the stream starts where the input does, not inside it (a share of a file): only
        there do its first bytes tell its compression, and is a byte order mark skipped."""
        self._raw = _CountingReader(stream)
        self._close_stream = close_stream
        magic = self._raw.peek(len(_ZSTD_MAGIC)) if at_start else b""
        # Magic bytes, not the file name: stdin has none, and a misnamed file is common.
        self._decoded: _GzipMembers | _ZstdFrames | _CountingReader
        if magic.startswith(_GZIP_MAGIC):
            self.compression: str | None = "gzip"
            self._decoded = _GzipMembers(self._raw)
        elif _starts_zstd(magic):
            self.compression = "zstd"
            self._decoded = _ZstdFrames(self._raw)
        else:
            self.compression = None
            self._decoded = self._raw
        self.produced = 0
        """Decompressed bytes handed out so far: the amount of JSON text, whatever the compression."""

    def read(self, size: int) -> bytes:
        """Up to about `size` decompressed bytes (b"" at the end); raises OSError or `DamagedStreamError`."""
        data = self._decoded.read(size)
        self.produced += len(data)
        return data

    def would_wait(self, seconds: float = 0.0) -> bool:
        """Whether reading on could wait for a writer: a pipe or terminal read as it arrives (`tail -f |`)
        that holds nothing yet, nor after ``seconds`` more. A file's reads never wait for one."""
        if self._arrives_on is None:
            return False
        try:
            ready, _, _ = select.select([self._arrives_on], [], [], seconds)
        except (OSError, ValueError):  # closed, or beyond what select takes: reading will tell
            return False
        return not ready

    def consumed(self) -> int:
        """Raw bytes taken from the input so far, compressed or not."""
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


def _live(stream: Any) -> int | None:
    """The descriptor of ``stream`` when it is a pipe, a socket or a terminal, whose reads wait for a writer;
    None for a file or a stream without one."""
    try:
        descriptor: int = stream.fileno()
        mode = os.fstat(descriptor).st_mode
    except (OSError, ValueError, AttributeError):  # io.UnsupportedOperation is an OSError
        return None
    return None if stat.S_ISREG(mode) or stat.S_ISDIR(mode) else descriptor


def open_source(path: str) -> Source:
    """Open a file, or stdin for "-"; raises `InputUnreadable` when it cannot be opened at all."""
    if path == "-":
        if sys.stdin is None:
            raise InputUnreadable(STDIN_NAME, "there is no standard input")
        try:
            # The caller's stdin is not ours to close. Lines are checked as they arrive (`tail -f |`):
            # a read hands over what the pipe holds rather than waiting for a whole chunk.
            buffer = sys.stdin.buffer
            arriving = hasattr(buffer, "read1")
            return Source(
                STDIN_NAME, _AsItArrives(buffer) if arriving else buffer, arrives_on=_live(buffer) if arriving else None
            )
        except OSError as error:
            raise InputUnreadable(STDIN_NAME, error.strerror or str(error)) from error
    try:
        file = open(path, "rb", buffering=0)  # noqa: SIM115 - the Source owns and closes it
    except OSError as error:
        raise InputUnreadable(path, error.strerror or str(error)) from error
    try:
        info = os.fstat(file.fileno())
        regular = stat.S_ISREG(info.st_mode)
        return Source(
            path,
            file,
            size=info.st_size if regular else None,
            close_stream=file.close,
            arrives_on=_live(file),
        )
    except BaseException as error:
        file.close()
        if isinstance(error, OSError):
            raise InputUnreadable(path, error.strerror or str(error)) from error
        raise
