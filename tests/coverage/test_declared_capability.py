"""Coverage compares each producer's rollouts with the capability it declares, read from the producer registry."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gym_contract.coverage import coverage_matrix
from gym_contract.producers import by_source, producers
from tests.support import REPO, run_in_process

EXAMPLES = REPO / "examples" / "rollouts.jsonl"


def rollouts() -> list[dict[str, Any]]:
    return [json.loads(line) for line in EXAMPLES.read_text().splitlines() if line.strip()]


def test_shortfalls_count_the_rollouts_rated_below_each_declared_verdict() -> None:
    matrix = coverage_matrix(rollouts())
    declared = {"pi": {"C5": "V", "C6": "O", "C7": "X"}, "hermes": {"C3": "V"}}

    # Pi's one rollout is O on C5 and C6: below V, not below O; nothing is below X.
    assert matrix.below("C5", "V", "pi") == 1
    assert matrix.below("C6", "O", "pi") == 0
    assert matrix.below("C7", "X", "pi") == 0
    assert matrix.shortfalls(declared) == {"pi": {"C5": 1}, "hermes": {"C3": 2}}
    assert matrix.shortfalls({}) == {}


def test_the_coverage_command_compares_with_the_registered_declarations(tmp_path: Path) -> None:
    status, out, _ = run_in_process("coverage", str(EXAMPLES), "--format", "json")
    document = json.loads(out)

    registered = {name: by_source(name) for name in document["producers"]}
    expected = {
        name: {criterion: rating.verdict for criterion, rating in declared.capability.items()}
        for name, declared in registered.items()
        if declared is not None
    }
    assert status == 0
    assert document["declared"] == expected
    assert set(expected) == {"claude_code", "opencode"} & {declared.source for declared in producers()}
    assert document["below_declared"] == coverage_matrix(rollouts()).shortfalls(expected)


def test_the_text_names_each_shortfall_and_grouping_by_agent_compares_nothing() -> None:
    _, by_source_text, _ = run_in_process("coverage", str(EXAMPLES))
    _, by_agent, _ = run_in_process("coverage", str(EXAMPLES), "--by", "agent", "--format", "json")

    assert "  claude_code C7: declared V, 1 of 1 rollouts rated lower" in by_source_text
    assert json.loads(by_agent)["declared"] == {}
    assert json.loads(by_agent)["below_declared"] == {}
