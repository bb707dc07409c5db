"""LayerNorm (module and pair), softmax and log_softmax pairs: npformer vs torchformer / torch."""
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from parity_tests.harness import note_case, tolerance
from parity_tests.harness import strategies as S
from parity_tests.harness.conditioning import layernorm_grad_kappa, layernorm_kappa
from parity_tests.harness.parity import check_pair, check_parity
from parity_tests.harness.tolerances import scaled
from parity_tests.harness.twins import twins
from parity_tests.harness.weights import perturb_parameters

shapes = st.lists(st.integers(1, 5), min_size=1, max_size=4).map(tuple)


def layernorm_tolerances(x, eps, gamma, upstream):
    """The table's tolerance times LayerNorm's condition number for these inputs (see
    harness/conditioning.py): rows with a large offset, a tiny spread or 1-2 features amplify
    rounding by up to max|x| / sqrt(eps); the table itself is measured on well-conditioned rows."""
    def tol_for(name, quantity, ref):
        base = tolerance(x.dtype, quantity)
        if name == "x.grad":
            return scaled(base, layernorm_grad_kappa(x, eps, upstream * gamma,
                                                     float(np.abs(ref).max(initial=0.0))))
        return scaled(base, layernorm_kappa(x, eps))
    return tol_for


@given(shape=shapes, eps=st.sampled_from((1e-5, 1e-6, 1e-3, 0.5)),
       scale=st.sampled_from((0.01, 1.0, 10.0)), offset=st.sampled_from((0.0, 3.0)),
       dtype=S.dtypes(), seed=S.seeds())
def test_layernorm_module(shape, eps, scale, offset, dtype, seed):
    note_case(shape=shape, eps=eps, scale=scale, offset=offset, dtype=dtype, seed=seed)
    rng = np.random.default_rng(seed)
    a, t = twins("layernorm.LayerNorm", shape[-1], eps=eps, dtype=dtype)
    perturb_parameters(a, rng)
    x = S.normal(rng, shape, dtype, scale) + S.normal(rng, shape[:-1] + (1,), dtype, offset)
    g = S.random_upstream(shape, dtype, rng)
    check_parity(a, t, (x,), dtype=dtype, seed=seed, input_names=("x",), upstream=g,
                 tol_for=layernorm_tolerances(x, eps, a.weight.data, g))


@given(shape=shapes, eps=st.sampled_from((1e-5, 1e-3)), dtype=S.dtypes(), seed=S.seeds())
def test_layernorm_pair_vs_torch_functional(shape, eps, dtype, seed):
    import torch.nn.functional as F

    from npformer.layers.layernorm import layernorm_backward, layernorm_forward

    rng = np.random.default_rng(seed)
    D = shape[-1]
    x = S.normal(rng, shape, dtype)
    gamma, beta = S.normal(rng, (D,), dtype) + 1, S.normal(rng, (D,), dtype)
    g = S.random_upstream(shape, dtype, rng)
    check_pair(lambda x, g, b: layernorm_forward(x, g, b, eps), layernorm_backward,
               lambda x, g, b: F.layer_norm(x, (D,), g, b, eps), (x, gamma, beta),
               dtype=dtype, seed=seed, input_names=("x", "weight", "bias"), upstream=g,
               tol_for=layernorm_tolerances(x, eps, gamma, g),
               case=dict(shape=shape, eps=eps, dtype=dtype, seed=seed))


@st.composite
def logits_with_masked_entries(draw):
    """Scores of a drawn shape and scale, some entries -inf (masked), never a whole -inf row
    (torch's softmax gives NaN there; npformer's attention handles such rows itself)."""
    shape = draw(shapes)
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    scale = draw(st.sampled_from((0.1, 1.0, 30.0)))
    masked = draw(st.booleans())
    return shape, axis, scale, masked


@given(c=logits_with_masked_entries(), log=st.booleans(), dtype=S.dtypes(), seed=S.seeds())
def test_softmax_and_log_softmax_pairs(c, log, dtype, seed):
    import torch

    from npformer.layers.softmax import log_softmax_backward, log_softmax_forward, softmax_backward, softmax_forward

    shape, axis, scale, masked = c
    rng = np.random.default_rng(seed)
    x = S.normal(rng, shape, dtype, scale)
    if masked:
        drop = rng.random(shape) < 0.3
        first = np.moveaxis(np.zeros(shape, bool), axis, -1)
        first[..., 0] = True                                  # one entry per row stays finite
        drop &= ~np.moveaxis(first, -1, axis)
        x = np.where(drop, -np.inf, x).astype(dtype)
    fwd, bwd = (log_softmax_forward, log_softmax_backward) if log else (softmax_forward,
                                                                         softmax_backward)
    tfn = torch.log_softmax if log else torch.softmax
    check_pair(lambda x: fwd(x, axis), bwd, lambda x: tfn(x, dim=axis), (x,), dtype=dtype,
               seed=seed, input_names=("x",),
               case=dict(shape=shape, axis=axis, scale=scale, masked=masked, log=log,
                         dtype=dtype, seed=seed))
