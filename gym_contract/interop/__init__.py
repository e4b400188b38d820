"""Interop with the agent-trajectory ecosystem: ATIF trajectories both ways, OpenTelemetry GenAI spans out."""

from __future__ import annotations

from gym_contract.interop._atif_export import to_atif
from gym_contract.interop._atif_import import AtifError, check_atif, from_atif
from gym_contract.interop._atif_steps import ATIF_VERSIONS
from gym_contract.interop._otel import to_otel

__all__ = ["ATIF_VERSIONS", "AtifError", "check_atif", "from_atif", "to_atif", "to_otel"]
