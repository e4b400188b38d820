"""The summary of a validation run: counts a person can read in ten seconds and a pipeline can parse."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from msgspec import Struct

from gym_contract._objects import NO_MEMBERS, OBJECT_CLASSES, DictObject, objects, readable
from gym_contract._vocabulary import (
    CAPTURE,
    CAPTURED_TOKEN_FIELDS,
    OBSERVATIONS,
    ROLLOUT_ATTACHMENTS,
    TOKEN_FIELDS,
    TRAJECTORY,
    all_token_counts,
    token_count,
)
from gym_contract.coverage import NO_OBSERVATIONS, CoverageMatrix, rollout_coverage
from gym_contract.diagnostics import SEVERITIES, Diagnostic, Severity, docs_url

NOTHING_CHECKED = "no_records"
"""The code of a run that read no record: an error, unless an empty run is allowed (then an info)."""

REPORT_VERSION = "1"
"""Version of the JSON report's layout (`schemas/reports/validate-report.v1.schema.json`): a key may
be added within a version, none is removed or changes meaning."""

__all__ = ["Report", "TokenTally"]

_TRAJECTORY_TOKEN_FIELDS = {name: name for name in TOKEN_FIELDS}
_RANK: dict[str, int] = {severity: rank for rank, severity in enumerate(reversed(SEVERITIES))}


@dataclass
class TokenTally:
    """Known token counts summed, and how many model calls left the count unknown (null)."""

    known: int = 0
    unknown: int = 0

    def add(self, value: Any) -> None:
        count = token_count(value)
        if count is not None:
            self.known += count
        else:
            self.unknown += 1

    def add_all(self, values: list[Any]) -> None:
        """`add` each of ``values``; when all are counts (the common case), summed in C."""
        if all_token_counts(values):
            self.add_counts(values)
            return
        for value in values:
            self.add(value)

    def add_counts(self, counts: list[int]) -> None:
        """`add` each of ``counts``, every one known to be a token count (`all_token_counts`)."""
        self.known += sum(counts)


@dataclass
class Report:
    """Counts over every record checked, and the first diagnostics (all are counted, some are kept)."""

    max_diagnostics: int = 1000
    lines: int = 0
    blank_lines: int = 0
    bytes: int = 0
    """Bytes read from the inputs, as stored (compressed or not)."""
    decoded_bytes: int = 0
    """Bytes of JSON text those held, once decompressed: what was checked."""
    seconds: float = 0.0
    records: int = 0
    damaged_lines: int = 0
    invalid_records: int = 0
    records_by_kind: Counter[str] = field(default_factory=Counter)
    by_code: Counter[str] = field(default_factory=Counter)
    by_severity: Counter[str] = field(default_factory=Counter)
    gaps: Counter[str] = field(default_factory=Counter)
    model_calls: int = 0
    tokens: dict[str, TokenTally] = field(default_factory=lambda: {name: TokenTally() for name in TOKEN_FIELDS})
    diagnostics: list[Diagnostic] = field(default_factory=list)
    inputs: list[str] = field(default_factory=list)
    coverage: CoverageMatrix = field(default_factory=CoverageMatrix)
    items_by_input: Counter[str] = field(default_factory=Counter)
    """Per input, the lines that hold a record or are damaged: what a test case per record counts."""
    per_record: bool = False
    """Whether `flagged` is kept: only a report with a test case per record needs it."""
    flagged: dict[tuple[str, int], tuple[str, int | None, bool]] = field(default_factory=dict)
    """With `per_record`, per (input, index of the item in it), for every record with a diagnostic and
    every damaged line: its most severe diagnostic's severity, its line, and whether the line is
    damaged. Complete even when the diagnostics listed are capped."""
    interrupted: bool = False
    """A signal (Ctrl-C, SIGTERM) cut the check short: every count covers the leading part of the inputs checked."""

    # ------------------------------------------------------------------ accumulation

    def add_diagnostic(self, diagnostic: Diagnostic) -> None:
        self.by_code[diagnostic.code] += 1
        self.by_severity[diagnostic.severity] += 1
        if len(self.diagnostics) < self.max_diagnostics:
            self.diagnostics.append(diagnostic)

    def add_damaged_line(self, diagnostic: Diagnostic, item: int | None = None) -> None:
        """A line that holds no record; ``item`` is its index among the input's records and damaged lines."""
        self.damaged_lines += 1
        self.add_diagnostic(diagnostic)
        if self.per_record and item is not None and diagnostic.source is not None:
            self.flagged[(diagnostic.source, item)] = ("error", diagnostic.line, True)

    def add_record(self, kind: str | None, record: Any, diagnostics: list[Diagnostic]) -> None:
        self.records += 1
        self.records_by_kind[kind or "unknown"] += 1
        for diagnostic in diagnostics:
            self.add_diagnostic(diagnostic)
        if diagnostics and any(diagnostic.severity == "error" for diagnostic in diagnostics):
            self.invalid_records += 1
        located = diagnostics[0] if diagnostics and self.per_record else None
        if located is not None and located.source is not None and located.record is not None:
            worst = max((diagnostic.severity for diagnostic in diagnostics), key=_RANK.__getitem__)
            self.flagged[(located.source, located.record)] = (worst, located.line, False)
        if isinstance(record, (dict, DictObject, Struct)):  # a record's Structs, or its parsed dict
            record = readable(record)
            self._tally_evidence(kind, record)
            self._rate_coverage(kind, record)

    def add_evidence(self, kind: str | None, record: Any) -> None:
        """Count one record's gaps, model calls and tokens, as `add_record` does, without counting the record."""
        self._tally_evidence(kind, readable(record))

    def _rate_coverage(self, kind: str | None, record: Any) -> None:
        """Grouped by observation source only: the agent name lies outside the contract, and the fast path drops it."""
        coverage = rollout_coverage(record, kind) if kind in ("rollout", "trajectory") else None
        if coverage is not None:
            self.coverage.add(coverage, coverage.source or NO_OBSERVATIONS)

    def _tally_evidence(self, kind: str | None, record: Any) -> None:
        """Gaps and token counts, each counted once per rollout: the trajectory already holds the rest.

        ``record`` is read by attribute (`gym_contract._objects`)."""
        if kind == "rollout":
            trajectory = getattr(record, TRAJECTORY)
            if type(trajectory) in OBJECT_CLASSES:
                self._tally_evidence("trajectory", trajectory)
                return
            for key in (OBSERVATIONS, CAPTURE):
                part = getattr(record, key)
                if type(part) in OBJECT_CLASSES:
                    self._tally_evidence(ROLLOUT_ATTACHMENTS[key], part)
            return
        for gap in objects(record.gaps) if kind in ("trajectory", "bundle", "model_call_capture") else ():
            if isinstance(code := gap.code, str):
                self.gaps[code] += 1
        if kind == "trajectory":
            calls = objects(record.model_calls)
            every_stats = [stats if type(stats := call.token_stats) in OBJECT_CLASSES else NO_MEMBERS for call in calls]
            self._tally_calls(every_stats, _TRAJECTORY_TOKEN_FIELDS)
        elif kind == "model_call_capture":
            self._tally_calls(objects(record.calls), CAPTURED_TOKEN_FIELDS)

    def _tally_calls(self, calls: list[Any], fields: dict[str, str]) -> None:
        """Count the calls, and sum each of their token ``fields`` into the tally it names."""
        self.model_calls += len(calls)
        # Field by field, every call's count in one list: when all are counts (the common case), the
        # sums are taken in C, one slice per field, after a single check.
        values: list[Any] = [getattr(call, field) for field in fields for call in calls]
        every_count = all_token_counts(values)
        for position, name in enumerate(fields.values()):
            column = values[position * len(calls) : (position + 1) * len(calls)]
            tally = self.tokens[name]
            if every_count:
                tally.add_counts(column)
            else:
                tally.add_all(column)

    def merge(self, other: Report) -> None:
        """Fold in the report of another part of the input (another file, or another worker's share)."""
        for name in (
            "lines",
            "blank_lines",
            "bytes",
            "decoded_bytes",
            "records",
            "damaged_lines",
            "invalid_records",
            "model_calls",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for name in ("records_by_kind", "by_code", "by_severity", "gaps"):
            getattr(self, name).update(getattr(other, name))
        for name, tally in other.tokens.items():
            self.tokens[name].known += tally.known
            self.tokens[name].unknown += tally.unknown
        self.coverage.merge(other.coverage)
        room = self.max_diagnostics - len(self.diagnostics)
        self.diagnostics.extend(other.diagnostics[: max(room, 0)])
        self.inputs.extend(name for name in other.inputs if name not in self.inputs)
        self.interrupted = self.interrupted or other.interrupted
        self.items_by_input.update(other.items_by_input)
        self.flagged.update(other.flagged)

    def note_empty(self, *, allow_empty: bool = False) -> None:
        """When the whole run read nothing at all, no record and no damaged line, say so (`no_records`): an
        error that fails the verdict, or, with ``allow_empty``, an info. It is listed even past
        `max_diagnostics`, being all there is to say of the run. A damaged line is something read, and
        fails the run already; an interrupted run says nothing of what it did not read."""
        if self.records or self.damaged_lines or self.interrupted or NOTHING_CHECKED in self.by_code:
            return
        if allow_empty:
            said = Diagnostic.of(NOTHING_CHECKED, "the inputs hold no record; allowed", severity="info")
        else:
            message = "the inputs hold no record: nothing was checked (an empty input that is expected: --allow-empty)"
            said = Diagnostic.of(NOTHING_CHECKED, message)
        self.max_diagnostics = max(self.max_diagnostics, len(self.diagnostics) + 1)
        self.add_diagnostic(said)

    # ------------------------------------------------------------------ verdict and views

    @staticmethod
    def reaches(severity: str, fail_on: Severity) -> bool:
        """Whether a diagnostic of ``severity`` is at least as severe as ``fail_on``."""
        return _RANK[severity] >= _RANK[fail_on]

    def verdict(self, fail_on: Severity = "error") -> str:
        """`fail` when a diagnostic reaches ``fail_on``; else `interrupted` when the check was cut short,
        since what was not read may fail; else `pass`."""
        if self.fails(fail_on):
            return "fail"
        return "interrupted" if self.interrupted else "pass"

    def fails(self, fail_on: Severity = "error") -> bool:
        """Whether any diagnostic is at least as severe as ``fail_on``."""
        return any(count and _RANK[severity] >= _RANK[fail_on] for severity, count in self.by_severity.items())

    @property
    def valid_records(self) -> int:
        return self.records - self.invalid_records

    @property
    def truncated(self) -> bool:
        return sum(self.by_code.values()) > len(self.diagnostics)

    def to_dict(self, fail_on: Severity = "error") -> dict[str, Any]:
        """The whole report as plain JSON data; every count is complete even when diagnostics are capped."""
        return {
            "report_version": REPORT_VERSION,
            "verdict": self.verdict(fail_on),
            "fail_on": fail_on,
            "inputs": list(self.inputs),
            "lines": self.lines,
            "blank_lines": self.blank_lines,
            "damaged_lines": self.damaged_lines,
            "records": self.records,
            "records_by_kind": dict(sorted(self.records_by_kind.items())),
            "valid_records": self.valid_records,
            "invalid_records": self.invalid_records,
            "diagnostics_by_severity": {s: self.by_severity.get(s, 0) for s in SEVERITIES},
            "diagnostics_by_code": dict(self.by_code.most_common()),
            "gaps_by_code": dict(self.gaps.most_common()),
            "model_calls": self.model_calls,
            "tokens": {name: {"sum": t.known, "unknown": t.unknown} for name, t in self.tokens.items()},
            "bytes": self.bytes,
            "decoded_bytes": self.decoded_bytes,
            "seconds": round(self.seconds, 3),
            "mb_per_s": round(self.decoded_bytes / 1e6 / self.seconds, 2) if self.seconds > 0 else None,
            "diagnostics": [
                {**diagnostic.to_dict(), "docs": docs_url(diagnostic.code)} for diagnostic in self.diagnostics
            ],
            "diagnostics_truncated": self.truncated,
            "coverage": self.coverage.to_dict(),
            "interrupted": self.interrupted,
        }
