"""torchformer dropout: replayed masks give the deterministic formula x*m/(1-p) (and its gradient) in
either mode, drawn masks are recorded when recording is switched on (unrecorded dropout otherwise,
and collecting its masks is an error), masks cross between the twins by module name,
attention-probability dropout records and replays through the explicit path."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import npformer.layers.attention as np_attn
import npformer.models.transformer as np_tr
from npformer.checks.dropout_masks import collect_dropout_masks as np_collect
from npformer.checks.dropout_masks import replay_dropout_masks as np_replay
from npformer.layers.dropout import Dropout as NpDropout
from tests.torchformer.helpers import assert_close, randn, small_config
from torchformer.checks.dropout_masks import collect_dropout_masks, replay_dropout_masks, set_record_masks
from torchformer.layers.dropout import Dropout, dropout_unrecorded
from torchformer.models.bridge import masks_to_numpy, to_torch
from torchformer.models.transformer import Transformer


@pytest.mark.parametrize("record", [False, True])
@pytest.mark.parametrize("as_numpy", [False, True])
@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_replay_is_the_formula_forward_and_backward(p, as_numpy, record):
    gen = torch.Generator().manual_seed(0)
    x = randn(gen, 3, 4, 5, requires_grad=True)
    mask = torch.rand(3, 4, 5, generator=gen) >= p
    d = set_record_masks(Dropout(p), record)
    d.replay(mask.numpy() if as_numpy else mask)
    y = d(x)
    g = randn(gen, 3, 4, 5)
    y.backward(g)
    keep = mask.double()
    assert_close("y", y, x.detach() * keep / (1 - p))
    assert_close("dx", x.grad, g * keep / (1 - p), kind="grad")
    assert torch.equal(d.last_mask, mask) and not d.last_unrecorded
    assert torch.all(y[~mask] == 0)
    z = d(x)                                       # the replay was used once: a fresh draw now
    assert not d.replay_pending
    if record:
        assert d.last_mask is not None and not d.last_unrecorded
        assert_close("fresh draw", z, x.detach() * d.last_mask / (1 - p))
    else:                                          # unrecorded: every entry is 0 or x / (1 - p)
        assert d.last_mask is None and d.last_unrecorded
        kept = z != 0
        assert_close("fresh draw", z[kept], x.detach()[kept] / (1 - p))


def test_drawn_masks_are_recorded_and_have_the_right_rate():
    torch.manual_seed(0)
    d = Dropout(0.3)
    assert not d.record_masks                                  # unrecorded unless switched on
    set_record_masks(d, True)
    x = torch.ones(200, 500, dtype=torch.float64)
    y = d(x)
    m = d.last_mask
    assert m.dtype == torch.bool and m.shape == x.shape
    assert torch.equal(y, m.double() / 0.7)
    assert abs(m.double().mean().item() - 0.7) < 0.01          # 1e5 draws: sd 1.4e-3


def test_own_generator_always_records_and_is_reproducible():
    x = torch.ones(50, 40, dtype=torch.float64)
    a = Dropout(0.4, rng=torch.Generator().manual_seed(5))
    b = Dropout(0.4, rng=torch.Generator().manual_seed(5))
    ya, yb = a(x), b(x)                                        # record_masks False: still explicit
    assert a.last_mask is not None and not a.last_unrecorded
    assert torch.equal(a.last_mask, b.last_mask) and torch.equal(ya, yb)
    assert collect_dropout_masks(a)[""] is a.last_mask


def test_eval_and_p0_are_identity_and_refuse_replays():
    x = torch.randn(2, 3, dtype=torch.float64)
    for d in (Dropout(0.5).eval(), Dropout(0.0)):
        assert d(x) is x and d.last_mask is None
        d.replay(torch.ones(2, 3, dtype=torch.bool))
        with pytest.raises(RuntimeError, match="replay masks only into the same mode"):
            d(x)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_unrecorded_dropout_is_inverted_dropout_with_the_right_rate_and_gradient(dtype):
    torch.manual_seed(2)
    p = 0.3
    x = (torch.rand(300, 400, dtype=dtype) + 0.5).requires_grad_(True)      # no zero entries
    y = dropout_unrecorded(x, p)
    assert y.dtype == dtype and y.shape == x.shape
    kept = y != 0
    assert_close("kept entries", y[kept], x.detach()[kept] / (1 - p),
                 dtype="float32" if dtype == torch.float32 else "float64")
    assert abs(kept.double().mean().item() - 0.7) < 0.01       # 1.2e5 draws: sd 1.3e-3
    g = torch.randn(300, 400, dtype=dtype)
    y.backward(g)
    assert_close("dx", x.grad, g * kept / (1 - p), kind="grad",
                 dtype="float32" if dtype == torch.float32 else "float64")


def test_unrecorded_mode_and_bad_masks():
    torch.manual_seed(1)
    d = Dropout(0.5)
    set_record_masks(d, False)
    x = torch.randn(4, 6, dtype=torch.float64)
    y = d(x)
    assert d.last_mask is None and d.last_unrecorded
    assert torch.all((y == 0) | torch.isclose(y, 2 * x)) and (y == 0).any() and (y != 0).any()
    with pytest.raises(RuntimeError, match=r"\[''\] dropped without recording.*set_record_masks"):
        collect_dropout_masks(d)
    mask = torch.rand(4, 6) > 0.5
    d.replay(mask)                                 # a replay is honoured even when unrecorded
    assert torch.equal(d(x), x * mask / 0.5)
    assert torch.equal(collect_dropout_masks(d)[""], mask)
    d.eval()
    d(x)
    assert collect_dropout_masks(d) == {}          # eval: nothing dropped, nothing to collect
    d.train()
    with pytest.raises(TypeError, match="expected a bool numpy array or bool tensor"):
        d.replay(np.ones((4, 6)))
    d.replay(np.ones((4, 5), bool))
    with pytest.raises(ValueError, match=r"expected shape \(4, 6\) \(the input's\)"):
        d(x)
    with pytest.raises(ValueError, match="p: expected a float in"):
        Dropout(1.0)


def test_attention_dropout_replays_through_the_explicit_path():
    rng = np.random.default_rng(0)
    npm = np_attn.MultiHeadAttention(8, 2, dropout=0.4, dtype="float64", rng=rng)
    tm = to_torch(npm)
    assert not tm.need_weights
    q, kv = rng.standard_normal((2, 3, 8)), rng.standard_normal((2, 5, 8))
    out_np = npm(q, kv, kv)
    masks = np_collect(npm)
    assert set(masks) == {"attn_dropout"}
    replay_dropout_masks(tm, masks)
    out_t = tm(torch.as_tensor(q), torch.as_tensor(kv), torch.as_tensor(kv))
    assert tm.attn_weights is not None                          # explicit path was taken
    assert_close("output with replayed attention dropout", out_t, out_np)
    assert_close("weights (before dropout)", tm.attn_weights, npm.attn_weights)
    out_fast = tm(torch.as_tensor(q), torch.as_tensor(kv), torch.as_tensor(kv))   # SDPA dropout
    assert tm.attn_weights is None and tm.attn_dropout.last_mask is None
    assert tm.attn_dropout.last_unrecorded
    assert out_fast.shape == out_t.shape


def test_recorded_attention_dropout_takes_the_explicit_path_and_replays_into_npformer():
    rng = np.random.default_rng(1)
    npm = np_attn.MultiHeadAttention(8, 2, dropout=0.4, dtype="float64", rng=rng)
    tm = set_record_masks(to_torch(npm), True)
    q, kv = rng.standard_normal((2, 3, 8)), rng.standard_normal((2, 5, 8))
    torch.manual_seed(4)
    out_t = tm(torch.as_tensor(q), torch.as_tensor(kv), torch.as_tensor(kv))
    assert tm.attn_weights is not None                          # explicit path, mask kept
    masks = collect_dropout_masks(tm)
    assert set(masks) == {"attn_dropout"} and masks["attn_dropout"].shape == (2, 2, 3, 5)
    assert not masks["attn_dropout"].all() and masks["attn_dropout"].any()
    np_replay(npm, masks_to_numpy(masks))
    assert_close("output with torch's attention dropout mask", out_t, npm(q, kv, kv))


@pytest.mark.parametrize("direction", ["np_to_torch", "torch_to_np"])
def test_whole_model_masks_cross_between_twins(direction):
    c = small_config(dropout=0.3, attention_dropout=0.2, activation_dropout=0.25, final_norm=True)
    npm = np_tr.Transformer(c, seed=2)
    tm = set_record_masks(to_torch(npm), True)                  # attention masks recorded too
    src = np.array([[3, 4, 5, 0], [6, 7, 8, 9]])
    tgt = np.array([[1, 2, 3], [4, 5, 0]])
    ts, tt = torch.as_tensor(src), torch.as_tensor(tgt)
    if direction == "np_to_torch":
        ref = npm(src, tgt)
        masks = np_collect(npm)
        replay_dropout_masks(tm, masks)
        got = tm(ts, tt)
    else:
        torch.manual_seed(3)
        got = tm(ts, tt)
        masks = collect_dropout_masks(tm)
        np_replay(npm, masks_to_numpy(masks))
        ref = npm(src, tgt)
    names = {n for n, m in npm.named_modules() if isinstance(m, NpDropout)}
    assert set(masks) == names                                  # every Dropout drew a mask
    assert_close("logits", got, ref)


def test_collecting_after_an_unrecorded_forward_names_the_modules():
    c = small_config(dropout=0.1, attention_dropout=0.1, num_encoder_layers=1,
                     num_decoder_layers=1)
    tm = Transformer(c)
    for m in tm.modules():                  # models draw from their own generator (always recorded);
        if isinstance(m, Dropout):          # without one, dropout runs unrecorded
            m.rng = None
    tm(torch.tensor([[3, 4, 5]]), torch.tensor([[1, 2]]))
    with pytest.raises(RuntimeError, match=r"'src_dropout'.*'encoder\.layers\.0\.self_attn\."
                                           r"attn_dropout'.*set_record_masks\(model, True\)"):
        collect_dropout_masks(tm)


def test_replay_names_are_checked_before_anything_is_queued():
    c = small_config(dropout=0.1, num_encoder_layers=1, num_decoder_layers=1)
    tm = Transformer(c)
    good = {"src_dropout": torch.ones(1, 2, 16, dtype=torch.bool)}
    with pytest.raises(ValueError, match=r"unknown Dropout module names \['nope'\]"):
        replay_dropout_masks(tm, {**good, "nope": torch.ones(1, dtype=torch.bool)})
    assert not tm.src_dropout.replay_pending
    with pytest.raises(TypeError, match=r"masks\['src_dropout'\]"):
        replay_dropout_masks(tm, {"src_dropout": torch.ones(1, 2, 16)})


def _train_20_steps(seed: int):
    import torchformer.training.train as T
    from npformer.data.tasks import Task
    from npformer.training.train import TrainConfig
    task = Task("reverse", num_symbols=5, max_len=4)
    c = small_config(dropout=0.3, attention_dropout=0.2, activation_dropout=0.1, vocab_size=8,
                     max_len=6)
    model = Transformer(c, seed=seed)
    T.train(model, task, TrainConfig(steps=20, batch_size=4, warmup=5, seed=seed, progress=False))
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def test_seeded_dropout_runs_are_bit_identical_and_leave_the_global_rng_alone():
    torch.manual_seed(123)
    a = _train_20_steps(0)
    torch.manual_seed(456)                  # the global RNG must not matter
    b = _train_20_steps(0)
    for k in a:
        assert torch.equal(a[k], b[k]), k
    c = _train_20_steps(1)
    assert not all(torch.equal(a[k], c[k]) for k in a)
    torch.manual_seed(7)
    before = torch.get_rng_state()
    _train_20_steps(0)
    assert torch.equal(before, torch.get_rng_state())        # dropout never drew from it


def test_the_mask_tooling_is_public_under_torchformer():
    import torchformer
    import torchformer.checks.dropout_masks as tooling
    for name in ("set_record_masks", "collect_dropout_masks", "replay_dropout_masks"):
        assert getattr(torchformer, name) is getattr(tooling, name)
        assert name in torchformer.__all__

