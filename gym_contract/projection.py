"""The projection of a rollout's evidence to its `ng_trajectory` record (CONTRACT 2.2–2.4).

A producer's own trajectory, the harness's observations and the captured model calls are merged
by exact ids only: producer invocations win, observed tool calls overlay producer ones by
(invocation, tool call id), captured calls merge into producer calls by `model_call_id`. What is
missing becomes a gap. Nothing escapes as an exception: a projection that fails is recorded as a
`trajectory_projection_failed` gap.

The code lives in `gym_contract.evidence._projection`; this module is its public import path.
"""

from gym_contract.evidence import _projection
from gym_contract.evidence._projection import *  # noqa: F403

__all__ = _projection.__all__
