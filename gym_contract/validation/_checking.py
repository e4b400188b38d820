"""Check whole inputs — files, compressed files, stdin — record by record, into one `Report`."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from gym_contract import _interrupts
from gym_contract._objects import plain
from gym_contract.diagnostics import Diagnostic
from gym_contract.reading import _records, _sources
from gym_contract.validation import KINDS, _fastpath, check_line, detect_kind, iter_diagnostics, read_document
from gym_contract.validation._report import Report

__all__ = ["DEFAULT_MAX_LINE_BYTES", "InputUnreadable", "check_files"]

DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024
InputUnreadable = _sources.InputUnreadable
Progress = Callable[[int, int | None], None]
"""Called with (bytes consumed so far over all inputs, total bytes on disk or None when unknown)."""
RecordSeen = Callable[[str | None, dict[str, Any], list[Diagnostic], str | None, int | None], None]
"""Called for every record checked, after it is counted, with its kind, the record (opaque payloads
may be `msgspec.Raw`), its located diagnostics, its input's name and its line."""

# Below this size a file is not worth the cost of starting worker processes.
_PARALLEL_MIN_BYTES = 1024 * 1024
# Lines read ahead to be measured for nesting at once, where that is needed (see `_Ahead`): enough to
# spread the measure's fixed cost (30-60 µs) over a few records, and no more, since the rollouts among
# them are decoded there and wait in memory to be checked: on Python 3.12 and 3.13 the whole command
# took 0.89-0.95x the time with 512 KB that it took with 4 MB, the Structs then still in the cache.
# The first batches are smaller, so that checking starts as soon as without reading ahead.
_AHEAD_BYTES = 512 * 1024
_FIRST_AHEAD_BYTES = 64 * 1024
# How long a batch read from a pipe waits for more before it is checked: a writer that keeps up with
# the check (`cat`, `zcat`) refills a pipe emptied by a read in far less; one at rest (`tail -f`)
# leaves its lines unchecked no longer than this. Without the wait, `cat FILE |` ended a batch
# after nearly every line, each measured on its own.
_PIPE_PATIENCE = 0.005


@dataclass(frozen=True)
class _Options:
    kind: str | None
    max_diagnostics: int
    max_line_bytes: int
    now: float
    fast: bool
    per_record: bool
    on_record: RecordSeen | None = None

    def report(self) -> Report:
        return Report(max_diagnostics=self.max_diagnostics, per_record=self.per_record)


def check_files(
    paths: Sequence[str],
    kind: str | None = None,
    *,
    max_diagnostics: int = 1000,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    jobs: int = 1,
    progress: Progress | None = None,
    now: float | None = None,
    fast: bool = True,
    per_record: bool = False,
    on_record: RecordSeen | None = None,
) -> Report:
    """Check every record of every input; raise `InputUnreadable` if an input cannot be opened at all.

    Damaged lines are diagnostics in the report, never exceptions. With ``jobs`` > 1, worker
    processes check several inputs at once, a large plain file is cut at line boundaries into
    shares checked in parallel, and a lone compressed input, pipe or stdin is read here and checked
    by the workers in batches of lines; the report is the same as with one job. ``fast`` lets
    structurally valid lines skip building Python objects for opaque payloads; the report is the
    same either way. ``per_record`` keeps, for every record with a diagnostic, its worst severity
    (`Report.flagged`), which a report with a test case per record needs; it costs memory per such record.
    ``on_record`` sees every record as it is checked (`RecordSeen`), in input order; it needs ``jobs`` 1,
    since records checked in a worker process are never seen by this one.
    A `KeyboardInterrupt` (Ctrl-C; SIGTERM too under the command line) stops the check: the report is
    then that of the inputs' leading part that was checked, `Report.interrupted` set, and no worker
    process is left running. For the length of the call, Python's own SIGINT handler gives way to one
    that raises the same `KeyboardInterrupt` after a report is merged, never in the middle of it.
    """
    if kind is not None and kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; expected one of {', '.join(KINDS)}")
    if on_record is not None and jobs != 1:
        raise ValueError("on_record sees the records of one process: give jobs=1")
    moment = time.time() if now is None else now
    options = _Options(kind, max_diagnostics, max_line_bytes, moment, fast, per_record, on_record)
    started = time.perf_counter()
    report = options.report()
    try:
        # A library caller's Ctrl-C, too, waits for a report to be merged whole, a result to be kept.
        with _interrupts.keeping_whole():
            _check_all(report, paths, options, jobs, progress)
    except KeyboardInterrupt:
        # Ctrl-C or SIGTERM wherever it came: the report holds the inputs' leading part that was checked.
        report.interrupted = True
    report.seconds = time.perf_counter() - started
    return report


def _check_all(report: Report, paths: Sequence[str], options: _Options, jobs: int, progress: Progress | None) -> None:
    sizes = [_sources.size_on_disk(path) for path in paths]
    total = None if None in sizes else sum(s for s in sizes if s is not None)
    if jobs > 1 and len(paths) == 1 and _streamable(paths[0]):
        # One input that cannot be cut (compressed, or stdin): read here, checked in batches by workers.
        from gym_contract.validation._streamed import check_streamed  # as in `pool_of`: most runs start no worker

        check_streamed(report, paths[0], options, jobs, progress, total)
    else:
        _check_side_by_side(report, paths, sizes, options, jobs, progress, total)


def merge(report: Report, part: Report) -> None:
    with _interrupts.deferred():  # a report is never left half merged
        report.merge(part)


def _check_side_by_side(
    report: Report,
    paths: Sequence[str],
    sizes: list[int | None],
    options: _Options,
    jobs: int,
    progress: Progress | None,
    total: int | None,
) -> None:
    """Inputs in order; with several jobs, files and shares of large plain files go to workers.

    Interrupted, the workers hand back what they had checked, and the report takes the shares in
    input order up to the first that was cut short: the leading part of the inputs, numbered as ever.
    """
    plans = [_shares(path, size, jobs) for path, size in zip(paths, sizes, strict=True)]
    workers = min(jobs, sum(len(shares) for path, shares in zip(paths, plans, strict=True) if path != "-"))
    with pool_of(workers) if workers > 1 else contextlib.nullcontext() as pool:
        # Everything is handed out first, then taken back in input order, so that the parent reads
        # stdin (which no worker can) while the workers check the files.
        pending = [
            None
            if pool is None or path == "-"
            else [pool.submit(_check_share, (path, start, end, options)) for start, end in shares]
            for path, shares in zip(paths, plans, strict=True)
        ]
        # In a function of its own, as every loop an interruption handler guards (`_check_open_source`).
        _take_in_order(report, paths, sizes, pending, pool, options, progress, total)


def _take_in_order(
    report: Report,
    paths: Sequence[str],
    sizes: list[int | None],
    pending: list[list[int] | None],
    pool: Any,
    options: _Options,
    progress: Progress | None,
    total: int | None,
) -> None:
    """The report of every input merged in order: checked here, or taken from the workers."""
    done = 0
    for path, size, tickets in zip(paths, sizes, pending, strict=True):
        if pool is None or tickets is None:
            part = _check_source(path, options, progress, done, total)
            done += part.bytes if size is None else size
        else:
            part = _joined(path, _taken(report, pool, tickets), options)
            done += size or 0
            if progress:
                progress(done, total)
        merge(report, part)
        if report.interrupted:
            break  # the inputs after an interruption are not read


def _taken(report: Report, pool: Any, tickets: list[int]) -> list[Report | None]:
    """The reports of one input's shares; interrupted, those the workers hand back when told to stop."""
    taken: list[Report | None] = []
    try:
        _take_each(pool, tickets, taken)
    except KeyboardInterrupt:
        pool.stop()
        taken += [pool.result(ticket) for ticket in tickets[len(taken) :]]
        report.interrupted = True
    return taken


def _take_each(pool: Any, tickets: list[int], taken: list[Report | None]) -> None:
    for ticket in tickets:
        taken.append(pool.result(ticket))


def pool_of(workers: int) -> Any:
    """Worker processes; imported here, since most runs start none."""
    from gym_contract._workers import Workers

    return Workers(workers)


def _check_source(path: str, options: _Options, progress: Progress | None, done: int, total: int | None) -> Report:
    with _sources.open_source(path) as source:
        report = _check_open_source(source, _records.is_json_document(path), options, progress, done, total)
    if progress:
        progress(done + report.bytes, total)
    return report


def _check_open_source(
    source: _sources.Source,
    json_document: bool,
    options: _Options,
    progress: Progress | None = None,
    done: int = 0,
    total: int | None = None,
) -> Report:
    report = options.report()
    report.inputs.append(source.name)
    stats = _records.ReadStats()
    lines = None if json_document else _records.iter_lines(source, options.max_line_bytes, stats=stats)
    ahead = _Ahead(lines, stats, source) if lines is not None and options.fast and _fastpath.measures_ahead() else None
    try:
        # The loops are in functions of their own, so that an interruption taken at a loop's back edge
        # reaches this handler: Python 3.13 leaves some back edges out of the try around a loop in the
        # same function (python/cpython#130279), and a library caller has no `_interrupts.handling`.
        if lines is None:
            _check_document(report, source, stats, options)
        else:
            _check_lines(report, lines if ahead is None else ahead, source, options, progress, done, total)
    except KeyboardInterrupt:
        # Ctrl-C, SIGTERM, or (in a worker) a request to stop: what was checked so far is a report of
        # its own, marked as partial. A line read but
        # not yet checked is left out, so that its lines are still its blank, damaged and record lines.
        report.interrupted = True
        if ahead is not None:
            stats.blank_lines = ahead.blank_lines  # not those read ahead of the line being checked
        stats.lines_seen = stats.blank_lines + report.damaged_lines + report.records
    report.bytes += source.consumed()
    report.decoded_bytes += source.produced
    report.lines += stats.lines_seen
    report.blank_lines += stats.blank_lines
    report.items_by_input[source.name] += report.records + report.damaged_lines
    return report


def _check_document(report: Report, source: _sources.Source, stats: _records.ReadStats, options: _Options) -> None:
    entries = read_document(source, options.kind, max_bytes=options.max_line_bytes, stats=stats)
    for index, (line, entry) in enumerate(entries):
        _interrupts.check()
        _check_entry(report, entry, line, index, source.name, options)


def _check_lines(
    report: Report,
    items: Iterable[_records.RawLine | Diagnostic],
    source: _sources.Source,
    options: _Options,
    progress: Progress | None,
    done: int,
    total: int | None,
) -> None:
    hint: str | None = None
    for index, item in enumerate(items):
        _interrupts.check()
        hint = check_item(report, index, item, source.name, options, hint)
        if progress and index % 64 == 0:
            progress(done + source.consumed(), total)


class _Ahead:
    """The items of a JSONL input as they come, their lines measured for nesting a batch at a time.

    Where decoding alone does not bound a line's nesting, showing it for each line alone is costly
    (`_fastpath.measure_ahead`); so lines are read ahead, up to `_AHEAD_BYTES`, and measured at once.
    The reader counts the blank lines it passes: `blank_lines` is its count up to the item last handed out.
    A batch read from a pipe ends where the pipe holds nothing more yet: lines are checked as they
    arrive (`tail -f |`), not once enough of them came.
    """

    def __init__(
        self, items: Iterator[_records.RawLine | Diagnostic], stats: _records.ReadStats, source: _sources.Source
    ) -> None:
        self._items = items
        self._stats = stats
        self._source = source
        self.blank_lines = stats.blank_lines

    def __iter__(self) -> Iterator[_records.RawLine | Diagnostic]:
        ahead = _FIRST_AHEAD_BYTES
        while True:
            batch: list[tuple[_records.RawLine | Diagnostic, int]] = []
            size = 0
            while size < ahead and not (batch and self._source.would_wait(_PIPE_PATIENCE)):
                item = next(self._items, None)
                if item is None:
                    break
                batch.append((item, self._stats.blank_lines))
                size += len(item.data) if isinstance(item, _records.RawLine) else 0
            ahead = min(2 * ahead, _AHEAD_BYTES)
            if not batch:
                return
            _fastpath.measure_ahead([item.data for item, _ in batch if isinstance(item, _records.RawLine)])
            for item, blank_lines in batch:
                self.blank_lines = blank_lines
                yield item


def check_item(
    report: Report, index: int, item: _records.RawLine | Diagnostic, name: str, options: _Options, hint: str | None
) -> str | None:
    """Check the ``index``-th item of a JSONL input into ``report``; return the kind to try first next."""
    if isinstance(item, Diagnostic):
        report.add_damaged_line(item.at(source=name), index)
        return hint
    return check_data(report, item.data, item.number, index, name, options, hint)


def check_data(
    report: Report,
    data: bytes,
    line: int | None,
    index: int | None,
    name: str | None,
    options: _Options,
    hint: str | None,
) -> str | None:
    """Check one line's bytes into ``report``, located by what is known of it; return the kind to try first next."""
    checked = check_line(data, options.kind, hint=hint, now=options.now, fast=options.fast)
    if checked.decoded is None:
        report.add_damaged_line(checked.diagnostics[0].at(line=line, source=name), index)
        return hint
    located = [d.at(line=line, record=index, source=name) for d in checked.diagnostics]
    report.add_record(checked.kind, checked.decoded, located)
    if options.on_record is not None:
        options.on_record(checked.kind, plain(checked.decoded), located, name, line)
    return checked.kind


def _check_entry(report: Report, entry: Any, line: int | None, index: int, name: str, options: _Options) -> None:
    if isinstance(entry, Diagnostic):
        located = entry if entry.line is not None or line is None else entry.at(line=line)
        report.add_damaged_line(located if located.source is not None else located.at(source=name), index)
        return
    kind = options.kind or detect_kind(entry)
    diagnostics = [d.at(line=line, record=index, source=name) for d in iter_diagnostics(entry, kind, now=options.now)]
    report.add_record(kind, entry, diagnostics)
    if options.on_record is not None and isinstance(entry, dict):
        options.on_record(kind, entry, diagnostics, name, line)


# ------------------------------------------------------------------------------------------ parallel


def _shares(path: str, size: int | None, jobs: int) -> list[tuple[int, int | None]]:
    """Byte ranges of a large plain JSONL file, starting and ending on line boundaries, one per job;
    ``[(0, None)]`` for an input that is read whole (stdin, compressed, a JSON document, small)."""
    if jobs <= 1 or size is None or size < _PARALLEL_MIN_BYTES or _records.is_json_document(path):
        return [(0, None)]
    if _compressed(path) is not False:
        return [(0, None)]  # compressed, or unreadable: reported, in its turn, by whoever reads it
    return list(
        _sources.line_cuts(partial(_sources.raw_from, path), size, (size * job // jobs for job in range(1, jobs)))
    )


def _compressed(path: str) -> bool | None:
    """Whether a file is gzip or zstd, told by its first bytes; None when it cannot be opened."""
    try:
        with _sources.open_source(path) as source:
            return source.compression is not None
    except _sources.InputUnreadable:
        return None


def _streamable(path: str) -> bool:
    """Whether an input is JSONL that only a front-to-back read can cut: stdin, a pipe, or compressed.

    A pipe (`<(zcat …)`, a named one) is not opened to look at its first bytes: what is read from it
    is gone for the reader that opens it next."""
    if _records.is_json_document(path):
        return False
    if path == "-" or _sources.read_once(path):
        return True
    return _compressed(path) is True


def _joined(path: str, parts: list[Report | None], options: _Options) -> Report:
    """The report of one input from those of its shares, in order (a whole input is one share), up
    to the first share an interruption cut short (None: never checked)."""
    if len(parts) == 1 and parts[0] is not None:
        return parts[0]
    report = options.report()
    place = SharePlace()
    for part in parts:
        if part is None:
            report.interrupted = True
            break
        report.merge(place.shift(part))
        if part.interrupted:
            break
    report.inputs = [path]
    return report


class SharePlace:
    """Where the next share of an input starts: workers number lines and records from their share's start."""

    def __init__(self) -> None:
        self.first_line = 0
        self.first_record = 0

    def shift(self, part: Report) -> Report:
        """``part``, the next share's report, with its line and record numbers counted from the input's start."""
        first_line, first_record = self.first_line, self.first_record
        if first_line or first_record:
            part.diagnostics = [
                replace(
                    d,
                    line=None if d.line is None else d.line + first_line,
                    record=None if d.record is None else d.record + first_record,
                )
                for d in part.diagnostics
            ]
            part.flagged = {
                (name, item + first_record): (worst, None if line is None else line + first_line, damaged)
                for (name, item), (worst, line, damaged) in part.flagged.items()
            }
        self.first_line += part.lines
        self.first_record += part.records + part.damaged_lines
        return part


def _check_share(task: tuple[str, int, int | None, _Options]) -> Report:
    """In a worker: one share of a plain file, or (``end`` None) a whole input of any kind."""
    path, start, end, options = task
    if end is None:
        return _check_source(path, options, None, 0, None)
    with _sources.share_of(path, _sources.raw_from(path, start), end - start, at_start=start == 0) as source:
        return _check_open_source(source, False, options)
