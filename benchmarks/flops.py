"""FLOPs per step from a formula: matrix-multiply FLOPs only, 2 per multiply-add.

Why matmuls only: they are >99% of the arithmetic at every benchmarked size, they are what a matmul
peak measures, and they are what `torch.utils.flop_counter.FlopCounterMode` counts (mm, addmm, bmm,
SDPA kernels), so tests/benchmarks/test_flops.py can check this formula against it exactly. Softmax,
LayerNorm, activations, dropout, the loss and the Adam update are O(elements), left out and said so.

Symbols: B batch, S source length, T target length, D d_model, F d_ff, V output vocabulary,
Le / Ld encoder / decoder layers. A (m,k)@(k,n) product costs 2mkn FLOPs.

Forward, per layer (summed over heads, since heads * d_head = D):
  encoder layer   q,k,v,out projections 4 * 2BSD^2 = 8BSD^2
                  attention scores QK^T 2BS^2D and weights @ V 2BS^2D = 4BS^2D   (the O(n^2) term)
                  feed-forward 2 * 2BSDF = 4BSDF
  decoder layer   self-attention 8BTD^2 + 4BT^2D
                  cross-attention: q,out projections 4BTD^2, k,v projections of memory 4BSD^2,
                  scores and mixing 4BTSD
                  feed-forward 4BTDF
  output          2BTDV (logits; tied or not, same cost)
Backward: every matmul C = A @ B needs dA = dC @ B^T and dB = A^T @ dC, two products of the same
cost, and every operand here needs its gradient (the first layer's input comes from the embedding,
which is trained), so backward = 2 x forward and forward+backward = 3 x forward. A training step adds
only the elementwise Adam update: its matmul FLOPs equal forward+backward's.

`CausalLM` is a decoder without cross-attention and without an encoder.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FlopBreakdown:
    """Forward matmul FLOPs of one call, split by what they come from."""

    projections: int      # attention q/k/v/out projections
    attention: int        # QK^T and weights @ V: the O(n^2) term
    feed_forward: int     # the two position-wise linears
    output: int           # final projection to the vocabulary

    @property
    def total(self) -> int:
        return self.projections + self.attention + self.feed_forward + self.output

    def as_dict(self) -> dict[str, int]:
        return {"projections": self.projections, "attention": self.attention,
                "feed_forward": self.feed_forward, "output": self.output, "total": self.total}


def _shape(cfg):
    return cfg.d_model, cfg.d_ff, cfg.tgt_vocab


def encoder_flops(cfg, batch: int, src_len: int) -> FlopBreakdown:
    """Forward FLOPs of the encoder stack on (batch, src_len) tokens."""
    D, F, _ = _shape(cfg)
    B, S, L = batch, src_len, cfg.num_encoder_layers
    return FlopBreakdown(projections=L * 8 * B * S * D * D, attention=L * 4 * B * S * S * D,
                         feed_forward=L * 4 * B * S * D * F, output=0)


def decoder_flops(cfg, batch: int, tgt_len: int, src_len: int | None, past_len: int = 0,
                  project_memory: bool = True) -> FlopBreakdown:
    """Forward FLOPs of the decoder stack on `tgt_len` new tokens (no output projection).

    src_len None: no cross-attention (CausalLM). past_len: keys already in a KV cache (incremental
    decoding); attention then spans past_len + tgt_len keys. project_memory False: the cross-attention
    keys/values of the memory were projected on an earlier call and are reused.
    """
    D, F, _ = _shape(cfg)
    B, T, L = batch, tgt_len, cfg.num_decoder_layers
    K = past_len + tgt_len
    proj = 8 * B * T * D * D
    attn = 4 * B * T * K * D
    if src_len is not None:
        proj += 4 * B * T * D * D + (4 * B * src_len * D * D if project_memory else 0)
        attn += 4 * B * T * src_len * D
    return FlopBreakdown(projections=L * proj, attention=L * attn, feed_forward=L * 4 * B * T * D * F,
                         output=0)


def output_flops(cfg, batch: int, tokens: int) -> int:
    D, _, V = _shape(cfg)
    return 2 * batch * tokens * D * V


def _add(*parts: FlopBreakdown) -> FlopBreakdown:
    return FlopBreakdown(*(sum(getattr(p, f) for p in parts)
                           for f in ("projections", "attention", "feed_forward", "output")))


def forward_flops(cfg, model: str, batch: int, src_len: int, tgt_len: int) -> FlopBreakdown:
    """Forward FLOPs of a whole model: "seq2seq" (Transformer) or "causal" (CausalLM, uses tgt_len)."""
    if model == "seq2seq":
        enc = encoder_flops(cfg, batch, src_len)
        dec = decoder_flops(cfg, batch, tgt_len, src_len)
    elif model == "causal":
        enc = FlopBreakdown(0, 0, 0, 0)
        dec = decoder_flops(cfg, batch, tgt_len, None)
    else:
        raise ValueError(f"model: expected 'seq2seq' or 'causal', got {model!r}")
    out = FlopBreakdown(0, 0, 0, output_flops(cfg, batch, tgt_len))
    return _add(enc, dec, out)


def step_flops(cfg, model: str, workload: str, batch: int, src_len: int, tgt_len: int) -> int:
    """Matmul FLOPs of one call of a workload ("forward", "fwd_bwd", "train_step")."""
    fwd = forward_flops(cfg, model, batch, src_len, tgt_len).total
    if workload == "forward":
        return fwd
    if workload in ("fwd_bwd", "train_step"):
        return 3 * fwd
    raise ValueError(f"workload: expected 'forward', 'fwd_bwd' or 'train_step', got {workload!r}")


def generate_flops(cfg, model: str, batch: int, src_len: int, prompt_len: int, new_tokens: int,
                   kv_cache: bool = True) -> int:
    """Matmul FLOPs of greedy generation of `new_tokens` tokens.

    seq2seq: encode the source once, then decode from a `prompt_len`-token start (usually 1, BOS);
    causal: the prompt is `prompt_len` tokens. The first step runs the whole prompt, each later step one
    token (kv_cache) or the whole sequence again (no cache). Only the last position's logits are needed
    per step, but implementations usually project every position fed in; counted that way.
    """
    if new_tokens < 1:
        return 0
    cross = src_len if model == "seq2seq" else None
    total = encoder_flops(cfg, batch, src_len).total if model == "seq2seq" else 0
    for i in range(new_tokens):
        if kv_cache:
            fed, past = (prompt_len, 0) if i == 0 else (1, prompt_len + i - 1)
            total += decoder_flops(cfg, batch, fed, cross, past_len=past, project_memory=i == 0).total
        else:
            fed = prompt_len + i
            total += decoder_flops(cfg, batch, fed, cross).total
        total += output_flops(cfg, batch, fed)
    return total


def parameter_count(cfg, model: str) -> int:
    """Trainable scalars (weights, biases, LayerNorms, embeddings; tied matrices once), for the report."""
    D, F, V = _shape(cfg)
    bias = 1 if cfg.bias else 0
    attn = 4 * D * D + 4 * D * bias
    ffn = 2 * D * F + (F + D) * bias
    ln = 2 * D
    enc_layer = attn + ffn + 2 * ln
    dec_layer = 2 * attn + ffn + 3 * ln
    pos = cfg.max_len * D if cfg.positional == "learned" else 0
    if model == "seq2seq":
        n = cfg.num_encoder_layers * enc_layer + cfg.num_decoder_layers * dec_layer
        n += 2 * ln if cfg.final_norm else 0
        emb = cfg.src_vocab * D + (0 if cfg.share_embeddings else cfg.tgt_vocab * D)
        n += emb + 2 * pos
    else:
        n = cfg.num_decoder_layers * (attn + ffn + 2 * ln) + (ln if cfg.final_norm else 0)
        n += cfg.tgt_vocab * D + pos
    n += (0 if cfg.tie_embeddings else V * D) + (V if cfg.output_bias else 0)
    return n
