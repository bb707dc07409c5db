"""Reach: third-party styles as tutorials and well-known repositories write them (minGPT/nanoGPT,
Annotated Transformer, d2l's older edition, einsum and stacked-head weights, Keras-like naming,
NumPy classes with params/grads dicts and x @ W). Each right candidate reaches "match" from the
command an instructor would type (the file plus what its code makes obvious), its wrong twin
"mismatch"; the recognisers added for them are tested on their own, without a worker, below."""
from __future__ import annotations

import inspect
import os

import numpy as np
import pytest

pytest.importorskip("torch")

from parity_tests.conftest import candidate_path  # noqa: E402
from parity_tests.oracle import check  # noqa: E402
from parity_tests.oracle.core.report import render_text  # noqa: E402
from parity_tests.oracle.reading.recognise import derived, ffn_width, head_axes, list_input  # noqa: E402
from parity_tests.oracle.reading.recognise.base import MISSING, BuildContext  # noqa: E402

HERE = candidate_path("tutorial_styles")
GPT, ANN, MISC, NP, PAIR, LIB = (os.path.join(HERE, f) for f in (
    "gpt_style.py", "annotated_style.py", "torch_misc_style.py", "numpy_params_style.py",
    "numpy_pair_style.py", "torch_library_style.py"))
N = 5
GELU_PRE = {"settings": {"activation": "gelu", "norm_first": True}}

PAIRS = [
    # id, component, file, right, wrong, options, a note (or mapping text) the right report carries
    ("mingpt_causal_buffer", "mha", GPT, "CausalSelfAttention", "CausalSelfAttentionBadScale", {},
     "masks the future itself"),
    ("nanogpt_block", "encoder_layer", GPT, "Block", "BlockSharedNorm", GELU_PRE,
     "fixed by the candidate's code at 4 x d_model"),
    ("d2l_explicit_sizes", "mha", MISC, "MultiHeadAttention", "MultiHeadAttentionNoRepeat", {},
     "'key_size'"),
    ("einsum_d_h_dhead", "mha", MISC, "EinsumAttention", "EinsumAttentionKeyForValue", {},
     "heads on axes of their own"),
    ("stacked_heads", "mha", MISC, "StackedHeadsAttention", "StackedHeadsAttentionBiasKOnQ", {},
     "heads on axes of their own"),
    ("keras_inputs_tensor", "mha", MISC, "MultiHeadSelfAttention",
     "MultiHeadSelfAttentionNoPermute", {}, "self-attention"),
    ("numpy_params_x_at_W", "mha", NP, "MultiHeadAttention", "MultiHeadAttentionBadSoftmaxGrad", {},
     "computes x @ W"),
    ("torch_bare_x_at_W", "mha", MISC, "BareParamAttention", "BareParamAttentionMixedLayout", {},
     "computes x @ W"),
    ("cs231n_pair_x_at_W", "mha", PAIR, "mha_forward", "mha_bad_forward", {}, "computes x @ W"),
    ("nn_multihead_attention_mask", "encoder_layer", LIB, "EncoderLayer", "EncoderLayerOneNorm", {},
     "torch.nn.MultiheadAttention"),
]


def _said(res, text):
    return any(text in n for n in res.notes) or any(text in m for m in res.mapping)


@pytest.mark.parametrize("component,file,right,wrong,opts,note", [p[1:] for p in PAIRS],
                         ids=[p[0] for p in PAIRS])
def test_right_matches_wrong_mismatches(component, file, right, wrong, opts, note):
    res = check(component, f"{file}:{right}", examples=N, **opts)
    assert res.verdict == "match", render_text(res)
    assert _said(res, note), (res.notes, res.mapping)
    bad = check(component, f"{file}:{wrong}", examples=20, shrink=False, **opts)
    assert bad.verdict == "mismatch", render_text(bad)


def test_float32_table_built_in_init_matches_in_float64():
    """Annotated Transformer's table made with torch.zeros/arange (default dtype) in __init__."""
    res = check("positional", f"{ANN}:PositionalEncoding", examples=N)
    assert res.verdict == "match", render_text(res)


def test_explicit_float32_table_matches_under_an_assumption_and_in_float32():
    """The quick check's match is the float32 re-check's own (float32_tables.retry runs the same
    check with --dtype float32 and keeps its result only on a match): the note says so, and stands
    for a separate `dtype="float32"` check, which would run that same search a second time."""
    res = check("positional", f"{MISC}:PositionalEncoding", examples=N)
    assert res.verdict == "match", render_text(res)      # after a float32 re-check, said first
    assert res.notes[0].startswith("assumption: the candidate computes its table in float32")
    assert "checked again with --dtype float32, every quantity matched" in res.notes[0], res.notes[0]
    assert res.options["dtype"] == "float32", res.options
    strict = check("positional", f"{MISC}:PositionalEncoding", examples=N, require=("eps",),
                   shrink=False)
    assert strict.verdict == "mismatch", render_text(strict)   # with requirements: float64 only
    assert any("float32 rounding size" in n for n in strict.notes), strict.notes


def test_pair_weight_gradients_come_back_in_the_reference_layout():
    """A forward/backward pair's dW for an (in, out) matrix is read transposed, as a module's is."""
    res = check("mha", f"{PAIR}:mha_forward", examples=N, weight_layout="in_out")
    assert res.verdict == "match", render_text(res)


def test_mha_wrapping_the_library_module_takes_torch_masks():
    res = check("mha", f"{LIB}:Attention", examples=N)
    assert res.verdict == "match", render_text(res)
    assert any("(batch*heads, Tq, Tk)" in n for n in res.notes), res.notes


def test_in_process_check_leaves_the_callers_torch_default_dtype():
    """Only the isolated worker makes the check's dtype torch's default; a Python object checked in
    this process must not change the caller's."""
    import importlib.util

    import torch
    spec = importlib.util.spec_from_file_location("annotated_style_inproc", ANN)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    before = torch.get_default_dtype()
    res = check("layernorm", mod.LayerNorm, examples=2)
    assert res.verdict == "match", render_text(res)
    assert torch.get_default_dtype() == before


def test_numpy_out_in_matrices_are_not_switched():
    res = check("mha", f"{NP}:MultiHeadAttentionOutIn", examples=N)
    assert res.verdict == "match", render_text(res)
    assert not any("x @ W" in n for n in res.notes), res.notes


# ---- the recognisers alone ----------------------------------------------------------------------
def _einsum_q(x, W, layout):
    """q (B, T, H*dk) from x (B, T, D) for a candidate array W in the named layout."""
    eq = {"heads_last": "btd,dhk->bthk", "heads_first": "btd,hkd->bthk", "stacked": "btd,hdk->bthk"}
    q = np.einsum(eq[layout], x, W)
    return q.reshape(x.shape[0], x.shape[1], -1)


@pytest.mark.parametrize("layout,shape", [("heads_last", (6, 2, 3)), ("heads_first", (2, 3, 6)),
                                          ("stacked", (2, 6, 3))])
def test_head_axes_layout_computes_what_the_einsum_does(layout, shape):
    rng = np.random.default_rng(0)
    W_ref = rng.standard_normal((6, 6))                       # (out, in), y = x @ W.T
    found = head_axes.layout("q_proj.weight", (6, 6), shape, {"num_heads": 2})
    assert found is not None
    cand = head_axes.arrange(W_ref, *found)
    x = rng.standard_normal((1, 4, 6))
    np.testing.assert_allclose(_einsum_q(x, cand, layout), x @ W_ref.T, rtol=1e-12, atol=1e-12)
    g = rng.standard_normal(shape)
    back = head_axes.unarrange(g, (6, 6), found[0], found[2])
    np.testing.assert_array_equal(head_axes.arrange(back, *found), g)


def test_head_axes_output_projection_and_ambiguity():
    rng = np.random.default_rng(1)
    W_o = rng.standard_normal((6, 6))
    t, pre, perm = head_axes.layout("out_proj.weight", (6, 6), (2, 3, 6), {"num_heads": 2})
    z = rng.standard_normal((1, 4, 2, 3))
    out = np.einsum("bthk,hkd->btd", z, head_axes.arrange(W_o, t, pre, perm))
    np.testing.assert_allclose(out, z.reshape(1, 4, 6) @ W_o.T, rtol=1e-12, atol=1e-12)
    # d_head 1, d_model = heads: (2, 2, 1) is heads-last and stacked; the first build's hint decides
    assert head_axes.layout("q_proj.weight", (2, 2), (2, 2, 1), {"num_heads": 2}) is None
    assert head_axes.layout("q_proj.weight", (2, 2), (2, 2, 1), {"num_heads": 2}, d_axis=0)[0]
    assert head_axes.layout("q_proj.weight", (2, 2), (2, 2, 1), {"num_heads": 2}, "unit") is None
    assert head_axes.layout("linear1.weight", (6, 6), (6, 2, 3), {"num_heads": 2}) is None


class _KerasAttn:
    def forward(self, inputs):
        return inputs.shape


class _ListAttn:
    def forward(self, inputs, mask=None):
        q, k, v = inputs
        return q


def test_list_input_name_alone_needs_the_list_to_be_unpacked():
    from parity_tests.oracle import components
    mha = components.get("mha")
    keras, lst = _KerasAttn().forward, _ListAttn().forward
    assert list_input.detect(inspect.signature(keras), mha, keras) is None
    assert list_input.detect(inspect.signature(lst), mha, lst) == "inputs"


def test_d2l_input_sizes_are_d_model():
    ctx = BuildContext(module=None, framework="torch", order=(), build=None)
    p = inspect.Parameter("key_size", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    assert derived.value(ctx, p, {"d_model": 6, "num_heads": 2}) == 6
    assert derived.value(ctx, p, {}) is MISSING
    assert any("key_size" in n for n in ctx.notes)


def test_torch_form_of_a_keep_mask():
    from parity_tests.oracle.core.options import Options
    from parity_tests.oracle.reading.recognise import torch_mha_mask
    keep = np.array([[[[True, False]]], [[[True, True]]]])            # (B=2, 1, Tq=1, Tk=2)
    got = torch_mha_mask.torch_form(keep, Options(), "float64", heads=3)
    assert got.shape == (6, 1, 2) and got.dtype == bool
    assert got[:3, 0, 1].all() and not got[:3, 0, 0].any() and not got[3:].any()


def test_ffn_width_ratio_needs_both_projections():
    assert ffn_width._ratios([(16, 4), (4, 16), (12, 4), (4,)], 4) == {4}
    assert ffn_width._ratios([(12, 4), (4, 4)], 4) == set()          # packed q/k/v only


def test_no_weight_layout_hint_after_the_probe_switched_to_x_at_w(tmp_path):
    """Once the probe has read the candidate as x @ W, a mismatch on the output must not also
    advise --weight-layout in_out (it contradicted the note above it)."""
    src = open(NP).read() + '''

class MultiHeadAttentionNoScale(MultiHeadAttention):
    """BUG: scores not divided by sqrt(dk): shows in the output, but not in the layout probe
    (W_q = W_k = 0 there, so every score is 0 either way)."""

    def forward(self, q, k, v, mask=None):
        p = self.params
        Q, K, V = (self._split(x @ p[f"W_{n}"] + p[f"b_{n}"]) for x, n in ((q, "q"), (k, "k"), (v, "v")))
        s = Q @ K.transpose(0, 1, 3, 2)
        if mask is not None:
            s = np.where(mask, s, -1e30)
        A = softmax(s)
        Z = self._merge(A @ V)
        self.cache = (q, k, v, Q, K, V, A, Z)
        return Z @ p["W_o"] + p["b_o"]
'''
    f = tmp_path / "np_x_at_w_bug.py"
    f.write_text(src)
    res = check("mha", f"{f}:MultiHeadAttentionNoScale", examples=N)
    assert res.verdict == "mismatch" and res.quantity == "output", render_text(res)
    assert _said(res, "computes x @ W"), render_text(res)
    assert not any("try --weight-layout in_out" in n for n in res.notes), render_text(res)
