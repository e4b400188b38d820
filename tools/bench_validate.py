"""Measure validation throughput against the JSON-parse floor and the peers a user would pick, in one run."""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import jsonschema_rs
import orjson

from gym_contract import schemas
from gym_contract.checking import check_files
from gym_contract.models import AgentObservationBundle, ModelCallCapture, TrajectoryRecord
from gym_contract.validation import _fastpath, detect_kind
from gym_contract.validation._checking import _AHEAD_BYTES

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the sibling tool, run as a script or imported
from bench_process import interleaved_medians  # one round-by-round timer for both benchmarks

ROOT = Path(__file__).resolve().parents[1]
ATTACHMENTS = {
    "ng_trajectory": "trajectory",
    "ng_agent_observations": "agent_observations",
    "ng_model_call_capture": "model_call_capture",
}
MODELS = {
    "ng_trajectory": TrajectoryRecord,
    "ng_agent_observations": AgentObservationBundle,
    "ng_model_call_capture": ModelCallCapture,
}


def corpus_of(args: argparse.Namespace, tmp: Path) -> Path:
    """The corpus named on the command line, or one made in ``tmp`` with `--records` records."""
    if args.corpus is not None:
        return Path(args.corpus)
    corpus = tmp / "corpus.jsonl"
    make = [sys.executable, str(ROOT / "tools" / "make_corpus.py"), str(corpus)]
    subprocess.run([*make, "--records", str(args.records), "--seed", "7"], check=True, stdout=subprocess.DEVNULL)
    return corpus


def median_seconds(run: Callable[[], object], passes: int) -> float:
    """Median wall time of several passes; the machine is shared, so one pass proves nothing."""
    return interleaved_medians({"run": (run, passes)})["run"]


def rs_validators() -> dict[str, object]:
    documents = [(schemas.schema_id(n), schemas.get(n)) for n in schemas.names() if "#" not in schemas.schema_id(n)]
    registry = jsonschema_rs.Registry(documents)
    return {
        key: jsonschema_rs.validator_for({"$ref": schemas.schema_id(name)}, registry=registry)
        for key, name in ATTACHMENTS.items()
    }


def in_batches(lines: list[bytes], size: int) -> Iterator[list[bytes]]:
    """The lines in runs of about ``size`` bytes, as `check_files` reads them ahead."""
    batch: list[bytes] = []
    taken = 0
    for line in lines:
        batch.append(line)
        taken += len(line)
        if taken >= size:
            yield batch
            batch, taken = [], 0
    if batch:
        yield batch


def _is_rollout(line: bytes) -> bool:
    try:
        return detect_kind(orjson.loads(line)) == "rollout"
    except orjson.JSONDecodeError:
        return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("corpus", nargs="?", type=Path, help="a rollout JSONL file (default: make one)")
    parser.add_argument("--records", type=int, default=1000, help="records in a corpus made here")
    parser.add_argument("--passes", type=int, default=5, help="passes per measurement; the median is reported")
    parser.add_argument("--sample", type=int, default=20, help="records the slow peers (jsonschema) are timed on")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    parser.add_argument(
        "--one-job",
        action="store_true",
        help="leave out --jobs 2 (on a machine whose other cores are busy, its figure means nothing)",
    )
    parser.add_argument(
        "--engine",
        choices=("local", "ray"),
        default="local",
        help="ray: one process against the Ray engine on the same corpus, instead of the peers",
    )
    parser.add_argument("--workers", type=int, default=2, help="with --engine ray: CPUs of the local cluster")
    parser.add_argument("--address", help="with --engine ray: a running cluster to use instead of a local one")
    parser.add_argument("--block-mb", type=float, default=64, help="with --engine ray: size of a share of the corpus")
    args = parser.parse_args(argv)
    if args.engine == "ray":
        return bench_ray(args)

    with tempfile.TemporaryDirectory() as tmp:
        corpus = corpus_of(args, Path(tmp))
        try:
            lines = [line for line in corpus.read_bytes().splitlines() if line.strip()]
        except OSError as error:
            print(f"bench_validate: cannot read {corpus}: {error.strerror}", file=sys.stderr)
            return 2
        if (bad := next((n for n, line in enumerate(lines, 1) if not _is_rollout(line)), None)) is not None:
            print(
                f"bench_validate: record {bad} of {corpus} is not a rollout record; the benchmark needs a plain "
                "(uncompressed) JSONL file of them",
                file=sys.stderr,
            )
            return 2
        megabytes = sum(map(len, lines)) / 1e6
        batches = list(in_batches(lines, _AHEAD_BYTES))
        sample = lines[: args.sample]
        sample_mb = sum(map(len, sample)) / 1e6
        validators = rs_validators()
        python_validators = {key: schemas.validator(name) for key, name in ATTACHMENTS.items()}

        def orjson_floor() -> None:
            for line in lines:
                orjson.loads(line)

        def orjson_rs() -> None:
            for line in lines:
                record = orjson.loads(line)
                for key, validator in validators.items():
                    if record.get(key) is not None:
                        validator.is_valid(record[key])  # type: ignore[attr-defined]

        def orjson_jsonschema() -> None:
            for line in sample:
                record = orjson.loads(line)
                for key, validator in python_validators.items():
                    if record.get(key) is not None:
                        validator.is_valid(record[key])

        def pydantic_reference() -> None:
            for line in sample:
                record = orjson.loads(line)
                for key, model in MODELS.items():
                    if record.get(key) is not None:
                        model.model_validate(record[key])

        def typed_decoding() -> None:
            # Decoding into the Structs alone: the schema checked, but not that no key was repeated.
            for line in lines:
                _fastpath.decoded_once(line, "rollout")

        def structure_only() -> int:
            # The fast path without rules, summary or file reading: what any rule engine built on it
            # could at best reach, so the gap to a target is measured, not guessed. Lines are measured
            # for nesting a batch at a time where the interpreter needs it, as `check_files` does.
            taken = 0
            for batch in batches:
                _fastpath.measure_ahead(batch)
                taken += sum(_fastpath.skeleton(line, "rollout") is not None for line in batch)
            return taken

        def ours(jobs: int) -> Callable[[], object]:
            return lambda: check_files([str(corpus)], jobs=jobs)

        fast_lines = structure_only()
        report = check_files([str(corpus)])  # also builds, untimed, what every later pass reuses
        few = max(1, args.passes // 2)
        runs = {
            "orjson parse": (orjson_floor, args.passes),
            "orjson + jsonschema_rs": (orjson_rs, args.passes),
            "orjson + jsonschema (sample)": (orjson_jsonschema, few),
            "pydantic model_validate (sample)": (pydantic_reference, few),
            "typed decoding alone": (typed_decoding, args.passes),
            "fast-path structure only (ceiling)": (structure_only, args.passes),
            "gym-contract validate": (ours(1), args.passes),
        }
        if not args.one_job:
            runs["gym-contract validate --jobs 2"] = (ours(2), args.passes)
        with frozen_heap() as frozen:
            seconds = interleaved_medians(runs)
        figures = {name: (sample_mb if "(sample)" in name else megabytes) / taken for name, taken in seconds.items()}

    single = figures["gym-contract validate"]
    conditions = (
        f"one process, every measurement once a round, median of {args.passes} rounds; the setup's heap "
        f"({frozen} objects: imports, schemas, validators, the corpus) frozen out of the garbage collector "
        "(gc.freeze()) before the first round, so that no measurement pays for walking it"
    )
    print(
        f"corpus: {len(lines)} records, {megabytes:.1f} MB; {os.cpu_count()} cores; Python {platform.python_version()}"
    )
    print(f"conditions: {conditions}")
    print(f"verdict on the corpus: {report.records} records, {report.invalid_records} invalid")
    print(f"lines in the form the fast path takes: {fast_lines} of {len(lines)}")
    for name, rate in figures.items():
        print(f"  {name:<34} {rate:9.1f} MB/s   ours ÷ this {single / rate:6.2f}×")
    ratios = {
        "vs orjson + jsonschema_rs": single / figures["orjson + jsonschema_rs"],
        "typed decoding vs orjson + jsonschema_rs": figures["typed decoding alone"] / figures["orjson + jsonschema_rs"],
        "ceiling vs orjson + jsonschema_rs": figures["fast-path structure only (ceiling)"]
        / figures["orjson + jsonschema_rs"],
        "vs orjson + jsonschema": single / figures["orjson + jsonschema (sample)"],
        "vs pydantic": single / figures["pydantic model_validate (sample)"],
    }
    if "gym-contract validate --jobs 2" in figures:
        ratios["jobs 2 vs jobs 1"] = figures["gym-contract validate --jobs 2"] / single
    for name, ratio in ratios.items():
        print(f"  ratio {name:<36} {ratio:7.2f}×")
    if args.json:
        shares = {"fast-path lines": fast_lines, "lines": len(lines)}
        print(json.dumps({"conditions": conditions, "mb_per_s": figures, "ratios": ratios, **shares}, indent=2))
    return 0


@contextlib.contextmanager
def frozen_heap() -> Iterator[int]:
    """Every object alive now kept out of the collector's walks until the block ends; gives their number.

    Without it, each collection of the oldest generation walks the benchmark's own objects (the
    models and validators of every peer, the corpus's lines), a cost no process of the peer alone
    pays and which falls on whichever measurement allocates most.
    """
    gc.collect()
    gc.freeze()
    try:
        yield gc.get_freeze_count()
    finally:
        gc.unfreeze()


def bench_ray(args: argparse.Namespace) -> int:
    """One process against Ray Data tasks on the same corpus, pass by pass in turn; start-up apart."""
    from gym_contract.distributed import validate_dataset

    with tempfile.TemporaryDirectory() as tmp:
        corpus = corpus_of(args, Path(tmp))
        if not corpus.is_file():
            print(f"bench_validate: cannot read {corpus}", file=sys.stderr)
            return 2
        import ray

        started = time.perf_counter()
        ray.init(address=args.address, num_cpus=None if args.address else args.workers, include_dashboard=False)
        start_up = time.perf_counter() - started
        workers = int(ray.cluster_resources().get("CPU", 0))
        block = int(args.block_mb * 1e6)
        megabytes = corpus.stat().st_size / 1e6
        first = time.perf_counter()
        on_ray = validate_dataset([str(corpus)], block_bytes=block)
        first_job = time.perf_counter() - first
        here = check_files([str(corpus)])
        same = {**on_ray.to_dict(), "seconds": 0, "mb_per_s": 0} == {**here.to_dict(), "seconds": 0, "mb_per_s": 0}
        local_times, ray_times = [], []
        for _ in range(args.passes):  # in turn, so that a noisy neighbour weighs on both alike
            local_times.append(median_seconds(lambda: check_files([str(corpus)]), 1))
            ray_times.append(median_seconds(lambda: validate_dataset([str(corpus)], block_bytes=block), 1))
        ray.shutdown()
    local_rate = megabytes / statistics.median(local_times)
    ray_rate = megabytes / statistics.median(ray_times)
    figures = {
        "corpus MB": megabytes,
        "workers": workers,
        "shares": -(-int(megabytes * 1e6) // block),
        "one process MB/s": local_rate,
        "Ray MB/s": ray_rate,
        "Ray vs one process": ray_rate / local_rate,
        "Ray MB/s per worker": ray_rate / max(workers, 1),
        "cluster start-up s": start_up,
        "first job s (workers warming up)": first_job,
        "reports identical": same,
    }
    print(f"corpus: {megabytes:.1f} MB; {workers} Ray workers; median of {args.passes} passes, taken in turn")
    for name, value in figures.items():
        print(f"  {name:<34} {value:9.2f}" if isinstance(value, float) else f"  {name:<34} {value}")
    if args.json:
        print(json.dumps(figures, indent=2))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
