"""Blocks that take their parts already built, as a model-building function of their project hands
them in: attention taking `qkv_fc` / `out_fc` and a feed-forward taking `fc1` / `fc2` get fresh
nn.Linear layers sized for their role, and an encoder block taking `self_attention` and
`position_ff` gets them built from the classes of another folder of its package (`layer/` beside
`block/`). Each MATCHes; the planted wrong scale and missing residual stay mismatches. Before, the
linear layers were passed sizes by position and the block held no weights (INTERFACE_ERROR)."""
from __future__ import annotations

import shutil

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402
from parity_tests.oracle.reading.recognise.linear_parts import is_linear_name  # noqa: E402


@pytest.fixture
def project(candidate_file, monkeypatch, tmp_path):
    # outside the project, its folder on PYTHONPATH, as a user's checkout would be: the worker
    # sees the package's other folders only there (never the folder above a submission by default)
    shutil.copytree(candidate_file("handed_parts"), tmp_path / "handed_parts")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    return tmp_path / "handed_parts"


def _path(candidate_file, *parts):
    return candidate_file("handed_parts", *parts)


@pytest.mark.parametrize("name, linear", [("qkv_fc", True), ("out_proj", True), ("fc1", True),
                                          ("linear_2", True), ("fc_dim", False), ("d_model", False),
                                          ("proj_dropout", False)])
def test_linear_layers_are_told_by_their_name(name, linear):
    assert is_linear_name(name) is linear


def test_attention_from_handed_linear_layers_matches(candidate_file):
    res = check("mha", f"{_path(candidate_file, 'layer', 'attention_layer.py')}:HandedAttentionLayer",
                examples=10)
    assert res.verdict == "match", render_text(res)
    assert any("'qkv_fc': a linear layer handed in" in n for n in res.notes), res.notes


def test_its_wrong_scale_twin_is_a_mismatch(candidate_file):
    res = check("mha", f"{_path(candidate_file, 'layer', 'attention_layer.py')}:HandedAttentionLayerBUG",
                examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_a_feed_forward_from_handed_linear_layers_matches(candidate_file):
    res = check("ffn", f"{_path(candidate_file, 'layer', 'feed_forward_layer.py')}:HandedFeedForwardLayer",
                examples=10)
    assert res.verdict == "match", render_text(res)


def test_a_block_whose_parts_live_in_another_folder_of_its_package_matches(project):
    res = check("encoder_layer", f"{project / 'block' / 'encoder_block.py'}:HandedEncoderBlock",
                examples=10)
    assert res.verdict == "match", render_text(res)
    assert any("built a HandedAttentionLayer" in n for n in res.notes), res.notes


def test_its_missing_residual_twin_is_a_mismatch(project):
    res = check("encoder_layer", f"{project / 'block' / 'encoder_block.py'}:HandedEncoderBlockBUG",
                examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)
