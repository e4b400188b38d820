"""Validate records against the contract: schema first, then semantic rules, every problem located."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from gym_contract._json_pointer import pointer
from gym_contract._limits import max_depth, value_problem
from gym_contract._objects import OBJECT_CLASSES, UNSET, given, plain, readable
from gym_contract._values import json_type
from gym_contract._vocabulary import KINDS, ROLLOUT_ATTACHMENTS, detect_kind
from gym_contract.diagnostics import ContractError, Diagnostic
from gym_contract.reading._json_parsing import (
    duplicate_key,
    nesting_problem,
    not_an_object,
    parse_with_duplicates,
)
from gym_contract.reading._records import DEFAULT_MAX_LINE_BYTES, ReadStats, read_json_document
from gym_contract.reading._sources import Source
from gym_contract.validation import _fastpath
from gym_contract.validation._record_rules import (
    bundle_rules,
    capture_rules,
    exchange_rules,
    outcome_rules,
    trajectory_rules,
)
from gym_contract.validation._rules import Context, rollout_id_rule

__all__ = ["KINDS", "ROLLOUT_ATTACHMENTS", "detect_kind", "is_valid", "iter_diagnostics", "validate"]

# kind -> (semantic rules, container name the rules use in messages); the schema is SCHEMA_OF_KIND's
_KIND_SPECS: dict[str, tuple[Callable[[Any, Context], list[Diagnostic]], str]] = {
    "bundle": (bundle_rules, "bundle"),
    "trajectory": (trajectory_rules, "trajectory"),
    "model_call_capture": (capture_rules, "capture"),
    "capture_exchange": (exchange_rules, "capture"),
    "agent_outcome": (outcome_rules, "outcome"),
}
_ATTACHMENT_POINTERS = {key: pointer(key) for key in ROLLOUT_ATTACHMENTS}


def iter_diagnostics(obj: Any, kind: str | None = None, *, now: float | None = None) -> Iterator[Diagnostic]:
    """Every problem of one record: schema violations, then the semantic rules of its kind.

    ``kind`` is one of `KINDS`; when None it is detected from the record's shape. ``now`` (UTC Unix
    seconds) is the moment timestamps are judged against; the current time by default.
    """
    if kind is not None and kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; expected one of {', '.join(KINDS)}")
    if not isinstance(obj, dict):
        yield Diagnostic.of("record_not_object", f"a record is a JSON object, not {json_type(obj, article=True)}")
        return
    resolved = kind or detect_kind(obj)
    if resolved is None:
        yield Diagnostic.of(
            "kind_unknown",
            "cannot tell what kind of record this is from its keys; name it with kind= (--kind): " + ", ".join(KINDS),
        )
        return
    # A value handed over in Python may be what no JSON text read here can be; it is refused like a damaged line.
    problem = value_problem(obj, max_depth(resolved))
    if problem is not None:
        yield Diagnostic.of("json_invalid", problem[1], pointer(*problem[0]), kind=resolved)
        return
    yield from _diagnostics(obj, resolved, time.time() if now is None else now)


def _diagnostics(obj: dict[str, Any], kind: str, now: float) -> Iterator[Diagnostic]:
    """The diagnostics of a record of a known kind that is a JSON value within the package's limits."""
    if kind == "rollout":
        yield from _rollout_diagnostics(obj, now)
    else:
        yield from _record_diagnostics(obj, kind, now)


def _record_diagnostics(obj: dict[str, Any], kind: str, now: float) -> Iterator[Diagnostic]:
    if _fastpath.structurally_valid(obj, kind):
        # Nothing for the explaining validator to find: in a rollout record, only the attachment
        # that breaks its schema is walked by it, the slowest step of all.
        yield from _rule_diagnostics(obj, kind, now)
        return
    from gym_contract.validation._explaining import (
        schema_diagnostics,  # imports jsonschema: only a failing record needs it
    )

    yield from schema_diagnostics(obj, kind)
    yield from _rule_diagnostics(obj, kind, now)


def _rule_diagnostics(obj: Any, kind: str, now: float) -> list[Diagnostic]:
    """The semantic rules of a record, its Structs or its parsed dict."""
    rules, container = _KIND_SPECS[kind]
    found = rules(readable(obj), Context(now, container))
    return [diagnostic.at(kind=kind) for diagnostic in found] if found else found


def _rollout_diagnostics(
    row: Any, now: float, per_attachment: Callable[..., Iterable[Diagnostic]] = _record_diagnostics
) -> list[Diagnostic]:
    """A rollout record (its Structs or its parsed dict): each attachment checked as its own kind, its paths
    under the attachment key.

    A list, not a generator: on the fast path it runs for every rollout, which almost never has a finding.
    """
    found: list[Diagnostic] = []
    explicit = _member(row, "_ng_rollout_id")
    if given(explicit) and not isinstance(explicit, str):
        found.append(
            Diagnostic.of("rollout_id_invalid", "_ng_rollout_id must be a string", "/_ng_rollout_id", kind="rollout")
        )
    found += [diagnostic.at(kind="rollout") for diagnostic in rollout_id_rule("/_ng_rollout_id", explicit)]
    for key, kind in ROLLOUT_ATTACHMENTS.items():
        value = _member(row, key)
        if not given(value):
            continue
        prefix = _ATTACHMENT_POINTERS[key]
        if not (isinstance(value, dict) or type(value) in OBJECT_CLASSES):
            found.append(
                Diagnostic.of(
                    "schema_violation",
                    f"{key} must be an object, not {json_type(value, article=True)}",
                    prefix,
                    kind=kind,
                    keyword="type",
                )
            )
            continue
        found += [diagnostic.at(path=prefix + diagnostic.path) for diagnostic in per_attachment(value, kind, now)]
    return found


def _member(row: Any, key: str) -> Any:
    """A key of a rollout as it was read: a parsed dict's value, or the member of its Structs; UNSET if absent."""
    return row.get(key, UNSET) if isinstance(row, dict) else getattr(row, key, UNSET)


@dataclass(frozen=True, slots=True)
class CheckedLine:
    """What one line of a file turned out to be: a record of some kind and its diagnostics, or damage."""

    kind: str | None
    decoded: Any
    """The record as the rules read it: the Structs the fast path decoded it into, or the parsed dict; None if
    damaged."""
    diagnostics: list[Diagnostic]

    @property
    def record(self) -> dict[str, Any] | None:
        """The record as plain data (opaque payloads as `msgspec.Raw` when the fast path took it); None if damaged."""
        return plain(self.decoded)  # type: ignore[no-any-return]


def check_line(
    data: bytes, kind: str | None = None, *, hint: str | None = None, now: float | None = None, fast: bool = True
) -> CheckedLine:
    """Check one JSONL line, as cheaply as its content allows; every path gives the same diagnostics.

    1. Fast: the line is decoded into the Structs compiled from its schema, which checks its
       structure, without building objects for opaque payloads.
    2. Parsed: a line the Structs do not take is parsed whole (duplicate keys are found here) and
       its structure checked by the compiled validator.
    3. Explained: a record that breaks its schema is run through the validator that locates and
       explains every violation.
    Paths 1 and 2 only ever accept; the semantic rules run on whatever path accepted. No path looks
    inside an opaque payload, so a key repeated there is not reported on any of them.
    ``hint`` is the kind to try first when ``kind`` is not given (usually the previous line's).
    """
    moment = time.time() if now is None else now
    attempt = kind or hint or (_fastpath.kind_of(data) if fast else None)
    if fast and attempt is not None:
        record = _fastpath.skeleton(data, attempt)
        if record is not None and (kind is not None or _fastpath.kind_of_decoded(record) == attempt):
            return CheckedLine(attempt, record, _rules_only(record, attempt, moment))
    read = read_record(data, kind)
    if isinstance(read, Diagnostic):
        return CheckedLine(None, None, [read])
    resolved, parsed = read
    if fast and resolved is not None and _fastpath.structurally_valid(parsed, resolved):
        return CheckedLine(resolved, parsed, _rules_only(parsed, resolved, moment))
    if resolved is None:
        return CheckedLine(None, parsed, list(iter_diagnostics(parsed, now=moment)))
    return CheckedLine(resolved, parsed, list(_diagnostics(parsed, resolved, moment)))


def read_record(data: bytes, kind: str | None = None) -> tuple[str | None, dict[str, Any]] | Diagnostic:
    """One line read as every command of the package reads it: its kind and its record, or why it is damaged.

    Damaged means: not JSON, not an object, a key repeated in the contract's structure (one repeated
    inside an opaque payload is kept last-wins, as every JSON reader keeps it, and reported by no
    path), or nesting beyond what a record of its kind may have.
    """
    outcome = parse_with_duplicates(data)
    if isinstance(outcome, Diagnostic):
        return outcome
    parsed, repeated = outcome
    if type(parsed) is not dict:
        return not_an_object(parsed)
    resolved = kind or detect_kind(parsed)
    counted = [(path, key) for path, key in repeated if not _fastpath.opaque_at(resolved, path, parsed)]
    if counted:
        return duplicate_key(*counted[0])
    return nesting_problem(parsed, max_depth(resolved)) or (resolved, parsed)


def read_document(
    source: Source, kind: str | None = None, *, max_bytes: int = DEFAULT_MAX_LINE_BYTES, stats: ReadStats | None = None
) -> Iterator[tuple[int | None, dict[str, Any] | Diagnostic]]:
    """The records of one JSON document (an object, or an array of them) as `read_record` reads a line.

    A key repeated inside an opaque payload is kept last-wins, as on every path; one repeated in the
    contract's structure damages its record.
    """

    def inside_payload(record: dict[str, Any], path: tuple[str | int, ...]) -> bool:
        return _fastpath.opaque_at(kind or detect_kind(record), path, record)

    return read_json_document(source, max_bytes, stats=stats, ignore=inside_payload)


def rule_errors(record: dict[str, Any], kind: str, *, now: float | None = None) -> list[Diagnostic]:
    """The error-severity findings of the semantic rules alone, for a record whose structure is checked elsewhere.

    A writer of the contract (the projection, the join) asks this of what it is about to write or use.
    """
    moment = time.time() if now is None else now
    return [diagnostic for diagnostic in _rule_diagnostics(record, kind, moment) if diagnostic.severity == "error"]


def _rules_only(record: Any, kind: str, now: float) -> list[Diagnostic]:
    """The diagnostics of a record known to satisfy its schema: those of the semantic rules."""
    if kind == "rollout":
        return _rollout_diagnostics(record, now, per_attachment=_rule_diagnostics)
    return _rule_diagnostics(record, kind, now)


def validate(obj: Any, kind: str | None = None, *, now: float | None = None) -> None:
    """Raise one `ContractError` carrying every diagnostic when any of them is an error."""
    diagnostics = list(iter_diagnostics(obj, kind, now=now))
    if any(diagnostic.severity == "error" for diagnostic in diagnostics):
        raise ContractError(diagnostics)


def is_valid(obj: Any, kind: str | None = None, *, now: float | None = None) -> bool:
    """Whether the record has no error-severity diagnostic (warnings and infos allowed)."""
    return not any(diagnostic.severity == "error" for diagnostic in iter_diagnostics(obj, kind, now=now))
