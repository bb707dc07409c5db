"""The encoder-decoder Transformer (Vaswani et al. 2017, figure 1), twin of npformer.models.transformer.

    memory = Encoder(dropout(pos(embed_src(src))), src_mask)                       (B, S, D)
    logits = output_proj(Decoder(dropout(pos(embed_tgt(tgt))), memory, tgt_mask, src_mask))   (B, T, V)

Also here: helpers every torchformer model shares (the target self-mask with its
incremental-decoding form, the initialisation generator, the first-layer input kept for parity).

Initialisation draws from `numpy.random.default_rng(seed)` in npformer's order, so a torchformer and an
npformer model built from one config and seed start from the same numbers (up to the float64 -> dtype
cast both make); the bridge copies weights anyway. Dropout draws from one torch.Generator per model,
seeded with seed + 1 (never torch's global RNG), so a seed fixes a CPU run bit for bit; its masks are
not npformer's numbers (different generators): masks for parity are replayed, not regenerated.
"""
from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from torchformer.layers.dropout import Dropout
from torchformer.layers.embedding import Embedding
from torchformer.layers.linear import Linear
from torchformer.layers.masks import causal_mask
from torchformer.layers.module import Module, StrictLoad, compiling, to_torch_dtype
from torchformer.layers.positional import make_positional
from torchformer.models.decoder import Decoder
from torchformer.models.encoder import Encoder


# ------------------------------------------------------------------------------------------------
# helpers shared by Transformer, EncoderClassifier and CausalLM
# ------------------------------------------------------------------------------------------------
def embedding_scale(config) -> float:
    """sqrt(d_model) when config.scale_embeddings (the paper, section 3.4), else 1."""
    return math.sqrt(config.d_model) if config.scale_embeddings else 1.0


def target_self_mask(ids: torch.Tensor, pad_id: int | None, offset: int = 0,
                     caches: list | None = None) -> torch.Tensor:
    """Decoder self-attention keep-mask: causal AND key is not padding, (B, 1, T, past + T).

    Keys: the `past` tokens the caches hold (offset; 0 without caches, where offset only moves the
    positions), then this call's T. The padding of cached keys is kept in caches[0]["tgt_keep"]
    (B, past) (unknown: all kept) and extended with this call's tokens, as npformer does.
    """
    B, T = ids.shape
    past = offset if caches else 0                                      # keys the caches hold
    causal = causal_mask(T, past + T, device=ids.device)               # (1, 1, T, past + T)
    if pad_id is None:
        return causal
    keep = ids != pad_id                                                # (B, T) new keys
    if caches:
        kept = caches[0].get("tgt_keep")                                # (B, past) or None
        if kept is None or tuple(kept.shape) != (B, past):
            kept = torch.ones((B, past), dtype=torch.bool, device=ids.device)
        keep = torch.cat([torch.as_tensor(kept, device=ids.device), keep], dim=1)
        caches[0]["tgt_keep"] = keep                                    # (B, past + T)
    return causal & keep[:, None, None, :]                              # (B, 1, T, past + T)


def keep_input(x: torch.Tensor) -> torch.Tensor:
    """The first layer's input, kept for parity: its .grad is what npformer's backward returns.

    Not under torch.compile: retain_grad() cannot be traced (a graph break per model call), and a
    compiled model is for speed, not for comparing intermediate gradients; there the kept tensor
    has no .grad after backward."""
    if x.requires_grad and not compiling():
        x.retain_grad()
    return x


def use_shared_dropout_rng(model: nn.Module, seed: int, device=None) -> torch.Generator:
    """Give every Dropout of `model` one torch.Generator seeded with seed + 1 (npformer's dropout seed),
    on `device` (default CPU), so a seed fixes every dropout mask without touching torch's global RNG.
    Masks drawn from a generator are explicit (torch.rand >= p), so attention dropout takes the
    explicit attention path in training; a model moved to another device after construction draws
    its masks on the generator's device and moves them."""
    dev = torch.device(device) if device is not None else torch.device("cpu")
    gen = torch.Generator(device=dev)
    gen.manual_seed(int(seed) + 1)
    for m in model.modules():
        if isinstance(m, Dropout):
            m.rng = gen
    return gen


def and_masks(a, b):
    """a & b for keep-masks where either may be None (None = keep everything)."""
    if a is None:
        return b
    if b is None:
        return a
    return a & b.to(a.device)


def init_rng(seed: int) -> np.random.Generator:
    """The initialisation generator (npformer's: same seed, same draw order, same numbers)."""
    return np.random.default_rng(seed)


class ModelMixin:
    """What the three models add to nn.Module: num_parameters() (distinct trainable scalars, a tied
    weight counted once), `device`, and a load_state_dict that, like npformer's, checks every key and
    shape before writing anything (torch's own copies the matching keys before it reports missing
    ones) and accepts numpy arrays as values. `train(mode)` / `eval()` as nn.Module's, faster.

    `_anchor` names the child whose `weight` tells the model's device and dtype (the first
    embedding: every model has one), instead of walking `parameters()` on every call."""

    _anchor = "src_embed"

    def num_parameters(self) -> int:
        return int(sum(p.numel() for p in self.parameters()))

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        return StrictLoad.load_state_dict(self, state_dict, strict=strict, assign=assign)

    @property
    def device(self) -> torch.device:
        return self._modules[self._anchor].weight.device

    @property
    def _weight_dtype(self) -> torch.dtype:
        """The dtype of the model's parameters now (follows .to() / .double())."""
        return self._modules[self._anchor].weight.dtype

    def train(self, mode: bool = True):
        """nn.Module.train, without its recursion: every sub-module's `training` flag is set in one
        pass (torch's recursive version, through nn.Module.__setattr__ at every level, took 0.3 ms
        for the tiny benchmark model: a third of its forward). A sub-module whose class overrides
        train() gets that override called, as torch would."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        base = nn.Module.train
        todo = [self]
        while todo:
            m = todo.pop()
            m.__dict__["training"] = mode
            for child in m._modules.values():
                if child is None:
                    continue
                if type(child).train is not base:
                    child.train(mode)                          # custom train(): let it recurse
                else:
                    todo.append(child)
        return self


# ------------------------------------------------------------------------------------------------
# the model
# ------------------------------------------------------------------------------------------------
class Transformer(ModelMixin, Module):
    """Encoder-decoder Transformer; Transformer(config, seed=0, device=None).

    Children: src_embed, tgt_embed, src_pos, tgt_pos, src_dropout, tgt_dropout, encoder, decoder,
    output_proj (weight shared with tgt_embed.weight when config.tie_embeddings; src_embed and
    tgt_embed share their weight when config.share_embeddings).

    forward(src (B, S), tgt (B, T), src_mask=None, tgt_mask=None) -> logits (B, T, V_tgt); masks as in
    npformer (src_mask also masks the memory; defaults built from config.pad_id). After forward,
    `encoder_input` (B, S, D) and `decoder_input` (B, T, D) are the inputs of the first layers
    (grad retained when they require grad).
    encode(src, src_mask=None) -> memory; decode(tgt, memory, src_mask=None, tgt_mask=None,
    caches=None, offset=0) -> logits (incremental decoding with caches).
    """

    def __init__(self, config, seed: int = 0, device=None):
        super().__init__()
        c = config
        seed = int(seed)
        self.config = c
        self.dtype = to_torch_dtype(c.dtype)
        rng = init_rng(seed)
        scale = embedding_scale(c)
        self.src_embed = Embedding(c.src_vocab, c.d_model, padding_idx=c.pad_id, scale=scale,
                                   dtype=c.dtype, rng=rng, device=device)
        self.tgt_embed = Embedding(c.tgt_vocab, c.d_model, padding_idx=c.pad_id, scale=scale,
                                   dtype=c.dtype, rng=rng, device=device)
        if c.share_embeddings:
            self.tgt_embed.weight = self.src_embed.weight               # one Parameter, two uses
        self.src_pos = make_positional(c, rng=rng, device=device)
        self.tgt_pos = make_positional(c, rng=rng, device=device)
        self.src_dropout = Dropout(c.dropout)
        self.tgt_dropout = Dropout(c.dropout)
        self.encoder = Encoder(c, rng=rng, device=device)
        self.decoder = Decoder(c, cross_attention=True, rng=rng, device=device)
        self.output_proj = Linear(c.d_model, c.tgt_vocab, bias=c.output_bias, dtype=c.dtype,
                                  rng=rng, device=device)
        if c.tie_embeddings:
            self.output_proj.weight = self.tgt_embed.weight             # (V_tgt, D), shared
        self.encoder_input: torch.Tensor | None = None
        self.decoder_input: torch.Tensor | None = None
        self.dropout_rng = use_shared_dropout_rng(self, seed, device)

    # -- checks and masks ------------------------------------------------------------------------
    # -- pieces ----------------------------------------------------------------------------------
    def _encode(self, src: torch.Tensor, src_mask) -> torch.Tensor:
        x = self.src_dropout(self.src_pos(self.src_embed(src)))          # (B, S, D)
        self.encoder_input = keep_input(x)
        return self.encoder(x, src_mask)                                 # (B, S, D) memory

    def _decode(self, tgt, memory, src_mask, tgt_mask, caches=None, offset: int = 0):
        y = self.tgt_dropout(self.tgt_pos(self.tgt_embed(tgt), offset=offset))  # (B, T, D)
        self.decoder_input = keep_input(y)
        h = self.decoder(y, memory, tgt_mask, src_mask, caches=caches)   # (B, T, D)
        return self.output_proj(h)                                       # (B, T, V)

    # -- public ----------------------------------------------------------------------------------
    def encode(self, src, src_mask=None, *, src_key_keep=None) -> torch.Tensor:
        """memory (B, S, D) for src (B, S)."""
        return self.checked("encode", self._encode, src, src_mask, src_key_keep=src_key_keep)

    def decode(self, tgt, memory, src_mask=None, tgt_mask=None, caches: list | None = None,
               offset: int = 0, *, src_key_keep=None) -> torch.Tensor:
        """logits (B, T, V) of tgt (B, T) given memory (B, S, D). src_mask: keep-mask over memory
        positions (None attends to all). With caches, tgt holds only the new tokens."""
        return self.checked("decode", self._decode, tgt, memory, src_mask, tgt_mask, caches, offset,
                            src_key_keep=src_key_keep)

    def forward(self, src, tgt, src_mask=None, tgt_mask=None) -> torch.Tensor:
        """src (B, S), tgt (B, T) int64 and the bool keep-masks, on the model's device, as the call's
        guard hands them over (padding and causal masks applied, key keep-masks folded in)."""
        memory = self._encode(src, src_mask)                             # (B, S, D)
        return self._decode(tgt, memory, src_mask, tgt_mask)             # (B, T, V)
