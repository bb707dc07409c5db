"""`npformer train --task lm|translate|classify --data FILE --backend torch --nproc 2`: every
worker reads the files and trains the same tokenizer(s); in float64 the weights equal a one-process
run on the same batches, the checkpoint carries the tokenizer and its metrics, and a bad file is
reported in one line before any worker starts."""
import os
import random
import subprocess
import sys

import numpy as np
import pytest

from tests import paths

torch = pytest.importorskip("torch")
if not torch.distributed.is_available():  # pragma: no cover - depends on the torch build
    pytest.skip("torch.distributed is not available", allow_module_level=True)

from npformer.cli.main import main  # noqa: E402
from npformer.io.checkpoint import load_checkpoint  # noqa: E402

ROOT = str(paths.ROOT)
SIZES = ["--d-model", "16", "--heads", "2", "--d-ff", "32", "--layers", "1", "--batch-size", "8",
         "--eval-size", "10", "--examples", "0", "--no-progress", "--dtype", "float64",
         "--steps", "3", "--backend", "torch", "--context", "32"]
WORDS = "the a cat dog sees eats big red small runs".split()


def rows(kind: str, n: int = 200) -> str:
    rng = random.Random(0)
    out = []
    for _ in range(n):
        s = " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 5)))
        out.append({"lm": s, "translate": f"{s}\t{s.upper()}",
                    "classify": f"{s}\t{'cat' if 'cat' in s else 'other'}"}[kind])
    return "\n".join(out) + "\n"


def run_cli(argv, cwd):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               OMP_NUM_THREADS="1")
    return subprocess.run([sys.executable, "-m", "npformer", *argv], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="--nproc 2 needs 2 CPUs")
@pytest.mark.parametrize("task, extra, metric", [("lm", [], "loss"),
                                                 ("translate", ["--shared-vocab"], "bleu"),
                                                 ("classify", [], "macro_f1")])
def test_your_own_text_under_nproc_equals_one_process(tmp_path, task, extra, metric, capsys):
    data = tmp_path / f"{task}.txt"
    data.write_text(rows(task))
    argv = ["train", "--task", task, "--data", str(data), *extra, *SIZES]
    p = run_cli([*argv, "--nproc", "2", "--save", "ddp.npz"], tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert main([*argv, "--save", str(tmp_path / "one.npz")]) == 0
    ddp, one = load_checkpoint(str(tmp_path / "ddp.npz")), load_checkpoint(str(tmp_path / "one.npz"))
    assert ddp.step == one.step == 3
    assert ddp.metadata["task"] == one.metadata["task"]               # the same tokenizer(s)
    assert metric in ddp.metadata["metrics"]
    assert sorted(ddp.state) == sorted(one.state)
    for k, v in one.state.items():
        np.testing.assert_allclose(ddp.state[k], v, rtol=1e-9, atol=1e-12, err_msg=k)
    capsys.readouterr()
    assert main(["evaluate", str(tmp_path / "ddp.npz"), "--backend", "torch", "--examples", "0"]) == 0
    assert f"task={task} on" in capsys.readouterr().out


def test_a_bad_file_is_refused_before_any_worker_starts(tmp_path, capsys):
    data = tmp_path / "bad.tsv"
    data.write_text("a\tb\nno tab\n")
    assert main(["train", "--task", "translate", "--data", str(data), *SIZES, "--nproc", "2"]) == 2
    cap = capsys.readouterr()
    assert "running 2 workers" not in cap.out
    assert cap.err.strip() == (f"npformer train: error: --data {data}: line 2: no tab (expected one "
                               f"source<TAB>target per line)")
