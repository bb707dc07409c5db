"""Sampling from a language model: the twin of npformer/sampling.py (same functions, arguments and
rules; torch tensors on the model's device). u ~ U[0, 1) comes from a torch.Generator seeded by the
caller (never the global RNG), so a seed fixes the tokens in this twin; the twins draw different u
streams, so their sampled tokens agree only where the choice does not depend on u (top_k=1, or
what parity_tests/test_sampling_parity.py checks: the same probabilities and the same choice for
the same u).
"""
from __future__ import annotations

import torch

from npformer.data.vocab import BOS, EOS, PAD
from npformer.decoding.sampling import check_sampling_args
from torchformer.decoding.generate import GenerateOutput, setup_decoding, suppressed_ids

__all__ = ["sample", "filter_logits", "sampling_probs", "choose", "check_sampling_args"]


def filter_logits(logits: torch.Tensor, temperature: float = 1.0, top_k: int | None = None,
                  top_p: float | None = None) -> torch.Tensor:
    """Scaled and filtered logits (N, V) float64, each row shifted so its best is 0 before the
    scaling; removed tokens are -inf."""
    temperature, top_k, top_p = check_sampling_args(temperature, top_k, top_p)
    x = logits.to(torch.float64)                                           # (N, V)
    m = x.max(dim=-1, keepdim=True).values                                 # (N, 1)
    # shifted before scaling, as npformer's: a tiny temperature cannot overflow to NaN
    z = (x - torch.where(torch.isfinite(m), m, torch.zeros_like(m))) / temperature  # (N, V)
    N, V = z.shape
    order = torch.sort(-x, dim=-1, stable=True).indices                    # (N, V) best first
    ar = torch.arange(V, device=z.device).expand(N, V)                     # (N, V)
    rank = torch.empty_like(order).scatter_(-1, order, ar)                 # (N, V) rank of each id
    ninf = torch.full_like(z, float("-inf"))
    if top_k is not None and top_k < V:
        z = torch.where(rank < top_k, z, ninf)                             # (N, V)
    if top_p is not None and top_p < 1.0:
        p = torch.softmax(z, dim=-1)                                       # (N, V)
        p_sorted = p.gather(-1, order)                                     # (N, V) descending
        before = torch.cumsum(p_sorted, dim=-1) - p_sorted                 # (N, V) mass before
        keep_sorted = (before < top_p) | (ar == 0)                         # (N, V)
        keep = keep_sorted.gather(-1, rank)                                # (N, V) back to ids
        z = torch.where(keep, z, ninf)
    return z


def sampling_probs(logits: torch.Tensor, temperature: float = 1.0, top_k: int | None = None,
                   top_p: float | None = None) -> torch.Tensor:
    """(N, V) float64: the distribution a token is drawn from."""
    return torch.softmax(filter_logits(logits, temperature, top_k, top_p), dim=-1)


def choose(probs: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """Inverse CDF: (N,) ids, the first whose cumulative probability exceeds u * row sum."""
    cdf = torch.cumsum(probs, dim=-1)                                      # (N, V)
    target = u.to(cdf.dtype) * cdf[:, -1]                                  # (N,)
    idx = (cdf <= target[:, None]).sum(dim=-1)                             # (N,)
    return idx.clamp(max=probs.shape[-1] - 1)                              # (N,)


def _generator(seed, generator, device) -> torch.Generator:
    if generator is not None:
        if seed is not None:
            raise ValueError("seed: give either seed or generator, not both")
        if not isinstance(generator, torch.Generator):
            raise TypeError(f"generator: expected a torch.Generator, got "
                            f"{type(generator).__name__}")
        if generator.device.type != torch.device(device).type:
            raise ValueError(f"generator: expected a generator on {device}, got one on "
                             f"{generator.device}")
        return generator
    if seed is None:
        seed = 0
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed: expected an int >= 0, got {seed!r}")
    g = torch.Generator(device=device)
    g.manual_seed(int(seed))
    return g


@torch.no_grad()
def sample(model, prompts, *, max_new_tokens: int | None = None, temperature: float = 1.0,
           top_k: int | None = None, top_p: float | None = None, seed: int | None = None,
           generator: torch.Generator | None = None, use_cache: bool = True,
           eos_id: int | None = EOS, prompt_lengths=None, suppress_ids=None) -> GenerateOutput:
    """Continue `prompts` (B, P) by sampling (see npformer.decoding.sampling.sample)."""
    temperature, top_k, top_p = check_sampling_args(temperature, top_k, top_p)
    gen_rng = _generator(seed, generator, model.device)
    was_training = model.training
    model.eval()
    try:
        stepper, seq, start, N, B = setup_decoding(model, prompts, max_new_tokens, prompt_lengths, BOS, 1,
                                           use_cache)
        banned = suppressed_ids(model, suppress_ids, BOS)
        dev = seq.device
        rows = torch.arange(B, device=dev)                                      # (B,)
        finished = torch.zeros(B, dtype=torch.bool, device=dev)                 # (B,)
        scores = torch.zeros(B, dtype=torch.float64, device=dev)                # (B,)
        lengths = torch.zeros(B, dtype=torch.int64, device=dev)                 # (B,)
        tokens = torch.full((B, N), PAD, dtype=torch.int64, device=dev)         # (B, N)
        fill = EOS if eos_id is None else eos_id
        out_logits = None
        for p in range(int(start.min()), int(start.max()) + N):
            logits = stepper(seq, p)                                            # (B, V)
            if out_logits is None:
                if len(banned) >= logits.shape[-1]:
                    raise ValueError(f"suppress_ids: leaves no token to sample (all "
                                     f"{logits.shape[-1]} ids suppressed)")
                out_logits = torch.zeros((B, N, logits.shape[-1]), dtype=logits.dtype, device=dev)
            u = torch.rand(B, generator=gen_rng, dtype=torch.float64, device=dev)  # (B,)
            g = p - start                                                       # (B,)
            gen = (g >= 0) & (g < N)                                            # (B,)
            allowed = logits.to(torch.float64).clone()                          # (B, V)
            allowed[:, banned] = float("-inf")                                  # never PAD
            choice = choose(sampling_probs(allowed, temperature, top_k, top_p), u)  # (B,)
            logp = torch.log_softmax(logits.to(torch.float64), dim=-1)          # (B, V)
            logp = logp.gather(1, choice[:, None])[:, 0]                        # (B,)
            live = gen & ~finished                                              # (B,)
            gi = g.clamp(0, N - 1)                                              # (B,)
            out_logits[rows[gen], gi[gen]] = logits[gen]                        # (B, N, V)
            tokens[rows[live], gi[live]] = choice[live]
            scores += torch.where(live, logp, torch.zeros_like(logp))
            lengths += live
            if eos_id is not None:
                finished |= live & (choice == eos_id)
            finished |= gen & (g == N - 1)                                      # budget used up
            fed = torch.where(g < 0, seq[:, p], choice)                         # prompt forces
            seq[:, p] = torch.where(finished & (g >= 0), torch.full_like(fed, fill), fed)
            if bool(finished.all()):
                break
    finally:
        model.train(was_training)
    return GenerateOutput(tokens, lengths, scores, out_logits)
