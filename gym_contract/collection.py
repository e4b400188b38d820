"""The collector's steps over one rollout record: merge its capture, join its observations, attach its trajectory.

The code lives in `gym_contract.evidence._collection`; this module is its public import path.
"""

from gym_contract.evidence import _collection
from gym_contract.evidence._collection import *  # noqa: F403

__all__ = _collection.__all__
