"""benchmarks/hf_backend.py: transformers' GPT2LMHeadModel on npformer's weights is the same model
(logits, greedy tokens), and it times only the workloads it supports."""
import dataclasses

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from benchmarks.backends import BACKENDS, NotApplicable, make_inputs, make_session, master_weights  # noqa: E402
from benchmarks.configs import CONFIGS  # noqa: E402


def _small_gpt2():
    bc = CONFIGS["gpt2s-cpu"]          # GPT-2's layout, shrunk
    fields = dict(bc.model_fields, d_model=16, num_heads=2, d_ff=32, num_decoder_layers=2,
                  vocab_size=61, max_len=40)
    return dataclasses.replace(bc, model_fields=fields, batch=2, tgt_len=12, gen_tokens=6)


def test_same_logits_and_tokens_as_npformer():
    bc = _small_gpt2()
    inputs, master = make_inputs(bc, bc.transformer_config()), master_weights(bc)
    hf = make_session(bc, BACKENDS["hf-cpu"], master, inputs, 1)
    npf = make_session(bc, BACKENDS["np-f64"], master, inputs, 1)
    tgt = inputs.tgt_in[:, :10]
    ours = npf.logits(inputs.src, tgt)
    # float32 through two layers: ~1e-6 of the logits' scale; a wrong mapping is of order 1
    assert np.max(np.abs(hf.logits(inputs.src, tgt) - ours)) <= 1e-5 * np.max(np.abs(ours))
    tokens = np.asarray(hf.fn("generate")())
    assert tokens.shape == (inputs.gen_src.shape[0], inputs.gen_src.shape[1] + bc.gen_tokens)
    np.testing.assert_array_equal(tokens[:, -bc.gen_tokens:], npf.fn("generate")().tokens)
    assert np.asarray(hf.fn("forward")()).shape == (*inputs.tgt_in.shape, 61)
    with pytest.raises(NotApplicable, match="forward and generate"):
        hf.fn("train_step")


def test_seq2seq_configurations_are_skipped():
    bc = CONFIGS["tiny"]
    s = make_session(bc, BACKENDS["hf-cpu"], {}, make_inputs(bc, bc.transformer_config()), 1)
    with pytest.raises(NotApplicable, match="seq2seq"):
        s.fn("generate")
