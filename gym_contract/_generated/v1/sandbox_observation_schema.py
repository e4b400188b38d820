# generated from schemas/v1/sandbox_observation.schema.json by tools/codegen.py — do not edit

from __future__ import annotations

from typing import Annotated, Literal
from pydantic import ConfigDict, Field
from gym_contract._model_base import ContractModel


class SandboxObservation(ContractModel):
    """
    Outcome and lifetime resource usage of one sandbox, from a sandbox-owning harness.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    kind: Literal["sandbox"] = "sandbox"
    """
    Record discriminator.
    """
    role: Literal["agent", "verifier", "environment"]
    """
    What the sandbox ran.
    """
    provider: str | None = None
    """
    Sandbox provider, e.g. `docker`.
    """
    sandbox_id: str | None = None
    """
    Provider's sandbox instance id.
    """
    outcome: Literal[
        "completed", "failed", "timeout", "oom", "sandbox_error", "cancelled", "unknown"
    ] = "unknown"
    """
    How the sandbox ended.
    """
    exit_code: int | None = None
    """
    Exit code of the sandboxed process.
    """
    wall_time_s: Annotated[float | None, Field(ge=0.0)] = None
    """
    Wall-clock lifetime in seconds.
    """
    cpu_time_s: Annotated[float | None, Field(ge=0.0)] = None
    """
    Cumulative CPU time in seconds; never an allocation or a per-tool estimate.
    """
    peak_memory_mib: Annotated[float | None, Field(ge=0.0)] = None
    """
    Measured memory high-water mark in MiB; never the configured limit.
    """
    resource_usage_source: str | None = None
    """
    Where the usage figures come from.
    """
    error_type: str | None = None
    """
    Error type.
    """
