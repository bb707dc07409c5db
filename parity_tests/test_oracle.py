"""The grading oracle gives the right verdict on candidates it has never seen.

Candidates live in parity_tests/oracle_candidates/ (tutorial-style code, correct or broken in one
named place) or are written by the tests into tmp_path. Every broken candidate must get verdict
"mismatch" naming the quantity its bug shows up in first; every correct one "match"; misbehaving ones
(raising, NaN, wrong shape or type, mutating inputs, hanging, nondeterministic) their own verdict and
exit status, never a crash of the oracle. Few examples per check: the search stops at the first
difference and Hypothesis shrinks it, so a bug that exists is found quickly.
"""
from __future__ import annotations

import os
import textwrap

import numpy as np
import pytest

pytest.importorskip("torch")

from parity_tests.conftest import candidate_path  # noqa: E402
from parity_tests.oracle import check  # noqa: E402
from parity_tests.oracle.core.report import render_text  # noqa: E402
from parity_tests.oracle.reading.naming import Space, bind, resolve  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CANDIDATES = candidate_path()
N = 6  # examples per check that should match


def cand(file: str, name: str) -> str:
    return f"{os.path.join(CANDIDATES, file)}:{name}"


def explain(res) -> str:
    return render_text(res)


# ------------------------------------------------------------------------------------------------
# correct candidates in many styles: match
# ------------------------------------------------------------------------------------------------
CORRECT = [
    ("sdpa", cand("torch_attention.py", "attention"), {}),                     # torch fn + weights
    ("sdpa", cand("torch_attention.py", "attention_output_only"), {}),         # torch fn, output only
    ("sdpa", cand("torch_attention.py", "attention_drop_mask"), {"mask_convention": "drop"}),
    ("sdpa", cand("torch_attention.py", "attention_safe"), {"strict": True}),
    ("sdpa", cand("numpy_candidates.py", "attention"), {}),                    # numpy function
    ("mha", cand("torch_mha.py", "MultiHeadAttention"), {}),                   # W_q.., returns weights
    ("mha", cand("torch_mha.py", "MHAOutputOnly"), {}),                        # w_q.., output only
    ("mha", cand("torch_mha.py", "MultiHeadedAttention"), {"mask_rank": 3}),   # (h, d_model), list
    ("mha", cand("torch_mha.py", "PackedMHA"), {}),                            # packed in_proj_weight
    ("mha", cand("torch_mha.py", "SelfAttention"), {}),                        # forward(x, mask)
    ("mha", "npformer.layers.attention:MultiHeadAttention", {}),                      # numpy module (pkg:Name)
    ("layernorm", cand("torch_layers.py", "LayerNorm"), {}),
    ("layernorm", cand("numpy_candidates.py", "layernorm_forward"), {}),       # numpy pair (auto)
    ("ffn", cand("torch_layers.py", "PositionwiseFeedForward"), {}),
    ("ffn", cand("numpy_candidates.py", "FeedForward"), {"weight_layout": "in_out"}),
    ("positional", cand("torch_layers.py", "PositionalEncoding"), {}),
    ("encoder_layer", cand("torch_layers.py", "EncoderLayer"), {}),
    ("encoder_layer", "torchformer.models.encoder:EncoderLayer", {}),                 # config constructor
    ("decoder_layer", cand("torch_layers.py", "DecoderLayer"), {}),
]


@pytest.mark.parametrize("component,spec,kw", CORRECT, ids=[f"{c}-{s.rsplit(':', 1)[-1]}"
                                                            for c, s, _ in CORRECT])
def test_correct_candidates_match(component, spec, kw):
    res = check(component, spec, examples=N, **kw)
    assert res.verdict == "match", explain(res)
    assert res.exit_code == 0
    assert "output" in res.checked
    if "torch" in res.kind:  # autograd: every gradient is compared, none skipped
        assert any(k.startswith("grad_input:") for k in res.checked), res.checked
        assert not [k for k, why in res.not_checked.items() if "no such parameter" not in why
                    and k != "attention_weights"], res.not_checked


def test_whole_model_matches():
    res = check("model", cand("torch_layers.py", "Transformer"), examples=3)
    assert res.verdict == "match", explain(res)
    assert "grad_param:encoder.layers.0.self_attn.q_proj.weight" in res.checked
    assert "output_proj.weight <- fc.weight" in res.mapping


def test_numpy_forward_only_function_reports_gradients_as_not_checked():
    res = check("sdpa", cand("numpy_candidates.py", "attention"), examples=3)
    assert res.verdict == "match"
    assert set(res.not_checked) == {"grad_input:q", "grad_input:k", "grad_input:v"}
    assert "forward-only" in res.not_checked["grad_input:q"]


def test_tutorial_names_are_mapped_automatically():
    res = check("mha", cand("torch_mha.py", "MultiHeadedAttention"), examples=2, mask_rank=3)
    assert res.mapping[:2] == ["q_proj.weight <- linears.0.weight", "q_proj.bias <- linears.0.bias"]
    res = check("mha", cand("torch_mha.py", "PackedMHA"), examples=2)
    assert "q_proj.weight <- in_proj_weight (rows 0:" in res.mapping[0]


# ------------------------------------------------------------------------------------------------
# broken candidates: mismatch, naming the quantity
# ------------------------------------------------------------------------------------------------
BROKEN = [
    ("sdpa", cand("torch_attention.py", "attention_wrong_scale"), {}, "output"),
    ("sdpa", cand("torch_attention.py", "attention_softmax_wrong_axis"), {}, "output"),
    ("sdpa", cand("torch_attention.py", "attention_mask_ignored"), {}, "output"),
    ("sdpa", cand("torch_attention.py", "attention_mask_inverted"), {}, "output"),
    ("sdpa", cand("torch_attention.py", "attention_detached"), {}, "grad_input:q"),
    ("mha", cand("torch_mha.py", "MHATransposedWeight"), {}, "output"),
    ("layernorm", cand("torch_layers.py", "LayerNormWrongEps"), {}, "output"),
    ("encoder_layer", cand("torch_layers.py", "EncoderLayerNoResidual"), {}, "output"),
    ("layernorm", cand("numpy_candidates.py", "layernorm_bad_forward,layernorm_bad_backward"), {},
     "grad_input:x"),
    # strict mode: a -1e9 fill gives the mean of the values on a fully masked row, not 0
    ("sdpa", cand("torch_attention.py", "attention"), {"strict": True}, "output"),
]


@pytest.mark.parametrize("component,spec,kw,quantity", BROKEN,
                         ids=[f"{c}-{s.rsplit(':', 1)[-1]}" for c, s, _, _ in BROKEN])
def test_broken_candidates_mismatch_at_the_right_quantity(component, spec, kw, quantity):
    res = check(component, spec, examples=30, **kw)
    assert res.verdict == "mismatch", explain(res)
    assert res.exit_code == 1
    assert res.quantity == quantity, explain(res)
    d = res.detail
    # the minimal counterexample: where, both values, the errors against the tolerance
    assert d["ratio_to_tolerance"] > 1
    assert d["abs_err"] == pytest.approx(abs(d["got"] - d["expected"]))
    assert d["tolerance"]["atol"] > 0 and d["elements_over"] >= 1
    assert res.example is not None and res.replay and "--replay" in res.replay


@pytest.mark.parametrize("name", ["attention_mask_ignored", "attention_mask_inverted"])
def test_mask_bugs_are_shown_with_a_mask(name):
    res = check("sdpa", cand("torch_attention.py", name), examples=30)
    assert res.verdict == "mismatch"
    mask = res.case["masks"]["mask"]
    assert mask is not None                      # the counterexample needs a mask to show the bug
    if name == "attention_mask_ignored":
        assert 0 in np.asarray(mask["keep"])     # ignoring a mask shows only when it hides a key


def test_strict_mode_notes_the_fully_masked_row():
    res = check("sdpa", cand("torch_attention.py", "attention"), examples=30, strict=True)
    keep = np.asarray(res.case["masks"]["mask"]["keep"], dtype=bool)
    at = res.detail["worst_at"]
    assert not keep[at["batch"], :, at["query"], :].any()
    assert any("fully masked row" in n for n in res.notes)


def test_strict_mode_with_minus_inf_fill_gives_non_finite():
    res = check("sdpa", cand("torch_attention.py", "attention_output_only"), examples=30,
                strict=True)
    assert res.verdict == "non_finite", explain(res)
    assert res.exit_code == 1 and res.quantity == "output"


def test_registration_order_fallback_and_explicit_map(tmp_path):
    src = tmp_path / "scrambled.py"
    src.write_text(textwrap.dedent('''
        import math, torch, torch.nn as nn

        class Attn(nn.Module):
            """Correct, but the output projection is registered first and nothing has a usual name."""
            def __init__(self, d_model, num_heads):
                super().__init__()
                self.h = num_heads
                self.mix = nn.Linear(d_model, d_model)   # the output projection
                self.a = nn.Linear(d_model, d_model)     # queries
                self.b = nn.Linear(d_model, d_model)     # keys
                self.c = nn.Linear(d_model, d_model)     # values
            def forward(self, query, key, value, mask=None):
                B, Tq, D = query.shape
                sh = lambda t: t.view(B, -1, self.h, D // self.h).transpose(1, 2)
                q, k, v = sh(self.a(query)), sh(self.b(key)), sh(self.c(value))
                s = q @ k.transpose(-2, -1) / math.sqrt(D // self.h)
                if mask is not None:
                    s = s.masked_fill(mask == 0, -1e9)
                o = (s.softmax(-1) @ v).transpose(1, 2).reshape(B, Tq, D)
                return self.mix(o)
    '''))
    spec = f"{src}:Attn"
    res = check("mha", spec, examples=20)
    # mapped q, k, v, o by order (wrong), then placed by probing what each matrix does
    assert res.verdict == "match", explain(res)
    assert any("placed by probing" in n and "out_proj <- mix" in n for n in res.notes), res.notes
    name_map = {"q_proj": "a", "k_proj": "b", "v_proj": "c", "out_proj": "mix"}
    res = check("mha", spec, examples=N, name_map=name_map)
    assert res.verdict == "match", explain(res)
    assert "q_proj.weight <- a.weight (from --map)" not in res.mapping  # a block map, not a leaf one
    assert "q_proj.weight <- a.weight" in res.mapping


def test_unmappable_candidate_is_an_interface_error(tmp_path):
    src = tmp_path / "extra.py"
    src.write_text(textwrap.dedent('''
        import torch, torch.nn as nn
        from torch.nn import functional as F

        class LN(nn.Module):
            def __init__(self, d_model):
                super().__init__()
                self.weight = nn.Parameter(torch.ones(d_model))
                self.bias = nn.Parameter(torch.zeros(d_model))
                self.temperature = nn.Parameter(torch.ones(3))
            def forward(self, x):
                return F.layer_norm(x, x.shape[-1:], self.weight, self.bias)
    '''))
    res = check("layernorm", f"{src}:LN", examples=3)
    assert res.verdict == "interface_error" and res.exit_code == 2
    assert "temperature" in res.message and "--map" in res.message
    res = check("layernorm", f"{src}:LN", examples=N, allow_unmapped=True)
    assert res.verdict == "match", explain(res)


# ------------------------------------------------------------------------------------------------
# misbehaving candidates: their own verdicts, never an oracle crash
# ------------------------------------------------------------------------------------------------
MISBEHAVING = [
    ("attention_raises", "raised", 2, None),
    ("attention_nan", "non_finite", 1, "output"),
    ("attention_wrong_shape", "wrong_shape", 1, "output"),
    ("attention_mutates", "mutates_input", 1, None),
    ("attention_returns_list", "wrong_type", 2, None),
]


@pytest.mark.parametrize("name,verdict,code,quantity", MISBEHAVING, ids=[m[0] for m in MISBEHAVING])
def test_misbehaving_candidates_get_clear_verdicts(name, verdict, code, quantity):
    res = check("sdpa", cand("torch_attention.py", name), examples=20)
    assert (res.verdict, res.exit_code, res.quantity) == (verdict, code, quantity), explain(res)
    assert res.message
    if verdict == "raised":
        assert "NotImplementedError" in res.message and "torch_attention.py" in res.traceback
    if verdict == "mutates_input":
        assert "'query'" in res.message


def test_hanging_candidate_times_out():
    res = check("sdpa", cand("torch_attention.py", "attention_hangs"), examples=5, timeout=0.5)
    assert res.verdict == "timeout" and res.exit_code == 2
    assert res.examples_run == 1          # no shrinking of a time-out


def test_input_mutating_module():
    res = check("positional", cand("torch_layers.py", "PositionalEncodingInPlace"), examples=5)
    assert res.verdict == "mutates_input" and res.exit_code == 1


def test_dropout_left_on_is_nondeterministic(tmp_path):
    src = tmp_path / "drop.py"
    src.write_text(textwrap.dedent('''
        import torch
        def ffn_like(x):
            return torch.nn.functional.dropout(x, p=0.5, training=True) + 0.0
        class Pos(torch.nn.Module):
            def __init__(self, d_model, max_len=100):
                super().__init__()
            def forward(self, x):
                return torch.nn.functional.dropout(x, 0.5, training=True)
    '''))
    res = check("positional", f"{src}:Pos", examples=5, settings={"d_model": 16})
    assert res.verdict == "nondeterministic" and res.exit_code == 1


@pytest.mark.parametrize("spec,fragment", [
    ("no/such/file.py:Thing", "does not exist"),
    (f"{os.path.join(CANDIDATES, 'torch_mha.py')}:NoSuchClass", "no attribute 'NoSuchClass'"),
    ("just_a_name", "expected 'path/to/file.py:Name'"),
])
def test_load_errors(spec, fragment):
    res = check("mha", spec, examples=2)
    assert res.verdict == "load_error" and res.exit_code == 2
    assert fragment in res.message


def test_a_report_on_a_missing_file_says_nothing_of_it_ran():
    """No worker starts for a file that does not exist: the report must not describe a run
    without confinement ("no namespaces; NO private view ...") that never happened."""
    from parity_tests.oracle import render_text
    text = render_text(check("mha", "no/such/file.py:Thing", examples=2))
    assert "nothing of the candidate ran" in text and "NO private view" not in text, text


def test_import_errors_of_the_candidate_are_load_errors(tmp_path):
    (tmp_path / "syntax.py").write_text("def f(:\n    pass\n")
    (tmp_path / "boom.py").write_text("raise RuntimeError('top-level code failed')\n")
    (tmp_path / "quits.py").write_text("import sys\nsys.exit(3)\n")
    for name, fragment in (("syntax", "SyntaxError"), ("boom", "top-level code failed"),
                           ("quits", "SystemExit")):
        res = check("sdpa", f"{tmp_path / name}.py:f", examples=2)
        assert res.verdict == "load_error" and res.exit_code == 2, explain(res)
        assert fragment in res.message


def test_signature_the_oracle_cannot_call_is_an_interface_error(tmp_path):
    src = tmp_path / "sig.py"
    src.write_text("def attention(q, k, v, mask, temperature):\n    return q\n")
    res = check("sdpa", f"{src}:attention", examples=2)
    assert res.verdict == "interface_error" and res.exit_code == 2
    assert "temperature" in res.message


def test_float32_candidates_are_judged_with_float32_tolerances():
    res = check("mha", cand("torch_mha.py", "MultiHeadAttention"), examples=N, dtype="float32")
    assert res.verdict == "match", explain(res)
    res = check("layernorm", cand("torch_layers.py", "LayerNormWrongEps"), examples=30,
                dtype="float32")
    assert res.verdict == "mismatch" and res.quantity == "output", explain(res)
    assert res.detail["tolerance"]["atol"] > 1e-8         # the float32 row of the table


# ------------------------------------------------------------------------------------------------
# naming
# ------------------------------------------------------------------------------------------------
def test_bind_decoder_masks_by_name():
    def forward(x, enc_output, src_mask, tgt_mask):  # the popular tutorial order
        pass
    b = bind(forward, [("x", ("x",), True), ("memory", ("memory", "enc_output"), True),
                       ("self_mask", ("self_mask", "tgt_mask"), False),
                       ("memory_mask", ("memory_mask", "src_mask"), False)])
    assert b.arg_of == {"x": "x", "memory": "enc_output", "memory_mask": "src_mask",
                        "self_mask": "tgt_mask"}


def test_resolver_transposes_non_square_bare_matrices():
    ref = {"linear1.weight": (5, 3), "linear1.bias": (5,), "linear2.weight": (3, 5),
           "linear2.bias": (3,)}
    space = Space(["W1", "b1", "W2", "b2"], {"W1": (3, 5), "b1": (5,), "W2": (5, 3), "b2": (3,)},
                  {n: True for n in ("W1", "b1", "W2", "b2")})
    entries, unclaimed = resolve("ffn", space, ref, {})
    assert entries["linear1.weight"].cand == "W1" and entries["linear1.weight"].transpose
    assert entries["linear2.bias"].cand == "b2" and not unclaimed
