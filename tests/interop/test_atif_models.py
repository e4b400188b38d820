"""Every ATIF document this package writes is one the `atif` package's models accept, at every version written."""

from __future__ import annotations

import json
import sys

import pytest

from gym_contract.interop import ATIF_VERSIONS, from_atif, to_atif
from tests.interop.test_atif import EXAMPLE_ROLLOUTS, REAL_TRAJECTORIES
from tests.support import REPO

if sys.version_info < (3, 11):  # pragma: no cover - the dev extra installs atif from Python 3.11 on
    pytest.skip("the atif package needs Python 3.11", allow_module_level=True)

import atif

DAMAGED = [json.loads(line) for line in (REPO / "examples" / "damaged_rollouts.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("version", ATIF_VERSIONS)
@pytest.mark.parametrize("index", range(len(EXAMPLE_ROLLOUTS) + len(DAMAGED)))
def test_the_export_of_every_example_rollout_is_valid_atif(index, version):
    record = (EXAMPLE_ROLLOUTS + DAMAGED)[index]
    document = to_atif(record, version)
    parsed = atif.Trajectory.model_validate(document)
    assert parsed.schema_version == f"ATIF-v{version}"
    # What the models read is what was written: no field of ours is dropped or renamed on the way.
    assert parsed.model_dump(mode="json", exclude_none=True) == json.loads(json.dumps(document))


@pytest.mark.parametrize("path", REAL_TRAJECTORIES, ids=lambda path: path.name)
def test_a_real_trajectory_read_and_written_again_is_still_valid_atif(path):
    document = json.loads(path.read_text())
    atif.Trajectory.model_validate(document)
    again = to_atif(from_atif(document))
    atif.Trajectory.model_validate(again)
