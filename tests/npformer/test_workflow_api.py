"""The API a newcomer reaches for, exported from both packages under the same names: save / load a
model and a training state, greedy and beam decoding (a source without its EOS is refused), attention
weights from either twin."""
import numpy as np
import pytest

import npformer as nf
from npformer.data.vocab import EOS, PAD

API = ["save_checkpoint", "load_checkpoint", "load_model", "restore", "CheckpointError",
       "TrainState", "save_training_state", "load_training_state", "greedy_decode", "beam_search",
       "attention_weights"]
CFG = nf.TransformerConfig(d_model=8, num_heads=2, d_ff=8, num_encoder_layers=1,
                           num_decoder_layers=1, vocab_size=9, max_len=8, dtype="float64",
                           dropout=0.0)
SRC = np.array([[3, 4, 5, EOS], [6, 7, EOS, PAD]])


@pytest.mark.parametrize("pkg", ["npformer", "torchformer"])
def test_exported(pkg):
    if pkg == "torchformer":
        pytest.importorskip("torch")
    mod = __import__(pkg)
    for name in API:
        assert name in mod.__all__ and callable(getattr(mod, name)), (pkg, name)


def test_save_load_decode_round_trip(tmp_path):
    m = nf.Transformer(CFG, seed=1)
    path = nf.save_checkpoint(tmp_path / "m.npz", m)
    loaded = nf.load_model(path)
    g1 = nf.greedy_decode(m, SRC, max_new_tokens=4)
    g2 = nf.greedy_decode(loaded, SRC, max_new_tokens=4)
    assert np.array_equal(g1.tokens, g2.tokens)
    b = nf.beam_search(loaded, SRC, beam_size=2, max_new_tokens=4)
    assert b.tokens.shape[0] == 2


@pytest.mark.parametrize("pkg", ["npformer", "torchformer"])
def test_source_without_eos_is_refused(pkg):
    if pkg == "torchformer":
        torch = pytest.importorskip("torch")
        import torchformer as tf
        m, dec, beam, arr = tf.Transformer(CFG, seed=1), tf.greedy_decode, tf.beam_search, \
            torch.as_tensor
    else:
        m, dec, beam, arr = nf.Transformer(CFG, seed=1), nf.greedy_decode, nf.beam_search, \
            np.asarray
    no_eos = np.array([[3, 4, 5, PAD], [6, 7, EOS, PAD]])
    with pytest.raises(ValueError, match=r"src: rows \[0\] do not end with EOS \(id 2\).*append it"):
        dec(m, arr(no_eos), max_new_tokens=3)
    with pytest.raises(ValueError, match=r"src: rows \[0\] do not end with EOS"):
        beam(m, arr(no_eos), beam_size=2, max_new_tokens=3)
    dec(m, arr(no_eos), max_new_tokens=3, eos_id=None)             # explicitly unchecked
    dec(m, arr(SRC), max_new_tokens=3)


def test_attention_weights_from_either_twin_agree():
    torch = pytest.importorskip("torch")
    import torchformer as tf
    npm = nf.Transformer(CFG, seed=2).train()
    tfm = tf.Transformer(CFG, seed=2).train()
    tfm.load_state_dict(npm.state_dict())
    tgt = np.array([[1, 4, 5], [1, 7, 8]])
    a = nf.attention_weights(npm, SRC, tgt)
    b = tf.attention_weights(tfm, torch.as_tensor(SRC), torch.as_tensor(tgt))
    assert set(a) == set(b) == {"encoder.layers.0.self_attn", "decoder.layers.0.self_attn",
                                "decoder.layers.0.cross_attn"}
    for k in a:
        assert a[k].shape == (2, 2, 3 if "decoder" in k else 4, 4 if "cross" in k or "enc" in k
                              else 3)
        np.testing.assert_allclose(a[k], b[k], rtol=1e-12, atol=1e-12)
    assert npm.training and tfm.training                            # modes restored
    assert not any(m.need_weights for m in tfm.modules() if hasattr(m, "need_weights"))


def test_readme_python_blocks_run_as_written(tmp_path, monkeypatch):
    """The README's Python blocks, pasted in order into one session in an empty folder, run."""
    import re
    from pathlib import Path
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    assert len(blocks) >= 2
    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    for block in blocks:
        exec(compile(block, "README.md", "exec"), scope)
    assert (tmp_path / "model.npz").is_file()
    # the decoding lines print arrays of the length they ask for, not the model's max_len
    assert scope["out"].tokens.shape == (2, 8)
    assert scope["beams"].tokens.shape == (2, 8) and scope["beams"].beams.shape == (2, 4, 8)
