"""torchformer models: state_dict keys and parameter counts equal npformer's, the bridge (weights,
ties, dtype, mode, gradients), model-level agreement with npformer (a few fixed cases; the Hypothesis
suite lives in parity_tests), the loss twin, autocast, CUDA when present."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import npformer.layers.loss as np_loss
import npformer.models.causal_lm as np_lm
import npformer.models.classifier as np_cls
import npformer.models.transformer as np_tr
from npformer.checks.dropout_masks import collect_dropout_masks as np_collect
from npformer.layers.positional import sinusoidal_table as np_table
from tests.torchformer.helpers import assert_close, assert_grads_close, small_config
from torchformer.checks.dropout_masks import replay_dropout_masks
from torchformer.layers.attention import set_need_weights
from torchformer.layers.loss import CrossEntropyLoss
from torchformer.layers.positional import sinusoidal_table
from torchformer.models.bridge import copy_grads_to_numpy, grads_by_name, to_numpy, to_torch
from torchformer.models.causal_lm import CausalLM
from torchformer.models.classifier import EncoderClassifier
from torchformer.models.transformer import Transformer

TWINS = {"Transformer": (np_tr.Transformer, Transformer),
         "EncoderClassifier": (np_cls.EncoderClassifier, EncoderClassifier),
         "CausalLM": (np_lm.CausalLM, CausalLM)}
CONFIGS = {
    "paper": {},
    "gpt": dict(norm_first=True, final_norm=True, activation="gelu_tanh", positional="learned",
                scale_embeddings=False, tie_embeddings=True),
    "shared": dict(share_embeddings=True, tie_embeddings=True, pooling="mean"),
    "bias_free": dict(bias=False, output_bias=False, pad_id=None),
    "sizes": dict(src_vocab_size=13, tgt_vocab_size=9, num_encoder_layers=1, num_decoder_layers=3,
                  num_heads=1),
    "empty_stacks": dict(num_encoder_layers=0, num_decoder_layers=0, final_norm=True),
}


def _np_model(name, config, seed=0):
    return TWINS[name][0](config, seed=seed)


def _inputs(name, rng, B=3, S=6, T=5, config=None):
    c = config
    src = rng.integers(1, c.src_vocab if name == "Transformer" else c.vocab_size, (B, S))
    tgt = rng.integers(1, c.tgt_vocab if name == "Transformer" else c.vocab_size, (B, T))
    if c.pad_id is not None:
        src[0, -2:] = c.pad_id
        tgt[1, -1:] = c.pad_id
    return {"Transformer": (src, tgt), "EncoderClassifier": (src,), "CausalLM": (tgt,)}[name]


# ------------------------------------------------------------------------------------------------
# names, counts, init
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("cfg", sorted(CONFIGS))
@pytest.mark.parametrize("name", sorted(TWINS))
def test_state_dict_keys_and_counts_equal_npformers(name, cfg):
    c = small_config(**CONFIGS[cfg])
    npm, tm = _np_model(name, c), TWINS[name][1](c)
    assert set(tm.state_dict()) == set(npm.state_dict())
    assert len(tm.state_dict()) == len(npm.state_dict())
    assert [n for n, _ in tm.named_parameters()] == [n for n, _ in npm.named_parameters()]
    assert tm.num_parameters() == npm.num_parameters()
    for k, v in npm.state_dict().items():
        assert tuple(tm.state_dict()[k].shape) == v.shape, k
        assert tm.state_dict()[k].dtype == torch.float64, k


def test_keys_match_the_architecture_contract():
    """The key list written out from docs/ARCHITECTURE.md for a one-layer CausalLM."""
    c = small_config(num_decoder_layers=1, positional="learned", final_norm=True,
                     tie_embeddings=True)
    layer = ["self_attn.q_proj.weight", "self_attn.q_proj.bias", "self_attn.k_proj.weight",
             "self_attn.k_proj.bias", "self_attn.v_proj.weight", "self_attn.v_proj.bias",
             "self_attn.out_proj.weight", "self_attn.out_proj.bias", "norm1.weight", "norm1.bias",
             "feed_forward.linear1.weight", "feed_forward.linear1.bias",
             "feed_forward.linear2.weight", "feed_forward.linear2.bias", "norm2.weight",
             "norm2.bias"]
    expected = (["tgt_embed.weight", "tgt_pos.weight"] + [f"decoder.layers.0.{k}" for k in layer]
                + ["decoder.norm.weight", "decoder.norm.bias", "output_proj.weight",
                   "output_proj.bias"])
    assert list(CausalLM(c).state_dict()) == expected


def test_num_parameters_counts_tied_weights_once():
    c = small_config(num_decoder_layers=1, tie_embeddings=True)
    V, D, F_ = c.vocab_size, c.d_model, c.d_ff
    layer = 4 * (D * D + D) + 2 * 2 * D + (D * F_ + F_) + (F_ * D + D)
    assert CausalLM(c).num_parameters() == V * D + layer + V       # embedding once, output bias V
    m = CausalLM(c)
    assert m.output_proj.weight is m.tgt_embed.weight


@pytest.mark.parametrize("name", sorted(TWINS))
def test_same_seed_gives_npformers_initial_weights(name):
    c = small_config(positional="learned", tie_embeddings=True, share_embeddings=True)
    npm, tm = _np_model(name, c, seed=4), TWINS[name][1](c, seed=4)
    for k, v in npm.state_dict().items():
        assert np.array_equal(tm.state_dict()[k].numpy(), v), k


@pytest.mark.parametrize("L,D", [(7, 6), (5, 5), (33, 16), (1, 1)])
def test_sinusoidal_table_equals_npformers(L, D):
    assert np.array_equal(sinusoidal_table(L, D, "float64").numpy(), np_table(L, D, "float64"))
    assert np.array_equal(sinusoidal_table(L, D, "float32").numpy(), np_table(L, D, "float32"))
    t = sinusoidal_table(L, D, "float64").numpy()
    assert t[0, 0] == 0.0 and (D < 2 or t[0, 1] == 1.0)            # sin(0), cos(0)


# ------------------------------------------------------------------------------------------------
# bridge
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(TWINS))
def test_bridge_round_trip_dtype_ties_and_mode(name):
    c = small_config(tie_embeddings=True, share_embeddings=True, positional="learned")
    npm = _np_model(name, c, seed=1)
    for p in npm.parameters():
        p.data += np.random.default_rng(2).standard_normal(p.data.shape) * 0.1
    npm.eval()
    tm = to_torch(npm)
    assert not tm.training and type(tm).__name__ == name
    for k, v in npm.state_dict().items():
        assert np.array_equal(tm.state_dict()[k].numpy(), v), k
    if name != "EncoderClassifier":
        assert tm.output_proj.weight is tm.tgt_embed.weight
    t32 = to_torch(npm, dtype="float32")
    assert all(p.dtype == torch.float32 for p in t32.parameters())
    assert t32.config.dtype == "float32"
    back = to_numpy(tm)
    assert type(back).__name__ == name and not back.training
    for k, v in npm.state_dict().items():
        assert np.array_equal(back.state_dict()[k], v), k
    if name != "EncoderClassifier":
        assert back.output_proj.weight is back.tgt_embed.weight


def test_bridge_components():
    from npformer.layers.attention import MultiHeadAttention as NpMHA
    from npformer.layers.feedforward import PositionwiseFeedForward as NpFFN
    from npformer.layers.layernorm import LayerNorm as NpLN
    rng = np.random.default_rng(0)
    for npm in (NpMHA(8, 2, dropout=0.1, bias=False, dtype="float64", rng=rng),
                NpFFN(8, 12, "gelu", 0.2, True, "float32", rng), NpLN(8, 1e-6, "float64")):
        tm = to_torch(npm)
        assert type(tm).__name__ == type(npm).__name__
        assert set(tm.state_dict()) == set(npm.state_dict())
        back = to_numpy(tm)
        for k, v in npm.state_dict().items():
            assert np.array_equal(back.state_dict()[k], v) and back.state_dict()[k].dtype == v.dtype
    with pytest.raises(TypeError, match="np_model: expected an npformer module"):
        to_torch(tm)


@pytest.mark.parametrize("path", ["explicit", "fast"])
@pytest.mark.parametrize("train", [False, True])
@pytest.mark.parametrize("name", sorted(TWINS))
def test_models_agree_with_npformer_forward_loss_and_backward(name, train, path):
    """explicit: every attention's weights are compared too; fast: F.scaled_dot_product_attention
    (in training the replayed attention-dropout masks still send attention down the explicit
    path; the sublayer dropouts replay on the fast path)."""
    c = small_config(dropout=0.2, attention_dropout=0.1, activation_dropout=0.1, pooling="mean",
                     tie_embeddings=name != "EncoderClassifier", final_norm=True)
    rng = np.random.default_rng(7)
    npm = _np_model(name, c, seed=3)
    for p in npm.parameters():
        p.data += rng.standard_normal(p.data.shape) * 0.2
    npm.train(train)
    tm = to_torch(npm)
    set_need_weights(tm, path == "explicit")           # attention weights compared below
    inputs = _inputs(name, rng, config=c)
    y = npm(*inputs)
    targets = rng.integers(0, y.shape[-1], y.shape[:-1])
    if name != "EncoderClassifier":
        targets[0, 0] = c.pad_id                      # ignored
    loss_np = np_loss.CrossEntropyLoss(ignore_index=c.pad_id, label_smoothing=0.1)
    lval = loss_np(y, targets)
    d = npm.backward(loss_np.backward())
    if train:
        replay_dropout_masks(tm, np_collect(npm))
    yt = tm(*[torch.as_tensor(a) for a in inputs])
    lt = CrossEntropyLoss(ignore_index=c.pad_id, label_smoothing=0.1)(yt, torch.as_tensor(targets))
    lt.backward()
    assert_close("logits", yt, y)
    assert_close("loss", lt, lval)
    for k, v in d.items():
        assert_close(k, getattr(tm, k).grad, v, kind="grad")
    assert_grads_close(grads_by_name(tm), grads_by_name(npm))
    for (n, m), (n2, m2) in zip(npm.named_modules(), tm.named_modules()):
        if hasattr(m, "attn_weights"):
            assert n == n2
            if path == "fast" and not train:
                assert m2.attn_weights is None, n                 # SDPA really ran
            else:
                assert_close(f"{n}.attn_weights", m2.attn_weights, m.attn_weights)


def test_copy_grads_to_numpy():
    c = small_config(tie_embeddings=True)
    tm = CausalLM(c)
    out = tm(torch.tensor([[1, 2, 3]]))
    out.backward(torch.randn(out.shape, dtype=torch.float64))
    npm = _np_model("CausalLM", c)
    copy_grads_to_numpy(tm, npm)
    for n, g in grads_by_name(npm).items():
        assert np.array_equal(g, tm.get_parameter(n).grad.numpy()), n
    untied = CausalLM(small_config())
    out = untied(torch.tensor([[0, 2, 3]]))
    out.backward(torch.randn(out.shape, dtype=torch.float64))
    assert torch.all(untied.tgt_embed.weight.grad[0] == 0)      # pad row: no gradient
    assert torch.any(untied.tgt_embed.weight.grad[2] != 0)


# ------------------------------------------------------------------------------------------------
# loss, pooling
# ------------------------------------------------------------------------------------------------
def test_loss_matches_torch_definition_and_rejects_all_ignored():
    gen = torch.Generator().manual_seed(0)
    logits = torch.randn(2, 3, 5, generator=gen, dtype=torch.float64)
    targets = torch.tensor([[1, -100, 4], [0, 2, -100]])
    ours = CrossEntropyLoss(label_smoothing=0.2)(logits, targets)
    # the definition, written out: mean over counted rows of (1-eps)*nll + eps*mean_c(-log p)
    logp = torch.log_softmax(logits, -1).reshape(-1, 5)
    t = targets.reshape(-1)
    rows = [(0.8 * -logp[i, t[i]] + 0.2 * -logp[i].mean()) for i in range(6) if t[i] != -100]
    assert_close("loss", ours, torch.stack(rows).mean())
    assert_close("F.cross_entropy", ours, F.cross_entropy(logits.reshape(-1, 5), t,
                                                          label_smoothing=0.2))
    with pytest.raises(ValueError, match="every target equals ignore_index"):
        CrossEntropyLoss()(logits, torch.full((2, 3), -100))
    with pytest.raises(ValueError, match=r"targets: expected class indices in \[0, 5\)"):
        CrossEntropyLoss()(logits, torch.full((2, 3), 5))
    with pytest.raises(ValueError, match="targets: expected shape"):
        CrossEntropyLoss()(logits, torch.zeros(6, dtype=torch.long))


def test_mean_pooling_skips_padding_and_all_pad_rows_pool_to_zero():
    c = small_config(pooling="mean", num_encoder_layers=1)
    m = EncoderClassifier(c).eval()
    src = torch.tensor([[3, 4, 0, 0], [0, 0, 0, 0]])
    h = m.encoder(m.src_pos(m.src_embed(src)), (src != 0)[:, None, None, :])
    pooled = m.pool(h, src)
    assert_close("mean over kept", pooled[0], h[0, :2].mean(0))
    assert torch.all(pooled[1] == 0)


# ------------------------------------------------------------------------------------------------
# autocast and devices
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("need_weights", [False, True])
def test_cpu_bf16_autocast_runs_and_stays_close(need_weights):
    c = small_config(dtype="float32", norm_first=True, final_norm=True, tie_embeddings=True)
    m = Transformer(c, seed=1)
    set_need_weights(m, need_weights)
    src, tgt = torch.tensor([[5, 6, 7, 0], [1, 2, 3, 4]]), torch.tensor([[1, 2, 0], [4, 5, 6]])
    ref = m(src, tgt).detach()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = m(src, tgt)
        loss = CrossEntropyLoss(ignore_index=0)(out, tgt)
    loss.backward()
    assert torch.isfinite(out.float()).all() and torch.isfinite(loss)
    assert all(torch.isfinite(p.grad).all() for p in m.parameters() if p.grad is not None)
    # bf16 keeps 8 bits of mantissa: agreement to ~1e-2 relative of the logits' scale
    assert (out.float() - ref).abs().max() < 0.05 * ref.abs().max()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
@pytest.mark.parametrize("name", sorted(TWINS))
def test_cuda_matches_cpu_and_autocast_runs(name):
    c = small_config(final_norm=True, pooling="mean")
    npm = _np_model(name, c, seed=2)
    cpu, gpu = to_torch(npm), to_torch(npm, device="cuda")
    inputs = _inputs(name, np.random.default_rng(0), config=c)
    a = cpu(*[torch.as_tensor(x) for x in inputs])
    b = gpu(*[torch.as_tensor(x).cuda() for x in inputs])
    assert_close("cuda vs cpu", b.cpu(), a, scale=100)          # different kernels, float64
    g32 = to_torch(npm, device="cuda", dtype="float32")
    for dt in (torch.float16, torch.bfloat16):
        for nw in (False, True):
            set_need_weights(g32, nw)
            with torch.autocast("cuda", dtype=dt):
                out = g32(*[torch.as_tensor(x).cuda() for x in inputs])
            out.backward(torch.randn_like(out))
            assert torch.isfinite(out.float()).all()
