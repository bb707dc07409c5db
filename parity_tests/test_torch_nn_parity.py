"""npformer against stock torch.nn modules nobody here wrote, through torchformer.models.torch_nn's
converters: nn.MultiheadAttention (slow path, per-head weights), nn.TransformerEncoderLayer /
nn.TransformerDecoderLayer (post- and pre-norm, relu / gelu / gelu_tanh) and nn.Transformer's
stacks (with and without final norms). Outputs, per-head attention weights, input gradients and
every parameter gradient (torch.nn's gradients mapped back to our names by the converters).

torch.nn's masks are drop-masks: converted at this boundary only. nn.MultiheadAttention returns NaN
weights on fully masked rows, so the masks drawn here leave every query a key (fully masked rows
are checked against F.scaled_dot_product_attention in test_attention_parity.py).
"""
import re

import numpy as np
import torch
from hypothesis import given
from hypothesis import strategies as st

from parity_tests.harness import compare_all, note_case
from parity_tests.harness import strategies as S
from parity_tests.harness.strategies import random_upstream
from parity_tests.harness.twins import twins
from parity_tests.harness.weights import perturb_parameters
from torchformer.models import torch_nn as tnn

TNN_MASKS = ("none", "padding", "causal", "causal_padding", "random", "random_2d")


def _leaf(a):
    return torch.tensor(a, requires_grad=True)


def _prep(np_module, rng, bias: bool):
    """Perturbed parameters; with bias=False torch.nn has no LayerNorm biases, so ours stay 0."""
    perturb_parameters(np_module, rng)
    if not bias:
        for n, p in np_module.named_parameters():
            if n.endswith("bias"):
                p.data[...] = 0


def _nn_mask(keep, b, h, tq, tk):
    return None if keep is None else tnn.to_torch_nn_attn_mask(torch.as_tensor(keep), b, h, tq, tk)


def _param_items(ours: dict, theirs: dict):
    assert sorted(ours) == sorted(theirs), (sorted(ours), sorted(theirs))
    return [(f"{n}.grad", ours[n], theirs[n], "param_grad") for n in ours]


def _grads(module) -> dict:
    return {n: p.grad for n, p in module.named_parameters()}


@given(d=S.heads_and_width(), b=S.batch_sizes(), tq=S.lengths(), tk=S.lengths(),
       bias=st.booleans(), data=st.data(), dtype=S.dtypes(), seed=S.seeds())
def test_mha_vs_torch_nn_multihead_attention(d, b, tq, tk, bias, data, dtype, seed):
    d_model, h = d
    mask = data.draw(S.attention_masks(b, h, tq, tk, kinds=("none", "padding", "random",
                                                             "random_2d"),
                                       allow_fully_masked=False), label="mask")
    note_case(d_model=d_model, heads=h, b=b, tq=tq, tk=tk, bias=bias, mask=mask.kind, seed=seed)
    rng = np.random.default_rng(seed)
    ours, _ = twins("attention.MultiHeadAttention", d_model, h, bias=bias, dtype=dtype, seed=seed)
    _prep(ours, rng, True)
    ref = tnn.make_torch_nn_mha(d_model, h, bias=bias, dtype=dtype)
    ref.load_state_dict({k: torch.as_tensor(v) for k, v in
                         tnn.mha_to_torch_nn(ours.state_dict()).items()})
    ref.train()                                     # the slow (reference) path, dropout is 0
    q, k, v = (S.normal(rng, (b, t, d_model), dtype) for t in (tq, tk, tk))
    out = ours(q, k, v, mask.keep)
    g = random_upstream(out.shape, dtype, rng)
    ours.zero_grad()
    dq, dk, dv = ours.backward(g)
    tq_, tk_, tv_ = _leaf(q), _leaf(k), _leaf(v)
    rout, rw = ref(tq_, tk_, tv_, attn_mask=_nn_mask(mask.keep, b, h, tq, tk), need_weights=True,
                   average_attn_weights=False)
    rout.backward(torch.as_tensor(g))
    rg = tnn.mha_from_torch_nn({k: v.grad for k, v in ref.named_parameters()})
    compare_all([("output", out, rout, "output"),
                 ("attn_weights", ours.attn_weights, rw, "attention_weights"),
                 *_param_items({n: p.grad for n, p in ours.named_parameters()}, rg),
                 ("query.grad", dq, tq_.grad, "input_grad"), ("key.grad", dk, tk_.grad,
                                                              "input_grad"),
                 ("value.grad", dv, tv_.grad, "input_grad")], dtype=dtype)


@given(data=st.data(), cross=st.booleans(), seed=S.seeds())
def test_layers_vs_torch_nn_transformer_layers(data, cross, seed):
    cfg = data.draw(S.configs("layer"), label="config")
    b, t, s = (data.draw(S.batch_sizes()), data.draw(S.lengths()), data.draw(S.lengths()))
    h = cfg.num_heads
    self_mask = data.draw(S.attention_masks(b, h, t, t, kinds=TNN_MASKS, allow_fully_masked=False))
    mem_mask = data.draw(S.attention_masks(b, h, t, s, kinds=("none", "padding", "random"),
                                           allow_fully_masked=False))
    note_case(config=cfg, b=b, t=t, s=s, cross=cross, self_mask=self_mask.kind,
              memory_mask=mem_mask.kind, seed=seed)
    rng = np.random.default_rng(seed)
    dtype = cfg.dtype
    cls = "decoder.DecoderLayer" if cross else "encoder.EncoderLayer"
    ours, _ = twins(cls, cfg, seed=seed)
    _prep(ours, rng, cfg.bias)
    if cross:
        ref = tnn.make_torch_nn_decoder_layer(cfg)
        state = tnn.decoder_layer_to_torch_nn(ours.state_dict())
    else:
        ref = tnn.make_torch_nn_encoder_layer(cfg)
        state = tnn.encoder_layer_to_torch_nn(ours.state_dict())
    ref.load_state_dict({k: torch.as_tensor(v) for k, v in state.items()})
    ref.train()                                     # dropout 0: the slow path, as a reference
    x = S.normal(rng, (b, t, cfg.d_model), dtype)
    mem = S.normal(rng, (b, s, cfg.d_model), dtype)
    tx, tm = _leaf(x), _leaf(mem)
    if cross:
        out = ours(x, mem, self_mask.keep, mem_mask.keep)
        rout = ref(tx, tm, tgt_mask=_nn_mask(self_mask.keep, b, h, t, t),
                   memory_mask=_nn_mask(mem_mask.keep, b, h, t, s))
    else:
        out = ours(x, self_mask.keep)
        rout = ref(tx, src_mask=_nn_mask(self_mask.keep, b, h, t, t))
    g = random_upstream(out.shape, dtype, rng)
    ours.zero_grad()
    grads = ours.backward(g)
    rout.backward(torch.as_tensor(g))
    from_nn = tnn.decoder_layer_from_torch_nn if cross else tnn.encoder_layer_from_torch_nn
    rg = from_nn(_grads(ref))
    ours_g = {n: p.grad for n, p in ours.named_parameters()}
    if not cfg.bias:
        # torch.nn with bias=False has no LayerNorm biases (the converter fills zeros back); ours
        # exist (held at 0) and get gradients: those have no torch.nn counterpart to compare with
        ours_g = {n: v for n, v in ours_g.items() if not re.search(r"norm\d?\.bias$", n)}
        rg = {n: v for n, v in rg.items() if n in ours_g}
    items = [("output", out, rout, "output"), *_param_items(ours_g, rg)]
    if cross:
        items += [("x.grad", grads[0], tx.grad, "input_grad"),
                  ("memory.grad", grads[1], tm.grad, "input_grad")]
    else:
        items += [("x.grad", grads, tx.grad, "input_grad")]
    compare_all(items, dtype=dtype)


@given(data=st.data(), seed=S.seeds())
def test_stacks_vs_torch_nn_transformer(data, seed):
    """Our Encoder + Decoder (with cross-attention) against nn.Transformer (final norms when
    config.final_norm; custom stacks without them otherwise)."""
    cfg = data.draw(S.configs("transformer", bias=True), label="config")
    b, t, s = (data.draw(S.batch_sizes()), data.draw(S.lengths()), data.draw(S.lengths()))
    h = cfg.num_heads
    src_mask = data.draw(S.attention_masks(b, h, s, s, kinds=("none", "padding"),
                                           allow_fully_masked=False))
    tgt_mask = data.draw(S.attention_masks(b, h, t, t, kinds=("causal", "causal_padding"),
                                           allow_fully_masked=False))
    note_case(config=cfg, b=b, t=t, s=s, src_mask=src_mask.kind, tgt_mask=tgt_mask.kind, seed=seed)
    rng = np.random.default_rng(seed)
    dtype = cfg.dtype
    enc, _ = twins("encoder.Encoder", cfg, seed=seed)
    dec, _ = twins("decoder.Decoder", cfg, cross_attention=True, seed=seed)
    _prep(enc, rng, True)
    _prep(dec, rng, True)
    state = {**{f"encoder.{k}": v for k, v in enc.state_dict().items()},
             **{f"decoder.{k}": v for k, v in dec.state_dict().items()}}
    ref = tnn.make_torch_nn_transformer(cfg)
    ref.load_state_dict({k: torch.as_tensor(v) for k, v in
                         tnn.transformer_to_torch_nn(state, cfg).items()})
    ref.train()
    src = S.normal(rng, (b, s, cfg.d_model), dtype)
    tgt = S.normal(rng, (b, t, cfg.d_model), dtype)
    # the source keep-mask is (B,1,1,S) or None: it masks encoder keys and the memory
    mem_keep = None if src_mask.keep is None else src_mask.keep[:, :, :1, :]
    memory = enc(src, src_mask.keep)
    out = dec(tgt, memory, tgt_mask.keep, mem_keep)
    g = random_upstream(out.shape, dtype, rng)
    enc.zero_grad()
    dec.zero_grad()
    dtgt, dmem = dec.backward(g)
    dsrc = enc.backward(dmem)
    ts, tt = _leaf(src), _leaf(tgt)
    rout = ref(ts, tt, src_mask=_nn_mask(src_mask.keep, b, h, s, s),
               tgt_mask=_nn_mask(tgt_mask.keep, b, h, t, t),
               memory_mask=_nn_mask(mem_keep, b, h, t, s))
    rout.backward(torch.as_tensor(g))
    rg = tnn.transformer_from_torch_nn(_grads(ref), cfg)
    ours_g = {**{f"encoder.{n}": p.grad for n, p in enc.named_parameters()},
              **{f"decoder.{n}": p.grad for n, p in dec.named_parameters()}}
    compare_all([("output", out, rout, "output"), *_param_items(ours_g, rg),
                 ("tgt.grad", dtgt, tt.grad, "input_grad"),
                 ("src.grad", dsrc, ts.grad, "input_grad")], dtype=dtype)
