"""Sampling from a language model: the twin of npformer/sampling.py (same functions, arguments and
rules; torch tensors on the model's device). u ~ U[0, 1) comes from a torch.Generator seeded by the
caller (never the global RNG), so a seed fixes the tokens in this twin; the twins draw different u
streams, so their sampled tokens agree only where the choice does not depend on u (top_k=1, or
what parity_tests/test_sampling_parity.py checks: the same probabilities and the same choice for
the same u).
"""
from __future__ import annotations

import numpy as np
import torch

from npformer.data.vocab import BOS, EOS
from npformer.decoding.generate import GenerateOutput, check_decodable, decode_loop
from npformer.decoding.sampling import check_sampling_args
from npformer.guards.rules import check_seed
from torchformer.decoding.generate import TORCH_STEP

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
    g = torch.Generator(device=device)
    g.manual_seed(check_seed(seed))
    return g


@torch.no_grad()
def sample(model, prompts, *, max_new_tokens: int | None = None, temperature: float = 1.0,
           top_k: int | None = None, top_p: float | None = None, seed: int | None = None,
           generator: torch.Generator | None = None, use_cache: bool = True,
           eos_id: int | None = EOS, prompt_lengths=None, suppress_ids=None,
           stop=None) -> GenerateOutput:
    """Continue `prompts` (B, P) by sampling (see npformer.decoding.sampling.sample): npformer's
    decode loop, with u ~ U[0, 1) and the choice made by torch on the model's device."""
    check_decodable(model, TORCH_STEP)                   # before model.device is read
    temperature, top_k, top_p = check_sampling_args(temperature, top_k, top_p)
    dev = model.device
    gen_rng = _generator(seed, generator, dev)

    def draw(allowed: np.ndarray) -> np.ndarray:                                # (B, V) -> (B,)
        u = torch.rand(allowed.shape[0], generator=gen_rng, dtype=torch.float64, device=dev)
        z = torch.from_numpy(allowed).to(device=dev, dtype=torch.float64)       # (B, V)
        return choose(sampling_probs(z, temperature, top_k, top_p), u).cpu().numpy()
    return decode_loop(model, prompts, draw, max_new_tokens=max_new_tokens, use_cache=use_cache,
                       eos_id=eos_id, bos_id=BOS, prompt_lengths=prompt_lengths,
                       suppress_ids=suppress_ids, step=TORCH_STEP, stop=stop)
