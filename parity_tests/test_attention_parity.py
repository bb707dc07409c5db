"""Scaled dot-product attention (functional) and MultiHeadAttention (self and cross), every mask kind,
fully masked rows, attention dropout with replayed masks: npformer vs torchformer (explicit path,
per-head weights compared) and npformer's sdpa vs torch.nn.functional.scaled_dot_product_attention."""
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from parity_tests.harness import note_case
from parity_tests.harness import strategies as S
from parity_tests.harness.parity import check_pair, check_parity
from parity_tests.harness.twins import twins


# torchformer's MultiHeadAttention applies its `attn_dropout` mask inside its explicit attention
# function instead of calling the module, so no output is recorded under "<mha>.attn_dropout" on the
# torch side; the same quantity is checked through attn_weights, the MHA output and all gradients.
def skip_attn_dropout(name: str) -> bool:
    return name.endswith("attn_dropout")


@st.composite
def sdpa_cases(draw, dropout=False):
    b, h = draw(S.batch_sizes()), draw(st.integers(1, 3))
    tq, tk = draw(S.lengths()), draw(S.lengths())
    dk, dv = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    mask = draw(S.attention_masks(b, h, tq, tk))
    p = draw(st.sampled_from((0.1, 0.5))) if dropout else 0.0
    return (b, h, tq, tk, dk, dv), mask, p


@given(c=sdpa_cases(dropout=False) | sdpa_cases(dropout=True), dtype=S.dtypes(), seed=S.seeds())
def test_sdpa_pair_vs_torchformer(c, dtype, seed):
    from npformer.layers.attention import sdpa_backward, sdpa_forward
    from torchformer.layers.attention import scaled_dot_product_attention

    (b, h, tq, tk, dk, dv), mask, p = c
    rng = np.random.default_rng(seed)
    q, k = S.normal(rng, (b, h, tq, dk), dtype), S.normal(rng, (b, h, tk, dk), dtype)
    v = S.normal(rng, (b, h, tk, dv), dtype)
    dmask = (rng.random((b, h, tq, tk)) >= p) if p else None
    check_pair(sdpa_forward, sdpa_backward, scaled_dot_product_attention,
               (q, k, v, mask.keep, dmask, p), dtype=dtype, seed=seed,
               input_names=("q", "k", "v"), output_names=("output", "attn_weights"),
               output_quantities=("output", "attention_weights"),
               case=dict(shape=c[0], mask=mask.kind, fully_masked=mask.fully_masked_rows, p=p,
                         dtype=dtype, seed=seed))


@given(c=sdpa_cases(), dtype=S.dtypes(), seed=S.seeds())
def test_sdpa_pair_vs_torch_functional_sdpa(c, dtype, seed):
    """Against code nobody here wrote; F.scaled_dot_product_attention gives zeros on fully masked
    rows (safe softmax, torch >= 2.5)."""
    import torch.nn.functional as F

    from npformer.layers.attention import sdpa_backward, sdpa_forward

    (b, h, tq, tk, dk, dv), mask, _ = c
    rng = np.random.default_rng(seed)
    q, k = S.normal(rng, (b, h, tq, dk), dtype), S.normal(rng, (b, h, tk, dk), dtype)
    v = S.normal(rng, (b, h, tk, dv), dtype)

    def np_fwd(q, k, v, mask):
        (out, _weights), cache = sdpa_forward(q, k, v, mask)
        return out, cache

    def torch_fwd(q, k, v, mask):
        if mask is not None:
            mask = mask.expand(b, h, tq, tk) if mask.dim() == 4 else mask
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)

    check_pair(np_fwd, sdpa_backward, torch_fwd, (q, k, v, mask.keep), dtype=dtype, seed=seed,
               input_names=("q", "k", "v"),
               case=dict(shape=c[0], mask=mask.kind, fully_masked=mask.fully_masked_rows,
                         dtype=dtype, seed=seed))


@st.composite
def mha_cases(draw, cross: bool, dropout: bool):
    d_model, heads = draw(S.heads_and_width())
    b, tq = draw(S.batch_sizes()), draw(S.lengths())
    tk = draw(S.lengths()) if cross else tq
    kinds = ("none", "padding", "random", "random_2d") if cross else S.MASK_KINDS
    mask = draw(S.attention_masks(b, heads, tq, tk, kinds=kinds))
    p = draw(st.sampled_from((0.1, 0.5))) if dropout else 0.0
    return dict(d_model=d_model, heads=heads, b=b, tq=tq, tk=tk, mask=mask, p=p,
                bias=draw(st.booleans()))


def _run_mha(c, cross, dtype, seed):
    note_case(**c, cross=cross, dtype=dtype, seed=seed)
    rng = np.random.default_rng(seed)
    a, t = twins("attention.MultiHeadAttention", c["d_model"], c["heads"], dropout=c["p"],
                 bias=c["bias"], dtype=dtype, seed=seed)
    if c["bias"]:       # nonzero biases (init is zero), so bias bugs are visible
        for name, p in a.named_parameters():
            if name.endswith("bias"):
                p.data[...] = S.normal(rng, p.shape, dtype, 0.5)
    x = S.normal(rng, (c["b"], c["tq"], c["d_model"]), dtype)
    if cross:
        mem = S.normal(rng, (c["b"], c["tk"], c["d_model"]), dtype)
        args = (x, mem, S.normal(rng, mem.shape, dtype))
    else:
        args = (x, x, x)
    check_parity(a, t, args, {"mask": c["mask"].keep}, dtype=dtype, seed=seed,
                 input_names=("query", "key", "value"), train=c["p"] > 0,
                 skip=skip_attn_dropout)


@given(c=mha_cases(cross=False, dropout=False), dtype=S.dtypes(), seed=S.seeds())
def test_mha_self_attention(c, dtype, seed):
    _run_mha(c, False, dtype, seed)


@given(c=mha_cases(cross=True, dropout=False), dtype=S.dtypes(), seed=S.seeds())
def test_mha_cross_attention(c, dtype, seed):
    _run_mha(c, True, dtype, seed)


@given(c=mha_cases(cross=True, dropout=True) | mha_cases(cross=False, dropout=True),
       dtype=S.dtypes(), seed=S.seeds())
def test_mha_attention_dropout_replayed(c, dtype, seed):
    _run_mha(c, c["tq"] != c["tk"], dtype, seed)


@given(c=mha_cases(cross=True, dropout=False) | mha_cases(cross=False, dropout=False),
       dtype=S.dtypes(), seed=S.seeds())
def test_mha_fast_sdpa_path(c, dtype, seed):
    """torchformer's fused path (F.scaled_dot_product_attention, need_weights=False) gives the same
    output and gradients as npformer (no weights exist on that path to compare)."""
    note_case(**c, dtype=dtype, seed=seed)
    rng = np.random.default_rng(seed)
    a, t = twins("attention.MultiHeadAttention", c["d_model"], c["heads"], bias=c["bias"],
                 dtype=dtype, seed=seed)
    x = S.normal(rng, (c["b"], c["tq"], c["d_model"]), dtype)
    mem = S.normal(rng, (c["b"], c["tk"], c["d_model"]), dtype)
    t.need_weights = False
    r = check_parity(a, t, (x, mem, mem.copy()), {"mask": c["mask"].keep}, dtype=dtype,
                     seed=seed, input_names=("query", "key", "value"), attention=False,
                     explicit_attention=False, skip=skip_attn_dropout)
    assert t.attn_weights is None        # the fused path really ran
    assert r.numpy.attention             # while npformer produced its weights
