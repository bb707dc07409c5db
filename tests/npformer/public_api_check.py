"""The independent gradient check behind test_public_api_*.py: every exported component and model,
checked through the public API only.

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


def call1(m, x):
    return m(x)


def mha_call(m, query, key, value, mask=None):
    return m(query, key, value, mask)


def mha_grads(gr):
    return dict(zip(("query", "key", "value"), gr))


def cfg(**changes):
    base = dict(d_model=8, num_heads=2, d_ff=12, num_encoder_layers=2, num_decoder_layers=2,
                max_len=7, vocab_size=13, pad_id=0, num_classes=3, dropout=0.0, dtype="float64")
    base.update(changes)
    return nf.TransformerConfig(**base)


DROPS = dict(dropout=0.2, attention_dropout=0.15, activation_dropout=0.1)


def seed_dropouts(module, seed):
    """Give each Dropout of a bare layer/stack one generator (models do this themselves)."""
    rng = np.random.default_rng(seed)
    for _, m in module.named_modules():
        if isinstance(m, nf.Dropout):
            m.rng = rng


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
