"""PinchBench producer: an output folder read as OpenClaw's artifacts, the root session told from its transcript.

PinchBench runs OpenClaw in a sandbox and keeps what it wrote: the run's transcript in
`0001_transcripts/` and the session stores in `openclaw_sessions/`. Its bundles are OpenClaw's
(source `openclaw`): the folder gives the same bundle as the store it holds.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

from gym_contract.outcome._base import check_process_facts
from gym_contract.producers._kit import MAX_LINE_BYTES, Observed, Producer
from gym_contract.producers.openclaw import SOURCE, observe_layout
from gym_contract.producers.openclaw._bundle import Host
from gym_contract.producers.openclaw._declaration import capability, forms
from gym_contract.producers.openclaw._store import Layout, pinchbench_layout

__all__ = ["PRODUCER", "observe"]


def observe(
    path: str | os.PathLike[str],
    *,
    model_ref: str | None = None,
    exit_code: int | None = None,
    timed_out: bool = False,
    max_line_bytes: int = MAX_LINE_BYTES,
) -> Observed:
    """Read a PinchBench output folder: the session its transcript's `session` entry names, and its subagents.

    The root is the store entry whose `sessionId` the transcript names (else the transcript's file
    name); without a store, or without that entry, the transcript alone is read and the gap
    `subagent_hierarchy_unavailable` says why. Raises TypeError or ValueError only for an
    ``exit_code`` that is not an integer within 64 bits.
    """
    check_process_facts(exit_code, None)
    folder = Path(path)
    found = pinchbench_layout(folder) if folder.is_dir() else Layout("none")
    return observe_layout(folder, found, model_ref, Host(exit_code, timed_out), max_line_bytes)


PRODUCER: Final = Producer(
    name="pinchbench",
    source=SOURCE,
    summary="a PinchBench run: its output folder (the run's transcript and the OpenClaw session stores it copied)",
    forms=forms("pinchbench"),
    capability=capability(),
    observe=observe,
    docs="guides/openclaw.md",
)
