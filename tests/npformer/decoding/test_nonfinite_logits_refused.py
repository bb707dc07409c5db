"""Decoding (greedy, beam, sampling; both twins; with and without the cache) stops with one message
naming the model when its logits hold NaN or inf (a weight set to NaN in memory, weights that
overflow): greedy decoding emitted the NaN's id at every step (argmax takes NaN as the largest) and
sampling emitted id 0, silently."""
import numpy as np
import pytest

import npformer as nf
from npformer.decoding.sampling import sample

CONFIG = dict(d_model=8, num_heads=2, d_ff=16, num_decoder_layers=1, vocab_size=11, max_len=8)
SAYS = r"model: its logits for position 3 hold \d+ NaN/inf values of \d+; a weight holds NaN or inf"


def np_model(value):
    m = nf.CausalLM(nf.TransformerConfig(**CONFIG), seed=0).eval()
    m.output_proj.weight.data[3, 0] = value
    return m


DECODERS = {
    "greedy": lambda m, p, c: nf.greedy_decode(m, p, max_new_tokens=3, use_cache=c),
    "beam": lambda m, p, c: nf.beam_search(m, p, beam_size=2, max_new_tokens=3, use_cache=c),
    "sample": lambda m, p, c: sample(m, p, max_new_tokens=3, seed=0, use_cache=c),
}


@pytest.mark.parametrize("value", [np.nan, np.inf])
@pytest.mark.parametrize("how", sorted(DECODERS))
@pytest.mark.parametrize("cache", [True, False])
def test_npformer_refuses_nonfinite_logits(value, how, cache):
    with pytest.raises(ValueError, match=SAYS):
        DECODERS[how](np_model(value), [[1, 5, 6]], cache)


@pytest.mark.parametrize("how", ["greedy", "beam", "sample"])
def test_torchformer_refuses_them_alike(how):
    torch = pytest.importorskip("torch")
    import torchformer as tf
    from torchformer.decoding.sampling import sample as tf_sample
    m = tf.CausalLM(nf.TransformerConfig(**CONFIG), seed=0).eval()
    with torch.no_grad():
        m.output_proj.weight[3, 0] = float("nan")
    p = torch.tensor([[1, 5, 6]])
    call = {"greedy": lambda: tf.greedy_decode(m, p, max_new_tokens=3),
            "beam": lambda: tf.beam_search(m, p, beam_size=2, max_new_tokens=3),
            "sample": lambda: tf_sample(m, p, max_new_tokens=3, seed=0)}[how]
    with pytest.raises(ValueError, match=SAYS):
        call()


def test_finite_weights_decode_as_before():
    m = nf.CausalLM(nf.TransformerConfig(**CONFIG), seed=0).eval()
    assert nf.greedy_decode(m, [[1, 5, 6]], max_new_tokens=3).tokens.shape == (1, 3)
