"""An independent gradient check of every exported component and model, through the public API only.

Written as a user would: `import npformer as nf`, build a module in float64, run a forward, pick a
random upstream gradient g, call backward, and compare what backward returned and every parameter's
accumulated `.grad` with finite differences of

    f = sum(forward(...) * g)

computed HERE (not with npformer.checks.gradcheck, so the check does not share code with what it checks).

Finite differences: the fourth-order central stencil

    f'(z) ~ (f(z - 2h) - 8 f(z - h) + 8 f(z + h) - f(z + 2h)) / (12 h),    h = 1e-4

Its truncation error is O(h^4) (~1e-16 here) and its rounding error ~ 1e-16 |f| / h (~1e-11), so the
estimate sits orders of magnitude below the bound it is judged against (observed errors: 1e-13 to
4e-9, the largest on key-projection biases, whose true gradient is zero, judged against the floor).
A different stencil and step from npformer.checks.gradcheck's
(second order, h = 1e-5), on purpose.
h is small enough that no step of 2h crosses a ReLU kink at the seeds used here (with h = 1e-3 some
ReLU models do cross one and disagree by 1e-2: a kink, not a bug). Entries are restored bit for bit.

Error per tensor (input or parameter), over the entries checked:

    err = max|a - n| / max(max|a|, max|n|, FLOOR * S)

a = analytic (backward), n = numerical, S = the largest |n| over every entry of the whole check
(a numerical quantity, so not taken from the code under test), FLOOR = 1e-3. The floor matters only
for tensors whose true gradient is zero or tiny (k_proj.bias: softmax is shift invariant, so the key
bias gets exactly no gradient): they are judged against the check's own scale instead of dividing
rounding noise by rounding noise. Bound: err <= 1e-6 for every tensor (the project's float64 bound).

Big tensors are sampled (a seeded random subset plus the entry of largest |a|); small ones are checked
whole. Dropout stays active: the masks of the first forward are recorded with nf.collect_dropout_masks
and replayed with nf.replay_dropout_masks before every later forward, so f is one fixed function.
Parameters are jittered away from their initial values first (unit LayerNorm gains and zero biases
would hide a backward that forgets them).
"""
from __future__ import annotations

import numpy as np
import pytest

import npformer as nf

TOL = 1e-6          # the project's bound, float64
FLOOR = 1e-3        # relative to the check's largest numerical gradient (see the docstring)
H = 1e-4            # finite-difference step of the fourth-order stencil
F64 = np.float64


# ==================================================================================================
# the independent checker
# ==================================================================================================
def numeric(f, arr: np.ndarray, flat: np.ndarray, h: float = H) -> np.ndarray:
    """Fourth-order central differences of f() with respect to arr.flat[flat], perturbing in place."""
    out = np.empty(len(flat))
    view = arr.reshape(-1)                       # a view (arrays here are contiguous)
    assert np.shares_memory(view, arr)
    for k, i in enumerate(flat):
        old = view[i]
        vals = []
        for step in (-2.0, -1.0, 1.0, 2.0):
            view[i] = old + step * h
            vals.append(f())
        view[i] = old                            # exact restore
        fm2, fm1, fp1, fp2 = vals
        out[k] = (fm2 - 8.0 * fm1 + 8.0 * fp1 - fp2) / (12.0 * h)
    return out


def pick(size: int, analytic: np.ndarray, rng: np.random.Generator, limit: int | None,
         exclude=()) -> np.ndarray:
    """Flat indices to check: all of them, or `limit` random ones plus the largest |analytic|."""
    cand = np.setdiff1d(np.arange(size), np.asarray(list(exclude), dtype=int))
    if limit is None or cand.size <= limit:
        return cand
    chosen = rng.choice(cand, size=limit - 1, replace=False)
    a = np.abs(analytic.reshape(-1)[cand])
    return np.unique(np.append(chosen, cand[int(np.argmax(a))]))


def fd_errors(f, targets: dict, analytic: dict, *, limit: int | None = None, seed: int = 0,
              exclude: dict | None = None) -> dict:
    """{name: err} (definition in the module docstring) for targets {name: array perturbed in place}
    against analytic {name: gradient of the same shape}."""
    exclude = exclude or {}
    rng = np.random.default_rng(seed)
    nums, ana = {}, {}
    for name, arr in targets.items():
        a = np.asarray(analytic[name])
        assert isinstance(arr, np.ndarray) and arr.dtype == F64, name
        assert a.shape == arr.shape, f"{name}: gradient shape {a.shape} != input shape {arr.shape}"
        assert np.isfinite(a).all(), f"{name}: non-finite analytic gradient"
        flat = pick(arr.size, a, rng, limit, exclude.get(name, ()))
        nums[name] = numeric(f, arr, flat)
        ana[name] = a.reshape(-1)[flat]
    S = max([float(np.max(np.abs(n))) for n in nums.values() if n.size] + [0.0])
    assert S > 0, "every numerical gradient is zero: the check would be vacuous"
    errs = {}
    for name in targets:
        a, n = ana[name], nums[name]
        if a.size == 0:
            continue
        den = max(float(np.max(np.abs(a))), float(np.max(np.abs(n))), FLOOR * S)
        errs[name] = float(np.max(np.abs(a - n))) / den
    return errs


def assert_close(errs: dict, tol: float = TOL) -> None:
    bad = {k: e for k, e in errs.items() if not e <= tol}
    assert not bad, f"gradient mismatch (tol {tol}): {bad}; all: {errs}"


def jitter(module, seed: int = 0, scale: float = 0.2):
    rng = np.random.default_rng(1000 + seed)
    for _, p in module.named_parameters():
        p.data += scale * rng.standard_normal(p.data.shape)
    return module


def rand(rng, *shape):
    return rng.standard_normal(shape)


def module_check(module, call, inputs: dict, *, combine=None, limit=None, seed=0,
                 exclude_params=None, output_index=None):
    """Forward, random g, backward; finite-difference the float inputs and every parameter.

    call(module, **inputs) runs the forward. `combine(grads) -> {input name: gradient}` maps what
    backward returned onto the input names (default: a single array for the single float input).
    Returns the errors dict. Also asserts every named parameter was checked.
    """
    module.zero_grad()
    out = call(module, **inputs)
    assert out.dtype == F64
    g = np.random.default_rng(seed + 77).standard_normal(out.shape)     # random upstream, never ones
    masks = nf.collect_dropout_masks(module)
    grads = module.backward(g)
    if combine is None:
        (name,) = [k for k, v in inputs.items() if isinstance(v, np.ndarray) and v.dtype == F64]

        def combine(gr, _n=name):
            return {_n: gr}
    analytic = {k: np.array(v, copy=True) for k, v in combine(grads).items()}
    params = dict(module.named_parameters())
    for n, p in params.items():
        analytic[n] = p.grad.copy()
    targets = {k: inputs[k] for k in analytic if k in inputs}
    targets.update({n: p.data for n, p in params.items()})
    assert set(targets) == set(analytic)

    def f():
        if masks:
            nf.replay_dropout_masks(module, masks)
        return float(np.sum(call(module, **inputs) * g))

    assert f() == pytest.approx(float(np.sum(out * g)), rel=1e-13, abs=1e-13), \
        "forward not reproducible with the replayed dropout masks"
    errs = fd_errors(f, targets, analytic, limit=limit, seed=seed, exclude=exclude_params)
    checked = set(errs)
    assert set(params) <= checked | set(exclude_params or {}), "a parameter went unchecked"
    return errs


# ==================================================================================================
# functional pairs
# ==================================================================================================
def pair_check(forward, backward, arrays: dict, grad_names, *, pick_out=None, seed=0,
               exclude=None, g_mask=None):
    """forward(**arrays) -> (out, cache); backward(g, cache) -> grads aligned with grad_names."""
    out, cache = forward(**arrays)
    if pick_out is not None:
        out = out[pick_out]
    g = np.random.default_rng(seed + 5).standard_normal(np.shape(out))
    if g_mask is not None:
        g = g * g_mask
    grads = backward(g if np.ndim(out) else np.asarray(g), cache)
    if len(grad_names) == 1 and isinstance(grads, np.ndarray):
        grads = (grads,)
    analytic = {n: np.array(gr) for n, gr in zip(grad_names, grads) if n is not None}

    def f():
        o = forward(**arrays)[0]
        o = o if pick_out is None else o[pick_out]
        return float(np.sum(np.where(g != 0, o, 0) * g))      # -inf outputs with g = 0 add nothing

    targets = {n: arrays[n] for n in analytic}
    return fd_errors(f, targets, analytic, seed=seed, exclude=exclude)


def test_pair_linear():
    rng = np.random.default_rng(1)
    arrays = dict(x=rand(rng, 2, 3, 4), W=rand(rng, 5, 4), b=rand(rng, 5))
    assert_close(pair_check(lambda x, W, b: nf.linear_forward(x, W, b), nf.linear_backward, arrays,
                            ["x", "W", "b"]))


def test_pair_linear_without_bias():
    rng = np.random.default_rng(2)
    arrays = dict(x=rand(rng, 3, 4), W=rand(rng, 2, 4))
    out, cache = nf.linear_forward(arrays["x"], arrays["W"], None)
    assert nf.linear_backward(np.ones_like(out), cache)[2] is None
    assert_close(pair_check(lambda x, W: nf.linear_forward(x, W, None), nf.linear_backward, arrays,
                            ["x", "W"]))


def test_pair_embedding_padding_row_gets_nothing():
    rng = np.random.default_rng(3)
    ids = np.array([[1, 4, 4, 0], [2, 0, 3, 4]])
    W = rand(rng, 6, 5)
    out, cache = nf.embedding_forward(ids, W, 2.5, 0)
    assert np.array_equal(out, W[ids] * 2.5)
    dW = nf.embedding_backward(rng.standard_normal(out.shape), cache)
    assert np.all(dW[0] == 0)                                        # padding row: no gradient
    errs = pair_check(lambda W: nf.embedding_forward(ids, W, 2.5, 0), nf.embedding_backward,
                      {"W": W}, ["W"], exclude={"W": range(0, 5)})   # row 0 = entries 0..4
    assert_close(errs)


def test_pair_dropout_with_given_mask():
    rng = np.random.default_rng(4)
    x = rand(rng, 3, 7)
    mask = rng.random(x.shape) >= 0.3
    errs = pair_check(lambda x: nf.dropout_forward(x, 0.3, mask), nf.dropout_backward, {"x": x},
                      ["x"])
    assert_close(errs)


@pytest.mark.parametrize("name", ["relu", "gelu", "gelu_tanh"])
def test_pair_activations(name):
    rng = np.random.default_rng(5)
    x = rand(rng, 4, 6) * 3
    x = np.where(np.abs(x) < 0.05, 0.5, x)                   # keep ReLU's kink out of reach of 2h
    fwd, bwd = getattr(nf, f"{name}_forward"), getattr(nf, f"{name}_backward")
    assert_close(pair_check(lambda x: fwd(x), bwd, {"x": x}, ["x"]))


def test_pair_layernorm():
    rng = np.random.default_rng(6)
    arrays = dict(x=rand(rng, 2, 3, 5) * 2 + 1, gamma=rand(rng, 5), beta=rand(rng, 5))
    assert_close(pair_check(lambda x, gamma, beta: nf.layernorm_forward(x, gamma, beta, 1e-5),
                            nf.layernorm_backward, arrays, ["x", "gamma", "beta"]))


@pytest.mark.parametrize("which", ["softmax", "log_softmax"])
@pytest.mark.parametrize("axis", [-1, 0])
def test_pair_softmax_with_large_and_masked_logits(which, axis):
    rng = np.random.default_rng(7)
    x = rand(rng, 4, 5) * 3
    if axis == -1:
        x[1] += 1000.0                                       # one whole softmax row shifted:
    else:                                                    # large logits, no overflow
        x[:, 1] += 1000.0
    fwd, bwd = getattr(nf, f"{which}_forward"), getattr(nf, f"{which}_backward")
    assert_close(pair_check(lambda x: fwd(x, axis=axis), bwd, {"x": x}, ["x"]))

    # -inf entries: probability 0, gradient exactly 0 there; finite entries still right
    xm = rand(rng, 4, 5)
    ninf = np.zeros_like(xm, bool)
    ninf[0, 1] = ninf[2, 3] = ninf[3, 0] = True
    xm[ninf] = -np.inf
    out, cache = fwd(xm, axis=axis)
    g = rng.standard_normal(out.shape) * ~ninf
    dx = bwd(g, cache)
    assert np.isfinite(dx).all() and np.all(dx[ninf] == 0)
    flat_ninf = np.flatnonzero(ninf)
    errs = pair_check(lambda x: fwd(x, axis=axis), bwd, {"x": xm}, ["x"],
                      exclude={"x": flat_ninf}, g_mask=~ninf)
    assert_close(errs)


def test_softmax_fully_masked_row_is_zero_with_zero_gradient():
    x = np.array([[-np.inf, -np.inf, -np.inf], [0.0, 1.0, -np.inf]])
    y, cache = nf.softmax_forward(x)
    assert np.all(y[0] == 0) and np.isfinite(y).all()
    dx = nf.softmax_backward(np.array([[1.0, -2.0, 3.0], [0.5, 0.25, 0.0]]), cache)
    assert np.all(dx[0] == 0) and np.isfinite(dx).all()


@pytest.mark.parametrize("case", ["plain", "padding", "causal_fully_masked", "cross_dropout"])
def test_pair_sdpa(case):
    rng = np.random.default_rng(8)
    B, Hh, Tq, Tk, dk, dv = 2, 2, 3, 4, 5, 3
    if case != "cross_dropout":
        Tk = Tq
    q, k, v = rand(rng, B, Hh, Tq, dk), rand(rng, B, Hh, Tk, dk), rand(rng, B, Hh, Tk, dv)
    mask, dmask, p = None, None, 0.0
    if case == "padding":
        mask = np.array([[1, 1, 0], [1, 1, 1]], bool)[:, None, None, :]            # (B,1,1,Tk)
    elif case == "causal_fully_masked":
        mask = nf.causal_mask(Tq, Tq) & np.array([True, False])[:, None, None, None]  # batch 1 empty
    elif case == "cross_dropout":
        mask = nf.causal_mask(Tq, Tk).astype(np.int64)                              # 0/1 ints
        mask[..., 0, :] = 0                                                         # query 0: none
        p = 0.25
        dmask = rng.random((B, Hh, Tq, Tk)) >= p

    def fwd(q, k, v):
        return nf.sdpa_forward(q, k, v, mask=mask, dropout_mask=dmask, dropout_p=p)

    (out, w), cache = fwd(q, k, v)
    assert np.isfinite(out).all() and np.isfinite(w).all()
    if case == "causal_fully_masked":
        assert np.all(w[1] == 0) and np.all(out[1] == 0)
    if case == "cross_dropout":
        assert np.all(w[:, :, 0] == 0) and np.all(out[:, :, 0] == 0)
    errs = pair_check(fwd, nf.sdpa_backward, dict(q=q, k=k, v=v), ["q", "k", "v"], pick_out=0)
    assert_close(errs)
    # a fully masked batch entry passes exactly zero gradient to q, k and v
    if case == "causal_fully_masked":
        dq, dk_, dv_ = nf.sdpa_backward(rng.standard_normal(out.shape), cache)
        assert np.all(dq[1] == 0) and np.all(dk_[1] == 0) and np.all(dv_[1] == 0)


@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_pair_cross_entropy(smoothing):
    rng = np.random.default_rng(9)
    logits = rand(rng, 6, 4) * 2
    targets = np.array([1, -100, 3, 0, -100, 2])

    def fwd(logits):
        return nf.cross_entropy_forward(logits, targets, -100, smoothing)

    loss, cache = fwd(logits)
    # reference value written here: torch's semantics, mean over counted rows
    lp = logits - logits.max(1, keepdims=True)
    lp = lp - np.log(np.exp(lp).sum(1, keepdims=True))
    keep = targets != -100
    ref = -((1 - smoothing) * lp[keep, targets[keep]] + smoothing * lp[keep].mean(1)).mean()
    assert float(loss) == pytest.approx(ref, rel=1e-12)
    assert_close(pair_check(fwd, nf.cross_entropy_backward, {"logits": logits}, ["logits"]))


# ==================================================================================================
# modules, one by one
# ==================================================================================================
def call1(m, x):
    return m(x)


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("shape", [(2, 3, 4), (5, 4)])
def test_linear(bias, shape):
    rng = np.random.default_rng(10)
    m = jitter(nf.Linear(4, 3, bias=bias, dtype="float64", rng=np.random.default_rng(0)))
    assert [n for n, _ in m.named_parameters()] == (["weight", "bias"] if bias else ["weight"])
    assert m.weight.data.shape == (3, 4)                               # torch layout (out, in)
    x = rand(rng, *shape)
    assert np.allclose(m(x), x @ m.weight.data.T + (m.bias.data if bias else 0), rtol=0, atol=1e-14)
    assert_close(module_check(m, call1, {"x": x}))


def test_linear_accumulates_over_two_backwards():
    rng = np.random.default_rng(11)
    m = nf.Linear(3, 2, dtype="float64")
    x1, x2 = rand(rng, 4, 3), rand(rng, 4, 3)
    g1, g2 = rand(rng, 4, 2), rand(rng, 4, 2)
    m(x1), m.backward(g1)
    m(x2), m.backward(g2)
    assert np.allclose(m.weight.grad, g1.T @ x1 + g2.T @ x2, rtol=0, atol=1e-13)
    m.zero_grad()
    assert np.all(m.weight.grad == 0) and np.all(m.bias.grad == 0)


def test_embedding_module():
    m = jitter(nf.Embedding(7, 4, padding_idx=2, scale=1.7, dtype="float64",
                            rng=np.random.default_rng(0)))
    ids = np.array([[1, 2, 6], [2, 5, 1]])
    m.zero_grad()
    out = m(ids)
    assert np.array_equal(out, m.weight.data[ids] * 1.7)
    g = np.random.default_rng(12).standard_normal(out.shape)
    assert m.backward(g) is None
    assert np.all(m.weight.grad[2] == 0)
    W = m.weight.data

    def f():
        return float(np.sum(m(ids) * g))

    errs = fd_errors(f, {"weight": W}, {"weight": m.weight.grad.copy()},
                     exclude={"weight": range(8, 12)})                 # row 2 by design
    assert_close(errs)


@pytest.mark.parametrize("kind", ["sinusoidal", "learned"])
@pytest.mark.parametrize("offset", [0, 2])
def test_positional(kind, offset):
    rng = np.random.default_rng(13)
    if kind == "sinusoidal":
        m = nf.SinusoidalPositionalEncoding(6, max_len=9, dtype="float64")
        pos, i = np.arange(9)[:, None], np.arange(0, 6, 2)[None, :]
        ref = np.zeros((9, 6))
        ref[:, 0::2] = np.sin(pos / 10000 ** (i / 6))
        ref[:, 1::2] = np.cos(pos / 10000 ** (i / 6))
        assert np.allclose(m.pe, ref, rtol=0, atol=1e-12)
        assert np.allclose(nf.sinusoidal_table(9, 6, "float64"), ref, rtol=0, atol=1e-12)
    else:
        m = nf.LearnedPositionalEncoding(6, max_len=9, dtype="float64", rng=np.random.default_rng(0))
    x = rand(rng, 2, 4, 6)
    errs = module_check(m, lambda mod, x: mod(x, offset=offset), {"x": x})
    assert_close(errs)
    if kind == "learned":
        unused = np.r_[0:offset, offset + 4:9]
        assert np.all(m.weight.grad[unused] == 0)


def test_dropout_module_with_replayed_mask():
    m = nf.Dropout(0.4, rng=np.random.default_rng(3))
    x = rand(np.random.default_rng(14), 3, 5, 2)
    y = m(x)
    assert m.last_mask is not None and m.last_mask.dtype == bool
    assert np.array_equal(y, np.where(m.last_mask, x / 0.6, 0))
    assert_close(module_check(m, call1, {"x": x}))
    m.eval()
    assert m(x) is x or np.array_equal(m(x), x)


@pytest.mark.parametrize("name", ["relu", "gelu", "gelu_tanh"])
def test_activation_module(name):
    x = rand(np.random.default_rng(15), 3, 4) * 2
    x = np.where(np.abs(x) < 0.05, -0.7, x)
    assert_close(module_check(nf.Activation(name), call1, {"x": x}))


def test_layernorm_module():
    m = jitter(nf.LayerNorm(5, eps=1e-5, dtype="float64"))
    x = rand(np.random.default_rng(16), 2, 3, 5) * 3 + 2
    y = m(x)
    ref = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    assert np.allclose(y, ref * m.weight.data + m.bias.data, rtol=0, atol=1e-12)
    assert_close(module_check(m, call1, {"x": x}))


def mha_call(m, query, key, value, mask=None):
    return m(query, key, value, mask)


def mha_grads(gr):
    return dict(zip(("query", "key", "value"), gr))


@pytest.mark.parametrize("case", ["self_padding", "self_causal", "cross_fully_masked",
                                  "cross_dropout", "no_bias"])
def test_multi_head_attention(case):
    rng = np.random.default_rng(17)
    B, Tq, Tk, D = 2, 3, 4, 8
    drop = 0.3 if case == "cross_dropout" else 0.0
    m = jitter(nf.MultiHeadAttention(D, 2, dropout=drop, bias=case != "no_bias", dtype="float64",
                                     rng=np.random.default_rng(0)))
    mask = None
    if case.startswith("self") or case == "no_bias":
        Tk = Tq
    if case == "self_padding":
        mask = nf.padding_mask(np.array([[5, 6, 0], [1, 2, 3]]), 0)         # (B, 1, 1, T)
    elif case == "self_causal":
        mask = nf.causal_mask(Tq)                                          # (1, 1, T, T)
    elif case == "cross_fully_masked":
        mask = np.ones((B, 1, Tq, Tk), bool)
        mask[0, 0, 1, :] = False                                           # a fully masked row
        mask[1, 0, :, 3] = False
    elif case == "cross_dropout":
        mask = nf.causal_mask(Tq, Tk)
    inputs = dict(query=rand(rng, B, Tq, D), key=rand(rng, B, Tk, D), value=rand(rng, B, Tk, D))
    errs = module_check(m, lambda mod, **kw: mha_call(mod, mask=mask, **kw), inputs,
                        combine=mha_grads)
    assert_close(errs)
    w = m.attn_weights
    assert w.shape == (B, 2, Tq, Tk) and np.isfinite(w).all()
    if case == "cross_fully_masked":
        assert np.all(w[0, :, 1] == 0)
    if "bias" in dict(m.k_proj.named_parameters()):                       # zero in theory
        assert np.max(np.abs(m.k_proj.bias.grad)) < 1e-12 * max(1.0, np.abs(m.v_proj.bias.grad).max())


def test_multi_head_self_attention_one_tensor():
    """query is key is value: the true gradient of x is the sum of the three."""
    m = jitter(nf.MultiHeadAttention(6, 3, dtype="float64", rng=np.random.default_rng(1)))
    x = rand(np.random.default_rng(18), 2, 4, 6)
    errs = module_check(m, lambda mod, x: mod(x, x, x, nf.causal_mask(4)), {"x": x},
                        combine=lambda gr: {"x": gr[0] + gr[1] + gr[2]})
    assert_close(errs)


@pytest.mark.parametrize("act", ["relu", "gelu", "gelu_tanh"])
def test_feed_forward(act):
    m = jitter(nf.PositionwiseFeedForward(6, 10, activation=act, dropout=0.25, dtype="float64",
                                          rng=np.random.default_rng(2)))
    m.dropout.rng = np.random.default_rng(4)
    x = rand(np.random.default_rng(19), 2, 3, 6)
    errs = module_check(m, call1, {"x": x})
    assert_close(errs)
    assert m.dropout.last_mask is not None and not m.dropout.last_mask.all()


def cfg(**changes):
    base = dict(d_model=8, num_heads=2, d_ff=12, num_encoder_layers=2, num_decoder_layers=2,
                max_len=7, vocab_size=13, pad_id=0, num_classes=3, dropout=0.0, dtype="float64")
    base.update(changes)
    return nf.TransformerConfig(**base)


DROPS = dict(dropout=0.2, attention_dropout=0.15, activation_dropout=0.1)

LAYOUTS = {
    "paper": dict(),
    "paper_dropout": dict(DROPS),
    "pre_gelu_final": dict(norm_first=True, activation="gelu", final_norm=True, **DROPS),
    "pre_tanh_nobias": dict(norm_first=True, activation="gelu_tanh", bias=False),
}


def seed_dropouts(module, seed):
    """Give each Dropout of a bare layer/stack one generator (models do this themselves)."""
    rng = np.random.default_rng(seed)
    for _, m in module.named_modules():
        if isinstance(m, nf.Dropout):
            m.rng = rng


# every layout as a single layer; the two stacks (two layers, final norm or not) with dropout active
LAYER_CASES = [(layout, False) for layout in LAYOUTS] + [("paper_dropout", True),
                                                         ("pre_gelu_final", True)]


@pytest.mark.parametrize("layout, stack", LAYER_CASES)
def test_encoder(layout, stack):
    c = cfg(**LAYOUTS[layout])
    m = (nf.Encoder if stack else nf.EncoderLayer)(c, rng=np.random.default_rng(3))
    jitter(m)
    seed_dropouts(m, 5)
    x = rand(np.random.default_rng(20), 2, 4, 8)
    mask = nf.padding_mask(np.array([[3, 4, 0, 0], [0, 0, 0, 0]]), 0)   # batch 1: every key masked
    errs = module_check(m, lambda mod, x: mod(x, mask), {"x": x}, limit=4)
    assert_close(errs)


@pytest.mark.parametrize("layout, stack", LAYER_CASES)
@pytest.mark.parametrize("cross", [True, False])
def test_decoder(layout, stack, cross):
    c = cfg(**LAYOUTS[layout])
    cls = nf.Decoder if stack else nf.DecoderLayer
    m = cls(c, cross_attention=cross, rng=np.random.default_rng(4))
    jitter(m)
    seed_dropouts(m, 6)
    rng = np.random.default_rng(21)
    B, T, S = 2, 3, 5
    self_mask = nf.causal_mask(T) & nf.padding_mask(np.array([[1, 1, 0], [1, 1, 1]]), 0)
    inputs = {"x": rand(rng, B, T, 8)}
    if cross:
        inputs["memory"] = rand(rng, B, S, 8)
        memory_mask = nf.padding_mask(np.array([[1, 1, 1, 0, 0], [0, 0, 0, 0, 0]]), 0)  # empty
    else:
        memory_mask = None

    def call(mod, x, memory=None):
        return mod(x, memory, self_mask, memory_mask)

    def combine(gr):
        dx, dmem = gr
        out = {"x": dx}
        if cross:
            out["memory"] = dmem
        else:
            assert dmem is None
        return out

    assert_close(module_check(m, call, inputs, combine=combine, limit=4))


# ==================================================================================================
# models: parameters and the first layers' input gradients
# ==================================================================================================
def expected_table_grad(model, side: str, d_input: np.ndarray) -> np.ndarray:
    """d f / d pos-table rows 0..T-1 implied by the returned first-layer input gradient:
    x = dropout(pos(embed)) so d/dtable[t] = sum_b dropout_backward(d_input)[b, t]."""
    drop = getattr(model, f"{side}_dropout")
    mask = nf.collect_dropout_masks(model).get(f"{side}_dropout")
    g = d_input if mask is None else d_input * mask / (1.0 - drop.p)
    return g.sum(axis=0)                                              # (T, D)


def model_check(model, call, ids: dict, *, input_keys: dict, limit=3, seed=0):
    """Every parameter by finite differences, and each returned input gradient through the
    positional table it is added to (sinusoidal: `.pe`, a plain array; learned: `.weight`)."""
    model.zero_grad()
    out = call(model, **ids)
    g = np.random.default_rng(seed + 99).standard_normal(out.shape)
    masks = nf.collect_dropout_masks(model)
    grads = model.backward(g)
    assert isinstance(grads, dict) and set(grads) == {k for k, _ in input_keys.values()}
    params = dict(model.named_parameters())
    analytic = {n: p.grad.copy() for n, p in params.items()}
    targets = {n: p.data for n, p in params.items()}
    exclude = {}
    for side, (key, ids_name) in input_keys.items():
        pos = getattr(model, f"{side}_pos")
        T = ids[ids_name].shape[1]
        want = expected_table_grad(model, side, grads[key])           # (T, D)
        if isinstance(pos, nf.SinusoidalPositionalEncoding):
            table = np.zeros_like(pos.pe)
            table[:T] = want
            targets[f"{side}_pos.pe"] = pos.pe
            analytic[f"{side}_pos.pe"] = table
        else:
            # the learned table's .grad must be exactly what the input gradient implies
            assert np.allclose(pos.weight.grad[:T], want, rtol=1e-12, atol=1e-14)
    # padding rows get no gradient through the lookup; where the pad id is among the inputs the
    # finite difference sees that lookup, so those entries are left out (and must be exactly 0
    # when the row has no other use)
    pad = model.config.pad_id
    if pad is not None:
        for name, m in model.named_modules():
            if isinstance(m, nf.Embedding):
                used = any(np.any(v == pad) for v in ids.values())
                wname = next(n for n, p in params.items() if p is m.weight)
                if used:
                    D = m.weight.data.shape[1]
                    exclude[wname] = range(pad * D, (pad + 1) * D)
                    if not model.config.tie_embeddings:
                        assert np.all(m.weight.grad[pad] == 0)

    def f():
        if masks:
            nf.replay_dropout_masks(model, masks)
        return float(np.sum(call(model, **ids) * g))

    assert f() == pytest.approx(float(np.sum(out * g)), rel=1e-13, abs=1e-13)
    errs = fd_errors(f, targets, analytic, limit=limit, seed=seed, exclude=exclude)
    assert set(params) <= set(errs)
    return errs


SRC = np.array([[3, 4, 5, 6, 2], [7, 8, 9, 0, 0]])
SRC_ALL_PAD = np.array([[3, 4, 5, 6, 2], [0, 0, 0, 0, 0]])            # batch 1: fully masked rows
TGT = np.array([[1, 2, 3, 4], [5, 6, 0, 0]])

TRANSFORMERS = {
    "paper_dropout": (dict(DROPS), SRC, TGT, False),
    "pre_gelu_learned_tied_shared": (dict(norm_first=True, activation="gelu", positional="learned",
                                          final_norm=True, tie_embeddings=True,
                                          share_embeddings=True, output_bias=False,
                                          num_encoder_layers=1, num_decoder_layers=1, **DROPS),
                                     SRC, TGT, False),
    "tanh_vocabs_all_pad_src": (dict(activation="gelu_tanh", src_vocab_size=11, tgt_vocab_size=9,
                                     scale_embeddings=False, num_encoder_layers=1,
                                     num_decoder_layers=1), SRC_ALL_PAD, TGT, False),
    "no_pad_explicit_masks": (dict(pad_id=None, bias=False, num_encoder_layers=1,
                                   num_decoder_layers=1), SRC, TGT, True),
}


@pytest.mark.parametrize("name", TRANSFORMERS)
def test_transformer(name):
    changes, src, tgt, explicit = TRANSFORMERS[name]
    model = jitter(nf.Transformer(cfg(**changes), seed=3))
    if explicit:
        src_mask = np.array([True, False])[:, None, None, None] & np.ones((1, 1, 1, 5), bool)
        src_mask = src_mask.copy()
        src_mask[0, ..., 4] = False                                     # batch 1: all masked
        tgt_mask = nf.causal_mask(4)

        def call(m, src, tgt):
            return m(src, tgt, src_mask, tgt_mask)
    else:
        def call(m, src, tgt):
            return m(src, tgt)
    errs = model_check(model, call, {"src": src, "tgt": tgt},
                       input_keys={"src": ("encoder_input", "src"), "tgt": ("decoder_input", "tgt")})
    assert_close(errs)
    if model.config.tie_embeddings:
        assert model.output_proj.weight is model.tgt_embed.weight
    if model.config.share_embeddings:
        assert model.src_embed.weight is model.tgt_embed.weight


CLASSIFIERS = {
    "first_post_relu": dict(pooling="first"),
    "mean_pre_learned_dropout": dict(pooling="mean", norm_first=True, positional="learned",
                                     final_norm=True, activation="gelu", **DROPS),
}


@pytest.mark.parametrize("name", CLASSIFIERS)
def test_encoder_classifier(name):
    model = jitter(nf.EncoderClassifier(cfg(**CLASSIFIERS[name]), seed=4))
    errs = model_check(model, lambda m, src: m(src), {"src": SRC},
                       input_keys={"src": ("encoder_input", "src")})
    assert_close(errs)


CAUSAL = {
    "gpt2_layout_dropout": dict(norm_first=True, activation="gelu_tanh", positional="learned",
                                final_norm=True, scale_embeddings=False, tie_embeddings=True,
                                pad_id=None, **DROPS),
    "paper_layout_padding": dict(num_decoder_layers=1),
    "tied_with_padding": dict(tie_embeddings=True, activation="gelu"),
}


@pytest.mark.parametrize("name", CAUSAL)
def test_causal_lm(name):
    model = jitter(nf.CausalLM(cfg(**CAUSAL[name]), seed=5))
    ids = np.array([[1, 2, 3, 4, 5], [6, 7, 8, 0, 0]])
    if model.config.pad_id is None:
        ids = ids + 1
    errs = model_check(model, lambda m, ids: m(ids), {"ids": ids},
                       input_keys={"tgt": ("decoder_input", "ids")})
    assert_close(errs)


def test_causal_lm_tied_pad_row_without_pad_tokens():
    """With no pad token in the input, the tied pad row's gradient comes from the output projection
    only, and finite differences see exactly that: every entry of that row is checked."""
    model = jitter(nf.CausalLM(cfg(tie_embeddings=True, num_decoder_layers=1), seed=6))
    ids = np.array([[1, 2, 3], [4, 5, 6]])
    model.zero_grad()
    out = model(ids)
    g = np.random.default_rng(8).standard_normal(out.shape)
    model.backward(g)
    W = model.tgt_embed.weight
    assert np.any(W.grad[0] != 0)

    def f():
        return float(np.sum(model(ids) * g))

    D = W.data.shape[1]
    errs = fd_errors(f, {"weight": W.data}, {"weight": W.grad.copy()},
                     exclude={"weight": range(D, W.data.size)})             # row 0 only
    assert_close(errs)


def test_cross_entropy_module():
    rng = np.random.default_rng(22)
    loss_fn = nf.CrossEntropyLoss(ignore_index=0, label_smoothing=0.1)
    logits = rand(rng, 2, 3, 5)
    targets = np.array([[1, 0, 4], [2, 3, 0]])
    loss_fn.zero_grad()
    loss = loss_fn(logits, targets)
    g = float(rng.standard_normal())
    dlogits = loss_fn.backward(g)

    def f():
        return float(loss_fn(logits, targets)) * g

    assert f() == pytest.approx(float(loss) * g)
    assert_close(fd_errors(f, {"logits": logits}, {"logits": dlogits}))
    assert np.all(dlogits[0, 1] == 0) and np.all(dlogits[1, 2] == 0)   # ignored rows


# ==================================================================================================
# npformer.checks.gradcheck agrees with this check: passes the correct modules, fails the planted bugs
# ==================================================================================================
class ForgetfulLayerNorm(nf.LayerNorm):
    """Planted bug: backward drops the variance term of dL/dx."""

    def backward(self, dout):
        dx_right = super().backward(dout)
        x = self._last_x
        xhat = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + self.eps)
        g = dout * self.weight.data
        rstd = 1 / np.sqrt(x.var(-1, keepdims=True) + self.eps)
        return dx_right + rstd * xhat * (g * xhat).mean(-1, keepdims=True)   # undo that term

    def forward(self, x):
        self._last_x = x
        return super().forward(x)


class SwappedKVAttention(nf.MultiHeadAttention):
    """Planted bug: returns dvalue as dkey and dkey as dvalue."""

    def backward(self, dout):
        dq, dk, dv = super().backward(dout)
        return dq, dv, dk


class HalfBiasLinear(nf.Linear):
    """Planted bug: the bias gradient is accumulated at half its value."""

    def backward(self, dout):
        before = self.bias.grad.copy()
        dx = super().backward(dout)
        self.bias.grad[...] = before + (self.bias.grad - before) / 2
        return dx


def agreement_cases():
    rng = np.random.default_rng(30)
    x5 = rand(rng, 2, 3, 5) * 2
    q, kv = rand(rng, 2, 3, 8), rand(rng, 2, 4, 8)
    kv2 = rand(rng, 2, 4, 8)
    mask = nf.causal_mask(3, 4)
    mask = np.broadcast_to(mask, (2, 1, 3, 4)).copy()
    mask[1, :, 0] = False                                                # fully masked row
    lin_x = rand(rng, 4, 3)

    def mha(cls):
        m = jitter(cls(8, 2, dropout=0.2, dtype="float64", rng=np.random.default_rng(0)))
        return m, (q, kv, kv2), dict(mask=mask), mha_grads

    return {
        "layernorm": (lambda: (jitter(nf.LayerNorm(5, dtype="float64")), (x5,), {},
                               lambda gr: {"x": gr}),
                      lambda: (jitter(ForgetfulLayerNorm(5, dtype="float64")), (x5,), {},
                               lambda gr: {"x": gr})),
        "attention": (lambda: mha(nf.MultiHeadAttention), lambda: mha(SwappedKVAttention)),
        "linear": (lambda: (jitter(nf.Linear(3, 2, dtype="float64")), (lin_x,), {},
                            lambda gr: {"x": gr}),
                   lambda: (jitter(HalfBiasLinear(3, 2, dtype="float64")), (lin_x,), {},
                            lambda gr: {"x": gr})),
    }


def run_both(factory):
    """(this file's verdict, npformer.checks.gradcheck's verdict) on a fresh module, same upstream g."""
    m, args, kw, combine = factory()
    names = ["x"] if len(args) == 1 else ["query", "key", "value"]
    inputs = {n: a.copy() for n, a in zip(names, args)}
    errs = module_check(m, lambda mod, **i: mod(*[i[n] for n in names], **kw), inputs,
                        combine=combine)
    mine = all(e <= TOL for e in errs.values())
    m2, args2, kw2, _ = factory()
    out = m2(*args2, **kw2)
    g = np.random.default_rng(123).standard_normal(out.shape)
    report = nf.gradcheck(m2, *[a.copy() for a in args2], upstream=g, **kw2)
    return mine, bool(report.passed), errs, report


@pytest.mark.parametrize("name", ["layernorm", "attention", "linear"])
def test_npformer_gradcheck_agrees(name):
    good, bad = agreement_cases()[name]
    mine, theirs, errs, report = run_both(good)
    assert mine and theirs, (errs, str(report))
    assert report.max_error <= TOL and isinstance(report, nf.GradcheckReport)
    mine, theirs, errs, report = run_both(bad)
    assert not mine, f"this check missed the planted bug: {errs}"
    assert not theirs, f"npformer.checks.gradcheck missed the planted bug:\n{report}"
    with pytest.raises(AssertionError):
        report.raise_if_failed()


def test_npformer_gradcheck_on_a_model_with_dropout():
    model = jitter(nf.CausalLM(cfg(num_decoder_layers=1, **DROPS), seed=7))
    ids = np.array([[1, 2, 3, 0], [4, 5, 6, 7]])
    report = nf.gradcheck(model, ids, max_per_tensor=3)
    assert report.passed, str(report)
    assert_close(model_check(model, lambda m, ids: m(ids), {"ids": ids},
                             input_keys={"tgt": ("decoder_input", "ids")}))


def test_npformer_check_pair_agrees():
    """The functional-pair checker too: passes layernorm's pair, fails one that forgets the
    variance term (and so does this file's check)."""
    rng = np.random.default_rng(31)
    x, gamma, beta = rand(rng, 2, 3, 5) * 2, rand(rng, 5), rand(rng, 5)

    def forgetful_backward(dout, cache):
        dx, dgamma, dbeta = nf.layernorm_backward(dout, cache)
        xhat, rstd, gam = cache
        return dx + rstd * xhat * (dout * gam * xhat).mean(-1, keepdims=True), dgamma, dbeta

    def fwd(x, gamma, beta):
        return nf.layernorm_forward(x, gamma, beta, 1e-5)

    arrays = dict(x=x, gamma=gamma, beta=beta)
    good = nf.check_pair(fwd, nf.layernorm_backward, (x, gamma, beta))
    assert good.passed, str(good)
    assert_close(pair_check(fwd, nf.layernorm_backward, arrays, ["x", "gamma", "beta"]))
    bad = nf.check_pair(fwd, forgetful_backward, (x, gamma, beta))
    assert not bad.passed and "input:x" in bad.failures()
    mine = pair_check(fwd, forgetful_backward, arrays, ["x", "gamma", "beta"])
    assert mine["x"] > TOL and mine["gamma"] <= TOL and mine["beta"] <= TOL


def test_make_positional_follows_the_config():
    c = cfg(positional="learned")
    assert isinstance(nf.make_positional(c, rng=np.random.default_rng(0)),
                      nf.LearnedPositionalEncoding)
    pe = nf.make_positional(cfg())
    assert isinstance(pe, nf.SinusoidalPositionalEncoding) and pe.pe.shape == (7, 8)
    assert_close(module_check(pe, call1, {"x": rand(np.random.default_rng(32), 2, 7, 8)}))
