"""The docs' Ray examples, as written, on the cluster the Ray tests share."""

from __future__ import annotations

import pytest

from tests.doc_blocks import Block, console_commands, needs_ray, python_blocks, run_console_command, run_python_block

pytestmark = pytest.mark.ray


@pytest.mark.parametrize(
    ("block", "command"), [(b, c) for b, c in console_commands() if needs_ray(b)], ids=lambda value: str(value)[:60]
)
def test_ray_console_command_runs_with_its_documented_exit_status(block: Block, command: str, local_cluster: str):
    # The command joins the shared cluster through RAY_ADDRESS, as a job submitted to a cluster does.
    run_console_command(block, command, {"RAY_ADDRESS": local_cluster})


@pytest.mark.parametrize("block", [block for block in python_blocks() if needs_ray(block)], ids=str)
def test_ray_python_example_runs(block: Block, monkeypatch: pytest.MonkeyPatch, local_cluster: str):
    run_python_block(block, monkeypatch)  # `validate_dataset` keeps the cluster this process joined
