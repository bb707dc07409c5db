"""Inference for torchformer models: greedy decoding, batched, cached or not (beam search:
torchformer.decoding.beam).

The twin of npformer.decoding.generate: the same functions, arguments, rules and outputs (torch tensors on the
model's device instead of numpy arrays). See npformer/decoding/generate.py and beam.py for the rules (prompt forcing for
CausalLM rows of different lengths, the top-K EOS rule, the GNMT length penalty
lp(L) = ((5 + L) / 6) ** alpha, the stopping bound). Everything runs under torch.no_grad(); no Python
loop runs over the batch or the beams.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch

from npformer.data.vocab import BOS, EOS, PAD
from npformer.decoding.generate import check_source_eos
from torchformer.layers.masks import causal_mask, padding_mask
from torchformer.layers.validation import check_ids, run_checked
from torchformer.models.causal_lm import CausalLM
from torchformer.models.transformer import Transformer

__all__ = ["GenerateOutput", "BeamOutput", "greedy_decode", "length_penalty",
           "reorder_caches", "new_caches"]


class GenerateOutput(NamedTuple):
    """tokens (B, N) (EOS included, PAD after), lengths (B,), scores (B,) float64, logits (B, N, V)."""
    tokens: torch.Tensor
    lengths: torch.Tensor
    scores: torch.Tensor
    logits: torch.Tensor


class BeamOutput(NamedTuple):
    """Best hypothesis: tokens (B, N), lengths (B,), scores (B,); all kept: beams (B, K, N),
    beam_lengths (B, K), beam_scores (B, K), best first."""
    tokens: torch.Tensor
    lengths: torch.Tensor
    scores: torch.Tensor
    beams: torch.Tensor
    beam_lengths: torch.Tensor
    beam_scores: torch.Tensor


def length_penalty(length, alpha: float):
    """GNMT's lp(L) = ((5 + L) / 6) ** alpha (1 for alpha = 0); float64."""
    if isinstance(length, torch.Tensor):
        return ((5.0 + length.to(torch.float64)) / 6.0) ** alpha
    return ((5.0 + np.asarray(length, dtype=np.float64)) / 6.0) ** alpha


def new_caches(model) -> list:
    """Empty per-layer caches for incremental decoding: [{} for every decoder layer]."""
    return [{} for _ in range(len(model.decoder.layers))]


def reorder_caches(caches, index: torch.Tensor) -> None:
    """Re-index every cached tensor along its batch axis (beam search follows its surviving beams)."""
    def visit(d: dict) -> None:
        for key, v in d.items():
            if isinstance(v, dict):
                visit(v)
            elif isinstance(v, torch.Tensor):
                d[key] = v.index_select(0, index.to(v.device))         # (N, ...) rows reordered
    for layer in caches:
        visit(layer)


# ---------------------------------------------------------------------------------------------------
# one interface over both models
# ---------------------------------------------------------------------------------------------------
class _Stepper:
    """Runs the model on the decoded prefix. The ids, masks, offsets and caches it passes are its
    own, valid by construction (the inputs were checked by setup_decoding), so a torchformer model is run
    through its checked body (`run_checked`) without checking them again at every step."""

    def __init__(self, model, use_cache: bool):
        self.model, self.use_cache = model, use_cache
        self.caches = new_caches(model) if use_cache else None
        self.fed = 0
        self.device = model.device
        # one new token sees every cached key: causal_mask(1, p) is all True, and this one
        # broadcastable all-True mask (the same tensor every step) says so; attention notes once
        # that it masks nothing and then runs unmasked
        self.see_all = torch.ones((1, 1, 1, 1), dtype=torch.bool, device=self.device)

    def _run(self, ids, mask, offset):
        raise NotImplementedError

    def __call__(self, seq: torch.Tensor, p: int) -> torch.Tensor:
        if self.use_cache:
            new = seq[:, self.fed:p]                                     # (N, p - fed)
            mask = (self.see_all if p - self.fed == 1
                    else causal_mask(p - self.fed, p, device=self.device))  # (1, 1, p - fed, p)
            logits = self._run(new, mask, self.fed)
            self.fed = p
        else:
            logits = self._run(seq[:, :p], causal_mask(p, device=self.device), 0)  # (N, p, V)
        return logits[:, -1]                                             # (N, V)

    def reorder(self, index: torch.Tensor) -> None:
        if self.caches is not None:
            reorder_caches(self.caches, index)


class _Seq2SeqStepper(_Stepper):
    def __init__(self, model, memory, src_mask, use_cache: bool):
        super().__init__(model, use_cache)
        self.memory, self.src_mask = memory, src_mask

    def _run(self, ids, mask, offset):
        if isinstance(self.model, Transformer):
            return run_checked(self.model._decode, ids, self.memory, self.src_mask, mask,
                               self.caches, offset)
        return self.model.decode(ids, self.memory, self.src_mask, mask, caches=self.caches,
                                 offset=offset)


class _LMStepper(_Stepper):
    def _run(self, ids, mask, offset):
        if isinstance(self.model, CausalLM):
            return run_checked(self.model._forward, ids, mask, self.caches, offset)
        if self.caches is None:
            return self.model(ids, mask)
        return self.model(ids, mask, caches=self.caches, offset=offset)


def _is_seq2seq(model) -> bool:
    return hasattr(model, "encode") and hasattr(model, "decode")


def _as_ids(name: str, x, vocab: int, device) -> torch.Tensor:
    t = check_ids(name, x, vocab)
    if not isinstance(t, torch.Tensor):
        t = torch.as_tensor(np.asarray(t))
    return t.to(device=device, dtype=torch.int64)


def setup_decoding(model, inputs, max_new_tokens, prompt_lengths, bos_id, repeat: int, use_cache: bool,
           eos_id=None):
    c = model.config
    if not hasattr(model, "decoder"):
        raise TypeError(f"model: expected a Transformer or CausalLM, got {type(model).__name__}")
    if not isinstance(use_cache, bool):
        raise TypeError(f"use_cache: expected a bool, got {use_cache!r}")
    dev = model.device
    if _is_seq2seq(model):
        src = _as_ids("src", inputs, c.src_vocab, dev)
        if src.dim() != 2 or src.shape[0] < 1 or src.shape[1] < 1:
            raise ValueError(f"src: expected a non-empty (batch, seq) array, got shape "
                             f"{tuple(src.shape)}")
        if prompt_lengths is not None:
            raise ValueError("prompt_lengths: only for CausalLM prompts, got a value for a Transformer")
        check_source_eos(src.detach().cpu().numpy(), eos_id, c.pad_id)
        B = src.shape[0]
        src_mask = None if c.pad_id is None else padding_mask(src, c.pad_id)   # (B, 1, 1, S)
        memory = model.encode(src, src_mask)                                   # (B, S, D)
        memory = memory.repeat_interleave(repeat, dim=0)                       # (B*K, S, D)
        if src_mask is not None:
            src_mask = src_mask.repeat_interleave(repeat, dim=0)               # (B*K, 1, 1, S)
        start = torch.ones(B, dtype=torch.int64, device=dev)                   # BOS only
        prompt = torch.full((B, 1), bos_id, dtype=torch.int64, device=dev)     # (B, 1)
        stepper = _Seq2SeqStepper(model, memory, src_mask, use_cache)
    else:
        prompt = _as_ids("prompts", inputs, c.vocab_size, dev)
        if prompt.dim() != 2 or prompt.shape[0] < 1 or prompt.shape[1] < 1:
            raise ValueError(f"prompts: expected a non-empty (batch, seq) array, got shape "
                             f"{tuple(prompt.shape)}")
        B, P = prompt.shape
        if prompt_lengths is None:
            start = (prompt != c.pad_id).sum(dim=1) if c.pad_id is not None else \
                torch.full((B,), P, device=dev)
        else:
            start = torch.as_tensor(np.asarray(prompt_lengths) if not isinstance(
                prompt_lengths, torch.Tensor) else prompt_lengths)
            if tuple(start.shape) != (B,) or start.is_floating_point() or start.dtype == torch.bool:
                raise ValueError(f"prompt_lengths: expected {B} integers, got {prompt_lengths!r}")
        start = start.to(device=dev, dtype=torch.int64)
        if int(start.min()) < 1 or int(start.max()) > P:
            raise ValueError(f"prompt_lengths: expected every prompt to hold 1..{P} tokens, got "
                             f"lengths in [{int(start.min())}, {int(start.max())}]")
        stepper = _LMStepper(model, use_cache)
    limit = c.max_len + 1 - int(start.max())
    if max_new_tokens is None:
        max_new_tokens = limit
    if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, (int, np.integer)) \
            or not 1 <= max_new_tokens <= limit:
        raise ValueError(f"max_new_tokens: expected an int in [1, {limit}] (max_len={c.max_len} "
                         f"minus the longest prompt + 1), got {max_new_tokens!r}")
    N = int(max_new_tokens)
    total = int(start.max()) + N
    seq = torch.full((B, total), PAD, dtype=torch.int64, device=dev)           # (B, total)
    w = min(prompt.shape[1], total)                     # trailing PAD columns may reach past total
    seq[:, :w] = prompt[:, :w]
    seq = seq.repeat_interleave(repeat, dim=0)                                 # (B*K, total)
    return stepper, seq, start, N, B


def suppressed_ids(model, suppress_ids, bos_id) -> list[int]:
    """Token ids never generated: default PAD and (Transformer) BOS; () allows everything."""
    c = model.config
    vocab = c.tgt_vocab if _is_seq2seq(model) else c.vocab_size
    if suppress_ids is None:
        ids = [] if c.pad_id is None else [c.pad_id]
        if _is_seq2seq(model):
            ids.append(bos_id)
        return sorted(set(ids))
    ids = [int(i) for i in suppress_ids]
    bad = [i for i in ids if not 0 <= i < vocab]
    if bad:
        raise ValueError(f"suppress_ids: expected token ids in [0, {vocab}), got {bad}")
    return sorted(set(ids))


# ---------------------------------------------------------------------------------------------------
# greedy
# ---------------------------------------------------------------------------------------------------
@torch.no_grad()
def greedy_decode(model, inputs, *, max_new_tokens: int | None = None, use_cache: bool = True,
                  eos_id: int | None = EOS, bos_id: int = BOS, prompt_lengths=None,
                  suppress_ids=None) -> GenerateOutput:
    """The most probable token at every step (see npformer.decoding.generate.greedy_decode)."""
    was_training = model.training
    model.eval()
    try:
        stepper, seq, start, N, B = setup_decoding(model, inputs, max_new_tokens, prompt_lengths, bos_id, 1,
                                           use_cache, eos_id)
        banned = suppressed_ids(model, suppress_ids, bos_id)
        dev = seq.device
        fill = EOS if eos_id is None else eos_id
        # What depends only on the step p and the prompt lengths, for every step at once (one op
        # each instead of several per step): g = p - start is row b's generated index at step p.
        steps = range(int(start.min()), int(start.max()) + N)
        G = torch.arange(steps.start, steps.stop, device=dev)[:, None] - start  # (S, B)
        GEN = (G >= 0) & (G < N)                                                # (S, B) generating
        FORCED = G < 0                                                          # (S, B) prompt
        LAST = GEN & (G == N - 1)                                               # (S, B) budget used
        # Outputs are written for all rows at once: a row that writes nothing this step writes
        # into one spare sink row (index B*N) of the flat buffers instead, dropped at the end.
        sink = B * N
        SLOT = torch.where(GEN, torch.arange(B, device=dev) * N + G, sink)      # (S, B)
        finished = torch.zeros(B, dtype=torch.bool, device=dev)                 # (B,)
        scores = torch.zeros(B, dtype=torch.float64, device=dev)                # (B,)
        lengths = torch.zeros(B, dtype=torch.int64, device=dev)                 # (B,)
        tokens = torch.full((sink + 1,), PAD, dtype=torch.int64, device=dev)    # (B*N + 1,)
        out_logits = ban = None
        for k, p in enumerate(steps):
            logits = stepper(seq, p)                                            # (B, V)
            if out_logits is None:
                V = logits.shape[-1]
                out_logits = torch.zeros((sink + 1, V), dtype=logits.dtype, device=dev)
                ban = torch.zeros(V, dtype=torch.bool, device=dev)              # (V,)
                ban[banned] = True
            choice = logits.masked_fill(ban, float("-inf")).argmax(dim=-1)      # (B,) never PAD/BOS
            logp = torch.log_softmax(logits, dim=-1, dtype=torch.float64)       # (B, V)
            logp = logp.gather(1, choice[:, None])[:, 0]                        # (B,)
            live = GEN[k] & ~finished                                           # (B,)
            out_logits[SLOT[k]] = logits                                        # (B*N + 1, V)
            tokens[torch.where(live, SLOT[k], sink)] = choice                   # (B*N + 1,)
            scores += torch.where(live, logp, 0.0)
            lengths += live
            if eos_id is not None:
                finished |= live & (choice == eos_id)
            finished |= LAST[k]
            forced = FORCED[k]                                                  # (B,)
            fed = torch.where(forced, seq[:, p], choice)                        # prompt forces
            seq[:, p] = torch.where(finished & ~forced, fill, fed)
            # without eos_id every row ends at its budget, on the last step: nothing to ask
            if eos_id is not None and bool(finished.all()):
                break
        tokens = tokens[:sink].view(B, N)                                       # (B, N)
        out_logits = out_logits[:sink].view(B, N, -1)                           # (B, N, V)
    finally:
        model.train(was_training)
    return GenerateOutput(tokens, lengths, scores, out_logits)
