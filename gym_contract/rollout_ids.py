"""Rollout ids: derive them from a run body and check them, as the reference does.

The code lives in `gym_contract.evidence._rollout_ids`; this module is its public import path.
"""

from gym_contract.evidence import _rollout_ids
from gym_contract.evidence._rollout_ids import *  # noqa: F403

__all__ = _rollout_ids.__all__
