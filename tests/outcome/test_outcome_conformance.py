"""The outcome conformance cases (tests/conformance/outcomes/) run through this package's classifiers.

Each file holds one harness's cases: the arguments its classifier takes, as JSON, and the fields
of the `ng_agent_outcome` they must give, with the action `decide` takes on it by default.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gym_contract import iter_diagnostics
from gym_contract.models import AgentOutcome
from gym_contract.outcome import classify_hermes, decide

CASES = Path(__file__).resolve().parents[1] / "conformance" / "outcomes"
CLASSIFIERS: dict[str, Callable[..., AgentOutcome]] = {"hermes": classify_hermes}


def cases() -> list[Any]:
    return [
        pytest.param(path.stem, case, id=f"{path.stem}-{index}")
        for path in sorted(CASES.glob("*.json"))
        for index, case in enumerate(json.loads(path.read_text()))
    ]


def test_every_harness_of_the_cases_has_a_classifier() -> None:
    assert {path.stem for path in CASES.glob("*.json")} == set(CLASSIFIERS)


@pytest.mark.parametrize(("harness", "case"), cases())
def test_each_case_gives_its_outcome_and_decision(harness: str, case: dict[str, Any]) -> None:
    outcome = CLASSIFIERS[harness](**case["arguments"])
    document = outcome.model_dump(mode="json")
    expected = dict(case["expected"])
    assert decide(outcome).action == expected.pop("action"), case["description"]
    assert {key: document[key] for key in expected} == expected, case["description"]
    assert [d for d in iter_diagnostics(document, "agent_outcome") if d.severity != "info"] == []
