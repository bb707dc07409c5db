"""Attention applying its mask as True = hidden in code of its own the mask is handed to (a
module-level helper, a method, the attention a layer holds): the mask is followed there by the
parameter it is passed as, and masks are handed over that way (`--mask-convention drop`). A helper
reading the mask True = seen, or one out of reach (`*args`), is not read so. Planted bugs stay
MISMATCH."""
from __future__ import annotations

import ast
import os

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402
from parity_tests.oracle.reading.recognise.hidden_mask import reads_true_as_hidden  # noqa: E402

HIDDEN = "as True = hidden"


@pytest.fixture
def helpers(candidate_file):
    return candidate_file("helper_hidden_masks.py")


@pytest.mark.parametrize("component, name", [
    ("mha", "HelperMaskAttention"),
    ("mha", "NumpyHelperMaskAttention"),
    ("encoder_layer", "HelperMaskEncoderLayer"),
    ("decoder_layer", "HelperMaskDecoderLayer"),
])
def test_a_mask_applied_as_hidden_in_a_helper_of_its_own_is_followed_and_matches(helpers, component, name):
    res = check(component, f"{helpers}:{name}", examples=10)
    text = render_text(res)
    assert res.verdict == "match", text
    assert HIDDEN in text and "--mask-convention drop" in text


@pytest.mark.parametrize("component, name", [
    ("mha", "HelperMaskAttentionBUG"),
    ("mha", "NumpyHelperMaskAttentionBUG"),
    ("encoder_layer", "HelperMaskEncoderLayerBUG"),
    ("decoder_layer", "HelperMaskDecoderLayerBUG"),
])
def test_a_planted_bug_beside_a_followed_hidden_mask_is_a_mismatch(helpers, component, name):
    res = check(component, f"{helpers}:{name}", examples=25)
    text = render_text(res)
    assert res.verdict == "mismatch", text
    assert HIDDEN in text


def test_a_helper_reading_the_mask_as_seen_keeps_the_default_convention(helpers):
    res = check("mha", f"{helpers}:SeenHelperAttention", examples=10)
    text = render_text(res)
    assert res.verdict == "match", text
    assert HIDDEN not in text


def test_a_mask_out_of_reach_is_not_read_and_the_failure_suggests_the_drop_convention(helpers):
    res = check("mha", f"{helpers}:PackedHelperAttention", examples=10)
    text = render_text(res)
    assert res.verdict in ("mismatch", "non_finite"), text
    assert HIDDEN not in text
    assert "check again with --mask-convention drop" in text


def test_the_drop_hint_is_not_given_when_the_mask_was_read(helpers):
    res = check("mha", f"{helpers}:HelperMaskAttentionBUG", examples=25)
    assert "check again with --mask-convention drop" not in render_text(res)


def test_a_library_function_handed_the_mask_is_not_followed():
    import torch.nn.functional as F

    from parity_tests.oracle.reading.recognise.hidden_mask import Scope
    tree = ast.parse("def f(q, k, v, mask):\n return F.scaled_dot_product_attention(q, k, v, mask)")
    scope = Scope({"F": F}, None, None, os.path.dirname(os.path.dirname(os.path.realpath(F.__file__))))
    assert reads_true_as_hidden(tree, "mask", scope) is False


def _hide(scores, m):
    return scores.masked_fill(m, float("-inf"))


def _show(scores, m):
    return scores.masked_fill(m == 0, float("-inf"))


@pytest.mark.parametrize("body, hides", [
    ("return _hide(s, mask)", True),
    ("return _hide(s, mask[:, None])", True),                         # a reshape handed on
    ("return _hide(m=mask.unsqueeze(1), scores=s)", True),            # by keyword
    ("return _show(s, mask)", False),                                 # its helper: True = seen
    ("return _hide(s, ~mask)", False),                                # inverted on the way
    ("return _hide(*[s, mask])", False),                              # through *args: unknown
    ("return s.masked_fill(mask.unsqueeze(1), -1e9)", True),          # a reshape filled
    ("return s.masked_fill(mask.unsqueeze(1) == 0, -1e9)", False),    # a reshape compared
])
def test_a_mask_is_followed_into_a_function_of_its_folder_by_its_parameter(body, hides):
    from parity_tests.oracle.reading.recognise.hidden_mask import Scope
    tree = ast.parse("def f(s, mask):\n " + body)
    scope = Scope(globals(), None, None, os.path.dirname(os.path.realpath(__file__)))
    assert reads_true_as_hidden(tree, "mask", scope) is hides
