"""The import rule holds for npformer and torchformer, and the checker catches each kind of break."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.layering import FLOORS, check, private_imports

ROOT = Path(__file__).resolve().parents[1]


def test_npformer_and_torchformer_follow_the_import_rule():
    problems = check(ROOT)
    assert not problems, "\n".join(map(str, problems))


def test_benchmarks_import_no_private_name_of_another_module():
    problems = private_imports(ROOT, ("benchmarks",))
    assert not problems, "\n".join(map(str, problems))


def test_a_planted_private_import_in_benchmarks_is_caught(tmp_path):
    write(tmp_path, {"benchmarks/__init__.py": "", "benchmarks/a.py": "def _f():\n    pass\n",
                     "benchmarks/b.py": "def g():\n    from benchmarks.a import _f\n"})
    problems = private_imports(tmp_path, ("benchmarks",))
    assert [(p.rule, p.where) for p in problems] == [("private", "benchmarks.b:2")]


def test_every_file_of_the_twins_sits_on_a_floor():
    for pkg in ("npformer", "torchformer"):
        for f in (ROOT / pkg).rglob("*.py"):
            rel = f.relative_to(ROOT / pkg)
            assert len(rel.parts) == 1 and rel.name in ("__init__.py", "__main__.py") \
                or rel.parts[0] in FLOORS, f"{pkg}/{rel}: not in a floor folder {FLOORS}"


def test_torchformer_mirrors_npformer_file_names():
    """Where both twins have a file for a concept, it has the same name on the same floor."""
    tf_only_ok = {"layers/compile_ops.py", "models/bridge.py", "models/torch_nn.py",
                  "training/distributed.py"}
    for f in (ROOT / "torchformer").rglob("*.py"):
        rel = f.relative_to(ROOT / "torchformer").as_posix()
        if rel in tf_only_ok or rel.endswith("__init__.py"):
            continue
        assert (ROOT / "npformer" / rel).exists(), f"torchformer/{rel} has no npformer/{rel}"


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


CLEAN = {
    "npformer/__init__.py": "from npformer.models.net import Net\n",
    "npformer/layers/__init__.py": "",
    "npformer/layers/lin.py": "import numpy as np\n",
    "npformer/models/__init__.py": "",
    "npformer/models/net.py": "from npformer.layers.lin import np\n",
    "npformer/models/other.py": "",
    "npformer/cli/__init__.py": "",
    "npformer/cli/tool.py": "",
    "npformer/cli/backends.py": "import importlib\nM = importlib.import_module('torchformer.layers.lin')\n",
    "torchformer/__init__.py": "",
    "torchformer/layers/__init__.py": "",
    "torchformer/layers/lin.py": "from npformer.layers import lin\n",
}


def test_a_clean_tree_passes(tmp_path):
    write(tmp_path, CLEAN)
    assert check(tmp_path) == []


def test_torchformer_guards_may_use_the_rules_of_npformer_guards(tmp_path):
    """Same floor, the other twin: allowed (torchformer imports npformer only downward or level)."""
    write(tmp_path, {**CLEAN, "npformer/guards/__init__.py": "", "npformer/guards/rules.py": "",
                     "torchformer/guards/__init__.py": "",
                     "torchformer/guards/validation.py": "from npformer.guards.rules import x\n"})
    assert check(tmp_path) == []


@pytest.mark.parametrize("rule, plant", [
    # an upward import, at module level and hidden inside a function
    ("upward", {"npformer/layers/lin.py": "from npformer.models import other\n"}),
    ("upward", {"npformer/layers/lin.py": "def f():\n    import npformer.cli.tool\n"}),
    ("upward", {"npformer/layers/lin.py":
                "import importlib\ndef f():\n    return importlib.import_module('npformer.models.other')\n"}),
    ("upward", {"npformer/layers/lin.py":
                "def f(a):\n    return __import__('npformer.models.other' if a else 'os')\n"}),
    # a model (or layer) reaching up to the input checks registered above it
    ("upward", {"npformer/guards/__init__.py": "", "npformer/guards/reg.py": "",
                "npformer/models/net.py": "from npformer.guards import reg\n"}),
    # a torchformer layer reaching up to the mask tooling of torchformer's checks floor
    ("upward", {"torchformer/checks/__init__.py": "", "torchformer/checks/dropout_masks.py": "",
                "torchformer/layers/lin.py": "from torchformer.checks import dropout_masks\n"}),
    # torchformer reaching above its floor in npformer
    ("upward", {"torchformer/layers/lin.py": "from npformer.models.net import Net\n"}),
    # torchformer's math reaching up to the rules npformer's guards share with torchformer's guards
    ("upward", {"npformer/guards/__init__.py": "", "npformer/guards/rules.py": "",
                "torchformer/layers/lin.py": "from npformer.guards import rules\n"}),
    # npformer naming torchformer outside the backend registry
    ("torchformer", {"npformer/models/net.py": "def f():\n    import torchformer.layers.lin\n"}),
    # a private name from another module
    ("private", {"npformer/models/net.py": "from npformer.layers.lin import _helper\n"}),
    # a cycle between two files of one floor, through function-level imports
    ("cycle", {"npformer/layers/a.py": "def f():\n    from npformer.layers import b\n",
               "npformer/layers/b.py": "def g():\n    from npformer.layers.a import f\n"}),
    # a relative import counts like an absolute one
    ("upward", {"npformer/layers/lin.py": "from ..models import other\n"}),
])
def test_a_planted_break_is_caught(tmp_path, rule, plant):
    write(tmp_path, {**CLEAN, **plant})
    problems = check(tmp_path)
    assert [p.rule for p in problems].count(rule) >= 1, [str(p) for p in problems]
    assert all(p.rule == rule for p in problems), [str(p) for p in problems]
