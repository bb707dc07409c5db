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

Beam search: npformer.decoding.beam; the step and the common checks: npformer.decoding.step and
npformer.decoding.setup. Both twins run these loops: the bookkeeping (tokens, scores, beams) is NumPy,
and a twin supplies the step, "logits and log-probabilities of the next token":
NumpyDecodeStep (npformer.decoding.step), torchformer.decoding.generate.TorchDecodeStep for torch models
(whose logits cross to the host once per step; the outputs go back to the model's device).
No Python loop runs over the batch or the beams: loops are over time steps only.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from npformer.data.vocab import BOS, EOS, PAD
from npformer.decoding.setup import (  # (re-exported: the loops' public names)
    check_decodable,
    check_source_eos,
    setup_decoding,
    suppressed_ids,
)
from npformer.decoding.step import (
    NUMPY_STEP,
    NumpyDecodeStep,
    Stepper,
    new_caches,
    reorder_caches,
)

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
