"""The walk-through notebooks in examples/ run top to bottom, and a notebook that raises fails.

Each `examples/NN_*.py` (jupytext percent format) is converted to a notebook and executed by nbclient
in a fresh IPython kernel, in the examples folder, with matplotlib's inline backend (non-interactive:
figures become image outputs). A cell that raises fails the test with the cell and its traceback.
Needs the `examples` extra (jupytext, nbclient, nbformat, ipykernel, matplotlib); skipped without it,
except under CI=true, where a missing runner is an error.
"""
from __future__ import annotations

import importlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest


def need(module: str):
    """Import `module`; skip without it, except in CI (CI=true), where the runner must be there."""
    if os.environ.get("CI"):
        return importlib.import_module(module)
    return pytest.importorskip(module, reason="the examples extra: pip install -e '.[examples]'")


jupytext = need("jupytext")
nbclient = need("nbclient")
need("ipykernel")
need("matplotlib")

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
NOTEBOOKS = sorted(EXAMPLES.glob("[0-9][0-9]_*.py"))
CELL_TIMEOUT_S = 600          # generous: the 2-core CI machine is shared; every notebook aims at < 1 min
INLINE = "module://matplotlib_inline.backend_inline"


KERNEL = "npformer-examples"


@pytest.fixture(scope="module")
def kernel_dir(tmp_path_factory):
    """A kernelspec that runs this interpreter, so no python3 kernel registered elsewhere is picked."""
    root = tmp_path_factory.mktemp("jupyter")
    spec = root / "kernels" / KERNEL
    spec.mkdir(parents=True)
    spec.joinpath("kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "npformer examples", "language": "python"}))
    return root


@pytest.fixture(autouse=True)
def kernel_env(monkeypatch, kernel_dir):
    """The kernel is this interpreter, imports this checkout (not another installed copy) and draws
    figures inline."""
    monkeypatch.setenv("JUPYTER_PATH", str(kernel_dir))
    path = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", str(ROOT) + (os.pathsep + path if path else ""))
    monkeypatch.setenv("MPLBACKEND", INLINE)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):   # tiny matrices, shared cores
        monkeypatch.setenv(var, "1")


def execute(nb, cwd: Path):
    """Run every cell of `nb` in a fresh kernel; raises CellExecutionError on the first error."""
    client = nbclient.NotebookClient(nb, timeout=CELL_TIMEOUT_S, kernel_name=KERNEL,
                                     allow_errors=False, resources={"metadata": {"path": str(cwd)}})
    return client.execute()


def images(nb) -> int:
    return sum(1 for cell in nb.cells if cell.cell_type == "code"
               for out in cell.get("outputs", []) if "image/png" in out.get("data", {}))


def code_text(nb) -> str:
    return "\n".join(cell.source for cell in nb.cells if cell.cell_type == "code")


def test_the_walk_through_has_its_six_notebooks():
    assert [p.name[:2] for p in NOTEBOOKS] == ["01", "02", "03", "04", "05", "06"], NOTEBOOKS


def printed(nb) -> str:
    return "".join(out.get("text", "") for cell in nb.cells if cell.cell_type == "code"
                   for out in cell.get("outputs", []))


# what a notebook must print besides its numbers: a model's answer is shown beside the right one
SHOWN = {"04_your_own_text": [r"by the rules: (.+) -> .+\n(?:.*\n)*?\1 -> .+\((right|wrong)\)"]}


def greedy_and_beam_listed_where_said(text: str):
    """Notebook 4's held-out sentences: those listed under "differ" differ, those under "agree" agree."""
    head = re.search(r"greedy and beam differ on (\d+) of \d+ held-out sentences.*\n", text)
    assert head, "notebook 4 prints no greedy-vs-beam count"
    rows = re.findall(r"^(where they agree.*|    greedy +(.*?)(?:   \(wrong\))?\n    beam +(.*?)(?:   \(wrong\))?)$",
                      text[head.end():], re.M)
    agreeing = False
    listed = 0
    for header, greedy, beam in rows:
        if header.startswith("where they agree"):
            agreeing = True
            continue
        listed += 1
        assert (greedy == beam) == agreeing, (header, greedy, beam, "under 'agree'" if agreeing else "under 'differ'")
    assert listed >= min(int(head.group(1)), 1)


# what a notebook's printed output must satisfy, beyond the patterns above
CHECKED = {"04_your_own_text": [greedy_and_beam_listed_where_said]}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_top_to_bottom(path):
    nb = jupytext.read(path)
    executed = execute(nb, EXAMPLES)
    # every figure a notebook draws is drawn by the notebook itself, shown inline
    if re.search(r"\bplt\.|pyplot", code_text(nb)):
        assert images(executed) >= 1, f"{path.name} draws with matplotlib but no figure came out"
    for pattern in SHOWN.get(path.stem, []):
        assert re.search(pattern, printed(executed)), f"{path.name} does not print {pattern!r}"
    for check in CHECKED.get(path.stem, []):
        check(printed(executed))


def test_a_notebook_that_raises_fails_the_run(tmp_path):
    src = tmp_path / "broken.py"
    src.write_text("# %%\nx = 1\n\n# %%\nraise ValueError('planted failure')\n")
    with pytest.raises(nbclient.exceptions.CellExecutionError, match="planted failure"):
        execute(jupytext.read(src), tmp_path)


# a number in prose must be computed by a cell: markdown may not quote measured-looking figures
# (decimals, percentages, scientific notation) outside code spans and math
MEASURED = re.compile(r"\d+\.\d+|\d+(\.\d+)?\s?%|\d[eE][-+]?\d+")
EXEMPT = re.compile(r"[Ss]ection \d+(\.\d+)*|`[^`]*`|\$\$.*?\$\$|\$[^$]*\$|\[[^\]]*\]\([^)]*\)", re.DOTALL)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_prose_quotes_no_number_a_cell_did_not_compute(path):
    nb = jupytext.read(path)
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        prose = EXEMPT.sub("", cell.source)
        hit = MEASURED.search(prose)
        assert hit is None, f"{path.name}: markdown quotes {hit.group(0)!r}; print it from a cell instead:\n" \
                            f"{cell.source[:300]}"


def test_the_examples_readme_names_every_module_the_notebooks_import():
    readme = (EXAMPLES / "README.md").read_text(encoding="utf-8")
    for path in NOTEBOOKS:
        for module, name in re.findall(r"^from (npformer\.[\w.]+) import (\w+)", path.read_text(encoding="utf-8"),
                                       re.M):
            assert f"`{module}`" in readme or f"`{module}.{name}`" in readme, \
                f"{path.name} imports {module}; examples/README.md does not name it"


def test_notebook_5_as_a_plain_script_prints_only_its_own_lines(tmp_path):
    """Run as `python examples/05_...py` (examples/README.md), its first line is the notebook's own
    (which GPT-2 it uses), not blank lines from a library's progress bar."""
    env = {k: v for k, v in os.environ.items() if k != "NPFORMER_GPT2_DIR"}
    env.update(MPLBACKEND="Agg", PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    run = subprocess.run([sys.executable, str(EXAMPLES / "05_gpt2_and_bert_in_numpy.py")], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=CELL_TIMEOUT_S)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.startswith("no GPT-2 folder found"), repr(run.stdout[:200])
