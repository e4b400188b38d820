"""The exact join of observed model-call references to captured model calls (CONTRACT 1.14).

Calls are matched by `model_call_id`, or by the (`model_ref`, `response_id`) pair, and by
nothing else: never by time, text or position. A reference that matches no call, or several, or
a call someone else already owns, is left as the producer wrote it and named by a gap; every
captured call that no invocation owns is named by a gap too.

The code lives in `gym_contract.evidence._join`; this module is its public import path.
"""

from gym_contract.evidence import _join
from gym_contract.evidence._join import *  # noqa: F403

__all__ = _join.__all__
