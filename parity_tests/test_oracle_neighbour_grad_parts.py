"""A NumPy attention whose parts keep their gradients under names no pattern reads (`last_step`,
`last_shift`), read by behaviour: on an example with one key the query and key gradients are zero,
so their arrays do not change in backward, and the arrays that did change (`out.last_step`) sit
beside another parameter of that shape and are never taken for them (was: `out.last_step` read as
the query's gradient, MISMATCH for correct code); the zero gradient is read where the part's
neighbours keep theirs. Planted bugs, one in a part whose gradient is never written, still fail."""
from __future__ import annotations

import numpy as np
import pytest

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check, render_text
from parity_tests.oracle.reading.recognise import grad_behaviour as gb
from parity_tests.oracle.reading.recognise.grad_neighbours import beside_other, kept_alike, names

FILE = candidate_path("neighbour_grad_parts.py")


@pytest.mark.parametrize("name, verdict", [
    ("StepKeptAttention", "match"),
    ("StepKeptAttentionHalvedStep", "mismatch"),
    ("StepKeptAttentionStillQuery", "mismatch"),
])
def test_a_gradient_kept_beside_another_parameter_is_not_read_for_this_one(name, verdict):
    res = check("mha", f"{FILE}:{name}", examples=15)
    text = render_text(res)
    assert res.verdict == verdict, text
    assert not any("query.W was read from out." in n or "query.W was read from value." in n
                   for n in res.notes), res.notes


SHAPES = {"query.W": (2, 2), "out.W": (2, 2), "out.b": (2,), "W_q": (2, 2), "W_o": (2, 2)}


def test_an_array_in_another_parameters_part_or_named_for_it_sits_beside_it():
    assert beside_other("out.last_step", "query.W", SHAPES) == ("out.W", "by place")
    assert beside_other("query.last_step", "query.W", SHAPES) is None
    assert beside_other("g_W_o", "W_q", SHAPES) == ("W_o", "by its name")
    assert beside_other("g_W_q", "W_q", SHAPES) is None
    assert beside_other("cache.step", "W_q", SHAPES) is None      # named for neither


def test_the_array_kept_alike_is_read_only_in_the_parameters_own_part():
    params, zero = {"query.W", "out.W", "out.b"}, np.zeros((2, 2))
    assert kept_alike("query.W", {"out.W": "out.last_step"}, SHAPES,
                      {"query.last_step": zero}, params) == "query.last_step"
    assert kept_alike("query.W", {"out.W": "out.last_step"}, SHAPES, {}, params) is None
    assert kept_alike("query.W", {"out.b": "out.last_step"}, SHAPES,      # another shape's place
                      {"query.last_step": zero}, params) is None


def test_a_gradient_left_without_an_array_of_its_own_is_not_read():
    rng = np.random.default_rng(0)
    before = {"query.W": np.ones((2, 2)), "out.W": np.ones((2, 2)), "out.last_step": np.zeros((2, 2))}
    after = {**before, "out.last_step": rng.standard_normal((2, 2))}
    withheld: dict = {}
    found, unsure = gb.find(before, after, {"query.W": (2, 2), "out.W": (2, 2)},
                            {"query.W", "out.W"}, [], None, withheld=withheld)
    assert {c: p for c, (p, _, _) in found.items()} == {"out.W": "out.last_step"}
    assert "query.W" not in unsure and withheld == {"query.W": [("out.last_step", "out.W")]}


def test_a_name_holding_a_parameters_name_by_chance_is_not_named_for_it():
    assert names("cache.g_W_o", "W_o") and names("W_o_grad", "W_o") and names("dW", "out.W")
    assert not names("cache.two", "W_o") and not names("cache.dw_qk", "W_q")
