"""The law of scale: no entry point takes super-linear time on large valid inputs.

For each of the rules, the join, the projection, lineage and the exports, the CPU time for an input
twice as large stays within 2.5 times the time for the input itself. Each input is a clean rollout
whose units are a third one parent chain, a third children of one parent, and a third one
invocation's own tool calls, model calls, compactions and gaps (`large_rollout`'s `mixed` shape), at
sizes where a quadratic term shows (the parent-chain check once took 7 s at 1,000 invocations and
53 s at 2,000).

Timing on a shared machine is noisy: the inputs grow four times (two doublings, so 2.5² = 6.25 for
linear work against about 16 for quadratic), each figure is the process's CPU time with the garbage
collector paused — a full collection's cost depends on every object the process holds, not on the
input, and comes in steps that would make a ratio jump — and a ratio over the bound is measured
again, as medians of three runs, before the law is said to be broken.
"""

from __future__ import annotations

import gc
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings

from gym_contract import chain, derive_record, iter_diagnostics, join, project, rollout_coverage
from gym_contract._json_writing import dumps
from gym_contract._values import NumberText
from gym_contract.capture import Capture, capture_attachment
from gym_contract.evidence._projection_merge import Gaps, merge_invocations
from gym_contract.interop import from_atif, to_atif, to_otel
from gym_contract.models import AgentInvocation, AgentObservationBundle
from gym_contract.producers.claude_code._bundle import _settle_links
from gym_contract.producers.claude_code._mapping import Mapped
from gym_contract.validation import check_line
from tests.rollout_strategies import Rollout, large_rollout, large_rollouts

NOW = 1_786_100_000.0
BOUND = 2.5
GROWTH = 4
"""The larger input is four times the smaller, two doublings: linear work takes at most BOUND² as
long (6.25 times), a quadratic term shows as about sixteen, far from the noise of a shared machine."""


def cpu_seconds(work: Callable[[], object], repeats: int) -> float:
    """The median CPU time of ``work`` over ``repeats`` runs, the garbage collector paused while it runs."""
    times = []
    for _ in range(repeats):
        gc.collect()
        gc.disable()
        try:
            started = time.process_time()
            work()
            times.append(time.process_time() - started)
        finally:
            gc.enable()
    return statistics.median(times)


def assert_linear(small: Callable[[], object], large: Callable[[], object], what: str) -> None:
    """``large``, on an input `GROWTH` times the size of ``small``'s, takes at most BOUND per doubling.

    Measured once, then, if over the bound, twice more as medians of three runs: noise does not last,
    a quadratic term does.
    """
    limit = BOUND ** (GROWTH.bit_length() - 1)
    ratios = []
    for repeats in (1, 3, 3):
        ratio = cpu_seconds(large, repeats) / max(cpu_seconds(small, repeats), 1e-6)
        if ratio <= limit:
            return
        ratios.append(round(ratio, 2))
    pytest.fail(f"{what}: {GROWTH} times the input took {ratios} times as long, over {limit} on every measure")


# ------------------------------------------------------------------------------------------ inputs


@cache
def _rollout(size: int) -> Rollout:
    return large_rollout(size, "mixed", producer=True)


@cache
def _calls(size: int) -> tuple[Any, ...]:
    lines = [json.loads(line) for line in _rollout(size).capture_lines]
    return tuple(derive_record(line, index) for index, line in enumerate(lines))


@cache
def _collected(size: int) -> dict[str, Any]:
    """The rollout as the collector writes it, with its capture attached and its trajectory projected."""
    result = dict(_rollout(size).record)
    result["ng_model_call_capture"] = capture_attachment(Capture("7-0", _calls(size), found=True))
    result["ng_trajectory"] = project(_rollout(size).record, result).model_dump(mode="python")
    return result


@cache
def _bundle(size: int) -> AgentObservationBundle:
    return AgentObservationBundle.model_validate(_rollout(size).record["ng_agent_observations"])


def _conversation(calls: int) -> tuple[Any, ...]:
    """One conversation of ``calls`` calls, each sending the whole history: the input grows as calls²."""
    history: list[dict[str, Any]] = [{"role": "user", "content": "start", "type": "message"}]
    lines = []
    for number in range(calls):
        said = [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": f"a{number}"}]}]
        lines.append({"model_call_id": f"mc{number}", "dialect": "responses", "request": {"input": list(history)},
                      "response": {"id": f"r{number}", "output": said}})  # fmt: skip
        history += [*said, {"role": "user", "content": f"u{number}", "type": "message"}]
    return tuple(derive_record(line, index) for index, line in enumerate(lines))


def _merge(size: int) -> Callable[[], object]:
    record = _rollout(size).record
    producer = [AgentInvocation.model_validate(i) for i in record["ng_trajectory"]["invocations"]]
    observed = [r for r in _bundle(size).records if isinstance(r, AgentInvocation)]
    return lambda: merge_invocations(producer, observed, Gaps())


def _chain_bundle(invocations: int) -> dict[str, Any]:
    records: list[dict[str, Any]] = [{"kind": "agent_invocation", "invocation_id": "root"}]
    for number in range(1, invocations):
        parent = "root" if number == 1 else f"a{number - 1}"
        records.append({"kind": "agent_invocation", "invocation_id": f"a{number}", "parent_invocation_id": parent})
    return {"source": "claude_code", "records": records}


def _deep_value(levels: int) -> dict[str, Any]:
    """A rollout holding a value ``levels`` deep, eight leaves a level and a number Python cannot hold at
    the bottom: no compiled writer takes it, so each walk over it is the package's own, every level."""
    value: Any = [NumberText("1e999")]
    for _ in range(levels):
        value = [value, *range(8)]
    return {"_ng_task_index": 7, "_ng_rollout_index": 0, "extra": value}


def _on(function: Callable[..., object], *arguments: Any, **options: Any) -> Callable[[], object]:
    """``function`` called on ``arguments``, which are built now, before any clock starts."""
    return lambda: function(*arguments, **options)


def _diagnostics(record: dict[str, Any]) -> list[Any]:
    return list(iter_diagnostics(record, now=NOW))


def _subagent_links(size: int) -> Callable[[], object]:
    """Claude Code's subagents, each spawned by the one before: every link is checked for a cycle."""
    links = [(f"agent{n}", f"agent{n - 1}" if n > 1 else "session", f"toolu_{n}", "completed") for n in range(1, size)]
    return _on(_settle_links, Mapped(links=links), [])


def _join_of_one_shared_id(size: int) -> Callable[[], object]:
    """Calls that all share one model_call_id (a capture line written again and again), each named by a
    reference that gives its server too: ambiguous, every one, and told apart without a scan per reference."""
    lines = [json.loads(line) for line in _rollout(size).capture_lines]
    calls = [derive_record({**line, "model_call_id": "shared"}, index) for index, line in enumerate(lines)]
    reference = {"model_call_id": "shared", "model_ref": {"type": "responses_api_models", "name": "policy"}}
    records = [{"kind": "agent_invocation", "invocation_id": f"i{n}", "model_calls": [reference]} for n in range(size)]
    bundle = AgentObservationBundle.model_validate({"source": "opencode", "records": records})
    return _on(join, bundle, calls)


OPERATIONS: dict[str, tuple[Callable[[int], Callable[[], object]], int]] = {
    # name: (the work on an input of n units, its input built first; n for the smaller input)
    "the rules of a rollout record": (lambda n: _on(_diagnostics, _rollout(n).record), 600),
    "the rules of a collected record": (lambda n: _on(_diagnostics, _collected(n)), 600),
    # Depth, not breadth: 250 levels, past the 254 orjson writes with the rollout's own two, then 1,000.
    "the rules of a value nested ever deeper": (lambda n: _on(_diagnostics, _deep_value(n)), 250),
    "the join": (lambda n: _on(join, _bundle(n), _calls(n)), 600),
    "the join of calls that share an id": (_join_of_one_shared_id, 600),
    "the projection": (lambda n: _on(project, _rollout(n).record, _rollout(n).record), 300),
    "the projection's merge of invocations": (_merge, 600),
    "lineage": (lambda n: _on(chain, _calls(n)), 600),
    "the ATIF export": (lambda n: _on(to_atif, _collected(n)), 600),
    "the ATIF import": (lambda n: _on(from_atif, to_atif(_collected(n))), 600),
    "the OTel export": (lambda n: _on(to_otel, [_collected(n)]), 600),
    # Bare invocations, so that walks along the chain are most of the work.
    "the OTel export of one long chain": (lambda n: _on(to_otel, [_chain_bundle(n)]), 1000),
    "the ATIF export of one long chain": (lambda n: _on(to_atif, _chain_bundle(n)), 1000),
    # Each subagent nests in its parent's document: written indented, as `export atif` writes it.
    "the ATIF text of one long chain": (lambda n: _on(dumps, to_atif(_chain_bundle(n)), indent=True), 1000),
    "the Claude Code producer's subagent links": (_subagent_links, 2000),
    "validate's check of a line, fast path": (lambda n: _on(check_line, dumps(_collected(n)), None, now=NOW), 600),
    "validate's check of a line, parsed path": (
        lambda n: _on(check_line, dumps(_collected(n)), None, now=NOW, fast=False),
        600,
    ),
    "the coverage criteria": (lambda n: _on(rollout_coverage, _collected(n)), 600),
}


# -------------------------------------------------------------------------------------------- laws


@pytest.mark.parametrize("operation", sorted(OPERATIONS))
def test_law_twice_the_input_takes_at_most_two_and_a_half_times_as_long(operation: str) -> None:
    work, size = OPERATIONS[operation]
    assert_linear(work(size), work(GROWTH * size), operation)


def test_law_lineage_of_one_long_conversation_takes_time_linear_in_its_items() -> None:
    # 60 calls send about 3,600 items; 120 calls four times as many.
    small, large = _conversation(60), _conversation(120)
    assert_linear(lambda: chain(small), lambda: chain(large), "lineage of one conversation")


# ------------------------------------------------------------------------ the commands, on one chain


def test_a_chain_of_4000_invocations_is_validated_projected_and_joined_in_seconds(tmp_path: Path) -> None:
    bundle = _chain_bundle(4000)
    (tmp_path / "bundle.json").write_text(json.dumps(bundle))
    (tmp_path / "rollouts.jsonl").write_text(json.dumps({"_ng_task_index": 7, "_ng_rollout_index": 0,
                                                         "ng_agent_observations": bundle}) + "\n")  # fmt: skip
    (tmp_path / "capture").mkdir()
    commands = [
        ["validate", str(tmp_path / "bundle.json")],
        ["project", str(tmp_path / "rollouts.jsonl"), "-o", str(tmp_path / "out.jsonl")],
        ["join", str(tmp_path / "bundle.json"), "--capture", str(tmp_path / "capture"), "--rollout-id", "7-0"],
    ]
    for command in commands:
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "gym_contract", *command], capture_output=True, check=False)
        # Seconds where it took minutes: a generous bound for a shared machine, far below the cubic time.
        assert (done.returncode, time.perf_counter() - started < 30) == (0, True), done.stderr.decode()


def test_a_cycle_through_a_long_chain_is_found_once_and_named_from_its_first_member() -> None:
    bundle = _chain_bundle(3000)
    bundle["records"][0]["parent_invocation_id"] = "a2999"
    found = [d for d in iter_diagnostics(bundle, "bundle", now=NOW) if d.code == "invocation_parent_cycle"]
    assert len(found) == 1
    assert found[0].path == "/records/0/parent_invocation_id"
    assert found[0].message.startswith("parent links form a cycle: root → a2999 → a2998")
    assert found[0].message.endswith("a1 → root")


@settings(max_examples=4)
@given(large_rollouts(max_size=2000))
def test_law_a_large_clean_rollout_is_valid_and_projects_without_a_failure(rollout: Rollout) -> None:
    """Chains, fans, trees and flat invocations of up to thousands of units, drawn: a few examples, in every
    profile, so that the suite stays fast."""
    assert [d.code for d in iter_diagnostics(rollout.record, now=NOW) if d.severity == "error"] == []
    projected = project(rollout.record, rollout.record)
    assert "trajectory_projection_failed" not in {gap.code for gap in projected.gaps}
    assert [d.code for d in iter_diagnostics(projected.model_dump(mode="python"), "trajectory", now=NOW)
            if d.severity == "error"] == []  # fmt: skip


def test_a_subagent_link_that_would_close_a_cycle_through_a_long_chain_is_refused_with_its_gap() -> None:
    links = [(f"agent{n}", f"agent{n - 1}", f"toolu_{n}", "completed") for n in range(1, 3000)]
    links.append(("agent0", "agent2999", "toolu_back", "completed"))
    gaps: list[Any] = []
    accepted = _settle_links(Mapped(links=links), gaps)
    assert len(accepted) == 2999
    assert "agent0" not in accepted
    assert [(gap.code, gap.invocation_id, gap.detail) for gap in gaps] == [
        ("cyclic_subagent_parent", "agent0", "agent2999")
    ]
