"""DecoderLayer and Decoder: finite differences (with and without cross-attention, post- and pre-norm,
causal + padding masks, Tq != Tk, dropout active with replayed masks, stacks with final norm, memory
gradient summed over layers), wiring, names, dtypes, bad input."""
import numpy as np
import pytest

from npformer.checks.gradcheck import gradcheck
from npformer.models.decoder import Decoder, DecoderLayer
from tests.npformer.layer_helpers import TOL, causal_keep, jitter, padding_keep, tiny_config


def decoder_masks(T, S, tgt_lengths, src_lengths):
    self_mask = causal_keep(T) & padding_keep(tgt_lengths, T)           # (B, 1, T, T)
    return self_mask, padding_keep(src_lengths, S)                      # (B, 1, 1, S)


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_cross_attention_gradcheck(norm_first):
    c = tiny_config(norm_first=norm_first, activation="gelu")
    layer = jitter(DecoderLayer(c, cross_attention=True, rng=np.random.default_rng(0)))
    rng = np.random.default_rng(1)
    x, memory = rng.standard_normal((2, 3, 8)), rng.standard_normal((2, 5, 8))   # T=3 != S=5
    self_mask, memory_mask = decoder_masks(3, 5, [3, 2], [5, 3])
    gradcheck(layer, x, memory, self_mask, memory_mask, tol=TOL).raise_if_failed()


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_without_cross_attention_gradcheck(norm_first):
    c = tiny_config(norm_first=norm_first, activation="gelu_tanh")
    layer = jitter(DecoderLayer(c, cross_attention=False, rng=np.random.default_rng(2)))
    x = np.random.default_rng(3).standard_normal((2, 4, 8))
    self_mask = causal_keep(4) & padding_keep([4, 3], 4)
    gradcheck(layer, x, None, self_mask, tol=TOL).raise_if_failed()


@pytest.mark.parametrize("cross_attention", [True, False])
def test_decoder_layer_dropout_active_gradcheck(cross_attention):
    c = tiny_config(norm_first=cross_attention, dropout=0.2, attention_dropout=0.2,
                    activation_dropout=0.2, activation="gelu")
    layer = jitter(DecoderLayer(c, cross_attention, rng=np.random.default_rng(4)))
    layer.train()
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 3, 8))
    memory = rng.standard_normal((2, 4, 8)) if cross_attention else None
    self_mask, memory_mask = decoder_masks(3, 4, [3, 3], [4, 2])
    if not cross_attention:
        memory_mask = None
    gradcheck(layer, x, memory, self_mask, memory_mask, tol=TOL).raise_if_failed()
    drops = [layer.dropout1, layer.dropout2, layer.self_attn.attn_dropout, layer.feed_forward.dropout]
    if cross_attention:
        drops += [layer.dropout3, layer.cross_attn.attn_dropout]
    for d in drops:
        assert d.last_mask is not None and not d.last_mask.all()


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_stack_final_norm_memory_grad_sums_layers(norm_first):
    c = tiny_config(norm_first=norm_first, final_norm=True, num_decoder_layers=2, dropout=0.1)
    dec = jitter(Decoder(c, rng=np.random.default_rng(6)))
    dec.train()
    rng = np.random.default_rng(7)
    x, memory = rng.standard_normal((2, 3, 8)), rng.standard_normal((2, 4, 8))
    self_mask, memory_mask = decoder_masks(3, 4, [3, 2], [4, 1])
    # the memory's gradient is checked here against finite differences of the whole stack, so a
    # stack that kept only the last layer's dmemory fails
    gradcheck(dec, x, memory, self_mask, memory_mask, tol=TOL, max_per_tensor=40).raise_if_failed()


def test_decoder_memory_grad_is_sum_of_layer_grads():
    c = tiny_config(num_decoder_layers=2)
    dec = jitter(Decoder(c, rng=np.random.default_rng(8)))
    rng = np.random.default_rng(9)
    x, memory = rng.standard_normal((1, 2, 8)), rng.standard_normal((1, 3, 8))
    g = rng.standard_normal((1, 2, 8))
    dec(x, memory)
    dx, dmemory = dec.backward(g)
    # the same graph by hand, layer by layer: each layer reads the same memory
    dec.layers[1](dec.layers[0](x, memory), memory)
    d1, dm1 = dec.layers[1].backward(g)
    d0, dm0 = dec.layers[0].backward(d1)
    np.testing.assert_allclose(dmemory, dm0 + dm1, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(dx, d0, rtol=1e-13, atol=1e-15)
    assert np.abs(dm0).max() > 1e-3 and np.abs(dm1).max() > 1e-3      # both layers contribute


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_wiring(norm_first):
    c = tiny_config(norm_first=norm_first)
    layer = jitter(DecoderLayer(c, rng=np.random.default_rng(10))).eval()
    rng = np.random.default_rng(11)
    x, mem = rng.standard_normal((2, 3, 8)), rng.standard_normal((2, 4, 8))
    sm, mm = decoder_masks(3, 4, [3, 1], [4, 2])
    out = layer(x, mem, sm, mm)
    sa, ca, ff = layer.self_attn, layer.cross_attn, layer.feed_forward
    n1, n2, n3 = layer.norm1, layer.norm2, layer.norm3
    if norm_first:
        h = n1(x)
        x1 = x + sa(h, h, h, sm)
        x2 = x1 + ca(n2(x1), mem, mem, mm)
        expected = x2 + ff(n3(x2))
    else:
        x1 = n1(x + sa(x, x, x, sm))
        x2 = n2(x1 + ca(x1, mem, mem, mm))
        expected = n3(x2 + ff(x2))
    np.testing.assert_array_equal(out, expected)


def test_decoder_layer_names_follow_the_contract():
    c = tiny_config()
    with_cross = {n.split(".")[0] for n, _ in DecoderLayer(c, True).named_parameters()}
    assert with_cross == {"self_attn", "norm1", "cross_attn", "norm2", "feed_forward", "norm3"}
    without = {n.split(".")[0] for n, _ in DecoderLayer(c, False).named_parameters()}
    assert without == {"self_attn", "norm1", "feed_forward", "norm2"}
    mods = [n for n, _ in DecoderLayer(c, True).named_modules() if n.count(".") == 0 and n]
    assert mods == ["self_attn", "norm1", "dropout1", "cross_attn", "norm2", "dropout2",
                    "feed_forward", "norm3", "dropout3"]
    mods = [n for n, _ in DecoderLayer(c, False).named_modules() if n.count(".") == 0 and n]
    assert mods == ["self_attn", "norm1", "dropout1", "feed_forward", "norm2", "dropout2"]
    names = [n for n, _ in Decoder(c.replace(num_decoder_layers=2, final_norm=True)).named_parameters()]
    assert names[0] == "layers.0.self_attn.q_proj.weight" and names[-1] == "norm.bias"
    assert "layers.1.norm3.weight" in names


def test_decoder_float32_stays_float32():
    c = tiny_config(dtype="float32", dropout=0.1, num_decoder_layers=2, final_norm=True)
    dec = Decoder(c, rng=np.random.default_rng(0))
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 8)).astype(np.float32)
    mem = rng.standard_normal((2, 4, 8)).astype(np.float32)
    out = dec(x, mem, causal_keep(3), padding_keep([4, 2], 4))
    assert out.dtype == np.float32
    dx, dmem = dec.backward(rng.standard_normal(out.shape).astype(np.float32))
    assert dx.dtype == dmem.dtype == np.float32
    assert all(p.grad.dtype == np.float32 for p in dec.parameters())


def test_decoder_bad_input_names_the_argument():
    c = tiny_config()
    rng = np.random.default_rng(0)
    x, mem = rng.standard_normal((2, 3, 8)), rng.standard_normal((2, 4, 8))
    for mod in (DecoderLayer(c), Decoder(c)):
        with pytest.raises(RuntimeError, match="backward called before forward"):
            mod.backward(x)
        with pytest.raises(ValueError, match="memory"):
            mod(x, None)
        with pytest.raises(ValueError, match="memory"):
            mod(x, mem[:1])                                  # batch 1 vs 2
        with pytest.raises(ValueError, match="memory"):
            mod(x, mem[..., :4])
        with pytest.raises(TypeError, match="memory.*float64"):
            mod(x, mem.astype(np.float32))
        with pytest.raises(ValueError, match="self_mask"):
            mod(x, mem, np.ones((1, 1, 4, 4), bool))
        with pytest.raises(ValueError, match="memory_mask"):
            mod(x, mem, None, np.ones((2, 1, 1, 3), bool))
        with pytest.raises(ValueError, match="x:"):
            mod(x[0], mem)
        mod(x, mem)
        with pytest.raises(ValueError, match="dout"):
            mod.backward(x[:, :2])
    for mod in (DecoderLayer(c, cross_attention=False), Decoder(c, cross_attention=False)):
        with pytest.raises(ValueError, match="memory"):
            mod(x, mem)
    with pytest.raises(TypeError, match="cross_attention"):
        DecoderLayer(c, cross_attention="yes")
    layer = DecoderLayer(c)
    layer(x, mem, cache={})
    with pytest.raises(RuntimeError, match="incremental cache"):
        layer.backward(x)
