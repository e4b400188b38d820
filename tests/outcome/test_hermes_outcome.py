"""The Hermes outcome classifier on Python exceptions and results of any shape (the JSON cases are conformance)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gym_contract import iter_diagnostics
from gym_contract.outcome import classify_hermes
from tests.strategies import json_values


class APIStatusError(Exception):
    """The shape of the OpenAI SDK's status errors: the HTTP status as an attribute."""

    def __init__(self, message: str, status_code: int) -> None:
        super().__init__(message)
        self.status_code = status_code


class RateLimitError(APIStatusError):
    pass


class UnprintableError(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no text")


def test_a_raised_exception_is_read_by_its_class_status_and_text() -> None:
    outcome = classify_hermes(error=RateLimitError("Error code: 429 - slow down", 429))
    assert (outcome.failure_kind, outcome.status_code, outcome.error_name) == (
        "model_rate_limited",
        429,
        "RateLimitError",
    )
    too_large = classify_hermes(error=APIStatusError("Error code: 413 - prompt is too long", 413))
    assert (too_large.failure_kind, too_large.status_code) == ("model_request_error", 413)
    # The status in the text serves when the exception carries none.
    assert classify_hermes(error=RuntimeError("Error code: 422 - bad tool")).failure_kind == "model_request_error"


def test_an_exception_that_cannot_say_itself_is_judged_by_its_class() -> None:
    outcome = classify_hermes(error=UnprintableError())
    assert (outcome.failure_kind, outcome.error_name) == ("agent_crash", "UnprintableError")
    assert classify_hermes(error=KeyboardInterrupt(), timed_out=True).failure_kind == "agent_timeout"


@pytest.mark.parametrize("budget", [0, -1, True, 1.5, "30"])
def test_an_iteration_budget_that_is_no_count_is_refused(budget: Any) -> None:
    with pytest.raises(ValueError, match="max_iterations"):
        classify_hermes({"completed": False}, max_iterations=budget)


@given(
    result=json_values(max_leaves=12), error=st.one_of(st.none(), json_values(max_leaves=6)), timed_out=st.booleans()
)
def test_any_result_or_error_description_classifies_into_a_valid_outcome(
    result: Any, error: Any, timed_out: bool
) -> None:
    described = error if isinstance(error, dict) or error is None else {"type": error, "message": error}
    outcome = classify_hermes(result, described, timed_out=timed_out).model_dump(mode="python")
    assert [d for d in iter_diagnostics(outcome, "agent_outcome") if d.severity == "error"] == []


@pytest.mark.parametrize(
    ("result", "error"),
    [
        (None, {"type": "\ud800", "message": "\ud800"}),  # found by Hypothesis
        ({"error": "quota \udfff exceeded"}, None),
        ({"error": {"detail": "\ud800"}}, None),
        ({"interrupted": "\ud800" * 300}, None),
        ({"interrupted": {"reason": "\ud800"}}, None),
    ],
)
def test_a_lone_surrogate_in_what_hermes_said_becomes_a_replacement_character(result: Any, error: Any) -> None:
    outcome = classify_hermes(result, error)
    written = outcome.model_dump_json()  # a lone surrogate would make this raise
    assert "\\ud800" not in written
    assert "\\udfff" not in written
    found = iter_diagnostics(outcome.model_dump(mode="python"), "agent_outcome")
    assert [d for d in found if d.severity == "error"] == []
