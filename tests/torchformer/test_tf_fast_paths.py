"""The eager fast paths keep the public semantics: arguments checked once per model call (and still
checked when a module is called directly, after a model call, after a failed call, in another
thread), the per-mask-tensor notes of attention (stale after an in-place change: asked again), the
one-pass train()/eval(), and greedy decoding against npformer field by field."""
from __future__ import annotations

import threading

import numpy as np
import pytest
import torch
from torch import nn

import torchformer.guards.layers as layer_guards
from tests.torchformer.helpers import assert_close, perturb, randn, small_config
from torchformer.layers.attention import MultiHeadAttention
from torchformer.layers.linear import Linear
from torchformer.layers.module import trusted
from torchformer.models.causal_lm import CausalLM
from torchformer.models.transformer import Transformer

IDS = torch.tensor([[3, 5, 7, 2], [4, 4, 9, 11]])


def test_model_body_checks_nothing_twice_but_direct_calls_check(monkeypatch):
    """Inside a model call the Linear layers skip their own checks; called directly, they check."""
    calls = []
    real = layer_guards.check_float
    monkeypatch.setattr(layer_guards, "check_float", lambda *a, **k: calls.append(1) or real(*a, **k))
    model = Transformer(small_config())
    model(IDS, IDS)
    assert calls == []                                   # every Linear trusted the model's checks
    with pytest.raises(TypeError, match="x: expected dtype torch.float64"):
        model.output_proj(torch.zeros(2, 16))            # direct call after a model call
    assert calls == [1]


def test_checks_come_back_after_a_failed_model_call():
    """An exception inside a model body must not leave checks switched off."""
    model = CausalLM(small_config())

    def boom(module, args):
        raise RuntimeError("hook failed")

    handle = model.decoder.layers[0].register_forward_pre_hook(boom)
    with pytest.raises(RuntimeError, match="hook failed"):
        model(IDS)
    handle.remove()
    assert not trusted()
    with pytest.raises(TypeError, match="x: expected a torch.Tensor"):
        Linear(4, 2)(np.zeros((1, 4), np.float32))


def test_trust_does_not_leak_into_other_threads():
    """While one thread runs a model body, a module called in another thread still checks."""
    model = CausalLM(small_config())
    seen = {}

    def other_thread():
        try:
            Linear(4, 2)(torch.zeros(1, 3))
        except ValueError as e:
            seen["error"] = str(e)

    def hook(module, args):
        seen["trusted_here"] = trusted()
        t = threading.Thread(target=other_thread)
        t.start()
        t.join()

    model.decoder.layers[0].register_forward_pre_hook(hook)
    model(IDS)
    assert seen["trusted_here"] is True                  # the hook runs inside the checked body
    assert "x: expected shape (..., 4)" in seen["error"]


def _mha(seed=0):
    gen = torch.Generator().manual_seed(seed)
    mha = MultiHeadAttention(16, 4, dtype="float64")
    perturb(mha, gen)
    return mha, randn(gen, 2, 3, 16)


def test_noted_mask_is_asked_again_after_an_in_place_change():
    """Attention notes "no empty row" on the mask tensor; emptying a row in place afterwards must
    zero that row's output (the note is tied to the tensor's version)."""
    mha, x = _mha()
    mask = torch.ones(2, 1, 3, 3, dtype=torch.bool)
    mask[1, 0, 2, 0] = False                             # masks something, empties no row
    first = mha(x, x, x, mask)
    mha.need_weights = True
    assert_close("sdpa vs explicit", mha(x, x, x, mask), first)
    mha.need_weights = False
    mask[0, 0, 1] = False                                # in place: query 1 of batch 0 sees nothing
    out = mha(x, x, x, mask)
    assert_close("empty row", out[0, 1], mha.out_proj.bias.detach())
    assert_close("other rows", out[1], first[1])


def test_all_true_mask_equals_no_mask_and_a_partial_mask_differs():
    mha, x = _mha(1)
    ones = torch.ones(2, 1, 1, 3, dtype=torch.bool)
    ref = mha(x, x, x, None)
    assert_close("all-true mask", mha(x, x, x, ones), ref)
    assert_close("all-true mask, noted", mha(x, x, x, ones), ref)     # second use: the note
    ones[0, 0, 0, 2] = False                                          # in place
    changed = mha(x, x, x, ones)
    assert float((changed[0] - ref[0]).detach().abs().max()) > 1e-3
    assert_close("untouched batch", changed[1], ref[1])


def test_inference_mode_masks_work():
    """Inference tensors carry no version counter: they are not noted, and still work."""
    model = Transformer(small_config())
    model.eval()
    with torch.no_grad():
        ref = model(IDS, IDS)
    with torch.inference_mode():
        for _ in range(2):
            assert_close("logits", model(IDS, IDS), ref)


def test_one_pass_train_eval_reaches_every_module_and_custom_overrides():
    class Custom(nn.Module):
        def __init__(self):
            super().__init__()
            self.calls = []
            self.inner = nn.Linear(2, 2)

        def train(self, mode=True):
            self.calls.append(mode)
            return super().train(mode)

    model = CausalLM(small_config())
    model.extra = Custom()
    assert model.eval() is model
    assert not any(m.training for m in model.modules())
    assert model.extra.calls == [False]
    model.train()
    assert all(m.training for m in model.modules())
    assert model.extra.calls == [False, True]
    with pytest.raises(ValueError, match=r"^CausalLM.train: mode: expected a bool .*got 'yes'$"):
        model.train("yes")


@pytest.mark.parametrize("eos_id", [None, 5])
@pytest.mark.parametrize("use_cache", [True, False])
def test_greedy_matches_npformer_on_ragged_prompts(eos_id, use_cache):
    """Every field (tokens, lengths, scores, logits) as npformer's greedy decoder, with prompts of
    different lengths (forced steps), with and without an EOS that ends rows early."""
    from npformer.decoding.generate import greedy_decode as np_greedy
    from npformer.models.causal_lm import CausalLM as NpCausalLM
    from torchformer.decoding.generate import greedy_decode
    from torchformer.models.bridge import to_torch

    np_model = NpCausalLM(small_config(), seed=4)
    model = to_torch(np_model)
    prompts = np.array([[3, 6, 9, 4], [7, 5, 0, 0], [8, 0, 0, 0]])
    a = np_greedy(np_model, prompts, max_new_tokens=6, eos_id=eos_id, use_cache=use_cache,
                  suppress_ids=())
    b = greedy_decode(model, prompts, max_new_tokens=6, eos_id=eos_id, use_cache=use_cache,
                      suppress_ids=())
    np.testing.assert_array_equal(b.tokens.numpy(), a.tokens)
    np.testing.assert_array_equal(b.lengths.numpy(), a.lengths)
    assert_close("scores", b.scores, a.scores)
    assert_close("logits", b.logits, a.logits)
