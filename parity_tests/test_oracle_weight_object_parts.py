"""NumPy parts keeping each weight as an object `Weight(data, gradient)`, also listed in a
`self.params` list, with sub-parts listed in `self.units` before they are set as attributes: the
object is one parameter (its value `.data`, its gradient `.gradient`, as `.grad` was already), named
by the attribute that holds it (`up.weight`, not `units.0.params.0`). Before, `data` and `gradient`
were two arrays each, listed under the list's names, and the check was an interface error. Planted
bugs stay MISMATCH."""
from __future__ import annotations

import numpy as np

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check, render_text
from parity_tests.oracle.reading.slots import numpy_space

FILE = candidate_path("weight_object_parts.py")


def test_a_feed_forward_of_weight_objects_matches():
    res = check("ffn", f"{FILE}:WeightObjectFeedForward", examples=10)
    assert res.verdict == "match", render_text(res)
    assert "grad_param:linear1.weight" in res.checked, res.checked


def test_a_planted_relu_backward_there_is_a_mismatch():
    res = check("ffn", f"{FILE}:WeightObjectFeedForwardBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_a_layernorm_of_weight_objects_matches_with_its_gradients():
    res = check("layernorm", f"{FILE}:WeightObjectLayerNorm", examples=10)
    assert res.verdict == "match", render_text(res)
    assert "grad_param:weight" in res.checked, res.checked


def test_a_planted_epsilon_free_backward_there_is_a_mismatch():
    res = check("layernorm", f"{FILE}:WeightObjectLayerNormBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_weight_objects_are_one_parameter_each_named_by_their_attribute():
    import importlib.util
    spec = importlib.util.spec_from_file_location("weight_object_parts", FILE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    ffn = mod.WeightObjectFeedForward(3, 5, np.random.default_rng(0))
    space, slots = numpy_space(ffn)
    assert sorted(slots) == ["down.bias", "down.weight", "up.bias", "up.weight"], sorted(slots)
    x = np.ones((1, 2, 3))
    ffn.backward(ffn.forward(x))
    assert slots["up.weight"].grad().shape == (3, 5)
