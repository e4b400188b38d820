"""Classify how a Hermes run ended from what `AIAgent.run_conversation` returned, or the exception it raised."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from gym_contract._values import count, integer, nonempty, preview, text
from gym_contract._vocabulary import (
    AGENT_ABORTED,
    AGENT_CRASH,
    AGENT_MAX_TURNS,
    AGENT_TIMEOUT,
    MODEL_AUTH_ERROR,
    MODEL_CONTEXT_LIMIT,
    MODEL_RATE_LIMITED,
    MODEL_REQUEST_ERROR,
    MODEL_SERVER_ERROR,
    MODEL_TRANSPORT_ERROR,
    UNKNOWN_ERROR,
)
from gym_contract.models import AgentOutcome, Classifier
from gym_contract.outcome._base import (
    Evidence,
    body_error_code,
    check_process_facts,
    json_body,
    kind_for_status,
    kind_from_words,
    overflow_phrase,
    short,
    status_code,
    status_in_text,
)

HERMES_TESTED_VERSION: Final[str | None] = None
"""No recorded Hermes run has been classified yet; the rules follow Hermes's result and its provider SDK."""
HERMES_CLASSIFIER: Final = Classifier(name="gym_contract.outcome.hermes", version="1")

# Exception classes whose name establishes a kind: the OpenAI Python SDK's, through which Hermes calls its
# providers, and the transport errors of httpx and of Python beneath it.
_KIND_BY_EXCEPTION: Final = {
    "RateLimitError": MODEL_RATE_LIMITED,
    "AuthenticationError": MODEL_AUTH_ERROR,
    "PermissionDeniedError": MODEL_AUTH_ERROR,
    "BadRequestError": MODEL_REQUEST_ERROR,
    "UnprocessableEntityError": MODEL_REQUEST_ERROR,
    "InternalServerError": MODEL_SERVER_ERROR,
    "APIConnectionError": MODEL_TRANSPORT_ERROR,
    "APITimeoutError": MODEL_TRANSPORT_ERROR,
    "ConnectError": MODEL_TRANSPORT_ERROR,
    "ReadTimeout": MODEL_TRANSPORT_ERROR,
    "RemoteProtocolError": MODEL_TRANSPORT_ERROR,
    "ConnectionError": MODEL_TRANSPORT_ERROR,
    "ConnectionResetError": MODEL_TRANSPORT_ERROR,
}
_CANCELLED: Final = frozenset({"KeyboardInterrupt", "CancelledError"})
_TOO_LARGE: Final = 413


def classify_hermes(
    result: Mapping[str, Any] | None = None,
    error: BaseException | Mapping[str, Any] | None = None,
    timed_out: bool = False,
    max_iterations: int | None = None,
    version: str | None = None,
) -> AgentOutcome:
    """The `ng_agent_outcome` of one Hermes run.

    ``result`` is the dict `AIAgent.run_conversation` returned (`error`, `interrupted`, `completed`,
    `final_response`, `api_calls`, `messages`); ``error`` the exception it raised instead — an
    exception, or, from another language, ``{"type": <class name>, "message": …, "status_code": …}``.
    ``timed_out`` says the host's deadline cut the run off; ``max_iterations`` is the iteration budget
    the agent was given, which tells a run that used it up. HTTP 400, 413 and 422 are the provider
    rejecting a request the policy shaped (`model_request_error`, graded); a 413 is such a rejection,
    never a context overflow. Any result and error are read; raises TypeError or ValueError only for
    a ``version`` that is not a string or a ``max_iterations`` that is not a whole number of at least 1.
    """
    check_process_facts(None, version)
    if max_iterations is not None and (integer(max_iterations) is None or max_iterations < 1):
        raise ValueError(f"max_iterations is a whole number of at least 1, not {preview(max_iterations)}")
    evidence = Evidence("hermes", HERMES_CLASSIFIER)
    evidence.harness_version = version
    if HERMES_TESTED_VERSION is None:
        evidence.warn(
            f"Hermes {version or 'unknown'}: the classifier follows Hermes's result and its provider SDK and is "
            "not yet tested on a recorded run"
        )
    if timed_out:
        evidence.signal("process", "timed_out", True)
    if error is not None:
        return _from_exception(evidence, error, timed_out)
    if not isinstance(result, Mapping):
        evidence.signal("process", "result", "none returned" if result is None else "not an object")
        return evidence.outcome(AGENT_TIMEOUT if timed_out else UNKNOWN_ERROR)
    said = result.get("error")
    if said:
        said_text = said if isinstance(said, str) else str(short(said))
        return _from_text(evidence, ("result", "error"), said_text, None, None)
    if result.get("interrupted"):
        evidence.signal("result", "interrupted", short(result.get("interrupted")))
        return evidence.outcome(AGENT_TIMEOUT if timed_out else AGENT_ABORTED, error_name="interrupted")
    return _from_completion(evidence, result, timed_out, max_iterations)


def _from_completion(
    evidence: Evidence, result: Mapping[str, Any], timed_out: bool, max_iterations: int | None
) -> AgentOutcome:
    """No error and no interruption: `completed`, else a final response, says whether the run finished."""
    completed = result.get("completed")
    if completed is True or (completed is None and nonempty(result.get("final_response")) is not None):
        evidence.signal("result", "completed" if completed is True else "final_response", short(completed or "given"))
        if timed_out:
            evidence.warn("the host reported a timeout, but the result says the run completed")
        return evidence.outcome(None)
    calls = count(result.get("api_calls"))
    if completed is False:
        evidence.signal("result", "completed", False)
        if max_iterations is not None and calls is not None and calls >= max_iterations:
            evidence.signal("result", "api_calls", f"{calls} of {max_iterations}: the iteration budget is used up")
            return evidence.outcome(AGENT_MAX_TURNS)
    else:
        evidence.signal("result", "final_response", "missing")
    if timed_out:
        return evidence.outcome(AGENT_TIMEOUT)
    evidence.signal("result", "completed", "no error, no interruption and no final answer: no kind established")
    return evidence.outcome(UNKNOWN_ERROR)


def _exception_facts(error: BaseException | Mapping[str, Any]) -> tuple[str | None, str | None, int | None]:
    """An exception's class name, message and HTTP status, from the exception or its JSON description."""
    if isinstance(error, Mapping):
        return text(error.get("type")), text(error.get("message")), status_code(error.get("status_code"))
    try:  # an exception's own attributes and str() are its class's code: read them without trusting them
        status = status_code(getattr(error, "status_code", None))
        message = str(error)
    except Exception:
        status, message = None, None
    return type(error).__name__, message, status


def _from_exception(evidence: Evidence, error: BaseException | Mapping[str, Any], timed_out: bool) -> AgentOutcome:
    name, message, status = _exception_facts(error)
    evidence.signal("exception", "type", name)
    if name in _CANCELLED:
        return evidence.outcome(AGENT_TIMEOUT if timed_out else AGENT_ABORTED, error_name=name, message=message)
    return _from_text(evidence, ("exception", "message"), message, status, name)


def _from_text(
    evidence: Evidence, where: tuple[str, str], said: str | None, status: int | None, name: str | None
) -> AgentOutcome:
    """An error's verdict from its status (given, or in its text), its words and its exception class."""
    status = status if status is not None else status_code(status_in_text(said))

    def verdict(kind: str, why: str) -> AgentOutcome:
        evidence.signal(*where, why)
        return evidence.outcome(kind, status_code=status, error_name=name, message=said)

    if status == _TOO_LARGE:
        return verdict(MODEL_REQUEST_ERROR, "status 413: the provider rejected the request, not an overflow")
    phrase = overflow_phrase(said)
    if phrase is not None:
        return verdict(MODEL_CONTEXT_LIMIT, f"overflow phrasing: {phrase}")
    if body_error_code(json_body(said)) == "context_length_exceeded":
        return verdict(MODEL_CONTEXT_LIMIT, "error.code context_length_exceeded")
    if status is not None:
        kind = kind_for_status(status)
        return verdict(kind or UNKNOWN_ERROR, f"status {status}" + ("" if kind else " establishes no kind"))
    if name in _KIND_BY_EXCEPTION:
        return verdict(_KIND_BY_EXCEPTION[name], f"exception {name}")
    worded = kind_from_words(said)
    if worded is not None:
        return verdict(worded[0], f"no status; {worded[1]!r}")
    if name is not None:
        return verdict(AGENT_CRASH, f"exception {name}: the agent raised without a provider report")
    return verdict(UNKNOWN_ERROR, "no status or phrasing that establishes a kind")
