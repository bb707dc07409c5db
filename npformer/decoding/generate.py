"""Inference: greedy decoding and beam search, batched, with or without the key/value cache.

Two kinds of model, one loop:

  Transformer   encode the source once; the decoder starts from BOS and adds one token per step.
  CausalLM      continue prompts (B, P) right-padded with pad_id (or with explicit `prompt_lengths`).
                Rows of different lengths share the batch: the loop starts at the shortest prompt and,
                while a row is still inside its own prompt, the next token is forced to the prompt's
                (its log-probability not counted), so every row gets exactly what it would get alone.

Each step feeds the model either only the new tokens, with the per-layer caches and `offset`
(`use_cache=True`: keys/values of earlier positions are reused, cross-attention keys/values are
projected once), or the whole prefix again (`use_cache=False`). Both give the same tokens and, to
rounding, the same logits. The decoder self-attention mask is passed explicitly (causal, bottom-right
aligned when cached); generated sequences never contain PAD (a finished row keeps being fed EOS), so no
padding mask is needed on the target side.

Beam search: npformer.decoding.beam. Both twins run these loops: the bookkeeping (tokens, scores,
beams) is NumPy, and a twin supplies the step, "logits and log-probabilities of the next token":
NumpyDecodeStep here, torchformer.decoding.generate.TorchDecodeStep for torch models (whose logits then cross
to the host once per step; the outputs go back to the model's device).
No Python loop runs over the batch or the beams: loops are over time steps only.
"""
from __future__ import annotations

import operator
from typing import NamedTuple

import numpy as np

from npformer.data.vocab import BOS, EOS, PAD
from npformer.fast.last_logits import last_position_only
from npformer.guards.rules import check_decoding_fits_memory
from npformer.guards.validation import check_ids
from npformer.layers.masks import causal_mask, padding_mask
from npformer.layers.module import Module

__all__ = ["GenerateOutput", "BeamOutput", "greedy_decode", "length_penalty", "check_source_eos",
           "reorder_caches", "new_caches", "setup_decoding", "suppressed_ids", "decode_loop",
           "Stepper", "NumpyDecodeStep", "NUMPY_STEP", "check_decodable"]


class GenerateOutput(NamedTuple):
    """Greedy result. tokens (B, N): generated ids (EOS included, PAD after it); lengths (B,):
    generated tokens counting EOS; scores (B,): summed log-probabilities; logits (B, N, V): the
    logits each generated token was chosen from (rows past their end hold the logits computed for the
    EOS fed there)."""
    tokens: np.ndarray
    lengths: np.ndarray
    scores: np.ndarray
    logits: np.ndarray


class BeamOutput(NamedTuple):
    """Beam result. tokens (B, N), lengths (B,), scores (B,): the best hypothesis per item (score =
    normalised by the length penalty); beams (B, K, N), beam_lengths (B, K), beam_scores (B, K): all K
    kept hypotheses, best first."""
    tokens: np.ndarray
    lengths: np.ndarray
    scores: np.ndarray
    beams: np.ndarray
    beam_lengths: np.ndarray
    beam_scores: np.ndarray


def length_penalty(length, alpha: float) -> np.ndarray:
    """GNMT's lp(L) = ((5 + L) / 6) ** alpha (1 for alpha = 0)."""
    return ((5.0 + np.asarray(length, dtype=np.float64)) / 6.0) ** alpha


def log_probs(x: np.ndarray) -> np.ndarray:
    """Stable log-softmax over the last axis, (N, V) -> (N, V), same dtype."""
    m = x.max(axis=-1, keepdims=True)                                  # (N, 1)
    z = x - m                                                          # (N, V)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))           # (N, V)


def new_caches(model) -> list:
    """Empty per-layer caches for incremental decoding: [{} for every decoder layer]."""
    return [{} for _ in range(len(model.decoder.layers))]


def reorder_caches(caches, index: np.ndarray) -> None:
    """Re-index every cached array along its batch axis (beam search follows its surviving beams)."""
    def visit(d: dict) -> None:
        for key, v in d.items():
            if isinstance(v, dict):
                visit(v)
            elif isinstance(v, np.ndarray):
                d[key] = v[index]                                      # (N, ...) rows reordered
    for layer in caches:
        visit(layer)


# ---------------------------------------------------------------------------------------------------
# one interface over both models and both twins: "logits of the next token after seq[:, :p]"
# ---------------------------------------------------------------------------------------------------
class NumpyDecodeStep:
    """What the decode loops need from a twin, for npformer models (torchformer.decoding.generate has
    TorchDecodeStep with the same methods). The loops keep their bookkeeping (tokens, scores, beams) in
    NumPy; a twin runs its model, and says how its arrays come back out."""

    def ids(self, name: str, x, vocab: int) -> np.ndarray:
        """Checked (B, T) token ids as an int64 NumPy array."""
        return check_ids(name, x, vocab, ndim=2).astype(np.int64)

    def array(self, x) -> np.ndarray:
        return np.asarray(x)

    def device_memory(self, model) -> int | None:
        """The bytes of the memory holding the model's arrays apart from this machine's: None."""
        return None

    def source(self, model, src, repeat: int):
        """(memory, src_mask) of src (B, S) ids, each row repeated `repeat` times (beams)."""
        pad = model.config.pad_id
        src_mask = None if pad is None else padding_mask(src, pad)      # (B, 1, 1, S)
        memory = np.repeat(model.encode(src, src_mask), repeat, axis=0)  # (B*K, S, D)
        if src_mask is not None:
            src_mask = np.repeat(src_mask, repeat, axis=0)              # (B*K, 1, 1, S)
        return memory, src_mask

    def run(self, stepper: "Stepper", ids: np.ndarray, offset: int):
        """Logits (N, T, V) of the model for ids (N, T) at positions offset.. (caches updated), under
        the causal mask (1, 1, T, offset + T); (N, 1, V), the last position's, for a model switched
        to npformer.fast.last_logits (only `last` reads them)."""
        m = stepper.model
        mask = causal_mask(ids.shape[1], offset + ids.shape[1])         # (1, 1, T, offset + T)
        with last_position_only(m):
            if stepper.memory is not None or _is_seq2seq(m):
                return m.decode(ids, stepper.memory, stepper.src_mask, mask,
                                caches=stepper.caches, offset=offset)
            if stepper.caches is None:
                return m(ids, mask)
            return m(ids, mask, caches=stepper.caches, offset=offset)

    def last(self, logits):
        """The last position's logits (N, V) and their float64 log-probabilities, as NumPy."""
        last = logits[:, -1]                                            # (N, V)
        return last, log_probs(last.astype(np.float64))

    def reorder(self, caches, index: np.ndarray) -> None:
        reorder_caches(caches, index)

    def output(self, x: np.ndarray, stepper=None):
        """A result array as this twin returns it (NumPy: as it is)."""
        return x


NUMPY_STEP = NumpyDecodeStep()


class Stepper:
    """Feeds a growing (N, p) prefix to the model and returns the next-token logits and float64
    log-probabilities, (N, V) NumPy arrays each; `step` (NumpyDecodeStep or TorchDecodeStep) runs the model."""

    def __init__(self, step, model, use_cache: bool, memory=None, src_mask=None):
        self.step, self.model, self.use_cache = step, model, use_cache
        self.memory, self.src_mask = memory, src_mask                   # (N, S, D), (N, 1, 1, S)
        self.caches = new_caches(model) if use_cache else None
        self.fed = 0                                                    # positions in the caches

    def __call__(self, seq: np.ndarray, p: int):
        if self.use_cache:
            new = seq[:, self.fed:p]                                    # (N, p - fed) unseen tokens
            logits = self.step.run(self, new, self.fed)                # (N, p - fed, V)
            self.fed = p
        else:
            logits = self.step.run(self, seq[:, :p], 0)                # (N, p, V)
        return self.step.last(logits)                                  # (N, V), (N, V) float64

    def reorder(self, index: np.ndarray) -> None:
        if self.caches is not None:
            self.step.reorder(self.caches, index)


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


def _is_seq2seq(model) -> bool:
    return hasattr(model, "encode") and hasattr(model, "decode")


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
    vocab = c.tgt_vocab if _is_seq2seq(model) else c.vocab_size
    if eos_id is not None and (isinstance(eos_id, bool) or not isinstance(eos_id, (int, np.integer))
                               or not 0 <= eos_id < vocab):
        raise ValueError(f"eos_id: expected None or a token id in [0, {vocab}), got {eos_id!r}")
    if not isinstance(use_cache, bool):
        raise TypeError(f"use_cache: expected a bool, got {use_cache!r}")
    if _is_seq2seq(model):
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
                src.shape[1] if _is_seq2seq(model) else 0, use_cache,
                "src" if _is_seq2seq(model) else "prompts")
    if _is_seq2seq(model):
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
    V = c.tgt_vocab if _is_seq2seq(model) else c.vocab_size
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
    vocab = c.tgt_vocab if _is_seq2seq(model) else c.vocab_size
    if suppress_ids is None:
        ids = [] if c.pad_id is None else [c.pad_id]
        if _is_seq2seq(model):
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


# ---------------------------------------------------------------------------------------------------
# greedy
# ---------------------------------------------------------------------------------------------------
def greedy_decode(model, inputs, *, max_new_tokens: int | None = None, use_cache: bool = True,
                  eos_id: int | None = EOS, bos_id: int = BOS, prompt_lengths=None,
                  suppress_ids=None, stop=None) -> GenerateOutput:
    """Pick the most probable token at every step, for the whole batch at once.

    model           npformer Transformer (inputs = src (B, S) ids, PAD-padded) or CausalLM
                    (inputs = prompts (B, P), right-padded with pad_id)
    max_new_tokens  generated tokens at most (default: as many as max_len allows)
    use_cache       True: feed only the new token with the per-layer KV caches; False: the whole
                    prefix every step (same tokens, same logits to rounding)
    eos_id          ends a row (None: every row runs to max_new_tokens)
    bos_id          the decoder's first token (Transformer)
    prompt_lengths  (B,) CausalLM prompt lengths (default: the non-pad_id tokens of each row)
    suppress_ids    token ids never chosen (default: PAD, and BOS for a Transformer; their logits
                    count in the scores); stop: npformer.decoding.stop.StopStrings ends rows early
    """
    return decode_loop(model, inputs, argmax, max_new_tokens=max_new_tokens, use_cache=use_cache,
                       eos_id=eos_id, bos_id=bos_id, prompt_lengths=prompt_lengths,
                       suppress_ids=suppress_ids, stop=stop)


def argmax(allowed: np.ndarray) -> np.ndarray:
    """Greedy's choice: the most probable allowed token of each row, (B, V) -> (B,)."""
    return allowed.argmax(axis=-1)


def decode_loop(model, inputs, pick, *, max_new_tokens: int | None, use_cache: bool,
                eos_id: int | None, bos_id: int, prompt_lengths, suppress_ids,
                step=NUMPY_STEP, stop=None) -> GenerateOutput:
    """The step loop of greedy decoding and sampling, in both twins (step: NUMPY_STEP or TORCH_STEP):
    one token per row per step, `pick(allowed)` choosing it from the logits (B, V) (NumPy) with
    suppressed ids at -inf; `stop(tokens, lengths, rows)` (B,) bool ends rows early
    (npformer.decoding.stop). Outputs come back as the twin's arrays."""
    check_decodable(model, step)
    if stop is not None and not callable(stop):
        raise TypeError(f"stop: expected StopStrings(stops, tokenizer.decode) or None, got {type(stop).__name__}")
    was_training = model.training
    model.eval()
    try:
        stepper, seq, start, N, B = setup_decoding(model, inputs, max_new_tokens, prompt_lengths,
                                                   bos_id, 1, use_cache, eos_id, step)
        banned = suppressed_ids(model, suppress_ids, bos_id)
        rows = np.arange(B)                                                     # (B,)
        finished = np.zeros(B, dtype=bool)                                      # (B,)
        scores = np.zeros(B, dtype=np.float64)                                  # (B,)
        lengths = np.zeros(B, dtype=np.int64)                                   # (B,)
        tokens = np.full((B, N), PAD, dtype=np.int64)                           # (B, N)
        out_logits = None
        for p in range(int(start.min()), int(start.max()) + N):
            logits, all_logp = stepper(seq, p)                                  # (B, V) each
            if out_logits is None:
                if len(banned) >= logits.shape[-1]:
                    raise ValueError(f"suppress_ids: leaves no token to choose (all "
                                     f"{logits.shape[-1]} ids suppressed)")
                out_logits = np.zeros((B, N, logits.shape[-1]), dtype=logits.dtype)  # (B, N, V)
            g = p - start                                                       # (B,) generated index
            gen = (g >= 0) & (g < N)                                            # (B,) rows generating
            allowed = logits.copy()                                             # (B, V)
            allowed[:, banned] = -np.inf                                        # never PAD / BOS
            choice = pick(allowed)                                              # (B,)
            logp = all_logp[rows, choice]                                       # (B,)
            live = gen & ~finished                                              # (B,)
            gi = np.clip(g, 0, N - 1)                                           # (B,)
            out_logits[rows[gen], gi[gen]] = logits[gen]                        # (B, N, V)
            tokens[rows[live], gi[live]] = choice[live]
            scores += np.where(live, logp, 0.0)
            lengths += live
            if eos_id is not None:
                finished |= live & (choice == eos_id)
            finished |= gen & (g == N - 1)                                      # budget used up
            if stop is not None and (live & ~finished).any():
                finished |= stop(tokens, lengths, live & ~finished)             # stop strings
            fed = np.where(g < 0, seq[:, p], choice)                            # prompt forces
            fed = np.where(finished & (g >= 0), EOS if eos_id is None else eos_id, fed)
            seq[:, p] = fed
            if finished.all():
                break
    finally:
        model.train(was_training)
    return GenerateOutput(*(step.output(x, stepper) for x in (tokens, lengths, scores, out_logits)))
