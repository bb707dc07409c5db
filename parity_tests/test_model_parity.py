"""Whole models (Transformer, EncoderClassifier, CausalLM), npformer vs torchformer: every module
output by dotted name, every layer's per-head attention weights (self and cross), logits, the loss
(ignore_index = pad, label smoothing), encoder_input/decoder_input gradients and every parameter
gradient; masks built by the model from pad_id or passed explicitly (fully masked rows included);
dropout off (eval) and on (training, npformer's masks replayed into torchformer)."""
import importlib

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from parity_tests.harness import note_case
from parity_tests.harness import strategies as S
from parity_tests.harness.parity import check_parity
from parity_tests.harness.profiles import scaled
from parity_tests.harness.twins import twins
from parity_tests.harness.weights import perturb_parameters

CLASSES = {"transformer": "transformer.Transformer", "classifier": "classifier.EncoderClassifier",
           "causal_lm": "causal_lm.CausalLM"}
INPUTS = {"transformer": ("encoder_input", "decoder_input"), "classifier": ("encoder_input",),
          "causal_lm": ("decoder_input",)}


def skip_attn_dropout(name: str) -> bool:
    # torchformer's MHA applies the attn_dropout mask inside its attention function without calling
    # the module: nothing is recorded under "<mha>.attn_dropout" on the torch side. The same numbers
    # are compared through the MHA output, attn_weights and every gradient.
    return name.endswith("attn_dropout")


def _explicit_masks(data, model, cfg, inp):
    """Masks passed by the caller instead of built from pad_id: a random key mask over the source
    (broadcast to every query, so it also masks the memory) and a random target self-mask."""
    masks = {}
    if model in ("transformer", "classifier"):
        b, s = inp.src.shape
        keep = data.draw(S.paddings(b, s, allow_empty_rows=True, patterns=("scattered",)),
                         label="src_mask")
        masks["src_mask"] = S.key_padding_keep(keep.keep)                        # (B,1,1,S)
    if model in ("transformer", "causal_lm"):
        b, t = inp.tgt.shape
        m = data.draw(S.attention_masks(b, cfg.num_heads, t, t,
                                        kinds=("causal", "causal_padding", "random", "none")),
                      label="tgt_mask")
        masks["tgt_mask" if model == "transformer" else "mask"] = m.keep
    return masks


def _targets(rng, model, cfg, inp):
    if model == "classifier":
        return rng.integers(0, cfg.num_classes, size=(inp.src.shape[0],)).astype(np.int64)
    t = rng.integers(0, cfg.tgt_vocab, size=inp.tgt.shape).astype(np.int64)
    if cfg.pad_id is not None:
        t = np.where(inp.tgt_pad.keep, t, cfg.pad_id)   # padded positions are ignored
        t[:, 0] = np.where(t[:, 0] == cfg.pad_id, (cfg.pad_id + 1) % cfg.tgt_vocab, t[:, 0])
    return t


def run_model(data, model, *, dropout, explicit_masks, with_loss, empty_rows=False,
              force_empty_source_row=False, **fixed):
    cfg = data.draw(S.configs(model, dropout=dropout, **fixed), label="config")
    inp = data.draw(S.model_inputs(cfg, model, allow_empty_rows=empty_rows), label="inputs")
    if force_empty_source_row:            # the first source sequence is all padding
        inp.src[0] = cfg.pad_id
        inp.src_pad.keep[0] = False
    seed = inp.seed
    rng = np.random.default_rng(seed)
    a, t = twins(CLASSES[model], cfg, seed=seed % 2**31)
    perturb_parameters(a, rng)
    args = {"transformer": (inp.src, inp.tgt), "classifier": (inp.src,),
            "causal_lm": (inp.tgt,)}[model]
    kwargs = _explicit_masks(data, model, cfg, inp) if explicit_masks else {}
    loss = None
    if with_loss:
        from npformer.layers.loss import CrossEntropyLoss as NpCE
        from torchformer.layers.loss import CrossEntropyLoss as TCE

        ignore = cfg.pad_id if (cfg.pad_id is not None and model != "classifier") else -100
        smoothing = data.draw(st.sampled_from((0.0, 0.1)), label="label_smoothing")
        loss = (NpCE(ignore, smoothing), TCE(ignore, smoothing), _targets(rng, model, cfg, inp))
    note_case(model=model, config=cfg, ids=args, masks=sorted(kwargs), dropout=dropout,
              loss=with_loss, seed=seed)
    names = INPUTS[model]
    check_parity(a, t, args, kwargs, dtype=cfg.dtype, seed=seed, input_names=names,
                 input_grads=lambda m: {n: getattr(m, n) for n in names}, loss=loss,
                 train=dropout, skip=skip_attn_dropout)


MODELS = st.sampled_from(tuple(CLASSES))


@settings(max_examples=scaled(20))
@given(data=st.data(), model=MODELS)
def test_model_eval_built_masks(data, model):
    run_model(data, model, dropout=False, explicit_masks=False, with_loss=False)


@settings(max_examples=scaled(20))
@given(data=st.data(), model=MODELS)
def test_model_training_replayed_dropout_with_loss(data, model):
    run_model(data, model, dropout=True, explicit_masks=False, with_loss=True)


@settings(max_examples=scaled(15))
@given(data=st.data(), model=MODELS)
def test_model_explicit_masks_and_fully_masked_rows(data, model):
    run_model(data, model, dropout=False, explicit_masks=True, with_loss=True, empty_rows=True)


@settings(max_examples=scaled(10))
@given(data=st.data())
def test_transformer_fully_padded_source_rows(data):
    """A source sequence made only of padding: its encoder rows and the decoder's cross-attention
    rows see no key (zero weights, zero output, zero gradient on both sides, never NaN)."""
    pad = data.draw(st.integers(0, 1), label="pad_id")
    run_model(data, "transformer", dropout=False, explicit_masks=False, with_loss=True,
              empty_rows=True, force_empty_source_row=True, pad_id=pad)


@settings(max_examples=scaled(10))
@given(data=st.data(), model=MODELS)
def test_model_via_bridge_on_the_fused_attention_path(data, model):
    """The twin built by torchformer.models.bridge.to_torch (its own weight copy, not the harness's) and
    left on its fast path (F.scaled_dot_product_attention) matches npformer: logits, loss and every
    gradient. Attention weights do not exist on that path."""
    from parity_tests.harness.torch_utils import parity_device
    from torchformer.models.bridge import to_torch

    cfg = data.draw(S.configs(model), label="config")
    inp = data.draw(S.model_inputs(cfg, model), label="inputs")
    rng = np.random.default_rng(inp.seed)
    file, cls = CLASSES[model].split(".")
    a = getattr(importlib.import_module(f"npformer.models.{file}"), cls)(cfg, seed=3)
    perturb_parameters(a, rng)
    t = to_torch(a, device=str(parity_device()))
    args = {"transformer": (inp.src, inp.tgt), "classifier": (inp.src,),
            "causal_lm": (inp.tgt,)}[model]
    note_case(model=model, config=cfg, ids=args, seed=inp.seed)
    names = INPUTS[model]
    check_parity(a, t, args, dtype=cfg.dtype, seed=inp.seed, input_names=names,
                 input_grads=lambda m: {n: getattr(m, n) for n in names}, copy=False,
                 explicit_attention=False, attention=False, skip=skip_attn_dropout)
