"""The summary of a validation run: counts a person can read in ten seconds and a pipeline can parse.

The code lives in `gym_contract.validation._report`; this module is its public import path.
"""

from gym_contract.validation import _report
from gym_contract.validation._report import *  # noqa: F403

__all__ = _report.__all__
