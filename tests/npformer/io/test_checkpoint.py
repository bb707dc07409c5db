"""npformer.io.checkpoint: round trips (weights, tied weights, optimizer, schedule) and every bad file.

Cross-twin loading (npformer <-> torchformer) is in parity_tests/test_checkpoint_parity.py.
"""
import json
import os
import zipfile

import numpy as np
import pytest

from npformer.io import checkpoint as ck
from npformer.layers.loss import CrossEntropyLoss
from npformer.layers.module import Module, Parameter
from npformer.models.causal_lm import CausalLM
from npformer.models.config import TransformerConfig
from npformer.optim import SGD, Adam, AdamW, WarmupSchedule, clip_grad_norm


def tiny_config(**kw) -> TransformerConfig:
    base = dict(d_model=8, num_heads=2, d_ff=16, num_encoder_layers=1, num_decoder_layers=2,
                vocab_size=11, max_len=16, dropout=0.0, dtype="float64")
    base.update(kw)
    return TransformerConfig(**base)


class TinyNet(Module):
    """A module without a config (the model_class= path)."""

    def __init__(self):
        super().__init__()
        rng = np.random.default_rng(3)
        self.w = Parameter(rng.standard_normal((3, 2)))
        self.b = Parameter(rng.standard_normal(2))


def weights(model) -> dict:
    return {k: v.copy() for k, v in model.state_dict().items()}


def assert_same_weights(a: dict, b: dict) -> None:
    assert list(a) == list(b)
    for k in a:
        assert a[k].dtype == b[k].dtype, k
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)


def train_steps(model, opt, sched, n, seed):
    """n real training steps (forward, cross-entropy, hand-written backward, clip, step)."""
    rng = np.random.default_rng(seed)
    loss_fn = CrossEntropyLoss()
    for _ in range(n):
        ids = rng.integers(1, model.config.vocab_size, size=(2, 5))
        targets = rng.integers(1, model.config.vocab_size, size=(2, 5))
        model.zero_grad()
        loss_fn(model(ids), targets)
        model.backward(loss_fn.backward())
        clip_grad_norm(model.named_parameters(), 1.0)
        opt.step()
        if sched is not None:
            sched.step()


def rewrite(src, dst, mutate):
    """Copy a checkpoint's raw arrays, let `mutate(arrays)` change them, write them to `dst`."""
    with np.load(src, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    mutate(arrays)
    with open(dst, "wb") as f:
        np.savez(f, **arrays)
    return dst


def edit_header(arrays, change):
    header = json.loads(str(arrays["header"][()]))
    change(header)
    arrays["header"] = np.array(json.dumps(header))


@pytest.fixture
def saved(tmp_path):
    """A CausalLM trained 3 steps with Adam + warm-up, saved with optimizer and schedule."""
    model = CausalLM(tiny_config(), seed=1)
    opt = Adam(model.named_parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)
    sched = WarmupSchedule(opt, d_model=8, warmup_steps=4)
    train_steps(model, opt, sched, 3, seed=0)
    path = ck.save_checkpoint(tmp_path / "model.npz", model, opt, sched, step=3,
                              metadata={"task": "reverse", "loss": [2.5, 2.25]})
    return path, model, opt, sched


# -- round trips --------------------------------------------------------------------------------------
def test_model_round_trip(saved):
    path, model, _, _ = saved
    loaded = ck.load_model(path)
    assert type(loaded) is CausalLM and loaded.config == model.config
    assert_same_weights(weights(model), weights(loaded))
    ids = np.array([[1, 2, 3, 4]])
    np.testing.assert_array_equal(model(ids), loaded(ids))


def test_header_fields(saved):
    path, _, _, _ = saved
    c = ck.load_checkpoint(path)
    assert (c.writer, c.model_class, c.step, c.format_version) == ("npformer", "CausalLM", 3,
                                                                   ck.FORMAT_VERSION)
    assert c.metadata == {"task": "reverse", "loss": [2.5, 2.25]}
    assert c.schedule_state == {"type": "WarmupSchedule", "last_epoch": 3, "d_model": 8,
                                "warmup_steps": 4, "factor": 1.0}
    assert c.optimizer_state["type"] == "Adam"
    assert c.optimizer_state["state"]["tgt_embed.weight"]["step"] == 3
    with zipfile.ZipFile(path) as z:          # no pickles anywhere: every member is a plain .npy
        assert all(n.endswith(".npy") for n in z.namelist())


def test_float32_and_tied_weights(tmp_path):
    model = CausalLM(tiny_config(dtype="float32", tie_embeddings=True), seed=2)
    assert model.output_proj.weight is model.tgt_embed.weight
    path = ck.save_checkpoint(tmp_path / "tied.npz", model)
    assert "output_proj.weight" in ck.load_checkpoint(path).state      # stored under both names
    loaded = ck.load_model(path)
    assert loaded.output_proj.weight is loaded.tgt_embed.weight        # still one Parameter
    assert loaded.tgt_embed.weight.data.dtype == np.float32
    assert_same_weights(weights(model), weights(loaded))


@pytest.mark.parametrize("make", [
    lambda m: Adam(m.named_parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9),
    lambda m: AdamW(m.parameters(), lr=1.0, amsgrad=True),      # bare list: names "0", "1", ...
    lambda m: SGD(m.named_parameters(), lr=0.05, momentum=0.9, nesterov=True),
])
def test_resume_continues_bit_identically(tmp_path, make):
    """Train 3 steps, save, restore into fresh objects, train 2 more: equal to 5 uninterrupted steps."""
    model = CausalLM(tiny_config(), seed=4)
    opt = make(model)
    sched = WarmupSchedule(opt, 8, 4)
    train_steps(model, opt, sched, 3, seed=5)
    path = ck.save_checkpoint(tmp_path / "r.npz", model, opt, sched, step=3)

    fresh = CausalLM(tiny_config(), seed=99)              # different initial weights
    fresh_opt = make(fresh)
    fresh_sched = WarmupSchedule(fresh_opt, 8, 4)
    c = ck.restore(path, fresh, fresh_opt, fresh_sched)
    assert c.step == 3 and fresh_opt.lr == opt.lr and fresh_sched.last_epoch == 3

    train_steps(model, opt, sched, 2, seed=6)
    train_steps(fresh, fresh_opt, fresh_sched, 2, seed=6)
    assert_same_weights(weights(model), weights(fresh))


def test_module_without_config(tmp_path):
    net = TinyNet()
    net.w.data += 1.0
    path = ck.save_checkpoint(tmp_path / "tiny.npz", net)
    assert ck.load_checkpoint(path).config is None
    with pytest.raises(ck.CheckpointError, match="no config"):
        ck.load_model(path)
    loaded = ck.load_model(path, model_class=TinyNet)
    assert_same_weights(weights(net), weights(loaded))


def test_save_is_atomic_and_overwrites(tmp_path):
    net = TinyNet()
    path = tmp_path / "a.npz"
    ck.save_checkpoint(path, net, step=1)
    ck.save_checkpoint(path, net, step=2)
    assert ck.load_checkpoint(path).step == 2
    assert os.listdir(tmp_path) == ["a.npz"]          # no temporary file left behind


def test_save_errors(tmp_path):
    net = TinyNet()
    with pytest.raises(ck.CheckpointError, match="JSON"):
        ck.save_checkpoint(tmp_path / "m.npz", net, metadata={"f": object()})
    with pytest.raises(ck.CheckpointError, match="step"):
        ck.save_checkpoint(tmp_path / "m.npz", net, step=-1)
    other = SGD([Parameter(np.zeros(2))], lr=0.1)
    with pytest.raises(ck.CheckpointError, match="not a parameter of the model"):
        ck.save_checkpoint(tmp_path / "m.npz", net, other)
    assert not list(tmp_path.iterdir())               # nothing written by a failed save


# -- bad files ----------------------------------------------------------------------------------------
def test_missing_file(tmp_path):
    missing = tmp_path / "nope.npz"
    with pytest.raises(ck.CheckpointNotFoundError, match="nope.npz.*no such file") as e:
        ck.load_checkpoint(missing)
    assert isinstance(e.value, FileNotFoundError) and isinstance(e.value, ValueError)


def test_garbage_and_npy_files(tmp_path):
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"this is not a checkpoint at all" * 10)
    with pytest.raises(ck.CheckpointError, match="junk.npz.*not an .npz"):
        ck.load_checkpoint(junk)
    npy = tmp_path / "array.npz"
    with open(npy, "wb") as f:
        np.save(f, np.zeros(3))
    with pytest.raises(ck.CheckpointError, match="not an .npz"):
        ck.load_checkpoint(npy)
    empty = tmp_path / "empty.npz"
    empty.write_bytes(b"")
    with pytest.raises(ck.CheckpointError, match="not an .npz"):
        ck.load_checkpoint(empty)


@pytest.mark.parametrize("fraction", [0.1, 0.5, 0.99])
def test_truncated_file(saved, tmp_path, fraction):
    path = saved[0]
    data = path.read_bytes()
    cut = tmp_path / "cut.npz"
    cut.write_bytes(data[: int(len(data) * fraction)])
    with pytest.raises(ck.CheckpointError, match="cut.npz.*truncated or corrupt"):
        ck.load_checkpoint(cut)


def test_corrupt_bytes_inside_an_array(saved, tmp_path):
    path = saved[0]
    with zipfile.ZipFile(path) as z:
        info = z.getinfo("model/tgt_embed.weight.npy")
    data = bytearray(path.read_bytes())
    # the member's data starts after its local header (30 bytes + name + extra); flip a byte well in
    at = info.header_offset + 30 + len(info.filename) + 200
    data[at] ^= 0xFF
    bad = tmp_path / "flipped.npz"
    bad.write_bytes(bytes(data))
    with pytest.raises(ck.CheckpointError, match="flipped.npz.*corrupt archive entry.*CRC"):
        ck.load_checkpoint(bad)


def test_zip_that_is_not_a_checkpoint(tmp_path):
    plain = tmp_path / "plain.npz"
    with open(plain, "wb") as f:
        np.savez(f, a=np.zeros(2), b=np.ones(3))
    with pytest.raises(ck.CheckpointError, match="missing entry 'format'"):
        ck.load_checkpoint(plain)
    text = tmp_path / "text.npz"
    with zipfile.ZipFile(text, "w") as z:
        z.writestr("format", "hello")
    with pytest.raises(ck.CheckpointError, match="not a NumPy array"):
        ck.load_checkpoint(text)
    pickled = tmp_path / "pickled.npz"
    with open(pickled, "wb") as f:
        np.savez(f, format=np.array([{"evil": 1}], dtype=object))
    with pytest.raises(ck.CheckpointError, match="corrupt archive entry.*pickle"):
        ck.load_checkpoint(pickled)


@pytest.mark.parametrize("mutate, match", [
    (lambda a: a.update(format_version=np.array(99)), "unknown format version 99"),
    (lambda a: a.update(format=np.array("something-else")), "format: expected"),
    (lambda a: a.update(header=np.array("{not json")), "not valid JSON"),
    (lambda a: a.pop("model/decoder.layers.0.norm1.weight"),
     "missing \\['decoder.layers.0.norm1.weight'\\]"),
    (lambda a: a.update({"model/extra.weight": np.zeros(2)}), "unexpected \\['extra.weight'\\]"),
    (lambda a: a.update({"stray": np.zeros(2)}), "unexpected entries \\['stray'\\]"),
    (lambda a: a.update({"model/tgt_embed.weight": np.zeros((11, 8), dtype=np.int64)}),
     "expected a float array"),
    (lambda a: edit_header(a, lambda h: h["config"].update(d_model=7)), "invalid config.*d_model"),
    (lambda a: edit_header(a, lambda h: h["config"].update(colour="blue")), "invalid config.*unknown"),
    (lambda a: edit_header(a, lambda h: h.pop("step")), "lacks field 'step'"),
    (lambda a: a.update({"optim/tgt_embed.weight/step": np.array(-1)}), "non-negative integer"),
    (lambda a: a.update({"optim/ghost/exp_avg": np.zeros(2)}), "unexpected optimizer entry"),
])
def test_malformed_contents(saved, tmp_path, mutate, match):
    bad = rewrite(saved[0], tmp_path / "bad.npz", mutate)
    with pytest.raises(ck.CheckpointError, match=match) as e:
        ck.load_checkpoint(bad)
    assert "bad.npz" in str(e.value) and isinstance(e.value, ValueError)


def _snapshot(model, opt, sched):
    return weights(model), opt.state_dict(), sched.state_dict(), opt.lr


def _assert_unchanged(before, model, opt, sched):
    w, osd, ssd, lr = before
    assert_same_weights(w, weights(model))
    after = opt.state_dict()
    assert after["hyperparams"] == osd["hyperparams"] and opt.lr == lr
    for n, s in osd["state"].items():
        for k, v in s.items():
            np.testing.assert_array_equal(after["state"][n][k], v)
    assert sched.state_dict() == ssd


@pytest.mark.parametrize("mutate, match", [
    (lambda a: a.update({"model/output_proj.weight": np.zeros((11, 9))}),
     "wrong shapes: output_proj.weight: model \\(11, 8\\) vs file \\(11, 9\\)"),
    (lambda a: a.update({"optim/tgt_embed.weight/exp_avg": np.zeros((2, 2))}),
     "optimizer state does not fit.*tgt_embed.weight/exp_avg: expected shape"),
    (lambda a: a.pop("optim/output_proj.bias/exp_avg_sq"), "output_proj.bias: expected state keys"),
    (lambda a: edit_header(a, lambda h: h["optimizer"].update(type="SGD")), "SGD"),
    (lambda a: edit_header(a, lambda h: h["schedule"].update(warmup_steps=0)),
     "schedule state does not fit.*warmup_steps"),
])
def test_failed_restore_changes_nothing(saved, tmp_path, mutate, match):
    """The last object validated (optimizer, schedule) fails: the model must not have been touched."""
    bad = rewrite(saved[0], tmp_path / "bad.npz", mutate)
    model = CausalLM(tiny_config(), seed=7)
    opt = Adam(model.named_parameters(), lr=0.5)
    sched = WarmupSchedule(opt, 8, 4)
    train_steps(model, opt, sched, 1, seed=8)
    before = _snapshot(model, opt, sched)
    with pytest.raises(ck.CheckpointError, match=match):
        ck.restore(bad, model, opt, sched)
    _assert_unchanged(before, model, opt, sched)


def test_restore_into_a_different_model_or_optimizer(saved):
    path = saved[0]
    other = CausalLM(tiny_config(d_model=16, d_ff=8), seed=0)
    before = weights(other)
    with pytest.raises(ck.CheckpointError, match="does not fit the model: wrong shapes"):
        ck.restore(path, other)
    assert_same_weights(before, weights(other))
    deeper = CausalLM(tiny_config(num_decoder_layers=3), seed=0)
    with pytest.raises(ck.CheckpointError, match="missing weights \\['decoder.layers.2"):
        ck.restore(path, deeper)
    model = CausalLM(tiny_config(), seed=0)
    sgd = SGD(model.named_parameters(), lr=0.1, momentum=0.9)
    before = weights(model)
    with pytest.raises(ck.CheckpointError, match="expected the state of a SGD optimizer"):
        ck.restore(path, model, sgd)
    assert_same_weights(before, weights(model))
    part = Adam(list(model.named_parameters())[:3], lr=0.1)
    with pytest.raises(ck.CheckpointError, match="not a parameter of both"):
        ck.restore(path, model, part)
    assert_same_weights(before, weights(model))


def test_restore_asks_for_state_the_file_lacks(tmp_path):
    model = CausalLM(tiny_config(), seed=0)
    path = ck.save_checkpoint(tmp_path / "weights_only.npz", model)
    opt = Adam(model.named_parameters())
    with pytest.raises(ck.CheckpointError, match="holds no optimizer state"):
        ck.restore(path, model, opt)
    with pytest.raises(ck.CheckpointError, match="holds no schedule state"):
        ck.restore(path, model, schedule=WarmupSchedule(opt, 8, 4))


def test_unknown_model_class(saved, tmp_path):
    bad = rewrite(saved[0], tmp_path / "bad.npz",
                  lambda a: edit_header(a, lambda h: h.update(model_class="Perceiver")))
    with pytest.raises(ck.CheckpointError, match="model class 'Perceiver'"):
        ck.load_model(bad)
    assert type(ck.load_model(bad, model_class=CausalLM)) is CausalLM
