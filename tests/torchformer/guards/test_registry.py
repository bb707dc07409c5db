"""torchformer's layer guards: every public layer is checked at its call by a check registered apart
from its math (torchformer/guards/layers.py), once per outermost call, subclasses inherit their base's
check, user hooks still see the calls, and the layer and model files hold no argument check."""
from __future__ import annotations

import ast
import inspect
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

import torchformer as tf
from torchformer.layers.module import CHECKS, Module, registered

ROOT = Path(__file__).resolve().parents[3] / "torchformer"
PUBLIC_LAYERS = [getattr(tf, n) for n in tf.__all__
                 if inspect.isclass(getattr(tf, n)) and issubclass(getattr(tf, n), nn.Module)
                 and getattr(tf, n).__module__.startswith("torchformer.layers.")]
# the models' building blocks, checked by torchformer/guards/models.py
BLOCKS = [tf.EncoderLayer, tf.Encoder, tf.DecoderLayer, tf.Decoder, tf.CausalLM, tf.EncoderClassifier,
          tf.BertModel, tf.BertForMaskedLM, tf.BertForSequenceClassification, tf.Transformer]
BLOCK_FILES = ("encoder.py", "decoder.py", "causal_lm.py", "classifier.py", "bert.py", "transformer.py")
NOT_IN_A_METHOD = ("trusted", "run_checked")


def test_the_public_layers_are_found():
    assert {c.__name__ for c in PUBLIC_LAYERS} >= {"Linear", "LayerNorm", "MultiHeadAttention",
                                                   "PositionwiseFeedForward", "CrossEntropyLoss"}


@pytest.mark.parametrize("cls", PUBLIC_LAYERS + BLOCKS, ids=lambda c: c.__name__)
def test_every_public_layer_and_block_has_a_registered_call_check(cls):
    assert issubclass(cls, Module)
    assert registered("call", cls) is not None


def _calls(node) -> list[str]:
    return [n.func.id for n in ast.walk(node)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]


MATH_FILES = sorted((ROOT / "layers").glob("*.py")) + sorted((ROOT / "models").glob("*.py"))


@pytest.mark.parametrize("path", MATH_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_layer_and_model_files_define_call_and_import_no_check(path):
    """No argument check in the math: no check_* function defined or called, nothing imported from
    torchformer.guards, and no method but the Module base's reads the trust switch."""
    tree = ast.parse(path.read_text())
    defined = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    assert not {n for n in defined if n.lstrip("_").startswith("check_")}, defined
    called = set(_calls(tree))
    assert not {n for n in called if n.lstrip("_").startswith("check_")}, called
    sources = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    sources += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert not [m for m in sources if "guards" in m.split(".")], sources
    if path.name != "module.py":
        for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
            for fn in (n for n in cls.body if isinstance(n, ast.FunctionDef)):
                bad = [c for c in _calls(fn) if c in NOT_IN_A_METHOD]
                assert not bad, f"{path.name}: {cls.name}.{fn.name} calls {bad}"


PLANTED_CHECKS = {
    # a constructor that checks its own argument, with a helper imported from the guards
    "linear.py": "from torchformer.guards.validation import check_positive_int\n"
                 "class Linear:\n    def __init__(self, n):\n        check_positive_int('n', n)\n",
    # a keep-mask check defined and called beside Dropout's math (it lives in guards/keep_masks.py)
    "dropout.py": "def check_keep_mask(name, mask):\n    return mask\n"
                  "class Dropout:\n    def replay(self, mask):\n"
                  "        self._replay = check_keep_mask('mask', mask)\n",
    # a check helper only called there (imported from elsewhere)
    "module.py": "from somewhere import check_keep_mask\n"
                 "def load(mask):\n    return check_keep_mask('mask', mask)\n",
}


@pytest.mark.parametrize("name", sorted(PLANTED_CHECKS))
def test_the_check_finder_sees_a_planted_check(tmp_path, name):
    """The test above fails on a check helper defined or called in a layer file."""
    planted = tmp_path / name
    planted.write_text(PLANTED_CHECKS[name])
    with pytest.raises(AssertionError):
        test_the_layer_and_model_files_define_call_and_import_no_check(planted)


def _spy(cls, calls):
    original = registered("call", cls)

    def spy(m, *args, **kwargs):
        calls.append(type(m).__name__)
        return original(m, *args, **kwargs)
    return original, spy


def test_a_registered_check_runs_once_at_the_outermost_call():
    calls = []
    ffn = tf.PositionwiseFeedForward(4, 6, dtype="float64")
    saved = {c: registered("call", c) for c in (tf.PositionwiseFeedForward, tf.Linear)}
    for c in saved:
        CHECKS["call"][c] = _spy(c, calls)[1]
    try:
        x = torch.ones(2, 3, 4, dtype=torch.float64)
        ffn(x)
        assert calls == ["PositionwiseFeedForward"]          # its Linear children trusted it
        ffn.linear1(x)
        assert calls == ["PositionwiseFeedForward", "Linear"]  # called directly: checked
        calls.clear()
        ffn.forward(x)              # forward itself checks nothing; outside a checked call the
        assert calls == ["Linear", "Linear"]                  # children it calls check their own
    finally:
        CHECKS["call"].update(saved)


def test_a_subclass_is_checked_by_its_base_class_guard():
    class Scaled(tf.Linear):
        def forward(self, x):
            return 2 * super().forward(x)

    lin = Scaled(4, 3, dtype="float64")
    with pytest.raises(ValueError, match=r"^x: expected shape \(\.\.\., 4\), got \(2, 5\)"):
        lin(torch.ones(2, 5, dtype=torch.float64))
    assert lin(torch.ones(2, 4, dtype=torch.float64)).shape == (2, 3)


def test_user_hooks_on_a_child_see_the_checked_call_inside_a_model_call():
    ffn = tf.PositionwiseFeedForward(4, 6, dtype="float64")
    seen = []
    pre = ffn.linear2.register_forward_pre_hook(lambda m, args: seen.append(("pre", args[0].shape)))
    post = ffn.linear2.register_forward_hook(lambda m, args, out: seen.append(("post", out.shape)))
    ffn(torch.ones(2, 3, 4, dtype=torch.float64))
    pre.remove()
    post.remove()
    assert seen == [("pre", (2, 3, 6)), ("post", (2, 3, 4))]


def test_the_guard_hands_forward_converted_arguments():
    """The attention guard turns a 0/1 integer numpy mask into a bool keep-mask tensor, which is what
    forward receives (a pre-hook sees the converted arguments)."""
    mha = tf.MultiHeadAttention(4, 2, dtype="float64")
    got = []
    mha.register_forward_pre_hook(lambda m, args: got.append(args[3]))
    x = torch.ones(1, 3, 4, dtype=torch.float64)
    mha(x, x, x, np.tril(np.ones((3, 3), dtype=np.int64)))
    assert got[0].dtype == torch.bool and tuple(got[0].shape) == (3, 3)
    with pytest.raises(ValueError, match=r"^mask: expected 0/1 integer values, got values in \[2, 2\]"):
        mha(x, x, x, np.full((3, 3), 2))


def test_transformer_encode_and_decode_are_checked_by_their_registered_guards():
    assert registered("encode", tf.Transformer) is not None
    assert registered("decode", tf.Transformer) is not None
    from tests.torchformer.helpers import small_config
    model = tf.Transformer(small_config())
    with pytest.raises(ValueError, match=r"^src: expected token ids in \[0, 13\), got values in"):
        model.encode(torch.tensor([[1, 99]]))
    memory = model.encode(torch.tensor([[1, 2, 3]]))
    with pytest.raises(TypeError, match=r"^memory: expected dtype torch.float64"):
        model.decode(torch.tensor([[1]]), memory.float())
    assert model.decode(torch.tensor([[1, 2]]), memory).shape == (1, 2, 13)


def test_dropout_replay_runs_the_keep_mask_checks_registered_for_it():
    """Dropout.replay checks the mask's type, and the forward that takes it its shape, through the
    "replay" and "replayed_mask" checks in CHECKS (torchformer/guards/keep_masks.py)."""
    seen = []
    saved = {kind: registered(kind, tf.Dropout) for kind in ("replay", "replayed_mask")}
    assert all(saved.values())

    def spy(kind):
        def check(m, *args):
            seen.append(kind)
            return saved[kind](m, *args)
        return check
    for kind in saved:
        CHECKS[kind][tf.Dropout] = spy(kind)
    try:
        d = tf.Dropout(0.5)
        mask = np.array([[True, False, True]])
        d.replay(mask)
        assert seen == ["replay"]
        y = d(torch.ones(1, 3, dtype=torch.float64))
        assert seen == ["replay", "replayed_mask"]
        assert torch.equal(y, torch.tensor([[2.0, 0.0, 2.0]], dtype=torch.float64))
        with pytest.raises(TypeError, match=r"^mask: expected a bool numpy array or bool tensor"):
            d.replay(mask.astype(np.int64))
        d.replay(mask)
        with pytest.raises(ValueError, match=r"^mask \(queued by Dropout.replay\): expected shape "
                                             r"\(1, 4\) \(the input's\), got \(1, 3\)"):
            d(torch.ones(1, 4, dtype=torch.float64))
    finally:
        for kind, fn in saved.items():
            CHECKS[kind][tf.Dropout] = fn
