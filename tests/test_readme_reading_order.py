"""The README's "Read the model" list names every file of npformer/layers and npformer/models, and
no file imports one that the list introduces at a later step."""
from __future__ import annotations

import ast
import re

from tests.paths import ROOT

MODEL_DIRS = ("layers", "models")


def reading_steps() -> dict[str, int]:
    """`layers/x.py` / `models/x.py` -> the number of the step of the list that first names it."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Read the model", 1)[1].split("\n## ", 1)[0]
    steps: dict[str, int] = {}
    for m in re.finditer(r"^ ?(\d+)\. (.*?)(?=^ ?\d+\. |\Z)", section, re.M | re.S):
        for path in re.findall(r"\(npformer/((?:layers|models)/\w+\.py)\)", m.group(2)):
            steps.setdefault(path, int(m.group(1)))
    return steps


def model_imports(path) -> set[str]:
    """The layers/models files `path` imports (as `layers/x.py`)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = [node.module] if isinstance(node, ast.ImportFrom) and node.module else \
            [a.name for a in node.names] if isinstance(node, ast.Import) else []
        for name in names:
            parts = name.split(".")
            if parts[0] == "npformer" and len(parts) >= 3 and parts[1] in MODEL_DIRS:
                found.add(f"{parts[1]}/{parts[2]}.py")
    return found


def model_files() -> list[str]:
    return [f"{d}/{p.name}" for d in MODEL_DIRS for p in sorted((ROOT / "npformer" / d).glob("*.py"))
            if p.name != "__init__.py"]


def test_the_reading_list_names_every_model_file():
    steps = reading_steps()
    assert len(steps) >= 10, steps
    missing = [f for f in model_files() if f not in steps]
    assert not missing, f"README 'Read the model' never names {missing}"


def test_no_file_uses_one_the_list_introduces_later():
    steps = reading_steps()
    late = [(f, dep) for f in model_files() for dep in model_imports(ROOT / "npformer" / f)
            if dep in steps and f in steps and steps[dep] > steps[f]]
    assert not late, f"README 'Read the model': these files import one introduced at a later step: {late}"


def test_the_guards_step_names_every_guards_file():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Read the model", 1)[1].split("\n## ", 1)[0]
    step = re.search(r"^ ?\d+\. .*?\(npformer/guards/\).*?(?=^ ?\d+\. |^\*\*|\Z)", section, re.M | re.S)
    assert step, "README 'Read the model' has no step for npformer/guards/"
    missing = [p.name for p in sorted((ROOT / "npformer" / "guards").glob("*.py"))
               if p.name != "__init__.py" and f"`{p.name}`" not in step.group(0)]
    assert not missing, f"README 'Read the model', the guards step, never names {missing}"
