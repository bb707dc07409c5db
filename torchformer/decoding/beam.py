"""Beam search for torchformer models: npformer's beam search (npformer.decoding.beam: the rules, the
arguments, the outputs), with the torch step of torchformer.decoding.generate; torch tensors on the
model's device come back. Runs under torch.no_grad()."""
from __future__ import annotations

import torch

from npformer.data.vocab import BOS, EOS
from npformer.decoding.beam import beam_loop, check_beam_args
from npformer.decoding.generate import BeamOutput
from torchformer.decoding.generate import TORCH_STEP

__all__ = ["beam_search"]


@torch.no_grad()
def beam_search(model, inputs, *, beam_size: int = 4, length_penalty_alpha: float = 0.6,
                max_new_tokens: int | None = None, use_cache: bool = True, eos_id: int | None = EOS,
                bos_id: int = BOS, prompt_lengths=None, suppress_ids=None,
                early_stopping: bool = True, stop=None) -> BeamOutput:
    """Beam search with the GNMT length penalty (see npformer.decoding.beam.beam_search)."""
    return beam_loop(model, inputs, *check_beam_args(beam_size, length_penalty_alpha, early_stopping),
                     max_new_tokens=max_new_tokens, use_cache=use_cache, eos_id=eos_id,
                     bos_id=bos_id, prompt_lengths=prompt_lengths, suppress_ids=suppress_ids,
                     early_stopping=early_stopping, step=TORCH_STEP, stop=stop)
