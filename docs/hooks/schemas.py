"""MkDocs hook: serve the contract's raw schema files at their versioned URLs.

Every schema's `$id` is `https://gym-contract.dev/schemas/<version>/<name>.schema.json`. The files
stay where they are, in `schemas/` at the repository root (never copied into `docs/`); this hook
adds each of them to the site as a generated file, so `mkdocs build` writes
`site/schemas/v1/trajectory.schema.json` and `mkdocs serve` serves it. Pages may link to them
with relative links, which the strict build then checks like any other.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files


def _schema_files(config: Any) -> list[tuple[str, Path]]:
    """(URI in the site, file on disk) for every JSON file of every version folder of `schemas/`, and of its reports."""
    root = Path(config.config_file_path).resolve().parent / "schemas"
    return [
        (path.relative_to(root.parent).as_posix(), path)
        for version in sorted(
            p for p in root.iterdir() if p.is_dir() and (p.name.startswith("v") or p.name == "reports")
        )
        for path in sorted(version.glob("*.json"))
    ]


def on_files(files: Files, config: Any) -> Files:
    for uri, path in _schema_files(config):
        files.append(File.generated(config, uri, abs_src_path=str(path)))
    return files


def on_serve(server: Any, config: Any, builder: Any) -> Any:
    """Rebuild on `mkdocs serve` when a schema file changes, too."""
    server.watch(str(Path(config.config_file_path).resolve().parent / "schemas"))
    return server
