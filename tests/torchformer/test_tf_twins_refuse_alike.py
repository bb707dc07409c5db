"""Bad calls through the public Python API get the same error, type and message, from both twins:
a user who moves from npformer to torchformer (or back) reads the same words for the same mistake."""
import numpy as np
import pytest
import torch

import npformer as nf
import torchformer as tf


def error_of(fn):
    try:
        fn()
    except (TypeError, ValueError) as e:
        return type(e), str(e)
    raise AssertionError("no error")


def same_error(np_call, tf_call, match: str):
    e_np, e_tf = error_of(np_call), error_of(tf_call)
    assert e_np == e_tf, (e_np, e_tf)
    assert match in e_np[1], e_np


LOGITS = np.random.default_rng(0).standard_normal((2, 3, 5)).astype(np.float32)


@pytest.mark.parametrize("targets, got", [([[1, 2, 5], [1, 2, 3]], "got [5]"),
                                          ([[1, -1, 7], [9, 2, 3]], "got [-1, 7, 9]")])
def test_loss_targets_out_of_range_are_listed_alike(targets, got):
    t = np.array(targets)
    same_error(lambda: nf.CrossEntropyLoss(ignore_index=0)(LOGITS, t),
               lambda: tf.CrossEntropyLoss(ignore_index=0)(torch.from_numpy(LOGITS), torch.from_numpy(t)),
               f"targets: expected class indices in [0, 5) or ignore_index=0, {got}")


def test_loss_ignore_index_of_the_wrong_type_is_shown_alike():
    same_error(lambda: nf.CrossEntropyLoss(ignore_index=1.5),
               lambda: tf.CrossEntropyLoss(ignore_index=1.5),
               "ignore_index: expected an int, got 1.5")
