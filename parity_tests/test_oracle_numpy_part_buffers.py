"""NumPy layers written as small libraries write them: zero gradient buffers made beside each weight
by the constructor (`grad_W_q`) are no bias the oracle could be missing, so a bias-free attention
keeping them is compared; dropouts held as parts with a `training` flag are put in inference mode
as torch's eval() would, when the layer has no eval() of its own. Planted bugs still fail, and a
dropout no flag turns off is still caught as random."""
from __future__ import annotations

import os

import numpy as np

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check
from parity_tests.oracle.core.report import render_text
from parity_tests.oracle.reading.numpy_parts_eval import eval_parts
from parity_tests.oracle.reading.recognise import absent

CANDS = os.path.join(candidate_path(), "numpy_part_buffers.py")


def test_gradient_buffers_beside_weights_do_not_stop_a_bias_free_attention():
    res = check("mha", f"{CANDS}:BufferedGradAttention", examples=8)
    assert res.verdict == "match", render_text(res)
    assert "has no such parameter" in res.not_checked["grad_param:out_proj.bias"]
    assert "grad_param:q_proj.weight" not in res.not_checked


def test_a_planted_bug_beside_gradient_buffers_is_caught():
    res = check("mha", f"{CANDS}:BufferedGradAttentionUnscaled", examples=20, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_the_walk_leaves_out_only_arrays_named_and_shaped_as_a_siblings_gradient():
    class Part:
        pass
    p = Part()
    p.W, p.grad_W, p.dW = np.zeros((2, 2)), np.zeros((2, 2)), np.zeros(2)
    p.b_grad = np.zeros(3)                         # no `b` beside it: could be a bias
    assert sorted(a.shape for a in absent._numpy_arrays(p)) == [(2,), (2, 2), (3,)]


def test_dropout_parts_of_a_layer_without_eval_are_put_in_inference_mode():
    res = check("encoder_layer", f"{CANDS}:DropoutPartsEncoderLayer", examples=8)
    assert res.verdict == "match", render_text(res)
    assert any("put in inference mode" in n and "Dropout" in n for n in res.notes), res.notes


def test_a_planted_bug_in_a_layer_with_dropout_parts_is_caught():
    res = check("encoder_layer", f"{CANDS}:DropoutPartsEncoderLayerGelu", examples=12, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_a_dropout_that_no_flag_turns_off_is_still_random():
    res = check("encoder_layer", f"{CANDS}:AlwaysDroppingEncoderLayer", examples=8)
    assert res.verdict == "nondeterministic", render_text(res)


def test_eval_parts_leaves_a_candidate_with_its_own_eval_alone():
    class Drop:
        training = True

    class WithEval:
        def __init__(self):
            self.drop = Drop()

        def eval(self):
            pass

    class WithoutEval(WithEval):
        eval = None

    own = WithEval()
    assert eval_parts(own) == [] and own.drop.training
    bare = WithoutEval()
    assert eval_parts(bare) == ["Drop"] and bare.drop.training is False
