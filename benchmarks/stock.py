"""Stock `torch.nn` models of the same configuration: the reference torchformer is measured against.

`StockSeq2Seq` = token embeddings (x sqrt(d_model)) + positions + dropout + `torch.nn.Transformer`
(built by `torchformer.models.torch_nn.make_torch_nn_transformer`: batch_first, custom stacks without final
norms unless config.final_norm, so it is the same function) + the output projection.
`StockCausal` = the decoder-only `CausalLM` as a causally masked `nn.TransformerEncoder` of
`make_torch_nn_encoder_layer`s. `load_from_twin_state` maps the twins' weights onto them with
torchformer.models.torch_nn's converters (q/k/v concatenated into `in_proj_weight`), so the benchmark checks
that every backend computes the same logits.

Dropout: nn's layers use their one `dropout` rate for sublayer outputs, attention probabilities and
after the FFN activation; we then set the attention and activation rates to the config's
`attention_dropout` / `activation_dropout` so the work done matches the twins'.
"""
from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from torchformer.layers.positional import sinusoidal_table
from torchformer.models.torch_nn import (
    decoder_to_torch_nn,
    make_torch_nn_encoder_layer,
    make_torch_nn_transformer,
    transformer_to_torch_nn,
)


def _set_rates(layer: nn.Module, cfg) -> None:
    """Give an nn layer the config's attention and activation dropout rates."""
    for attn in ("self_attn", "multihead_attn"):
        if hasattr(layer, attn):
            getattr(layer, attn).dropout = cfg.attention_dropout
    layer.dropout.p = cfg.activation_dropout                             # after the FFN activation


def _causal(T: int, device) -> torch.Tensor:
    """(T, T) bool, True above the diagonal: in nn's sense True = may NOT attend. Bool like the key
    padding masks (nn warns about, and converts, a float mask mixed with bool ones)."""
    return torch.ones(T, T, dtype=torch.bool, device=device).triu(1)


class _Embed(nn.Module):
    """dropout(embed(ids) * scale + positions[offset: offset + T])."""

    def __init__(self, cfg, vocab: int, device=None, dtype=torch.float32):
        super().__init__()
        self.embedding = nn.Embedding(vocab, cfg.d_model, device=device, dtype=dtype)
        self.scale = math.sqrt(cfg.d_model) if cfg.scale_embeddings else 1.0
        self.learned = cfg.positional == "learned"
        if self.learned:
            self.pos = nn.Parameter(torch.zeros(cfg.max_len, cfg.d_model, device=device, dtype=dtype))
        else:
            self.register_buffer("pe", sinusoidal_table(cfg.max_len, cfg.d_model, dtype="float32",
                                                        device=device).to(dtype))
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        pos = self.pos if self.learned else self.pe
        return self.drop(self.embedding(ids) * self.scale + pos[: ids.shape[1]])


class StockSeq2Seq(nn.Module):
    def __init__(self, cfg, device=None, dtype=torch.float32):
        super().__init__()
        self.cfg = cfg
        self.src_embed = _Embed(cfg, cfg.src_vocab, device, dtype)
        self.tgt_embed = _Embed(cfg, cfg.tgt_vocab, device, dtype)
        if cfg.share_embeddings:
            self.tgt_embed.embedding.weight = self.src_embed.embedding.weight
        self.transformer = make_torch_nn_transformer(cfg, device=device, dtype="float32").to(dtype)
        for layer in list(self.transformer.encoder.layers) + list(self.transformer.decoder.layers):
            _set_rates(layer, cfg)
        self.output_proj = nn.Linear(cfg.d_model, cfg.tgt_vocab, bias=cfg.output_bias,
                                     device=device, dtype=dtype)
        if cfg.tie_embeddings:
            self.output_proj.weight = self.tgt_embed.embedding.weight

    def _pad(self, ids):
        return None if self.cfg.pad_id is None else ids == self.cfg.pad_id  # True = ignore (nn sense)

    def encode(self, src: torch.Tensor) -> torch.Tensor:
        return self.transformer.encoder(self.src_embed(src), src_key_padding_mask=self._pad(src))

    def decode(self, tgt: torch.Tensor, memory: torch.Tensor, src: torch.Tensor) -> torch.Tensor:
        causal = _causal(tgt.shape[1], tgt.device)
        h = self.transformer.decoder(self.tgt_embed(tgt), memory, tgt_mask=causal,
                                     tgt_is_causal=True, tgt_key_padding_mask=self._pad(tgt),
                                     memory_key_padding_mask=self._pad(src))
        return self.output_proj(h)

    def forward(self, src: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
        return self.decode(tgt, self.encode(src), src)


class StockCausal(nn.Module):
    def __init__(self, cfg, device=None, dtype=torch.float32):
        super().__init__()
        self.cfg = cfg
        self.tgt_embed = _Embed(cfg, cfg.tgt_vocab, device, dtype)
        layer = make_torch_nn_encoder_layer(cfg, device=device, dtype="float32").to(dtype)
        _set_rates(layer, cfg)
        norm = (nn.LayerNorm(cfg.d_model, eps=cfg.layer_norm_eps, bias=cfg.bias, device=device,
                             dtype=dtype)
                if cfg.final_norm else None)
        self.decoder = nn.TransformerEncoder(layer, cfg.num_decoder_layers, norm=norm,
                                             enable_nested_tensor=False)
        self.output_proj = nn.Linear(cfg.d_model, cfg.tgt_vocab, bias=cfg.output_bias,
                                     device=device, dtype=dtype)
        if cfg.tie_embeddings:
            self.output_proj.weight = self.tgt_embed.embedding.weight

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        causal = _causal(ids.shape[1], ids.device)
        pad = None if self.cfg.pad_id is None else ids == self.cfg.pad_id
        h = self.decoder(self.tgt_embed(ids), mask=causal, is_causal=True, src_key_padding_mask=pad)
        return self.output_proj(h)


def build_stock(cfg, model: str, device=None, dtype=torch.float32) -> nn.Module:
    if model == "seq2seq":
        return StockSeq2Seq(cfg, device=device, dtype=dtype)
    if model == "causal":
        return StockCausal(cfg, device=device, dtype=dtype)
    raise ValueError(f"model: expected 'seq2seq' or 'causal', got {model!r}")


def load_from_twin_state(stock: nn.Module, state: dict) -> None:
    """Copy an npformer/torchformer state_dict (name -> array or tensor) into a stock module."""
    cfg = stock.cfg
    s = {k: torch.as_tensor(np.asarray(v)) for k, v in state.items()}
    d: dict[str, torch.Tensor] = {}
    names = ("src", "tgt") if isinstance(stock, StockSeq2Seq) else ("tgt",)
    for name in names:
        d[f"{name}_embed.embedding.weight"] = s[f"{name}_embed.weight"]
        if cfg.positional == "learned":
            d[f"{name}_embed.pos"] = s[f"{name}_pos.weight"]
    if isinstance(stock, StockSeq2Seq):
        body = transformer_to_torch_nn(s, cfg)
        d.update({f"transformer.{k}": v for k, v in body.items()})
    else:
        dec = {k[len("decoder."):]: v for k, v in s.items() if k.startswith("decoder.")}
        d.update({f"decoder.{k}": v for k, v in decoder_to_torch_nn(dec, cfg).items()})
    d["output_proj.weight"] = s["output_proj.weight"]
    if cfg.output_bias:
        d["output_proj.bias"] = s["output_proj.bias"]
    for k, v in stock.state_dict().items():
        if k.endswith(".pe"):
            d[k] = v                                                     # fixed table, not weights
    stock.load_state_dict(d, strict=True)
