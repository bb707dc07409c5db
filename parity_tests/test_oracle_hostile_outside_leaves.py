"""A plain class's non-leaf tensor computed once from a leaf requiring grad that something besides
the autograd graph still refers to (a module's dict, a closure an optimizer is handed) is a stale
copy, no weight (reading/plain_torch_params.kept_elsewhere), as one computed from a weight the
class holds is. Before, such copies were read as the weights (MATCH with the non-leaf note); now
INTERFACE_ERROR, the note naming where the leaf is kept. A weight made as
`torch.randn(..., requires_grad=True) * 0.1`, whose leaf nothing else holds, is still accepted
with its note, and a leaf held by the object and by a closure too is its weight."""
from __future__ import annotations

import os
import textwrap

import pytest

from parity_tests.oracle import check, render_text

HOSTILE = os.path.join(os.path.dirname(__file__), "oracle_hostile", "leaf_kept_outside.py")

RIGHT = textwrap.dedent('''
    import torch


    class FeedForwardScaledInit:
        def __init__(self, d_model, d_ff):
            self.W1 = torch.randn(d_ff, d_model, dtype=torch.float64, requires_grad=True) * 0.1
            self.W2 = torch.randn(d_model, d_ff, dtype=torch.float64, requires_grad=True) * 0.1
            self.b1 = torch.zeros(d_ff, dtype=torch.float64, requires_grad=True)
            self.b2 = torch.zeros(d_model, dtype=torch.float64, requires_grad=True)

        def forward(self, x):
            return torch.relu(x @ self.W1.T + self.b1) @ self.W2.T + self.b2


    class FeedForwardClosureParams(FeedForwardScaledInit):
        def __init__(self, d_model, d_ff):
            super().__init__(d_model, d_ff)
            self.W1 = self.W1.detach().requires_grad_(True)
            self.W2 = self.W2.detach().requires_grad_(True)
            w1, w2 = self.W1, self.W2
            self.params = lambda: (w1, self.b1, w2, self.b2)
''')


@pytest.mark.parametrize("name,where", [("FeedForwardLeavesInModuleDict", "a tuple"),
                                        ("FeedForwardLeavesInClosure", "a cell")])
def test_a_copy_of_a_leaf_kept_outside_is_no_weight(name, where):
    res = check("ffn", f"{HOSTILE}:{name}", examples=5)
    text = render_text(res)
    assert res.verdict == "interface_error", text
    assert f"W1 of {name} is computed from a leaf tensor it does not hold" in text, text
    assert f"(a tensor kept in {where})" in text, text


@pytest.mark.parametrize("name", ["FeedForwardScaledInit", "FeedForwardClosureParams"])
def test_weights_whose_leaves_nothing_else_holds_still_match(tmp_path, name):
    path = tmp_path / "plain_ffn.py"
    path.write_text(RIGHT)
    res = check("ffn", f"{path}:{name}", examples=8)
    text = render_text(res)
    assert res.verdict == "match", text
    assert "computed from a leaf tensor it does not hold" not in text, text
