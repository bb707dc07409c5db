"""Every ```python block of the README and docs/ parses, and each is either run as written or has
its calls checked against the functions they call.

- README.md: run in order in one session (tests/npformer/test_workflow_api.py).
- docs/GPT2_BERT.md: run as written, in order in one session, in a folder holding tiny random
  "gpt2" and "bert-base-uncased" Hugging Face folders built offline in their place (the real ones
  are downloads of hundreds of MB).
- docs/ORACLE.md: not run (it grades a class and runs five oracle searches, minutes of CI); every
  call of an oracle function it imports is bound to that function's signature, so a renamed or
  removed keyword fails here.
- docs/ORACLE_STYLES.md: adapter files (functions the oracle calls), defined here.
A new page with a python block must be added to one of these lists.
"""
from __future__ import annotations

import ast
import importlib
import inspect
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"```python\n(.*?)```", re.S)
RUN = {"README.md", "docs/GPT2_BERT.md"}
BIND = {"docs/ORACLE.md"}
DEFINE = {"docs/ORACLE_STYLES.md"}


def blocks(page: Path) -> list[str]:
    return BLOCK.findall(page.read_text(encoding="utf-8"))


def name(page: Path) -> str:
    return str(page.relative_to(ROOT))


@pytest.mark.parametrize("page", [p for p in PAGES if blocks(p)], ids=name)
def test_every_python_block_parses_and_is_covered(page):
    for i, block in enumerate(blocks(page)):
        compile(block, f"{name(page)} block {i}", "exec")
    assert name(page) in RUN | BIND | DEFINE, f"{name(page)} has python blocks no test runs or checks"


def test_oracle_page_calls_match_the_oracle_signatures():
    page = ROOT / "docs" / "ORACLE.md"
    bound = 0
    for block in blocks(page):
        tree = ast.parse(block)
        funcs = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                mod = importlib.import_module(node.module)
                funcs.update({a.asname or a.name: getattr(mod, a.name) for a in node.names})
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in funcs:
                sig = inspect.signature(funcs[node.func.id])
                args = [None] * len(node.args)
                kwargs = {k.arg: None for k in node.keywords}
                try:
                    sig.bind(*args, **kwargs)
                except TypeError as e:
                    pytest.fail(f"docs/ORACLE.md line {node.lineno} of its block: "
                                f"{ast.unparse(node)}: {e}")
                bound += 1
    assert bound >= 5                                # check x4, Limits, grade


def test_oracle_styles_adapters_define_functions():
    for block in blocks(ROOT / "docs" / "ORACLE_STYLES.md"):
        scope: dict = {}
        exec(compile(block, "docs/ORACLE_STYLES.md", "exec"), scope)
        assert any(callable(v) for k, v in scope.items() if not k.startswith("__"))


@pytest.mark.filterwarnings("ignore:.*newly initialized:UserWarning")   # the page's fresh BERT head
def test_gpt2_bert_page_runs_as_written_on_tiny_folders(tmp_path, monkeypatch, capsys):
    pytest.importorskip("torch")
    pytest.importorskip("transformers", reason="the [hf] extra is not installed")
    pytest.importorskip("tokenizers", reason="the [hf] extra is not installed")
    from tests.npformer.io.tiny_folders import bert_folder, gpt2_folder
    gpt2_folder(tmp_path / "gpt2")
    bert_folder(tmp_path / "bert-base-uncased")
    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    for i, block in enumerate(blocks(ROOT / "docs" / "GPT2_BERT.md")):
        exec(compile(block, f"docs/GPT2_BERT.md block {i}", "exec"), scope)
    assert (tmp_path / "gpt2-tuned" / "model.safetensors").is_file()
    printed = capsys.readouterr().out.splitlines()
    assert sum(1 for line in printed if re.fullmatch(r"[0-2] \d+\.\d+(e[-+]\d+)?", line)) == 6, printed
