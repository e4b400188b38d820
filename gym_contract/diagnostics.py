"""Diagnostics: one frozen record per problem found, with a stable code, a severity and a location."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, replace
from typing import Any, Literal

__all__ = [
    "CODES",
    "DOCS_URL",
    "SEVERITIES",
    "CodeInfo",
    "ContractError",
    "Diagnostic",
    "Severity",
    "docs_url",
]

Severity = Literal["error", "warning", "info"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "info")
DOCS_URL = "https://gym-contract.dev/reference/errors/"


@dataclass(frozen=True)
class CodeInfo:
    """What a diagnostic code means: its fixed severity and a one-line summary for the docs."""

    severity: Severity
    summary: str


# Every code the engine can emit. Names are public API: never rename one, only add.
CODES: dict[str, CodeInfo] = {
    # Files and lines (CONTRACT 9.4)
    "input_unreadable": CodeInfo("error", "The input cannot be opened or read at all."),
    "input_truncated": CodeInfo(
        "error", "A compressed stream ends before its end marker; the lines before it were checked."
    ),
    "json_invalid": CodeInfo(
        "error", "The line is not valid JSON (syntax, NaN/Infinity), or nests deeper than its kind of record may."
    ),
    "utf8_invalid": CodeInfo("error", "The line is not valid UTF-8."),
    "record_not_object": CodeInfo("error", "The line is valid JSON but not a JSON object."),
    "line_too_long": CodeInfo("error", "The line is longer than the configured limit and was not parsed."),
    "json_duplicate_key": CodeInfo(
        "error", "An object repeats a key; parsers keep one value and silently drop the other."
    ),
    "kind_unknown": CodeInfo("error", "The record's kind cannot be told from its shape; name it with --kind."),
    "no_records": CodeInfo(
        "error", "The inputs hold no record at all, so nothing was checked: a gate that checked nothing fails."
    ),
    # Structure (CONTRACT 9.1)
    "schema_violation": CodeInfo("error", "The record breaks its JSON Schema (the keyword says which rule)."),
    # Rules the reference checks (CONTRACT 9.2)
    "invocation_id_duplicate": CodeInfo("error", "Two invocations share an invocation_id."),
    "invocation_parent_cycle": CodeInfo("error", "Following parent_invocation_id links revisits an invocation."),
    "tool_timing_reversed": CodeInfo("error", "A tool call completed before it started."),
    "model_call_id_duplicate": CodeInfo("error", "Two model calls of a trajectory share a non-empty model_call_id."),
    "turn_identity_mismatch": CodeInfo("error", "A turn's task_id or rollout_id differs from its trajectory's."),
    "turn_number_duplicate": CodeInfo("error", "Two turns share (invocation_id, turn_no)."),
    # Rules we add (CONTRACT 9.3)
    "invocation_reference_missing": CodeInfo(
        "warning", "A tool call, compaction or turn names an invocation that is not there: the tree is partial."
    ),
    "parent_invocation_missing": CodeInfo("info", "An invocation's parent is not in the same bundle or trajectory."),
    "spawned_by_tool_call_missing": CodeInfo(
        "warning", "spawned_by_tool_call_id names no function_call in the parent invocation's conversation."
    ),
    "tool_call_duplicate": CodeInfo(
        "warning", "Two tool records share (invocation_id, tool_call_id): one call observed twice."
    ),
    "duration_mismatch": CodeInfo(
        "warning", "duration_ms disagrees with completed_at − started_at by more than 1 ms + 1 %."
    ),
    "compaction_tokens_grew": CodeInfo("info", "A compaction reports more tokens after than before."),
    "token_total_mismatch": CodeInfo("warning", "total_tokens differs from prompt_tokens + completion_tokens."),
    "cached_tokens_exceed_prompt": CodeInfo("warning", "cached_tokens is larger than prompt_tokens."),
    "model_call_reference_dangling": CodeInfo(
        "warning", "A ModelCallRef resolves to no entry of the trajectory's model_calls."
    ),
    "gap_code_unknown": CodeInfo(
        "warning", "A gap code is not in the registry (the set is open, so this is only a warning)."
    ),
    "metrics_partial_sum": CodeInfo(
        "warning", "Aggregate metrics sum a token field that is known for some calls only."
    ),
    "rollout_id_invalid": CodeInfo("error", "A rollout id breaks the pattern ^[A-Za-z0-9][A-Za-z0-9._-]*$."),
    "timestamp_implausible": CodeInfo(
        "warning", "A timestamp is not finite, before 2000-01-01, or more than a day in the future."
    ),
    # Agent outcomes (ng_agent_outcome)
    "outcome_status_inconsistent": CodeInfo(
        "error", "An outcome has a transient failure_kind (retried by policy) but response_status completed."
    ),
    "outcome_partial_work_missing": CodeInfo(
        "warning", "A model_context_limit outcome does not say its partial work was retained."
    ),
}


def docs_url(code: str) -> str:
    """The docs anchor that explains a code."""
    return f"{DOCS_URL}#{code}"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One problem found in the input, where it was found, and which rule found it."""

    code: str
    severity: Severity
    message: str
    path: str = ""
    """JSON Pointer inside the record ("" is the record itself)."""
    line: int | None = None
    """1-based line in the file, when the record came from a file."""
    record: int | None = None
    """0-based index of the record in its input."""
    kind: str | None = None
    """Kind of record checked (`bundle`, `trajectory`, …)."""
    schema_id: str | None = None
    """`$id` of the schema that produced it, for `schema_violation`."""
    keyword: str | None = None
    """JSON Schema keyword that failed, for `schema_violation`."""
    source: str | None = None
    """Name of the input file, when there is one."""

    @classmethod
    def of(
        cls, code: str, message: str, path: str = "", *, severity: Severity | None = None, **location: Any
    ) -> Diagnostic:
        """A diagnostic with the registered severity of ``code`` (or one a rule sets for its context)."""
        return cls(code=code, severity=severity or CODES[code].severity, message=message, path=path, **location)

    def at(self, **location: Any) -> Diagnostic:
        """The same diagnostic with more location filled in."""
        return replace(self, **location)

    def to_dict(self) -> dict[str, Any]:
        return {key: value for key, value in asdict(self).items() if value is not None}

    def __str__(self) -> str:
        where = ":".join(str(part) for part in (self.source, self.line) if part is not None)
        pointer = f" at {self.path}" if self.path else ""
        prefix = f"{where}: " if where else ""
        return f"{prefix}{self.severity} {self.code}{pointer}: {self.message}"


class ContractError(ValueError):
    """Raised by `validate` (and by `outcome.decide` for an invalid outcome): carries every diagnostic found."""

    def __init__(self, diagnostics: Iterable[Diagnostic]) -> None:
        self.diagnostics: tuple[Diagnostic, ...] = tuple(diagnostics)
        shown = "\n".join(f"  {diagnostic}" for diagnostic in self.diagnostics[:20])
        more = len(self.diagnostics) - 20
        tail = f"\n  … and {more} more" if more > 0 else ""
        super().__init__(f"{len(self.diagnostics)} contract problem(s):\n{shown}{tail}")

    def __iter__(self) -> Iterator[Diagnostic]:
        return iter(self.diagnostics)
