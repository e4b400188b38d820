"""Producers: turn a harness's own artifacts into `ng_agent_observations` bundles, outcomes and run summaries.

Every producer has one shape: ``gym_contract.producers.<harness>.observe(path, *, model_ref=None,
exit_code=None, timed_out=False, ...)`` returns an `Observed` — or raises `UnrecognisedArtifactError` for
an input that is none of its artifact forms — and its package declares a
`Producer` (``PRODUCER``): the artifact forms it reads and the capability it can deliver. The
registry below lists them; `gym-contract observe --list` prints it.
"""

from __future__ import annotations

import importlib
from typing import Final

from gym_contract.producers._kit import (
    COMMON_SUMMARY_FIELDS,
    ArtifactForm,
    Observed,
    Producer,
    Rating,
    RunSummary,
    UnrecognisedArtifactError,
)

__all__ = [
    "COMMON_SUMMARY_FIELDS",
    "ArtifactForm",
    "Observed",
    "Producer",
    "Rating",
    "RunSummary",
    "UnrecognisedArtifactError",
    "by_source",
    "producer",
    "producers",
]

_MODULES: Final = {
    "claude-code": "gym_contract.producers.claude_code",
    "codex": "gym_contract.producers.codex",
    "openclaw": "gym_contract.producers.openclaw",
    "opencode": "gym_contract.producers.opencode",
    "pi": "gym_contract.producers.pi",
}
"""Harness name → the package whose ``PRODUCER`` it is; imported only when asked for."""


def producers() -> tuple[Producer, ...]:
    """Every registered producer, by harness name."""
    return tuple(producer(name) for name in sorted(_MODULES))


def producer(name: str) -> Producer:
    """The producer of one harness (`claude-code` …); KeyError naming the known ones for any other."""
    if name not in _MODULES:
        raise KeyError(f"no producer for {name!r}; known: {', '.join(sorted(_MODULES))}")
    declared: Producer = importlib.import_module(_MODULES[name]).PRODUCER
    return declared


def by_source(source: str) -> Producer | None:
    """The producer whose bundles carry ``source`` (`claude_code` …), or None when no registered one does."""
    return next((declared for declared in producers() if declared.source == source), None)
