"""Every legal framing of a gzip or zstd stream is read whole, by every reader; a damaged one is reported."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import zstandard
from hypothesis import given
from hypothesis import strategies as st

from gym_contract.distributed import _inputs
from gym_contract.reading._records import RawLine, iter_lines
from gym_contract.reading._sources import DamagedStreamError, Source
from tests.strategies import compressed_streams, skippable_frame
from tests.support import REPO, Pieces


def _read_all(source: Source) -> tuple[bytes, bool]:
    """Everything the source decodes, and whether it ended on a damaged stream."""
    out = b""
    try:
        while chunk := source.read(64 * 1024):
            out += chunk
    except DamagedStreamError:
        return out, True
    return out, False


@given(compressed_streams(), st.sampled_from([1, 7, 1 << 20]))
def test_law_every_framing_is_read_whole_through_any_pipe(stream: tuple[str, bytes, bytes], piece: int) -> None:
    framing, compressed, plain = stream
    source = Source("<pipe>", Pieces(compressed, piece))
    assert source.compression == ("gzip" if framing.startswith("gzip") else "zstd")
    assert _read_all(source) == (plain, False)


@given(compressed_streams(), st.data())
def test_law_a_stream_cut_short_gives_a_prefix_and_says_so(
    stream: tuple[str, bytes, bytes], data: st.DataObject
) -> None:
    framing, compressed, plain = stream
    cut = data.draw(st.integers(4, max(4, len(compressed) - 1)))
    decoded, damaged = _read_all(Source("<pipe>", Pieces(compressed[:cut], 1 << 20)))
    assert plain.startswith(decoded)
    if framing in ("gzip", "zstd"):  # one member or frame: any cut is inside it (between frames is a whole stream)
        assert damaged


@given(compressed_streams(), st.data())
def test_law_a_corrupted_stream_never_raises_beyond_a_damaged_stream(
    stream: tuple[str, bytes, bytes], data: st.DataObject
) -> None:
    _, compressed, _ = stream
    at = data.draw(st.integers(0, len(compressed) - 1))
    corrupted = compressed[:at] + bytes([compressed[at] ^ data.draw(st.integers(1, 255))]) + compressed[at + 1 :]
    _read_all(Source("<pipe>", Pieces(corrupted, 1 << 20)))


def test_a_skippable_frame_first_is_zstd_whatever_its_magic_number() -> None:
    frame = zstandard.ZstdCompressor().compress(b'{"a":1}\n')
    for variant in range(16):
        source = Source("<pipe>", Pieces(skippable_frame(b"pzstd", variant) + frame, 3))
        assert (source.compression, list(iter_lines(source))) == ("zstd", [RawLine(1, b'{"a":1}')])


def test_a_skippable_frame_that_stops_early_is_reported_as_damaged() -> None:
    frame = skippable_frame(b"x" * 100)[:50]
    assert _read_all(Source("<pipe>", Pieces(frame, 1 << 20))) == (b"", True)


# ------------------------------------------------------------------------------- the real tools


ROLLOUTS = (REPO / "examples" / "rollouts.jsonl").read_bytes()


def _tool(*command: str, stdin: bytes) -> bytes:
    if shutil.which(command[0]) is None:
        pytest.skip(f"{command[0]} is not installed")
    return subprocess.run(command, input=stdin, capture_output=True, check=True).stdout


def _pzstd(data: bytes, tmp_path: Path) -> bytes:
    # pzstd writes a skippable frame before each frame it compresses (it reads files, not stdin, in parallel).
    if shutil.which("pzstd") is None:
        pytest.skip("pzstd is not installed")
    (tmp_path / "in.jsonl").write_bytes(data)
    subprocess.run(["pzstd", "-q", "-p", "2", str(tmp_path / "in.jsonl"), "-o", str(tmp_path / "pz.zst")], check=True)
    return (tmp_path / "pz.zst").read_bytes()


MADE_BY = {
    "pzstd": _pzstd,
    "zstd from a pipe (no content size)": lambda data, _: _tool("zstd", "-q", "-c", stdin=data),
    "zstd, two files concatenated": lambda data, _: (
        _tool("zstd", "-q", "-c", stdin=data[:900]) + _tool("zstd", "-q", "-c", stdin=data[900:])
    ),
    "pigz": lambda data, _: _tool("pigz", "-c", stdin=data),
    "pigz, independent blocks, two members": lambda data, _: (
        _tool("pigz", "-i", "-c", stdin=data[:700]) + _tool("pigz", "-i", "-c", stdin=data[700:])
    ),
    "gzip, two members": lambda data, _: _tool("gzip", "-c", stdin=data[:500]) + _tool("gzip", "-c", stdin=data[500:]),
    "zstd with a skippable frame between": lambda data, _: (
        _tool("zstd", "-q", "-c", stdin=data[:300])
        + skippable_frame(b"index")
        + _tool("zstd", "-q", "-c", stdin=data[300:])
    ),
}


def _validate(*arguments: str, stdin: bytes | None = None) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "gym_contract", "validate", *arguments, "--format", "json"],
        input=stdin,
        capture_output=True,
        check=False,
    )
    assert b"Traceback" not in done.stderr, done.stderr.decode(errors="replace")
    report = json.loads(done.stdout)
    return {key: report[key] for key in ("lines", "records", "damaged_lines", "diagnostics_by_code", "tokens")}


@pytest.fixture(scope="module")
def plain_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    path = tmp_path_factory.mktemp("plain") / "rollouts.jsonl"
    path.write_bytes(ROLLOUTS)
    return _validate(str(path))


@pytest.mark.parametrize("made_by", sorted(MADE_BY))
def test_a_stream_the_real_tools_write_is_read_whole_by_every_path(
    tmp_path: Path, made_by: str, plain_report: dict[str, Any]
) -> None:
    compressed = MADE_BY[made_by](ROLLOUTS, tmp_path)
    # Named as plain JSONL: the magic bytes decide, not the name.
    path = tmp_path / "rollouts.jsonl"
    path.write_bytes(compressed)
    assert plain_report["records"] > 0
    assert _validate(str(path), "--jobs", "1") == plain_report
    assert _validate(str(path), "--jobs", "2") == plain_report
    assert _validate("-", stdin=compressed) == plain_report


@pytest.mark.parametrize("made_by", ["pzstd", "pigz, independent blocks, two members"])
def test_the_distributed_engine_reads_such_a_file_whole_and_does_not_cut_it(tmp_path: Path, made_by: str) -> None:
    compressed = MADE_BY[made_by](ROLLOUTS * 50, tmp_path)
    path = tmp_path / "rollouts.jsonl"
    path.write_bytes(compressed)
    file = _inputs.InputFile(str(path), len(compressed))
    shares = _inputs.shares(file, block_bytes=256)
    assert shares == [_inputs.Share(file)]
    with _inputs.open_share(shares[0]) as source:
        assert [line.data for line in iter_lines(source)] == (ROLLOUTS * 50).splitlines()


def test_a_truncated_pzstd_file_is_reported_after_the_lines_before_the_cut(tmp_path: Path) -> None:
    compressed = _pzstd(ROLLOUTS * 20, tmp_path)
    path = tmp_path / "rollouts.jsonl.zst"
    path.write_bytes(compressed[: len(compressed) * 2 // 3])
    for jobs in ("1", "2"):
        report = _validate(str(path), "--jobs", jobs)
        assert report["diagnostics_by_code"].get("input_truncated") == 1
        assert report["records"] > 0


def test_a_gzip_stream_padded_with_zeros_is_read_whole() -> None:
    source = Source("<pipe>", Pieces(gzip.compress(b'{"a":1}\n') + b"\x00" * 10, 5))
    assert list(iter_lines(source)) == [RawLine(1, b'{"a":1}')]
