"""Whole training runs agree: npformer.training.train and torchformer.training.train, same initial weights (copied with
torchformer.models.bridge.to_torch), same batches, same TrainConfig, float64 on the CPU.

The loops are the real ones (teacher forcing, cross-entropy with ignore_index and label smoothing,
Adam (0.9, 0.98, 1e-9), the warm-up schedule, gradient clipping): the loss of every step, the learning
rate of every step, the pre-clipping gradient norm of every step and the final weights must agree
within the float64 tolerances of parity_tests/harness/tolerances.py. Dropout is off (the loops draw
their own masks; mask replay is covered by test_model_parity.py).
"""
import numpy as np
import pytest

from npformer.data.tasks import make_batches, make_task
from npformer.training.train import TrainConfig, build_model, model_config_for
from npformer.training.train import train as np_train
from parity_tests.harness import compare, compare_all, note_case
from torchformer.models.bridge import to_torch
from torchformer.training.train import train as tf_train

STEPS = 8


def _run_both(task, config, tc, seed=0):
    np_model = build_model(config, task, seed=seed)
    tf_model = to_torch(np_model)                              # same initial weights, float64
    batches = make_batches(task, tc.batch_size, tc.steps, seed=seed)
    r_np = np_train(np_model, task, tc, batches=batches)
    r_tf = tf_train(tf_model, task, tc, batches=batches)
    return np_model, tf_model, r_np, r_tf


def _final_weights(np_model, tf_model, skip=()):
    tf_state = {k: v.detach().numpy() for k, v in tf_model.state_dict().items()}
    np_state = np_model.state_dict()
    assert sorted(tf_state) == sorted(np_state)
    return [(f"weights[{k}] after {STEPS} steps", tf_state[k], np_state[k], "optimizer_state")
            for k in np_state if not any(s in k for s in skip)]


def _check_run(r_np, r_tf, tc):
    assert r_np.steps == r_tf.steps == tc.steps
    compare("loss per step", np.array(r_tf.losses), np.array(r_np.losses), "float64", "loss")
    compare("learning rate per step", np.array(r_tf.lrs), np.array(r_np.lrs), "float64", "loss")
    compare("gradient norm per step (before clipping)", np.array(r_tf.grad_norms),
            np.array(r_np.grad_norms), "float64", "param_grad")
    # the run must really have learned something and really have clipped
    assert r_np.losses[-1] < r_np.losses[0]
    assert max(r_np.grad_norms) > tc.clip_norm


# bias=False: the key projection's bias has an exactly-zero gradient in theory (softmax is invariant to
# a per-query constant), so both twins feed Adam pure rounding noise there and Adam's normalisation
# turns noise of either sign into steps of size ~lr: those weights would differ by ~lr for no fault of
# either twin. Without biases every gradient is far from zero and the whole state agrees to rounding.
@pytest.mark.parametrize("norm_first", [False, True])
def test_seq2seq_training_run_parity(norm_first):
    task = make_task("reverse", num_symbols=6, min_len=1, max_len=5)
    config = model_config_for(task, d_model=16, num_heads=2, d_ff=24, num_encoder_layers=2,
                              num_decoder_layers=2, dropout=0.0, bias=False, dtype="float64",
                              norm_first=norm_first, final_norm=norm_first)
    tc = TrainConfig(steps=STEPS, batch_size=12, lr=3e-3, warmup=3, label_smoothing=0.1,
                     clip_norm=0.5, progress=False)
    note_case(task=task.name, norm_first=norm_first, steps=STEPS)
    np_model, tf_model, r_np, r_tf = _run_both(task, config, tc)
    _check_run(r_np, r_tf, tc)
    compare_all(_final_weights(np_model, tf_model), dtype="float64")


def test_paper_layout_with_biases_loss_and_weights_agree():
    """The paper's layout with every bias: losses agree at every step and every weight agrees except
    the key-projection biases (see the comment above: their gradient is rounding noise in both
    twins); those only have to stay small, and they cannot move the loss."""
    task = make_task("sort", num_symbols=6, min_len=2, max_len=5)
    config = model_config_for(task, d_model=16, num_heads=4, d_ff=32, num_encoder_layers=1,
                              num_decoder_layers=2, dropout=0.0, dtype="float64")
    tc = TrainConfig(steps=STEPS, batch_size=10, lr=2e-3, warmup=4, clip_norm=0.5, progress=False)
    np_model, tf_model, r_np, r_tf = _run_both(task, config, tc, seed=3)
    _check_run(r_np, r_tf, tc)
    compare_all(_final_weights(np_model, tf_model, skip=("k_proj.bias",)), dtype="float64")
    for k, v in np_model.state_dict().items():
        if "k_proj.bias" in k:
            assert np.abs(v).max() <= STEPS * max(r_np.lrs) * 1.01, k


def test_classifier_training_run_parity():
    task = make_task("majority", num_symbols=6, min_len=3, max_len=7)
    config = model_config_for(task, d_model=16, num_heads=2, d_ff=24, num_encoder_layers=2,
                              dropout=0.0, bias=False, dtype="float64")
    tc = TrainConfig(steps=STEPS, batch_size=16, lr=3e-3, warmup=3, clip_norm=0.5,
                     label_smoothing=0.05, progress=False)
    np_model, tf_model, r_np, r_tf = _run_both(task, config, tc, seed=1)
    _check_run(r_np, r_tf, tc)
    compare_all(_final_weights(np_model, tf_model), dtype="float64")
