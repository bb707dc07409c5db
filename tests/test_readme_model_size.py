"""The README states how long the model a learner reads is (npformer/layers + npformer/models)."""
from __future__ import annotations

import re

from tests.paths import ROOT


def test_readme_states_the_plain_model_path_length():
    files = sorted((ROOT / "npformer" / "layers").glob("*.py")) + \
        sorted((ROOT / "npformer" / "models").glob("*.py"))
    lines = sum(len(f.read_text().splitlines()) for f in files)
    longest = max(len(f.read_text().splitlines()) for f in files)
    text = " ".join((ROOT / "README.md").read_text().split())
    m = re.search(r"Together they are about ([\d,]+) lines in (\d+) files, none over (\d+) lines", text)
    assert m, "README: the sentence stating the model's size is gone"
    stated, count, limit = int(m.group(1).replace(",", "")), int(m.group(2)), int(m.group(3))
    assert abs(stated - lines) <= 0.05 * lines, f"README says about {stated} lines; they are {lines}"
    assert count == len(files), f"README says {count} files; there are {len(files)}"
    assert longest <= limit, f"README says none over {limit} lines; the longest has {longest}"
