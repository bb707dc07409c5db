"""Each interface recogniser on its own (parity_tests/oracle/reading/recognise/): small inputs, exact answers."""
from __future__ import annotations

import inspect
from types import SimpleNamespace

import numpy as np
import pytest

from parity_tests.oracle.components import get
from parity_tests.oracle.reading import recognise
from parity_tests.oracle.reading.naming import Space, resolve
from parity_tests.oracle.reading.recognise import (
    absent,
    bh_layout,
    inner_norm,
    list_input,
    pe_table,
    row_bias,
    valid_lens,
)


def test_registry_lists_each_hook():
    assert recognise.CONSTRUCTOR and recognise.PROBES
    for fn in recognise.CONSTRUCTOR + recognise.PROBES:
        assert callable(fn) and fn.__module__.startswith("parity_tests.oracle.reading.recognise.")


def test_row_bias_shapes():
    assert row_bias.unit_axes_shape((5,), (1, 5)) == (1, 5)
    assert row_bias.unit_axes_shape((5,), (5, 1)) == (5, 1)
    assert row_bias.unit_axes_shape((5,), (5,)) is None
    assert row_bias.unit_axes_shape((5,), (1, 4)) is None
    assert row_bias.unit_axes_shape((5, 5), (1, 25)) is None
    assert row_bias.unit_axes_shape((6, 4), (6, 4, 1)) == (6, 4, 1)      # Conv1d, kernel 1
    assert row_bias.unit_axes_shape((1, 4), (4, 1, 1)) is None            # order must be kept


def test_row_bias_resolved_and_described():
    space = Space(["W1", "b1", "W2", "b2"], {"W1": (3, 2), "b1": (1, 3), "W2": (2, 3), "b2": (1, 2)},
                  {n: True for n in ("W1", "b1", "W2", "b2")})
    ref = {"linear1.weight": (3, 2), "linear1.bias": (3,), "linear2.weight": (2, 3),
           "linear2.bias": (2,)}
    entries, unclaimed = resolve("ffn", space, ref, {})
    assert entries["linear1.bias"].cand == "b1" and entries["linear1.bias"].cand_shape == (1, 3)
    assert "kept as (1, 3)" in entries["linear1.bias"].describe() and not unclaimed


def test_per_head_lists_resolved_in_head_order():
    names = [f"Wq.{i}" for i in range(2)] + [f"Wk.{i}" for i in range(2)] + \
        [f"Wv.{i}" for i in range(2)] + ["Wo"]
    shapes = {n: (4, 2) for n in names[:-1]} | {"Wo": (4, 4)}
    space = Space(names, shapes, {n: True for n in names})
    ref = {f"{p}.weight": (4, 4) for p in ("q_proj", "k_proj", "v_proj", "out_proj")}
    entries, unclaimed = resolve("mha", space, ref, {"num_heads": 2})
    q = entries["q_proj.weight"]
    assert [p[0] for p in q.parts] == ["Wq.0", "Wq.1"] and q.parts[1][1] == (2, 4)
    assert all(p[2] for p in q.parts)                     # (in, out) pieces: transposed
    assert not unclaimed


def test_per_head_round_trip_of_values_and_gradients():
    from parity_tests.oracle.reading.resolver import Entry
    from parity_tests.oracle.reading.slots import candidate_arrays, entry_grad
    W = np.arange(12.0).reshape(4, 3)                      # (out, in), 2 heads of 2 rows
    e = Entry("q_proj.weight", "a", how="per_head",
              parts=(("a", (0, 2), True, (3, 2)), ("b", (2, 4), True, (3, 2))))
    vals = candidate_arrays({"q_proj.weight": e}, {"q_proj.weight": W}, "float64")
    assert np.array_equal(vals["a"], W[:2].T) and np.array_equal(vals["b"], W[2:].T)
    assert np.array_equal(entry_grad(e, lambda c: vals[c]), W)


def test_inner_norm_prefix():
    assert inner_norm._common_prefix(["a.w_qs.weight", "a.w_ks.weight", "a.fc.weight"]) == "a"
    assert inner_norm._common_prefix(["slf.fc.weight"]) == "slf"


def test_inner_norm_resolved_inside_blocks():
    names = ["attn.wq.weight", "attn.wk.weight", "attn.wv.weight", "attn.fc.weight",
             "attn.layer_norm.weight", "attn.layer_norm.bias", "ff.w_1.weight", "ff.w_2.weight",
             "ff.layer_norm.weight", "ff.layer_norm.bias"]
    D = 4
    shapes = {n: ((D,) if "norm" in n else (D, D)) for n in names}
    space = Space(names, shapes, {n: False for n in names})
    ref = {f"self_attn.{p}.weight": (D, D) for p in ("q_proj", "k_proj", "v_proj", "out_proj")}
    ref |= {"feed_forward.linear1.weight": (D, D), "feed_forward.linear2.weight": (D, D),
            "norm1.weight": (D,), "norm1.bias": (D,), "norm2.weight": (D,), "norm2.bias": (D,)}
    entries, unclaimed = resolve("encoder_layer", space, ref, {"num_heads": 2},
                                 optional=lambda r, e: "bias" in r and "norm" not in r)
    assert entries["norm1.weight"].cand == "attn.layer_norm.weight"
    assert entries["norm2.bias"].cand == "ff.layer_norm.bias"
    assert entries["norm2.bias"].how == "inner_norm" and not unclaimed


def test_valid_lens_from_keep_and_key_order():
    keep = np.zeros((2, 1, 3, 4), dtype=bool)
    keep[0, ..., :2] = True                                 # first two keys kept
    keep[1, ..., [1, 3]] = True                             # keys 1 and 3 kept
    perm = valid_lens.key_order(keep)
    assert perm.tolist() == [[0, 1, 2, 3], [1, 3, 0, 2]]
    moved = valid_lens.take(keep, perm, 3)
    assert valid_lens.from_keep(moved, "mask").tolist() == [2, 2]
    assert valid_lens.from_keep(moved, "mask", heads=2).tolist() == [2, 2, 2, 2]
    with pytest.raises(Exception, match="key padding"):
        valid_lens.from_keep(keep, "mask")
    w = np.random.default_rng(0).random((2, 3, 4))
    assert np.array_equal(valid_lens.untake_last(valid_lens.take(w, perm, 2), perm), w)


def test_valid_lens_take_is_differentiable_in_torch():
    torch = pytest.importorskip("torch")
    perm = np.array([[2, 0, 1]])
    t = torch.arange(3.0, dtype=torch.float64).reshape(1, 3, 1).requires_grad_(True)
    out = valid_lens.take(t, perm, 1)
    assert out.flatten().tolist() == [2.0, 0.0, 1.0]
    g = torch.tensor([[[1.0], [2.0], [3.0]]], dtype=torch.float64)
    out.backward(g)
    assert t.grad.flatten().tolist() == [2.0, 3.0, 1.0]


def test_list_input_detect():
    def fwd(self, inputs, mask=None):
        pass

    def fwd2(self, q, k, v):
        pass

    def fwd3(self, triple: list, mask=None):
        pass

    comp = get("mha")
    assert list_input.detect(inspect.signature(fwd), comp) == "inputs"
    assert list_input.detect(inspect.signature(fwd2), comp) is None
    assert list_input.detect(inspect.signature(fwd3), comp) == "triple"
    assert list_input.detect(inspect.signature(fwd), get("ffn")) is None


def test_bh_merge_split():
    a = np.arange(2 * 3 * 4 * 5).reshape(2, 3, 4, 5)
    m = bh_layout.merge(a)
    assert m.shape == (6, 4, 5) and np.array_equal(m[4], a[1, 1])
    assert np.array_equal(bh_layout.split(m, a.shape), a)


def test_pe_table_add_input():
    x = np.ones((2, 3, 4))
    table = np.arange(40.0).reshape(1, 10, 4)
    out = pe_table.add_input(table, x, (2, 3, 4))
    assert out.shape == (2, 3, 4) and np.array_equal(out[1], 1 + table[0, :3])
    assert np.array_equal(pe_table.add_input(table[0], x, (2, 3, 4)), out)


class _Ad:
    """The adapter's fields absent.reason reads: its mode, framework and component."""
    def __init__(self, mode, framework, component="ffn"):
        self.mode, self.framework = mode, framework
        self.comp = SimpleNamespace(name=component)


def test_absent_reasons():
    assert absent.reason(_Ad("function", "numpy"), None, "linear1.bias", (3,), {})
    assert absent.reason(_Ad("class", "numpy"), object(), "linear1.bias", (3,), {}) is None
    assert absent.reason(_Ad("class", "numpy"), object(), "linear1.weight", (3, 3), {}) is None
    torch = pytest.importorskip("torch")
    lin = torch.nn.Linear(3, 3, bias=False)
    assert absent.reason(_Ad("class", "torch"), lin, "bias", (3,), {}) is not None
    holder = torch.nn.Module()
    holder.register_buffer("gain", torch.ones(1, 3))         # a buffer of a fitting shape: could be it
    assert absent.reason(_Ad("class", "torch"), holder, "norm1.weight", (3,), {}) is None
    holder.scale = torch.nn.Parameter(torch.ones(3))
    assert absent.reason(_Ad("class", "torch"), holder, "norm1.weight", (3,), {}) is None


def test_valid_lens_axes_and_gradients_back():
    assert valid_lens.axes("sdpa", False) == ({"k": 2, "v": 2}, False)
    assert valid_lens.axes("mha", True) == ({"x": 1}, True)
    assert valid_lens.axes("encoder_layer", False) == ({"x": 1}, True)
    perm = np.array([[2, 0, 1]])
    g = np.arange(6.0).reshape(1, 3, 2)
    moved = valid_lens.take(g, perm, 1)
    back = valid_lens.untake_grads({"x": moved, "n": 1}, perm)
    assert np.array_equal(back["x"], g) and back["n"] == 1
    assert np.array_equal(valid_lens.untake_grads((moved,), perm)[0], g)
