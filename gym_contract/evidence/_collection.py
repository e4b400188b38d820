"""The collector's steps over one rollout record: merge its capture, join its observations, attach its trajectory."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from gym_contract._vocabulary import CAPTURE, OBSERVATIONS, TRAJECTORY
from gym_contract.evidence._capture import Capture, capture_attachment, read_capture
from gym_contract.evidence._join import join
from gym_contract.evidence._projection import ProducerTrajectory, observations_refusal, trajectory_attached
from gym_contract.evidence._rollout_ids import is_valid_rollout_id, rollout_id_from_run_body

__all__ = ["collect", "merge_capture"]

REDACTED = "multimodal_history_redacted"
JOIN_FAILED = "agent_observation_join_failed"


def _redacted(result: Mapping[str, Any]) -> bool:
    """Images were scrubbed from the history: the payloads that still hold them must not be kept."""
    for key in (TRAJECTORY, OBSERVATIONS):
        holder = result.get(key)
        gaps = holder.get("gaps") if isinstance(holder, dict) else None
        if isinstance(gaps, list) and any(isinstance(g, dict) and g.get("code") == REDACTED for g in gaps):
            return True
    return False


def _find_capture(capture_dirs: Sequence[str | Path], rollout_id: str) -> Capture:
    """The first store holding this rollout's capture file or marker (3.6)."""
    for directory in capture_dirs:
        try:
            capture = read_capture(directory, rollout_id)
        except ValueError as error:  # an id that cannot name a file: the store cannot be read for it
            return Capture(rollout_id, found=True, unreadable=str(error))
        if capture.found:
            return capture
    return Capture(rollout_id)


def merge_capture(result: Mapping[str, Any], capture_dirs: Sequence[str | Path]) -> dict[str, Any]:
    """A new result with `ng_model_call_capture` attached and its observations joined to it (3.6).

    Keyed by the rollout id derived from the record (section 4); a record without a usable one is
    returned unchanged. A bundle that fails validation or the join leaves a gap in the capture attachment.
    """
    return _merged(result, capture_dirs, None)


def _merged(
    result: Mapping[str, Any], capture_dirs: Sequence[str | Path], producer: ProducerTrajectory | None
) -> dict[str, Any]:
    """`merge_capture`; the bundle's invocations that ``producer`` validated already are not validated again."""
    merged = dict(result)
    try:
        rollout_id = rollout_id_from_run_body(result)
    except ValueError:  # an explicit id that breaks the pattern: validation reports it as rollout_id_invalid
        return merged
    if not is_valid_rollout_id(rollout_id):
        # No id, or one derived from indices that no capture file can be named by (the reference
        # raises here and stops the whole collection).
        return merged
    capture = _find_capture(capture_dirs, rollout_id)
    attachment = capture_attachment(capture, include_payloads=not _redacted(result))
    observations = merged.get(OBSERVATIONS)
    if observations is not None:
        bundle, refused = observations_refusal(observations, producer.invocations if producer is not None else None)
        if bundle is None:  # the rollout is kept, its observations as they were; the gap says why they are not joined
            attachment["gaps"] = [*attachment.get("gaps", []), {"code": JOIN_FAILED, "detail": refused}]
        else:
            # Python-mode dumps: the JSON-mode serializer stops at 254 levels; conversations may nest deeper.
            merged[OBSERVATIONS] = join(bundle, capture.attached_records).model_dump(mode="python")
    merged[CAPTURE] = attachment
    return merged


def collect(record: Mapping[str, Any], capture_dirs: Sequence[str | Path] = ()) -> dict[str, Any]:
    """One rollout record as the collector writes it: capture merged (when dirs are given), trajectory attached."""
    # The producer's trajectory is validated once, for the join and the projection both.
    producer = ProducerTrajectory(record.get(TRAJECTORY))
    result = _merged(record, capture_dirs, producer) if capture_dirs else dict(record)
    return trajectory_attached(record, result, producer)
