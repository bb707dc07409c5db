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


def linear_pair():
    return nf.Linear(3, 2), tf.Linear(3, 2)


OPTIMIZER_CASES = {
    "SGD lr nan": ("SGD", {"lr": float("nan")}, "SGD: lr: expected a float >= 0, got nan"),
    "SGD lr inf": ("SGD", {"lr": float("inf")}, "SGD: lr: expected a float >= 0, got inf"),
    "SGD lr text": ("SGD", {"lr": "1e-3"}, "SGD: lr: expected a float >= 0, got '1e-3'"),
    "SGD weight_decay nan": ("SGD", {"lr": 0.1, "weight_decay": float("nan")},
                             "SGD: weight_decay: expected a float >= 0, got nan"),
    "Adam lr inf": ("Adam", {"lr": float("inf")}, "Adam: lr: expected a float >= 0, got inf"),
    "Adam three betas": ("Adam", {"lr": 0.1, "betas": (0.9, 0.9, 0.9)},
                         "Adam: betas: expected a pair of floats in [0, 1), got (0.9, 0.9, 0.9)"),
    "Adam one beta": ("Adam", {"lr": 0.1, "betas": 0.9},
                      "Adam: betas: expected a pair of floats in [0, 1), got 0.9"),
    "AdamW beta 1": ("AdamW", {"lr": 0.1, "betas": (1.0, 0.9)},
                     "AdamW: betas: expected a pair of floats in [0, 1), got (1.0, 0.9)"),
    "AdamW eps negative": ("AdamW", {"lr": 0.1, "eps": -1.0}, "AdamW: eps: expected a float >= 0, got -1.0"),
}


@pytest.mark.parametrize("case", list(OPTIMIZER_CASES), ids=list(OPTIMIZER_CASES))
def test_optimizer_hyper_parameters_are_refused_alike(case):
    kind, hyper, message = OPTIMIZER_CASES[case]
    npm, tfm = linear_pair()
    same_error(lambda: getattr(nf, kind)(npm.named_parameters(), **hyper),
               lambda: getattr(tf, kind)(tfm.parameters(), **hyper), message)


@pytest.mark.parametrize("kind", ["SGD", "Adam", "AdamW"])
def test_optimizer_parameter_lists_are_checked_alike(kind):
    npm, tfm = linear_pair()
    twice_np = [npm.weight, npm.bias, npm.weight]
    twice_tf = [tfm.weight, tfm.bias, tfm.weight]
    same_error(lambda: getattr(nf, kind)(twice_np, lr=0.1), lambda: getattr(tf, kind)(twice_tf, lr=0.1),
               f"{kind}: the same Parameter appears twice in params")
    e_np, e_tf = error_of(lambda: getattr(nf, kind)([], lr=0.1)), error_of(lambda: getattr(tf, kind)([], lr=0.1))
    assert e_np[0] is e_tf[0] is ValueError
    assert e_np[1].startswith(f"{kind}: params is empty; expected model.")
    assert e_tf[1].startswith(f"{kind}: params is empty; expected model.")
    opt = getattr(tf, kind)(tfm, lr=0.1)                     # a model stands for its parameters, as in npformer
    assert [id(p) for p in opt.param_groups[0]["params"]] == [id(tfm.weight), id(tfm.bias)]
    assert isinstance(opt, getattr(torch.optim, kind))


def test_torchformer_optimizers_update_as_torch_optim_does():
    torch.manual_seed(0)
    a, b = tf.Linear(3, 2), tf.Linear(3, 2)
    b.load_state_dict(a.state_dict())
    mine = tf.AdamW(a.parameters(), lr=0.1, betas=(0.8, 0.9), weight_decay=0.1, amsgrad=True)
    ref = torch.optim.AdamW(b.parameters(), lr=0.1, betas=(0.8, 0.9), weight_decay=0.1, amsgrad=True)
    x = torch.randn(4, 3)
    for _ in range(3):
        for m, o in ((a, mine), (b, ref)):
            o.zero_grad()
            (m(x) * torch.arange(8.0).reshape(4, 2)).sum().backward()
            o.step()
    assert torch.equal(a.weight, b.weight) and torch.equal(a.bias, b.bias)


CFG = nf.TransformerConfig(d_model=8, num_heads=2, d_ff=16, num_encoder_layers=1, num_decoder_layers=1,
                           vocab_size=11, max_len=6, dropout=0.0)
F32 = np.float32


def rand(*shape):
    return np.random.default_rng(1).standard_normal(shape).astype(F32)


NO_KEYS = {   # name: (npformer call, torchformer call given the converter t, the expected message start)
    "attention over an empty key": (
        lambda t, tw: tw.MultiHeadAttention(8, 2)(t(rand(2, 3, 8)), t(rand(2, 0, 8)), t(rand(2, 0, 8))),
        "key: expected at least one position to attend to (length >= 1 along axis 1), got shape (2, 0, 8)"),
    "sdpa with no keys": (
        lambda t, tw: (nf.sdpa_forward if tw is nf else tf.scaled_dot_product_attention)(
            t(rand(1, 2, 3, 4)), t(rand(1, 2, 0, 4)), t(rand(1, 2, 0, 4))),
        "k: expected at least one position to attend to (length >= 1 along axis 2), got shape (1, 2, 0, 4)"),
    "encoder layer on an empty sequence": (
        lambda t, tw: tw.EncoderLayer(CFG)(t(rand(1, 0, 8))),
        "x: expected at least one position to attend to (length >= 1 along axis 1), got shape (1, 0, 8)"),
    "decoder on an empty sequence": (
        lambda t, tw: tw.Decoder(CFG)(t(rand(1, 0, 8)), t(rand(1, 2, 8))),
        "x: expected at least one position to attend to (length >= 1 along axis 1), got shape (1, 0, 8)"),
    "decoder layer on an empty memory": (
        lambda t, tw: tw.DecoderLayer(CFG)(t(rand(1, 2, 8)), t(rand(1, 0, 8))),
        "memory: expected at least one position to attend to (length >= 1 along axis 1), got shape (1, 0, 8)"),
    "Transformer.decode on an empty memory": (
        lambda t, tw: tw.Transformer(CFG).decode(t(np.array([[1, 5]])), t(rand(1, 0, 8))),
        "memory: expected at least one position to attend to (length >= 1 along axis 1), got shape (1, 0, 8)"),
}


@pytest.mark.parametrize("case", list(NO_KEYS), ids=list(NO_KEYS))
def test_attention_over_no_keys_is_refused_alike(case):
    call, message = NO_KEYS[case]
    same_error(lambda: call(lambda a: a, nf), lambda: call(torch.from_numpy, tf), message)


def test_queries_of_length_zero_over_real_keys_still_run_in_both():
    out_np = nf.MultiHeadAttention(8, 2)(rand(2, 0, 8), rand(2, 4, 8), rand(2, 4, 8))
    out_tf = tf.MultiHeadAttention(8, 2)(torch.from_numpy(rand(2, 0, 8)), torch.from_numpy(rand(2, 4, 8)),
                                         torch.from_numpy(rand(2, 4, 8)))
    assert out_np.shape == tuple(out_tf.shape) == (2, 0, 8)


@pytest.mark.parametrize("scale", [float("nan"), float("inf")])
def test_embedding_scale_must_be_finite_in_both(scale):
    for tw in (nf, tf):
        with pytest.raises(ValueError, match=f"^Embedding: scale: expected a finite float, got {scale!r}$"):
            tw.Embedding(5, 4, scale=scale)
    for tw in (nf, tf):
        with pytest.raises(TypeError, match="^Embedding: scale: expected a finite float, got str$"):
            tw.Embedding(5, 4, scale="2")


def test_layer_norm_eps_must_be_finite_in_both():
    for tw in (nf, tf):
        with pytest.raises(ValueError, match="^LayerNorm: eps: expected a positive finite float, got inf$"):
            tw.LayerNorm(4, eps=float("inf"))


@pytest.mark.parametrize("caches, error, message", [
    ([None], TypeError, "caches[0]: expected a dict {'self': {...}, 'cross': {...}} (one per layer; {} to start), "
                        "got NoneType"),
    ([[]], TypeError, "caches[0]: expected a dict"),
    ("caches", TypeError, "caches: expected None or a list of 1 dicts (one per layer), got str"),
    ([{}, {}], ValueError, "caches: expected a list of 1 dicts (one per layer), got 2"),
])
def test_incremental_caches_that_are_not_one_dict_per_layer_are_refused_alike(caches, error, message):
    ids = np.array([[1, 5]])
    for call in (lambda: nf.CausalLM(CFG)(ids, caches=caches),
                 lambda: tf.CausalLM(CFG).eval()(torch.from_numpy(ids), caches=caches),
                 lambda: nf.Transformer(CFG).decode(ids, rand(1, 2, 8), caches=caches),
                 lambda: tf.Transformer(CFG).eval().decode(torch.from_numpy(ids), torch.from_numpy(rand(1, 2, 8)),
                                                           caches=caches)):
        with pytest.raises(error) as e:
            call()
        assert str(e.value) == message or message in str(e.value), str(e.value)


@pytest.mark.parametrize("build", [
    lambda tw: tw.Linear(4, 2, bias="no"),
    lambda tw: tw.MultiHeadAttention(8, 2, bias="no"),
    lambda tw: tw.PositionwiseFeedForward(8, 16, bias="no"),
    lambda tw: tw.Linear(4, 2, bias=0),
])
def test_a_bias_switch_that_is_not_a_bool_is_refused_alike(build):
    """'no' is truthy: the layer used to get a bias the caller had switched off."""
    e_np, e_tf = error_of(lambda: build(nf)), error_of(lambda: build(tf))
    assert e_np == e_tf and e_np[0] is TypeError and e_np[1].startswith("bias: expected a bool, got "), (e_np, e_tf)
    for tw in (nf, tf):
        assert build_without_bias(tw).bias is None


def build_without_bias(tw):
    return tw.Linear(4, 2, bias=False)


@pytest.mark.parametrize("kind", ["SGD", "Adam", "AdamW"])
def test_a_step_on_a_nan_gradient_is_refused_alike_and_changes_nothing(kind):
    npm, tfm = linear_pair()
    tfm.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in npm.state_dict().items()})
    np_opt = getattr(nf, kind)([npm.weight, npm.bias], lr=0.1)
    tf_opt = getattr(tf, kind)([tfm.weight, tfm.bias], lr=0.1)
    grad_w = np.ones((2, 3), np.float32)
    grad_b = np.array([0.5, np.inf], np.float32)
    npm.weight.grad, npm.bias.grad = grad_w.copy(), grad_b.copy()
    tfm.weight.grad, tfm.bias.grad = torch.from_numpy(grad_w.copy()), torch.from_numpy(grad_b.copy())
    before = np.array(npm.weight.data, copy=True)
    same_error(np_opt.step, tf_opt.step, f"{kind}.step: parameter '1': expected a finite gradient, got 1 "
                                         f"NaN/inf entries of 2; nothing was updated")
    assert np.array_equal(npm.weight.data, before)                             # not even the finite one
    assert np.array_equal(tfm.weight.detach().numpy(), before)
    npm.bias.grad[1] = tfm.bias.grad[1] = 0.25
    np_opt.step()
    tf_opt.step()
    np.testing.assert_allclose(npm.weight.data, tfm.weight.detach().numpy(), rtol=1e-6, atol=1e-7)
    assert not np.array_equal(npm.weight.data, before)


def test_a_torchformer_step_with_a_closure_runs_as_torch_runs_it():
    m = tf.Linear(3, 2)
    opt = tf.SGD(m.parameters(), lr=0.1)
    x = torch.ones(1, 3)

    def closure():
        opt.zero_grad()
        loss = m(x).sum()
        loss.backward()
        return loss
    assert torch.isfinite(opt.step(closure))


@pytest.mark.parametrize("call, message", [
    (lambda tw, t: tw.Transformer(CFG)(t(np.array([[1, 2]]))),
     "Transformer.forward: missing a required argument: 'tgt'; expected Transformer.forward(src, tgt, "
     "src_mask=None, tgt_mask=None)"),
    (lambda tw, t: tw.Linear(4), "Linear: missing a required argument: 'out_features'; expected "
                                 "Linear(in_features, out_features, bias=True, dtype='float32', rng=None"),
    (lambda tw, t: tw.Linear(4, 2)(t(rand(1, 4)), t(rand(1, 4))),
     "Linear.forward: too many positional arguments; expected Linear.forward(x)"),
    (lambda tw, t: tw.CausalLM(CFG)(t(np.array([[1, 2]])), attention_mask=None),
     "CausalLM.forward: got an unexpected keyword argument 'attention_mask'; expected "
     "CausalLM.forward(ids, mask=None, caches=None, offset=0"),
])
def test_calls_with_missing_or_extra_arguments_name_the_users_call(call, message):
    """Python's own words named the internal check function ('transformer_call() missing 1 required
    positional argument')."""
    for tw, t in ((nf, lambda a: a), (tf, torch.from_numpy)):
        with pytest.raises(TypeError) as e:
            call(tw, t)
        assert str(e.value).startswith(message), str(e.value)


def test_a_backward_without_its_gradient_names_the_argument():
    layer = nf.Linear(4, 2)
    layer(rand(1, 4))
    with pytest.raises(TypeError, match=r"^Linear\.backward: missing a required argument: 'dout'; "
                                        r"expected Linear\.backward\(dout\)$"):
        layer.backward()


@pytest.mark.parametrize("given, got", [(None, "NoneType"), ("adam", "str")])
def test_a_schedule_without_an_optimizer_is_refused_alike(given, got):
    """torchformer's said "'NoneType' object has no attribute 'param_groups'" from inside LambdaLR."""
    for tw, expected in ((nf, "an npformer Optimizer"), (tf, "a torch.optim optimizer")):
        with pytest.raises(TypeError, match=f"^WarmupSchedule: optimizer: expected {expected}, got {got}$"):
            tw.WarmupSchedule(given, d_model=8, warmup_steps=4)
    other = nf.Adam(nf.Linear(2, 2).named_parameters())
    with pytest.raises(TypeError, match="^WarmupSchedule: optimizer: expected a torch.optim optimizer, got Adam$"):
        tf.WarmupSchedule(other, d_model=8, warmup_steps=4)


def test_masks_that_do_not_broadcast_together_are_listed_alike():
    a, b = np.ones((2, 1, 1, 3), bool), np.ones((1, 1, 4, 4), bool)
    same_error(lambda: nf.combine_masks(a, None, b),
               lambda: tf.combine_masks(torch.from_numpy(a), None, torch.from_numpy(b)),
               "masks: expected shapes that broadcast together, got [(2, 1, 1, 3), (1, 1, 4, 4)]")
    assert tuple(tf.combine_masks(torch.from_numpy(a), torch.ones(1, 1, 4, 1, dtype=torch.bool)).shape) \
        == nf.combine_masks(a, np.ones((1, 1, 4, 1), bool)).shape == (2, 1, 4, 3)


@pytest.mark.parametrize("kind", ["SinusoidalPositionalEncoding", "LearnedPositionalEncoding"])
@pytest.mark.parametrize("length, offset, name", [(6, 0, "x"), (3, 3, "offset + x.shape[1]")])
def test_positions_past_max_len_are_named_alike(kind, length, offset, name):
    x = rand(1, length, 8)
    same_error(lambda: getattr(nf, kind)(8, 5)(x, offset=offset),
               lambda: getattr(tf, kind)(8, 5)(torch.from_numpy(x), offset=offset),
               f"{name}: expected a sequence length <= max_len=5, got 6")


def test_attention_takes_numpy_integer_sizes_as_linear_does():
    """A size read from an array (np.int64) was 'expected a positive int, got np.int64(8)' for
    MultiHeadAttention only; Linear, LayerNorm and the config take it."""
    x = rand(1, 3, 8)
    out_np = nf.MultiHeadAttention(np.int64(8), np.int64(2))(x, x, x)
    t = torch.from_numpy(x)
    out_tf = tf.MultiHeadAttention(np.int64(8), np.int64(2))(t, t, t)
    assert out_np.shape == tuple(out_tf.shape) == (1, 3, 8)
    same_error(lambda: nf.MultiHeadAttention(np.int64(0), 2), lambda: tf.MultiHeadAttention(np.int64(0), 2),
               "MultiHeadAttention: d_model: expected a positive int, got np.int64(0)")


@pytest.mark.parametrize("bos_id", [99, -1, 1.0])
def test_a_decoder_start_token_outside_the_vocabulary_is_refused_alike(bos_id):
    """torchformer raised torch's 'IndexError: index out of range in self' from its embedding, and
    npformer blamed `tgt`, an argument the caller never gave."""
    src = np.array([[3, 2]])
    same_error(lambda: nf.greedy_decode(nf.Transformer(CFG), src, max_new_tokens=2, bos_id=bos_id),
               lambda: tf.greedy_decode(tf.Transformer(CFG), torch.from_numpy(src), max_new_tokens=2,
                                        bos_id=bos_id),
               f"bos_id: expected a token id in [0, 11) (the target vocabulary), got {bos_id!r}")


def test_beam_early_stopping_must_be_a_bool_in_both():
    src = np.array([[3, 2]])
    same_error(lambda: nf.beam_search(nf.Transformer(CFG), src, beam_size=2, max_new_tokens=2, early_stopping="no"),
               lambda: tf.beam_search(tf.Transformer(CFG), torch.from_numpy(src), beam_size=2, max_new_tokens=2,
                                      early_stopping="no"),
               "early_stopping: expected a bool, got 'no'")
