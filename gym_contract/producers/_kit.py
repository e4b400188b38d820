"""What every producer shares: what it returns (`Observed`, `RunSummary`), declares (`Producer`), and reads with."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final, Literal, overload

from gym_contract._values import finite, nonempty
from gym_contract._vocabulary import CRITERIA
from gym_contract.diagnostics import Diagnostic
from gym_contract.models import ObservationGap
from gym_contract.outcome._base import without_bom, writable
from gym_contract.reading._records import RawLine, iter_lines, read_whole
from gym_contract.reading._sources import STDIN_NAME, DamagedStreamError, InputUnreadable, Source, open_source

if TYPE_CHECKING:
    from gym_contract.models import AgentObservationBundle, AgentOutcome

__all__ = [
    "COMMON_SUMMARY_FIELDS",
    "MAX_LINE_BYTES",
    "ArtifactForm",
    "Observed",
    "Producer",
    "Rating",
    "RunSummary",
    "UnrecognisedArtifactError",
    "artifact_bytes",
    "artifact_name",
    "gap",
    "is_stdin",
    "numbered_lines",
    "readable_name",
    "resolved",
    "timestamp",
    "tool_call_record",
    "unreadable",
    "within",
    "without_bom",
]

Verdict = Literal["V", "O", "X"]

COMMON_SUMMARY_FIELDS = (
    "tool_calls",
    "tool_errors",
    "main_turns",
    "subagent_turns",
    "subagent_calls",
    "compactions",
    "duration_s",
    "input_tokens",
    "output_tokens",
    "cached_tokens",
    "reasoning_tokens",
)
"""The run summary's fields that every producer fills, in order; None where its artifacts cannot say."""


@dataclass(frozen=True)
class RunSummary(Mapping[str, Any]):
    """What one run did as plain numbers, with the same fields for every harness; None where the artifact cannot say.

    Tokens are the totals the artifact states for the whole run, never summed from lines that may
    repeat one response: ``input_tokens`` counts every prompt token, those read from a cache
    included, and ``cached_tokens`` the cache reads among them. ``extra`` holds the numbers only
    one harness has (Claude Code's ``result_success``, ``unknown_tool_calls`` …); they follow the
    common fields in the document, and the mapping view reads both.
    """

    tool_calls: int | None = None
    """Tool calls made, by the main agent and its subagents."""
    tool_errors: int | None = None
    """Tool calls that failed: refused by the harness or returned an error result."""
    main_turns: int | None = None
    """Model turns (responses) of the main agent."""
    subagent_turns: int | None = None
    """Model turns of subagents."""
    subagent_calls: int | None = None
    """Subagents spawned by a tool call."""
    compactions: int | None = None
    """Context compactions the artifact records."""
    duration_s: float | None = None
    """The run's duration in seconds, as the artifact states it, else as the host measured it."""
    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_tokens: int | None = None
    reasoning_tokens: int | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        clash = sorted(set(self.extra) & set(COMMON_SUMMARY_FIELDS))
        if clash:
            raise ValueError(f"extra must not repeat a common field: {', '.join(clash)}")
        object.__setattr__(self, "extra", MappingProxyType(dict(self.extra)))

    def as_dict(self) -> dict[str, Any]:
        """The summary as the `run_summary` of a document: the common fields, then the harness's own."""
        return {**{name: getattr(self, name) for name in COMMON_SUMMARY_FIELDS}, **self.extra}

    def __getitem__(self, key: str) -> Any:
        if key in COMMON_SUMMARY_FIELDS:
            return getattr(self, key)
        return self.extra[key]

    def __iter__(self) -> Iterator[str]:
        yield from COMMON_SUMMARY_FIELDS
        yield from self.extra

    def __len__(self) -> int:
        return len(COMMON_SUMMARY_FIELDS) + len(self.extra)

    # Mapping's equality compares with any mapping (a plain dict included); the dataclass's would not.
    __eq__ = Mapping.__eq__
    __hash__ = None  # type: ignore[assignment]


@dataclass(frozen=True)
class Observed:
    """Everything a producer read from one run: its observations, how it ended, and the run summary."""

    observations: AgentObservationBundle
    outcome: AgentOutcome | None
    """None when the artifacts read do not say how the run ended."""
    summary: RunSummary

    def document(self) -> dict[str, Any]:
        """The `gym-contract observe <harness>` output: one JSON-ready object."""
        # Python mode: a signal may hold a number no double holds (NumberText), which the JSON writer keeps.
        return {
            "ng_agent_observations": self.observations.model_dump(mode="python"),
            "ng_agent_outcome": self.outcome.model_dump(mode="python") if self.outcome is not None else None,
            "run_summary": self.summary.as_dict(),
        }


@dataclass(frozen=True)
class Rating:
    """The rating a producer can reach on one criterion, and why it can reach no more."""

    verdict: Verdict
    reason: str


@dataclass(frozen=True)
class ArtifactForm:
    """One kind of file or directory a producer reads, named as `gym-contract observe --list` shows it."""

    name: str
    description: str


class UnrecognisedArtifactError(ValueError):
    """What a producer's `observe` raises for an input that is none of its artifact forms.

    Each producer tells its forms from their content (a Pi session by its header and entries, a
    Codex rollout by its lines' `type` and `payload` …); a path that holds nothing (no file, an
    empty file or folder) or holds something else is no evidence of its harness, and a document of
    gaps alone would pass it off as a run that left nothing. So is an input that exists but cannot be
    read at all (no permission, a folder whose every artifact is unreadable): ``why`` gives the
    system's reason. An artifact the producer recognises is never refused, however damaged: its
    damage becomes gaps, as does one unreadable file among artifacts that were read.
    """

    def __init__(self, path: str | os.PathLike[str], why: str) -> None:
        self.path = readable_name(os.fsdecode(path))
        self.why = why
        super().__init__(f"{self.path}: {why}")


@dataclass(frozen=True)
class Producer:
    """A registered producer: its command name, the bundle `source` it writes, what it reads and can deliver.

    ``capability`` is the one declaration of what the producer's output can reach on C1–C7; the
    docs' capability table and `gym-contract coverage`'s comparison are computed from it.
    """

    name: str
    """The harness as the command line names it: `gym-contract observe <name>`."""
    source: str
    """`ng_agent_observations.source` of its bundles, and its name in the gap registry's `emitted_by`."""
    summary: str
    forms: tuple[ArtifactForm, ...]
    capability: Mapping[str, Rating]
    observe: Callable[..., Observed]
    docs: str = ""
    """The docs page that maps the harness's artifacts, relative to docs/."""

    def __post_init__(self) -> None:
        if tuple(self.capability) != CRITERIA:
            raise ValueError(f"{self.name}: the capability must rate {', '.join(CRITERIA)}, in that order")
        if not self.forms:
            raise ValueError(f"{self.name}: a producer reads at least one artifact form")
        object.__setattr__(self, "capability", MappingProxyType(dict(self.capability)))

    def describe(self) -> dict[str, Any]:
        """The producer as `gym-contract observe --list --format json` shows it."""
        return {
            "harness": self.name,
            "source": self.source,
            "summary": self.summary,
            "artifact_forms": [{"name": form.name, "description": form.description} for form in self.forms],
            "capability": {
                criterion: {"verdict": rating.verdict, "reason": rating.reason}
                for criterion, rating in self.capability.items()
            },
        }


# ------------------------------------------------------------------ reading an artifact's lines

MAX_LINE_BYTES: Final = 64 * 1024 * 1024
"""A transcript line longer than this is reported as malformed and skipped, never held in memory whole."""


def gap(code: str, invocation_id: str | None = None, detail: str | None = None) -> ObservationGap:
    """One evidence gap: its registered code, and the invocation and detail it concerns.

    A detail that names a file keeps the name as text: bytes of a name that are not UTF-8 (Python
    holds them as lone surrogates) become U+FFFD, since no JSON document can hold them.
    """
    return ObservationGap(code=code, invocation_id=invocation_id, detail=readable_name(detail) if detail else detail)


def readable_name(name: str) -> str:
    """A file name as text JSON can hold: bytes that were not UTF-8 shown as U+FFFD."""
    try:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:  # a lone surrogate that no file system byte stands for
        return writable(name)


def timestamp(value: Any) -> float | None:
    """Unix seconds from an ISO-8601 string or a number of epoch seconds; anything else is unknown."""
    seconds = finite(value)
    if seconds is not None:
        return seconds
    written = nonempty(value)
    if written is None:
        return None
    try:
        parsed = datetime.fromisoformat(written[:-1] + "+00:00" if written.endswith("Z") else written)
    except ValueError:
        return None
    if parsed.tzinfo is None:  # a time without a zone names no instant
        return None
    return parsed.timestamp()


def tool_call_record(
    owner: str,
    call_id: str,
    name: str | None,
    *,
    started: float | None,
    completed: float | None,
    duration_ms: float | None,
    status: str,
    error_type: str | None = None,
    timing_source: str = "artifact",
) -> dict[str, Any]:
    """One `tool_call` record as every producer writes it; ``timing_source`` is kept only for a call with a time.

    No artifact a producer reads knows the sandbox a call ran in: `sandbox_id` is None.
    """
    timed = started is not None or completed is not None
    return {
        "kind": "tool_call",
        "invocation_id": owner,
        "tool_call_id": call_id,
        "sandbox_id": None,
        "tool_name": name,
        "started_at": started,
        "completed_at": completed,
        "duration_ms": duration_ms,
        "timing_source": timing_source if timed else None,
        "status": status,
        "error_type": error_type,
    }


def tool_interval(
    owner: str,
    call_id: str,
    *,
    started: float | None,
    finished: float | None,
    start_seen: bool,
    end_seen: bool,
) -> tuple[float | None, list[ObservationGap]]:
    """The end a tool call's interval keeps, and the gaps its two ends leave.

    ``start_seen`` and ``end_seen`` say whether the artifact holds the call's start and its result at
    all; ``started`` and ``finished`` are their times, None where the artifact gives none. An end
    before the start is no interval: the end is dropped, and the gap says why.
    """
    gaps: list[ObservationGap] = []
    if not start_seen:
        gaps.append(gap("tool_start_missing", owner, call_id))
    elif started is None:
        gaps.append(gap("tool_start_timestamp_missing", owner, call_id))
    if not end_seen:
        gaps.append(gap("tool_result_missing", owner, call_id))
    elif finished is None:
        gaps.append(gap("tool_result_timestamp_missing", owner, call_id))
    if started is not None and finished is not None and finished < started:
        gaps.append(gap("tool_timing_invalid", owner, call_id))
        finished = None
    return finished, gaps


def unreadable(path: str | os.PathLike[str], error: OSError, inner: str | None = None) -> UnrecognisedArtifactError:
    """The refusal of an input that cannot be read at all, with the system's reason (`Permission denied` …).

    ``inner`` names the file under a folder ``path`` that could not be read, when it was the folder's only artifact.
    """
    reason = error.strerror or type(error).__name__
    return UnrecognisedArtifactError(path, f"{inner}: {reason}" if inner is not None else reason)


def is_stdin(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` names standard input ("-"), as it does for `validate`."""
    return os.fspath(path) == "-"


def artifact_name(path: str | os.PathLike[str]) -> str:
    """A file's name as gaps name it (`<name>:<line>`); stdin's is `<stdin>`."""
    return STDIN_NAME if is_stdin(path) else Path(path).name


def _opened(path: str | os.PathLike[str]) -> Source:
    """A file, or stdin for "-", opened as `validate` opens one: gzip and zstd told from their first bytes.

    Raises OSError: the producers say a file that cannot be read with the system's reason.
    """
    try:
        return open_source(os.fspath(path))
    except InputUnreadable as error:
        if isinstance(error.__cause__, OSError):
            raise error.__cause__ from None
        raise OSError(None, error.reason) from None


@overload
def artifact_bytes(path: str | os.PathLike[str], max_bytes: None = None) -> bytes: ...
@overload
def artifact_bytes(path: str | os.PathLike[str], max_bytes: int) -> bytes | None: ...
def artifact_bytes(path: str | os.PathLike[str], max_bytes: int | None = None) -> bytes | None:
    """A file's (or stdin's) whole content, decompressed, without a byte-order mark; None when it passes
    ``max_bytes``. Raises OSError, a damaged compressed stream among its reasons."""
    with _opened(path) as source:
        try:
            return read_whole(source, max_bytes)
        except DamagedStreamError as damage:
            raise OSError(None, str(damage)) from None


def numbered_lines(path: str | os.PathLike[str], max_line_bytes: int) -> Iterator[tuple[int, bytes | None]]:
    """Every line of a file, or of stdin for "-", numbered from 1 (gzip and zstd decompressed, the first line
    without a byte-order mark); a blank line comes out as b"", a line over the limit as None.

    Raises OSError when the input cannot be opened or reading stops part way (a damaged compressed stream
    too): the lines before it have been given.
    """
    with _opened(path) as source:
        given = 0
        for line in iter_lines(source, max_line_bytes):
            if isinstance(line, Diagnostic) and line.code != "line_too_long":  # reading stopped at this line
                raise OSError(None, line.message)
            number = line.number if isinstance(line, RawLine) else line.line or given + 1
            yield from ((blank, b"") for blank in range(given + 1, number))
            yield number, line.data if isinstance(line, RawLine) else None
            given = number


def resolved(folder: Path) -> Path | None:
    """The path with its links followed; None when it cannot be (a loop, an unreadable folder)."""
    try:
        return folder.resolve()
    except (OSError, RuntimeError):  # RuntimeError: a symlink loop, before Python 3.13
        return None


def within(path: Path, folder: Path | None) -> bool:
    """Whether ``path``, its links followed, stays in ``folder``: a file linked from elsewhere is not read.

    The run's files may be written by the agent itself; a link to a file of the host would otherwise
    carry that file into the observations.
    """
    followed = resolved(path)
    return folder is not None and followed is not None and followed.is_relative_to(folder)
