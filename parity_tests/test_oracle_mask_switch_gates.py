"""A bool forward argument named for a mask that turns on the mask the forward is also given
(`forward(q, k, v, mask=None, use_mask=True)`, `if use_mask and mask is not None:`) is no causal
switch: passed False, it switched the drawn mask off and right code was a MISMATCH. It keeps its
default and the mask is handed over; a switch building its own causal mask is still read."""
from __future__ import annotations

import importlib.util

import pytest

from parity_tests.oracle import check, render_text
from parity_tests.oracle.reading.recognise.mask_switch import switches

GATED = '''
import math
import torch
from torch import nn


class UseMaskAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h = num_heads
        self.q_proj, self.k_proj = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.v_proj, self.out_proj = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def _split(self, t):
        B, T, D = t.shape
        return t.view(B, T, self.h, D // self.h).transpose(1, 2)

    def forward(self, query, key, value, mask=None, use_mask=True):
        q, k, v = self._split(self.q_proj(query)), self._split(self.k_proj(key)), self._split(self.v_proj(value))
        s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
        if use_mask and mask is not None:
            s = s.masked_fill(~mask, float("-inf"))
        o = s.softmax(-1) @ v
        B, H, T, d = o.shape
        return self.out_proj(o.transpose(1, 2).reshape(B, T, H * d))
'''


def _fn(tmp_path, body: str):
    """The forward written in a module of its own (its source is read from the file)."""
    path = tmp_path / "switch_forward.py"
    path.write_text(body)
    spec = importlib.util.spec_from_file_location("switch_forward", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.forward


GATE = "def forward(x, mask=None, use_mask=True):\n    if use_mask and mask is not None:\n        x = x * mask\n"
BODY = "def forward(x, mask=None, apply_mask=True):\n    if apply_mask:\n        x = x * mask\n"
OWN = "def forward(x, mask=True, key_padding_mask=None):\n    if mask:\n        x = x.tril()\n"


@pytest.mark.parametrize("body", [GATE, BODY])
def test_a_switch_turning_on_the_given_mask_is_not_read(tmp_path, body):
    assert switches(_fn(tmp_path, body + "    return x\n")) == []


def test_a_switch_building_its_own_causal_mask_beside_a_padding_mask_is_still_read(tmp_path):
    pad = "    if key_padding_mask is not None:\n        x = x * key_padding_mask\n    return x\n"
    assert switches(_fn(tmp_path, OWN + pad)) == ["mask"]


def test_right_attention_with_a_use_mask_switch_matches(tmp_path):
    pytest.importorskip("torch")
    path = tmp_path / "use_mask.py"
    path.write_text(GATED)
    res = check("mha", f"{path}:UseMaskAttention", examples=10)
    assert res.verdict == "match", render_text(res)
    assert not any("used only as a truth value" in n for n in res.notes), res.notes
