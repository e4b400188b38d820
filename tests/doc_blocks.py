"""The fenced code blocks of the docs pages and the README, read as the docs tests run them."""

from __future__ import annotations

import contextlib
import functools
import inspect
import io
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from gym_contract.pytest_plugin import Contract
from tests.support import REPO

DOCS = REPO / "docs"
README = REPO / "README.md"
CI_GUIDE = DOCS / "guides" / "ci.md"

# The variables the CI guide's snippets read, and nothing else is put in for the reader.
REPO_VARIABLE = "GYM_CONTRACT_REPO"
REV_VARIABLE = "GYM_CONTRACT_REV"


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    language: str
    text: str
    annotations: dict[str, str]
    generated: str | None
    """Name of the generated region the block sits in, if any."""

    def __str__(self) -> str:
        return f"{self.page}:{self.line}"


FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>```+|~~~+)\s*(?P<language>[\w+-]*)")
ANNOTATION = re.compile(r"^\s*<!-- (?P<key>validate|check|exit|no-run): ?(?P<value>.*?) -->\s*$")
SNIPPET = re.compile(r'^\s*--8<-- "(?P<path>[^"]+)"\s*$')
BEGIN = re.compile(r"^<!-- BEGIN GENERATED (?P<name>\S+) ")
END = re.compile(r"^<!-- END GENERATED ")


def _include_snippets(text: str) -> str:
    lines = []
    for line in text.split("\n"):
        match = SNIPPET.match(line)
        lines.append((REPO / match.group("path")).read_text(encoding="utf-8").rstrip("\n") if match else line)
    return "\n".join(lines)


def page_name(page: Path) -> str:
    """A docs page by its path under docs/, any other file by its path in the repository."""
    return page.relative_to(DOCS if page.is_relative_to(DOCS) else REPO).as_posix()


def blocks(page: Path) -> list[Block]:
    """Every fenced block of a page, with the annotations on the lines right before it."""
    found: list[Block] = []
    lines = page.read_text(encoding="utf-8").split("\n")
    generated: str | None = None
    pending: dict[str, str] = {}
    index = 0
    while index < len(lines):
        line = lines[index]
        if begin := BEGIN.match(line):
            generated = begin.group("name")
        elif END.match(line):
            generated = None
        annotation = ANNOTATION.match(line)
        if annotation:
            pending[annotation.group("key")] = annotation.group("value")
            index += 1
            continue
        fence = FENCE.match(line)
        if fence:
            indent, marker = fence.group("indent"), fence.group("fence")
            body, index = [], index + 1
            while index < len(lines) and not lines[index].strip().startswith(marker):
                body.append(lines[index].removeprefix(indent))
                index += 1
            text = _include_snippets("\n".join(body))
            found.append(Block(page_name(page), index, fence.group("language"), text, pending, generated))
        if line.strip():
            pending = {}
        index += 1
    return found


# Blocks not run yet, by (page, language), with the reason. Remove an entry once its page marks usage
# synopses with `<!-- no-run: … -->` and its Python fragments are self-contained.
NOT_RUN: dict[tuple[str, str], str] = {}


@functools.cache
def all_blocks() -> list[Block]:
    """The blocks of every docs page, then the README's: what a reader copies from either."""
    return [block for page in [*sorted(DOCS.rglob("*.md")), README] for block in blocks(page)]


def pre_commit_snippet() -> Block:
    """The CI guide's snippet that writes a `.pre-commit-config.yaml` and installs its hooks."""
    found = [block for block in blocks(CI_GUIDE) if ".pre-commit-config.yaml" in block.text]
    assert len(found) == 1, f"{CI_GUIDE.name} should have one pre-commit snippet, has {[str(b) for b in found]}"
    return found[0]


def this_interpreter_first() -> dict[str, str]:
    """The environment with this interpreter's scripts first on PATH, so the commands are the ones under test."""
    environment = dict(os.environ)
    environment["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), environment.get("PATH", "")])
    return environment


def pinned_revision() -> dict[str, str]:
    """The CI guide's variables set to this checkout and its current commit, as a reader sets them to theirs."""
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, check=False)
    if head.returncode != 0:
        pytest.skip("the snippets install gym-contract from a git checkout of it")
    # file://localhost/…, the form the guide gives for a clone on the same machine: pip before 24.1 refuses
    # a `git+file:///…` requirement, which has no host.
    return {REPO_VARIABLE: f"file://localhost{REPO.as_posix()}", REV_VARIABLE: head.stdout.strip()}


# ------------------------------------------------------------------------------ running the examples

COMMAND = re.compile(r"^(?:\$ )?(gym-contract\b.*)$")


def console_commands() -> list[tuple[Block, str]]:
    """Every `gym-contract` command of the shell blocks, with the block it is in."""
    found = []
    for block in all_blocks():
        if block.language not in ("bash", "console", "sh", "shell") or block.generated or "no-run" in block.annotations:
            continue
        if (block.page, block.language) in NOT_RUN:
            continue
        for line in block.text.split("\n"):
            match = COMMAND.match(line.strip())
            if match:
                found.append((block, match.group(1).split("  #")[0].strip()))
    return found


def python_blocks() -> list[Block]:
    return [
        block
        for block in all_blocks()
        if block.language == "python" and not block.generated and (block.page, "python") not in NOT_RUN
    ]


def needs_ray(block: Block) -> bool:
    """A block that runs on a Ray cluster: tests/distributed runs it, on the cluster its tests share."""
    return "--engine ray" in block.text or "gym_contract.distributed" in block.text


def run_shell(
    script: str, *, cwd: Path, env: dict[str, str] | None = None, strict: bool = False
) -> subprocess.CompletedProcess[str]:
    """Run shell text as a reader pastes it, under bash with pipefail (and `-eu` when `strict`), its output kept."""
    flags = "-euo" if strict else "-o"
    return subprocess.run(
        ["bash", flags, "pipefail", "-c", script], cwd=cwd, capture_output=True, text=True, check=False, env=env
    )


def run_console_command(block: Block, command: str, environment: dict[str, str] | None = None) -> None:
    """Run a docs command from the repository root and check the exit status a preceding `<!-- exit: N -->` gives."""
    expected = int(block.annotations.get("exit", "0"))
    runnable = f'"{sys.executable}" -m gym_contract' + command.removeprefix("gym-contract")
    result = run_shell(runnable, cwd=REPO, env={**this_interpreter_first(), **(environment or {})})
    assert result.returncode == expected, f"{block}: {command}\n{result.stdout[-2000:]}{result.stderr[-2000:]}"


def run_python_block(block: Block, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run a docs Python block in a fresh namespace from the repository root, then any `test_*` function it defines."""
    monkeypatch.chdir(REPO)
    monkeypatch.setenv("PATH", this_interpreter_first()["PATH"])
    namespace: dict[str, Any] = {"__name__": f"docs_example_{block.line}"}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(block.text, str(block), "exec"), namespace)  # the docs' own example code
        for name, value in list(namespace.items()):
            if name.startswith("test_") and callable(value):
                # The plugin's fixture, given as pytest gives it to a harness's tests.
                wanted = inspect.signature(value).parameters
                value(**({"contract": Contract()} if "contract" in wanted else {}))
