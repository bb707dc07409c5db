"""`--resume` / load_training_state of a checkpoint whose optimizer moments were damaged (an Adam
second moment below zero or NaN, a first moment NaN or infinite): a one-line CheckpointError naming
the file and the entry, before any step. Such a state used to be accepted; training then "diverged"
with a RuntimeWarning and advice to lower the learning rate."""
import numpy as np
import pytest

from npformer.cli.main import main
from npformer.io.checkpoint import CheckpointError
from npformer.training.resume import load_training_state
from tests.npformer.conftest import run_cli as run
from tests.npformer.conftest import tiny_train_args

ENTRY = "optim/output_proj.weight/"


@pytest.fixture(scope="module", params=["numpy", "torch"])
def saved_run(request, tmp_path_factory):
    if request.param == "torch":
        pytest.importorskip("torch")
    path = tmp_path_factory.mktemp(request.param) / "run.npz"
    assert main(["train", *tiny_train_args(steps=2), "--backend", request.param, "--save", str(path)]) == 0
    return request.param, path


def loader(backend: str):
    if backend == "numpy":
        return load_training_state
    from torchformer.training.resume import load_training_state as torch_load
    return torch_load


def damaged_copy(path, folder, key, value):
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    a = arrays[ENTRY + key].copy()
    a.flat[3] = value
    arrays[ENTRY + key] = a
    out = folder / "damaged.npz"
    np.savez(out, **arrays)
    return out


DAMAGES = [("exp_avg_sq", -0.5), ("exp_avg_sq", np.nan), ("exp_avg_sq", np.inf),
           ("exp_avg", np.nan), ("exp_avg", -np.inf)]


@pytest.mark.parametrize("key,value", DAMAGES)
def test_damaged_moments_are_refused_naming_the_entry(saved_run, tmp_path, key, value):
    backend, path = saved_run
    damaged = damaged_copy(path, tmp_path, key, value)
    with pytest.raises(CheckpointError) as info:
        loader(backend)(damaged)
    msg = str(info.value)
    assert msg.startswith(f"checkpoint {damaged}: optimizer state {ENTRY}{key}: expected finite"), msg
    assert "got" in msg and str(float(value)) in msg, msg


@pytest.mark.parametrize("key,value", DAMAGES[:2])
def test_resume_of_damaged_moments_is_one_line_before_training(saved_run, tmp_path, capsys, key, value):
    backend, path = saved_run
    damaged = damaged_copy(path, tmp_path, key, value)
    out = tmp_path / "next.npz"
    code, stdout, err = run(["train", "--resume", str(damaged), "--backend", backend, "--steps", "2",
                             "--no-progress", "--save", str(out)], capsys)
    assert code == 2, (stdout, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and f"{ENTRY}{key}" in lines[0] and str(damaged) in lines[0], err
    assert "diverged" not in err and "Traceback" not in err
    assert not out.exists()


def test_a_zero_second_moment_is_fine(saved_run, tmp_path):
    backend, path = saved_run
    assert loader(backend)(damaged_copy(path, tmp_path, "exp_avg_sq", 0.0)).step == 2
