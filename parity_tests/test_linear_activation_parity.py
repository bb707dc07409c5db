"""Linear and the three activations, each alone: npformer vs torchformer, float64 and float32."""
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from parity_tests.harness import note_case
from parity_tests.harness import strategies as S
from parity_tests.harness.parity import check_pair, check_parity
from parity_tests.harness.twins import twins


@st.composite
def leading_shapes(draw, max_dims=3):
    """Leading dims of an input (..., features): 0 to 3 of them (0: a 1-D input), size-1 included."""
    return tuple(draw(st.lists(st.integers(1, 4), min_size=0, max_size=max_dims)))


@given(lead=leading_shapes(), fin=st.integers(1, 7), fout=st.integers(1, 7), bias=st.booleans(),
       dtype=S.dtypes(), seed=S.seeds())
def test_linear_module(lead, fin, fout, bias, dtype, seed):
    note_case(lead=lead, fin=fin, fout=fout, bias=bias, dtype=dtype, seed=seed)
    rng = np.random.default_rng(seed)
    a, b = twins("linear.Linear", fin, fout, bias=bias, dtype=dtype, seed=seed)
    if bias:     # a nonzero bias, so a bias bug shows in the output
        a.bias.data[...] = S.normal(rng, (fout,), dtype)
    x = S.normal(rng, lead + (fin,), dtype)
    check_parity(a, b, (x,), dtype=dtype, seed=seed, input_names=("x",))


@given(lead=leading_shapes(), fin=st.integers(1, 6), fout=st.integers(1, 6), bias=st.booleans(),
       dtype=S.dtypes(), seed=S.seeds())
def test_linear_pair(lead, fin, fout, bias, dtype, seed):
    import torch.nn.functional as F

    from npformer.layers.linear import linear_backward, linear_forward

    rng = np.random.default_rng(seed)
    x = S.normal(rng, lead + (fin,), dtype)
    W = S.normal(rng, (fout, fin), dtype)
    b = S.normal(rng, (fout,), dtype) if bias else None
    check_pair(linear_forward, linear_backward, F.linear, (x, W, b), dtype=dtype, seed=seed,
               input_names=("x", "weight", "bias"),
               case=dict(lead=lead, fin=fin, fout=fout, bias=bias, seed=seed))


@given(name=S.activations(), shape=st.lists(st.integers(1, 5), min_size=1, max_size=4),
       scale=st.sampled_from((0.1, 1.0, 4.0)), dtype=S.dtypes(), seed=S.seeds())
def test_activation_module(name, shape, scale, dtype, seed):
    note_case(name=name, shape=shape, scale=scale, dtype=dtype, seed=seed)
    rng = np.random.default_rng(seed)
    a, b = twins("activations.Activation", name)
    x = S.normal(rng, tuple(shape), dtype, scale)
    check_parity(a, b, (x,), dtype=dtype, seed=seed, input_names=("x",))


def test_activation_at_special_points():
    """0 (ReLU's kink: gradient 0, as torch), large |x| (erf tails), exactly representable points."""
    import torch

    from npformer.layers.activations import ACTIVATION_PAIRS

    ref = {"relu": torch.nn.ReLU(), "gelu": torch.nn.GELU(), "gelu_tanh": torch.nn.GELU("tanh")}
    for dtype in ("float64", "float32"):
        x = np.array([0.0, -0.0, 1e-30, -1e-8, 1.0, -1.0, 3.0, -3.0, 6.0, -6.0, 10.0, -10.0,
                      30.0, -30.0], dtype=dtype)
        for name, (fwd, bwd) in ACTIVATION_PAIRS.items():
            check_pair(fwd, bwd, ref[name], (x,), dtype=dtype, seed=1, input_names=("x",),
                       case=dict(name=name, dtype=dtype))
