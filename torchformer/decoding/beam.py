"""Beam search for torchformer models: the twin of npformer.decoding.beam (the same rules, arguments
and outputs, torch tensors on the model's device). Runs under torch.no_grad(); no Python loop runs over
the batch or the beams."""
from __future__ import annotations

import numpy as np
import torch

from npformer.data.vocab import BOS, EOS, PAD
from torchformer.decoding.generate import BeamOutput, length_penalty, setup_decoding, suppressed_ids

__all__ = ["beam_search"]


@torch.no_grad()
def beam_search(model, inputs, *, beam_size: int = 4, length_penalty_alpha: float = 0.6,
                max_new_tokens: int | None = None, use_cache: bool = True, eos_id: int | None = EOS,
                bos_id: int = BOS, prompt_lengths=None, suppress_ids=None,
                early_stopping: bool = True) -> BeamOutput:
    """Beam search with the GNMT length penalty (see npformer.decoding.beam.beam_search)."""
    if isinstance(beam_size, bool) or not isinstance(beam_size, (int, np.integer)) or beam_size < 1:
        raise ValueError(f"beam_size: expected an int >= 1, got {beam_size!r}")
    alpha = length_penalty_alpha
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 <= alpha < np.inf:
        raise ValueError(f"length_penalty_alpha: expected a float >= 0, got {alpha!r}")
    K = int(beam_size)
    was_training = model.training
    model.eval()
    try:
        stepper, seq, start, N, B = setup_decoding(model, inputs, max_new_tokens, prompt_lengths, bos_id, K,
                                           use_cache, eos_id)
        banned = suppressed_ids(model, suppress_ids, bos_id)
        out = _beam_loop(stepper, seq, start, N, B, K, float(alpha), eos_id, banned,
                         bool(early_stopping))
    finally:
        model.train(was_training)
    return out


def _beam_loop(stepper, seq, start, N, B, K, alpha, eos_id, banned, early) -> BeamOutput:
    dev = seq.device
    f64 = torch.float64
    ninf = float("-inf")
    total = seq.shape[1]
    bi = torch.arange(B, device=dev)[:, None]                               # (B, 1)
    seq = seq.reshape(B, K, total)                                          # (B, K, total)
    alive = torch.full((B, K), ninf, dtype=f64, device=dev)                 # (B, K) raw scores
    alive[:, 0] = 0.0
    gen = torch.full((B, K, N), PAD, dtype=torch.int64, device=dev)         # (B, K, N)
    fin_tok = torch.full((B, K, N), PAD, dtype=torch.int64, device=dev)     # (B, K, N)
    fin_len = torch.zeros((B, K), dtype=torch.int64, device=dev)            # (B, K)
    fin_score = torch.full((B, K), ninf, dtype=f64, device=dev)             # (B, K)
    done = torch.zeros(B, dtype=torch.bool, device=dev)                     # (B,)
    bound_lp = float(length_penalty(N, alpha))
    state = {"tok": fin_tok, "len": fin_len, "score": fin_score}

    def store(cand_tok, cand_len, cand_score):
        cand_score = torch.where(done[:, None], torch.full_like(cand_score, ninf), cand_score)
        all_s = torch.cat([state["score"], cand_score], dim=1)              # (B, K + M)
        order = torch.sort(-all_s, dim=1, stable=True).indices[:, :K]       # (B, K)
        state["score"] = all_s.gather(1, order)
        state["len"] = torch.cat([state["len"], cand_len], dim=1).gather(1, order)
        state["tok"] = torch.cat([state["tok"], cand_tok], dim=1)[bi, order]  # (B, K, N)

    for p in range(int(start.min()), total):
        logits = stepper(seq.reshape(B * K, total), p)                      # (B*K, V)
        V = logits.shape[-1]
        logp = torch.log_softmax(logits.to(f64), dim=-1).reshape(B, K, V)   # (B, K, V)
        logp[:, :, banned] = ninf                                           # never PAD / BOS
        g = p - start                                                       # (B,)
        forced = g < 0                                                      # (B,)
        if bool(forced.any()):
            onehot = torch.arange(V, device=dev)[None, None, :] == seq[:, :, p][:, :, None]
            only = torch.where(onehot, torch.zeros_like(logp), torch.full_like(logp, ninf))
            logp = torch.where(forced[:, None, None], only, logp)
        cand = (alive[:, :, None] + logp).reshape(B, K * V)                 # (B, K*V)
        M = min(2 * K, K * V)
        srt = torch.sort(-cand, dim=1, stable=True)
        order = srt.indices[:, :M]                                          # (B, M)
        top = cand.gather(1, order)                                         # (B, M)
        src_beam, tok = order // V, order % V                               # (B, M)
        if eos_id is not None:
            is_eos = (tok == eos_id) & ~forced[:, None]                     # (B, M)
        else:
            is_eos = torch.zeros_like(tok, dtype=torch.bool)
        gi = g.clamp(0, N - 1)                                              # (B,)
        new_fin = is_eos & (torch.arange(M, device=dev)[None, :] < K) & torch.isfinite(top)
        if bool(new_fin.any()):
            hyp = gen[bi, src_beam].clone()                                 # (B, M, N)
            hyp[bi, torch.arange(M, device=dev)[None, :], gi[:, None]] = eos_id
            hyp_len = (gi[:, None] + 1).expand(B, M)                        # (B, M)
            norm = top / length_penalty(hyp_len, alpha)                     # (B, M)
            store(hyp, hyp_len, torch.where(new_fin, norm, torch.full_like(norm, ninf)))
        keep = torch.sort(is_eos.to(torch.int8), dim=1, stable=True).indices[:, :K]  # (B, K)
        beam = src_beam.gather(1, keep)                                     # (B, K)
        new_tok = tok.gather(1, keep)                                       # (B, K)
        alive = top.gather(1, keep)                                         # (B, K)
        seq = seq[bi, beam]                                                 # (B, K, total)
        gen = gen[bi, beam]                                                 # (B, K, N)
        stepper.reorder((bi * K + beam).reshape(-1))
        seq[:, :, p] = new_tok
        writing = ~forced                                                   # (B,)
        w = torch.nonzero(writing).reshape(-1)                              # rows generating
        gen[w[:, None], torch.arange(K, device=dev)[None, :], gi[w][:, None]] = new_tok[w]
        last = ~forced & (g == N - 1) & ~done                               # (B,)
        if bool(last.any()):
            norm = alive / bound_lp
            store(gen.clone(), torch.full((B, K), N, dtype=torch.int64, device=dev),
                  torch.where(last[:, None], norm, torch.full_like(norm, ninf)))
            done |= last
        best_possible = alive.max(dim=1).values / bound_lp                  # (B,)
        worst = state["score"][:, -1]
        if early:
            done |= torch.isfinite(worst) & (best_possible <= worst)
        done |= ~torch.isfinite(alive.max(dim=1).values) & ~forced
        if bool(done.all()):
            break
    s = state
    return BeamOutput(s["tok"][:, 0], s["len"][:, 0], s["score"][:, 0], s["tok"], s["len"],
                      s["score"])
