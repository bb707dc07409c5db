"""Stop strings end a row of greedy decoding or sampling early (npformer.decoding.stop), in both twins:
the cut text equals the cut text of the run to max_new_tokens, rows of a batch end independently,
and the model is called fewer times (counted here)."""
from __future__ import annotations

import numpy as np
import pytest

from npformer.decoding import generate as np_generate
from npformer.decoding.stop import StopStrings, cut_at_stop, stop_is_final
from npformer.models.causal_lm import CausalLM
from npformer.models.config import TransformerConfig

LETTERS = "abcdefghijklmnopqrstuvwxyz"


def decode(ids) -> str:
    """A tokenizer of one letter per id."""
    return "".join(LETTERS[i % 26] for i in ids)


def test_a_stop_is_final_only_when_no_earlier_stop_can_still_complete():
    assert not stop_is_final("xyab", ["q"])
    assert stop_is_final("xyab", ["a"])
    assert not stop_is_final("abc", ["abcd", "c"])     # a "d" next moves the cut to 0
    assert stop_is_final("abcx", ["abcd", "c"])
    assert stop_is_final("abcd", ["abcd", "c"])
    assert not stop_is_final("ab\ufffd", ["b\ufffd"])  # a character cut between tokens: unknown
    assert stop_is_final("ab\ufffdc", ["b\ufffd"])      # a U+FFFD with text after it is final


def _model(twin: str):
    c = TransformerConfig(d_model=16, num_heads=2, d_ff=32, num_encoder_layers=0,
                          num_decoder_layers=1, vocab_size=12, max_len=64, dropout=0.0,
                          dtype="float64")
    if twin == "numpy":
        return CausalLM(c, seed=5), np_generate, pytest.importorskip("npformer.decoding.sampling")
    torch_models = pytest.importorskip("torchformer.models.causal_lm")
    return (torch_models.CausalLM(c, seed=5), pytest.importorskip("torchformer.decoding.generate"),
            pytest.importorskip("torchformer.decoding.sampling"))


def _counted(monkeypatch, gen_module) -> list:
    """Calls of the twin's decode step (one model call each)."""
    step = type(getattr(gen_module, "TORCH_STEP", None) or np_generate.NUMPY_STEP)
    calls = []
    run = step.run

    def counting(self, *a, **k):
        calls.append(1)
        return run(self, *a, **k)
    monkeypatch.setattr(step, "run", counting)
    return calls


def _rows(out) -> list[str]:
    tokens = np.asarray(out.tokens.cpu() if hasattr(out.tokens, "cpu") else out.tokens)
    lengths = np.asarray(out.lengths.cpu() if hasattr(out.lengths, "cpu") else out.lengths)
    return [decode(row[:n]) for row, n in zip(tokens, lengths)], lengths


@pytest.mark.parametrize("twin", ["numpy", "torch"])
@pytest.mark.parametrize("how", ["greedy", "sample"])
def test_stopped_rows_equal_the_full_run_cut_and_save_model_calls(monkeypatch, twin, how):
    model, gen, sampling = _model(twin)
    prompts = np.array([[5, 6, 7], [8, 9, 10], [11, 5, 9], [6, 6, 6]])
    N = 40

    def run(stop=None):
        if how == "greedy":
            return gen.greedy_decode(model, prompts, max_new_tokens=N, eos_id=None, stop=stop)
        return sampling.sample(model, prompts, max_new_tokens=N, eos_id=None, seed=11,
                               temperature=3.0, stop=stop)

    calls = _counted(monkeypatch, gen)
    full_text, full_len = _rows(run())
    full_calls = len(calls)
    assert all(n == N for n in full_len)
    # a stop string that row 0 meets early, and one no row may meet at all
    stops = [full_text[0][2:4], "zzzzzzzz"]
    calls.clear()
    text, lengths = _rows(run(StopStrings(stops, decode)))
    assert [cut_at_stop(t, stops) for t in text] == [cut_at_stop(t, stops) for t in full_text]
    ended = [stops[0] in t for t in full_text]
    for t, n, e in zip(text, lengths, ended):
        assert (n < N) == e and (not e or t.endswith(stops[0]))  # each row ends at its own stop
    if all(ended):
        assert len(calls) < full_calls
    else:
        assert len(calls) == full_calls                    # the batch runs while a row is live


@pytest.mark.parametrize("twin", ["numpy", "torch"])
def test_a_single_row_stops_at_its_stop_string_with_fewer_model_calls(monkeypatch, twin):
    model, gen, _ = _model(twin)
    prompt = np.array([[5, 6, 7]])
    calls = _counted(monkeypatch, gen)
    full = _rows(gen.greedy_decode(model, prompt, max_new_tokens=40, eos_id=None))[0][0]
    full_calls, stop = len(calls), full[1:3]
    calls.clear()
    out = _rows(gen.greedy_decode(model, prompt, max_new_tokens=40, eos_id=None,
                                  stop=StopStrings([stop], decode)))[0][0]
    assert cut_at_stop(out, [stop]) == cut_at_stop(full, [stop])
    assert out.endswith(stop) and len(out) == full.index(stop) + len(stop)
    assert len(calls) == full_calls - (len(full) - len(out))    # one call per token not made


def test_stop_strings_refuse_what_is_not_a_list_of_strings():
    with pytest.raises(TypeError, match="stop"):
        StopStrings("ab", decode)
    with pytest.raises(ValueError, match="stop"):
        StopStrings(["ab", ""], decode)
    with pytest.raises(TypeError, match="decode"):
        StopStrings(["ab"], None)


@pytest.mark.parametrize("twin", ["numpy", "torch"])
@pytest.mark.parametrize("how", ["greedy", "sample"])
def test_decoding_refuses_a_stop_that_is_not_a_stop_hook(twin, how):
    """stop=["END"] (what a user of transformers' stop_strings would pass) is named at once, not
    a 'list object is not callable' from inside the loop."""
    model, gen, sampling = _model(twin)
    run = gen.greedy_decode if how == "greedy" else sampling.sample
    prompt = np.array([[1, 2, 3]])
    if twin == "torch":
        prompt = pytest.importorskip("torch").as_tensor(prompt)
    with pytest.raises(TypeError, match=r"^stop: expected StopStrings\(stops, tokenizer\.decode\) "
                                        r"or None, got list$"):
        run(model, prompt, max_new_tokens=3, eos_id=None, stop=["END"])
