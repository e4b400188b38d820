"""The producer conformance cases (tests/conformance/producers/) run through `gym-contract observe`.

Each case is a folder: a harness's native artifacts, `case.json` (the `observe` arguments and the
facts a reader can check by hand) and `expected.json` (the exact document). Run as a script with
``--write`` to rewrite every `expected.json` from this package, after which the facts must still hold.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from gym_contract.producers import producer
from tests.support import run_in_process

CASES = Path(__file__).resolve().parents[1] / "conformance" / "producers"
MISSING = object()


def cases() -> list[Path]:
    return sorted(path.parent for path in CASES.glob("*/*/case.json"))


def observed(case: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, Any, str]:
    """`gym-contract observe <harness> <arguments>` run in the case's folder: exit status, document, stderr."""
    spec = json.loads((case / "case.json").read_text())
    monkeypatch.chdir(case)
    status, out, err = run_in_process("observe", spec["harness"], *spec["arguments"])
    return status, json.loads(out) if out else None, err


def at(document: Any, pointer: str) -> Any:
    """The value at a JSON Pointer (RFC 6901), or MISSING."""
    for token in pointer.split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(document, dict) and token in document:
            document = document[token]
        elif isinstance(document, list) and token.isdigit() and int(token) < len(document):
            document = document[int(token)]
        else:
            return MISSING
    return document


@pytest.mark.parametrize("case", cases(), ids=lambda case: f"{case.parent.name}/{case.name}")
def test_the_producer_gives_exactly_the_expected_document(case: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    status, document, err = observed(case, monkeypatch)

    assert (status, err) == (0, "")
    assert document == json.loads((case / "expected.json").read_text())


@pytest.mark.parametrize("case", cases(), ids=lambda case: f"{case.parent.name}/{case.name}")
def test_the_facts_of_each_case_hold_in_its_expected_document(case: Path) -> None:
    spec = json.loads((case / "case.json").read_text())
    expected = json.loads((case / "expected.json").read_text())

    assert spec["facts"], "a case states what it shows"
    assert [fact for fact in spec["facts"] if at(expected, fact["pointer"]) != fact["value"]] == []
    # The folder is named by the bundle's source, which names the producer that must give it.
    assert producer(spec["harness"]).source == case.parent.name == expected["ng_agent_observations"]["source"]


def test_the_pointer_reader_reads_rfc_6901() -> None:
    document = {"a/b": [{"m~n": 1}], "": 2}
    assert at(document, "/a~1b/0/m~0n") == 1
    assert at(document, "/") == 2
    assert at(document, "/a~1b/1") is MISSING
    assert at(document, "") == document


def write_expected() -> None:
    """Rewrite every case's expected.json from this package's output."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        for case in cases():
            status, document, err = observed(case, monkeypatch)
            if status != 0:
                raise SystemExit(f"{case}: exit {status}: {err}")
            (case / "expected.json").write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
            print(f"wrote {case / 'expected.json'}")


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    write_expected()
