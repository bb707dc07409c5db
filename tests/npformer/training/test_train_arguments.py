"""train(model, task, config, ...) from Python, in both twins, refuses bad arguments in one line
naming the argument before anything is drawn or stepped; TrainConfig refuses bad Adam settings as
its own fields (before, they surfaced later as another class's error, or not at all)."""
import numpy as np
import pytest
import torch

import npformer as nf
import torchformer as tf
from npformer.data.registry import make_any_task
from npformer.training.train import TrainConfig, model_config_for
from npformer.training.train import build_model as np_build
from npformer.training.train import train as np_train
from torchformer.training.train import build_model as tf_build
from torchformer.training.train import train as tf_train

TASK = make_any_task(name="reverse")
CFG = model_config_for(TASK, d_model=8, num_heads=2, d_ff=16, num_encoder_layers=1, num_decoder_layers=1)
TC = TrainConfig(steps=1, batch_size=2, progress=False)
TWINS = {"npformer": (np_train, np_build, tf_build), "torchformer": (tf_train, tf_build, np_build)}


def weights(model):
    return {k: np.array(v.detach().numpy() if hasattr(v, "detach") else v, copy=True)
            for k, v in model.state_dict().items()}


@pytest.mark.parametrize("field, value, expected", [
    ("betas", (1.0, 0.9), "a pair of floats in [0, 1), got (1.0, 0.9)"),
    ("betas", 0.9, "a pair of floats in [0, 1), got 0.9"),
    ("betas", (0.9,), "a pair of floats in [0, 1), got (0.9,)"),
    ("eps", float("nan"), "a float >= 0, got nan"),
    ("weight_decay", -1.0, "a float >= 0, got -1.0"),
    ("lr", True, "None or a positive float, got True"),
    ("clip_norm", float("inf"), "None or a positive float, got inf"),
    ("progress", "no", "a bool, got 'no'"),
])
def test_train_config_names_the_bad_field(field, value, expected):
    with pytest.raises(ValueError) as e:
        TrainConfig(**{field: value})
    assert str(e.value) == f"TrainConfig.{field}: expected {expected}"


@pytest.mark.parametrize("twin", list(TWINS))
def test_train_refuses_bad_arguments_before_any_step(twin):
    train, build, build_other = TWINS[twin]
    model = build(CFG, TASK)
    before = weights(model)
    bad = {
        "model": (lambda: train(None, TASK, TC), TypeError, f"model: expected a{'n' * (twin == 'npformer')} "
                                                            f"{twin} model"),
        "other twin's model": (lambda: train(build_other(CFG, TASK), TASK, TC), TypeError,
                               "got " + ("torchformer" if twin == "npformer" else "npformer") + " Transformer"),
        "task": (lambda: train(model, "reverse", TC), TypeError, "task: expected a training task"),
        "task of another kind": (lambda: train(model, make_any_task(name="lm"), TC), ValueError,
                                 "model: the lm task (lm) trains a CausalLM, got a Transformer"),
        "optimizer": (lambda: train(model, TASK, TC, optimizer="adam"), TypeError,
                      "optimizer: expected None or"),
        "callback": (lambda: train(model, TASK, TC, callback=3), TypeError,
                     "callback: expected None or a function callback(step, loss), got int"),
        "start_step": (lambda: train(model, TASK, TC, start_step=-1), ValueError,
                       "start_step: expected a non-negative int, got -1"),
    }
    for name, (call, error, message) in bad.items():
        with pytest.raises(error) as e:
            call()
        assert message in str(e.value), (name, str(e.value))
    after = weights(model)
    assert all(np.array_equal(before[k], after[k]) for k in before)        # nothing was stepped


def test_a_good_call_still_trains_in_both_twins():
    for twin, (train, build, _) in TWINS.items():
        model = build(CFG, TASK)
        optimizer = nf.Adam(model.named_parameters(), lr=1e-3) if twin == "npformer" \
            else tf.Adam(model.parameters(), lr=1e-3)
        seen = []
        result = train(model, TASK, TC, optimizer=optimizer, callback=lambda s, loss: seen.append(s))
        assert result.steps == 1 and seen == [1] and np.isfinite(result.losses[0])
    assert isinstance(tf.Adam(torch.nn.Linear(2, 2).parameters()), torch.optim.Adam)


@pytest.mark.parametrize("save", [nf.save_training_state, tf.save_training_state])
@pytest.mark.parametrize("state", [None, {"model": None}])
def test_saving_a_training_state_that_is_not_one_is_refused_before_writing(save, state, tmp_path):
    with pytest.raises(TypeError, match=r"^save_training_state: state: expected a TrainState .*, got "
                                        + type(state).__name__ + "$"):
        save(tmp_path / "run.npz", state)
    assert list(tmp_path.iterdir()) == []
