"""On a Ray cluster the commands give what they give in one process: the same report, matrix and projection."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import zstandard

from gym_contract import distributed
from gym_contract.checking import check_files
from gym_contract.coverage._rating import CoverageRun, rate_source
from gym_contract.reading import _sources
from gym_contract.validation._checking import InputUnreadable
from tests.support import REPO

ray = pytest.importorskip("ray")  # the ray extra: without it, these tests say so and skip

EXAMPLES = REPO / "examples"
MAKE_CORPUS = REPO / "tools" / "make_corpus.py"
# Shares of a few records each, so that every file of a few hundred KiB is cut into several.
SMALL_BLOCKS = 64 * 1024


pytestmark = [pytest.mark.ray, pytest.mark.usefixtures("local_cluster")]  # tests/distributed/conftest.py


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated corpus with broken records, a damaged line and a blank line in the middle."""
    folder = tmp_path_factory.mktemp("corpus")
    made = folder / "made.jsonl"
    subprocess.run(
        [sys.executable, str(MAKE_CORPUS), str(made), "--records", "24", "--seed", "11", "--record-kb", "30",
         "--invalid-share", "0.25"],
        check=True,
        capture_output=True,
    )  # fmt: skip
    lines = made.read_bytes().splitlines(keepends=True)
    damaged = folder / "corpus.jsonl"
    damaged.write_bytes(b"".join([*lines[:7], b'{"truncated": \n', b"\n", *lines[7:]]))
    return damaged


def same(first: dict[str, Any], second: dict[str, Any]) -> None:
    for timing in ("seconds", "mb_per_s"):
        first.pop(timing)
        second.pop(timing)
    assert first == second


def test_the_report_is_the_single_process_report_on_the_examples():
    paths = [str(EXAMPLES / name) for name in ("rollouts.jsonl", "damaged_rollouts.jsonl", "rollout-7-0.jsonl")]
    same(distributed.validate_dataset(paths).to_dict(), check_files(paths).to_dict())


def test_the_report_is_the_single_process_report_on_a_corpus_cut_into_shares(corpus: Path):
    paths = [str(corpus), str(EXAMPLES / "damaged_rollouts.jsonl")]
    on_ray = distributed.validate_dataset(paths, block_bytes=SMALL_BLOCKS, per_record=True)
    here = check_files(paths, per_record=True)
    assert here.damaged_lines == 1
    assert here.invalid_records > 0
    same(on_ray.to_dict(), here.to_dict())
    # Every diagnostic keeps its file and line, and the per-record verdicts a JUnit report needs agree.
    assert on_ray.flagged == here.flagged


def test_diagnostics_kept_under_a_cap_are_the_first_ones_as_in_one_process(corpus: Path):
    on_ray = distributed.validate_dataset([str(corpus)], max_diagnostics=3, block_bytes=SMALL_BLOCKS)
    here = check_files([str(corpus)], max_diagnostics=3)
    assert on_ray.diagnostics == here.diagnostics
    assert on_ray.by_code == here.by_code


@pytest.mark.parametrize("suffix", [".gz", ".zst"])
def test_a_compressed_file_is_one_share_and_gives_the_same_report(tmp_path: Path, corpus: Path, suffix: str):
    data = corpus.read_bytes()
    packed = gzip.compress(data, mtime=0) if suffix == ".gz" else zstandard.ZstdCompressor().compress(data)
    path = tmp_path / f"corpus.jsonl{suffix}"
    path.write_bytes(packed)
    same(
        distributed.validate_dataset([str(path)], block_bytes=SMALL_BLOCKS).to_dict(),
        check_files([str(path)]).to_dict(),
    )


def test_a_directory_or_a_glob_names_its_rollout_files_in_order(tmp_path: Path):
    for name in ("b.jsonl", "a.jsonl"):
        (tmp_path / name).write_bytes((EXAMPLES / "rollouts.jsonl").read_bytes())
    (tmp_path / "notes.txt").write_text("not a rollout file")
    expected = check_files([str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl")]).to_dict()
    for named in (str(tmp_path), str(tmp_path / "*.jsonl"), f"file://{tmp_path}"):
        report = distributed.validate_dataset([named]).to_dict()
        if named.startswith("file://"):
            report["inputs"] = [name.removeprefix("file://") for name in report["inputs"]]
        same(report, dict(expected))


def test_an_input_that_names_nothing_is_input_unreadable(tmp_path: Path):
    with pytest.raises(InputUnreadable, match="no-such"):
        distributed.validate_dataset([str(tmp_path / "no-such.jsonl")])


def test_coverage_is_the_matrix_of_one_process_with_the_damaged_lines_in_place(corpus: Path):
    on_ray = distributed.coverage_dataset([str(corpus)], block_bytes=SMALL_BLOCKS)
    here = CoverageRun()
    with _sources.open_source(str(corpus)) as source:
        here.merge(rate_source(source, json_document=False))
    assert on_ray.matrix.to_dict() == here.matrix.to_dict()
    assert on_ray.matrix.reasons == here.matrix.reasons
    assert [(d.source, d.line, d.code) for d in on_ray.damaged] == [(str(corpus), 8, "json_invalid")]
    assert on_ray.damaged == here.damaged
    assert on_ray.other_records == here.other_records == 0


def test_project_writes_shards_that_read_in_order_as_the_single_process_output(tmp_path: Path):
    rollouts = tmp_path / "rollouts.jsonl"
    rollouts.write_bytes((EXAMPLES / "rollout-7-0.jsonl").read_bytes() * 40)
    capture = str(EXAMPLES / "capture")
    here = subprocess.run(
        [sys.executable, "-m", "gym_contract", "project", str(rollouts), "--capture-dir", capture],
        capture_output=True,
        check=True,
    )
    run, shards = distributed.project_dataset(
        [str(rollouts)], str(tmp_path / "out"), [capture], block_bytes=len(rollouts.read_bytes()) // 5, parquet=True
    )
    assert len(shards) >= 5
    assert b"".join(Path(shard).read_bytes() for shard in shards) == here.stdout
    assert run.summary() == json.loads(here.stderr)
    import pyarrow.parquet

    table = pyarrow.parquet.read_table(tmp_path / "out" / "parquet")
    assert table.column_names == ["rollout"]
    assert [json.loads(text) for text in table.column("rollout").to_pylist()] == [
        json.loads(line) for line in here.stdout.splitlines()
    ]


def test_the_commands_take_engine_ray_and_print_what_they_print_locally(
    tmp_path: Path, corpus: Path, local_cluster: str
):
    # The commands join the shared cluster rather than each starting one of its own.
    joined = {**os.environ, "RAY_ADDRESS": local_cluster}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "gym_contract", *args], capture_output=True, text=True, check=False, env=joined
        )

    local = run("validate", str(corpus), "--format", "json")
    remote = run("validate", str(corpus), "--format", "json", "--engine", "ray")
    assert remote.returncode == local.returncode == 1
    same(json.loads(remote.stdout), json.loads(local.stdout))
    coverage_local = run("coverage", str(corpus), "--format", "json")
    coverage_remote = run("coverage", str(corpus), "--format", "json", "--engine", "ray")
    assert coverage_remote.returncode == 0
    assert json.loads(coverage_remote.stdout) == json.loads(coverage_local.stdout)
    assert "Traceback" not in remote.stderr + coverage_remote.stderr
    for wrong in (["--engine", "ray"], ["--parquet"]):  # shards need a directory; Parquet needs the shards
        refused = run("project", str(EXAMPLES / "rollout-7-0.jsonl"), *wrong)
        assert refused.returncode == 2
        assert refused.stderr.splitlines()[-1].startswith(("gym-contract: ", "gym-contract project: error: "))
    missing = run("validate", str(tmp_path / "gone.jsonl"), "--engine", "ray")
    assert missing.returncode == 2
    assert missing.stderr.strip().splitlines()[-1].startswith("gym-contract: cannot open")


def test_without_ray_the_engine_fails_in_one_line_naming_the_extra():
    # Ray made unimportable, as in an installation without the extra.
    program = "import sys; sys.modules['ray'] = None; from gym_contract.cli import main; sys.exit(main(sys.argv[1:]))"
    for command in (["validate"], ["coverage"]):
        result = subprocess.run(
            [sys.executable, "-c", program, *command, str(EXAMPLES / "rollouts.jsonl"), "--engine", "ray"],
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 2
        assert (
            result.stderr
            == 'gym-contract: Ray is not installed: python -m pip install ".[ray]" in a checkout of gym-contract\n'
        )


def test_a_dataset_of_lines_gives_the_counts_and_the_located_diagnostics_of_its_file(corpus: Path):
    lines = corpus.read_bytes().splitlines()
    rows = [{"text": line.decode(), "path": str(corpus), "line": number} for number, line in enumerate(lines, 1)]
    dataset = ray.data.from_items(rows, override_num_blocks=4)
    on_ray = distributed.validate_dataset(dataset)
    here = check_files([str(corpus)])
    for name in ("records", "invalid_records", "damaged_lines", "blank_lines", "lines", "by_code", "gaps"):
        assert getattr(on_ray, name) == getattr(here, name), name
    assert on_ray.coverage.to_dict() == here.coverage.to_dict()
    # A row is located by its columns; a dataset has no record index to give.
    assert on_ray.diagnostics == [replace(d, record=None) for d in here.diagnostics]
    rated = distributed.coverage_dataset(ray.data.read_text(str(corpus), include_paths=True))
    assert rated.matrix.to_dict() == here.coverage.to_dict()
    assert [(d.code, d.line) for d in rated.damaged] == [("json_invalid", None)]


def test_a_dataset_without_a_text_column_is_refused_with_the_columns_it_has():
    with pytest.raises(ValueError, match="'text' column"):
        distributed.validate_dataset(ray.data.from_items([{"line": 1}]))


def test_ray_says_nothing_on_stderr_unless_verbose(tmp_path: Path):
    """Ray's own warnings (token authentication, progress bars) are its business, not the user's: a run
    that starts its own cluster, and one that joins this module's, print only what the local run prints."""
    rollout = str(EXAMPLES / "rollout-7-0.jsonl")
    # As a user's shell has it: no address, and no authentication mode (Ray warns of the mode it picks).
    alone = {key: value for key, value in os.environ.items() if key not in ("RAY_ADDRESS", "RAY_AUTH_MODE")}
    joined = {**os.environ, "RAY_ADDRESS": ray.get_runtime_context().gcs_address}

    def run(environment: dict[str, str], *flags: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "gym_contract", "validate", rollout, "--engine", "ray", *flags]
        return subprocess.run(command, capture_output=True, text=True, check=False, env=environment)

    started_here = run(alone)
    assert (started_here.returncode, started_here.stderr) == (0, "")
    assert started_here.stdout.startswith("PASS (fail on error)\n")
    quiet, verbose = run(joined), run(joined, "--verbose")
    assert (quiet.returncode, quiet.stderr) == (0, "")
    assert verbose.returncode == 0, verbose.stderr
    assert "Progress bars disabled" in verbose.stderr
    assert verbose.stdout.splitlines()[:-1] == quiet.stdout.splitlines()[:-1]  # all but the timing


def test_on_ray_a_run_of_no_record_fails_as_it_does_here(tmp_path: Path):
    joined = {**os.environ, "RAY_ADDRESS": ray.get_runtime_context().gcs_address}
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"\n")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "gym_contract", *args, str(empty)]
        return subprocess.run(command, capture_output=True, text=True, check=False, env=joined)

    for engine in ("local", "ray"):
        checked = run("validate", "--format", "json", "--engine", engine)
        assert checked.returncode == 1
        assert json.loads(checked.stdout)["diagnostics_by_code"] == {"no_records": 1}
        rated = run("coverage", "--engine", engine)
        assert rated.returncode == 1
        assert "no_records: " in rated.stderr
    assert run("validate", "--engine", "ray", "--allow-empty").returncode == 0
