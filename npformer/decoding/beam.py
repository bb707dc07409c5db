"""Beam search (beam_size K, beams folded into the batch as B*K rows), as greedy decoding in
npformer.decoding.generate for everything else (the models, the cache, prompts):
  * every step, each of the B items looks at its K*V candidates (beam score + log p(token)) in order;
    an EOS candidate among the top K becomes a finished hypothesis, the best K non-EOS candidates
    stay alive (the GNMT / Hugging Face rule, so beam_size=1 with length_penalty=0 is greedy);
  * finished hypotheses are kept in a per-item store of the K best, ranked by
        score / lp(L),   lp(L) = ((5 + L) / 6) ** alpha          (GNMT, Wu et al. 2016)
    with L the generated length including EOS and alpha = `length_penalty` (0: raw log-probability);
  * an item stops when its store is full and no alive beam can still beat the worst stored one
    (alive scores only fall, so the best they can reach is score / lp(max_new_tokens)); when the
    length budget runs out, alive beams enter the store without EOS;
  * with stop strings (`stop=`, npformer.decoding.stop.StopStrings), a candidate whose text is final
    (holds a stop string that more tokens cannot move) ends there as an EOS candidate does, ranked by
    its score up to that token (the text after the stop string is cut, so its tokens do not count):
    an item ends once its K best hypotheses are final and no alive beam can beat them, and gives
    the same hypotheses as the same search run to the budget (early_stopping=False).
No Python loop runs over the batch or the beams: loops are over time steps only.
"""
from __future__ import annotations

import numpy as np

from npformer.data.vocab import BOS, EOS, PAD
from npformer.decoding.generate import (
    NUMPY_STEP,
    BeamOutput,
    check_decodable,
    length_penalty,
    setup_decoding,
    suppressed_ids,
)

__all__ = ["beam_search", "check_beam_args", "beam_loop"]


def beam_search(model, inputs, *, beam_size: int = 4, length_penalty_alpha: float = 0.6,
                max_new_tokens: int | None = None, use_cache: bool = True, eos_id: int | None = EOS,
                bos_id: int = BOS, prompt_lengths=None, suppress_ids=None,
                early_stopping: bool = True, stop=None) -> BeamOutput:
    """Beam search with GNMT length penalty; see the module docstring for the exact rules.

    beam_size K >= 1; length_penalty_alpha >= 0 (0: rank by summed log-probability); the other
    arguments as in greedy_decode.
    early_stopping  stop an item as soon as no alive beam can beat its K stored hypotheses (the bound
                    is exact, so this never changes the result); False runs every item to the budget.
    stop            npformer.decoding.stop.StopStrings: a hypothesis whose text is final ends there
    """
    return beam_loop(model, inputs, *check_beam_args(beam_size, length_penalty_alpha, early_stopping),
                     max_new_tokens=max_new_tokens, use_cache=use_cache, eos_id=eos_id,
                     bos_id=bos_id, prompt_lengths=prompt_lengths, suppress_ids=suppress_ids,
                     early_stopping=early_stopping, stop=stop)


def check_beam_args(beam_size, length_penalty_alpha, early_stopping=True) -> tuple[int, float]:
    if not isinstance(early_stopping, bool):        # "no" is truthy: it would stop early anyway
        raise TypeError(f"early_stopping: expected a bool, got {early_stopping!r}")
    if isinstance(beam_size, bool) or not isinstance(beam_size, (int, np.integer)) or beam_size < 1:
        raise ValueError(f"beam_size: expected an int >= 1, got {beam_size!r}")
    alpha = length_penalty_alpha
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.integer, np.floating)) \
            or not 0 <= alpha < np.inf:
        raise ValueError(f"length_penalty_alpha: expected a float >= 0, got {alpha!r}")
    return int(beam_size), float(alpha)


def beam_loop(model, inputs, K: int, alpha: float, *, max_new_tokens, use_cache, eos_id, bos_id,
              prompt_lengths, suppress_ids, early_stopping, step=NUMPY_STEP, stop=None) -> BeamOutput:
    """The beam search of both twins (step: NUMPY_STEP here, torchformer's TORCH_STEP): bookkeeping in NumPy,
    the model run by `step`; outputs come back as the twin's arrays."""
    check_decodable(model, step)
    if stop is not None and not callable(stop):
        raise TypeError(f"stop: expected StopStrings(stops, tokenizer.decode) or None, got {type(stop).__name__}")
    was_training = model.training
    model.eval()
    try:
        stepper, seq, start, N, B = setup_decoding(model, inputs, max_new_tokens, prompt_lengths,
                                                   bos_id, K, use_cache, eos_id, step)
        banned = suppressed_ids(model, suppress_ids, bos_id)
        out = _search(stepper, seq, start, N, B, K, alpha, eos_id, banned, bool(early_stopping), stop)
    finally:
        model.train(was_training)
    return BeamOutput(*(step.output(x, stepper) for x in out))


def _search(stepper, seq, start, N, B, K, alpha, eos_id, banned, early, stop) -> BeamOutput:
    total = seq.shape[1]
    bi = np.arange(B)[:, None]                                              # (B, 1) item index
    seq = seq.reshape(B, K, total)                                          # (B, K, total)
    alive = np.full((B, K), -np.inf)                                        # (B, K) raw scores
    alive[:, 0] = 0.0                                                       # one live beam at first
    gen = np.full((B, K, N), PAD, dtype=np.int64)                           # (B, K, N) generated
    fin_tok = np.full((B, K, N), PAD, dtype=np.int64)                       # (B, K, N) finished store
    fin_len = np.zeros((B, K), dtype=np.int64)                              # (B, K)
    fin_score = np.full((B, K), -np.inf)                                    # (B, K) normalised
    done = np.zeros(B, dtype=bool)                                          # (B,)
    bound_lp = float(length_penalty(N, alpha))

    def store(cand_tok, cand_len, cand_score):
        """Merge candidates (B, M, N), (B, M), (B, M) into the K-best store (done items frozen)."""
        nonlocal fin_tok, fin_len, fin_score
        cand_score = np.where(done[:, None], -np.inf, cand_score)           # (B, M)
        all_s = np.concatenate([fin_score, cand_score], axis=1)             # (B, K + M)
        order = np.argsort(-all_s, axis=1, kind="stable")[:, :K]            # (B, K) best first
        fin_score = np.take_along_axis(all_s, order, axis=1)                # (B, K)
        fin_len = np.take_along_axis(np.concatenate([fin_len, cand_len], 1), order, axis=1)
        fin_tok = np.concatenate([fin_tok, cand_tok], axis=1)[bi, order]    # (B, K, N)

    for p in range(int(start.min()), total):
        _, logp = stepper(seq.reshape(B * K, total), p)                     # (B*K, V) float64
        V = logp.shape[-1]
        logp = logp.reshape(B, K, V)                                        # (B, K, V)
        logp[:, :, banned] = -np.inf                                        # never PAD / BOS
        g = p - start                                                       # (B,) generated index
        forced = g < 0                                                      # (B,) inside the prompt
        if forced.any():                                                    # only the prompt token
            onehot = np.arange(V)[None, None, :] == seq[:, :, p][:, :, None]  # (B, K, V)
            logp = np.where(forced[:, None, None], np.where(onehot, 0.0, -np.inf), logp)
        cand = (alive[:, :, None] + logp).reshape(B, K * V)                 # (B, K*V)
        M = min(2 * K, K * V)
        order = np.argsort(-cand, axis=1, kind="stable")[:, :M]             # (B, M) best first
        top = np.take_along_axis(cand, order, axis=1)                       # (B, M)
        src_beam, tok = order // V, order % V                               # (B, M) each
        is_eos = (tok == eos_id) & ~forced[:, None] if eos_id is not None else \
            np.zeros_like(tok, dtype=bool)                                  # (B, M)
        gi = np.clip(g, 0, N - 1)                                           # (B,)
        hyp_len = np.broadcast_to(gi[:, None] + 1, (B, M))                  # (B, M)
        final = _final(stop, gen, bi, src_beam, tok, gi, hyp_len,
                       ~is_eos & ~forced[:, None] & ~done[:, None] & np.isfinite(top))  # (B, M)
        ends = is_eos | final                                               # (B, M)
        # hypotheses ending here: EOS (or a final stop string) ranked among the top K
        new_fin = ends & (np.arange(M)[None, :] < K) & np.isfinite(top)     # (B, M)
        if new_fin.any():
            hyp = gen[bi, src_beam]                                         # (B, M, N)
            hyp[np.arange(B)[:, None], np.arange(M)[None, :], gi[:, None]] = np.where(is_eos, eos_id or 0, tok)
            norm = top / length_penalty(hyp_len, alpha)                     # (B, M)
            store(hyp, hyp_len, np.where(new_fin, norm, -np.inf))
        # the K best non-EOS, non-final candidates stay alive (a final one kept for want of others
        # is dead: its text is already cut)
        keep = np.argsort(ends, axis=1, kind="stable")[:, :K]               # (B, K) positions in M
        beam = np.take_along_axis(src_beam, keep, axis=1)                   # (B, K) parent beams
        new_tok = np.take_along_axis(tok, keep, axis=1)                     # (B, K)
        alive = np.where(np.take_along_axis(final, keep, axis=1), -np.inf,
                         np.take_along_axis(top, keep, axis=1))             # (B, K)
        seq = seq[bi, beam]                                                 # (B, K, total)
        gen = gen[bi, beam]                                                 # (B, K, N)
        stepper.reorder((bi * K + beam).reshape(-1))                        # caches follow
        seq[:, :, p] = new_tok
        writing = ~forced                                                   # (B,)
        gen[np.arange(B)[writing], :, gi[writing]] = new_tok[writing]
        # budget used up: alive beams become hypotheses (no EOS)
        last = ~forced & (g == N - 1) & ~done                               # (B,)
        if last.any():
            norm = alive / bound_lp                                         # (B, K)
            store(gen.copy(), np.full((B, K), N), np.where(last[:, None], norm, -np.inf))
            done |= last
        # an item is done when its store is full and no alive beam can beat the worst kept one
        best_possible = alive.max(axis=1) / bound_lp                        # (B,)
        if early:
            done |= np.isfinite(fin_score[:, -1]) & (best_possible <= fin_score[:, -1])
        done |= ~np.isfinite(alive.max(axis=1)) & ~forced                   # nothing left alive
        if done.all():
            break
    return BeamOutput(fin_tok[:, 0], fin_len[:, 0], fin_score[:, 0], fin_tok, fin_len, fin_score)


def _final(stop, gen, bi, src_beam, tok, gi, hyp_len, check) -> np.ndarray:
    """(B, M) bool: the candidates (parent beam's tokens + tok) whose text is final for `stop`
    (only where `check`); all False without stop strings."""
    if stop is None or not check.any():
        return np.zeros(check.shape, dtype=bool)
    B, M = check.shape
    hyp = gen[bi, src_beam]                                                 # (B, M, N)
    hyp[np.arange(B)[:, None], np.arange(M)[None, :], gi[:, None]] = tok
    N = hyp.shape[-1]
    return stop(hyp.reshape(B * M, N), hyp_len.reshape(-1), check.reshape(-1)).reshape(B, M)
