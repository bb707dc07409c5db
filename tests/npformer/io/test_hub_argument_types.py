"""`from_pretrained` (both twins) names a folder that is not a path (`from_pretrained(3)` was
pathlib's "expected str, bytes or os.PathLike object, not int"), and torchformer's takes a torch
dtype as its layers do (`dtype=torch.float64` was refused with "expected 'float32' or 'float64'")."""
import numpy as np
import pytest

from npformer.io.hub import from_pretrained
from tests.npformer.conftest import twins

TWINS = twins(from_pretrained, "torchformer.io.hub:from_pretrained")


@pytest.mark.parametrize("name, load", TWINS, ids=lambda x: x if isinstance(x, str) else "")
@pytest.mark.parametrize("folder", [3, None, b"gpt2", ["gpt2"]], ids=repr)
def test_a_folder_that_is_not_a_path_is_named(name, load, folder):
    with pytest.raises(TypeError, match=r"folder: expected a folder path \(str or os.PathLike\), got "):
        load(folder)


def test_torchformer_takes_a_torch_dtype(tmp_path):
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from tests.npformer.io.tiny_folders import gpt2_folder
    from torchformer.io.hub import from_pretrained as tf_from_pretrained
    folder = gpt2_folder(tmp_path / "gpt2")
    got = tf_from_pretrained(folder, dtype=torch.float64)
    want = tf_from_pretrained(folder, dtype="float64")
    assert got.config.dtype == "float64"
    for (k, a), (_, b) in zip(got.state_dict().items(), want.state_dict().items()):
        assert a.dtype == torch.float64 and torch.equal(a, b), k
    with pytest.raises(ValueError, match="dtype: expected 'float32' or 'float64', got 'float16'"):
        tf_from_pretrained(folder, dtype=torch.float16)
    assert np.asarray(from_pretrained(folder, dtype="float64").state_dict()["tgt_embed.weight"]).dtype \
        == np.float64
