"""Project every rollout line of an input: collect its evidence, write the result, and summarise the run."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from gym_contract import _interrupts
from gym_contract._json_writing import dumps
from gym_contract._values import obj, objects, text
from gym_contract._vocabulary import CAPTURE, OBSERVATIONS, TRAJECTORY
from gym_contract.diagnostics import Diagnostic
from gym_contract.evidence._collection import collect
from gym_contract.reading import _records, _sources
from gym_contract.validation import read_document, read_record

FAILED = "trajectory_projection_failed"


@dataclass
class ProjectionRun:
    """What projecting one or more inputs gave: rollouts written, damaged lines, failures and gaps by code."""

    rollouts: int = 0
    damaged: list[Diagnostic] = field(default_factory=list)
    failures: Counter[str] = field(default_factory=Counter)
    gaps: Counter[str] = field(default_factory=Counter)
    lines: int = 0
    """Lines read, for placing the damaged lines of a part of a file after those before it."""
    interrupted: bool = False
    """A signal (Ctrl-C, SIGTERM) cut the reading short: every record read before it was written whole."""

    def merge(self, other: ProjectionRun) -> None:
        self.rollouts += other.rollouts
        self.damaged += other.damaged
        self.failures.update(other.failures)
        self.gaps.update(other.gaps)
        self.lines += other.lines
        self.interrupted = self.interrupted or other.interrupted

    @property
    def failed(self) -> bool:
        return bool(self.failures or self.damaged)

    def summary(self) -> dict[str, Any]:
        """The counts; with `"interrupted": true` when a signal cut the run short."""
        summary: dict[str, Any] = {
            "rollouts": self.rollouts,
            "damaged_lines": len(self.damaged),
            "projection_failures": dict(self.failures),
            "gaps_by_code": dict(self.gaps.most_common()),
        }
        if self.interrupted:
            summary["interrupted"] = True
        return summary


def project_source(
    source: _sources.Source,
    capture_dirs: Sequence[str],
    write: Callable[[bytes], object],
    *,
    json_document: bool = False,
    on_problem: Callable[[Diagnostic | None], None] | None = None,
    progress: Callable[[int], None] | None = None,
    stats: _records.ReadStats | None = None,
) -> ProjectionRun:
    """Each rollout record of ``source`` with its capture merged, observations joined and trajectory attached.

    ``source`` is JSONL, or with ``json_document`` one JSON document: a record, or an array of them
    (`_records.is_json_document` tells which from an input's name, as for every command). ``write``
    takes each projected record as one JSONL line. ``on_problem`` hears of each damaged line or
    record (its diagnostic) and each failed projection (None) as it happens.
    """
    run = ProjectionRun()
    try:
        # The loop is in a function of its own, so that an interruption taken at its back edge reaches
        # this handler: Python 3.13 leaves some back edges out of the try around a loop in the same
        # function (python/cpython#130279).
        _project_records(
            run, source, _rollouts(source, json_document, stats), capture_dirs, write, on_problem, progress
        )
    except KeyboardInterrupt:
        run.interrupted = True
    return run


def _rollouts(
    source: _sources.Source, json_document: bool, stats: _records.ReadStats | None
) -> Iterator[tuple[int | None, dict[str, Any] | Diagnostic]]:
    """Each record of ``source`` read as a rollout, with its line (None in a JSON document), or why it is damaged."""
    if json_document:
        yield from read_document(source, "rollout", stats=stats)
        return
    for raw in _records.iter_lines(source, stats=stats):
        if isinstance(raw, Diagnostic):
            yield raw.line, raw
            continue
        read = read_record(raw.data, "rollout")
        yield raw.number, read if isinstance(read, Diagnostic) else read[1]


def _project_records(
    run: ProjectionRun,
    source: _sources.Source,
    rollouts: Iterator[tuple[int | None, dict[str, Any] | Diagnostic]],
    capture_dirs: Sequence[str],
    write: Callable[[bytes], object],
    on_problem: Callable[[Diagnostic | None], None] | None,
    progress: Callable[[int], None] | None,
) -> None:
    for index, (line, read) in enumerate(rollouts):
        if isinstance(read, Diagnostic):
            line = read.line if read.line is not None else line
            # An element of a JSON document has no line: its place in the document names it.
            located = read.at(source=source.name, line=line, record=index if line is None else None)
            run.damaged.append(located)
            if on_problem is not None:
                on_problem(located)
            continue
        result = collect(read, capture_dirs)
        with _interrupts.deferred():  # a record is counted and written whole, or not at all
            _count(run, result, on_problem)
            write(dumps(result) + b"\n")
        if progress is not None:
            progress(source.consumed())


def _count(run: ProjectionRun, result: dict[str, Any], on_problem: Callable[[Diagnostic | None], None] | None) -> None:
    run.rollouts += 1
    trajectory = obj(result.get(TRAJECTORY)) or {}
    for gap in objects(trajectory.get("gaps")) + _failure_gaps(result):
        code = text(gap.get("code")) or "unknown"
        run.gaps[code] += 1
        if code == FAILED:
            run.failures[text(gap.get("detail")) or "unknown"] += 1
            if on_problem is not None:
                on_problem(None)


def _failure_gaps(result: dict[str, Any]) -> list[dict[str, Any]]:
    """A failed projection leaves its gap in the capture or the observations, not in a trajectory."""
    if TRAJECTORY in result:
        return []
    found = []
    for key in (CAPTURE, OBSERVATIONS):
        holder = obj(result.get(key)) or {}
        found += [gap for gap in objects(holder.get("gaps")) if gap.get("code") == FAILED]
    return found
