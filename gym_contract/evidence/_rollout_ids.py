"""Rollout ids: derive them from a run body and check them, as the reference does."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeGuard

from pydantic import BaseModel

from gym_contract._values import preview
from gym_contract.validation._rules import ROLLOUT_ID_PATTERN

__all__ = [
    "ATTEMPT_INDEX_KEY",
    "ROLLOUT_ID_KEY",
    "ROLLOUT_ID_PATTERN",
    "ROLLOUT_INDEX_KEY",
    "TASK_INDEX_KEY",
    "is_valid_rollout_id",
    "rollout_id_from_run_body",
]

TASK_INDEX_KEY = "_ng_task_index"
ROLLOUT_INDEX_KEY = "_ng_rollout_index"
ATTEMPT_INDEX_KEY = "_ng_attempt_index"
"""0 on a rollout's first attempt; a retry's id ends in `-a<n>`."""
ROLLOUT_ID_KEY = "_ng_rollout_id"
"""An explicit rollout id, used as it is instead of `<task>-<rollout>`."""


def is_valid_rollout_id(value: object) -> TypeGuard[str]:
    """Whether `value` is a string that matches `^[A-Za-z0-9][A-Za-z0-9._-]*$` (CONTRACT 4), safe on URL paths."""
    # fullmatch, not match with `$`: `$` also matches before a trailing newline.
    return isinstance(value, str) and ROLLOUT_ID_PATTERN.fullmatch(value) is not None


def _field_reader(body: object) -> Callable[[str], Any] | None:
    if isinstance(body, Mapping):
        return body.get
    if isinstance(body, BaseModel):
        # getattr reads declared fields, private attributes and extras alike, without a dump of the body.
        return lambda key: getattr(body, key, None)
    return None


def _attempt_number(value: Any) -> int:
    try:
        # Whatever int() takes, as the reference does: "2", 2.0 and True all count.
        return int(value)
    except (TypeError, ValueError, OverflowError) as error:
        raise ValueError(f"{ATTEMPT_INDEX_KEY} {preview(value)} is not an integer") from error


def id_text(key: str, value: Any) -> str:
    """A value as the reference writes it into an id (its `str`): text, a number or a boolean.

    Anything else — an array, an object, an integer of more digits than Python writes — is a
    ValueError: no id can be made of it.
    """
    if isinstance(value, (str, int, float)):
        try:
            return str(value)
        except ValueError:  # an integer of more digits than Python writes
            pass
    raise ValueError(f"{key} of type {type(value).__name__} cannot make an id")


def rollout_id_from_run_body(body: object) -> str | None:
    """The rollout id of a run request body (a mapping or a Pydantic model), or None when it has none.

    An explicit `_ng_rollout_id` is taken as it is and must already match the pattern (it is never
    cleaned up: ValueError otherwise); else the id is `<task index>-<rollout index>` when both are
    there (each written as `str` writes it; an index that is a list, an object or an integer too long
    to write is a ValueError). An attempt index above 0 appends `-a<n>`, to explicit ids too. A body
    that is neither a mapping nor a model has no id. A derived id is returned as the reference
    derives it, even when it breaks the pattern: `is_valid_rollout_id` tells whether it can be used.
    """
    read = _field_reader(body)
    if read is None:
        return None
    explicit = read(ROLLOUT_ID_KEY)
    if explicit is not None:
        if not is_valid_rollout_id(explicit):
            raise ValueError(
                f"{ROLLOUT_ID_KEY} {preview(explicit)} is not a valid rollout id: it must match "
                f"^[A-Za-z0-9][A-Za-z0-9._-]*$ and is never rewritten to fit"
            )
        rollout_id: str = explicit
    else:
        task_index, rollout_index = read(TASK_INDEX_KEY), read(ROLLOUT_INDEX_KEY)
        if task_index is None or rollout_index is None:
            return None
        rollout_id = f"{id_text(TASK_INDEX_KEY, task_index)}-{id_text(ROLLOUT_INDEX_KEY, rollout_index)}"
    attempt = read(ATTEMPT_INDEX_KEY)
    if attempt is not None and (number := _attempt_number(attempt)) > 0:
        rollout_id = f"{rollout_id}-a{number}"
    return rollout_id
