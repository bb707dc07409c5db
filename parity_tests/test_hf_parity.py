"""npformer and torchformer against Hugging Face transformers, the implementation people use.

transformers models (GPT2LMHeadModel, BertModel, BertForMaskedLM, BertForSequenceClassification)
are built OFFLINE from small random configs, their weights drawn from the example's seed, converted
with npformer.io.hub / torchformer.io.hub, and run on the same ids (BERT: segments and a padding
attention_mask). Compared, in float64 with the project's twin tolerances (outputs 2e-13 relative)
and in float32: every layer's attention weights (attn_implementation="eager",
output_attentions=True), the logits (BertModel: hidden states and pooled vector), the gradient at
the embedding output (hidden_states[0]) and every parameter gradient, mapped to Hugging Face names
by the same conversion. Plus: the round trip (transformers -> ours -> transformers) reproduces the
state dict exactly, folders written by either side load in the other, and four planted conversion
bugs (a missing Conv1D transpose, q/k/v split in the wrong order, the wrong GELU, BERT's LayerNorm
eps ignored) each make the comparison fail.
"""
from __future__ import annotations

import re
from typing import NamedTuple

import numpy as np
import pytest

transformers = pytest.importorskip(
    "transformers", reason="Hugging Face parity needs the [hf] extra: pip install -e '.[hf]'")
torch = pytest.importorskip("torch")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import npformer.io.hub as np_hub  # noqa: E402
import npformer.io.hub_mapping as np_hub_mapping  # noqa: E402
import torchformer.io.hub as t_hub  # noqa: E402
from parity_tests.harness import ParityError, compare_all, note_case  # noqa: E402
from parity_tests.harness.parity import enable_attention_weights  # noqa: E402
from parity_tests.harness.profiles import scaled  # noqa: E402
from parity_tests.harness.torch_utils import deterministic_torch  # noqa: E402

KINDS = ("gpt2", "bert", "bert_mlm", "bert_cls")


class Case(NamedTuple):
    kind: str
    dtype: str
    hf_config: dict               # keyword arguments of GPT2Config / BertConfig
    seed: int
    ids: np.ndarray               # (B, T)
    types: np.ndarray | None      # (B, T) BERT segments
    mask: np.ndarray | None       # (B, T) 1 = real token (BERT)


def make_case(kind, dtype, seed, *, heads=2, d_head=4, d_ff=12, layers=2, vocab=11, B=2, T=5,
              act=None, tie=True, type_vocab=2, padded=True) -> Case:
    rng = np.random.default_rng(seed)
    D = heads * d_head
    if kind == "gpt2":
        cfg = dict(vocab_size=vocab, n_positions=8, n_embd=D, n_head=heads, n_layer=layers,
                   n_inner=d_ff, activation_function=act or "gelu_new", tie_word_embeddings=tie,
                   bos_token_id=vocab - 1, eos_token_id=vocab - 1)
        return Case(kind, dtype, cfg, seed, rng.integers(0, vocab, (B, T)), None, None)
    cfg = dict(vocab_size=vocab, hidden_size=D, num_attention_heads=heads, num_hidden_layers=layers,
               intermediate_size=d_ff, hidden_act=act or "gelu", max_position_embeddings=8,
               type_vocab_size=type_vocab, tie_word_embeddings=tie, num_labels=3, pad_token_id=0)
    lengths = rng.integers(1, T + 1, B) if padded else np.full(B, T)
    mask = (np.arange(T)[None, :] < lengths[:, None]).astype(np.int64)          # right padding
    ids = np.where(mask == 1, rng.integers(1, vocab, (B, T)), 0)
    types = rng.integers(0, type_vocab, (B, T))
    return Case(kind, dtype, cfg, seed, ids, types, mask)


def build_hf(case: Case):
    """The transformers model of `case`, every parameter drawn from the case's seed (LayerNorm gains
    around 1, everything else N(0, 0.4^2)), in the case's dtype, eval mode (dropout off)."""
    cls = {"gpt2": "GPT2LMHeadModel", "bert": "BertModel", "bert_mlm": "BertForMaskedLM",
           "bert_cls": "BertForSequenceClassification"}[case.kind]
    cfg_cls = transformers.GPT2Config if case.kind == "gpt2" else transformers.BertConfig
    model = getattr(transformers, cls)(cfg_cls(**case.hf_config, attn_implementation="eager"))
    if case.dtype == "float64":
        model = model.double()
    rng = np.random.default_rng([case.seed, 7])
    with torch.no_grad():
        for name, p in model.named_parameters():
            gain = re.search(r"(LayerNorm|ln_\w+)\.weight$", name)
            v = (1.0 if gain else 0.0) + (0.2 if gain else 0.4) * rng.standard_normal(tuple(p.shape))
            p.copy_(torch.from_numpy(v))
    return model.eval()


def upstreams(case: Case, shapes, dtype):
    rng = np.random.default_rng([case.seed, 11])
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


def run_hf(model, case: Case) -> dict:
    deterministic_torch()
    kw = {"input_ids": torch.from_numpy(case.ids)}
    if case.kind != "gpt2":
        kw.update(token_type_ids=torch.from_numpy(case.types),
                  attention_mask=torch.from_numpy(case.mask))
    out = model(**kw, output_attentions=True, output_hidden_states=True)
    outs = [out.last_hidden_state, out.pooler_output] if case.kind == "bert" else [out.logits]
    emb = out.hidden_states[0]
    emb.retain_grad()
    ups = upstreams(case, [tuple(o.shape) for o in outs], case.dtype)
    torch.autograd.backward(outs, [torch.from_numpy(u) for u in ups])
    grads = {n: (np.zeros(tuple(p.shape)) if p.grad is None else p.grad.numpy())
             for n, p in model.named_parameters()}
    return dict(outputs=[o.detach().numpy() for o in outs], grads=grads,
                attention=[a.detach().numpy() for a in out.attentions], emb_grad=emb.grad.numpy())


def _attention(model) -> list:
    return [m.attn_weights for _, m in model.named_modules() if hasattr(m, "attn_weights")]


def run_npformer(model, case: Case) -> dict:
    model.eval()
    args = (case.ids,) if case.kind == "gpt2" else (case.ids, case.types, case.mask)
    out = model(*args)
    outs = list(out) if case.kind == "bert" else [out]
    ups = upstreams(case, [o.shape for o in outs], case.dtype)
    model.zero_grad()
    g = model.backward(*ups)
    emb = g["decoder_input" if case.kind == "gpt2" else "encoder_input"]
    grads = {n: p.grad for n, p in model.named_parameters()}
    return dict(outputs=[o.copy() for o in outs], attention=[a.copy() for a in _attention(model)],
                grads=hf_grads(case.kind, model.config, grads), emb_grad=emb)


def hf_grads(kind, config, grads: dict) -> dict:
    """Our gradients under Hugging Face's names; a parameter transformers keeps but never reads
    (an untied BERT's cls.predictions.bias, written as a copy of the bias it does read) has none."""
    out = np_hub.state_to_hf(kind, config, grads)
    for name in np_hub_mapping.unused_copies(kind, config):
        out[name] = np.zeros_like(out[name])
    return out


def run_torchformer(model, case: Case) -> dict:
    deterministic_torch()
    enable_attention_weights(model)
    model.eval()
    args = ((case.ids,) if case.kind == "gpt2" else (case.ids, case.types, case.mask))
    out = model(*[torch.from_numpy(a) for a in args])
    outs = list(out) if case.kind == "bert" else [out]
    ups = upstreams(case, [tuple(o.shape) for o in outs], case.dtype)
    torch.autograd.backward(outs, [torch.from_numpy(u) for u in ups])
    emb = model.decoder_input if case.kind == "gpt2" else model.encoder_input
    grads = {n: (np.zeros(tuple(p.shape)) if p.grad is None else p.grad.numpy())
             for n, p in model.named_parameters()}
    return dict(outputs=[o.detach().numpy() for o in outs],
                attention=[a.detach().numpy() for a in _attention(model)],
                grads=hf_grads(case.kind, model.config, grads), emb_grad=emb.grad.numpy())


def check_against_hf(case: Case, backend: str):
    """Convert, run both, compare in dependency order; raises ParityError naming the first
    tensor that differs."""
    note_case(kind=case.kind, dtype=case.dtype, backend=backend, hf_config=case.hf_config,
              seed=case.seed, ids=case.ids, types=case.types, mask=case.mask)
    hf = build_hf(case)
    ref = run_hf(hf, case)
    if backend == "npformer":
        got = run_npformer(np_hub.from_transformers(hf, dtype=case.dtype), case)
    else:
        got = run_torchformer(t_hub.from_transformers(hf, dtype=case.dtype), case)
    assert len(got["attention"]) == len(ref["attention"]) == case.hf_config.get(
        "n_layer", case.hf_config.get("num_hidden_layers"))
    items = [(f"layers.{i}.attn_weights", a, r, "attention_weights")
             for i, (a, r) in enumerate(zip(got["attention"], ref["attention"]))]
    names = ["hidden", "pooled"] if case.kind == "bert" else ["logits"]
    items += [(n, a, r, "output") for n, a, r in zip(names, got["outputs"], ref["outputs"])]
    assert set(ref["grads"]) <= set(got["grads"]), set(ref["grads"]) - set(got["grads"])
    items += [(f"{n}.grad", got["grads"][n], g, "param_grad") for n, g in ref["grads"].items()]
    items.append(("embedding_output.grad", got["emb_grad"], ref["emb_grad"], "input_grad"))
    return compare_all(items, dtype=case.dtype, check_dtype=True)


# --------------------------------------------------------------------------------------------------
# parity
# --------------------------------------------------------------------------------------------------
@st.composite
def cases(draw, kind=None, dtype=None):
    kind = kind or draw(st.sampled_from(KINDS), label="kind")
    acts = (("gelu_new", "gelu_new", "gelu_pytorch_tanh", "gelu", "relu") if kind == "gpt2"
            else ("gelu", "gelu", "gelu_new", "relu"))
    return make_case(kind, dtype or draw(st.sampled_from(("float64", "float32")), label="dtype"),
                     draw(st.integers(0, 2**32 - 1), label="seed"),
                     heads=draw(st.integers(1, 3)), d_head=draw(st.integers(2, 4)),
                     d_ff=draw(st.integers(1, 12)), layers=draw(st.integers(1, 2)),
                     vocab=draw(st.integers(3, 13)), B=draw(st.integers(1, 3)),
                     T=draw(st.integers(1, 6)), act=draw(st.sampled_from(acts)),
                     tie=draw(st.booleans()), type_vocab=draw(st.integers(1, 3)))


@settings(max_examples=scaled(12))
@given(case=cases(), backend=st.sampled_from(("npformer", "torchformer")))
def test_converted_model_matches_transformers(case, backend):
    check_against_hf(case, backend)


@pytest.mark.parametrize("backend", ["npformer", "torchformer"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_each_dtype_and_backend(kind, dtype, backend):
    reports = check_against_hf(make_case(kind, dtype, seed=1234), backend)
    worst = max(r.max_err_over_scale for r in reports if r.quantity == "output")
    print(f"\nHF | {kind} | {dtype} | {backend} | outputs |err| / max(1, max|ref|) = {worst:.2g}")
    if dtype == "float64":        # the bar for outputs: 1e-12 relative or better
        assert worst <= 1e-12


# --------------------------------------------------------------------------------------------------
# round trips and folders
# --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kind", KINDS)
def test_round_trip_reproduces_the_state_dict_exactly(kind, dtype):
    hf = build_hf(make_case(kind, dtype, seed=5, tie=kind != "bert_cls"))
    want = {k: v.numpy() for k, v in hf.state_dict().items()}
    for hub in (np_hub, t_hub):
        ours = hub.from_transformers(hf, dtype=dtype)
        back = np_hub.to_hf_state_dict(ours)
        assert sorted(back) == sorted(want)
        for k, v in want.items():
            assert back[k].dtype == v.dtype and back[k].shape == v.shape, k
            np.testing.assert_array_equal(back[k], v, err_msg=k)
    again = t_hub.to_transformers(np_hub.from_transformers(hf, dtype=dtype))
    for k, v in again.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), want[k], err_msg=k)


@pytest.mark.parametrize("kind", KINDS)
def test_folders_written_by_either_side_load_in_the_other(kind, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    case = make_case(kind, "float32", seed=9)
    hf = build_hf(case)
    hf.save_pretrained(tmp_path / "hf")                               # transformers writes
    ours = np_hub.from_pretrained(tmp_path / "hf")                      # npformer reads (no torch)
    ref = run_hf(hf, case)["outputs"]
    got = run_npformer(ours, case)["outputs"]
    compare_all([(f"out{i}", g, r, "output") for i, (g, r) in enumerate(zip(got, ref))],
                dtype="float32")
    np_hub.save_pretrained(ours, tmp_path / "ours")                     # npformer writes
    with pytest.raises(FileExistsError, match="overwrite=True"):
        np_hub.save_pretrained(ours, tmp_path / "ours")
    cls = getattr(transformers, type(hf).__name__)
    back = cls.from_pretrained(tmp_path / "ours", attn_implementation="eager")   # local, offline
    for k, v in hf.state_dict().items():
        np.testing.assert_array_equal(back.state_dict()[k].numpy(), v.numpy(), err_msg=k)
    tf = t_hub.from_pretrained(tmp_path / "ours")                      # torchformer reads ours
    compare_all([("torchformer", run_torchformer(tf, case)["outputs"][0], ref[0], "output")],
                dtype="float32")


# --------------------------------------------------------------------------------------------------
# planted conversion bugs: each must make the comparison fail, in both twins
# --------------------------------------------------------------------------------------------------
ORIG_PLAN = np_hub.plan
ORIG_CONFIG = np_hub.config_from_hf


def plan_without_conv1d_transpose(kind, c):
    return [(o, h, "copy" if how == "T" else how) for o, h, how in ORIG_PLAN(kind, c)]


def plan_qkv_order_kqv(kind, c):
    swap = {0: 1, 1: 0, 2: 2}
    return [(o, h, (how[0], swap[how[1]], how[2]) if isinstance(how, tuple) else how)
            for o, h, how in ORIG_PLAN(kind, c)]


def config_ignoring_bert_eps(hf_config, kind, dtype="float32"):
    c = ORIG_CONFIG(hf_config, kind, dtype)
    return c if kind == "gpt2" else c.replace(layer_norm_eps=1e-5)


def _plant_plan(mp, fn):
    mp.setattr(np_hub_mapping, "plan", fn)


def _plant_gelu(mp, _):
    mp.setitem(np_hub.FROM_HF_ACT, "gelu_new", "gelu")          # tanh GELU read as exact GELU


def _plant_config(mp, fn):
    mp.setattr(np_hub, "config_from_hf", fn)
    mp.setattr(t_hub, "config_from_hf", fn)


PLANTED = [  # (name, planter, mutant, case, regex of the first failing tensor)
    ("GPT-2 Conv1D weights not transposed", _plant_plan, plan_without_conv1d_transpose,
     make_case("gpt2", "float64", 3, heads=2, d_head=4, d_ff=8, layers=2), r"layers\.1\.attn|logits"),
    ("GPT-2 c_attn split as k|q|v", _plant_plan, plan_qkv_order_kqv,
     make_case("gpt2", "float64", 3, layers=1), r"layers\.0\.attn_weights"),
    ("GPT-2 gelu_new mapped to the exact GELU", _plant_gelu, None,
     make_case("gpt2", "float64", 3, layers=1), r"logits"),
    ("BERT LayerNorm eps 1e-5 instead of the config's 1e-12", _plant_config,
     config_ignoring_bert_eps, make_case("bert_mlm", "float64", 3), r"layers\.0\.attn_weights"),
]


@pytest.mark.parametrize("backend", ["npformer", "torchformer"])
@pytest.mark.parametrize("bug", PLANTED, ids=[b[0] for b in PLANTED])
def test_planted_conversion_bug_is_caught(bug, backend, monkeypatch):
    name, planter, mutant, case, pattern = bug
    check_against_hf(case, backend)                              # control: passes without the bug
    planter(monkeypatch, mutant)
    with pytest.raises(ParityError) as err:
        check_against_hf(case, backend)
    first = str(err.value).splitlines()[0]
    print(f"\nPLANTED | {name} | {backend} | {first}")
    assert re.search(pattern, first), first
