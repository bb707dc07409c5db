"""A NumPy layer on an autograd package of its own imported whole (`import minitensor as mt`,
parameters `mt.Tensor`, `mt.mean(x)` reading `x.data`) is handed its inputs as that package's
tensors and differentiated by it: it was RAISED ("'memoryview' object has no attribute 'mean'": an
array's `.data`), as the tensor class was looked for only among the module's own names. Planted
bug: MISMATCH. A class whose backward() seeds ones and keeps its gradients in float32 (npg) gets the
drawn upstream gradient at that precision (the oracle refused it, an ORACLE_ERROR)."""
from __future__ import annotations

import numpy as np

from parity_tests.oracle import check, render_text
from parity_tests.oracle.reading.autograd_tensors import seeded_backward

FILE = "tensor_package/norm.py"


def test_a_layer_on_an_imported_tensor_package_is_compared_with_its_gradients(candidate_file):
    res = check("layernorm", f"{candidate_file(FILE)}:PackageTensorNorm", examples=10)
    assert res.verdict == "match", render_text(res)
    assert {"grad_input:x", "grad_param:weight", "grad_param:bias"} <= set(res.checked), res.checked


def test_the_planted_bug_on_an_imported_tensor_package_is_a_mismatch(candidate_file):
    res = check("layernorm", f"{candidate_file(FILE)}:PackageTensorNormBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


class Float32Grads:
    """An own tensor whose backward() seeds ones and keeps every gradient in float32 (as npg does)."""

    def __init__(self, data, parents=()):
        self.data, self.parents, self.step = np.asarray(data, dtype=float), parents, None
        self.grad = np.zeros(self.data.shape, dtype=np.float32)

    def __mul__(self, o):
        out = Float32Grads(self.data * o.data, (self, o))

        def step(g):
            self.grad += g * o.data
            o.grad += g * self.data
        out.step = step
        return out

    def sum(self):
        out = Float32Grads(self.data.sum(), (self,))

        def step(g):
            self.grad += np.broadcast_to(g, self.data.shape)
        out.step = step
        return out

    def backward(self):
        order, seen = [], set()

        def visit(t):
            if id(t) not in seen:
                seen.add(id(t))
                for p in t.parents:
                    visit(p)
                order.append(t)
        visit(self)
        self.grad = np.ones_like(self.data).astype(np.float32)
        for t in reversed(order):
            if t.step is not None:
                t.step(t.grad)


def test_a_seed_kept_at_the_precision_of_the_class_gradients_is_taken():
    out, dout = Float32Grads(np.array([1.0, -2.0, 3.0])), np.array([0.1, -0.7, 1.3])
    seeded_backward(out, dout, Float32Grads)        # it raised: float32(0.1) != 0.1
    assert np.array_equal(out.grad, dout.astype(np.float32))
