"""`npformer train --task lm|mlm --backend torch --nproc 2` trains the language models with
DistributedDataParallel: in float64 its weights equal a one-process run on the same batches, and
its checkpoint evaluates. (It used to launch torchrun and fail with two usage blocks and a
traceback.)"""
import os
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
         "--steps", "3", "--backend", "torch"]
TASKS = {"lm": ["--task", "lm", "--max-number", "20"],
         "mlm": ["--task", "mlm", "--num-symbols", "5", "--max-len", "3"]}


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="--nproc 2 needs 2 CPUs")
@pytest.mark.parametrize("task", sorted(TASKS))
def test_language_model_under_nproc_equals_one_process(tmp_path, task, capsys):
    argv = ["train", *TASKS[task], *SIZES]
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               OMP_NUM_THREADS="1")
    p = subprocess.run([sys.executable, "-m", "npformer", *argv, "--nproc", "2", "--save",
                        "ddp.npz"], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    assert main([*argv, "--save", str(tmp_path / "one.npz")]) == 0
    ddp, one = load_checkpoint(str(tmp_path / "ddp.npz")), load_checkpoint(str(tmp_path / "one.npz"))
    assert ddp.step == one.step == 3
    assert sorted(ddp.state) == sorted(one.state)
    for k, v in one.state.items():
        np.testing.assert_allclose(ddp.state[k], v, rtol=1e-9, atol=1e-12, err_msg=k)
    capsys.readouterr()
    assert main(["evaluate", str(tmp_path / "ddp.npz"), "--eval-size", "10", "--examples", "0"]) == 0
    assert f"task={task}" in capsys.readouterr().out
