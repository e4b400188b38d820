"""What every outcome classifier shares: error names, failure kinds, bounded messages and the evidence builder."""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterable
from typing import Any, Final, Literal, cast, overload

from gym_contract._json_writing import python_text
from gym_contract._values import integer, obj, text
from gym_contract._vocabulary import (
    INCOMPLETE_KINDS,
    MODEL_AUTH_ERROR,
    MODEL_RATE_LIMITED,
    MODEL_REQUEST_ERROR,
    MODEL_SERVER_ERROR,
    MODEL_TRANSPORT_ERROR,
    TRANSIENT_KINDS,
    UNKNOWN_ERROR,
)
from gym_contract.models import AgentOutcome, Classifier, Signal
from gym_contract.reading._json_parsing import loads


class OpenCodeError:
    """The `name` values of OpenCode's assistant error union (`info.error`), defined once."""

    API_ERROR: Final = "APIError"
    CONTEXT_OVERFLOW_ERROR: Final = "ContextOverflowError"
    PROVIDER_AUTH_ERROR: Final = "ProviderAuthError"
    MESSAGE_OUTPUT_LENGTH_ERROR: Final = "MessageOutputLengthError"
    MESSAGE_ABORTED_ERROR: Final = "MessageAbortedError"
    UNKNOWN_ERROR: Final = "UnknownError"
    STRUCTURED_OUTPUT_ERROR: Final = "StructuredOutputError"
    CONTENT_FILTER_ERROR: Final = "ContentFilterError"
    NAMES: Final = (
        API_ERROR,
        CONTEXT_OVERFLOW_ERROR,
        PROVIDER_AUTH_ERROR,
        MESSAGE_OUTPUT_LENGTH_ERROR,
        MESSAGE_ABORTED_ERROR,
        UNKNOWN_ERROR,
        STRUCTURED_OUTPUT_ERROR,
        CONTENT_FILTER_ERROR,
    )


class ClaudeCodeError:
    """The values of Claude Code's `error` enum (synthetic assistant messages, `api_retry` events), defined once."""

    AUTHENTICATION_FAILED: Final = "authentication_failed"
    BILLING_ERROR: Final = "billing_error"
    RATE_LIMIT: Final = "rate_limit"
    INVALID_REQUEST: Final = "invalid_request"
    SERVER_ERROR: Final = "server_error"
    UNKNOWN: Final = "unknown"
    OAUTH_ORG_NOT_ALLOWED: Final = "oauth_org_not_allowed"
    OVERLOADED: Final = "overloaded"
    MODEL_NOT_FOUND: Final = "model_not_found"
    MAX_OUTPUT_TOKENS: Final = "max_output_tokens"
    VALUES: Final = (
        AUTHENTICATION_FAILED,
        BILLING_ERROR,
        RATE_LIMIT,
        INVALID_REQUEST,
        SERVER_ERROR,
        UNKNOWN,
        OAUTH_ORG_NOT_ALLOWED,
        OVERLOADED,
        MODEL_NOT_FOUND,
        MAX_OUTPUT_TOKENS,
    )


MAX_ERROR_MESSAGE: Final = 16_000
_SIGNAL_VALUE_CHARS = 200

# Provider phrasings of "the prompt is too long for the model" (OUTCOME.md A.7). "request entity too large"
# is left out on purpose: it is the reason phrase of any HTTP 413, and 413 alone is a request error.
_OVERFLOW = re.compile(
    r"prompt is too long"
    r"|exceeds the context window"
    r"|input exceeds context window"
    r"|maximum context length is \d+"
    r"|input token count.{0,80}exceeds the maximum"
    r"|context length is only \d+"
    r"|context[_ ]length[_ ]exceeded"
    r"|requested token count exceeds",
    re.IGNORECASE | re.DOTALL,
)
_STATUS_KINDS = {401: MODEL_AUTH_ERROR, 403: MODEL_AUTH_ERROR, 429: MODEL_RATE_LIMITED}
_REQUEST_STATUSES = frozenset({400, 413, 422})


def kind_for_status(status: int) -> str | None:
    """The failure kind an HTTP status alone establishes, or None when it establishes none."""
    if status in _REQUEST_STATUSES:
        return MODEL_REQUEST_ERROR
    if 500 <= status <= 599:
        return MODEL_SERVER_ERROR
    return _STATUS_KINDS.get(status)


# Where provider SDKs and harnesses write the HTTP status into an error's text: first (`400 {…}`, the
# Anthropic and OpenAI TypeScript SDKs), or after a label (`Error code: 429 - {…}`, the OpenAI Python SDK;
# `API Error: 529`; `HTTP 503`; `status code 502`).
_STATUS_IN_TEXT = re.compile(
    r"^\s*(\d{3})(?=[\s{:]|$)|\b(?:error code|api error|status code|status|http)[:\s]+(\d{3})\b", re.IGNORECASE
)
# Failures without a status, told by their words: what the harnesses themselves retry as transient.
_KIND_WORDS = (
    (re.compile(r"rate.?limit|too many requests", re.IGNORECASE), MODEL_RATE_LIMITED),
    (re.compile(r"overloaded|service unavailable", re.IGNORECASE), MODEL_SERVER_ERROR),
    (
        re.compile(
            r"terminated|connection error|connection refused|connection reset|other side closed|fetch failed"
            r"|socket hang up|network error|reset before headers|upstream connect|econnreset|etimedout"
            r"|timed? ?out",
            re.IGNORECASE,
        ),
        MODEL_TRANSPORT_ERROR,
    ),
)


def status_in_text(text: str | None) -> int | None:
    """The HTTP status an error text states, first or after a label (`Error code: 400`), if any."""
    match = _STATUS_IN_TEXT.search(text or "")
    return int(match.group(1) or match.group(2)) if match else None


def kind_from_words(text: str | None) -> tuple[str, str] | None:
    """The failure kind a status-less error text names by its words (rate limit, overload, transport), and the words."""
    for pattern, kind in _KIND_WORDS:
        found = pattern.search(text or "")
        if found is not None:
            return kind, found.group(0)
    return None


def json_body(text: str | None) -> str | None:
    """The JSON object an error text carries after its prose (`400 {"type":"error",…}`), as text."""
    start = (text or "").find("{")
    return text[start:] if text is not None and start >= 0 else None


def body_error_type(body: str | None) -> str | None:
    """`error.type` of a provider's JSON error body (`invalid_request_error`, `overloaded_error` …), if any."""
    if not body or not body.lstrip().startswith("{"):
        return None
    try:
        parsed = loads(body)
    except ValueError:
        return None
    error = obj(parsed.get("error")) if isinstance(parsed, dict) else None
    return text(error.get("type")) if error is not None else None


def overflow_phrase(text: str | None) -> str | None:
    """The context-overflow phrasing found in a provider text, if any."""
    if not text:
        return None
    match = _OVERFLOW.search(text)
    return match.group(0) if match else None


def body_error_code(body: str | None) -> str | None:
    """`error.code` of a JSON provider body, when the body is JSON and has one."""
    if not body or not body.lstrip().startswith("{"):
        return None
    try:
        parsed = loads(body)
    except ValueError:  # not JSON (nested past the readers' limit included), or text that is not even UTF-8
        return None
    error = obj(parsed.get("error")) if isinstance(parsed, dict) else None
    return text(error.get("code")) if error is not None else None


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def writable(text: str) -> str:
    """``text`` as JSON can hold it: a lone surrogate, which a Python string may hold (an exception's
    message, a decoded file name) and no UTF-8 text can, becomes U+FFFD."""
    return _LONE_SURROGATE.sub("\ufffd", text)


@overload
def without_bom(first_line: bytes) -> bytes: ...
@overload
def without_bom(first_line: str) -> str: ...
def without_bom(first_line: str | bytes) -> str | bytes:
    """A file's first line (or whole text) without a leading UTF-8 byte-order mark, which no JSON parser takes.

    Every harness reader passes its first line through here, so a file saved with the mark is read as
    `validate` reads it, not with a damaged first line.
    """
    if isinstance(first_line, bytes):
        return first_line.removeprefix(codecs.BOM_UTF8)
    return first_line.removeprefix("\ufeff")


def error_text(message: str | None, status: int | None) -> str | None:
    """The provider message and status only, at most `MAX_ERROR_MESSAGE` characters; the status always survives."""
    suffix = f" (status {status})" if status is not None else ""
    text = writable(message or "").strip()
    if not text:
        return f"status {status}" if status is not None else None
    room = MAX_ERROR_MESSAGE - len(suffix)
    if len(text) > room:
        text = text[: room - 1] + "…"
    return text + suffix


def short(value: Any) -> Any:
    """A signal value kept short and writable: long strings are cut, containers summarised as their (cut)
    JSON text, lone surrogates made U+FFFD (`writable`)."""
    if isinstance(value, str):
        value = writable(value)
        return value if len(value) <= _SIGNAL_VALUE_CHARS else value[: _SIGNAL_VALUE_CHARS - 1] + "…"
    if isinstance(value, (dict, list)):
        written = python_text(value, sort_keys=True)
        if len(written) > _SIGNAL_VALUE_CHARS:
            return writable(written[: _SIGNAL_VALUE_CHARS - 1] + "…")
        cleaned = writable(written)
        return value if cleaned == written else cleaned  # one holding a lone surrogate: as its text
    return value


_WITHIN_64_BITS = range(-(2**63), 2**64)


def status_code(value: Any) -> int | None:
    """An HTTP status as a harness writes one: an integer within 64 bits (a longer one is no status)."""
    found = integer(value)
    return found if found is not None and found in _WITHIN_64_BITS else None


def check_process_facts(exit_code: Any, version: Any) -> None:
    """Refuse what no host reports: an exit code that is not an integer within 64 bits (TypeError for
    one that is no integer, ValueError for one beyond), a version that is not a string (TypeError)."""
    if exit_code is not None and integer(exit_code) is None:
        raise TypeError(f"exit_code is an integer or None, not {type(exit_code).__name__}")
    if exit_code is not None and exit_code not in _WITHIN_64_BITS:
        raise ValueError("exit_code is beyond 64 bits: no process exits so")
    if version is not None and not isinstance(version, str):
        raise TypeError(f"version is a string or None, not {type(version).__name__}")


class Evidence:
    """Collects the signals and warnings of one classification, then builds the `AgentOutcome`."""

    def __init__(self, harness: str, classifier: Classifier) -> None:
        self.harness = harness
        self.classifier = classifier
        self.harness_version: str | None = None
        self.signals: list[Signal] = []
        self.warnings: list[str] = []

    def signal(self, artifact: str, field: str, value: Any = None) -> None:
        self.signals.append(Signal(artifact=artifact, field=field, value=short(value)))

    def warn(self, message: str) -> None:
        message = writable(message)
        if message not in self.warnings:
            self.warnings.append(message)

    def lines(self, items: Iterable[Any] | None, artifact: str) -> list[tuple[int, dict[str, Any]]]:
        """Events as (0-based index, object); raw lines are parsed, damaged or non-object lines become
        warnings that name them by their 1-based line number."""
        events: list[tuple[int, dict[str, Any]]] = []
        damaged: list[int] = []
        for index, item in enumerate(items or ()):
            value = item
            if isinstance(item, (str, bytes, bytearray)):
                raw: str | bytes = bytes(item) if isinstance(item, bytearray) else item
                if index == 0:  # a file's first line may begin with a byte-order mark
                    raw = without_bom(raw)
                if not raw.strip():
                    continue
                try:
                    value = loads(raw)
                except ValueError:  # not JSON, or (given as str) text that is not even UTF-8
                    damaged.append(index)
                    continue
            if isinstance(value, dict):
                events.append((index, value))
            else:
                damaged.append(index)
        if damaged:
            # Numbered from 1, as gaps and diagnostics number lines; the index stays the signals' list position.
            shown = ", ".join(str(index + 1) for index in damaged[:5]) + (", …" if len(damaged) > 5 else "")
            where = f"line {shown}" if len(damaged) == 1 else f"lines {shown}"
            self.warn(f"{len(damaged)} {artifact} line(s) are not JSON objects and were ignored ({where})")
            self.signal(artifact, "damaged_lines", len(damaged))
        return events

    def outcome(
        self,
        kind: str | None,
        *,
        status_code: int | None = None,
        error_name: str | None = None,
        message: str | None = None,
        retryable: bool | None = None,
    ) -> AgentOutcome:
        """The verdict: status and partial work follow from the kind; `retryable` from it unless it is unknown."""
        response_status: Literal["completed", "failed", "incomplete"]
        if kind is None:
            response_status = "completed"
        elif kind in INCOMPLETE_KINDS:
            response_status = "incomplete"
        else:
            response_status = "failed"
        # An unknown error is retryable only when the harness itself marked it so.
        transient = bool(retryable) if kind == UNKNOWN_ERROR else kind in TRANSIENT_KINDS
        return AgentOutcome(
            harness=self.harness,
            harness_version=None if self.harness_version is None else writable(self.harness_version),
            classifier=self.classifier,
            response_status=response_status,
            failure_kind=cast(Any, kind),  # one of FAILURE_KINDS, the schema's enum
            retryable=transient,
            partial_work_retained=response_status == "incomplete",
            status_code=status_code,
            error_name=None if error_name is None else writable(error_name),
            error_message=error_text(message, status_code) if kind is not None else None,
            signals=self.signals,
            warnings=self.warnings,
        )
