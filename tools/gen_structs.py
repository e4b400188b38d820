"""Write the records' Structs compiled from the schemas as gym_contract/validation/_structs_v1.py; --check: drift."""

from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's package, whatever the interpreter has installed

from gym_contract.validation import _struct_source  # noqa: E402 - after the checkout is put first


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail when the committed module differs from a fresh one")
    args = parser.parse_args(argv)
    target = _struct_source.RENDERED
    shown = target.relative_to(ROOT)
    try:
        fresh = _struct_source.formatted(_struct_source.render())
    except _struct_source.RenderError as error:
        print(f"tools/gen_structs.py: cannot write {shown}: {error}", file=sys.stderr)
        return 2
    if not args.check:
        target.write_text(fresh, encoding="utf-8")
        print(f"wrote {shown}")
        return 0
    committed = target.read_text(encoding="utf-8") if target.exists() else ""
    if committed != fresh:
        diff = difflib.unified_diff(
            committed.splitlines(keepends=True), fresh.splitlines(keepends=True), f"committed/{shown}", f"fresh/{shown}"
        )
        sys.stdout.writelines(list(diff)[:200])
        print(f"\n{shown} is out of step with the schemas or their compiler: run python tools/gen_structs.py")
        return 1
    print(f"{shown} is in step with the schemas")
    return 0


if __name__ == "__main__":
    sys.exit(main())
