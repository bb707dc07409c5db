"""A packed q|k|v projection read in another order of its (part, head, width) axes than the plain
thirds: the oracle finds the order by a probe (reading/recognise/qkv_groups.py), also when the
forward requires its mask, hands the reference's weights over in that order and reads the gradients
back so; the report names the order. Planted bugs stay MISMATCH."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402
from parity_tests.oracle.reading.packed_order import ORDERS, PLAIN, regroup, same_rows  # noqa: E402


@pytest.fixture
def orders(candidate_file):
    return candidate_file("packed_row_orders.py")


@pytest.mark.parametrize("comp,name", [("mha", "WidthFirstPackedAttention"),
                                       ("encoder_layer", "WidthFirstEncoderLayer")])
def test_width_first_packed_rows_match(orders, comp, name):
    res = check(comp, f"{orders}:{name}", examples=15)
    assert res.verdict == "match", render_text(res)
    assert any("(width, part, head)" in n for n in res.notes), res.notes


def test_head_grouped_rows_are_found_when_the_mask_is_required(orders):
    res = check("mha", f"{orders}:MaskRequiredGroupedAttention", examples=15)
    assert res.verdict == "match", render_text(res)
    assert any("grouped by head" in n for n in res.notes), res.notes


@pytest.mark.parametrize("comp,name", [("mha", "WidthFirstPackedAttentionBUG"),
                                       ("encoder_layer", "WidthFirstEncoderLayerBUG"),
                                       ("mha", "MaskRequiredGroupedAttentionBUG")])
def test_a_planted_bug_in_reordered_packed_attention_is_a_mismatch(orders, comp, name):
    res = check(comp, f"{orders}:{name}", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


@pytest.mark.parametrize("order", ORDERS)
def test_regroup_is_undone_by_its_inverse(order):
    rng = np.random.default_rng(0)
    full = rng.standard_normal((3 * 2 * 4, 5))
    there = regroup(full, 3, 2, order=order)
    assert np.array_equal(regroup(there, 3, 2, back=True, order=order), full)
    assert np.array_equal(there, full) == (order == PLAIN)


def test_width_first_order_places_rows_as_einops_d_k_h_reads_them():
    # candidate row d * 3H + k * H + h holds the reference's part k, head h, width d
    n, heads, width = 3, 2, 4
    ref = np.arange(n * heads * width)[:, None]          # reference row (k, h, d) = k*H*W + h*W + d
    cand = regroup(ref, n, heads, order=(2, 0, 1))[:, 0]
    for k in range(n):
        for h in range(heads):
            for d in range(width):
                assert cand[d * n * heads + k * heads + h] == k * heads * width + h * width + d


def test_orders_coincide_only_where_an_axis_has_one_place():
    assert same_rows((2, 0, 1), PLAIN, 3, 2, 1)          # one width per head: (k h) either way
    assert not same_rows((2, 0, 1), PLAIN, 3, 2, 2)
    assert same_rows((1, 0, 2), PLAIN, 3, 1, 4)          # one head: grouped is plain
