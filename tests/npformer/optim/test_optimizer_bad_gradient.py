"""An optimizer step with one foreign gradient refuses and updates nothing."""
from __future__ import annotations

import numpy as np

import npformer as nf
from tests.npformer.bad_input_helpers import expect


def test_optimizer_step_with_one_bad_gradient_updates_nothing():
    lin = nf.Linear(3, 2, dtype="float64")
    lin(np.ones((1, 3)))
    lin.backward(np.ones((1, 2)))
    lin.bias.grad = np.zeros(2, np.float32)                 # a foreign gradient
    before = lin.state_dict()
    for opt in (nf.SGD(lin.named_parameters(), lr=0.1), nf.AdamW(lin.named_parameters())):
        expect(ValueError, opt.step, "bias", "float64", "float32")
        assert all(np.array_equal(lin.state_dict()[k], before[k]) for k in before)
