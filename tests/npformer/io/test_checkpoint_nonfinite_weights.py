"""Checkpoints holding NaN/inf weights (bit rot, a hand-edited file, a model saved after it diverged
through the API): they used to load silently and decode garbage; now refused at load and at save, in
both twins (the twins share the reader and writer)."""
import io
import os
import zipfile

import numpy as np
import pytest

import npformer as nf
from npformer.io.checkpoint import CheckpointError
from npformer.models.config import TransformerConfig

CFG = TransformerConfig(d_model=8, num_heads=2, d_ff=16, num_encoder_layers=1, num_decoder_layers=1,
                        vocab_size=9, max_len=8)


def poisoned_copy(src, dst, value):
    """`src` rewritten with one element of its first weight set to `value` (CRCs recomputed)."""
    with zipfile.ZipFile(src) as z, zipfile.ZipFile(dst, "w") as out:
        target = next(n for n in z.namelist() if n.startswith("model/"))
        for n in z.namelist():
            data = z.read(n)
            if n == target:
                a = np.load(io.BytesIO(data)).copy()
                a.flat[0] = value
                buf = io.BytesIO()
                np.save(buf, a)
                data = buf.getvalue()
            out.writestr(n, data)
    return target[len("model/"):-len(".npy")]


def loaders():
    out = [nf.load_model]
    try:
        import torchformer as tf
        out.append(tf.load_model)
    except ImportError:
        pass
    return out


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_non_finite_weights_in_a_checkpoint_are_refused(tmp_path, value):
    good, bad = tmp_path / "good.npz", tmp_path / "bad.npz"
    model = nf.Transformer(CFG, seed=0)
    opt = nf.Adam(model.named_parameters(), lr=1e-3)
    nf.save_checkpoint(good, model, opt, nf.WarmupSchedule(opt, d_model=8, warmup_steps=2), step=1)
    name = poisoned_copy(good, bad, value)
    for load in loaders():
        with pytest.raises(CheckpointError, match=rf"weight '{name}': expected finite values, "
                                                  rf"got 1 NaN or inf"):
            load(bad)
    nf.load_model(good)                                  # the untouched file still loads


def test_saving_a_model_with_nan_weights_is_refused_and_writes_nothing(tmp_path):
    model = nf.Transformer(CFG, seed=0)
    path = tmp_path / "m.npz"
    nf.save_checkpoint(path, model)
    before = path.read_bytes()
    model.src_embed.weight.data[0, 0] = np.nan               # a diverged model
    with pytest.raises(CheckpointError, match=r"src_embed\.weight': expected finite values.*"
                                              r"nothing was written"):
        nf.save_checkpoint(path, model)
    assert path.read_bytes() == before                       # the earlier file is unchanged
    assert sorted(os.listdir(tmp_path)) == ["m.npz"]         # no temp file left


def test_torch_twin_refuses_to_save_nan_weights(tmp_path):
    torch = pytest.importorskip("torch")
    import torchformer as tf
    model = tf.Transformer(CFG)
    with torch.no_grad():
        model.src_embed.weight[1, 2] = float("inf")
    with pytest.raises(CheckpointError, match=r"src_embed\.weight': expected finite values"):
        tf.save_checkpoint(tmp_path / "t.npz", model)
    assert not os.listdir(tmp_path)
