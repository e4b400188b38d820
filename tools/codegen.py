"""Generate gym_contract/_generated/v1 from schemas/v1 with datamodel-code-generator; --check reports drift."""

from __future__ import annotations

import argparse
import difflib
import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import venv
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
VERSION = "v1"
SCHEMA_DIR = ROOT / "schemas" / VERSION
OUTPUT_DIR = ROOT / "gym_contract" / "_generated" / VERSION
# Schema files that describe repository data rather than contract records get no models.
NOT_MODELLED = {"gap_codes.schema.json"}

HEADER = "# generated from schemas/{version}/{schema} by tools/codegen.py — do not edit\n"

# datamodel-code-generator 0.89 imports MISSING from where Pydantic 2.12 had it; 2.14 made it stable.
EXPERIMENTAL_MISSING = "from pydantic.experimental.missing_sentinel import MISSING"
STABLE_MISSING = "from pydantic import MISSING"

CODEGEN_ARGS = [
    "--input-file-type",
    "jsonschema",
    "--output-model-type",
    "pydantic_v2.BaseModel",
    "--target-python-version",
    "3.10",
    "--base-class",
    "gym_contract._model_base.ContractModel",
    # Keywords Pydantic types cannot express; ContractModel evaluates them from json_schema_extra.
    "--model-extra-keys-without-x-prefix",
    "if",
    "then",
    "else",
    "dependentRequired",
    "--use-missing-sentinel",
    "--strict-nullable",
    "--enum-field-as-literal",
    "all",
    "--use-annotated",
    "--field-constraints",
    "--use-standard-collections",
    "--use-union-operator",
    "--use-schema-description",
    "--use-field-description",
    "--use-title-as-name",
    "--collapse-root-models",
    "--disable-timestamp",
    "--custom-file-header",
    "#",
    "--formatters",
    "ruff-format",
]


class GenerationError(Exception):
    """The generator cannot run here: the models are neither written nor checked."""


# The generator and its formatter, as the dev extra pins them: another version writes other code.
TOOLS = {"datamodel_code_generator": "datamodel-code-generator", "ruff": "ruff"}


def pinned_versions() -> dict[str, str]:
    """The versions of the tools that pyproject.toml's dev extra pins (`name==version`)."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    return {name: match.group(1) for name in TOOLS.values() if (match := re.search(rf'"{name}==([^"]+)"', text))}


def unusable_tools() -> list[str]:
    """Why this interpreter cannot generate the committed code: a tool missing, or another version than pinned."""
    pins = pinned_versions()
    problems = []
    for module, name in TOOLS.items():
        if importlib.util.find_spec(module) is None:
            problems.append(f"{name} is not installed")
        elif (installed := importlib.metadata.version(name)) != pins.get(name, installed):
            problems.append(f"{name} {installed} is installed but the models are generated with {pins[name]}")
    return problems


# Where the pinned tools are installed when the interpreter running this script lacks them.
TOOLS_HOME = ROOT / ".cache" / "codegen-tools"
INSTALLED = "installed.txt"


def tool_python() -> str:
    """An interpreter that has the pinned generator and formatter.

    This one when it has them (the dev extra installs them); otherwise a virtual environment of
    their own under `.cache/codegen-tools/`, made and filled with pip on first use and reused after.
    Raises GenerationError when that environment cannot be made.
    """
    problems = unusable_tools()
    if not problems:
        return sys.executable
    pins = pinned_versions()
    requirements = [f"{name}=={pins[name]}" for name in TOOLS.values() if name in pins]
    if len(requirements) != len(TOOLS):
        raise GenerationError(f"{'; '.join(problems)}, and pyproject.toml pins no version to install")
    folder = TOOLS_HOME / "-".join(requirements).replace("==", "-")
    # Written last, so that an install cut short is made again rather than taken for a good one.
    if not (folder / INSTALLED).exists():
        print(f"tools/codegen.py: {'; '.join(problems)}; installing {' '.join(requirements)} into {folder}",
              file=sys.stderr)  # fmt: skip
        install_tools(folder, requirements)
    return str(_python_in(folder))


def _python_in(folder: Path) -> Path:
    return folder / ("Scripts" if os.name == "nt" else "bin") / "python"


def install_tools(folder: Path, requirements: list[str]) -> None:
    """A new virtual environment in ``folder`` with ``requirements`` installed; nothing left behind on failure."""
    try:
        venv.create(folder, with_pip=True, clear=True)
        command = [
            str(_python_in(folder)),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            *requirements,
        ]
        run = subprocess.run(command, capture_output=True, text=True, check=False)
    except OSError as error:
        shutil.rmtree(folder, ignore_errors=True)
        raise GenerationError(f"cannot make a virtual environment for the tools in {folder}: {error}") from None
    if run.returncode != 0:
        shutil.rmtree(folder, ignore_errors=True)
        said = (run.stderr.strip().splitlines() or ["no message"])[-1]
        raise GenerationError(f"cannot install {' '.join(requirements)}: pip said: {said}")
    (folder / INSTALLED).write_text("\n".join(requirements) + "\n", encoding="utf-8")


def generate(destination: Path) -> None:
    """Write the generated package for every modelled schema into ``destination``.

    Raises GenerationError when the pinned tools cannot be had or the generator fails, with what it said.
    """
    python = tool_python()
    with tempfile.TemporaryDirectory() as tmp:
        inputs = Path(tmp) / "schemas"
        inputs.mkdir()
        for path in sorted(SCHEMA_DIR.glob("*.schema.json")):
            if path.name not in NOT_MODELLED:
                shutil.copy(path, inputs / path.name)
        with_discriminators(inputs)
        raw = Path(tmp) / "out"
        command = [
            python,
            "-m",
            "datamodel_code_generator",
            "--input",
            str(inputs),
            "--output",
            str(raw),
            *CODEGEN_ARGS,
        ]
        run = subprocess.run(command, cwd=tmp, capture_output=True, text=True, check=False)
        if run.returncode != 0:
            said = run.stderr.strip().splitlines()[-1:] or ["no message"]
            raise GenerationError(f"datamodel-code-generator failed (exit {run.returncode}): {said[0]}")
        if destination.exists():
            shutil.rmtree(destination)
        destination.mkdir(parents=True)
        for path in sorted(raw.glob("*.py")):
            schema = path.name.removesuffix("_schema.py") + ".schema.json" if path.name != "__init__.py" else ""
            body = path.read_text().split("\n", 1)[1].replace(EXPERIMENTAL_MISSING, STABLE_MISSING)
            header = (
                HEADER.format(version=VERSION, schema=schema)
                if schema
                else f'"""Models generated from schemas/{VERSION}."""\n'
            )
            (destination / path.name).write_text(header + body)


def with_discriminators(folder: Path) -> None:
    """Mark each union of records told apart by a required `const` tag with OpenAPI's `discriminator`.

    The generator writes a discriminated union (one branch tried, by its tag) only from that keyword,
    which is no JSON Schema keyword and which strict validators refuse, so the published schemas
    say the same thing in plain JSON Schema: a `oneOf` of records, each fixing its tag with `const`,
    the tag required and declared beside it. The copy the generator reads gets the keyword, and
    loses the declaration, which would otherwise become a field of a model of its own.
    """
    documents = {path.name: json.loads(path.read_text(encoding="utf-8")) for path in folder.glob("*.schema.json")}

    def tag_of(branch: Any, tag: str) -> Any:
        if not isinstance(branch, dict) or set(branch) != {"$ref"} or branch["$ref"] not in documents:
            return None
        return documents[branch["$ref"]].get("properties", {}).get(tag, {}).get("const")

    def mark(node: Any) -> None:
        if isinstance(node, list):
            for item in node:
                mark(item)
        if not isinstance(node, dict):
            return
        for value in node.values():
            mark(value)
        required, branches = node.get("required"), node.get("oneOf")
        if not (isinstance(branches, list) and isinstance(required, list) and len(required) == 1):
            return
        tag = required[0]
        tags = [tag_of(branch, tag) for branch in branches]
        if None in tags or len(set(tags)) != len(tags):
            return
        node["discriminator"] = {
            "propertyName": tag,
            "mapping": {v: b["$ref"] for v, b in zip(tags, branches, strict=True)},
        }
        if node.get("type") == "object" and set(node.get("properties", {})) <= {tag}:
            node.pop("type")
            node.pop("properties", None)

    for name, document in documents.items():
        mark(document)
        (folder / name).write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def drift(committed: Path, fresh: Path) -> list[str]:
    """Unified diff lines between the committed and a fresh generation."""
    lines: list[str] = []
    names = sorted({p.name for p in committed.glob("*.py")} | {p.name for p in fresh.glob("*.py")})
    for name in names:
        old = (committed / name).read_text().splitlines(keepends=True) if (committed / name).exists() else []
        new = (fresh / name).read_text().splitlines(keepends=True) if (fresh / name).exists() else []
        lines.extend(difflib.unified_diff(old, new, f"committed/{name}", f"generated/{name}"))
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--check", action="store_true", help="fail when the committed models differ from a fresh generation"
    )
    args = parser.parse_args(argv)
    try:
        if not args.check:
            generate(OUTPUT_DIR)
            print(f"generated {len(list(OUTPUT_DIR.glob('*.py')))} modules into {OUTPUT_DIR.relative_to(ROOT)}")
            return 0
        with tempfile.TemporaryDirectory() as tmp:
            fresh = Path(tmp) / VERSION
            generate(fresh)
            diff = drift(OUTPUT_DIR, fresh)
    except GenerationError as error:
        # Status 2, not 1: nothing is known about drift, and 1 would say the models are out of step.
        nothing = " (nothing was compared)" if args.check else ""
        print(
            f"tools/codegen.py: cannot {'check' if args.check else 'generate'} the models{nothing}: {error}",
            file=sys.stderr,
        )
        return 2
    if diff:
        sys.stdout.writelines(diff[:200])
        print(f"\n{OUTPUT_DIR.relative_to(ROOT)} is out of step with schemas/{VERSION}: run python tools/codegen.py")
        return 1
    print(f"{OUTPUT_DIR.relative_to(ROOT)} is in step with schemas/{VERSION}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
