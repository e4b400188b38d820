"""Building blocks of tools/render_docs.py: Markdown formatting, and one module per kind of generated block."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run from a checkout without installing: use its package
    sys.path.insert(0, str(ROOT))
