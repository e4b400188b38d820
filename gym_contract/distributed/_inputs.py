"""Inputs of a distributed job: paths, directories, globs and URIs expanded to files, and files cut into shares."""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass
from functools import partial
from typing import Any

from gym_contract.reading import _records, _sources

# The files a directory contributes: what the engine reads (JSONL or JSON, plain or compressed).
_SUFFIXES = (".jsonl", ".json", ".jsonl.gz", ".json.gz", ".jsonl.zst", ".json.zst")
# A plain JSONL file larger than this is cut into shares of about this size, checked in parallel.
DEFAULT_BLOCK_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class InputFile:
    """One file to read: a local path, or a URI a pyarrow filesystem opens (s3://, gs://, hdfs://, file://).

    The name is the report's name for the file too.
    """

    name: str
    size: int | None

    @property
    def remote(self) -> bool:
        return "://" in self.name


@dataclass(frozen=True)
class Share:
    """A byte range of a file, from a line start to a line start; ``end`` None for the whole file."""

    file: InputFile
    start: int = 0
    end: int | None = None
    number: int = 0
    """Its place among all the shares of a job."""


def expand(paths: list[str]) -> list[InputFile]:
    """The files the paths name, in the order given; a directory or a glob gives its files sorted.

    Raises `InputUnreadable` for a path that names nothing, as a single-process run does.
    """
    files: list[InputFile] = []
    for path in paths:
        if path == "-":
            raise _sources.InputUnreadable(path, "standard input cannot be shared out to a cluster; name the files")
        found = _expand_uri(path) if "://" in path else _expand_local(path)
        if not found:
            raise _sources.InputUnreadable(path, "no such file, or no rollout file under it")
        files += found
    return files


def _expand_local(path: str) -> list[InputFile]:
    if glob.has_magic(path):
        matches = sorted(glob.glob(path, recursive=True))
        return [file for match in matches for file in _expand_local(match)]
    if os.path.isdir(path):
        under = sorted(
            os.path.join(root, name) for root, _, names in os.walk(path) for name in names if name.endswith(_SUFFIXES)
        )
        return [InputFile(name, _sources.size_on_disk(name)) for name in under]
    if os.path.exists(path):
        return [InputFile(path, _sources.size_on_disk(path))]
    return []


def _expand_uri(uri: str) -> list[InputFile]:
    from pyarrow import fs

    try:
        filesystem, root = fs.FileSystem.from_uri(uri)
        info = filesystem.get_file_info(root)
    except (OSError, ValueError) as error:
        raise _sources.InputUnreadable(uri, str(error)) from None
    scheme = uri.split("://", 1)[0]
    if info.type == fs.FileType.File:
        return [InputFile(uri, info.size)]
    if info.type != fs.FileType.Directory:
        return []
    selector = fs.FileSelector(root, recursive=True)
    infos = sorted(
        (i for i in filesystem.get_file_info(selector) if i.type == fs.FileType.File and i.path.endswith(_SUFFIXES)),
        key=lambda i: i.path,
    )
    return [InputFile(f"{scheme}://{i.path}", i.size) for i in infos]


def open_file(file: InputFile) -> _sources.Source:
    """The file as the engine reads it, decompressed whatever its name; raises `InputUnreadable`."""
    if not file.remote:
        return _sources.open_source(file.name)
    stream = _remote_stream(file)
    return _sources.Source(file.name, stream, size=file.size, close_stream=stream.close)


def _remote_stream(file: InputFile, start: int = 0) -> Any:
    from pyarrow import fs

    try:
        filesystem, path = fs.FileSystem.from_uri(file.name)
        stream = filesystem.open_input_file(path)
        if start:
            stream.seek(start)
        return stream
    except (OSError, ValueError) as error:
        raise _sources.InputUnreadable(file.name, str(error)) from None


def open_share(share: Share) -> _sources.Source:
    """A share's bytes as a source named after its file; a whole-file share is the file itself."""
    if share.end is None:
        return open_file(share.file)
    opened = _opened_at(share.file, share.start)
    return _sources.share_of(share.file.name, opened, share.end - share.start, at_start=share.start == 0)


def shares(file: InputFile, block_bytes: int) -> list[Share]:
    """A plain JSONL file cut at line boundaries into shares of about ``block_bytes``; else the whole file."""
    size = file.size
    if size is None or size <= block_bytes or _records.is_json_document(file.name) or _compressed(file) is not False:
        return [Share(file)]
    offsets = range(block_bytes, size, block_bytes)
    return [Share(file, start, end) for start, end in _sources.line_cuts(partial(_opened_at, file), size, offsets)]


def _opened_at(file: InputFile, offset: int) -> Any:
    """The file's raw bytes from ``offset`` on, for the caller to close; raises `InputUnreadable`."""
    return _remote_stream(file, offset) if file.remote else _sources.raw_from(file.name, offset)


def _compressed(file: InputFile) -> bool | None:
    """Whether a file is gzip or zstd, told by its first bytes; None when it cannot be opened."""
    try:
        with open_file(file) as source:
            return source.compression is not None
    except _sources.InputUnreadable:
        return None
