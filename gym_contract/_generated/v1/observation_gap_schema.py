# generated from schemas/v1/observation_gap.schema.json by tools/codegen.py — do not edit

from __future__ import annotations

from gym_contract._model_base import ContractModel
from pydantic import ConfigDict


class ObservationGap(ContractModel):
    """
    A fact the integration could not observe or join exactly. Gap identity is the triple (`code`, `invocation_id`, `detail`).
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    code: str
    """
    Gap code; the registry `gap_codes.json` lists the known ones (the set is open).
    """
    invocation_id: str | None = None
    """
    Invocation the gap concerns, or null when it concerns the rollout.
    """
    detail: str | None = None
    """
    Code-specific detail, e.g. a tool call id or `count=<n>`.
    """
