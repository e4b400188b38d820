"""Rate every rollout of an input into a coverage matrix, counting the lines that hold no rollout."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gym_contract import _interrupts
from gym_contract.coverage import CoverageMatrix, GroupBy, rollout_coverage
from gym_contract.diagnostics import Diagnostic
from gym_contract.reading import _records, _sources


@dataclass
class CoverageRun:
    """The matrix of one or more inputs, their damaged lines (located) and how many records were not rollouts."""

    matrix: CoverageMatrix = field(default_factory=CoverageMatrix)
    damaged: list[Diagnostic] = field(default_factory=list)
    other_records: int = 0
    lines: int = 0
    """Lines read, for placing the damaged lines of a part of a file after those before it."""
    interrupted: bool = False
    """A signal (Ctrl-C, SIGTERM) cut the reading short: the matrix rates the rollouts read before it."""

    def rate(self, record: dict[str, Any], by: GroupBy) -> None:
        """Add one record's verdicts under its producer; a record that is no rollout is only counted."""
        coverage = rollout_coverage(record)
        if coverage is None:
            self.other_records += 1
        else:
            self.matrix.add(coverage, coverage.producer(by))

    def merge(self, other: CoverageRun) -> None:
        self.matrix.merge(other.matrix)
        self.damaged += other.damaged
        self.other_records += other.other_records
        self.lines += other.lines
        self.interrupted = self.interrupted or other.interrupted


def rate_source(
    source: _sources.Source,
    *,
    json_document: bool,
    by: GroupBy = "source",
    on_damaged: Callable[[Diagnostic], None] | None = None,
    progress: Callable[[int], None] | None = None,
    stats: _records.ReadStats | None = None,
) -> CoverageRun:
    """Rate each rollout of an open input; ``progress`` is called now and then with the bytes read."""
    run = CoverageRun()
    # Whole records, never skeletons: the agent name lies outside the contract and only they keep it.
    entries = _records.records_of(source, json_document=json_document, stats=stats)
    try:
        for index, (line, entry) in enumerate(entries):
            if progress is not None and index % 64 == 0:
                progress(source.consumed())
            if isinstance(entry, Diagnostic):
                located = entry.at(source=source.name, line=entry.line if entry.line is not None else line)
                run.damaged.append(located)
                if on_damaged is not None:
                    on_damaged(located)
                continue
            with _interrupts.deferred():  # a rollout is rated on every criterion or not at all
                run.rate(entry, by)
    except KeyboardInterrupt:
        run.interrupted = True
    return run
