"""Determinism: same seed, config and inputs give bit-identical results; a different seed differs.

A few training steps per model in train mode with every dropout site active (embeddings, sublayer
outputs, attention probabilities, FFN activation), through the public API: forward, loss, backward,
clip_grad_norm, optimizer step, warm-up schedule. Compared bit for bit (`tobytes`, so -0.0 vs 0.0 or
NaN payloads would count as differences): logits, loss, per-head attention weights, dropout masks,
input and parameter gradients, gradient norm, parameters and optimizer state after every step.
Also: a float32 model keeps float32 in every output, gradient, parameter and optimizer state.
"""
from __future__ import annotations

import hashlib
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import npformer as nf

ROOT = pathlib.Path(__file__).resolve().parents[3]


def cfg(dtype="float64", **changes):
    base = dict(d_model=8, num_heads=2, d_ff=12, num_encoder_layers=2, num_decoder_layers=2,
                max_len=8, vocab_size=13, pad_id=0, num_classes=3, dropout=0.2,
                attention_dropout=0.2, activation_dropout=0.2, dtype=dtype)
    base.update(changes)
    return nf.TransformerConfig(**base)


def batch(step: int):
    """Inputs that depend on the step only (never on the model): ids with padding, targets."""
    rng = np.random.default_rng(100 + step)
    src = rng.integers(1, 13, size=(3, 6))
    src[1, 4:] = 0
    src[2, 2:] = 0
    tgt = rng.integers(1, 13, size=(3, 6))
    tgt[0, 5:] = 0
    labels = rng.integers(0, 3, size=3)
    return src, tgt, labels


MODELS = {
    # name: (class, config changes, forward, targets)
    "Transformer": (nf.Transformer, dict(norm_first=False),
                    lambda m, b: m(b[0], b[1][:, :-1]), lambda b: b[1][:, 1:]),
    "EncoderClassifier": (nf.EncoderClassifier, dict(pooling="mean", activation="gelu"),
                          lambda m, b: m(b[0]), lambda b: b[2]),
    "CausalLM": (nf.CausalLM, dict(norm_first=True, activation="gelu_tanh", positional="learned",
                                   final_norm=True, scale_embeddings=False, tie_embeddings=True),
                 lambda m, b: m(b[1][:, :-1]), lambda b: b[1][:, 1:]),
}

OPTIMIZERS = {
    "Transformer": lambda p: nf.AdamW(p, lr=1.0, weight_decay=0.01),    # lr set by the schedule
    "EncoderClassifier": lambda p: nf.SGD(p, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01),
    "CausalLM": lambda p: nf.Adam(p, lr=1e-2, amsgrad=True),
}


def train(name: str, seed: int, dtype: str = "float64", steps: int = 3, eval_between=False):
    """Run `steps` training steps; return a list of per-step records and the final state."""
    cls, changes, forward, targets = MODELS[name]
    model = cls(cfg(dtype, **changes), seed=seed)
    opt = OPTIMIZERS[name](model.named_parameters())
    sched = nf.WarmupSchedule(opt, d_model=8, warmup_steps=2) if name == "Transformer" else None
    loss_fn = nf.CrossEntropyLoss(ignore_index=0 if name != "EncoderClassifier" else -100,
                                  label_smoothing=0.1)
    records = []
    for step in range(steps):
        b = batch(step)
        model.train()
        model.zero_grad()
        logits = forward(model, b)
        loss = loss_fn(logits, targets(b))
        dlogits = loss_fn.backward()
        d_inputs = model.backward(dlogits)
        norm = nf.clip_grad_norm(model.named_parameters(), max_norm=0.5)
        records.append({
            "logits": logits.copy(), "loss": np.asarray(loss).copy(), "dlogits": dlogits.copy(),
            "d_inputs": {k: v.copy() for k, v in d_inputs.items()},
            "attn": {n: m.attn_weights.copy() for n, m in model.named_modules()
                     if isinstance(m, nf.MultiHeadAttention)},
            "masks": {k: v.copy() for k, v in nf.collect_dropout_masks(model).items()},
            "grads": {n: p.grad.copy() for n, p in model.named_parameters()},
            "norm": norm,
        })
        opt.step()
        if sched is not None:
            sched.step()
        records[-1]["params"] = model.state_dict()
        if eval_between:                                         # eval draws no mask
            model.eval()
            forward(model, b)
    return records, model, opt


def flatten(obj, prefix=""):
    """{path: leaf} for nested dicts / lists of arrays and scalars."""
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            out.update(flatten(v, f"{prefix}/{k}"))
        return out
    if isinstance(obj, (list, tuple)):
        out = {}
        for i, v in enumerate(obj):
            out.update(flatten(v, f"{prefix}/{i}"))
        return out
    return {prefix: obj}


def assert_bit_identical(a, b):
    fa, fb = flatten(a), flatten(b)
    assert list(fa) == list(fb)
    for k in fa:
        x, y = fa[k], fb[k]
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            x, y = np.asarray(x), np.asarray(y)
            assert x.dtype == y.dtype and x.shape == y.shape, k
            assert x.tobytes() == y.tobytes(), f"{k} differs"
        else:
            assert type(x) is type(y) and (x == y or (x != x and y != y)), f"{k}: {x!r} != {y!r}"


@pytest.mark.parametrize("name", MODELS)
def test_same_seed_bit_identical_training(name):
    rec1, m1, opt1 = train(name, seed=11)
    rec2, m2, opt2 = train(name, seed=11)
    assert_bit_identical(rec1, rec2)
    assert_bit_identical(m1.state_dict(), m2.state_dict())
    assert_bit_identical(opt1.state_dict(), opt2.state_dict())
    # the check is not vacuous: dropout drew masks at every kind of site, and they drop something
    masks = rec1[0]["masks"]
    assert any(k.endswith("attn_dropout") for k in masks)
    assert any(k.endswith("feed_forward.dropout") for k in masks)
    assert all(not m.all() for m in masks.values() if m.size >= 50)
    # masks change from step to step (one generator, advancing), parameters move
    assert any(not np.array_equal(rec1[0]["masks"][k], rec1[1]["masks"][k]) for k in masks)
    assert any(not np.array_equal(rec1[0]["params"][k], rec1[2]["params"][k])
               for k in rec1[0]["params"])


@pytest.mark.parametrize("name", MODELS)
def test_different_seed_differs(name):
    rec1, m1, _ = train(name, seed=11, steps=1)
    rec2, m2, _ = train(name, seed=12, steps=1)
    cls, changes, _, _ = MODELS[name]
    init1 = cls(cfg(**changes), seed=11).state_dict()
    init2 = cls(cfg(**changes), seed=12).state_dict()
    random_init = [k for k in init1 if not (k.endswith("bias") or ".norm" in k)]
    assert all(not np.array_equal(init1[k], init2[k]) for k in random_init)
    assert not np.array_equal(rec1[0]["logits"], rec2[0]["logits"])
    masks1, masks2 = rec1[0]["masks"], rec2[0]["masks"]
    assert set(masks1) == set(masks2)
    assert all(not np.array_equal(masks1[k], masks2[k]) for k in masks1 if masks1[k].size >= 20)


@pytest.mark.parametrize("name", MODELS)
def test_eval_draws_nothing(name):
    """Evaluation between training steps does not move the dropout generator, and is deterministic."""
    rec1, m1, _ = train(name, seed=5, steps=2)
    rec2, m2, _ = train(name, seed=5, steps=2, eval_between=True)
    assert_bit_identical(rec1, rec2)
    _, _, forward, _ = MODELS[name]
    m2.eval()
    out1, out2 = forward(m2, batch(0)), forward(m2, batch(0))
    assert out1.tobytes() == out2.tobytes()
    assert nf.collect_dropout_masks(m2) == {}


def test_replayed_masks_reproduce_a_training_forward():
    """Masks recorded from one model, replayed into a twin whose generator is elsewhere: same output."""
    cls, changes, forward, _ = MODELS["Transformer"]
    a = cls(cfg(**changes), seed=3)
    b = cls(cfg(**changes), seed=3)
    forward(b, batch(5))                                     # b's generator is now ahead of a's
    out_a = forward(a, batch(0))
    nf.replay_dropout_masks(b, nf.collect_dropout_masks(a))
    out_b = forward(b, batch(0))
    assert out_a.tobytes() == out_b.tobytes()
    assert_bit_identical(nf.collect_dropout_masks(a), nf.collect_dropout_masks(b))


@pytest.mark.parametrize("name", MODELS)
def test_float32_stays_float32(name):
    recs, model, opt = train(name, seed=2, dtype="float32", steps=2)
    f32 = np.dtype(np.float32)
    for rec in recs:
        for path, leaf in flatten(rec).items():
            if "masks" in path:
                assert leaf.dtype == np.bool_, path
            elif isinstance(leaf, np.ndarray):
                assert leaf.dtype == f32, f"{path}: {leaf.dtype}"
        assert np.isfinite(rec["loss"]) and isinstance(rec["norm"], float)
    for n, p in model.named_parameters():
        assert p.data.dtype == f32 and p.grad.dtype == f32, n
    for path, leaf in flatten(opt.state_dict()["state"]).items():
        if isinstance(leaf, np.ndarray):
            assert leaf.dtype == f32, path
    # float32 and float64 runs: the same dropout masks, numbers equal to float32 rounding
    recs64, _, _ = train(name, seed=2, dtype="float64", steps=1)
    assert_bit_identical(recs[0]["masks"], recs64[0]["masks"])
    assert np.allclose(recs[0]["logits"], recs64[0]["logits"], rtol=1e-4, atol=1e-4)


SCRIPT = """
import hashlib, sys
sys.path.insert(0, {root!r})
sys.path.insert(0, {here!r})
import test_determinism as t
h = hashlib.sha256()
for name in t.MODELS:
    recs, model, _ = t.train(name, seed=7, steps=2)
    for k, v in t.flatten(recs).items():
        h.update(k.encode()); h.update(repr(v).encode() if not hasattr(v, "tobytes") else v.tobytes())
print(h.hexdigest())
"""


def digest_here() -> str:
    h = hashlib.sha256()
    for name in MODELS:
        recs, _, _ = train(name, seed=7, steps=2)
        for k, v in flatten(recs).items():
            h.update(k.encode())
            h.update(repr(v).encode() if not hasattr(v, "tobytes") else v.tobytes())
    return h.hexdigest()


def test_bit_identical_across_processes():
    """A fresh interpreter (another hash seed) computes the very same bits."""
    here = pathlib.Path(__file__).resolve().parent
    code = SCRIPT.format(root=str(ROOT), here=str(here))
    env = {"PYTHONHASHSEED": "12345", "PATH": "/usr/bin:/bin"}
    # the same BLAS set-up as this process: its thread counts, and its kernel choice
    # (OPENBLAS_CORETYPE: a Haswell kernel forced on an AVX-512 machine sums in another order)
    for var, value in os.environ.items():
        if var == "HOME" or var.startswith(("OPENBLAS_", "GOTO", "OMP_", "MKL_", "NPY_")):
            env[var] = value
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         cwd=str(ROOT), check=True)
    assert out.stdout.strip() == digest_here()
