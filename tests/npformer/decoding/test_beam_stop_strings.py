"""Beam search with stop strings (npformer.decoding.beam, `stop=`), both twins: a candidate whose
text is final ends as an EOS candidate does, the search of an item ends once its hypotheses are
final (fewer model calls, counted), and the hypotheses equal those of the same search run to the
budget (early_stopping=False); with one beam and no length penalty it is greedy's stopped run."""
from __future__ import annotations

import numpy as np
import pytest

from npformer.decoding import step as np_step
from npformer.decoding.beam import beam_search
from npformer.decoding.generate import greedy_decode
from npformer.decoding.stop import StopStrings, cut_at_stop
from npformer.models.causal_lm import CausalLM
from npformer.models.config import TransformerConfig

LETTERS = "abcdefghijklmnopqrstuvwxyz"
CONFIG = dict(d_model=16, num_heads=2, d_ff=32, num_encoder_layers=0, num_decoder_layers=1,
              vocab_size=12, max_len=40, dropout=0.0, dtype="float64")


def decode(ids) -> str:
    """A tokenizer of one letter per id."""
    return "".join(LETTERS[i % 26] for i in ids)


def _np(x) -> np.ndarray:
    return np.asarray(x.cpu() if hasattr(x, "cpu") else x)


def _calls(monkeypatch, step_type) -> list:
    calls = []
    run = step_type.run

    def counting(self, *a, **k):
        calls.append(1)
        return run(self, *a, **k)
    monkeypatch.setattr(step_type, "run", counting)
    return calls


PROMPTS = np.array([[1, 2, 3, 0], [4, 5, 0, 0]])          # right-padded, pad_id 0


def _stop_for(model, search) -> list[str]:
    """A stop string each row's best free-running hypothesis meets at its 3rd generated letter."""
    out = search(model, PROMPTS, beam_size=3, max_new_tokens=30, eos_id=None)
    return sorted({decode(_np(out.tokens)[r][2:3]) for r in range(2)})


@pytest.mark.parametrize("twin", ["numpy", "torch"])
def test_beam_with_stop_ends_early_and_equals_the_run_to_the_budget(twin, monkeypatch):
    if twin == "numpy":
        model, search, step_type = CausalLM(TransformerConfig(**CONFIG), seed=3), beam_search, \
            np_step.NumpyDecodeStep
    else:
        tf_models = pytest.importorskip("torchformer.models.causal_lm")
        tf_beam = pytest.importorskip("torchformer.decoding.beam")
        tf_gen = pytest.importorskip("torchformer.decoding.generate")
        model, search = tf_models.CausalLM(TransformerConfig(**CONFIG), seed=3), tf_beam.beam_search
        step_type = type(tf_gen.TORCH_STEP)
    stops = _stop_for(model, search)
    stop = StopStrings(stops, decode)
    args = dict(beam_size=3, max_new_tokens=30, eos_id=None, stop=stop)
    calls = _calls(monkeypatch, step_type)
    full = search(model, PROMPTS, early_stopping=False, **args)
    n_full = len(calls)
    calls.clear()
    early = search(model, PROMPTS, **args)
    assert len(calls) < n_full                              # ended before the budget
    for name in ("beams", "beam_lengths", "tokens", "lengths"):
        np.testing.assert_array_equal(_np(getattr(early, name)), _np(getattr(full, name)), err_msg=name)
    np.testing.assert_allclose(_np(early.beam_scores), _np(full.beam_scores), rtol=1e-12)
    tokens, lengths = _np(early.tokens), _np(early.lengths)
    for r in range(2):                                      # each best hypothesis ends at its stop
        text = decode(tokens[r][: lengths[r]])
        assert cut_at_stop(text, stops) != text and lengths[r] < 30
        assert any(text.endswith(s) for s in stops)


def test_one_beam_without_length_penalty_is_greedy_with_the_same_stop():
    model = CausalLM(TransformerConfig(**CONFIG), seed=4)
    stop = StopStrings(_stop_for(model, beam_search), decode)
    g = greedy_decode(model, PROMPTS, max_new_tokens=30, eos_id=None, stop=stop)
    b = beam_search(model, PROMPTS, beam_size=1, length_penalty_alpha=0.0, max_new_tokens=30,
                    eos_id=None, stop=stop)
    np.testing.assert_array_equal(b.lengths, g.lengths)
    for r in range(2):
        np.testing.assert_array_equal(b.tokens[r, : b.lengths[r]], g.tokens[r, : g.lengths[r]])
    assert (g.lengths < 30).all()


def test_beam_refuses_a_stop_that_is_not_a_stop_hook():
    model = CausalLM(TransformerConfig(**CONFIG), seed=4)
    with pytest.raises(TypeError, match="stop: expected StopStrings"):
        beam_search(model, PROMPTS, beam_size=2, max_new_tokens=5, stop=["a"])


def test_a_translation_models_beams_end_at_their_stop_as_in_the_run_to_the_budget(monkeypatch):
    from npformer.data.vocab import EOS
    from npformer.models.transformer import Transformer
    c = TransformerConfig(**{**CONFIG, "num_encoder_layers": 1})
    model = Transformer(c, seed=2)
    src = np.array([[5, 6, 7, EOS], [8, 9, EOS, 0]])
    free = beam_search(model, src, beam_size=3, max_new_tokens=20, eos_id=None)
    stops = sorted({decode(free.tokens[r][2:3]) for r in range(2)})
    stop = StopStrings(stops, decode)
    calls = _calls(monkeypatch, np_step.NumpyDecodeStep)
    full = beam_search(model, src, beam_size=3, max_new_tokens=20, eos_id=None, stop=stop,
                       early_stopping=False)
    n_full = len(calls)
    calls.clear()
    early = beam_search(model, src, beam_size=3, max_new_tokens=20, eos_id=None, stop=stop)
    assert len(calls) < n_full
    np.testing.assert_array_equal(early.beams, full.beams)
    np.testing.assert_array_equal(early.beam_lengths, full.beam_lengths)
