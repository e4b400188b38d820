"""Producers: turn a harness's own artifacts into `ng_agent_observations` bundles, outcomes and run summaries."""

from __future__ import annotations

__all__: list[str] = []
