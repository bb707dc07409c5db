"""Every output of the torch twin's decoders read and compared: greedy, beam and sampled results
field by field against npformer's (same float64 weights), the sampled scores against the logits the
twin itself returns, and the sampling filters at their exact boundaries and extreme inputs."""
import math

import numpy as np
import pytest
import torch

from npformer.decoding.beam import beam_search as np_beam
from npformer.decoding.generate import greedy_decode as np_greedy
from npformer.decoding.sampling import sample as np_sample
from npformer.decoding.sampling import sampling_probs as np_probs
from npformer.models.causal_lm import CausalLM as NPCausalLM
from npformer.models.config import TransformerConfig
from npformer.models.transformer import Transformer as NPTransformer
from torchformer.decoding.beam import beam_search
from torchformer.decoding.generate import greedy_decode
from torchformer.decoding.sampling import filter_logits, sample, sampling_probs
from torchformer.models.bridge import to_torch

CFG = dict(vocab_size=12, pad_id=0, d_model=16, num_heads=2, d_ff=32, num_decoder_layers=2,
           max_len=16, dtype="float64", dropout=0.0)
PROMPTS = np.array([[1, 5, 6, 7, 8], [1, 9, 0, 0, 0], [1, 4, 4, 0, 0]])
SRC = np.array([[3, 4, 5, 6, 2, 0], [7, 8, 2, 0, 0, 0], [5, 5, 3, 9, 8, 2]])


def _sharp(model):
    model.output_proj.weight.data *= 5.0
    model.output_proj.bias.data[:] = np.random.default_rng(4).normal(0, 1.0, model.config.vocab_size)
    return model


@pytest.fixture(scope="module")
def pairs():
    lm = _sharp(NPCausalLM(TransformerConfig(num_encoder_layers=0, **CFG), seed=3))
    s2s = _sharp(NPTransformer(TransformerConfig(num_encoder_layers=2, **CFG), seed=4))
    return [(lm, to_torch(lm), PROMPTS), (s2s, to_torch(s2s), SRC)]


def _assert_same_fields(a, b, what):
    assert type(a)._fields == type(b)._fields
    for name in a._fields:
        x, y = getattr(a, name), getattr(b, name).cpu().numpy()
        assert x.shape == y.shape, f"{what}.{name}: shapes {x.shape} vs {y.shape}"
        if np.issubdtype(x.dtype, np.integer):
            np.testing.assert_array_equal(y, x, err_msg=f"{what}.{name}")
        else:
            np.testing.assert_allclose(y, x, rtol=1e-10, atol=1e-12, err_msg=f"{what}.{name}")


@pytest.mark.parametrize("alpha", [0.0, 0.6, 2.0])
def test_every_output_of_greedy_and_beam_equals_npformers(pairs, alpha):
    for npm, tfm, inputs in pairs:
        _assert_same_fields(np_greedy(npm, inputs, max_new_tokens=7),
                            greedy_decode(tfm, inputs, max_new_tokens=7), "greedy")
        _assert_same_fields(np_beam(npm, inputs, beam_size=3, max_new_tokens=7,
                                    length_penalty_alpha=alpha),
                            beam_search(tfm, inputs, beam_size=3, max_new_tokens=7,
                                        length_penalty_alpha=alpha), "beam")


def test_every_output_of_top_k_1_sampling_equals_npformers(pairs):
    """top_k=1 does not depend on the draw, so the twins agree on every field, scores included."""
    for npm, tfm, inputs in pairs[:1]:
        _assert_same_fields(np_sample(npm, inputs, max_new_tokens=7, top_k=1, temperature=0.7),
                            sample(tfm, inputs, max_new_tokens=7, top_k=1, temperature=0.7),
                            "sample")


def _log_softmax(x):
    m = x.max(axis=-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=-1, keepdims=True))


@pytest.mark.parametrize("kw", [dict(temperature=1.7), dict(top_k=3, temperature=0.4),
                                dict(top_p=0.6)])
def test_sampled_scores_are_the_model_log_probs_of_the_sampled_tokens(pairs, kw):
    npm, tfm, inputs = pairs[0]
    out = sample(tfm, inputs, max_new_tokens=9, seed=5, **kw)
    logits, tokens = out.logits.numpy(), out.tokens.numpy()
    assert (out.lengths > 1).any()
    for b in range(len(inputs)):
        n = int(out.lengths[b])
        want = _log_softmax(logits[b, :n])[np.arange(n), tokens[b, :n]].sum()
        assert float(out.scores[b]) == pytest.approx(want, rel=1e-12, abs=1e-12)
        assert (tokens[b, n:] == 0).all()
    # and the logits are the model's: a full forward over the sampled line reproduces them
    line = np.concatenate([inputs[:1, :5], tokens[:1, : int(out.lengths[0])]], axis=1)
    full = npm(line)[0, 4:-1]                                              # (n, V)
    np.testing.assert_allclose(logits[0, : int(out.lengths[0])], full, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("top_p, n_kept", [(0.25, 1), (0.5, 2), (0.75, 3), (0.5000001, 3),
                                           (1.0, 4)])
def test_top_p_at_exactly_the_mass_before_a_token_drops_it(top_p, n_kept):
    kept = torch.isfinite(filter_logits(torch.zeros(1, 4, dtype=torch.float64), top_p=top_p))
    assert kept[0].tolist() == [True] * n_kept + [False] * (4 - n_kept)


def test_top_k_ties_go_to_the_lower_ids_and_top_p_follows_top_k():
    z = torch.tensor([[1.0, 3.0, 3.0, 3.0, 0.0]], dtype=torch.float64)
    assert torch.isfinite(filter_logits(z, top_k=2))[0].tolist() == [False, True, True, False,
                                                                      False]
    assert torch.isfinite(filter_logits(torch.zeros(1, 8, dtype=torch.float64), top_k=4,
                                        top_p=0.5))[0].tolist() == [True, True] + [False] * 6


@pytest.mark.parametrize("temperature", [1.0, 1e-3, 1e-306, 5e-324, 1e300])
@pytest.mark.parametrize("shift", [0.0, 1e3, 1e6])
def test_extreme_logits_and_temperatures_give_npformers_distribution(temperature, shift):
    z = np.array([[2.0, 1.0, -np.inf, 1.0, -1000.0], [7.0, 7.0, 6.0, -5.0, 0.0]]) + shift
    p = sampling_probs(torch.tensor(z), temperature=temperature, top_p=0.95).numpy()
    assert np.isfinite(p).all() and np.allclose(p.sum(axis=1), 1.0, rtol=1e-15)
    np.testing.assert_allclose(p, np_probs(z, temperature=temperature, top_p=0.95), rtol=1e-13,
                               atol=1e-300)
    if temperature == 1.0 and shift == 0.0:                               # written out by hand
        e = np.array([math.e ** 2, math.e, 0.0, math.e, 0.0])
        np.testing.assert_allclose(p[0], e / e.sum(), rtol=1e-13, atol=1e-300)
    if temperature <= 1e-300:                                             # greedy (ties halve)
        np.testing.assert_array_equal(p, [[1, 0, 0, 0, 0], [0.5, 0.5, 0, 0, 0]])
