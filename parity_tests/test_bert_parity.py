"""BERT (BertForMaskedLM, BertForSequenceClassification, BertModel), npformer vs torchformer: every
module output by dotted name, every layer's per-head attention weights, logits, the loss, the
encoder_input gradient and every parameter gradient; drawn BERT fields (segments 0-3, embedding
LayerNorm on/off, eps 1e-12 or 1e-5, tied or untied output, biases), masks from pad_id, from a
Hugging Face style (B, T) attention_mask or a 4-d keep-mask with fully masked rows; dropout off
(eval) and on (training, npformer's masks replayed into torchformer)."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from parity_tests.harness import compare_all, note_case
from parity_tests.harness import strategies as S
from parity_tests.harness.parity import check_parity, enable_attention_weights
from parity_tests.harness.profiles import scaled
from parity_tests.harness.twins import twins
from parity_tests.harness.weights import copy_weights, numpy_grads, perturb_parameters, torch_grads

HEADS = {"mlm": "bert.BertForMaskedLM", "cls": "bert.BertForSequenceClassification"}


def skip_attn_dropout(name: str) -> bool:
    # as in test_model_parity: torchformer's MHA applies the attn_dropout mask without calling the
    # module, so nothing is recorded under "<mha>.attn_dropout" on the torch side
    return name.endswith("attn_dropout")


@st.composite
def bert_cases(draw, dropout: bool, mask_kinds=("built", "hf", "keep4d")):
    cfg = draw(S.configs("classifier", dropout=dropout), label="config")
    cfg = cfg.replace(
        type_vocab_size=draw(st.integers(0, 3), label="type_vocab_size"),
        embedding_norm=draw(st.booleans(), label="embedding_norm"),
        layer_norm_eps=draw(st.sampled_from((1e-12, 1e-5)), label="eps"),
        tie_embeddings=draw(st.booleans(), label="tie_embeddings"),
        positional=draw(st.sampled_from(("learned", "learned", "sinusoidal")), label="positional"))
    kind = draw(st.sampled_from(mask_kinds), label="mask_kind")
    inp = draw(S.model_inputs(cfg, "classifier", allow_empty_rows=kind == "keep4d"), label="inputs")
    rng = np.random.default_rng(inp.seed)
    ids = inp.src
    B, T = ids.shape
    types = (rng.integers(0, cfg.type_vocab_size, size=(B, T)).astype(np.int64)
             if cfg.type_vocab_size and draw(st.booleans(), label="pass_types") else None)
    if kind == "built":
        mask = None
    elif kind == "hf":
        mask = inp.src_pad.keep.astype(np.int64)                               # (B, T) 1 = real
    else:
        mask = draw(S.attention_masks(B, cfg.num_heads, T, T, kinds=("random", "padding")),
                    label="mask").keep
    return cfg, inp.seed, ids, types, mask, kind


def run_head(data, head, *, dropout, with_loss):
    cfg, seed, ids, types, mask, kind = data.draw(bert_cases(dropout), label="case")
    a, t = twins(HEADS[head], cfg, seed=seed % 2**31)
    rng = np.random.default_rng(seed)
    perturb_parameters(a, rng)
    loss = None
    if with_loss:
        from npformer.layers.loss import CrossEntropyLoss as NpCE
        from torchformer.layers.loss import CrossEntropyLoss as TCE

        if head == "mlm":           # masked-LM loss: only some positions count (-100 elsewhere)
            targets = S.targets_for(rng, ids.shape, cfg.vocab_size, -100, ignore_fraction=0.5)
            targets[0, 0] = rng.integers(0, cfg.vocab_size)                 # at least one counted
        else:
            targets = rng.integers(0, cfg.num_classes, size=ids.shape[:1]).astype(np.int64)
        loss = (NpCE(-100), TCE(-100), targets)
    kwargs = {"token_type_ids": types, "attention_mask": mask}
    note_case(model=head, config=cfg, ids=ids, token_types=types, mask_kind=kind, seed=seed,
              dropout=dropout, loss=with_loss)
    check_parity(a, t, (ids,), kwargs, dtype=cfg.dtype, seed=seed, input_names=("encoder_input",),
                 input_grads=lambda m: {"encoder_input": m.encoder_input}, loss=loss,
                 train=dropout, skip=skip_attn_dropout)


HEAD_NAMES = st.sampled_from(tuple(HEADS))


@settings(max_examples=scaled(20))
@given(data=st.data(), head=HEAD_NAMES)
def test_bert_heads_eval(data, head):
    run_head(data, head, dropout=False, with_loss=False)


@settings(max_examples=scaled(15))
@given(data=st.data(), head=HEAD_NAMES)
def test_bert_heads_training_replayed_dropout_with_loss(data, head):
    run_head(data, head, dropout=True, with_loss=True)


@settings(max_examples=scaled(15))
@given(data=st.data())
def test_bert_model_hidden_and_pooled(data):
    """BertModel's two outputs at once, each with its own random upstream gradient: hidden states,
    pooled vector, every attention map, every parameter gradient and the encoder_input gradient."""
    import torch

    from parity_tests.harness.torch_utils import deterministic_torch, to_numpy, to_tensor

    cfg, seed, ids, types, mask, kind = data.draw(bert_cases(False), label="case")
    note_case(model="bert", config=cfg, ids=ids, token_types=types, mask_kind=kind, seed=seed)
    a, t = twins("bert.BertModel", cfg, seed=seed % 2**31)
    rng = np.random.default_rng(seed)
    perturb_parameters(a, rng)
    copy_weights(a, t)
    enable_attention_weights(t)
    deterministic_torch()
    a.eval(), t.eval()
    h, p = a(ids, types, mask)
    gh, gp = S.random_upstream(h.shape, h.dtype, rng), S.random_upstream(p.shape, p.dtype, rng)
    a.zero_grad()
    dx = a.backward(gh, gp)["encoder_input"]
    th, tp = t(to_tensor(ids), to_tensor(types), to_tensor(mask))
    torch.autograd.backward([th, tp], [to_tensor(gh), to_tensor(gp)])      # on the twin's device
    items = [("hidden", h, to_numpy(th), "output"), ("pooled", p, to_numpy(tp), "output")]
    for (name, m), (_, tm) in zip(_attn(a), _attn(t)):
        items.append((f"{name}.attn_weights", m.attn_weights, to_numpy(tm.attn_weights),
                      "attention_weights"))
    tg = torch_grads(t)
    assert list(numpy_grads(a)) == list(tg)
    # backward order (the pooler first): the first failing gradient is nearest to the bug
    items += [(f"{n}.grad", g, tg[n], "param_grad") for n, g in reversed(numpy_grads(a).items())]
    items.append(("encoder_input.grad", dx, to_numpy(t.encoder_input.grad), "input_grad"))
    compare_all(items, dtype=cfg.dtype, check_dtype=True)


def _attn(model):
    return [(n, m) for n, m in model.named_modules() if hasattr(m, "attn_weights")]
