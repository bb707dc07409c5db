"""`npformer train --backend torch --nproc 2 --save X`: a file another program writes at X while the
workers train (after the launcher and rank 0 checked X) is kept; rank 0 saves the run beside it as
X-1.npz, a loadable training state, and one line says both, exit status 2."""
import os
import subprocess
import sys

import pytest

from tests import paths

torch = pytest.importorskip("torch")
if not torch.distributed.is_available():  # pragma: no cover - depends on the torch build
    pytest.skip("torch.distributed is not available", allow_module_level=True)

TINY = ["--d-model", "16", "--heads", "2", "--d-ff", "32", "--layers", "1", "--batch-size", "8",
        "--eval-size", "8", "--examples", "0", "--no-progress"]
OTHER = b"another run's checkpoint"


def test_a_file_written_while_the_workers_trained_is_kept(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(paths.ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               OMP_NUM_THREADS="1")
    p = subprocess.Popen([sys.executable, "-m", "npformer", "train", "--backend", "torch", "--nproc", "2",
                          "--steps", "100", *TINY, "--save", "run.npz"], cwd=tmp_path, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for line in p.stdout:
        if "processes on" in line:                    # rank 0 has checked --save; training starts
            (tmp_path / "run.npz").write_bytes(OTHER)
            break
    out, err = p.communicate(timeout=300)
    assert p.returncode == 2, err
    assert (tmp_path / "run.npz").read_bytes() == OTHER
    assert err.strip().splitlines()[-1] == (
        "error: --save run.npz: was written by another program while this run trained (another run "
        "saving there?) and is left as it is; this run's checkpoint (step 100) is saved as run-1.npz")
    import torchformer as tf
    assert tf.load_training_state(tmp_path / "run-1.npz").step == 100
