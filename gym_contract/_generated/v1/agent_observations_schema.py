# generated from schemas/v1/agent_observations.schema.json by tools/codegen.py — do not edit

from __future__ import annotations

from typing import Annotated
from pydantic import ConfigDict, Field
from . import (
    agent_invocation_schema,
    context_compaction_schema,
    observation_gap_schema,
    sandbox_observation_schema,
    tool_call_observation_schema,
)
from gym_contract._model_base import ContractModel


class AgentObservationBundle(ContractModel):
    """
    The `ng_agent_observations` attachment: what a harness observed of one rollout.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    source: str
    """
    Producer that wrote the bundle, e.g. `claude_code`, `hermes`, `openclaw`, `opencode`, `pi`.
    """
    records: Annotated[
        list[
            Annotated[
                agent_invocation_schema.AgentInvocation
                | tool_call_observation_schema.ToolCallObservation
                | context_compaction_schema.ContextCompactionObservation
                | sandbox_observation_schema.SandboxObservation,
                Field(discriminator="kind"),
            ]
        ],
        Field(validate_default=True),
    ] = []
    """
    Observation records, unordered: list position does not imply execution order.
    """
    gaps: Annotated[
        list[observation_gap_schema.ObservationGap], Field(validate_default=True)
    ] = []
    """
    Evidence the producer could not observe.
    """
