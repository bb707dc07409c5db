"""Embedding (scale, padding row) and both positional encodings (with offsets), each alone."""
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from parity_tests.harness import compare, note_case
from parity_tests.harness import strategies as S
from parity_tests.harness.parity import check_pair, check_parity
from parity_tests.harness.twins import twins


@st.composite
def embedding_cases(draw):
    vocab = draw(st.integers(1, 9))
    dim = draw(st.integers(1, 6))
    pad = draw(st.none() | st.integers(0, vocab - 1))
    lead = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    scale = draw(st.sampled_from((1.0, 2.0, 0.5)))
    return vocab, dim, pad, lead, scale


@given(c=embedding_cases(), dtype=S.dtypes(), seed=S.seeds())
def test_embedding_module(c, dtype, seed):
    vocab, dim, pad, lead, scale = c
    note_case(vocab=vocab, dim=dim, padding_idx=pad, lead=lead, scale=scale, dtype=dtype, seed=seed)
    rng = np.random.default_rng(seed)
    a, t = twins("embedding.Embedding", vocab, dim, padding_idx=pad, scale=scale, dtype=dtype,
                 seed=seed)
    ids = rng.integers(0, vocab, size=lead)          # repeats and the padding id included
    # the padding row's gradient must stay 0 (torch.nn.Embedding's padding_idx), others accumulate
    r = check_parity(a, t, (ids,), dtype=dtype, seed=seed)
    if pad is not None:
        assert not r.numpy.param_grads["weight"][pad].any()


@given(c=embedding_cases(), dtype=S.dtypes(), seed=S.seeds())
def test_embedding_pair(c, dtype, seed):
    import torch.nn.functional as F

    from npformer.layers.embedding import embedding_backward, embedding_forward

    vocab, dim, pad, lead, scale = c
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, vocab, size=lead)
    W = S.normal(rng, (vocab, dim), dtype)
    check_pair(lambda i, w: embedding_forward(i, w, scale, pad), embedding_backward,
               lambda i, w: F.embedding(i, w, padding_idx=pad) * scale, (ids, W), dtype=dtype,
               seed=seed, input_names=("weight",),
               case=dict(vocab=vocab, dim=dim, padding_idx=pad, lead=lead, scale=scale, seed=seed))


def _sinusoid_reference(max_len, d):
    """PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d)), written
    here from the paper's formula (column j uses the exponent of its even column 2*(j//2))."""
    pos = np.arange(max_len, dtype=np.float64)[:, None]
    j = np.arange(d)[None, :]
    angle = pos / 10000.0 ** ((2 * (j // 2)) / d)
    return np.where(j % 2 == 0, np.sin(angle), np.cos(angle))


@given(kind=S.positional_kinds(), d=st.integers(1, 7), b=S.batch_sizes(), t=S.lengths(),
       extra=st.integers(0, 3), offset=st.integers(0, 3), dtype=S.dtypes(), seed=S.seeds())
def test_positional_module(kind, d, b, t, extra, offset, dtype, seed):
    max_len = t + offset + extra
    note_case(kind=kind, d=d, b=b, t=t, max_len=max_len, offset=offset, dtype=dtype, seed=seed)
    rng = np.random.default_rng(seed)
    cls = "SinusoidalPositionalEncoding" if kind == "sinusoidal" else "LearnedPositionalEncoding"
    a, tm = twins(f"positional.{cls}", d, max_len, dtype=dtype, seed=seed)
    x = S.normal(rng, (b, t, d), dtype)
    check_parity(a, tm, (x,), {"offset": offset}, dtype=dtype, seed=seed, input_names=("x",))
    if kind == "sinusoidal":
        ref = _sinusoid_reference(max_len, d)
        compare("npformer pe table", a.pe, ref, dtype, "output", check_dtype=True)
        compare("torchformer pe table", tm.pe, ref, dtype, "output")
