"""A plain class (no nn.Module) holding torch tensors that require grad: a non-leaf tensor computed
once, at construction, from weights the class holds (`self.W_qkv = torch.cat([self.W_q, self.W_k,
self.W_v], 1)`) is a copy that never follows them when an optimizer writes them. The walk kept only
what the forward reads, so the copy alone was taken for the weights (the packed projection) and the
class MATCHED; it is now left out as a weight, said so, and the check fails (INTERFACE_ERROR: the
weights it holds are never read by its forward). A view of a weight (`self.W.view(...)`, which follows it)
and a class packing its weights inside its forward still match."""
from __future__ import annotations

import os
import textwrap

import pytest

from parity_tests.oracle import check, render_text

HOSTILE = os.path.join(os.path.dirname(__file__), "oracle_hostile", "plain_stale_packed_copy.py")

RIGHT = textwrap.dedent('''
    import math
    import torch


    class _Base:
        def __init__(self, d_model, num_heads):
            self.h = num_heads
            self.W_q = torch.nn.Parameter(torch.randn(d_model, d_model) * 0.1)
            self.W_k = torch.nn.Parameter(torch.randn(d_model, d_model) * 0.1)
            self.W_v = torch.nn.Parameter(torch.randn(d_model, d_model) * 0.1)
            self.W_o = torch.nn.Parameter(torch.randn(d_model, d_model) * 0.1)

        def _attend(self, q, k, v, mask, B, T, D):
            sh = lambda t: t.view(B, T, self.h, D // self.h).transpose(1, 2)
            q, k, v = sh(q), sh(k), sh(v)
            s = q @ k.transpose(-2, -1) / math.sqrt(D // self.h)
            if mask is not None:
                s = s.masked_fill(mask == 0, float("-inf"))
            return (torch.softmax(s, -1) @ v).transpose(1, 2).reshape(B, T, D)


    class PackedInForward(_Base):
        def forward(self, x, mask=None):
            B, T, D = x.shape
            q, k, v = (x @ torch.cat([self.W_q, self.W_k, self.W_v], 1)).split(D, -1)
            return self._attend(q, k, v, mask, B, T, D) @ self.W_o


    class OutputViewAtConstruction(_Base):
        def __init__(self, d_model, num_heads):
            super().__init__(d_model, num_heads)
            self.W_out = self.W_o.view(self.W_o.shape)    # a view: follows W_o when it is written

        def forward(self, x, mask=None):
            B, T, D = x.shape
            out = self._attend(x @ self.W_q, x @ self.W_k, x @ self.W_v, mask, B, T, D)
            return out @ self.W_out
''')


def test_a_copy_packed_once_from_its_own_weights_is_no_weight():
    res = check("mha", f"{HOSTILE}:PlainAttentionStalePackedCopy", examples=12)
    text = render_text(res)
    assert res.verdict not in ("match", "oracle_error"), text
    assert "W_qkv of PlainAttentionStalePackedCopy is computed from its own weights (W_q, W_k, W_v)" \
        in text, text


@pytest.mark.parametrize("name", ["PackedInForward", "OutputViewAtConstruction"])
def test_weights_packed_in_forward_or_viewed_still_match(tmp_path, name):
    path = tmp_path / "plain_attention.py"
    path.write_text(RIGHT)
    res = check("mha", f"{path}:{name}", examples=12)
    text = render_text(res)
    assert res.verdict == "match", text
    assert "computed from its own weights" not in text, text
