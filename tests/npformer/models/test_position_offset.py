"""A call without caches at positions offset.. (`CausalLM(ids, offset=k)`, `Transformer.decode(...,
offset=k)`): its keys are its own T tokens, under the default causal and padding mask; the offset
only moves the positions. The reference is the same model at offset 0 with its position table
shifted up by k rows, so it reads at positions 0.. what the model under test reads at k.."""
import numpy as np
import pytest

from npformer.models.causal_lm import CausalLM
from npformer.models.transformer import Transformer
from tests.npformer.layer_helpers import jitter, tiny_config

OFFSET = 3
IDS = np.array([[4, 6, 3, 2, 0, 0],
                [1, 10, 8, 2, 5, 7]])     # two trailing pads in row 0
SRC = np.array([[5, 3, 9, 2, 0],
                [7, 1, 0, 0, 0]])


def build(cls, config, shift: int):
    """cls(config, seed=0), jittered, with the target position table moved up by `shift` rows."""
    model = jitter(cls(config, seed=0))
    pos = model.tgt_pos
    if config.positional == "sinusoidal":
        pos.pe = np.roll(pos.pe, -shift, axis=0)                     # row shift first
    else:
        pos.weight.data[...] = np.roll(pos.weight.data, -shift, axis=0)
    return model


@pytest.mark.parametrize("pad_id", [0, None])
@pytest.mark.parametrize("positional", ["sinusoidal", "learned"])
def test_causal_lm_at_an_offset_without_caches_attends_over_its_own_tokens(positional, pad_id):
    config = tiny_config(max_len=12, positional=positional, pad_id=pad_id, num_decoder_layers=2)
    model, ref = build(CausalLM, config, 0), build(CausalLM, config, OFFSET)
    got, want = model(IDS, offset=OFFSET), ref(IDS)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)

    upstream = np.random.default_rng(0).standard_normal(got.shape)  # a random upstream gradient
    model.zero_grad()
    ref.zero_grad()
    np.testing.assert_allclose(model.backward(upstream)["decoder_input"],
                               ref.backward(upstream)["decoder_input"], rtol=1e-12, atol=1e-13)
    ref_grads = dict(ref.named_parameters())
    for name, p in model.named_parameters():
        want_grad = ref_grads[name].grad
        if name == "tgt_pos.weight":                                  # rows 0.. of ref are rows k.. here
            want_grad = np.roll(want_grad, OFFSET, axis=0)
        np.testing.assert_allclose(p.grad, want_grad, rtol=1e-12, atol=1e-13, err_msg=name)


@pytest.mark.parametrize("pad_id", [0, None])
def test_transformer_decode_at_an_offset_without_caches_attends_over_its_own_tokens(pad_id):
    config = tiny_config(max_len=12, pad_id=pad_id, num_decoder_layers=2)
    model, ref = build(Transformer, config, 0), build(Transformer, config, OFFSET)
    model.eval()
    ref.eval()
    memory = model.encode(SRC)
    np.testing.assert_allclose(model.decode(IDS, memory, offset=OFFSET), ref.decode(IDS, memory),
                               rtol=1e-12, atol=1e-13)


def test_explicit_masks_at_an_offset_without_caches_cover_the_calls_own_keys():
    config = tiny_config(max_len=12, num_decoder_layers=2)
    T = IDS.shape[1]
    keep = IDS != 0                                                  # (B, T) the real tokens
    causal = np.tril(np.ones((T, T), bool))[None, None]              # (1, 1, T, T)
    lm, lm_ref = build(CausalLM, config, 0), build(CausalLM, config, OFFSET)
    want = lm_ref(IDS)
    np.testing.assert_allclose(lm(IDS, causal & keep[:, None, None, :], offset=OFFSET), want,
                               rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(lm(IDS, causal, offset=OFFSET, key_keep=keep), want,
                               rtol=1e-12, atol=1e-13)
    with pytest.raises(ValueError, match="mask"):                    # offset + T keys: none cached
        lm(IDS, np.ones((1, 1, T, OFFSET + T), bool), offset=OFFSET)

    model, ref = build(Transformer, config, 0), build(Transformer, config, OFFSET)
    model.eval()
    ref.eval()
    memory = model.encode(SRC)
    np.testing.assert_allclose(model.decode(IDS, memory, None, causal & keep[:, None, None, :],
                                            offset=OFFSET),
                               ref.decode(IDS, memory), rtol=1e-12, atol=1e-13)
