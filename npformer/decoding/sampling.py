"""Sampling from a language model: temperature, top-k, top-p (nucleus), a seeded generator.

Every step takes the next-token logits z (N, V) of every row (the key/value cache feeds only the new
token, as in npformer.decoding.generate) and draws one token per row:

    z      = (z - max z) / temperature           T < 1 sharpens, T > 1 flattens; T -> 0 is greedy
           (the shift changes no probability and keeps a tiny T from overflowing to NaN)
    top-k  keep the k largest logits, the rest -> -inf (ties go to the lower id, as argmax does,
           so top_k=1 IS greedy decoding)
    top-p  p = softmax(z), sorted from the most probable down; keep the shortest head whose mass
           reaches top_p (a token is kept when the mass BEFORE it is < top_p; the first always is)
    p      = softmax(z) over what is kept (float64)
    token  inverse CDF: the first id whose cumulative probability exceeds u * sum(p), where
           u ~ U[0, 1) comes from the caller's numpy.random.Generator (never the global RNG)

One u is drawn per row per step, also for the steps where a row is still inside its prompt, so the
tokens a seed gives do not depend on use_cache. The reported
scores are log-probabilities under the model's own distribution (softmax of the raw logits), as in
greedy_decode, so they compare across sampling settings. Prompts, padding, suppressed ids and EOS
handling are those of npformer.decoding.generate.greedy_decode.
"""
from __future__ import annotations

import numpy as np

from npformer.data.vocab import BOS, EOS
from npformer.decoding.generate import GenerateOutput, decode_loop
from npformer.guards.rules import check_seed

__all__ = ["sample", "filter_logits", "sampling_probs", "choose", "check_sampling_args"]


def check_sampling_args(temperature, top_k, top_p) -> tuple[float, int | None, float | None]:
    """Validated (temperature > 0, top_k None or int >= 1, top_p None or in (0, 1])."""
    if isinstance(temperature, bool) \
            or not isinstance(temperature, (int, float, np.integer, np.floating)) \
            or not 0.0 < float(temperature) < np.inf:
        raise ValueError(f"temperature: expected a finite float > 0 (use greedy_decode or "
                         f"top_k=1 for greedy), got {temperature!r}")
    if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer))
                              or top_k < 1):
        raise ValueError(f"top_k: expected None or an int >= 1, got {top_k!r}")
    if top_p is not None and (isinstance(top_p, bool)
                              or not isinstance(top_p, (int, float, np.integer, np.floating))
                              or not 0.0 < float(top_p) <= 1.0):
        raise ValueError(f"top_p: expected None or a float in (0, 1], got {top_p!r}")
    return float(temperature), (None if top_k is None else int(top_k)), \
        (None if top_p is None else float(top_p))


def filter_logits(logits: np.ndarray, temperature: float = 1.0, top_k: int | None = None,
                  top_p: float | None = None) -> np.ndarray:
    """Scaled and filtered logits (N, V) float64, each row shifted so its best is 0 before the
    scaling; removed tokens are -inf (see the module doc)."""
    temperature, top_k, top_p = check_sampling_args(temperature, top_k, top_p)
    x = np.asarray(logits, dtype=np.float64)                               # (N, V)
    m = x.max(axis=-1, keepdims=True)                                      # (N, 1)
    # shift by the row's max before scaling: softmax ignores the shift, and a tiny temperature can
    # then only push logits to -inf (probability 0), never to +inf (inf - inf = NaN)
    with np.errstate(over="ignore"):                                       # -> -inf: p = 0
        z = (x - np.where(np.isfinite(m), m, 0.0)) / temperature           # (N, V) max 0
    V = z.shape[-1]
    order = np.argsort(-x, axis=-1, kind="stable")                         # (N, V) best first
    rank = np.empty_like(order)                                            # (N, V) rank of each id
    np.put_along_axis(rank, order, np.arange(V)[None, :].repeat(z.shape[0], 0), axis=-1)
    if top_k is not None and top_k < V:
        z = np.where(rank < top_k, z, -np.inf)                             # (N, V)
    if top_p is not None and top_p < 1.0:
        p = _softmax(z)                                                    # (N, V)
        p_sorted = np.take_along_axis(p, order, axis=-1)                   # (N, V) descending
        before = np.cumsum(p_sorted, axis=-1) - p_sorted                   # (N, V) mass before
        keep_sorted = (before < top_p) | (np.arange(V)[None, :] == 0)      # (N, V)
        keep = np.take_along_axis(keep_sorted, rank, axis=-1)              # (N, V) back to ids
        z = np.where(keep, z, -np.inf)
    return z


def _softmax(z: np.ndarray) -> np.ndarray:
    """Softmax over the last axis; -inf entries get probability 0 (a row keeps >= 1 finite)."""
    m = z.max(axis=-1, keepdims=True)                                      # (N, 1)
    e = np.exp(z - m)                                                      # (N, V)
    return e / e.sum(axis=-1, keepdims=True)                               # (N, V)


def sampling_probs(logits: np.ndarray, temperature: float = 1.0, top_k: int | None = None,
                   top_p: float | None = None) -> np.ndarray:
    """(N, V) float64: the distribution a token is drawn from."""
    return _softmax(filter_logits(logits, temperature, top_k, top_p))


def choose(probs: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Inverse CDF: (N,) ids, the first whose cumulative probability exceeds u * row sum.
    probs (N, V) >= 0, u (N,) in [0, 1). A zero-probability id is never chosen."""
    cdf = np.cumsum(probs, axis=-1)                                        # (N, V)
    target = u * cdf[:, -1]                                                # (N,)
    idx = (cdf <= target[:, None]).sum(axis=-1)                            # (N,) ids below target
    return np.minimum(idx, probs.shape[-1] - 1)                            # (N,)


def _generator(seed, generator) -> np.random.Generator:
    if generator is not None:
        if seed is not None:
            raise ValueError("seed: give either seed or generator, not both")
        if not isinstance(generator, np.random.Generator):
            raise TypeError(f"generator: expected a numpy.random.Generator, got "
                            f"{type(generator).__name__}")
        return generator
    if seed is None:
        seed = 0
    return np.random.default_rng(check_seed(seed))


def sample(model, prompts, *, max_new_tokens: int | None = None, temperature: float = 1.0,
           top_k: int | None = None, top_p: float | None = None, seed: int | None = None,
           generator: np.random.Generator | None = None, use_cache: bool = True,
           eos_id: int | None = EOS, prompt_lengths=None, suppress_ids=None,
           stop=None) -> GenerateOutput:
    """Continue `prompts` (B, P) (right-padded with pad_id) by sampling; returns GenerateOutput.

    model        npformer CausalLM (a Transformer works too: prompts are then its sources)
    temperature, top_k, top_p   see the module docstring (top_k=1: greedy, token for token)
    seed / generator            where u ~ U[0, 1) comes from: numpy.random.default_rng(seed)
                                (default seed 0) or the given Generator (advanced in place)
    max_new_tokens, use_cache, eos_id, prompt_lengths, suppress_ids, stop   as in greedy_decode
    """
    temperature, top_k, top_p = check_sampling_args(temperature, top_k, top_p)
    rng = _generator(seed, generator)

    def draw(allowed: np.ndarray) -> np.ndarray:                                # (B, V) -> (B,)
        u = rng.random(allowed.shape[0])                                        # (B,) every step
        return choose(sampling_probs(allowed.astype(np.float64), temperature, top_k, top_p), u)
    return decode_loop(model, prompts, draw, max_new_tokens=max_new_tokens, use_cache=use_cache,
                       eos_id=eos_id, bos_id=BOS, prompt_lengths=prompt_lengths,
                       suppress_ids=suppress_ids, stop=stop)
