"""npformer.decoding.sampling at the exact edges of its rules and at extreme but legal inputs.

Every expected value is written out by hand (uniform rows make every probability a power of two,
exact in binary, so a mass can equal top_p exactly)."""
import math

import numpy as np
import pytest

from npformer.decoding.generate import greedy_decode
from npformer.decoding.sampling import choose, filter_logits, sample, sampling_probs
from npformer.models.causal_lm import CausalLM
from npformer.models.config import TransformerConfig

UNIFORM4 = np.zeros((1, 4))                    # p = 1/4 each; mass before the k-th best = k/4


def _kept(z, **kw):
    return np.isfinite(filter_logits(z, **kw))[0].tolist()


@pytest.mark.parametrize("top_p, n_kept", [(0.25, 1), (0.5, 2), (0.75, 3), (0.2500001, 2),
                                           (0.5000001, 3), (0.7499999, 3), (1.0, 4)])
def test_top_p_at_exactly_the_mass_before_a_token_drops_it(top_p, n_kept):
    """A token is kept when the mass BEFORE it is < top_p: at equality it is dropped."""
    assert _kept(UNIFORM4, top_p=top_p) == [True] * n_kept + [False] * (4 - n_kept)


def test_top_p_smaller_than_the_best_token_keeps_exactly_one():
    z = np.log(np.array([[0.5, 0.25, 0.25]]))
    assert _kept(z, top_p=1e-12) == [True, False, False]


def test_top_k_ties_go_to_the_lower_ids():
    z = np.array([[1.0, 3.0, 3.0, 3.0, 0.0]])
    assert _kept(z, top_k=1) == [False, True, False, False, False]
    assert _kept(z, top_k=2) == [False, True, True, False, False]
    assert _kept(z, top_k=4) == [True, True, True, True, False]
    assert _kept(z, top_k=5) == [True] * 5 and _kept(z, top_k=50) == [True] * 5


def test_top_p_applies_to_the_distribution_left_by_top_k():
    """Uniform over 8, top_k=4 leaves 1/4 each; top_p=0.5 then keeps 2 (on the full distribution
    the mass before the 4th token is only 3/8 and 4 would stay)."""
    assert _kept(np.zeros((1, 8)), top_k=4, top_p=0.5) == [True, True] + [False] * 6


def test_temperature_one_is_the_plain_softmax_and_two_takes_the_square_root():
    z = np.log(np.array([[0.1, 0.2, 0.3, 0.4]]))
    np.testing.assert_allclose(sampling_probs(z, temperature=1.0), [[0.1, 0.2, 0.3, 0.4]],
                               rtol=1e-14)
    r = np.sqrt([0.1, 0.2, 0.3, 0.4])
    np.testing.assert_allclose(sampling_probs(z, temperature=2.0), [r / r.sum()], rtol=1e-14)


def test_choose_when_the_cdf_equals_the_target_exactly():
    """The first id whose cumulative probability EXCEEDS u * sum: a cdf equal to it is passed."""
    p = np.full((4, 4), 0.25)
    assert choose(p, np.array([0.0, 0.25, 0.5, 0.75])).tolist() == [0, 1, 2, 3]
    assert choose(p, np.array([np.nextafter(0.25, 0)] * 4)).tolist() == [0] * 4
    assert choose(p, np.array([np.nextafter(1.0, 0)] * 4)).tolist() == [3] * 4


def test_choose_skips_zero_probability_ids_at_both_ends():
    p = np.array([[0.0, 0.0, 0.5, 0.5, 0.0]] * 2)
    assert choose(p, np.array([0.0, np.nextafter(1.0, 0)])).tolist() == [2, 3]


@pytest.mark.parametrize("scale", [1.0, 1e3, 1e6, 1e12])
def test_logits_in_the_thousands_and_beyond(scale):
    """softmax is shift-invariant: logits (a + s, b + s) give the probabilities of (a, b)."""
    z = np.array([[2.0, 1.0, -np.inf, 1.0]]) + scale
    e = np.array([math.e, 1.0, 0.0, 1.0])
    np.testing.assert_allclose(sampling_probs(z), [e / e.sum()], rtol=1e-12)


def test_float32_logits_at_the_top_of_their_range():
    z = np.array([[3.4e38, 3.4e38, -3.4e38, 0.0]], dtype=np.float32)
    np.testing.assert_array_equal(sampling_probs(z), [[0.5, 0.5, 0.0, 0.0]])


@pytest.mark.parametrize("temperature", [1e-3, 1e-300, 1e-306, 5e-324])
def test_a_tiny_temperature_is_greedy_never_nan(temperature):
    """(z / T overflows to inf for T below ~1e-305 with logits in the thousands: inf - inf = NaN
    and the inverse CDF then picked id 0.)"""
    z = np.array([[1000.0, 999.0, -1000.0, 0.0], [-5.0, 7.0, 7.0, 6.0]])
    with np.errstate(invalid="raise"):                              # no NaN made
        p = sampling_probs(z, temperature=temperature, top_p=0.9)
    np.testing.assert_array_equal(p, [[1.0, 0.0, 0.0, 0.0], [0.0, 0.5, 0.5, 0.0]])  # a tie halves


def test_a_huge_temperature_is_uniform_over_what_is_kept():
    z = np.array([[1000.0, -1000.0, 3.0, -np.inf]])
    np.testing.assert_allclose(sampling_probs(z, temperature=1e300), [[1 / 3, 1 / 3, 1 / 3, 0.0]],
                               rtol=1e-12)


# -- whole decoding runs ---------------------------------------------------------------------------
CFG = TransformerConfig(vocab_size=13, pad_id=0, d_model=16, num_heads=2, d_ff=32,
                        num_decoder_layers=2, num_encoder_layers=0, max_len=24, dtype="float64",
                        dropout=0.0)
PROMPTS = np.array([[1, 5, 6, 7, 8], [1, 9, 0, 0, 0], [1, 4, 4, 0, 0]])


@pytest.fixture(scope="module")
def loud_model():
    """Logits in the thousands: the output projection scaled 1000-fold."""
    m = CausalLM(CFG, seed=5)
    m.output_proj.weight.data *= 1000.0
    return m


def _log_softmax(x):
    m = x.max(axis=-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=-1, keepdims=True))


def test_tiny_temperature_sampling_equals_greedy_token_for_token(loud_model):
    g = greedy_decode(loud_model, PROMPTS, max_new_tokens=8, eos_id=None)
    s = sample(loud_model, PROMPTS, max_new_tokens=8, eos_id=None, temperature=1e-306, seed=1)
    np.testing.assert_array_equal(s.tokens, g.tokens)
    np.testing.assert_array_equal(s.scores, g.scores)


@pytest.mark.parametrize("kw", [dict(temperature=1.7), dict(top_k=3, temperature=0.5),
                                dict(top_p=0.6)])
def test_sampled_scores_are_the_model_log_probs_of_the_tokens(kw):
    """scores[b] = sum over generated steps of log_softmax(logits[b, t])[tokens[b, t]], from the
    RAW logits (not the filtered distribution), counted up to and including EOS."""
    m = CausalLM(CFG, seed=7)
    out = sample(m, PROMPTS, max_new_tokens=9, seed=2, **kw)
    for b in range(3):
        n = int(out.lengths[b])
        lp = _log_softmax(out.logits[b, :n])                           # (n, V)
        want = lp[np.arange(n), out.tokens[b, :n]].sum()
        assert out.scores[b] == pytest.approx(want, rel=1e-12, abs=1e-12)
        assert (out.tokens[b, n:] == 0).all()                          # PAD after the end
