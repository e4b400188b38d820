"""Explaining a record from the failing part of it says exactly what explaining the whole record says."""

from __future__ import annotations

import copy
import os
import random
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gym_contract.validation import _explaining, _fastpath
from gym_contract.validation._explaining import schema_diagnostics
from tests.test_agreement import mutated
from tests.test_make_corpus import make_corpus
from tests.validation.test_fastpath import _instances

KIND_OF_ATTACHMENT = {
    "ng_trajectory": "trajectory",
    "ng_agent_observations": "bundle",
    "ng_model_call_capture": "model_call_capture",
}


def explained_whole(record: dict, kind: str) -> list:
    """The diagnostics when the compiled validator does not say where to look: the whole record is walked."""
    with mock.patch.object(_fastpath, "failing_paths", return_value=None):
        return schema_diagnostics(record, kind)


def walked(record: dict, kind: str) -> list:
    """What jsonschema was given to walk while ``record`` was explained."""
    given_instances = []
    real = _explaining.schemas.validator

    def spying(name):
        validator = real(name)
        iterate = validator.iter_errors
        return mock.Mock(iter_errors=lambda instance: given_instances.append(instance) or iterate(instance))

    with mock.patch.object(_explaining.schemas, "validator", spying):
        schema_diagnostics(record, kind)
    return given_instances


@pytest.mark.parametrize("kind", ["trajectory", "model_call_capture"])
def test_the_failing_part_is_explained_as_the_whole_record_would_be(kind):
    # Drawing whole records from the schemas is slow: as many examples as the path-agreement laws take.
    @settings(max_examples=min(settings().max_examples, 2 * int(os.environ.get("FASTPATH_EXAMPLES", "12"))))
    @given(mutated(_instances(kind)))
    def check(record):
        if isinstance(record, dict):
            assert schema_diagnostics(record, kind) == explained_whole(record, kind)

    check()


def _realistic(key: str) -> st.SearchStrategy[dict]:
    """An attachment of a rollout record as the benchmark corpus writes it, seeded by Hypothesis."""
    return st.integers(0, 2**32).map(lambda seed: make_corpus.make_record(random.Random(seed), seed, seed % 4, 12)[key])


@pytest.mark.parametrize("key", sorted(KIND_OF_ATTACHMENT))
def test_a_realistic_record_broken_anywhere_is_explained_as_the_whole_record_would_be(key):
    kind = KIND_OF_ATTACHMENT[key]

    @given(mutated(_realistic(key)))
    def check(record):
        if isinstance(record, dict):
            assert schema_diagnostics(record, kind) == explained_whole(record, kind)

    check()


@pytest.fixture(scope="module")
def rollout() -> dict:
    return make_corpus.make_record(random.Random("explaining"), 0, 0, 48)


def test_a_violation_deep_in_a_long_array_is_located_in_the_record(rollout):
    trajectory = copy.deepcopy(rollout["ng_trajectory"])
    last = len(trajectory["tool_calls"]) - 1
    trajectory["tool_calls"][last]["duration_ms"] = -5
    diagnostics = schema_diagnostics(trajectory, "trajectory")
    assert [(d.path, d.keyword) for d in diagnostics] == [(f"/tool_calls/{last}/duration_ms", "minimum")]
    assert diagnostics == explained_whole(trajectory, "trajectory")
    # Only the failing item was walked: every other array of the copy is empty.
    (instance,) = walked(trajectory, "trajectory")
    assert len(instance["tool_calls"]) == 1
    assert all(instance[key] == [] for key in ("invocations", "turns", "model_calls"))


def test_violations_in_several_arrays_and_nested_arrays_are_all_located(rollout):
    bundle = copy.deepcopy(rollout["ng_agent_observations"])
    records = bundle["records"]
    invocations = [i for i, r in enumerate(records) if r.get("kind") == "agent_invocation" and r.get("conversation")]
    tools = [i for i, r in enumerate(records) if r.get("kind") == "tool_call"]
    nested = invocations[-1]
    item = len(records[nested]["conversation"]) - 1
    records[nested]["conversation"][item] = 5
    records[tools[0]]["output"] = "ok"
    del records[tools[-1]]["tool_call_id"]
    diagnostics = schema_diagnostics(bundle, "bundle")
    assert diagnostics == explained_whole(bundle, "bundle")
    paths = {d.path for d in diagnostics}
    assert {f"/records/{tools[0]}", f"/records/{tools[-1]}"} <= paths
    assert f"/records/{nested}/conversation/{item}" in paths


def test_defects_of_the_benchmark_corpus_are_explained_alike():
    rng = random.Random("defects")
    for index in range(12):
        record = make_corpus.make_record(random.Random(f"defect:{index}"), index, index % 4, 24)
        make_corpus.inject_defect(rng, record)
        for key, kind in KIND_OF_ATTACHMENT.items():
            if not _fastpath.structurally_valid(record[key], kind):
                assert schema_diagnostics(record[key], kind) == explained_whole(record[key], kind)


@given(st.sampled_from([None, 1.5, "text", [], {"k": 1}]))
def test_a_record_the_compiled_validator_cannot_locate_is_explained_whole(value):
    with mock.patch.object(_fastpath, "failing_paths", return_value=[]):
        record = {"task_id": value, "rollout_id": "r"}
        assert schema_diagnostics(record, "trajectory") == explained_whole(record, "trajectory")
