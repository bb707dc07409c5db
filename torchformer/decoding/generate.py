"""Inference for torchformer models: greedy decoding, batched, cached or not (beam search:
torchformer.decoding.beam, sampling: torchformer.decoding.sampling).

The decode loops are npformer's (npformer.decoding.generate and beam: one loop for both twins, with
the rules written there: prompt forcing for CausalLM rows of different lengths, the top-K EOS rule, the
GNMT length penalty, the stopping bound). This file supplies the step: `TorchDecodeStep` runs a torchformer
model on the decoded prefix under torch.no_grad() and hands back the next-token logits and their
float64 log-probabilities (computed by torch, as before the loops were shared); the outputs come back
as torch tensors on the model's device. The same functions, arguments and outputs as npformer's.
"""
from __future__ import annotations

import numpy as np
import torch

from npformer.data.vocab import BOS, EOS
from npformer.decoding.generate import (
    BeamOutput,
    GenerateOutput,
    Stepper,
    argmax,
    check_source_eos,
    decode_loop,
    length_penalty,
    new_caches,
    suppressed_ids,
)
from npformer.decoding.generate import setup_decoding as np_setup_decoding
from torchformer.guards.validation import check_ids, device_memory
from torchformer.layers.masks import causal_mask, padding_mask
from torchformer.layers.module import run_checked
from torchformer.models.causal_lm import CausalLM
from torchformer.models.transformer import Transformer

__all__ = ["GenerateOutput", "BeamOutput", "greedy_decode", "length_penalty", "check_source_eos",
           "reorder_caches", "new_caches", "setup_decoding", "suppressed_ids", "TorchDecodeStep", "TORCH_STEP"]


def reorder_caches(caches, index) -> None:
    """Re-index every cached tensor along its batch axis (beam search follows its surviving beams)."""
    def visit(d: dict) -> None:
        for key, v in d.items():
            if isinstance(v, dict):
                visit(v)
            elif isinstance(v, torch.Tensor):
                d[key] = v.index_select(0, torch.as_tensor(index, device=v.device))  # (N, ...)
    for layer in caches:
        visit(layer)


class TorchDecodeStep:
    """The step of npformer's decode loops for torchformer models (NumpyDecodeStep' methods)."""

    def ids(self, name: str, x, vocab: int) -> np.ndarray:
        t = check_ids(name, x, vocab)                                       # (B, T) checked
        return t.detach().cpu().numpy().astype(np.int64)

    def array(self, x) -> np.ndarray:
        return x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else np.asarray(x)

    def device_memory(self, model) -> int | None:
        """A CUDA model's arrays live in its GPU's memory; None: in this machine's."""
        return device_memory(model.device)

    def source(self, model, src: np.ndarray, repeat: int):
        src = torch.from_numpy(src).to(model.device)
        pad = model.config.pad_id
        src_mask = None if pad is None else padding_mask(src, pad)         # (B, 1, 1, S)
        with torch.no_grad():
            memory = model.encode(src, src_mask).repeat_interleave(repeat, dim=0)   # (B*K, S, D)
        if src_mask is not None:
            src_mask = src_mask.repeat_interleave(repeat, dim=0)           # (B*K, 1, 1, S)
        return memory, src_mask

    def run(self, stepper: Stepper, ids: np.ndarray, offset: int):
        """Logits (N, T, V). The ids, masks, offsets and caches are the loop's own, valid by
        construction (the inputs were checked by setup_decoding), so a torchformer model runs through
        its checked body (`run_checked`) without checking them again at every step."""
        m, dev = stepper.model, stepper.model.device
        q_len, k_len = ids.shape[1], offset + ids.shape[1]
        if q_len == 1:        # one new token sees every key: one broadcastable all-True mask, the
            if not hasattr(stepper, "see_all"):                  # same tensor every step (attention
                stepper.see_all = torch.ones((1, 1, 1, 1), dtype=torch.bool, device=dev)  # skips it)
            mask = stepper.see_all
        else:
            mask = causal_mask(q_len, k_len, device=dev)                    # (1, 1, q_len, k_len)
        ids = torch.from_numpy(np.ascontiguousarray(ids)).to(dev)
        with torch.no_grad():
            if stepper.memory is not None and isinstance(m, Transformer):
                out = run_checked(m._decode, ids, stepper.memory, stepper.src_mask, mask,
                                  stepper.caches, offset)
            elif stepper.memory is not None:
                out = m.decode(ids, stepper.memory, stepper.src_mask, mask, caches=stepper.caches,
                               offset=offset)
            elif isinstance(m, CausalLM):
                out = run_checked(m.forward, ids, mask, stepper.caches, offset)
            elif stepper.caches is None:
                out = m(ids, mask)
            else:
                out = m(ids, mask, caches=stepper.caches, offset=offset)
        stepper.logits_dtype = out.dtype
        return out

    def last(self, logits: torch.Tensor):
        last = logits[:, -1]                                                # (N, V)
        logp = torch.log_softmax(last, dim=-1, dtype=torch.float64)         # (N, V)
        if last.dtype in (torch.float16, torch.bfloat16):                   # no NumPy dtype: f32
            last = last.float()
        return last.cpu().numpy(), logp.cpu().numpy()

    def reorder(self, caches, index: np.ndarray) -> None:
        reorder_caches(caches, torch.from_numpy(np.ascontiguousarray(index)))

    def output(self, x: np.ndarray, stepper: Stepper) -> torch.Tensor:
        """A result as a tensor on the model's device; float16/bfloat16 logits (carried as float32,
        which holds them exactly) back in their own dtype."""
        t = torch.from_numpy(np.ascontiguousarray(x)).to(stepper.model.device)
        low = getattr(stepper, "logits_dtype", None)
        if low in (torch.float16, torch.bfloat16) and t.dtype == torch.float32:
            t = t.to(low)
        return t


TORCH_STEP = TorchDecodeStep()


def setup_decoding(model, inputs, max_new_tokens, prompt_lengths, bos_id, repeat: int,
                   use_cache: bool, eos_id=None):
    """npformer's setup_decoding with the torch step: (stepper, seq, start, N, B), NumPy arrays."""
    return np_setup_decoding(model, inputs, max_new_tokens, prompt_lengths, bos_id, repeat,
                             use_cache, eos_id, TORCH_STEP)


@torch.no_grad()
def greedy_decode(model, inputs, *, max_new_tokens: int | None = None, use_cache: bool = True,
                  eos_id: int | None = EOS, bos_id: int = BOS, prompt_lengths=None,
                  suppress_ids=None, stop=None) -> GenerateOutput:
    """The most probable token at every step (see npformer.decoding.generate.greedy_decode)."""
    return decode_loop(model, inputs, argmax, max_new_tokens=max_new_tokens, use_cache=use_cache,
                       eos_id=eos_id, bos_id=bos_id, prompt_lengths=prompt_lengths,
                       suppress_ids=suppress_ids, step=TORCH_STEP, stop=stop)
