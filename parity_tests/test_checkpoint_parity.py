"""Checkpoints across the twins: a file written by either loads in both, and training resumes identically.

- weights: npformer -> file -> torchformer (and back) gives bit-identical weights and equal outputs;
- training: 2 steps in one twin, save (model + Adam + warm-up schedule), restore in the other twin, 2
  more steps in both on the same batches: losses, weights and optimizer state agree (float64);
- bad files raise the same CheckpointError in torchformer, and a failed restore leaves the torch model
  and optimizer untouched (torch's own load_state_dict could leave them half-loaded).
"""
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

import npformer.optim as npo
import torchformer.optim as tfo
from npformer.io import checkpoint as nck
from npformer.layers.loss import CrossEntropyLoss
from npformer.models.config import TransformerConfig
from parity_tests.harness import compare, compare_all, note_case
from parity_tests.harness.profiles import scaled
from torchformer.io import checkpoint as tck

KINDS = ("Transformer", "CausalLM", "EncoderClassifier")


def config_for(dtype="float64", **kw) -> TransformerConfig:
    base = dict(d_model=8, num_heads=2, d_ff=12, num_encoder_layers=1, num_decoder_layers=1,
                vocab_size=9, max_len=12, num_classes=3, dropout=0.0, dtype=dtype)
    base.update(kw)
    return TransformerConfig(**base)


def build(package: str, kind: str, config, seed=0):
    sub = nck.MODEL_CLASSES[kind]
    module = __import__(f"{package}.{sub}", fromlist=[kind])
    return getattr(module, kind)(config, seed=seed)


def batch(kind: str, config, rng):
    """(inputs tuple, targets) as numpy arrays; tokens avoid pad_id 0 so no row is fully padded."""
    B, S, T = 2, 5, 4
    src = rng.integers(1, config.vocab_size, size=(B, S))
    tgt = rng.integers(1, config.vocab_size, size=(B, T))
    if kind == "Transformer":
        return (src, tgt), rng.integers(1, config.vocab_size, size=(B, T))
    if kind == "CausalLM":
        return (tgt,), rng.integers(1, config.vocab_size, size=(B, T))
    return (src,), rng.integers(0, config.num_classes, size=(B,))


def np_train_step(model, opt, sched, inputs, targets) -> float:
    loss_fn = CrossEntropyLoss()
    model.zero_grad()
    loss = loss_fn(model(*inputs), targets)
    model.backward(loss_fn.backward())
    npo.clip_grad_norm(model.named_parameters(), 1.0)
    opt.step()
    sched.step()
    return float(loss)


def torch_train_step(model, opt, sched, inputs, targets) -> float:
    logits = model(*[torch.from_numpy(a) for a in inputs])
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), torch.from_numpy(targets).reshape(-1))
    opt.zero_grad()
    loss.backward()
    tfo.clip_grad_norm(model.parameters(), 1.0)
    opt.step()
    sched.step()
    return loss.item()


def np_weights(model):
    return {k: v.copy() for k, v in model.state_dict().items()}


def torch_weights(model):
    return {k: p.detach().numpy().copy() for k, p in model.named_parameters(remove_duplicate=False)}


@settings(max_examples=scaled(6))
@given(kind=st.sampled_from(KINDS), tie=st.booleans(), dtype=st.sampled_from(["float32", "float64"]),
       seed=st.integers(0, 2**16))
def test_weights_cross_load_both_ways(tmp_path_factory, kind, tie, dtype, seed):
    note_case(kind=kind, tie=tie, dtype=dtype, seed=seed)
    config = config_for(dtype, tie_embeddings=tie and kind != "EncoderClassifier")
    tmp = tmp_path_factory.mktemp("ck")
    rng = np.random.default_rng(seed)
    inputs, _ = batch(kind, config, rng)

    np_model = build("npformer", kind, config, seed=seed)
    nck.save_checkpoint(tmp / "np.npz", np_model)
    t_model = tck.load_model(tmp / "np.npz")
    assert type(t_model).__module__.startswith("torchformer") and type(t_model).__name__ == kind
    w_np, w_t = np_weights(np_model), torch_weights(t_model)
    # same names (order may differ: npformer re-registers a re-assigned tied weight at the end)
    assert sorted(w_np) == sorted(w_t)
    for k in w_np:
        assert w_t[k].dtype == np.dtype(dtype)
        np.testing.assert_array_equal(w_np[k], w_t[k], err_msg=k)
    np_model.eval(), t_model.eval()
    with torch.no_grad():
        t_out = t_model(*[torch.from_numpy(a) for a in inputs])
    compare(f"{kind}/logits np->torch", t_out, np_model(*inputs), dtype, "output")

    # and back: perturb in torch, save from torchformer, load in npformer
    with torch.no_grad():
        for p in t_model.parameters():
            p.add_(torch.from_numpy(S_normal(rng, tuple(p.shape), dtype)))
    tck.save_checkpoint(tmp / "t.npz", t_model, metadata={"from": "torch"})
    back = nck.load_model(tmp / "t.npz")
    assert nck.load_checkpoint(tmp / "t.npz").writer == "torchformer"
    for k, v in torch_weights(t_model).items():
        np.testing.assert_array_equal(back.state_dict()[k], v, err_msg=k)
    if config.tie_embeddings:
        assert back.output_proj.weight is back.tgt_embed.weight
        assert t_model.output_proj.weight is t_model.tgt_embed.weight


def S_normal(rng, shape, dtype):
    return (0.1 * rng.standard_normal(shape)).astype(dtype)


def compare_training_state(np_model, np_opt, t_model, t_opt, tag):
    """Weights and every Adam state tensor, by name (torch state found through the parameter)."""
    items = []
    t_named = dict(t_model.named_parameters())
    for name, p in np_model.named_parameters():
        tp = t_named[name]
        items.append((f"{tag}/{name}", p.data, tp.detach(), "optimizer_state"))
        st_np, st_t = np_opt.state[name], t_opt.state[tp]
        assert st_np["step"] == int(st_t["step"].item()), name
        for key in ("exp_avg", "exp_avg_sq"):
            items.append((f"{tag}/{name}/{key}", st_np[key], st_t[key], "optimizer_state"))
    compare_all(items, dtype="float64")
    assert np_opt.lr == t_opt.param_groups[0]["lr"]


# bias=False: the key projection's bias has an exactly-zero gradient in theory; both twins get rounding
# noise there (~1e-17, different in each), which Adam's g / sqrt(v) turns into +-lr steps. Without
# those biases every gradient is well away from zero and the runs agree to rounding.
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("first", ["npformer", "torchformer"])
def test_training_resumes_identically_in_the_other_twin(tmp_path, kind, first):
    config = config_for("float64", bias=False)
    rng = np.random.default_rng(11)
    batches = [batch(kind, config, rng) for _ in range(4)]
    adam = dict(lr=1.0, betas=(0.9, 0.98), eps=1e-9)
    sched_args = dict(d_model=config.d_model, warmup_steps=3, factor=0.5)

    np_model = build("npformer", kind, config, seed=3)
    np_opt = npo.Adam(np_model.named_parameters(), **adam)
    np_sched = npo.WarmupSchedule(np_opt, **sched_args)
    t_model = build("torchformer", kind, config, seed=5)
    t_opt = torch.optim.Adam(t_model.parameters(), **adam)
    t_sched = tfo.WarmupSchedule(t_opt, **sched_args)
    path = tmp_path / "run.npz"

    if first == "npformer":     # 2 steps in npformer, save, torchformer picks up
        for inputs, targets in batches[:2]:
            np_train_step(np_model, np_opt, np_sched, inputs, targets)
        nck.save_checkpoint(path, np_model, np_opt, np_sched, step=2)
        c = tck.restore(path, t_model, t_opt, t_sched)
    else:                       # 2 steps in torchformer, save, npformer picks up
        for inputs, targets in batches[:2]:
            torch_train_step(t_model, t_opt, t_sched, inputs, targets)
        tck.save_checkpoint(path, t_model, t_opt, t_sched, step=2)
        c = nck.restore(path, np_model, np_opt, np_sched)
    assert c.step == 2
    assert np_sched.last_epoch == t_sched.last_epoch == 2
    compare_training_state(np_model, np_opt, t_model, t_opt, "restored")
    for i, (inputs, targets) in enumerate(batches[2:]):
        loss_np = np_train_step(np_model, np_opt, np_sched, inputs, targets)
        loss_t = torch_train_step(t_model, t_opt, t_sched, inputs, targets)
        compare(f"loss step {i + 3}", np.float64(loss_np), np.float64(loss_t), "float64", "loss")
        compare_training_state(np_model, np_opt, t_model, t_opt, f"step {i + 3}")


def test_optimizer_variants_map_across(tmp_path):
    """SGD (momentum buffers) and AdamW/amsgrad state saved by npformer lands in torch by name,
    including from an optimizer built on a bare parameter list."""
    config = config_for("float64")
    rng = np.random.default_rng(0)
    for make_np, make_t in [
        (lambda m: npo.SGD(m.parameters(), lr=0.1, momentum=0.9, nesterov=True),
         lambda m: torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9, nesterov=True)),
        (lambda m: npo.AdamW(m.named_parameters(), lr=0.01, amsgrad=True),
         lambda m: torch.optim.AdamW(m.parameters(), lr=0.01, amsgrad=True)),
    ]:
        np_model = build("npformer", "CausalLM", config)
        opt = make_np(np_model)
        sched = npo.WarmupSchedule(opt, 8, 2)
        for _ in range(2):
            inputs, targets = batch("CausalLM", config, rng)
            np_train_step(np_model, opt, sched, inputs, targets)
        nck.save_checkpoint(tmp_path / "o.npz", np_model, opt, sched)
        t_model = build("torchformer", "CausalLM", config, seed=9)
        t_opt = make_t(t_model)
        tck.restore(tmp_path / "o.npz", t_model, t_opt)
        first_name = {id(p): n for n, p in np_model.named_parameters()}
        t_named = dict(t_model.named_parameters())
        for oname, p in zip(opt.param_names, opt.params):
            tp = t_named[first_name[id(p)]]
            for key, v in opt.state[oname].items():
                if key == "step":
                    assert int(t_opt.state[tp]["step"].item()) == v
                else:
                    np.testing.assert_array_equal(t_opt.state[tp][key].numpy(), v)
        # and back into npformer from the torch side
        tck.save_checkpoint(tmp_path / "o2.npz", t_model, t_opt)
        model2 = build("npformer", "CausalLM", config, seed=1)
        again = make_np(model2)
        nck.restore(tmp_path / "o2.npz", model2, again)
        for oname in opt.param_names:
            for key, v in opt.state[oname].items():
                np.testing.assert_array_equal(again.state[oname][key], v)


def test_torchformer_load_model_device_dtype(tmp_path):
    model = build("npformer", "CausalLM", config_for("float64"))
    nck.save_checkpoint(tmp_path / "m.npz", model)
    t32 = tck.load_model(tmp_path / "m.npz", dtype="float32", device="cpu")
    assert t32.config.dtype == "float32"
    assert all(p.dtype == torch.float32 for p in t32.parameters())
    for k, p in t32.named_parameters():
        np.testing.assert_array_equal(p.detach().numpy(), model.state_dict()[k].astype(np.float32))


def test_torchformer_bad_files_and_no_half_restore(tmp_path):
    # the same errors as npformer
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"\x00" * 64)
    with pytest.raises(tck.CheckpointError, match="junk.npz.*not an .npz"):
        tck.load_model(junk)
    with pytest.raises(tck.CheckpointNotFoundError):
        tck.load_model(tmp_path / "missing.npz")
    config = config_for("float64")
    np_model = build("npformer", "CausalLM", config)
    opt = npo.Adam(np_model.named_parameters(), lr=0.1)
    sched = npo.WarmupSchedule(opt, 8, 4)
    rng = np.random.default_rng(2)
    inputs, targets = batch("CausalLM", config, rng)
    np_train_step(np_model, opt, sched, inputs, targets)
    good = nck.save_checkpoint(tmp_path / "good.npz", np_model, opt, sched)
    data = good.read_bytes()
    (tmp_path / "cut.npz").write_bytes(data[: len(data) // 2])
    with pytest.raises(tck.CheckpointError, match="truncated"):
        tck.load_model(tmp_path / "cut.npz")

    # an optimizer tensor of the wrong shape: validated before the weights are copied
    with np.load(good, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["optim/output_proj.weight/exp_avg"] = np.zeros((2, 2))
    with open(tmp_path / "bad.npz", "wb") as f:
        np.savez(f, **arrays)
    t_model = build("torchformer", "CausalLM", config, seed=4)
    t_opt = torch.optim.Adam(t_model.parameters(), lr=0.3)
    t_sched = tfo.WarmupSchedule(t_opt, 8, 4)
    torch_train_step(t_model, t_opt, t_sched, inputs, targets)
    before_w = torch_weights(t_model)
    before_opt = {k: (v if not torch.is_tensor(v) else v.clone())
                  for k, v in t_opt.state[next(iter(t_model.parameters()))].items()}
    before_lr = t_opt.param_groups[0]["lr"]
    with pytest.raises(tck.CheckpointError, match="output_proj.weight/exp_avg: expected shape"):
        tck.restore(tmp_path / "bad.npz", t_model, t_opt, t_sched)
    for k, v in torch_weights(t_model).items():
        np.testing.assert_array_equal(v, before_w[k], err_msg=k)
    after_opt = t_opt.state[next(iter(t_model.parameters()))]
    for k, v in before_opt.items():
        assert torch.equal(after_opt[k], v), k
    assert t_opt.param_groups[0]["lr"] == before_lr and t_sched.last_epoch == 1

    # an optimizer of another kind
    with pytest.raises(tck.CheckpointError, match="'Adam', the optimizer is 'SGD'"):
        tck.restore(good, t_model, torch.optim.SGD(t_model.parameters(), lr=0.1))
    for k, v in torch_weights(t_model).items():
        np.testing.assert_array_equal(v, before_w[k], err_msg=k)
