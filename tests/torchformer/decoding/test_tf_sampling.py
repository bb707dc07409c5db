"""torchformer.decoding.sampling: seeded torch.Generator reproducibility (global RNG untouched), top_k=1 ==
greedy, the KV cache not changing the draws, greedy agreeing with npformer token for token, and
argument errors named."""
import numpy as np
import pytest
import torch

from npformer.decoding.generate import greedy_decode as np_greedy
from npformer.models.causal_lm import CausalLM as NPCausalLM
from npformer.models.config import TransformerConfig
from torchformer.decoding.generate import greedy_decode
from torchformer.decoding.sampling import choose, sample, sampling_probs
from torchformer.models.causal_lm import CausalLM

CFG = TransformerConfig(vocab_size=13, pad_id=0, d_model=16, num_heads=2, d_ff=32,
                        num_decoder_layers=2, num_encoder_layers=2, max_len=24, dtype="float64",
                        dropout=0.0)
PROMPTS = np.array([[1, 5, 6, 7, 8], [1, 9, 0, 0, 0], [1, 4, 4, 0, 0]])


@pytest.fixture(scope="module")
def twins():
    npm = NPCausalLM(CFG, seed=5)
    tfm = CausalLM(CFG, seed=0)
    tfm.load_state_dict({k: torch.as_tensor(v) for k, v in npm.state_dict().items()})
    return npm, tfm


def test_seed_reproduces_and_global_rng_untouched(twins):
    _, m = twins
    torch.manual_seed(123)
    state = torch.get_rng_state()
    a = sample(m, PROMPTS, seed=3, temperature=1.5, max_new_tokens=10, eos_id=None)
    b = sample(m, PROMPTS, seed=3, temperature=1.5, max_new_tokens=10, eos_id=None)
    c = sample(m, PROMPTS, seed=4, temperature=1.5, max_new_tokens=10, eos_id=None)
    assert torch.equal(torch.get_rng_state(), state)
    assert torch.equal(a.tokens, b.tokens) and not torch.equal(a.tokens, c.tokens)
    g = torch.Generator().manual_seed(3)
    assert torch.equal(sample(m, PROMPTS, generator=g, temperature=1.5, max_new_tokens=10,
                              eos_id=None).tokens, a.tokens)


def test_top_k_1_is_greedy_and_greedy_matches_npformer(twins):
    npm, m = twins
    for eos in (None, 2):
        g = greedy_decode(m, PROMPTS, max_new_tokens=12, eos_id=eos)
        s = sample(m, PROMPTS, top_k=1, seed=9, max_new_tokens=12, eos_id=eos)
        assert torch.equal(g.tokens, s.tokens) and torch.equal(g.lengths, s.lengths)
        n = np_greedy(npm, PROMPTS, max_new_tokens=12, eos_id=eos)
        assert (g.tokens.numpy() == n.tokens).all()                # token for token


def test_cache_does_not_change_the_draws(twins):
    _, m = twins
    kw = dict(seed=2, temperature=1.3, top_p=0.9, top_k=6, max_new_tokens=12)
    assert torch.equal(sample(m, PROMPTS, use_cache=True, **kw).tokens,
                       sample(m, PROMPTS, use_cache=False, **kw).tokens)


def test_hand_computed_filters_and_choice():
    z = torch.log(torch.tensor([[0.1, 0.4, 0.2, 0.3]], dtype=torch.float64))
    torch.testing.assert_close(sampling_probs(z, top_p=0.75),
                               torch.tensor([[0, 4 / 9, 2 / 9, 3 / 9]], dtype=torch.float64))
    torch.testing.assert_close(sampling_probs(z, top_k=2),
                               torch.tensor([[0, 4 / 7, 0, 3 / 7]], dtype=torch.float64))
    p = torch.tensor([[0.0, 0.5, 0.0, 0.5]] * 3, dtype=torch.float64)
    assert choose(p, torch.tensor([0.0, 0.5, 0.99], dtype=torch.float64)).tolist() == [1, 3, 3]


@pytest.mark.parametrize("kw,needle", [
    (dict(temperature=0.0), "temperature"), (dict(top_k=0), "top_k"), (dict(top_p=2.0), "top_p"),
    (dict(seed=-3), "seed"), (dict(generator=np.random.default_rng(0)), "generator"),
    (dict(suppress_ids=list(range(13))), "suppress_ids"),
])
def test_bad_arguments_are_named(twins, kw, needle):
    _, m = twins
    with pytest.raises((ValueError, TypeError), match=needle):
        sample(m, PROMPTS, **kw)
