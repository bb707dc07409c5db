"""from_pretrained and save_pretrained check their own arguments, in both twins, before any file is
read or written: NumPy integers are taken, and what is wrong names the argument.

Before: `save_pretrained(model, 5)` was pathlib's `expected str, bytes or os.PathLike object`;
`extra_files={"config.json": ...}` replaced the model's config.json with the given bytes (a folder
that no longer loads); `dtype="float16"` was blamed on `config.json`; `num_labels=np.int64(3)` and
`seed=np.int64(4)` were refused."""
import warnings

import numpy as np
import pytest

import npformer as nf
from npformer.io import hub
from tests.npformer.io.tiny_folders import bert_folder

LOADERS = [hub.from_pretrained]
SAVERS = [hub.save_pretrained]
try:
    import torchformer.io.hub as tf_hub
    LOADERS.append(tf_hub.from_pretrained)
    SAVERS.append(tf_hub.save_pretrained)
except ImportError:                                      # numpy only: npformer's own
    pass


def gpt2_model():
    return nf.CausalLM(nf.gpt2_config(vocab_size=11, max_len=8, d_model=8, num_heads=2, d_ff=16,
                                      num_decoder_layers=1))


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory):
    return hub.save_pretrained(gpt2_model(), tmp_path_factory.mktemp("hub") / "gpt2")


@pytest.mark.parametrize("save", SAVERS)
@pytest.mark.parametrize("name", ["config.json", "model.safetensors"])
def test_extra_files_cannot_replace_the_pair(tmp_path, save, name):
    with pytest.raises(ValueError, match=f"extra_files: '{name}' is written by save_pretrained "
                                         f"itself"):
        save(gpt2_model(), tmp_path / "out", extra_files={name: b"{}"})
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("save", SAVERS)
@pytest.mark.parametrize("folder", [5, None, b"out"])
def test_a_folder_that_is_not_a_path_is_named(save, folder):
    with pytest.raises(TypeError, match="folder: expected a folder path"):
        save(gpt2_model(), folder)


@pytest.mark.parametrize("load", LOADERS)
def test_a_bad_dtype_is_the_arguments_not_the_folders(gpt2, load):
    with pytest.raises(ValueError, match="^dtype: expected 'float32' or 'float64', got 'float16'$"):
        load(gpt2, dtype="float16")
    assert load(gpt2, dtype=np.float64).config.dtype == "float64"


@pytest.mark.parametrize("load", LOADERS)
def test_numpy_integers_for_num_labels_and_seed(tmp_path_factory, load):
    pytest.importorskip("transformers", reason="the [hf] extra is not installed")
    pytest.importorskip("tokenizers", reason="the [hf] extra is not installed")
    folder = bert_folder(tmp_path_factory.mktemp("bert") / "bert")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                   # the fresh head's warning
        a = load(folder, kind="bert_cls", num_labels=3, seed=4)
        b = load(folder, kind="bert_cls", num_labels=np.int64(3), seed=np.int64(4))
    assert b.config.num_classes == 3
    for (k, v), (_, w) in zip(a.state_dict().items(), b.state_dict().items()):
        assert np.array_equal(np.asarray(v), np.asarray(w)), k
    for bad, says in ((np.int64(0), "num_labels: expected an int >= 1"),
                      (True, "num_labels: expected an int >= 1")):
        with pytest.raises(ValueError, match=says):
            load(folder, kind="bert_cls", num_labels=bad)
    with pytest.raises(ValueError, match="seed: expected an int >= 0"):
        load(folder, kind="bert_cls", num_labels=3, seed=-1)
