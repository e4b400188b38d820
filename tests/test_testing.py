"""`gym_contract.testing.assert_valid` in a harness author's test suite."""

from __future__ import annotations

import pytest

from gym_contract import schemas
from gym_contract.testing import assert_valid

TRAJECTORY = schemas.get("trajectory")["examples"][0]


def test_a_valid_record_passes():
    assert_valid(TRAJECTORY, now=1_786_100_000.0)


def test_an_invalid_record_fails_with_every_problem_listed():
    broken = {**TRAJECTORY, "rollout_id": "bad id", "turns": [{**TRAJECTORY["turns"][0], "turn_no": 0}]}
    with pytest.raises(AssertionError) as caught:
        assert_valid(broken, now=1_786_100_000.0)
    message = str(caught.value)
    assert "in this trajectory" in message
    assert "rollout_id_invalid at /rollout_id" in message
    assert "schema_violation at /turns/0/turn_no" in message
    assert "https://gym-contract.dev/reference/errors/#rollout_id_invalid" in message


def test_warnings_fail_only_when_asked():
    noted = {**TRAJECTORY, "gaps": [{"code": "made_up"}]}
    assert_valid(noted, now=1_786_100_000.0)
    with pytest.raises(AssertionError, match="gap_code_unknown"):
        assert_valid(noted, fail_on="warning", now=1_786_100_000.0)


def test_a_severity_that_is_none_is_named_as_such():
    with pytest.raises(ValueError, match="fail_on must be one of error, warning, info; got 'bogus'"):
        assert_valid(TRAJECTORY, fail_on="bogus")  # type: ignore[arg-type]
