"""Sampling twins: the same logits give the same filtered distribution (temperature, top-k, top-p)
and, for the same uniforms, the same token; greedy decoding of twin CausalLMs agrees token for token
(the sampled streams differ by design: numpy.random.Generator vs torch.Generator)."""
import numpy as np
import torch
from hypothesis import given
from hypothesis import strategies as st

from npformer.decoding import sampling as NS
from torchformer.decoding import sampling as TS


@given(n=st.integers(1, 4), v=st.integers(1, 12), temperature=st.sampled_from((0.3, 1.0, 2.5)),
       top_k=st.one_of(st.none(), st.integers(1, 14)),
       top_p=st.one_of(st.none(), st.sampled_from((0.05, 0.5, 0.9, 1.0))),
       ties=st.booleans(), seed=st.integers(0, 2**31 - 1))
def test_filtered_distribution_and_choice_agree(n, v, temperature, top_k, top_p, ties, seed):
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((n, v)) * 3
    if ties:
        z = np.round(z)                                          # equal logits: ties broken alike
    pn = NS.sampling_probs(z, temperature, top_k, top_p)         # (n, v)
    pt = TS.sampling_probs(torch.as_tensor(z), temperature, top_k, top_p).numpy()
    assert ((pn > 0) == (pt > 0)).all()                          # the same tokens kept
    np.testing.assert_allclose(pn, pt, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(pn.sum(-1), 1.0, rtol=1e-12)
    if top_k is not None:
        assert ((pn > 0).sum(-1) <= top_k).all()
    u = rng.random(n)
    assert (NS.choose(pn, u) == TS.choose(torch.as_tensor(pn), torch.as_tensor(u)).numpy()).all()


@given(seed=st.integers(0, 2**31 - 1), layers=st.integers(1, 2), cache=st.booleans(),
       eos=st.sampled_from((None, 2)))
def test_greedy_decoding_of_twin_causal_lms_agrees(seed, layers, cache, eos):
    from npformer.decoding.generate import greedy_decode as ng
    from npformer.models.causal_lm import CausalLM as N
    from npformer.models.config import TransformerConfig
    from torchformer.decoding.generate import greedy_decode as tg
    from torchformer.models.causal_lm import CausalLM as T
    cfg = TransformerConfig(vocab_size=11, pad_id=0, d_model=8, num_heads=2, d_ff=16,
                            num_decoder_layers=layers, num_encoder_layers=1, max_len=16,
                            dtype="float64", dropout=0.0, norm_first=bool(seed % 2),
                            final_norm=bool(seed % 2))
    npm = N(cfg, seed=seed % 1000)
    tfm = T(cfg)
    tfm.load_state_dict({k: torch.as_tensor(a) for k, a in npm.state_dict().items()})
    rng = np.random.default_rng(seed)
    prompts = rng.integers(1, 11, size=(3, 4))
    prompts[1, 2:] = 0                                           # a shorter, padded prompt
    a = ng(npm, prompts, max_new_tokens=8, use_cache=cache, eos_id=eos)
    b = tg(tfm, prompts, max_new_tokens=8, use_cache=cache, eos_id=eos)
    assert (a.tokens == b.tokens.numpy()).all() and (a.lengths == b.lengths.numpy()).all()
    k1n = NS.sample(npm, prompts, top_k=1, max_new_tokens=8, use_cache=cache, eos_id=eos)
    k1t = TS.sample(tfm, prompts, top_k=1, max_new_tokens=8, use_cache=cache, eos_id=eos)
    assert (k1n.tokens == a.tokens).all() and (k1t.tokens.numpy() == a.tokens).all()
