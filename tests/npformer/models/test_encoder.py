"""EncoderLayer and Encoder: finite differences (post- and pre-norm, padding masks, dropout active with
replayed masks, stacks with a final norm), the wiring of each norm placement, dtypes, bad input."""
import numpy as np
import pytest

from npformer.checks.gradcheck import gradcheck
from npformer.models.encoder import Encoder, EncoderLayer
from tests.npformer.layer_helpers import TOL, jitter, padding_keep, tiny_config


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_layer_gradcheck_with_padding(norm_first):
    c = tiny_config(norm_first=norm_first, activation="gelu")
    layer = jitter(EncoderLayer(c, rng=np.random.default_rng(0)))
    x = np.random.default_rng(1).standard_normal((2, 4, 8))
    gradcheck(layer, x, mask=padding_keep([4, 2], 4), tol=TOL).raise_if_failed()


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_layer_gradcheck_dropout_active(norm_first):
    c = tiny_config(norm_first=norm_first, dropout=0.2, attention_dropout=0.2,
                    activation_dropout=0.2, activation="gelu_tanh")
    layer = jitter(EncoderLayer(c, rng=np.random.default_rng(2)))
    layer.train()
    x = np.random.default_rng(3).standard_normal((2, 4, 8))
    gradcheck(layer, x, mask=padding_keep([3, 4], 4), tol=TOL).raise_if_failed()
    for d in (layer.dropout1, layer.dropout2, layer.self_attn.attn_dropout,
              layer.feed_forward.dropout):
        assert d.last_mask is not None and not d.last_mask.all()    # dropout really was active


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_stack_with_final_norm_gradcheck(norm_first):
    c = tiny_config(norm_first=norm_first, final_norm=True, num_encoder_layers=2, dropout=0.1)
    enc = jitter(Encoder(c, rng=np.random.default_rng(4)))
    enc.train()
    x = np.random.default_rng(5).standard_normal((2, 3, 8))
    gradcheck(enc, x, mask=padding_keep([3, 1], 3), tol=TOL, max_per_tensor=40).raise_if_failed()


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_layer_wiring(norm_first):
    """The layer equals the formula of its norm placement, written with its children (eval mode)."""
    c = tiny_config(norm_first=norm_first)
    layer = jitter(EncoderLayer(c, rng=np.random.default_rng(6))).eval()
    x = np.random.default_rng(7).standard_normal((2, 3, 8))
    m = padding_keep([3, 2], 3)
    out = layer(x, m)
    attn, ff, n1, n2 = layer.self_attn, layer.feed_forward, layer.norm1, layer.norm2
    if norm_first:
        h = n1(x)
        x1 = x + attn(h, h, h, m)
        expected = x1 + ff(n2(x1))
    else:
        x1 = n1(x + attn(x, x, x, m))
        expected = n2(x1 + ff(x1))
    np.testing.assert_array_equal(out, expected)


def test_encoder_names_final_norm_and_float32():
    c = tiny_config(num_encoder_layers=2, final_norm=True, dtype="float32", dropout=0.1)
    enc = Encoder(c, rng=np.random.default_rng(0))
    names = [n for n, _ in enc.named_parameters()]
    assert names[:2] == ["layers.0.self_attn.q_proj.weight", "layers.0.self_attn.q_proj.bias"]
    assert "layers.1.norm2.bias" in names and names[-2:] == ["norm.weight", "norm.bias"]
    assert {n.split(".")[2] for n in names if n.startswith("layers.0.")} == {
        "self_attn", "norm1", "feed_forward", "norm2"}
    assert "norm.weight" not in [n for n, _ in Encoder(c.replace(final_norm=False)).named_parameters()]
    x = np.random.default_rng(1).standard_normal((2, 3, 8)).astype(np.float32)
    out = enc(x, padding_keep([3, 2], 3))
    assert out.dtype == np.float32
    dx = enc.backward(np.random.default_rng(2).standard_normal(out.shape).astype(np.float32))
    assert dx.dtype == np.float32
    assert all(p.grad.dtype == np.float32 for p in enc.parameters())


def test_fully_padded_row_gives_finite_outputs_and_grads():
    c = tiny_config(num_encoder_layers=2, final_norm=True)
    enc = Encoder(c, rng=np.random.default_rng(0))
    x = np.random.default_rng(1).standard_normal((2, 3, 8))
    out = enc(x, padding_keep([3, 0], 3))              # row 1: every key masked
    assert np.isfinite(out).all()
    dx = enc.backward(np.random.default_rng(2).standard_normal(out.shape))
    assert np.isfinite(dx).all() and all(np.isfinite(p.grad).all() for p in enc.parameters())


def test_zero_layer_encoder_is_identity_or_norm():
    c = tiny_config(num_encoder_layers=0)
    x = np.random.default_rng(1).standard_normal((1, 2, 8))
    enc = Encoder(c)
    np.testing.assert_array_equal(enc(x), x)
    g = np.random.default_rng(2).standard_normal(x.shape)
    with pytest.raises(ValueError, match="dout"):          # refused: the cache stays for a retry
        enc.backward(g[:, :1])
    np.testing.assert_array_equal(enc.backward(g), g)


def test_encoder_bad_input_names_the_argument():
    c = tiny_config()
    layer, enc = EncoderLayer(c), Encoder(c)
    x = np.random.default_rng(0).standard_normal((2, 3, 8))
    for mod in (layer, enc):
        with pytest.raises(RuntimeError, match="backward called before forward"):
            mod.backward(x)
        with pytest.raises(ValueError, match="x:"):
            mod(x[0])
        with pytest.raises(ValueError, match="x:"):
            mod(x[..., :6])
        with pytest.raises(TypeError, match="x:.*float64"):
            mod(x.astype(np.float32))
        with pytest.raises(ValueError, match="mask"):
            mod(x, np.ones((2, 1, 1, 4), bool))
        with pytest.raises(TypeError, match="mask"):
            mod(x, np.ones((2, 1, 1, 3), np.float64))
        mod(x)
        with pytest.raises(ValueError, match="dout"):
            mod.backward(x[:, :2])
    with pytest.raises(TypeError, match="config"):
        EncoderLayer({"d_model": 8})
    with pytest.raises(ValueError, match="d_model"):
        tiny_config(d_model=9)
