"""Classify how a Pi run ended from its session file or its `pi --mode json` stdout (`stopReason`, `errorMessage`)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Final

from gym_contract._values import finite, obj, text
from gym_contract._vocabulary import (
    AGENT_ABORTED,
    AGENT_CRASH,
    AGENT_TIMEOUT,
    MODEL_CONTEXT_LIMIT,
    MODEL_OUTPUT_LIMIT,
    UNKNOWN_ERROR,
)
from gym_contract.models import AgentOutcome, Classifier
from gym_contract.outcome._base import (
    Evidence,
    body_error_code,
    body_error_type,
    check_process_facts,
    json_body,
    kind_for_status,
    kind_from_words,
    overflow_phrase,
    status_code,
    status_in_text,
)
from gym_contract.reading._json_parsing import loads

PI_TESTED_VERSION: Final[str | None] = None
"""Pi writes no version into its artifacts; the classifier is tested on real session files, not on a pinned release."""
PI_CLASSIFIER: Final = Classifier(name="gym_contract.outcome.pi", version="1")

# Overflow phrasings Pi's own provider layer knows (pi-ai's overflow patterns) beyond the shared ones.
_PI_OVERFLOW = re.compile(
    r"input is too long for requested model"
    r"|maximum prompt length is \d+"
    r"|reduce the length of the messages"
    r"|exceeds the available context size"
    r"|greater than the context length"
    r"|context window exceeds limit"
    r"|exceeded model token limit"
    r"|too large for model with \d+ maximum context length"
    r"|model_context_window_exceeded",
    re.IGNORECASE,
)


def receipt(line: dict[str, Any]) -> tuple[float | None, Any]:
    """A captured line's receipt time and its event: ``{"t": <epoch s>, "line": <event or its JSON text>}`` unwrapped.

    A line that is no wrapper is its own event, without a time; a wrapped text that is not JSON is None.
    """
    if set(line) != {"t", "line"}:
        return None, line
    event = line["line"]
    if isinstance(event, (str, bytes)):
        try:
            event = loads(event)
        except ValueError:
            event = None
    return finite(line["t"]), event


def classify_pi(
    lines: Iterable[Any] | None = None,
    exit_code: int | None = None,
    timed_out: bool = False,
    version: str | None = None,
) -> AgentOutcome:
    """The `ng_agent_outcome` of one Pi run, from its session file's entries or its `--mode json` events.

    ``lines`` are the artifact's lines, raw or parsed (a stream's receipt wrappers are unwrapped).
    The run's last assistant message decides: `stopReason` `stop` completed it, `length` hit the
    output limit, `aborted` cancelled it, `error` failed it as its `errorMessage` says (the HTTP
    status the provider SDK puts first, overflow phrasing, Pi's transient-failure words). An error
    or abort that later messages followed was recovered (a retry, a compaction) and is only a
    signal. Raises TypeError or ValueError only for process facts no host reports: an
    ``exit_code`` that is not an integer within 64 bits, a ``version`` that is not a string.
    """
    check_process_facts(exit_code, version)
    evidence = Evidence("pi", PI_CLASSIFIER)
    evidence.harness_version = version
    if PI_TESTED_VERSION is None:
        evidence.warn(
            f"Pi {version or 'unknown'}: the classifier reads Pi's documented artifacts; no release is pinned"
        )
    read = evidence.lines(lines, "artifact")
    if exit_code is not None:
        evidence.signal("process", "exit_code", exit_code)
    if timed_out:
        evidence.signal("process", "timed_out", True)
    stops: list[tuple[str, str, dict[str, Any]]] = []  # (artifact, field, message)
    final: tuple[str, str, dict[str, Any]] | None = None
    retry_failed: tuple[str, str] | None = None
    for index, line in read:
        _, event = receipt(line)
        event = obj(event) or {}
        kind = text(event.get("type"))
        message = obj(event.get("message"))
        artifact = "session" if kind == "message" else "stream"
        if kind in ("message", "message_end") and message is not None and message.get("role") == "assistant":
            stops.append((artifact, f"lines[{index}].message", message))
            retry_failed = None
        elif kind == "agent_end" and event.get("willRetry") is not True:
            given = event.get("messages")
            listed: list[Any] = given if isinstance(given, list) else []
            last = [(i, m) for i, m in enumerate(listed) if isinstance(m, dict) and m.get("role") == "assistant"][-1:]
            final = ("stream", f"lines[{index}].messages[{last[0][0]}]", last[0][1]) if last else final
        elif kind == "auto_retry_end":
            if event.get("success") is True:
                evidence.signal("stream", f"lines[{index}].success", "retry recovered: not a failure")
            else:
                retry_failed = (f"lines[{index}].finalError", text(event.get("finalError")) or "")
        elif kind in ("compaction_end", "auto_compaction_end") and event.get("reason") == "overflow":
            evidence.signal("stream", f"lines[{index}].reason", "overflow: the context was compacted")
    for artifact, field, message in stops[:-1]:
        reason = text(message.get("stopReason"))
        if reason in ("error", "aborted", "length"):
            evidence.signal(artifact, f"{field}.stopReason", f"{reason}, not terminal: work followed")
    terminal = stops[-1] if stops else final
    if terminal is None:
        return _no_stop(evidence, exit_code, timed_out, bool(read))
    artifact, field, message = terminal
    reason = text(message.get("stopReason"))
    evidence.signal(artifact, f"{field}.stopReason", reason)
    if reason == "error":
        said = text(message.get("errorMessage"))
        if retry_failed is not None and retry_failed[1]:
            evidence.signal("stream", retry_failed[0], "the retries gave up")
        return _from_error(evidence, artifact, f"{field}.errorMessage", said)
    if reason == "stop":
        if exit_code not in (None, 0):
            evidence.warn(f"exit code {exit_code} although the last assistant message stopped normally")
        if timed_out:
            evidence.warn("the host reported a timeout, but the last assistant message stopped normally")
        return evidence.outcome(None)
    if reason == "length":
        return evidence.outcome(MODEL_OUTPUT_LIMIT, error_name=reason)
    if reason == "aborted":
        said = text(message.get("errorMessage"))
        return evidence.outcome(AGENT_TIMEOUT if timed_out else AGENT_ABORTED, error_name=reason, message=said)
    # `toolUse` (tools asked for, no answer after them) or no reason at all: the run was cut off.
    return _no_stop(evidence, exit_code, timed_out, True)


def _no_stop(evidence: Evidence, exit_code: int | None, timed_out: bool, read_any: bool) -> AgentOutcome:
    """No assistant message ended the run: the deadline, the process dying, or nothing to say."""
    if timed_out:
        return evidence.outcome(AGENT_TIMEOUT)
    if exit_code == 0 or (exit_code is None and not read_any):
        evidence.signal("process", "exit_code", "no final assistant message: no kind established")
        return evidence.outcome(UNKNOWN_ERROR)
    return evidence.outcome(AGENT_CRASH)


def _from_error(evidence: Evidence, artifact: str, field: str, said: str | None) -> AgentOutcome:
    """An `error` stop: its `errorMessage` carries the provider's status and text, or a transport failure's words."""
    status = status_code(status_in_text(said))
    body = json_body(said)
    name = body_error_type(body) or "error"

    def verdict(kind: str, why: str) -> AgentOutcome:
        evidence.signal(artifact, field, why)
        return evidence.outcome(kind, status_code=status, error_name=name, message=said)

    phrase = overflow_phrase(said) or _pi_overflow(said)
    if phrase is not None:
        return verdict(MODEL_CONTEXT_LIMIT, f"overflow phrasing: {phrase}")
    if body_error_code(body) == "context_length_exceeded":
        return verdict(MODEL_CONTEXT_LIMIT, "error.code context_length_exceeded")
    if status is not None:
        kind = kind_for_status(status)
        return verdict(kind or UNKNOWN_ERROR, f"status {status}" + ("" if kind else " establishes no kind"))
    worded = kind_from_words(said)
    if worded is not None:
        return verdict(worded[0], f"no status; {worded[1]!r}")
    return verdict(UNKNOWN_ERROR, "no status or phrasing that establishes a kind")


def _pi_overflow(said: str | None) -> str | None:
    found = _PI_OVERFLOW.search(said or "")
    return found.group(0) if found else None
