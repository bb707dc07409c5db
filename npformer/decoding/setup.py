"""The checks and the common start of every decode loop (greedy, sampling, beam search; both twins):
is the model decodable by this twin, are the inputs, lengths, EOS and suppressed ids valid, does the
run fit in memory; then the stepper and the (B*repeat, total) token array the loop fills.
"""
from __future__ import annotations

import operator

import numpy as np

from npformer.data.vocab import PAD
from npformer.decoding.step import NUMPY_STEP, NumpyDecodeStep, Stepper, is_seq2seq
from npformer.guards.rules import check_decoding_fits_memory
from npformer.layers.module import Module

__all__ = ["check_source_eos", "check_decodable", "setup_decoding", "suppressed_ids"]


def check_source_eos(src: np.ndarray, eos_id: int | None, pad_id: int | None) -> None:
    """Refuse sources whose last real token is not EOS (decoding them gives wrong answers silently:
    the models learn from sources that end with EOS, as npformer.data.tasks builds them). Skipped when
    eos_id is None."""
    if eos_id is None:
        return
    real = src != pad_id if pad_id is not None else np.ones(src.shape, dtype=bool)   # (B, S)
    last = real.shape[1] - 1 - np.argmax(real[:, ::-1], axis=1)                      # (B,)
    ends = src[np.arange(src.shape[0]), last] == eos_id                              # (B,)
    bad = np.nonzero(~ends | ~real.any(axis=1))[0]
    if bad.size:
        raise ValueError(f"src: rows {bad[:8].tolist()} do not end with EOS (id {eos_id}) before "
                         f"their padding; sources must end with EOS as in training (npformer.data.tasks "
                         f"appends it: ids + [EOS]); append it, or pass eos_id=None to decode "
                         f"without this check")


def check_decodable(model, step=NUMPY_STEP) -> None:
    """Refuse, before touching it, a `model` the decode loops cannot run: not a Transformer or CausalLM,
    or a model of the other twin than the one whose function was called (`step` tells which)."""
    kind = f"{type(model).__module__.split('.')[0]} {type(model).__name__}"
    if not all(hasattr(model, a) for a in ("config", "decoder", "training", "eval", "train")):
        raise TypeError(f"model: expected a Transformer or CausalLM, got {kind}")
    numpy_twin = isinstance(step, NumpyDecodeStep)
    torch_module = any(k.__module__.split(".")[0] == "torch" for k in type(model).__mro__)
    if numpy_twin and torch_module:                     # (duck-typed stand-ins stay welcome)
        raise TypeError(f"model: expected an npformer model, got a {kind}; decode a torchformer "
                        f"model with torchformer's greedy_decode / beam_search / sample")
    if not numpy_twin and isinstance(model, Module):
        raise TypeError(f"model: expected a torchformer model, got an {kind}; decode it with "
                        f"npformer's greedy_decode / beam_search / sample, or convert it with "
                        f"torchformer.to_torch(model)")


def setup_decoding(model, inputs, max_new_tokens, prompt_lengths, bos_id, repeat: int, use_cache: bool,
                   eos_id=None, step=NUMPY_STEP):
    """Common start: (stepper, seq (B*repeat, total), start (B,), N, B), NumPy arrays."""
    check_decodable(model, step)
    c = model.config
    vocab = c.tgt_vocab if is_seq2seq(model) else c.vocab_size
    if eos_id is not None and (isinstance(eos_id, bool) or not isinstance(eos_id, (int, np.integer))
                               or not 0 <= eos_id < vocab):
        raise ValueError(f"eos_id: expected None or a token id in [0, {vocab}), got {eos_id!r}")
    if is_seq2seq(model) and (isinstance(bos_id, bool) or not isinstance(bos_id, (int, np.integer))
                              or not 0 <= bos_id < vocab):     # the decoder's first token
        raise ValueError(f"bos_id: expected a token id in [0, {vocab}) (the target vocabulary), got "
                         f"{bos_id!r}")
    if not isinstance(use_cache, bool):
        raise TypeError(f"use_cache: expected a bool, got {use_cache!r}")
    if is_seq2seq(model):
        src = step.ids("src", inputs, c.src_vocab)
        if src.shape[0] < 1 or src.shape[1] < 1:
            raise ValueError(f"src: expected a non-empty (batch, seq) array, got shape {src.shape}")
        if prompt_lengths is not None:
            raise ValueError("prompt_lengths: only for CausalLM prompts, got a value for a Transformer")
        check_source_eos(src, eos_id, c.pad_id)
        B = src.shape[0]
        start = np.ones(B, dtype=np.int64)                                     # BOS only
        prompt = np.full((B, 1), bos_id, dtype=np.int64)                       # (B, 1)
    else:
        prompt = step.ids("prompts", inputs, c.vocab_size)
        B, P = prompt.shape
        if B < 1 or P < 1:
            raise ValueError(f"prompts: expected a non-empty (batch, seq) array, got shape {prompt.shape}")
        if prompt_lengths is None:
            start = (prompt != c.pad_id).sum(axis=1) if c.pad_id is not None else np.full(B, P)
            empty = np.flatnonzero(start == 0)
            if empty.size:
                raise ValueError(f"prompts: rows {empty[:8].tolist()} hold only padding (pad_id="
                                 f"{c.pad_id}); every prompt needs at least one token")
        else:
            start = step.array(prompt_lengths)
            if start.shape != (B,) or not np.issubdtype(start.dtype, np.integer):
                raise ValueError(f"prompt_lengths: expected {B} integers, got {start!r}")
        start = start.astype(np.int64)
        if start.min() < 1 or start.max() > P:
            raise ValueError(f"prompt_lengths: expected every prompt to hold 1..{P} tokens, got "
                             f"lengths in [{start.min()}, {start.max()}]")
    if start.max() > c.max_len:
        raise ValueError(f"prompts: expected prompts of at most max_len={c.max_len} tokens (the "
                         f"model's longest sequence), got {int(start.max())} tokens in row "
                         f"{int(start.argmax())}: keep the prompt's last {c.max_len} tokens or fewer")
    limit = c.max_len + 1 - int(start.max())            # the last fed prefix is start + N - 1 long
    if max_new_tokens is None:
        max_new_tokens = limit
    if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, (int, np.integer)) \
            or not 1 <= max_new_tokens <= limit:
        raise ValueError(f"max_new_tokens: expected an int in [1, {limit}] (max_len={c.max_len} "
                         f"minus the longest prompt + 1), got {max_new_tokens!r}")
    N = int(max_new_tokens)
    total = int(start.max()) + N
    _check_fits(model, step, B, repeat, N, total, int(start.min()),
                src.shape[1] if is_seq2seq(model) else 0, use_cache,
                "src" if is_seq2seq(model) else "prompts")
    if is_seq2seq(model):
        memory, src_mask = step.source(model, src, repeat)                    # (B*K, S, D) ...
        stepper = Stepper(step, model, use_cache, memory, src_mask)
    else:
        stepper = Stepper(step, model, use_cache)
    seq = np.full((B, total), PAD, dtype=np.int64)                             # (B, total)
    w = min(prompt.shape[1], total)                     # trailing PAD columns may reach past total
    seq[:, :w] = prompt[:, :w]
    seq = np.repeat(seq, repeat, axis=0)                                       # (B*K, total)
    return stepper, seq, start, N, B


def _check_fits(model, step, B, repeat, N, total, fed, S, use_cache, input_name) -> None:
    """Lower bounds of the bytes per row (B*repeat rows) before anything is repeated: the float64
    log-probabilities (beams: also the candidates and their sort order), the token arrays (beams: the
    generated and finished stores), the encoder memory and the key/value caches after the first step
    (`fed` positions: decoding may stop early, so no more are counted)."""
    c = model.config
    V = c.tgt_vocab if is_seq2seq(model) else c.vocab_size
    beams = repeat > 1
    host = 8 * (V * (3 if beams else 1) + total + (2 * N if beams else 0))
    layers = len(model.decoder.layers)
    item = np.dtype(c.dtype).itemsize
    dev = item * c.d_model * (S + (2 * layers * fed if use_cache else 0))
    name, got = ("beam_size", f"beam_size={repeat} for a batch of {B}") if beams else \
        (input_name, f"a batch of {B}")
    check_decoding_fits_memory(name, got, B * repeat, host, dev, step.device_memory(model))


def suppressed_ids(model, suppress_ids, bos_id) -> list[int]:
    """Token ids never generated: default PAD and (Transformer) BOS; () allows everything."""
    c = model.config
    vocab = c.tgt_vocab if is_seq2seq(model) else c.vocab_size
    if suppress_ids is None:
        ids = [] if c.pad_id is None else [c.pad_id]
        if is_seq2seq(model):
            ids.append(bos_id)
        return sorted(set(ids))
    try:
        ids = [operator.index(i) for i in suppress_ids]
    except TypeError:
        raise TypeError(f"suppress_ids: expected a list of int token ids, got "
                        f"{suppress_ids!r}"[:200]) from None
    bad = [i for i in ids if not 0 <= i < vocab]
    if bad:
        raise ValueError(f"suppress_ids: expected token ids in [0, {vocab}), got {bad}")
    return sorted(set(ids))
