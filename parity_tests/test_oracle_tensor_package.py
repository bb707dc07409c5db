"""A NumPy layer on an autograd package of its own imported whole (`import minitensor as mt`,
parameters `mt.Tensor`, `mt.mean(x)` reading `x.data`) is handed its inputs as that package's
tensors and differentiated by it: it was RAISED ("'memoryview' object has no attribute 'mean'": an
array's `.data`), as the tensor class was looked for only among the module's own names. Planted
bug: MISMATCH."""
from __future__ import annotations

from parity_tests.oracle import check, render_text

FILE = "tensor_package/norm.py"


def test_a_layer_on_an_imported_tensor_package_is_compared_with_its_gradients(candidate_file):
    res = check("layernorm", f"{candidate_file(FILE)}:PackageTensorNorm", examples=10)
    assert res.verdict == "match", render_text(res)
    assert {"grad_input:x", "grad_param:weight", "grad_param:bias"} <= set(res.checked), res.checked


def test_the_planted_bug_on_an_imported_tensor_package_is_a_mismatch(candidate_file):
    res = check("layernorm", f"{candidate_file(FILE)}:PackageTensorNormBUG", examples=25)
    assert res.verdict == "mismatch", render_text(res)
