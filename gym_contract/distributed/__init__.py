"""Validate, rate and project rollout corpora on a Ray cluster: the engine of one process, run in Ray Data tasks.

Inputs are files, directories, globs or URIs that a pyarrow filesystem opens (`s3://`, `gs://`,
`hdfs://`). Large plain JSONL files are cut at line boundaries into shares of about
``block_bytes``; compressed files and JSON documents are one share each. Every share is checked
by the same code as `check_files`, in a Ray task, and the driver merges the per-share results in
input order, so that the report names every file and line as a single process does. The driver
holds only the merged counts and the kept diagnostics.

Needs the `ray` extra (``python -m pip install ".[ray]"`` in a checkout); without it every function here raises
`RayUnavailable`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

from gym_contract import _interrupts
from gym_contract.coverage import GroupBy
from gym_contract.coverage._rating import CoverageRun, rate_source
from gym_contract.distributed import _rows
from gym_contract.distributed._inputs import DEFAULT_BLOCK_BYTES, Share, expand, open_share, shares
from gym_contract.distributed._ray_jobs import RayUnavailable, connect, data_context, run_shares
from gym_contract.evidence._projecting import ProjectionRun, project_source
from gym_contract.reading import _records
from gym_contract.validation._checking import DEFAULT_MAX_LINE_BYTES, InputUnreadable, SharePlace, _Options
from gym_contract.validation._checking import _check_open_source as _check_source
from gym_contract.validation._report import Report

__all__ = [
    "DEFAULT_BLOCK_BYTES",
    "RayUnavailable",
    "connect",
    "coverage_dataset",
    "project_dataset",
    "validate_dataset",
]

Progress = Callable[[int, int | None], None]
"""Called with (bytes of the inputs done, their total size or None when unknown)."""


def validate_dataset(
    inputs: str | Sequence[str] | Any,
    kind: str | None = None,
    *,
    max_diagnostics: int = 1000,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    block_bytes: int = DEFAULT_BLOCK_BYTES,
    address: str | None = None,
    now: float | None = None,
    per_record: bool = False,
    progress: Progress | None = None,
    verbose: bool = False,
) -> Report:
    """The `Report` that `check_files` gives on the same files, computed on a Ray cluster.

    ``inputs`` may also be a `ray.data.Dataset` of lines: a `text` column holding one JSONL line
    per row (str or bytes) and, to locate its diagnostics, `path` and `line` columns (e.g. from
    `ray.data.read_text(..., include_paths=True)`, which gives no line numbers). Its rows are
    checked in the dataset's order; diagnostics carry no record index.

    Raises `InputUnreadable` when an input names nothing or cannot be opened, and `RayUnavailable`
    without Ray or its cluster. Ray's own messages reach stderr only with ``verbose`` (`connect`).
    """
    started = time.perf_counter()
    options = _Options(kind, max_diagnostics, max_line_bytes, time.time() if now is None else now, True, per_record)
    if _rows.is_dataset(inputs):
        connect(address, verbose=verbose)
        report = _rows.check_rows(inputs, options, verbose=verbose)
        report.seconds = time.perf_counter() - started
        return report
    report = options.report()
    place = SharePlace()
    try:
        for share, part in _in_order(inputs, block_bytes, address, partial(_check_share, options), progress, verbose):
            place = SharePlace() if share.start == 0 else place
            # Diagnostics past those the report keeps would only be shifted to be dropped.
            del part.diagnostics[max(options.max_diagnostics - len(report.diagnostics), 0) :]
            with _interrupts.deferred():
                report.merge(place.shift(part))
    except KeyboardInterrupt:
        # The shares come back in input order: those merged are the leading part of the inputs.
        report.interrupted = True
    report.seconds = time.perf_counter() - started
    return report


def coverage_dataset(
    inputs: str | Sequence[str] | Any,
    *,
    by: GroupBy = "source",
    block_bytes: int = DEFAULT_BLOCK_BYTES,
    address: str | None = None,
    progress: Progress | None = None,
    verbose: bool = False,
) -> CoverageRun:
    """The coverage matrix of `gym-contract coverage` on the same files, with their damaged lines, on Ray.

    ``inputs`` may also be a `ray.data.Dataset` of lines, as for `validate_dataset`.
    """
    if _rows.is_dataset(inputs):
        connect(address, verbose=verbose)
        return _rows.rate_rows(inputs, by, verbose=verbose)
    run = CoverageRun()
    rated = _in_order(inputs, block_bytes, address, partial(_rate_share, by), progress, verbose)
    try:
        for _share, part in _placed(rated):
            with _interrupts.deferred():
                run.merge(part)
    except KeyboardInterrupt:
        run.interrupted = True
    return run


def project_dataset(
    inputs: str | Sequence[str],
    output: str,
    capture_dirs: Sequence[str] = (),
    *,
    block_bytes: int = DEFAULT_BLOCK_BYTES,
    address: str | None = None,
    progress: Progress | None = None,
    parquet: bool = False,
    verbose: bool = False,
) -> tuple[ProjectionRun, list[str]]:
    """Project every rollout, as `gym-contract project` does, into JSONL shards under ``output``.

    ``output`` is a directory (local, or a URI a pyarrow filesystem writes); share N of the inputs is
    written to `part-NNNNN.jsonl` in it, so that reading the shards in name order gives the records
    in input order. Capture directories must be readable from every worker (a shared filesystem).
    With ``parquet``, Ray Data also writes the records as Parquet files under `output/parquet/`,
    one row per record and its JSON text in the column `rollout` (the nesting of rollouts varies
    too much for columns of their own). Returns the merged run (rollouts, damaged lines, failures,
    gaps) and the shard paths.
    """
    _make_directory(output)
    written: list[str] = []
    task = partial(_project_share, output, tuple(capture_dirs))
    run = ProjectionRun()
    try:
        for share, part in _placed(_in_order(inputs, block_bytes, address, task, progress, verbose)):
            with _interrupts.deferred():
                run.merge(part)
                written.append(_shard_name(output, share))
    except KeyboardInterrupt:
        run.interrupted = True  # the shards listed are whole; a later one may have been cut short
    if parquet and written and not run.interrupted:
        _as_parquet(written, f"{output.rstrip('/')}/parquet", verbose)
    return run, written


def _as_parquet(shards: list[str], directory: str, verbose: bool) -> None:
    import ray.data

    with data_context(show_progress=False, ordered=True, verbose=verbose):
        lines = ray.data.read_text(shards).rename_columns({"text": "rollout"})
        lines.write_parquet(directory)


# ------------------------------------------------------------------------------------------ driver


def _in_order(
    inputs: str | Sequence[str],
    block_bytes: int,
    address: str | None,
    task: Callable[[Share], Any],
    progress: Progress | None,
    verbose: bool,
) -> Iterator[tuple[Share, Any]]:
    """Every share with its result, in input order."""
    paths = [inputs] if isinstance(inputs, str) else list(inputs)
    files = expand(paths)  # before joining a cluster: a path that names nothing fails at once
    connect(address, verbose=verbose)
    plan = [share for file in files for share in shares(file, block_bytes)]
    plan = [replace(share, number=position) for position, share in enumerate(plan)]
    sizes = [file.size for file in files]
    total = None if None in sizes else sum(size or 0 for size in sizes)
    done = 0
    for share, result in run_shares(plan, _Guarded(task), verbose=verbose):
        if isinstance(result, InputUnreadable):
            raise result
        yield share, result
        done += _length(share)
        if progress is not None:
            progress(done, total)


def _length(share: Share) -> int:
    if share.end is not None:
        return share.end - share.start
    return share.file.size or 0


class _Guarded:
    """A share's task that hands back an input that cannot be opened instead of failing the Ray task."""

    def __init__(self, task: Callable[[Share], Any]) -> None:
        self.task = task

    def __call__(self, share: Share) -> Any:
        try:
            return self.task(share)
        except InputUnreadable as error:
            return error


def _placed(results: Iterator[tuple[Share, Any]]) -> Iterator[tuple[Share, Any]]:
    """Each share's run with its damaged lines numbered from its file's start, not its own."""
    first_line = 0
    for share, part in results:
        first_line = 0 if share.start == 0 else first_line
        if first_line:
            part.damaged = [d if d.line is None else replace(d, line=d.line + first_line) for d in part.damaged]
        first_line += part.lines
        yield share, part


# ------------------------------------------------------------------------------------------ tasks


def _check_share(options: _Options, share: Share) -> Report:
    with open_share(share) as source:
        return _check_source(source, _records.is_json_document(share.file.name), options)


def _rate_share(by: GroupBy, share: Share) -> CoverageRun:
    stats = _records.ReadStats()
    with open_share(share) as source:
        run = rate_source(source, json_document=_records.is_json_document(share.file.name), by=by, stats=stats)
    run.lines = stats.lines_seen
    return run


def _project_share(output: str, capture_dirs: tuple[str, ...], share: Share) -> ProjectionRun:
    with open_share(share) as source, _open_output(_shard_name(output, share)) as out:
        stats = _records.ReadStats()
        json_document = _records.is_json_document(share.file.name)
        run = project_source(source, capture_dirs, out.write, json_document=json_document, stats=stats)
    run.lines = stats.lines_seen
    return run


def _shard_name(output: str, share: Share) -> str:
    # The name follows from the share alone, so that a task run again writes the same file over.
    return f"{output.rstrip('/')}/part-{share.number:05d}.jsonl"


def _open_output(path: str) -> Any:
    if "://" in path:
        from pyarrow import fs

        filesystem, inside = fs.FileSystem.from_uri(path)
        return filesystem.open_output_stream(inside)
    return open(path, "wb")


def _make_directory(output: str) -> None:
    try:
        if "://" in output:
            from pyarrow import fs

            filesystem, inside = fs.FileSystem.from_uri(output)
            filesystem.create_dir(inside, recursive=True)
        else:
            os.makedirs(output, exist_ok=True)
    except (OSError, ValueError) as error:
        raise InputUnreadable(output, f"cannot write there: {error}") from None
