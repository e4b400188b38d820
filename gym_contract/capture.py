"""Read captured model calls and derive ModelCallRecords, metrics and the ng_model_call_capture attachment.

The code lives in `gym_contract.evidence._capture`; this module is its public import path.
"""

from gym_contract.evidence import _capture
from gym_contract.evidence._capture import *  # noqa: F403

__all__ = _capture.__all__
