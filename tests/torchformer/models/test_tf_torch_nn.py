"""torchformer layers vs torch.nn.TransformerEncoderLayer / TransformerDecoderLayer / Transformer,
mapped through torchformer.models.torch_nn, forward and backward (inputs and every parameter), float64; and
the converters' round trips. Every torch.nn module runs with grad enabled in training mode with
dropout 0, i.e. on its slow (reference) path."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from torch import nn

from tests.torchformer.helpers import assert_close, assert_grads_close, perturb, randn, small_config
from torchformer.layers.masks import causal_mask
from torchformer.models.decoder import DecoderLayer
from torchformer.models.encoder import EncoderLayer
from torchformer.models.torch_nn import (
    decoder_layer_from_torch_nn,
    decoder_layer_to_torch_nn,
    encoder_layer_from_torch_nn,
    encoder_layer_to_torch_nn,
    make_torch_nn_decoder_layer,
    make_torch_nn_encoder_layer,
    make_torch_nn_mha,
    make_torch_nn_transformer,
    mha_from_torch_nn,
    mha_to_torch_nn,
    to_torch_nn_attn_mask,
    torch_nn_activation,
    transformer_from_torch_nn,
    transformer_to_torch_nn,
)
from torchformer.models.transformer import Transformer

LAYOUTS = [(nf, act) for nf in (False, True) for act in ("relu", "gelu", "gelu_tanh")]


def padding_keep(gen, B, T):
    """(B, 1, 1, T) keep-mask with some padding but never an empty row (position 0 kept)."""
    keep = torch.rand(B, 1, 1, T, generator=gen) < 0.7
    keep[..., 0] = True
    return keep


def run_backward(module_call, inputs, g):
    leaves = [x.clone().requires_grad_(True) for x in inputs]
    out = module_call(*leaves)
    out.backward(g)
    return out.detach(), [x.grad for x in leaves]


def param_grads(module) -> dict:
    return {n: p.grad for n, p in module.named_parameters()}


def compare_grads(ours: dict, theirs_mapped: dict) -> None:
    assert_grads_close(ours, theirs_mapped)


@pytest.mark.parametrize("norm_first,activation", LAYOUTS)
def test_encoder_layer_matches_torch_nn(norm_first, activation):
    c = small_config(norm_first=norm_first, activation=activation)
    gen = torch.Generator().manual_seed(11)
    ours = EncoderLayer(c)
    perturb(ours, gen)
    ref = make_torch_nn_encoder_layer(c)
    ref.load_state_dict(encoder_layer_to_torch_nn(ours.state_dict()))
    B, T = 3, 6
    keep = padding_keep(gen, B, T) & causal_mask(T, T)
    x, g = randn(gen, B, T, c.d_model), randn(gen, B, T, c.d_model)
    out, (dx,) = run_backward(lambda a: ours(a, keep), [x], g)
    nn_mask = to_torch_nn_attn_mask(keep, B, c.num_heads, T, T)
    rout, (rdx,) = run_backward(lambda a: ref(a, src_mask=nn_mask), [x], g)
    assert_close("output", out, rout)
    assert_close("dx", dx, rdx, kind="grad")
    compare_grads(param_grads(ours), encoder_layer_from_torch_nn(param_grads(ref)))


@pytest.mark.parametrize("norm_first,activation", LAYOUTS)
def test_decoder_layer_matches_torch_nn(norm_first, activation):
    c = small_config(norm_first=norm_first, activation=activation)
    gen = torch.Generator().manual_seed(12)
    ours = DecoderLayer(c)
    perturb(ours, gen)
    ref = make_torch_nn_decoder_layer(c)
    ref.load_state_dict(decoder_layer_to_torch_nn(ours.state_dict()))
    B, T, S = 2, 5, 7
    self_keep = padding_keep(gen, B, T) & causal_mask(T, T)
    mem_keep = padding_keep(gen, B, S)
    x, m, g = randn(gen, B, T, c.d_model), randn(gen, B, S, c.d_model), randn(gen, B, T, c.d_model)
    out, (dx, dm) = run_backward(lambda a, b: ours(a, b, self_keep, mem_keep), [x, m], g)
    H = c.num_heads
    rout, (rdx, rdm) = run_backward(
        lambda a, b: ref(a, b, tgt_mask=to_torch_nn_attn_mask(self_keep, B, H, T, T),
                         memory_mask=to_torch_nn_attn_mask(mem_keep, B, H, T, S)), [x, m], g)
    assert_close("output", out, rout)
    assert_close("dx", dx, rdx, kind="grad")
    assert_close("dmemory", dm, rdm, kind="grad")
    compare_grads(param_grads(ours), decoder_layer_from_torch_nn(param_grads(ref)))


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_only_layer_matches_torch_nn_encoder_layer_with_causal_mask(norm_first):
    c = small_config(norm_first=norm_first, activation="gelu")
    gen = torch.Generator().manual_seed(13)
    ours = DecoderLayer(c, cross_attention=False)
    perturb(ours, gen)
    ref = make_torch_nn_encoder_layer(c)
    ref.load_state_dict(decoder_layer_to_torch_nn(ours.state_dict()))
    B, T = 2, 6
    keep = causal_mask(T, T)
    x, g = randn(gen, B, T, c.d_model), randn(gen, B, T, c.d_model)
    out, (dx,) = run_backward(lambda a: ours(a, None, keep), [x], g)
    rout, (rdx,) = run_backward(
        lambda a: ref(a, src_mask=to_torch_nn_attn_mask(keep, B, c.num_heads, T, T)), [x], g)
    assert_close("output", out, rout)
    assert_close("dx", dx, rdx, kind="grad")
    compare_grads(param_grads(ours), decoder_layer_from_torch_nn(param_grads(ref)))


def _stock_transformer(c) -> nn.Transformer:
    """A stock nn.Transformer (always with final norms), built without our builder."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # norm_first + nested tensor notice
        t = nn.Transformer(c.d_model, c.num_heads, c.num_encoder_layers, c.num_decoder_layers,
                           c.d_ff, dropout=0.0, activation=torch_nn_activation(c.activation),
                           layer_norm_eps=c.layer_norm_eps, batch_first=True,
                           norm_first=c.norm_first, bias=c.bias, dtype=torch.float64)
    t.encoder.enable_nested_tensor = False
    t.encoder.use_nested_tensor = False
    return t


@pytest.mark.parametrize("norm_first,final_norm,stock", [(False, True, True), (True, True, True),
                                                         (False, False, False),
                                                         (True, False, False)])
def test_transformer_stacks_match_torch_nn_transformer(norm_first, final_norm, stock):
    c = small_config(norm_first=norm_first, final_norm=final_norm, activation="relu")
    gen = torch.Generator().manual_seed(14)
    ours = Transformer(c)
    perturb(ours, gen)
    ref = _stock_transformer(c) if stock else make_torch_nn_transformer(c)
    mapped = transformer_to_torch_nn(ours.state_dict(), c)
    assert set(mapped) == set(ref.state_dict())
    ref.load_state_dict(mapped)
    B, S, T, H = 2, 7, 5, c.num_heads
    src_keep = padding_keep(gen, B, S)
    tgt_keep = padding_keep(gen, B, T) & causal_mask(T, T)
    x, y, g = randn(gen, B, S, c.d_model), randn(gen, B, T, c.d_model), randn(gen, B, T, c.d_model)

    def ours_call(a, b):
        memory = ours.encoder(a, src_keep)
        return ours.decoder(b, memory, tgt_keep, src_keep)

    def ref_call(a, b):
        return ref(a, b, src_mask=to_torch_nn_attn_mask(src_keep, B, H, S, S),
                   tgt_mask=to_torch_nn_attn_mask(tgt_keep, B, H, T, T),
                   memory_mask=to_torch_nn_attn_mask(src_keep, B, H, T, S))

    out, (dx, dy) = run_backward(ours_call, [x, y], g)
    rout, (rdx, rdy) = run_backward(ref_call, [x, y], g)
    assert_close("output", out, rout)
    assert_close("d encoder input", dx, rdx, kind="grad")
    assert_close("d decoder input", dy, rdy, kind="grad")
    ours_grads = {n: p.grad for n, p in ours.named_parameters()
                  if n.startswith(("encoder.", "decoder."))}
    compare_grads(ours_grads, transformer_from_torch_nn(param_grads(ref), c))


# ------------------------------------------------------------------------------------------------
# converters: exact round trips, bias-free layouts, errors
# ------------------------------------------------------------------------------------------------
def _equal_states(a: dict, b: dict) -> None:
    assert set(a) == set(b), sorted(set(a) ^ set(b))
    for k in a:
        va = a[k].numpy() if isinstance(a[k], torch.Tensor) else a[k]
        vb = b[k].numpy() if isinstance(b[k], torch.Tensor) else b[k]
        assert np.array_equal(va, vb), k


@pytest.mark.parametrize("bias", [True, False])
def test_round_trips_are_exact(bias):
    gen = torch.Generator().manual_seed(15)
    c = small_config(bias=bias, final_norm=True)
    model = Transformer(c)
    perturb(model, gen)
    if not bias:                                   # torch.nn's bias=False norms have no bias
        with torch.no_grad():
            for n, p in model.named_parameters():
                if "norm" in n and n.endswith(".bias"):
                    p.zero_()
    state = model.state_dict()
    stack = {k: v for k, v in state.items() if k.startswith(("encoder.", "decoder."))}
    _equal_states(transformer_from_torch_nn(transformer_to_torch_nn(state, c), c), stack)
    ref = make_torch_nn_transformer(c)
    ref_state = ref.state_dict()
    _equal_states(transformer_to_torch_nn(transformer_from_torch_nn(ref_state, c), c), ref_state)
    layer = {k[len("decoder.layers.0."):]: v for k, v in state.items()
             if k.startswith("decoder.layers.0.")}
    _equal_states(decoder_layer_from_torch_nn(decoder_layer_to_torch_nn(layer)), layer)
    mha = {k[len("self_attn."):]: v for k, v in layer.items() if k.startswith("self_attn.")}
    as_numpy = {k: v.numpy() for k, v in mha.items()}
    back = mha_from_torch_nn(mha_to_torch_nn(as_numpy))
    assert all(isinstance(v, np.ndarray) for v in back.values())
    _equal_states(back, as_numpy)
    nn_mha = make_torch_nn_mha(c.d_model, c.num_heads, bias=bias, dtype="float64")
    _equal_states(mha_to_torch_nn(mha_from_torch_nn(nn_mha.state_dict())), nn_mha.state_dict())


def test_converted_state_owns_its_storage():
    layer = EncoderLayer(small_config())
    state = layer.state_dict()
    out = encoder_layer_to_torch_nn(state)
    out["norm1.weight"].add_(1.0)
    assert torch.equal(layer.norm1.weight, torch.ones_like(layer.norm1.weight))


def test_bias_free_conversion_needs_zero_norm_bias_and_fills_zeros_back():
    c = small_config(bias=False)
    layer = EncoderLayer(c)
    ref = make_torch_nn_encoder_layer(c)
    ref.load_state_dict(encoder_layer_to_torch_nn(layer.state_dict()))
    back = encoder_layer_from_torch_nn(ref.state_dict())
    assert torch.equal(back["norm1.bias"], torch.zeros(c.d_model, dtype=torch.float64))
    with torch.no_grad():
        layer.norm2.bias.fill_(0.5)
    with pytest.raises(ValueError, match="norm2.bias: torch.nn with bias=False"):
        encoder_layer_to_torch_nn(layer.state_dict())


def test_converter_errors_name_missing_keys():
    with pytest.raises(KeyError, match="mha_to_torch_nn: missing keys"):
        mha_to_torch_nn({"q_proj.weight": torch.zeros(2, 2)})
    with pytest.raises(ValueError, match="divisible by 3"):
        mha_from_torch_nn({"in_proj_weight": torch.zeros(4, 2), "out_proj.weight": torch.zeros(2, 2)})
    c = small_config(final_norm=True)
    state = {k: v for k, v in Transformer(c).state_dict().items() if "encoder.norm" not in k}
    with pytest.raises(KeyError, match="encoder.norm"):
        transformer_to_torch_nn(state, c)
    with pytest.raises(ValueError, match="activation"):
        torch_nn_activation("swish")
