# generated from schemas/v1/context_compaction.schema.json by tools/codegen.py — do not edit

from __future__ import annotations

from typing import Annotated, Literal
from pydantic import ConfigDict, Field
from gym_contract._model_base import ContractModel
from . import model_call_ref_schema


class ContextCompactionObservation(ContractModel):
    """
    One context compaction of an invocation's conversation.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    kind: Literal["context_compaction"] = "context_compaction"
    """
    Record discriminator.
    """
    invocation_id: str
    """
    Invocation whose context was compacted.
    """
    observed_at: float | None = None
    """
    When the compaction was observed, UTC Unix time in seconds.
    """
    trigger: str | None = None
    """
    Why it ran: free text such as `auto`, `context_pressure`, `overflow`, `manual`.
    """
    tokens_before: Annotated[int | None, Field(ge=0)] = None
    """
    Producer-reported context tokens before compaction.
    """
    tokens_after: Annotated[int | None, Field(ge=0)] = None
    """
    Producer-reported context tokens after; accounting may differ from `tokens_before`.
    """
    outcome: Literal["completed", "failed", "aborted", "unknown"] = "unknown"
    """
    Outcome of the compaction.
    """
    summary: str | None = None
    """
    Summary text that replaced the compacted history.
    """
    first_kept_item_id: str | None = None
    """
    First conversation item kept verbatim.
    """
    before_model_call: model_call_ref_schema.ModelCallRef | None = None
    """
    Last model call of the invocation observed before the compaction.
    """
    model_calls: Annotated[
        list[model_call_ref_schema.ModelCallRef], Field(validate_default=True)
    ] = []
    """
    Invocation-owned calls made for the compaction, joined only by exact ids.
    """
    after_model_call: model_call_ref_schema.ModelCallRef | None = None
    """
    First model call of the invocation observed after the compaction.
    """
