"""Rollout ids: derived from a run body as the reference derives them, and checked against the pattern."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, PrivateAttr, field_serializer

from gym_contract.capture import read_capture
from gym_contract.rollout_ids import ROLLOUT_ID_PATTERN, is_valid_rollout_id, rollout_id_from_run_body
from gym_contract.validation import _rules


class RunBody(BaseModel):
    """A run request as the reference's agents receive it: the `_ng_*` keys arrive as extras."""

    model_config = ConfigDict(extra="allow")
    prompt: str = "solve"


def body(**fields: Any) -> dict[str, Any]:
    return {"prompt": "solve", **{f"_ng_{key}": value for key, value in fields.items()}}


@pytest.mark.parametrize(
    ("fields", "rollout_id"),
    [
        ({"task_index": 4, "rollout_index": 2}, "4-2"),
        ({"task_index": 4, "rollout_index": 2, "attempt_index": 1}, "4-2-a1"),
        ({"rollout_id": "x", "attempt_index": 2}, "x-a2"),
        ({"task_index": 4, "rollout_index": 2, "attempt_index": 0}, "4-2"),
        ({"task_index": 4, "rollout_index": 2, "attempt_index": None}, "4-2"),
        ({"task_index": 0, "rollout_index": 0}, "0-0"),
        ({"rollout_id": "Task_7.r-0", "task_index": 4, "rollout_index": 2}, "Task_7.r-0"),
        ({"rollout_id": None, "task_index": 4, "rollout_index": 2}, "4-2"),
        ({"task_index": 4, "rollout_index": 2, "attempt_index": "3"}, "4-2-a3"),
        ({"task_index": 4, "rollout_index": 2, "attempt_index": 2.0}, "4-2-a2"),
    ],
)
def test_the_rollout_id_of_a_run_body(fields, rollout_id):
    assert rollout_id_from_run_body(body(**fields)) == rollout_id
    assert rollout_id_from_run_body(RunBody.model_validate(body(**fields))) == rollout_id
    assert rollout_id_from_run_body(MappingProxyType(body(**fields))) == rollout_id


@pytest.mark.parametrize(
    "fields",
    [
        {},
        {"task_index": 4},
        {"rollout_index": 2},
        {"task_index": None, "rollout_index": 2},
        {"attempt_index": 3},
    ],
)
def test_a_body_without_an_explicit_id_or_both_indices_has_no_rollout_id(fields):
    assert rollout_id_from_run_body(body(**fields)) is None


@pytest.mark.parametrize("not_a_body", [None, "4-2", 42, ["_ng_rollout_id", "x"], object()])
def test_something_that_is_neither_a_mapping_nor_a_model_has_no_rollout_id(not_a_body):
    assert rollout_id_from_run_body(not_a_body) is None


@pytest.mark.parametrize("explicit", ["", "a/b", "../a", "-x", ".x", "a b", "é", "x\n", 5, ["x"]])
def test_an_explicit_id_that_breaks_the_pattern_is_refused_and_never_cleaned_up(explicit):
    with pytest.raises(ValueError, match="_ng_rollout_id"):
        rollout_id_from_run_body(body(rollout_id=explicit))


@pytest.mark.parametrize("attempt", ["first", [1], 1.5e400])
def test_an_attempt_index_that_is_not_a_number_is_refused(attempt):
    with pytest.raises(ValueError, match="_ng_attempt_index"):
        rollout_id_from_run_body(body(task_index=4, rollout_index=2, attempt_index=attempt))


def test_a_model_is_read_without_being_serialised():
    class Unserialisable(RunBody):
        secret: str = "s"

        @field_serializer("secret")
        def refuse(self, value: str) -> str:
            raise RuntimeError("the body must not be dumped")

    run = Unserialisable.model_validate(body(task_index=7, rollout_index=0, attempt_index=1))
    assert rollout_id_from_run_body(run) == "7-0-a1"


def test_a_model_may_hold_the_keys_as_private_attributes():
    class WithPrivateKeys(BaseModel):
        _ng_task_index: int = PrivateAttr(default=3)
        _ng_rollout_index: int = PrivateAttr(default=1)

    assert rollout_id_from_run_body(WithPrivateKeys()) == "3-1"


@pytest.mark.parametrize(
    ("candidate", "valid"),
    [
        ("7-0", True),
        ("Task_7.r-0-a2", True),
        ("a", True),
        ("", False),
        ("-7", False),
        (".7", False),
        ("7-0\n", False),
        ("7/0", False),
        ("7 0", False),
        ("７", False),
        (7, False),
        (None, False),
    ],
)
def test_a_rollout_id_is_valid_when_it_matches_the_pattern_in_full(candidate, valid):
    assert is_valid_rollout_id(candidate) is valid


def test_the_pattern_is_the_one_the_validation_rules_use():
    assert ROLLOUT_ID_PATTERN is _rules.ROLLOUT_ID_PATTERN


@given(
    st.integers(min_value=0, max_value=10**6),
    st.integers(min_value=0, max_value=10**6),
    st.none() | st.integers(min_value=0, max_value=50),
)
def test_ids_derived_from_indices_are_valid_and_can_name_a_capture_file(task, rollout, attempt):
    rollout_id = rollout_id_from_run_body(body(task_index=task, rollout_index=rollout, attempt_index=attempt))
    assert rollout_id is not None
    assert is_valid_rollout_id(rollout_id)
    assert rollout_id.endswith(f"-a{attempt}") == bool(attempt)
    assert read_capture("/nonexistent-capture-dir", rollout_id).found is False
