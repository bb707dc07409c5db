"""torchformer decodes through npformer's one decode loop (greedy, beam, sampling), supplying only the
step, and gets the same results as npformer on the same weights, as torch tensors."""
import numpy as np
import pytest
import torch

import npformer.decoding.generate as np_generate
from npformer.decoding.beam import beam_search as np_beam
from npformer.decoding.generate import greedy_decode as np_greedy
from npformer.models.causal_lm import CausalLM
from npformer.models.transformer import Transformer
from tests.torchformer.helpers import small_config
from torchformer.decoding.beam import beam_search
from torchformer.decoding.generate import greedy_decode
from torchformer.decoding.sampling import sample
from torchformer.models.bridge import to_torch

SRC = np.array([[5, 3, 9, 2], [7, 1, 2, 0], [4, 2, 0, 0]])
PROMPTS = np.array([[3, 6, 9, 4], [7, 5, 0, 0], [8, 0, 0, 0]])


def models(kind):
    npm = Transformer(small_config(), seed=1) if kind == "seq2seq" else CausalLM(small_config(), seed=2)
    return npm, to_torch(npm), SRC if kind == "seq2seq" else PROMPTS


@pytest.mark.parametrize("kind", ["seq2seq", "lm"])
@pytest.mark.parametrize("use_cache", [True, False])
@pytest.mark.parametrize("K, alpha", [(1, 0.0), (3, 0.6)])
def test_beam_search_matches_npformer_beam_for_beam(kind, use_cache, K, alpha):
    npm, tm, inputs = models(kind)
    kw = dict(beam_size=K, length_penalty_alpha=alpha, use_cache=use_cache, max_new_tokens=7, eos_id=2)
    a, b = np_beam(npm, inputs, **kw), beam_search(tm, inputs, **kw)
    for field in ("tokens", "lengths", "beams", "beam_lengths"):
        np.testing.assert_array_equal(getattr(b, field).numpy(), getattr(a, field), err_msg=field)
    np.testing.assert_allclose(b.beam_scores.numpy(), a.beam_scores, rtol=1e-12, atol=1e-12)
    assert isinstance(b.scores, torch.Tensor) and b.scores.dtype == torch.float64
    assert b.tokens.dtype == torch.int64 and b.tokens.device == tm.device


def test_greedy_beam_and_sampling_of_both_twins_run_one_loop(monkeypatch):
    """Every step of every decoder, in both twins, goes through npformer's Stepper."""
    calls = []
    original = np_generate.Stepper.__call__

    def counting(self, seq, p):
        calls.append(type(self.step).__name__)
        return original(self, seq, p)
    monkeypatch.setattr(np_generate.Stepper, "__call__", counting)
    npm, tm, prompts = models("lm")
    for run in (lambda: greedy_decode(tm, prompts, max_new_tokens=3),
                lambda: beam_search(tm, prompts, beam_size=2, max_new_tokens=3),
                lambda: sample(tm, prompts, max_new_tokens=3, seed=0),
                lambda: np_greedy(npm, prompts, max_new_tokens=3)):
        before = len(calls)
        run()
        assert len(calls) > before
    assert set(calls) == {"TorchDecodeStep", "NumpyDecodeStep"}


def test_greedy_outputs_are_tensors_of_the_models_dtypes():
    npm, tm, prompts = models("lm")
    out = greedy_decode(tm, prompts, max_new_tokens=4)
    assert all(isinstance(t, torch.Tensor) for t in out)
    assert out.logits.dtype == torch.float64 and out.lengths.dtype == torch.int64
    ref = np_greedy(npm, prompts, max_new_tokens=4)
    np.testing.assert_array_equal(out.tokens.numpy(), ref.tokens)
