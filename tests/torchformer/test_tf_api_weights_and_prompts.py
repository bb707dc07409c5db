"""Both twins' Python API on two inputs that used to pass or fail obscurely: a state dict with a NaN or
inf weight (loaded silently, then every output was NaN) is refused naming the key, nothing loaded;
a prompt longer than the model's max_len is refused naming `prompts` and the limit (the message was
"max_new_tokens: expected an int in [1, -3]")."""
import numpy as np
import pytest
import torch

import npformer as nf
import torchformer as tf

CFG = nf.TransformerConfig(vocab_size=13, pad_id=0, d_model=16, num_heads=2, d_ff=32,
                           num_encoder_layers=1, num_decoder_layers=1, max_len=8, dropout=0.0)
TWINS = {"np": nf, "torch": tf}


def _array(v) -> np.ndarray:
    return v.detach().cpu().numpy().copy() if isinstance(v, torch.Tensor) else np.array(v)


@pytest.mark.parametrize("twin", ["np", "torch"])
@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_load_state_dict_refuses_a_non_finite_weight_and_loads_nothing(twin, value):
    api = TWINS[twin]
    source, target = api.Transformer(CFG, seed=0), api.Transformer(CFG, seed=1)
    state = {k: _array(v) for k, v in source.state_dict().items()}
    state["decoder.layers.0.feed_forward.linear1.bias"][[3, 5]] = value
    if twin == "torch":
        state = {k: torch.as_tensor(v) for k, v in state.items()}
    before = {k: _array(v) for k, v in target.state_dict().items()}
    with pytest.raises(ValueError, match=r"decoder\.layers\.0\.feed_forward\.linear1\.bias: expected finite "
                                         r"values, got 2 NaN/inf entries .*nothing was loaded"):
        target.load_state_dict(state)
    assert all(np.array_equal(before[k], _array(v)) for k, v in target.state_dict().items())


@pytest.mark.parametrize("twin", ["np", "torch"])
@pytest.mark.parametrize("decode", ["greedy", "beam", "sample"])
def test_a_prompt_longer_than_max_len_is_refused_naming_prompts(twin, decode):
    api = TWINS[twin]
    lm = api.CausalLM(CFG, seed=0)
    long_prompt = np.full((2, 9), 5)
    long_prompt[1, 4:] = 0                                   # row 1: 4 tokens, row 0: 9 > max_len 8
    if twin == "torch":
        long_prompt = torch.as_tensor(long_prompt)
    run = {"greedy": lambda p: api.greedy_decode(lm, p, max_new_tokens=1),
           "beam": lambda p: api.beam_search(lm, p, beam_size=2, max_new_tokens=1),
           "sample": lambda p: api.decoding.sampling.sample(lm, p, max_new_tokens=1)}[decode]
    with pytest.raises(ValueError, match=r"^prompts: expected prompts of at most max_len=8 tokens "
                                         r".*got 9 tokens in row 0"):
        run(long_prompt)
    assert run(long_prompt[:, :8]).tokens.shape == (2, 1)   # max_len tokens leave room for one
