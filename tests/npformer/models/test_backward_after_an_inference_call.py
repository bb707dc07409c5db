"""A backward after an inference call (a cached forward, `encode` / `decode`) that followed a trained
step says the last call was inference only; it does not claim a second backward after one forward.
A real second backward still says that."""
import numpy as np
import pytest

from npformer.layers.attention import MultiHeadAttention
from npformer.models.causal_lm import CausalLM
from npformer.models.decoder import Decoder, DecoderLayer
from npformer.models.transformer import Transformer
from tests.npformer.layer_helpers import tiny_config

X = np.random.default_rng(0).standard_normal((2, 3, 8))
IDS = np.array([[1, 4, 5], [1, 6, 7]])
SRC = np.array([[5, 3, 9], [7, 1, 0]])


def attention():
    m = MultiHeadAttention(8, 2, dtype="float64")
    return m, (lambda: m(X, X, X)), (lambda: m(X, X, X, cache={})), "incremental cache"


def decoder_layer():
    m = DecoderLayer(tiny_config(), cross_attention=False)
    return m, (lambda: m(X)), (lambda: m(X, cache={})), "incremental cache"


def decoder():
    m = Decoder(tiny_config(), cross_attention=False)
    return m, (lambda: m(X)), (lambda: m(X, caches=[{}])), "incremental caches"


def causal_lm():
    m = CausalLM(tiny_config())
    return m, (lambda: m(IDS)), (lambda: m(IDS, caches=[{}])), "inference only"


def transformer():
    m = Transformer(tiny_config())
    return m, (lambda: m(SRC, IDS)), (lambda: m.decode(IDS, m.encode(SRC))), "inference only"


@pytest.mark.parametrize("make", [attention, decoder_layer, decoder, causal_lm, transformer],
                         ids=lambda f: f.__name__)
def test_backward_after_an_inference_call_names_it(make):
    module, train_forward, inference_forward, says = make()
    upstream = np.random.default_rng(1).standard_normal
    out = train_forward()
    module.backward(upstream(out.shape))
    with pytest.raises(RuntimeError, match="second time"):
        module.backward(upstream(out.shape))                 # a real second backward
    inference_forward()
    with pytest.raises(RuntimeError) as err:
        module.backward(upstream(out.shape))
    assert says in str(err.value) and "second time" not in str(err.value), str(err.value)
    out = train_forward()                                    # and a trained step works again
    module.backward(upstream(out.shape))
