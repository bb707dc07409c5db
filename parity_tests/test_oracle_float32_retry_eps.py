"""The quick check's float32 re-check (core/float32_tables.retry) and what it may hide or show.

- An epsilon that lies (`eps_attribute_unused`: `self.eps` is the 1e-5 the assignment asks for, the
  arithmetic adds 9e-6): on rows of large spread the float64 difference is of float32 rounding
  size, and the float32 re-check's tolerance hid it (MATCH "under an assumption"). The float64
  counterexample is now replayed with inputs and weights scaled by 1e-2 first: an epsilon's
  difference grows there, rounding's does not, and the float64 MISMATCH stands.
- Right code taking its softmax in float32 (an encoder layer, written below from the same file
  with the right epsilon) still matches under the stated assumption.
- A float32 re-check that fails on a value reports its own counterexample (two heads for a scale bug), not
  the float64 one that showed only rounding; one that ends otherwise (float64 returned for float32
  inputs) leaves the float64 MISMATCH.
"""
from __future__ import annotations

import os

import pytest

pytest.importorskip("torch")

from parity_tests.conftest import candidate_path  # noqa: E402
from parity_tests.oracle import check, render_text  # noqa: E402

HOSTILE = os.path.join(os.path.dirname(__file__), "oracle_hostile")
LIAR = os.path.join(HOSTILE, "eps_attribute_unused.py")
SALT = 2          # values on which the liar's float64 difference is float32-sized (it got MATCH)


def test_an_epsilon_only_bug_cannot_hide_in_the_float32_recheck():
    res = check("encoder_layer", f"{LIAR}:EncoderLayerNearbyEps", salt=SALT, runs=1,
                settings={"eps": 1e-5})
    assert res.verdict == "mismatch", render_text(res)
    assert res.options["dtype"] == "float64", res.options
    assert any(n.startswith("not float32 rounding") for n in res.notes), res.notes


def test_right_float32_softmax_encoder_layer_still_matches_under_the_assumption(tmp_path):
    src = open(LIAR).read().replace("    used = 1e-12", "    used = 1e-5").replace(
        "torch.softmax(scores, dim=-1)",
        "torch.softmax(scores, dim=-1, dtype=torch.float32).to(scores.dtype)")
    assert "used = 1e-5" in src and "dtype=torch.float32" in src
    (tmp_path / "layer.py").write_text(src)
    res = check("encoder_layer", f"{tmp_path / 'layer.py'}:EncoderLayer", salt=SALT, runs=1,
                settings={"eps": 1e-5})
    assert res.verdict == "match", render_text(res)
    assert res.notes[0].startswith("assumption: the candidate computes part of its attention"), \
        res.notes


def test_a_failing_float32_recheck_reports_the_example_that_shows_the_failure():
    res = check("mha", candidate_path("float32_softmax.py") + ":Float32SoftmaxAttentionWrongScale",
                examples=25)
    assert res.verdict in ("mismatch", "non_finite"), render_text(res)
    # the bug is 1/sqrt(d_model) for 1/sqrt(d_head): invisible with one head
    assert res.example["num_heads"] > 1, res.example
    assert res.options["dtype"] == "float32" and "--dtype float32" in res.replay, res.replay
    assert res.notes[0].startswith("the float64 check differed only by float32 rounding"), res.notes


def test_a_float32_recheck_that_gets_float64_back_leaves_the_float64_mismatch():
    # 1e-9 added to the softmax's denominator: a float32-sized difference in float64, so the
    # re-check runs; `/ np.sqrt(d_k)` then returns float64 for float32 inputs. That is not float32
    # code: the float64 MISMATCH stands (it was WRONG_DTYPE on such values, MISMATCH on others)
    res = check("sdpa", candidate_path("softmax_denominator_eps.py") + ":attention", salt=1, runs=1)
    assert res.verdict == "mismatch" and res.quantity == "output", render_text(res)
    assert res.options["dtype"] == "float64", res.options
    assert any(n.startswith("checked again with --dtype float32 (is it float32 code?): "
                            "wrong_dtype") for n in res.notes), res.notes
