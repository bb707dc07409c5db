"""Greedy decoding with the KV cache on a GPU, float32 (the memory-efficient attention kernel):
the same tokens as on the CPU. Skipped without CUDA; CI has none (docs/benchmarks/gpu-h200)."""
from __future__ import annotations

import pytest
import torch

from tests.torchformer.helpers import small_config
from torchformer.decoding import greedy_decode
from torchformer.models.causal_lm import CausalLM
from torchformer.models.transformer import Transformer

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")


@pytest.mark.parametrize("kind", ["Transformer", "CausalLM"])
def test_cached_greedy_decoding_on_cuda_float32_gives_the_cpu_tokens(kind):
    torch.manual_seed(0)
    if kind == "Transformer":
        model = Transformer(small_config(dtype="float32"), seed=3).eval()
        inputs = torch.tensor([[5, 6, 7, 2], [8, 9, 2, 0]])                 # EOS 2, then padding
    else:
        model = CausalLM(small_config(dtype="float32", num_encoder_layers=0, norm_first=True,
                                      final_norm=True), seed=3).eval()
        inputs = torch.tensor([[5, 6, 7, 8], [9, 10, 11, 12]])
    want = greedy_decode(model, inputs, max_new_tokens=6)
    got = greedy_decode(model.to("cuda"), inputs.to("cuda"), max_new_tokens=6)
    assert torch.equal(got.tokens.cpu(), want.tokens.cpu())
