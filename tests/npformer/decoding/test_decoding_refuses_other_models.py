"""Every decoding function of either twin refuses, with one line naming `model`, what is not a model
it can decode: not a model at all, a model with nothing to decode with, or the other twin's model."""
import numpy as np
import pytest

import npformer as nf
from npformer.data.vocab import EOS

CFG = nf.TransformerConfig(d_model=8, num_heads=2, d_ff=8, num_encoder_layers=1,
                           num_decoder_layers=1, vocab_size=9, max_len=8, dropout=0.0)
SRC = np.array([[3, 4, EOS]])
DECODERS = {"greedy_decode": {}, "beam_search": {"beam_size": 2}, "sample": {}}


def decoder(pkg, name):
    return getattr(__import__(f"{pkg}.decoding", fromlist=[name]), name)


@pytest.mark.parametrize("name", DECODERS)
@pytest.mark.parametrize("bad", ["model.npz", None, object()])
def test_not_a_model(name, bad):
    with pytest.raises(TypeError, match=r"^model: expected a Transformer or CausalLM, got builtins "):
        decoder("npformer", name)(bad, SRC, **DECODERS[name])


@pytest.mark.parametrize("name", DECODERS)
def test_encoder_classifier(name):
    clf = nf.EncoderClassifier(nf.TransformerConfig(d_model=8, num_heads=2, d_ff=8,
                                                    num_encoder_layers=1, num_decoder_layers=0,
                                                    vocab_size=9, max_len=8, num_classes=3), seed=0)
    with pytest.raises(TypeError, match=r"^model: expected a Transformer or CausalLM, got npformer "
                                        r"EncoderClassifier$"):
        decoder("npformer", name)(clf, SRC, **DECODERS[name])


@pytest.mark.parametrize("name", DECODERS)
def test_the_other_twins_model(name):
    pytest.importorskip("torch")
    import torchformer
    np_model = nf.Transformer(CFG, seed=0)
    torch_model = torchformer.to_torch(np_model)
    with pytest.raises(TypeError, match=r"^model: expected an npformer model, got a torchformer "
                                        r"Transformer; decode a torchformer model with torchformer"):
        decoder("npformer", name)(torch_model, SRC, **DECODERS[name])
    with pytest.raises(TypeError, match=r"^model: expected a torchformer model, got an npformer "
                                        r"Transformer; .* torchformer.to_torch\(model\)"):
        decoder("torchformer", name)(np_model, SRC, **DECODERS[name])
    assert np_model.training and torch_model.training              # neither was switched to eval


LM = nf.CausalLM(nf.TransformerConfig(d_model=8, num_heads=2, d_ff=8, num_encoder_layers=0,
                                      num_decoder_layers=1, vocab_size=9, max_len=8), seed=0)


@pytest.mark.parametrize("name", DECODERS)
@pytest.mark.parametrize("bad", ["ab", 5, [1.5], [None]])
def test_suppress_ids_that_are_not_ids(name, bad):
    with pytest.raises(TypeError, match=r"^suppress_ids: expected a list of int token ids, got "):
        decoder("npformer", name)(LM, np.array([[3, 4]]), suppress_ids=bad, **DECODERS[name])


@pytest.mark.parametrize("name", DECODERS)
@pytest.mark.parametrize("model,inputs", [(LM, np.array([[3, 4]])),
                                          (nf.Transformer(CFG, seed=0), SRC)])
@pytest.mark.parametrize("bad", [9, -1, 2.0, True])
def test_eos_id_outside_the_vocabulary(name, model, inputs, bad):
    """An eos_id no token can equal used to run every row to the length limit, silently."""
    with pytest.raises(ValueError, match=rf"^eos_id: expected None or a token id in \[0, 9\), "
                                         rf"got {bad!r}$"):
        decoder("npformer", name)(model, inputs, eos_id=bad, **DECODERS[name])


@pytest.mark.parametrize("name", DECODERS)
def test_a_prompt_of_only_padding_is_named(name):
    prompts = np.array([[3, 4], [0, 0]])                     # row 1: pad_id only
    with pytest.raises(ValueError, match=r"^prompts: rows \[1\] hold only padding \(pad_id=0\); "
                                         r"every prompt needs at least one token$"):
        decoder("npformer", name)(LM, prompts, **DECODERS[name])
