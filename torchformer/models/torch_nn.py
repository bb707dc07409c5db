"""Converters between this project's state dicts and stock `torch.nn` modules, and builders of the
matching `torch.nn` module for a TransformerConfig.

Name mapping (ours -> torch.nn):

    MultiHeadAttention        q_proj, k_proj, v_proj        -> in_proj_weight = cat([Wq, Wk, Wv], 0),
                                                               in_proj_bias  = cat([bq, bk, bv], 0)
                              out_proj                      -> out_proj
    EncoderLayer              self_attn, norm1, norm2        -> self_attn, norm1, norm2
                              feed_forward.linear1/linear2  -> linear1 / linear2
    DecoderLayer              self_attn, cross_attn          -> self_attn, multihead_attn
                              norm1, norm2, norm3, feed_forward.linear1/2 -> norm1..3, linear1/2
    (a decoder layer without cross-attention has an encoder layer's layout and maps to
     nn.TransformerEncoderLayer, run with a causal mask)
    Transformer               encoder.layers.i, decoder.layers.i, encoder.norm, decoder.norm -> same

Values may be torch tensors or numpy arrays; the converters return fresh copies of the same kind, so a
round trip gives back equal values and shares no storage. `bias=False` in torch.nn removes the biases
of the linears AND of the LayerNorms; our LayerNorms always have a bias, so converting a bias-free
model to torch.nn requires those norm biases to be zero (checked), and converting back fills zeros.

Facts about torch.nn these builders and the tests respect (torch 2.13):
- nn.MultiheadAttention masks are the opposite of ours (True = NOT allowed): `to_torch_nn_attn_mask`
  inverts ours at this boundary only. It averages returned weights over heads unless
  `average_attn_weights=False`, and in eval mode without grad it takes a fast path (other kernels, NaN
  on fully masked rows): compare in training mode (p=0) or with grad enabled.
- nn.Transformer always has final encoder/decoder norms; `make_torch_nn_transformer` passes custom
  stacks without them when config.final_norm is False (then the state has no encoder.norm/decoder.norm).
- nn.TransformerEncoder needs `enable_nested_tensor=False` for padded parity (set here).
- with activation=nn.GELU(approximate="tanh") the layer fast path silently uses exact GELU; the
  builders pass `functools.partial(F.gelu, approximate="tanh")` for "gelu_tanh", which disables the
  fast path instead of computing the wrong function.
"""
from __future__ import annotations

import functools

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from torchformer.layers.module import to_torch_dtype


# ------------------------------------------------------------------------------------------------
# array helpers (tensor or numpy)
# ------------------------------------------------------------------------------------------------
def _copy(v):
    return v.detach().clone() if isinstance(v, torch.Tensor) else np.array(v, copy=True)


def _cat(parts):
    if isinstance(parts[0], torch.Tensor):
        return torch.cat([p.detach() for p in parts], dim=0).clone()
    return np.concatenate([np.asarray(p) for p in parts], axis=0)


def _split3(v):
    n = v.shape[0]
    if n % 3:
        raise ValueError(f"in_proj: expected a first dimension divisible by 3, got shape "
                         f"{tuple(v.shape)}")
    d = n // 3
    return [_copy(v[i * d:(i + 1) * d]) for i in range(3)]


def _zeros_like(v):
    return torch.zeros_like(v) if isinstance(v, torch.Tensor) else np.zeros_like(v)


def _is_zero(v) -> bool:
    return bool((v == 0).all()) if isinstance(v, torch.Tensor) else bool(np.all(np.asarray(v) == 0))


def _sub(state: dict, prefix: str) -> dict:
    """The entries of `state` under `prefix` ("a.b."), with the prefix removed."""
    return {k[len(prefix):]: v for k, v in state.items() if k.startswith(prefix)}


def _need(state: dict, keys, what: str) -> None:
    missing = [k for k in keys if k not in state]
    if missing:
        raise KeyError(f"{what}: missing keys {missing}; got {sorted(state)}")


# ------------------------------------------------------------------------------------------------
# MultiheadAttention
# ------------------------------------------------------------------------------------------------
def mha_to_torch_nn(state: dict) -> dict:
    """Our MultiHeadAttention state (q_proj/k_proj/v_proj/out_proj .weight[/.bias]) ->
    nn.MultiheadAttention state (in_proj_weight, [in_proj_bias], out_proj.weight, [out_proj.bias])."""
    _need(state, [f"{p}.weight" for p in ("q_proj", "k_proj", "v_proj", "out_proj")],
          "mha_to_torch_nn")
    out = {"in_proj_weight": _cat([state[f"{p}_proj.weight"] for p in "qkv"])}
    if "q_proj.bias" in state:
        _need(state, ["k_proj.bias", "v_proj.bias", "out_proj.bias"], "mha_to_torch_nn")
        out["in_proj_bias"] = _cat([state[f"{p}_proj.bias"] for p in "qkv"])
    out["out_proj.weight"] = _copy(state["out_proj.weight"])
    if "out_proj.bias" in state:
        out["out_proj.bias"] = _copy(state["out_proj.bias"])
    return out


def mha_from_torch_nn(state: dict) -> dict:
    """nn.MultiheadAttention state -> our MultiHeadAttention state (the inverse of mha_to_torch_nn)."""
    _need(state, ["in_proj_weight", "out_proj.weight"], "mha_from_torch_nn")
    out = {}
    wq, wk, wv = _split3(state["in_proj_weight"])
    bq = bk = bv = None
    if state.get("in_proj_bias") is not None:
        bq, bk, bv = _split3(state["in_proj_bias"])
    for p, w, b in (("q", wq, bq), ("k", wk, bk), ("v", wv, bv)):
        out[f"{p}_proj.weight"] = w
        if b is not None:
            out[f"{p}_proj.bias"] = b
    out["out_proj.weight"] = _copy(state["out_proj.weight"])
    if state.get("out_proj.bias") is not None:
        out["out_proj.bias"] = _copy(state["out_proj.bias"])
    return out


# ------------------------------------------------------------------------------------------------
# layers
# ------------------------------------------------------------------------------------------------
def _norm_to(state: dict, ours: str, theirs: str, bias: bool, out: dict) -> None:
    out[f"{theirs}.weight"] = _copy(state[f"{ours}.weight"])
    b = state.get(f"{ours}.bias")
    if bias:
        out[f"{theirs}.bias"] = _copy(b)
    elif b is not None and not _is_zero(b):
        raise ValueError(f"{ours}.bias: torch.nn with bias=False has LayerNorms without bias; "
                         f"expected zeros to convert, got nonzero values")


def _norm_from(state: dict, theirs: str, ours: str, out: dict) -> None:
    w = state[f"{theirs}.weight"]
    out[f"{ours}.weight"] = _copy(w)
    b = state.get(f"{theirs}.bias")
    out[f"{ours}.bias"] = _copy(b) if b is not None else _zeros_like(w)


def _linear_map(state: dict, src: str, dst: str, out: dict) -> None:
    out[f"{dst}.weight"] = _copy(state[f"{src}.weight"])
    if state.get(f"{src}.bias") is not None:
        out[f"{dst}.bias"] = _copy(state[f"{src}.bias"])


def _has_bias(state: dict) -> bool:
    return "self_attn.q_proj.bias" in state


def encoder_layer_to_torch_nn(state: dict) -> dict:
    """Our EncoderLayer state (or a DecoderLayer without cross-attention) ->
    nn.TransformerEncoderLayer state."""
    _need(state, ["self_attn.q_proj.weight", "norm1.weight", "norm2.weight",
                  "feed_forward.linear1.weight", "feed_forward.linear2.weight"],
          "encoder_layer_to_torch_nn")
    bias = _has_bias(state)
    out = {f"self_attn.{k}": v for k, v in mha_to_torch_nn(_sub(state, "self_attn.")).items()}
    _linear_map(state, "feed_forward.linear1", "linear1", out)
    _linear_map(state, "feed_forward.linear2", "linear2", out)
    _norm_to(state, "norm1", "norm1", bias, out)
    _norm_to(state, "norm2", "norm2", bias, out)
    return out


def encoder_layer_from_torch_nn(state: dict) -> dict:
    """nn.TransformerEncoderLayer state -> our EncoderLayer state (missing norm biases: zeros)."""
    _need(state, ["self_attn.in_proj_weight", "linear1.weight", "linear2.weight", "norm1.weight",
                  "norm2.weight"], "encoder_layer_from_torch_nn")
    out = {f"self_attn.{k}": v for k, v in mha_from_torch_nn(_sub(state, "self_attn.")).items()}
    _norm_from(state, "norm1", "norm1", out)
    _linear_map(state, "linear1", "feed_forward.linear1", out)
    _linear_map(state, "linear2", "feed_forward.linear2", out)
    _norm_from(state, "norm2", "norm2", out)
    return out


def decoder_layer_to_torch_nn(state: dict) -> dict:
    """Our DecoderLayer state -> nn.TransformerDecoderLayer state (cross_attn -> multihead_attn).
    A layer without cross-attention maps like an encoder layer (nn.TransformerEncoderLayer)."""
    if "cross_attn.q_proj.weight" not in state:
        return encoder_layer_to_torch_nn(state)
    _need(state, ["self_attn.q_proj.weight", "norm1.weight", "norm2.weight", "norm3.weight",
                  "feed_forward.linear1.weight", "feed_forward.linear2.weight"],
          "decoder_layer_to_torch_nn")
    bias = _has_bias(state)
    out = {f"self_attn.{k}": v for k, v in mha_to_torch_nn(_sub(state, "self_attn.")).items()}
    out.update({f"multihead_attn.{k}": v
                for k, v in mha_to_torch_nn(_sub(state, "cross_attn.")).items()})
    _linear_map(state, "feed_forward.linear1", "linear1", out)
    _linear_map(state, "feed_forward.linear2", "linear2", out)
    for n in ("norm1", "norm2", "norm3"):
        _norm_to(state, n, n, bias, out)
    return out


def decoder_layer_from_torch_nn(state: dict) -> dict:
    """nn.TransformerDecoderLayer state -> our DecoderLayer state (nn.TransformerEncoderLayer state,
    i.e. without multihead_attn, -> a DecoderLayer without cross-attention)."""
    if "multihead_attn.in_proj_weight" not in state:
        return encoder_layer_from_torch_nn(state)
    _need(state, ["self_attn.in_proj_weight", "linear1.weight", "linear2.weight", "norm1.weight",
                  "norm2.weight", "norm3.weight"], "decoder_layer_from_torch_nn")
    out = {f"self_attn.{k}": v for k, v in mha_from_torch_nn(_sub(state, "self_attn.")).items()}
    _norm_from(state, "norm1", "norm1", out)
    out.update({f"cross_attn.{k}": v
                for k, v in mha_from_torch_nn(_sub(state, "multihead_attn.")).items()})
    _norm_from(state, "norm2", "norm2", out)
    _linear_map(state, "linear1", "feed_forward.linear1", out)
    _linear_map(state, "linear2", "feed_forward.linear2", out)
    _norm_from(state, "norm3", "norm3", out)
    return out


# ------------------------------------------------------------------------------------------------
# stacks and the whole encoder-decoder
# ------------------------------------------------------------------------------------------------
def _layer_indices(state: dict, prefix: str) -> list[int]:
    idx = {int(k[len(prefix):].split(".", 1)[0]) for k in state if k.startswith(prefix)}
    return sorted(idx)


def _stack(state: dict, ours: str, theirs: str, layer_fn, final_norm: bool, bias: bool,
           to_nn: bool) -> dict:
    """Map a stack's layers.i.* through layer_fn and its final norm; `ours`/`theirs` are the stack
    prefixes ("encoder", "decoder", or "" for a bare stack state)."""
    po = f"{ours}." if ours else ""
    pt = f"{theirs}." if theirs else ""
    out = {}
    for i in _layer_indices(state, f"{po}layers."):
        sub = layer_fn(_sub(state, f"{po}layers.{i}."))
        out.update({f"{pt}layers.{i}.{k}": v for k, v in sub.items()})
    if final_norm:
        _need(state, [f"{po}norm.weight"], f"{po}norm (config.final_norm=True)")
        if to_nn:
            _norm_to(state, f"{po}norm", f"{pt}norm", bias, out)
        else:
            _norm_from(state, f"{po}norm", f"{pt}norm", out)
    return out


def encoder_to_torch_nn(state: dict, config) -> dict:
    """Our Encoder state (layers.i..., [norm]) -> nn.TransformerEncoder state."""
    return _stack(state, "", "", encoder_layer_to_torch_nn, config.final_norm, config.bias, True)


def encoder_from_torch_nn(state: dict, config) -> dict:
    """nn.TransformerEncoder state -> our Encoder state."""
    return _stack(state, "", "", encoder_layer_from_torch_nn, config.final_norm, config.bias, False)


def decoder_to_torch_nn(state: dict, config) -> dict:
    """Our Decoder state (with cross-attention) -> nn.TransformerDecoder state."""
    return _stack(state, "", "", decoder_layer_to_torch_nn, config.final_norm, config.bias, True)


def decoder_from_torch_nn(state: dict, config) -> dict:
    """nn.TransformerDecoder state -> our Decoder state."""
    return _stack(state, "", "", decoder_layer_from_torch_nn, config.final_norm, config.bias, False)


def transformer_to_torch_nn(state: dict, config) -> dict:
    """The encoder/decoder part of our Transformer's state_dict -> nn.Transformer state_dict.

    Keys outside encoder./decoder. (embeddings, positions, output_proj) have no nn.Transformer
    counterpart and are left out. Final norms are included iff config.final_norm (the module from
    make_torch_nn_transformer(config) has them iff so).
    """
    out = _stack(state, "encoder", "encoder", encoder_layer_to_torch_nn, config.final_norm,
                 config.bias, True)
    out.update(_stack(state, "decoder", "decoder", decoder_layer_to_torch_nn, config.final_norm,
                      config.bias, True))
    return out


def transformer_from_torch_nn(state: dict, config) -> dict:
    """nn.Transformer state_dict -> the encoder./decoder. entries of our Transformer's state_dict
    (load with strict=False, or merge into a full state)."""
    out = _stack(state, "encoder", "encoder", encoder_layer_from_torch_nn, config.final_norm,
                 config.bias, False)
    out.update(_stack(state, "decoder", "decoder", decoder_layer_from_torch_nn, config.final_norm,
                      config.bias, False))
    return out


# ------------------------------------------------------------------------------------------------
# masks at the boundary
# ------------------------------------------------------------------------------------------------
def to_torch_nn_attn_mask(keep: torch.Tensor, batch: int, num_heads: int, q_len: int,
                          k_len: int) -> torch.Tensor:
    """Our keep-mask (broadcastable to (B, H, Tq, Tk), True = may attend) -> the 3-D attn_mask of
    nn.MultiheadAttention / nn.Transformer* ((B*H, Tq, Tk), True = NOT allowed)."""
    keep = torch.as_tensor(keep).bool()
    full = keep.expand(batch, num_heads, q_len, k_len)
    return (~full).reshape(batch * num_heads, q_len, k_len).contiguous()


# ------------------------------------------------------------------------------------------------
# builders of the matching torch.nn modules
# ------------------------------------------------------------------------------------------------
def torch_nn_activation(name: str):
    """What torch.nn.Transformer*Layer's `activation` argument needs for our activation name."""
    if name == "relu":
        return "relu"
    if name == "gelu":
        return "gelu"
    if name == "gelu_tanh":
        # not nn.GELU(approximate="tanh"): the layers' fast path would silently use exact GELU
        return functools.partial(F.gelu, approximate="tanh")
    raise ValueError(f"activation: expected 'relu', 'gelu' or 'gelu_tanh', got {name!r}")


def _factory(config, device, dtype):
    return {"device": device, "dtype": to_torch_dtype(dtype if dtype is not None else config.dtype)}


def make_torch_nn_mha(d_model: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                      dtype="float32", device=None) -> nn.MultiheadAttention:
    """nn.MultiheadAttention matching our MultiHeadAttention(d_model, num_heads, dropout, bias)."""
    return nn.MultiheadAttention(d_model, num_heads, dropout=dropout, bias=bias, batch_first=True,
                                 device=device, dtype=to_torch_dtype(dtype))


def _layer_kwargs(config, device, dtype) -> dict:
    return dict(d_model=config.d_model, nhead=config.num_heads, dim_feedforward=config.d_ff,
                dropout=config.dropout, activation=torch_nn_activation(config.activation),
                layer_norm_eps=config.layer_norm_eps, batch_first=True,
                norm_first=config.norm_first, bias=config.bias, **_factory(config, device, dtype))


def make_torch_nn_encoder_layer(config, device=None, dtype=None) -> nn.TransformerEncoderLayer:
    """nn.TransformerEncoderLayer laid out like our EncoderLayer(config). Its one `dropout` is
    config.dropout (it also drops attention probabilities and after the activation: compare with
    dropout off, or with config.attention_dropout == config.activation_dropout == config.dropout)."""
    return nn.TransformerEncoderLayer(**_layer_kwargs(config, device, dtype))


def make_torch_nn_decoder_layer(config, device=None, dtype=None) -> nn.TransformerDecoderLayer:
    """nn.TransformerDecoderLayer laid out like our DecoderLayer(config) (with cross-attention)."""
    return nn.TransformerDecoderLayer(**_layer_kwargs(config, device, dtype))


def _final_norm(config, device, dtype):
    return nn.LayerNorm(config.d_model, eps=config.layer_norm_eps, bias=config.bias,
                        **_factory(config, device, dtype))


def make_torch_nn_transformer(config, device=None, dtype=None) -> nn.Transformer:
    """nn.Transformer laid out like our Transformer(config)'s encoder and decoder (batch_first).

    With config.final_norm it is a stock nn.Transformer (which always has final norms); without, the
    encoder/decoder are passed as custom stacks with norm=None. Either way the encoder has
    enable_nested_tensor=False.
    """
    enc = nn.TransformerEncoder(make_torch_nn_encoder_layer(config, device, dtype),
                                config.num_encoder_layers,
                                norm=_final_norm(config, device, dtype) if config.final_norm else None,
                                enable_nested_tensor=False)
    dec = nn.TransformerDecoder(make_torch_nn_decoder_layer(config, device, dtype),
                                config.num_decoder_layers,
                                norm=_final_norm(config, device, dtype) if config.final_norm else None)
    kw = _layer_kwargs(config, device, dtype)
    return nn.Transformer(kw.pop("d_model"), kw.pop("nhead"), config.num_encoder_layers,
                          config.num_decoder_layers, custom_encoder=enc, custom_decoder=dec, **kw)
