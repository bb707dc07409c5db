"""`--resume` / load_training_state of a checkpoint whose training state was damaged (edited by
hand, written by another version, cut by a bad copy of the JSON header): every damage is a
CheckpointError naming the file, never a raw error from deep inside torch or numpy. A torch dropout
generator state of the wrong size used to raise torch's RuntimeError ("Expected a
CPUGeneratorImplState of size 5056 ...")."""
import copy
import json

import numpy as np
import pytest

from npformer.cli.main import main
from npformer.io.checkpoint import CheckpointError
from npformer.training.resume import load_training_state
from tests.npformer.conftest import tiny_train_args


def damage(m: dict, what: str) -> None:
    resume, rngs = m["resume"], m["resume"]["dropout_rng"]
    if what == "stream missing":
        resume["stream"] = None
    elif what == "stream garbage":
        resume["stream"] = {k: "x" for k in resume["stream"]}
    elif what == "dropout states not a list":
        resume["dropout_rng"] = "x"
    elif what == "dropout state too short":
        resume["dropout_rng"] = [{"torch": "AAAA", "numpy": {"state": 3}}] * len(rngs)
    elif what == "dropout state not base64":
        resume["dropout_rng"] = [{"torch": "!!not base64!!", "numpy": 7}] * len(rngs)
    elif what == "unknown task":
        m["task"]["name"] = "no-such-task"
    elif what == "betas not a pair":
        m["train"]["betas"] = 3
    elif what == "negative batch size":
        m["train"]["batch_size"] = -3
    else:                                                          # pragma: no cover
        raise AssertionError(what)


DAMAGES = ["stream missing", "stream garbage", "dropout states not a list",
           "dropout state too short", "dropout state not base64", "unknown task",
           "betas not a pair", "negative batch size"]


@pytest.fixture(scope="module", params=["numpy", "torch"])
def saved_run(request, tmp_path_factory):
    if request.param == "torch":
        pytest.importorskip("torch")
    path = tmp_path_factory.mktemp(request.param) / "run.npz"
    assert main(["train", *tiny_train_args(steps=2), "--dropout", "0.1", "--backend", request.param,
                 "--save", str(path)]) == 0
    return request.param, path


def loader(backend: str):
    if backend == "numpy":
        return load_training_state
    from torchformer.training.resume import load_training_state as torch_load
    return torch_load


@pytest.mark.parametrize("what", DAMAGES)
def test_damaged_training_state_is_a_checkpoint_error_naming_the_file(saved_run, tmp_path, what):
    backend, path = saved_run
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    header = json.loads(str(arrays["header"]))
    bad = copy.deepcopy(header)
    damage(bad["metadata"], what)
    arrays["header"] = np.array(json.dumps(bad))
    damaged = tmp_path / "damaged.npz"
    np.savez(damaged, **arrays)
    with pytest.raises(CheckpointError, match=f"checkpoint {damaged}: training state: "):
        loader(backend)(damaged)


def test_the_undamaged_run_loads(saved_run):
    backend, path = saved_run
    assert loader(backend)(path).step == 2
