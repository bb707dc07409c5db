"""npformer.decoding.sampling: the filters against hand-computed distributions, inverse-CDF choice, seeded
reproducibility, top_k=1 == greedy, the KV cache not changing what a seed gives, the empirical
distribution matching the filtered one, and argument errors named."""
import numpy as np
import pytest

from npformer.decoding.generate import greedy_decode
from npformer.decoding.sampling import choose, filter_logits, sample, sampling_probs
from npformer.models.causal_lm import CausalLM
from npformer.models.config import TransformerConfig

CFG = TransformerConfig(vocab_size=13, pad_id=0, d_model=16, num_heads=2, d_ff=32,
                        num_decoder_layers=2, num_encoder_layers=2, max_len=24, dtype="float64",
                        dropout=0.0)
PROMPTS = np.array([[1, 5, 6, 7, 8], [1, 9, 0, 0, 0], [1, 4, 4, 0, 0]])       # right-padded


@pytest.fixture(scope="module")
def model():
    return CausalLM(CFG, seed=5)


def test_filters_match_hand_computed_distributions():
    z = np.log(np.array([[0.1, 0.4, 0.2, 0.3]]))                  # probabilities written out
    np.testing.assert_allclose(sampling_probs(z), [[0.1, 0.4, 0.2, 0.3]], rtol=1e-12)
    np.testing.assert_allclose(sampling_probs(z, top_k=2), [[0, 4 / 7, 0, 3 / 7]], rtol=1e-12)
    # nucleus 0.65: 0.4 (mass before 0) and 0.3 (mass before 0.4) kept; 0.2 has 0.7 before it
    np.testing.assert_allclose(sampling_probs(z, top_p=0.65), [[0, 4 / 7, 0, 3 / 7]], rtol=1e-12)
    np.testing.assert_allclose(sampling_probs(z, top_p=0.75), [[0, 4 / 9, 2 / 9, 3 / 9]],
                               rtol=1e-12)
    np.testing.assert_allclose(sampling_probs(z, top_p=0.1), [[0, 1, 0, 0]], rtol=1e-12)
    p2 = np.array([0.1, 0.4, 0.2, 0.3]) ** 2                      # temperature 0.5 squares them
    np.testing.assert_allclose(sampling_probs(z, temperature=0.5), [p2 / p2.sum()], rtol=1e-12)
    # the kept logit, shifted so the row's best is 0 (softmax ignores the shift)
    assert filter_logits(z, top_k=1)[0, 1] == 0.0 and np.isinf(filter_logits(z, top_k=1)).sum() == 3
    # ties at the k-th place go to the lower id, as argmax does
    tie = np.zeros((1, 5))
    assert np.isfinite(filter_logits(tie, top_k=2))[0].tolist() == [True, True, False, False, False]


def test_choose_is_the_inverse_cdf():
    p = np.array([[0.0, 0.5, 0.0, 0.5]] * 5)
    u = np.array([0.0, 0.49, 0.5, 0.99, 0.999999])
    assert choose(p, u).tolist() == [1, 1, 3, 3, 3]               # zero-probability ids never


def test_seed_reproduces_and_differs(model):
    a = sample(model, PROMPTS, seed=3, temperature=1.5, max_new_tokens=10, eos_id=None)
    b = sample(model, PROMPTS, seed=3, temperature=1.5, max_new_tokens=10, eos_id=None)
    c = sample(model, PROMPTS, seed=4, temperature=1.5, max_new_tokens=10, eos_id=None)
    assert (a.tokens == b.tokens).all() and (a.scores == b.scores).all()
    assert (a.tokens != c.tokens).any()
    g = np.random.default_rng(3)
    d = sample(model, PROMPTS, generator=g, temperature=1.5, max_new_tokens=10, eos_id=None)
    assert (d.tokens == a.tokens).all()                           # seed s == default_rng(s)
    e = sample(model, PROMPTS, generator=g, temperature=1.5, max_new_tokens=10, eos_id=None)
    assert (e.tokens != a.tokens).any()                           # the generator advanced


def test_global_rng_untouched(model):
    np.random.seed(0)
    before = np.random.get_state()[1].copy()
    sample(model, PROMPTS, seed=1, max_new_tokens=4)
    assert (np.random.get_state()[1] == before).all()


def test_top_k_1_is_greedy_token_for_token(model):
    for eos in (None, 2):
        g = greedy_decode(model, PROMPTS, max_new_tokens=12, eos_id=eos)
        s = sample(model, PROMPTS, top_k=1, temperature=0.7, seed=9, max_new_tokens=12, eos_id=eos)
        assert (g.tokens == s.tokens).all() and (g.lengths == s.lengths).all()
        np.testing.assert_allclose(g.scores, s.scores, rtol=1e-12)


def test_cache_does_not_change_the_draws(model):
    kw = dict(seed=2, temperature=1.3, top_p=0.9, max_new_tokens=12)
    a, b = sample(model, PROMPTS, use_cache=True, **kw), sample(model, PROMPTS, use_cache=False, **kw)
    assert (a.tokens == b.tokens).all()
    np.testing.assert_allclose(a.logits, b.logits, rtol=1e-9, atol=1e-12)


def test_sampled_frequencies_follow_the_filtered_distribution():
    rng = np.random.default_rng(0)
    z = rng.standard_normal((1, 6))
    p = sampling_probs(z, temperature=0.8, top_k=4, top_p=0.9)[0]
    n = 40_000
    draws = choose(np.repeat(p[None], n, 0), np.random.default_rng(1).random(n))
    freq = np.bincount(draws, minlength=6) / n
    assert (freq[p == 0] == 0).all()
    np.testing.assert_allclose(freq, p, atol=4 * np.sqrt(0.25 / n))   # 4 standard errors


def test_finished_rows_keep_eos_and_pad(model):
    out = sample(model, PROMPTS, seed=0, temperature=3.0, max_new_tokens=15, eos_id=2)
    for row, n in zip(out.tokens, out.lengths):
        assert (row[n:] == 0).all()
        if n < 15:
            assert row[n - 1] == 2
    assert not (out.tokens == 0)[np.arange(15)[None, :] < out.lengths[:, None]].any()  # PAD never


@pytest.mark.parametrize("kw,needle", [
    (dict(temperature=0), "temperature"), (dict(temperature=-1.0), "temperature"),
    (dict(temperature=float("nan")), "temperature"), (dict(top_k=0), "top_k"),
    (dict(top_k=2.5), "top_k"), (dict(top_p=0.0), "top_p"), (dict(top_p=1.5), "top_p"),
    (dict(seed=-1), "seed"), (dict(seed=1, generator=np.random.default_rng(0)), "seed"),
    (dict(max_new_tokens=100), "max_new_tokens"),
    (dict(suppress_ids=list(range(13))), "suppress_ids"), (dict(suppress_ids=[99]), "suppress_ids"),
])
def test_bad_arguments_are_named(model, kw, needle):
    with pytest.raises((ValueError, TypeError), match=needle):
        sample(model, PROMPTS, **kw)


def test_generator_of_the_wrong_kind(model):
    with pytest.raises(TypeError, match="generator"):
        sample(model, PROMPTS, generator=np.random.RandomState(0))
