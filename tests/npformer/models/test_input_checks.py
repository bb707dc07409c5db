"""Inputs are checked once, at the public entry: calling a module runs its check_inputs, then forward;
inside a model, the layers run their children through forward, unchecked; no thread state is kept."""
import threading

import numpy as np
import pytest

import npformer.guards.validation as validation
from npformer.layers.module import Module
from npformer.models.transformer import Transformer
from tests.npformer.layer_helpers import tiny_config

SRC = np.array([[5, 3, 9, 2, 0], [7, 1, 0, 0, 0]])
TGT = np.array([[1, 4, 6, 3], [1, 10, 8, 0]])


def record_checks(model: Module) -> list[str]:
    """Wrap every module's check_inputs so that each call appends the module's dotted name."""
    seen: list[str] = []
    for name, m in model.named_modules():
        def spy(*args, _check=m.check_inputs, _name=name, **kwargs):
            seen.append(_name)
            return _check(*args, **kwargs)
        object.__setattr__(m, "check_inputs", spy)
    return seen


def test_a_model_checks_its_arguments_and_stages_once_and_no_layer_inside_them():
    model = Transformer(tiny_config(dtype="float64"), seed=0)
    seen = record_checks(model)
    model(SRC, TGT)
    assert seen.count("") == 1                                    # the model's own arguments
    stages = {"src_embed", "src_pos", "src_dropout", "encoder", "tgt_embed", "tgt_pos",
              "tgt_dropout", "decoder", "output_proj"}
    assert set(seen[1:]) == stages and len(seen) == 1 + len(stages)


def test_a_layer_called_directly_checks_its_inputs_and_forward_does_not():
    model = Transformer(tiny_config(dtype="float64"), seed=0)
    layer = model.encoder.layers[0]
    x = np.ones((2, 3, model.config.d_model))
    x[0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="finite"):
        layer(x)
    with pytest.raises(TypeError, match="dtype"):
        layer.norm1(x.astype(np.float32))
    assert np.isnan(layer.norm1.forward(x)).any()                 # the unchecked path runs the math


def test_checks_keep_no_thread_state_and_threads_agree():
    assert not any(isinstance(v, threading.local) for v in vars(validation).values())
    model = Transformer(tiny_config(dtype="float64", dropout=0.0), seed=0).eval()
    ref = model(SRC, TGT)
    out, errors = [], []

    def worker():
        try:
            m = Transformer(tiny_config(dtype="float64", dropout=0.0), seed=0).eval()
            out.append(m(SRC, TGT))
            bad = np.ones((2, 3, m.config.d_model))
            bad[1, 1, 1] = np.inf
            m.encoder.layers[0](bad)
        except ValueError as e:
            errors.append(str(e))
    threads = [threading.Thread(target=worker) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(out) == 3 and all(np.array_equal(o, ref) for o in out)
    assert len(errors) == 3 and all("finite" in e for e in errors)


def test_a_module_without_check_inputs_is_called_with_keywords_as_positions():
    class Scale(Module):
        def forward(self, x, factor=1.0):
            return x * factor

    class KeywordOnly(Module):
        def forward(self, x, *, factor=1.0):
            return x * factor
    x = np.ones(3)
    assert np.array_equal(Scale()(x, factor=2.0), 2 * x)
    assert np.array_equal(Scale()(x), x)
    with pytest.raises(TypeError, match="check_inputs.*factor"):
        KeywordOnly()(x, factor=2.0)
