"""Hypothesis strategies for the contract's records: clean values of every kind, and records with one named defect.

For harness authors who fuzz their own readers and writers of the contract::

    from hypothesis import given
    from gym_contract import strategies as contract

    @given(contract.rollout_records())
    def test_my_reader_takes_every_rollout(record):
        my_reader(record)

Every value drawn from the clean strategies passes the engine with no diagnostic of severity
`error` (`gym_contract.validate`); every `Defect` that `defects(code)` draws is reported with
``code`` and with no other code. Needs Hypothesis, the `strategies` extra
(`python -m pip install ".[strategies]"` in a checkout).
"""

from __future__ import annotations

try:
    import hypothesis  # noqa: F401
except ImportError as missing:  # pragma: no cover - exercised by a test that hides the library
    raise ImportError(
        'gym_contract.strategies needs Hypothesis: python -m pip install ".[strategies]" in a checkout of gym-contract'
    ) from missing

from gym_contract.strategies._defects import DEFECT_CODES, Defect, defects
from gym_contract.strategies._records import (
    DIALECTS,
    Rollout,
    agent_outcomes,
    bundles,
    capture_exchanges,
    model_call_captures,
    rollout_records,
    rollouts,
    trajectories,
)

__all__ = [
    "DEFECT_CODES",
    "DIALECTS",
    "Defect",
    "Rollout",
    "agent_outcomes",
    "bundles",
    "capture_exchanges",
    "defects",
    "model_call_captures",
    "rollout_records",
    "rollouts",
    "trajectories",
]
