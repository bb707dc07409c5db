"""npformer.data.tokenizers needs only the standard library: importing it loads no ML or regex library."""
from __future__ import annotations

import subprocess
import sys

FORBIDDEN = ("torch", "transformers", "tokenizers", "regex", "hypothesis")


def test_import_loads_no_heavy_library():
    code = ("import sys, npformer.data.tokenizers; "
            f"print(sorted(m for m in sys.modules if m.split('.')[0] in {FORBIDDEN!r}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout
