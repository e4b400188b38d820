"""A `ray.data.Dataset` of JSONL lines checked or rated batch by batch, each row located by its own columns."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

from gym_contract.coverage import GroupBy
from gym_contract.coverage._rating import CoverageRun
from gym_contract.diagnostics import Diagnostic
from gym_contract.distributed._ray_jobs import data_context
from gym_contract.validation import read_record
from gym_contract.validation._checking import _Options, check_data
from gym_contract.validation._report import Report

TEXT, PATH, LINE = "text", "path", "line"
"""The columns a row may have: one JSONL line (str or bytes); and, to locate it, its file and line number."""


def is_dataset(value: Any) -> bool:
    try:
        from ray.data import Dataset
    except ImportError:
        return False
    return isinstance(value, Dataset)


def check_rows(dataset: Any, options: _Options, *, verbose: bool = False) -> Report:
    """The report over every row of the dataset, in its order."""
    report = options.report()
    for part in _results(dataset, partial(_check_batch, options), verbose):
        report.merge(part)
    return report


def rate_rows(dataset: Any, by: GroupBy, *, verbose: bool = False) -> CoverageRun:
    run = CoverageRun()
    for part in _results(dataset, partial(_rate_batch, by), verbose):
        run.merge(part)
    return run


def _results(dataset: Any, task: Callable[[dict[str, Any]], Any], verbose: bool) -> Iterator[Any]:
    import pickle

    if TEXT not in dataset.columns():
        raise ValueError(f"a dataset of lines needs a {TEXT!r} column; it has {dataset.columns()}")
    mapped = dataset.map_batches(partial(_pickled, task), batch_format="pandas", num_cpus=1)
    # In the dataset's order, since a row's place is all that locates it when it has no line column. A
    # dataset keeps the settings of when it was made, so the order is asked of this one itself.
    mapped.context.execution_options.preserve_order = True
    with data_context(show_progress=False, ordered=True, verbose=verbose):
        for row in mapped.iter_rows():
            yield pickle.loads(row["result"])


def _pickled(task: Callable[[dict[str, Any]], Any], batch: Any) -> Any:
    import pickle

    import pandas

    return pandas.DataFrame({"result": [pickle.dumps(task(batch))]})


def _located(batch: Any) -> Iterator[tuple[bytes, str | None, int | None]]:
    """Each row's line as bytes, with its path and line number when the dataset gives them."""
    paths = batch[PATH].tolist() if PATH in batch else [None] * len(batch)
    lines = batch[LINE].tolist() if LINE in batch else [None] * len(batch)
    for text, path, line in zip(batch[TEXT].tolist(), paths, lines, strict=True):
        data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
        # pandas gives a missing number in a column of numbers as NaN, the one value unequal to itself.
        number = int(line) if line is not None and line == line else None
        yield data, path if isinstance(path, str) else None, number


def _check_batch(options: _Options, batch: Any) -> Report:
    report = options.report()
    hint: str | None = None
    for data, path, line in _located(batch):
        if not data.strip():
            report.lines += 1
            report.blank_lines += 1
            continue
        report.lines += 1
        report.bytes += len(data)
        report.decoded_bytes += len(data)
        if path is not None and path not in report.inputs:
            report.inputs.append(path)
        # A row has no record index: only its own columns locate it.
        hint = check_data(report, data, line, None, path, options, hint)
    return report


def _rate_batch(by: GroupBy, batch: Any) -> CoverageRun:
    run = CoverageRun()
    for data, path, line in _located(batch):
        run.lines += 1
        if not data.strip():
            continue
        read = read_record(data)
        if isinstance(read, Diagnostic):
            run.damaged.append(read.at(line=line, source=path))
            continue
        run.rate(read[1], by)
    return run
