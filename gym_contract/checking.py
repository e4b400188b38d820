"""Check whole inputs — files, compressed files, stdin — record by record, into one `Report`.

The code lives in `gym_contract.validation._checking`; this module is its public import path.
"""

from gym_contract.validation import _checking
from gym_contract.validation._checking import *  # noqa: F403

__all__ = _checking.__all__
