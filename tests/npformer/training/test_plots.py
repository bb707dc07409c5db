"""npformer.training.plots: files are written, labels are checked, a missing matplotlib says what to install."""
import builtins
import sys

import numpy as np
import pytest

from npformer.data.tasks import Vocab
from npformer.models.config import TransformerConfig
from npformer.models.transformer import Transformer
from npformer.training import plots


def test_attention_maps_for_every_kind_layer_and_head(tmp_path):
    pytest.importorskip("matplotlib")
    cfg = TransformerConfig(d_model=8, num_heads=2, d_ff=16, num_encoder_layers=2,
                            num_decoder_layers=1, vocab_size=8, max_len=8, dropout=0.0)
    model = Transformer(cfg, seed=0)
    src = np.array([[3, 4, 5, 2, 0]])                              # one PAD: cut off the axes
    tgt = np.array([[1, 5, 4]])
    paths = plots.save_attention_maps(model, src, tgt, Vocab(5), str(tmp_path))
    names = sorted(p.split("/")[-1] for p in paths)
    assert names == ["attn_cross_layer0.png", "attn_decoder_layer0.png",
                     "attn_encoder_layer0.png", "attn_encoder_layer1.png"]
    paths = plots.save_attention_maps(model, src, tgt, Vocab(5), str(tmp_path), kinds=["cross"],
                                      layers=[0], heads=[1], prefix="x")
    assert [p.split("/")[-1] for p in paths] == ["x_cross_layer0_head1.png"]
    for p in paths:
        with open(p, "rb") as f:
            assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError, match="layers"):
        plots.save_attention_maps(model, src, tgt, Vocab(5), str(tmp_path), layers=[3])
    with pytest.raises(ValueError, match="heads"):
        plots.save_attention_maps(model, src, tgt, Vocab(5), str(tmp_path), heads=[2])
    # the weights drawn are the model's: rows sum to 1 over the non-PAD keys
    w = plots.collect_attention(model)["decoder.layers.0.cross_attn"]
    np.testing.assert_allclose(w[0, :, :, :4].sum(-1), 1.0, rtol=1e-5)
    assert (w[0, :, :, 4] == 0).all()


def test_single_plots_and_label_checks(tmp_path):
    pytest.importorskip("matplotlib")
    p = plots.plot_attention(np.full((2, 3), 1 / 3), ["a", "b"], ["x", "y", "z"],
                             str(tmp_path / "one.png"))
    assert (tmp_path / "one.png").stat().st_size > 0 and p.endswith("one.png")
    with pytest.raises(ValueError, match="tokens: expected 2 query and 3 key labels"):
        plots.plot_attention(np.zeros((2, 3)), ["a"], ["x", "y", "z"], str(tmp_path / "bad.png"))
    assert not (tmp_path / "bad.png").exists()
    plots.plot_positional_encoding(np.random.default_rng(0).uniform(-1, 1, (10, 8)),
                                   str(tmp_path / "pe.png"))
    plots.plot_loss_curve(np.arange(1, 31), np.linspace(3, 0.1, 30), str(tmp_path / "l.png"),
                          eval_steps=[10, 20], eval_losses=[1.0, 0.5])
    assert (tmp_path / "pe.png").exists() and (tmp_path / "l.png").exists()
    with pytest.raises(ValueError, match="steps, losses"):
        plots.plot_loss_curve([1, 2], [1.0], str(tmp_path / "x.png"))


def test_missing_matplotlib_names_the_extra(monkeypatch, tmp_path):
    real_import = builtins.__import__

    def no_mpl(name, *a, **kw):
        if name.startswith("matplotlib"):
            raise ImportError("No module named 'matplotlib'")
        return real_import(name, *a, **kw)

    for mod in [m for m in sys.modules if m.startswith("matplotlib")]:
        monkeypatch.delitem(sys.modules, mod)
    monkeypatch.setattr(builtins, "__import__", no_mpl)
    with pytest.raises(ImportError, match=r"pip install matplotlib .*pip install -e '\.\[plots\]'"):
        plots.plot_attention(np.zeros((1, 1)), ["a"], ["b"], str(tmp_path / "a.png"))
