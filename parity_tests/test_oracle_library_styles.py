"""Code written as libraries write it reaches a verdict from the plain command: Conv1D (in, out)
square weights, config objects read for attributes, required bias / dropout / mask arguments,
adapters declaring self-attention, adapters together with the eps probe, PYTHONPATH in the worker.
"""
from __future__ import annotations

import os

import pytest

pytest.importorskip("torch")

from parity_tests.conftest import candidate_path  # noqa: E402
from parity_tests.oracle import check
from parity_tests.oracle.core.report import render_text

DIR = candidate_path()
FILE = os.path.join(DIR, "library_styles.py")


def run(component, name, **kw):
    return check(component, f"{FILE}:{name}", examples=kw.pop("examples", 8), **kw)


def test_conv1d_square_weights_read_like_their_class():
    res = run("mha", "Conv1DAttention")
    assert res.verdict == "match", render_text(res)
    assert any("like the other Conv1D weights" in m for m in res.mapping), res.mapping


def test_conv1d_wrong_scale_still_mismatches_and_names_the_cause():
    res = run("mha", "Conv1DAttentionModelScale", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
    assert any("likely cause" in n and "sqrt(d_model)" in n for n in res.notes), res.notes


def test_config_attributes_no_hyperparameter_names_get_defaults_and_are_reported():
    res = run("ffn", "ChunkedFFN")
    assert res.verdict == "match", render_text(res)
    text = " ".join(res.notes)
    assert "'chunk_size_feed_forward'" in text and "'hidden_dropout_prob'" in text, res.notes


def test_config_attribute_with_no_meaning_is_an_interface_error_naming_it():
    res = run("ffn", "MysteryConfigFFN")
    assert res.verdict == "interface_error", render_text(res)
    assert "mystery_gain" in res.message and "--init-kwargs" in res.message, res.message
    res = run("ffn", "MysteryConfigFFN", init_kwargs={"mystery_gain": 1.0})
    assert res.verdict == "match", render_text(res)
    res = run("ffn", "MysteryConfigFFN", init_kwargs={"mystery_gain": 2.0}, examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_required_bias_switch_gets_a_bool_not_eps():
    res = run("layernorm", "BiasSwitchLayerNorm")
    assert res.verdict == "match", render_text(res)
    assert any("'bias': passed True" in n for n in res.notes), res.notes


def test_dropout_probability_gets_zero_not_a_size():
    res = run("ffn", "DropoutProbabilityFFN")
    assert res.verdict == "match", render_text(res)


def test_required_mask_argument_gets_an_all_attend_mask():
    res = run("sdpa", "attention_required_mask", examples=25)
    assert res.verdict == "match", render_text(res)
    assert any("'mask' is required" in n for n in res.notes), res.notes


def test_adapter_can_declare_self_attention():
    res = run("mha", "SelfOnlyAttention",
              adapter_path=os.path.join(DIR, "library_adapter_self.py"))
    assert res.verdict == "match", render_text(res)
    assert any("self-attention" in n for n in res.notes), res.notes


def test_adapter_hooks_keep_the_eps_probe():
    res = run("layernorm", "FixedEpsLayerNorm",
              adapter_path=os.path.join(DIR, "library_adapter_eps.py"), examples=25)
    assert res.verdict == "match", render_text(res)
    assert any("fixed by the candidate's code at 1e-06" in n for n in res.notes), res.notes


def test_pythonpath_reaches_the_worker(tmp_path, monkeypatch):
    pkg = tmp_path / "libdir" / "mylib"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("WIDTH_FACTOR = 1\n")
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "student.py").write_text(
        "import torch\nfrom mylib import WIDTH_FACTOR\n"
        "class FFN(torch.nn.Module):\n"
        "    def __init__(self, d_model, d_ff):\n"
        "        super().__init__()\n"
        "        self.a = torch.nn.Linear(d_model, d_ff * WIDTH_FACTOR)\n"
        "        self.b = torch.nn.Linear(d_ff * WIDTH_FACTOR, d_model)\n"
        "    def forward(self, x):\n"
        "        return self.b(torch.relu(self.a(x)))\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(tmp_path / "libdir"), os.environ.get("PYTHONPATH", "")]))
    res = check("ffn", f"{sub / 'student.py'}:FFN", examples=5)
    assert res.verdict == "match", render_text(res)


@pytest.mark.parametrize("name", ["BlockNamedEncoderLayer", "OutputNormEncoderLayer"])
def test_whole_layer_blocks_and_norms_resolve_without_map(name):
    res = run("encoder_layer", name)
    assert res.verdict == "match", render_text(res)
    assert any("registration order" in m or "by structure" in m for m in res.mapping), res.mapping


def test_whole_layer_found_by_structure_still_catches_a_missing_residual():
    res = run("encoder_layer", "BlockNamedEncoderLayerNoResidual", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


@pytest.mark.parametrize("name,note", [("attention_with_width", "'d_k' is required: passed the head width"),
                                       ("attention_with_dropout", "'dropout' is required: passed None"),
                                       ("attention_with_cache", "'cache' is required: passed None")])
def test_required_forward_arguments_filled_by_meaning(name, note):
    res = run("sdpa", name, examples=15)
    assert res.verdict == "match", render_text(res)
    assert any(note in n for n in res.notes), res.notes


def test_head_width_by_meaning_still_catches_a_wrong_scale():
    res = run("sdpa", "attention_with_width_twice", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
    assert any("likely cause" in n and "divided by d_k" in n for n in res.notes), res.notes


def test_mask_with_head_axis_added_by_the_code_gets_three_axes():
    res = run("mha", "HeadAxisMaskAttention", examples=25)
    assert res.verdict == "match", render_text(res)
    assert any("masks handed over with 3 axes" in n for n in res.notes), res.notes


def test_mask_added_to_the_scores_is_handed_over_additive():
    res = run("mha", "AdditiveMaskAttention", examples=25)
    assert res.verdict == "match", render_text(res)
    assert any("masks handed over additive" in n for n in res.notes), res.notes


def test_flipped_mask_is_not_taken_for_another_convention():
    # its text (the method its forward hands the mask to) fills where the mask is set: read as
    # True = hidden (recognise/hidden_mask), never as additive
    res = run("mha", "FlippedMaskAttention", examples=25)
    assert res.verdict == "match", render_text(res)
    assert any("as True = hidden" in n for n in res.notes), res.notes
    assert not any("masks handed over additive" in n for n in res.notes), res.notes


def test_flipped_mask_under_a_declared_keep_convention_fails():
    res = run("mha", "FlippedMaskAttention", examples=25, declared=("mask_convention",),
              shrink=False)
    assert res.verdict in ("mismatch", "non_finite"), render_text(res)
    assert not any("masks handed over additive" in n or "True = hidden" in n for n in res.notes), res.notes
