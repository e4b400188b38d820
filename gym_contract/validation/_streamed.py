"""One input that only a front-to-back read can cut (stdin, a pipe, compressed), checked by workers in batches."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from typing import Any

from gym_contract import _interrupts
from gym_contract.diagnostics import Diagnostic
from gym_contract.reading import _records, _sources
from gym_contract.validation import _fastpath
from gym_contract.validation._checking import _AHEAD_BYTES, Progress, _Options, check_item, merge, pool_of
from gym_contract.validation._report import Report

__all__ = ["check_streamed"]

# Lines a worker gets at a time from a streamed input: large enough to amortise the hand-over.
_BATCH_BYTES = 4 * 1024 * 1024


def check_streamed(
    report: Report, path: str, options: _Options, jobs: int, progress: Progress | None, total: int | None
) -> None:
    """The parent reads, decompresses and numbers the lines; workers check them in batches, in order.

    At most two batches per worker are in flight, so memory stays bounded however long the input.
    Interrupted, the batches in flight are taken back in order up to the first that was cut short.
    """
    stats = _records.ReadStats()
    with _sources.open_source(path) as source, pool_of(jobs) as pool:
        report.inputs.append(source.name)
        in_flight: deque[int] = deque()
        try:
            # In functions of their own, as every loop an interruption handler guards (`_check_open_source`).
            _hand_out(report, source, stats, pool, in_flight, options, jobs, progress, total)
        except KeyboardInterrupt:
            # After a batch cut short, none is taken: the report is of the input's leading part.
            taken = () if report.interrupted else in_flight
            report.interrupted = True
            pool.stop()
            _take_back(report, pool, taken)
        report.bytes += source.consumed()
        report.decoded_bytes += source.produced
        report.items_by_input[source.name] += report.records + report.damaged_lines
    if progress:
        progress(report.bytes, total)


def _hand_out(
    report: Report,
    source: _sources.Source,
    stats: _records.ReadStats,
    pool: Any,
    in_flight: deque[int],
    options: _Options,
    jobs: int,
    progress: Progress | None,
    total: int | None,
) -> None:
    """Every batch of the input handed to the workers, and their reports merged in order."""
    last_line = 0  # the line of the last item handed out
    for batch in _batches(_records.iter_lines(source, options.max_line_bytes, stats=stats)):
        in_flight.append(pool.submit(_check_batch, (source.name, batch, last_line, options)))
        last_line = _line_of(batch[-1][1], last_line)
        while len(in_flight) > 2 * jobs:
            _merge_first(report, pool, in_flight)
        if progress:
            progress(source.consumed(), total)
    while in_flight:
        _merge_first(report, pool, in_flight)
    # Blank lines after the last record belong to no batch.
    report.lines += stats.lines_seen - last_line
    report.blank_lines += stats.lines_seen - last_line


def _take_back(report: Report, pool: Any, tickets: Iterable[int]) -> None:
    """The reports the stopped workers hand back, merged in order up to the first cut short."""
    for ticket in tickets:
        part = pool.result(ticket)
        if part is None:
            break
        merge(report, part)
        if part.interrupted:
            break


def _merge_first(report: Report, pool: Any, in_flight: deque[int]) -> None:
    """Merge the report of the first batch in flight; one that its worker cut short (a worker that
    took SIGTERM on its own) ends the check there, as an interruption does."""
    part = pool.result(in_flight[0])
    with _interrupts.deferred():  # merged and let go at once: an interruption neither loses it nor merges it twice
        merge(report, part)
        pool.release(in_flight.popleft())
    if report.interrupted:
        raise KeyboardInterrupt


def _line_of(item: _records.RawLine | Diagnostic, otherwise: int) -> int:
    line = item.number if isinstance(item, _records.RawLine) else item.line
    return otherwise if line is None else line


Batch = list[tuple[int, _records.RawLine | Diagnostic]]


def _batches(items: Iterator[_records.RawLine | Diagnostic]) -> Iterator[Batch]:
    """The items of a JSONL input with their indexes, in runs of about `_BATCH_BYTES`."""
    return _in_runs(enumerate(items), _BATCH_BYTES)


def _in_runs(entries: Iterable[tuple[int, _records.RawLine | Diagnostic]], size_of_a_run: int) -> Iterator[Batch]:
    """Indexed items in runs of about ``size_of_a_run`` bytes of lines, a run ending with the line that reaches it."""
    run: Batch = []
    size = 0
    for entry in entries:
        run.append(entry)
        size += len(entry[1].data) if isinstance(entry[1], _records.RawLine) else 0
        if size >= size_of_a_run:
            yield run
            run, size = [], 0
    if run:
        yield run


def _check_batch(task: tuple[str, Batch, int, _Options]) -> Report:
    """In a worker: one batch of a streamed input, numbered as the whole input is; ``after`` is the
    line of the item before the batch, so that the report counts the lines up to its last item."""
    name, batch, after, options = task
    report = options.report()
    hint: str | None = None
    last = after
    measuring = options.fast and _fastpath.measures_ahead()
    try:
        # Measured a run at a time, as `_Ahead` does: the Structs decoded ahead are checked while in the cache.
        for run in _in_runs(batch, _AHEAD_BYTES) if measuring else (batch,):
            if measuring:
                _fastpath.measure_ahead([item.data for _, item in run if isinstance(item, _records.RawLine)])
            for index, item in run:
                _interrupts.check()
                hint = check_item(report, index, item, name, options, hint)
                last = _line_of(item, last)
    except KeyboardInterrupt:
        report.interrupted = True
    report.lines = last - after
    report.blank_lines = report.lines - report.records - report.damaged_lines
    return report
