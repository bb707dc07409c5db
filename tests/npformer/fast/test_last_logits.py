"""npformer.fast.last_logits (decoding projects the last fed position only) against the plain model
and the plain decode loops."""
from __future__ import annotations

import numpy as np
import pytest

import npformer as nf
from npformer.decoding.beam import beam_search
from npformer.decoding.generate import greedy_decode
from npformer.fast.accelerate import accelerate
from npformer.fast.last_logits import (
    last_position_logits_enabled,
    last_position_only,
    use_last_position_logits,
)
from npformer.fast.linear import FEW_ROWS, use_few_rows_linear
from npformer.models.causal_lm import CausalLM
from npformer.models.config import TransformerConfig


def _causal(dtype, vocab=23, max_len=48):
    cfg = TransformerConfig(vocab_size=vocab, pad_id=0, d_model=16, num_heads=2, d_ff=32,
                            num_decoder_layers=2, num_encoder_layers=0, max_len=max_len,
                            dtype=dtype, dropout=0.0)
    return CausalLM(cfg, seed=3).eval()


def _seq2seq(dtype):
    cfg = nf.TransformerConfig(d_model=8, num_heads=2, d_ff=16, num_encoder_layers=1,
                               num_decoder_layers=1, vocab_size=17, max_len=20, dtype=dtype)
    return nf.Transformer(cfg, seed=1).eval()


def _bound(model, dtype):
    """D * eps * sum_i |h_i w_i| for the last position's logits of the plain forward just run
    (h: output_proj's cached input), the reordered-sum bound."""
    (lin_cache, _y) = model.output_proj._cache
    h = lin_cache.x[:, -1]                                            # (B, D)
    W = model.output_proj.weight.data                                 # (V, D)
    return h.shape[-1] * np.finfo(dtype).eps * (np.abs(h) @ np.abs(W).T)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("B,T", [(1, 1), (1, 5), (3, 2), (2, FEW_ROWS + 3), (3, 17)])
@pytest.mark.parametrize("few_rows", [False, True])
def test_last_position_logits_equal_the_plain_last_logits_to_rounding(dtype, B, T, few_rows):
    model = _causal(dtype)
    if few_rows:
        use_few_rows_linear(model)
    ids = np.random.default_rng(T).integers(1, 23, size=(B, T))
    want = model(ids)                                                 # (B, T, V) plain
    bound = _bound(model, dtype)
    use_last_position_logits(model)
    plain_again = model(ids)                                          # outside: still plain
    np.testing.assert_array_equal(plain_again, want)
    with last_position_only(model):
        got = model(ids)
    assert got.shape == (B, 1, want.shape[-1]) and got.dtype == want.dtype
    assert np.all(np.abs(got[:, 0] - want[:, -1]) <= bound)
    assert "forward" not in model.output_proj.__dict__               # unbound on the way out


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("use_cache", [True, False])
def test_greedy_decode_of_a_switched_model_gives_the_plain_tokens(dtype, use_cache):
    prompts = np.array([[1, 5, 6, 7, 8, 9, 4], [1, 9, 0, 0, 0, 0, 0], [1, 4, 4, 3, 0, 0, 0]])
    plain_model, fast_model = _causal(dtype), _causal(dtype)
    want = greedy_decode(plain_model, prompts, max_new_tokens=9, use_cache=use_cache, eos_id=None)
    use_last_position_logits(accelerate(fast_model, 2))
    got = greedy_decode(fast_model, prompts, max_new_tokens=9, use_cache=use_cache, eos_id=None)
    np.testing.assert_array_equal(got.tokens, want.tokens)
    np.testing.assert_array_equal(got.lengths, want.lengths)
    tol = 1e-4 if dtype == "float32" else 1e-12                      # logits of size ~1
    np.testing.assert_allclose(got.logits, want.logits, rtol=tol, atol=tol)
    np.testing.assert_allclose(got.scores, want.scores, rtol=tol, atol=tol)


def test_beam_search_of_a_switched_seq2seq_model_gives_the_plain_beams():
    src = np.random.default_rng(4).integers(3, 17, size=(3, 6))
    src[:, -1] = 2                                                    # EOS ends each source
    plain_model, fast_model = _seq2seq("float64"), _seq2seq("float64")
    want = beam_search(plain_model, src, beam_size=3, max_new_tokens=7)
    got = beam_search(use_last_position_logits(fast_model), src, beam_size=3, max_new_tokens=7)
    np.testing.assert_array_equal(got.beams, want.beams)
    np.testing.assert_allclose(got.beam_scores, want.beam_scores, rtol=1e-12, atol=1e-12)


def test_the_switch_is_per_instance_and_can_be_turned_off():
    a, b = _causal("float64"), _causal("float64")
    use_last_position_logits(a)
    assert last_position_logits_enabled(a) and not last_position_logits_enabled(b)
    use_last_position_logits(a, on=False)
    assert not last_position_logits_enabled(a)
    ids = np.array([[1, 2, 3]])
    with last_position_only(a):                                       # off: the plain model
        assert a(ids).shape == (1, 3, 23)


def test_an_error_inside_still_unbinds_the_projection():
    model = use_last_position_logits(_causal("float64"))
    with pytest.raises(ValueError, match="ids"):
        with last_position_only(model):
            model(np.array([[1, 99]]))                                # id out of the vocabulary
    assert "forward" not in model.output_proj.__dict__
    assert model(np.array([[1, 2]])).shape == (1, 2, 23)


def test_bad_models_are_named():
    with pytest.raises(TypeError, match="model: expected an npformer model, got dict"):
        use_last_position_logits({})
    with pytest.raises(TypeError, match="output_proj is a Linear"):
        use_last_position_logits(nf.Linear(3, 4))   # no output_proj
    with pytest.raises(TypeError, match="on: expected a bool"):
        use_last_position_logits(_causal("float64"), on=1)


@pytest.mark.parametrize("task", ["reverse", "lm"])
def test_npformer_generate_decodes_alike_with_and_without_fast_decoding(task, tmp_path, capsys,
                                                                        monkeypatch):
    """`npformer generate` switches the loaded model (numpy backend) unless --no-fast-decoding, and
    prints the same decodes either way."""
    import npformer.fast.last_logits as ll
    from npformer.cli.main import main
    from tests.npformer.conftest import tiny_train_args
    ckpt = str(tmp_path / "m.npz")
    sizes = {} if task == "reverse" else {"num_symbols": None, "max_len": None}
    assert main(["train", *tiny_train_args(steps=3, task=task, **sizes), "--save", ckpt]) == 0
    capsys.readouterr()
    switched = []
    original = ll.use_last_position_logits

    def spy(model, on=True):
        switched.append(on)
        return original(model, on)
    monkeypatch.setattr(ll, "use_last_position_logits", spy)
    inputs = ["abc", "d"] if task == "reverse" else ["1+2=", "34+5="]
    outs = []
    for extra in ([], ["--no-fast-decoding"]):
        assert main(["generate", ckpt, *inputs, "--max-new-tokens", "3", *extra]) == 0
        outs.append(capsys.readouterr().out)
    assert switched == [True]                                        # the first run only
    assert outs[0] == outs[1] and outs[0].strip()
