"""Gradient checking: a hand-written backward against central finite differences.

Take a module y = F(x, theta) and a fixed upstream gradient g of y's shape. The scalar

    f(x, theta) = sum(F(x, theta) * g)

has the gradients the backward pass claims to compute: df/dx = module.backward(g), and df/dtheta is what
backward accumulates into each parameter's `.grad`. Central differences estimate them entry by entry:

    df/dz_i ~ (f(z + eps e_i) - f(z - eps e_i)) / (2 eps)        (error O(eps^2) + rounding / eps)

g is random (standard normal), never ones: with g = 1 a backward that, say, transposes or sums over the
wrong axis of a gradient can still produce the right numbers, a random g exposes it.

Everything runs in float64: in float32 the rounding error of f divided by eps swamps the comparison.

Per tensor the error is

    max|a - n| / max(max|a|, max|n|, 1e-3 * G)

with a the analytic and n the numerical gradient and G the largest analytic gradient entry of the whole
check. The floor keeps tensors whose gradient is zero in theory (the key-projection bias of attention,
for instance) from dividing rounding noise by rounding noise: they are judged against the check's scale.

Dropout can stay active: the masks drawn by the first forward are replayed on every later forward
(`collect_dropout_masks` / `replay_dropout_masks`), so f is one fixed deterministic function.

Non-smooth points: ReLU at 0 (and anything else with a kink) has no derivative there; keep inputs
further than eps from kinks, or the numerical estimate is meaningless.
"""
from __future__ import annotations

import inspect
from typing import Callable, Sequence

import numpy as np

from npformer.checks.dropout_masks import collect_dropout_masks, replay_dropout_masks
from npformer.checks.numerical import GradcheckReport, TensorCheck, numerical_gradient, rel_error  # noqa: F401
from npformer.guards.rules import SEED_MAX, is_int, is_real
from npformer.layers.embedding import Embedding
from npformer.layers.module import Module

_F64 = np.dtype(np.float64)


# --------------------------------------------------------------------------------------------------
# shared machinery
# --------------------------------------------------------------------------------------------------
def _is_float_array(x) -> bool:
    return isinstance(x, np.ndarray) and np.issubdtype(x.dtype, np.floating)


def _positional_names(fn: Callable, count: int) -> list[str]:
    """Names of the first `count` positional arguments of fn (input0, input1, ... where unknown)."""
    names: list[str] = []
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = []
    for p in params:
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            names.append(p.name)
    names += [f"input{i}" for i in range(len(names), count)]
    return names[:count]


def _copy_float64_inputs(inputs: Sequence, where: str) -> list:
    """Independent copies of the float inputs (float64 only); other arguments pass unchanged.

    Copies make the check perturb each argument on its own even when the caller passed one array
    twice (self-attention's query, key and value), and leave the caller's arrays untouched.
    """
    out = []
    for i, x in enumerate(inputs):
        if _is_float_array(x):
            if x.dtype != _F64:
                raise TypeError(f"{where}[{i}]: expected float64 (gradient checks run in float64: "
                                f"float32 rounding swamps finite differences), got {x.dtype}")
            x = x.copy()
        out.append(x)
    return out


def _make_upstream(out, upstream, rng: np.random.Generator) -> np.ndarray:
    if not isinstance(out, np.ndarray) or out.dtype != _F64:
        got = f"dtype {out.dtype}" if isinstance(out, np.ndarray) else type(out).__name__
        raise TypeError(f"forward output: expected a float64 numpy array, got {got}")
    if upstream is None:
        return rng.standard_normal(out.shape)                 # out.shape, float64
    g = np.asarray(upstream)
    if g.shape != out.shape or g.dtype != _F64:
        raise ValueError(f"upstream: expected a float64 array of shape {out.shape} (the output's), "
                         f"got shape {g.shape} and dtype {g.dtype}")
    bad = int(g.size - np.count_nonzero(np.isfinite(g)))
    if bad:
        raise ValueError(f"upstream: expected finite values, got {bad} NaN/inf entries of {g.size}")
    return g


def _copy_grads(grads):
    """A copy of what backward returned (array, tuple/list of arrays or None, dict, or None)."""
    if isinstance(grads, np.ndarray):
        return grads.copy()
    if isinstance(grads, dict):
        return {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in grads.items()}
    if isinstance(grads, (tuple, list)):
        return tuple(v.copy() if isinstance(v, np.ndarray) else v for v in grads)
    return grads


def _input_targets(grads, inputs: list, float_positions: list[int], names: list[str],
                   report: GradcheckReport) -> list:
    """(name, input array, analytic gradient, None) for each float input backward's result covers.

    array      -> the gradient of the first float input (the others are reported as skipped)
    tuple/list -> aligned with the float inputs in order; extra trailing entries must be None;
                  a None entry claims a zero gradient and is checked as such
    """
    if isinstance(grads, np.ndarray):
        grads = [grads]
        for i in float_positions[1:]:
            report.skipped[names[i]] = "backward returned one array, the first float input's"
        float_positions = float_positions[:1]
    grads = list(grads)
    if any(g is not None for g in grads[len(float_positions):]):
        raise ValueError(f"backward returned {len(grads)} gradients but forward got "
                         f"{len(float_positions)} float array inputs "
                         f"({[names[i] for i in float_positions]}); gradients are matched to the "
                         f"float inputs in order and any extra ones must be None")
    targets = []
    for k, i in enumerate(float_positions):
        x = inputs[i]
        a = grads[k] if k < len(grads) else None
        a = np.zeros_like(x) if a is None else a              # None claims a zero gradient
        if not isinstance(a, np.ndarray) or a.shape != x.shape:
            got = a.shape if isinstance(a, np.ndarray) else type(a).__name__
            raise ValueError(f"backward: gradient for {names[i]} has shape {got}, expected "
                             f"{x.shape} (the input's)")
        targets.append((names[i], x, a, None))
    return targets


def _compare(report: GradcheckReport, f: Callable[[], float], targets, eps: float,
             max_per_tensor: int | None, pick_rng: np.random.Generator) -> None:
    """Finite-difference every (name, array, analytic, excluded flat indices) target into the report."""
    scale = max([float(np.max(np.abs(a))) for _, _, a, _ in targets if a.size] + [0.0])  # G
    floor = 1e-3 * scale
    for name, arr, analytic, excluded in targets:
        candidates = np.arange(arr.size)                      # flat indices that may be checked
        if excluded is not None and len(excluded):
            candidates = np.setdiff1d(candidates, excluded)
        if max_per_tensor is not None and candidates.size > max_per_tensor:
            flat = np.sort(pick_rng.choice(candidates, size=max_per_tensor, replace=False))
        else:
            flat = candidates
        n = numerical_gradient(f, arr, eps, flat)             # (k,)
        a = analytic.reshape(-1)[flat]                        # (k,)
        diff = np.abs(a - n)                                  # (k,)
        w = int(np.argmax(diff)) if diff.size else 0
        report.errors[name] = rel_error(a, n, floor)
        report.details[name] = TensorCheck(
            shape=tuple(arr.shape), checked=int(flat.size), rel_error=report.errors[name],
            abs_error=float(diff[w]) if diff.size else 0.0,
            worst_index=tuple(int(i) for i in np.unravel_index(int(flat[w]), arr.shape))
            if diff.size else (),
            analytic=float(a[w]) if diff.size else 0.0, numeric=float(n[w]) if diff.size else 0.0)


def _padding_rows(module: Module) -> dict[int, list[int]]:
    """{id(weight Parameter): [padding_idx, ...]} for every Embedding with a padding_idx.

    Such a row gets no gradient through the lookup by definition (torch.nn.Embedding's padding_idx),
    although the output depends on it: finite differences would disagree by design, so those
    entries are left out of the check (and listed in the report's `skipped`).
    """
    rows: dict[int, list[int]] = {}
    for _, m in module.named_modules():
        if isinstance(m, Embedding) and m.padding_idx is not None:
            rows.setdefault(id(m.weight), []).append(m.padding_idx)
    return rows


def _check_args(eps: float, tol: float, max_per_tensor, seed) -> None:
    for name, v in (("eps", eps), ("tol", tol)):
        if not is_real(v) or not np.isfinite(v) or not v > 0:
            raise ValueError(f"{name}: expected a positive float, got {v!r}")
    if not is_int(seed) or not 0 <= seed <= SEED_MAX:
        raise ValueError(f"seed: expected an int from 0 to 2**63 - 1, got {seed!r}")
    if max_per_tensor is not None and (isinstance(max_per_tensor, bool)
                                       or not isinstance(max_per_tensor, (int, np.integer))
                                       or max_per_tensor < 1):
        raise ValueError(f"max_per_tensor: expected None or a positive int, got {max_per_tensor!r}")


def _same(f0: float, f1: float) -> bool:
    """f evaluated twice at the same point: equal up to a few rounding steps."""
    return abs(f1 - f0) <= 1e-12 * max(1.0, abs(f0))


# --------------------------------------------------------------------------------------------------
# modules
# --------------------------------------------------------------------------------------------------
def gradcheck(module: Module, *inputs, upstream: np.ndarray | None = None, seed: int = 0,
              eps: float = 1e-5, tol: float = 1e-6, check_inputs: bool = True,
              check_params: bool = True, max_per_tensor: int | None = None,
              **forward_kwargs) -> GradcheckReport:
    """Check `module.backward` (input gradients and accumulated parameter gradients) numerically.

    inputs          positional arguments of module.forward; float arrays (float64 only) are the
                    differentiable inputs, anything else (ids, masks, None) passes through unchanged
    forward_kwargs  keyword arguments of module.forward (masks, ...), passed through, not perturbed
    upstream        the gradient fed to backward; default standard normal from default_rng(seed)
    max_per_tensor  finite-difference at most this many entries per tensor (a seeded random subset)

    What backward returns decides which input gradients are checked:
      array      the gradient of the first float input
      tuple      gradients of the float inputs in order (extra trailing entries must be None); a None
                 entry claims a zero gradient and is checked as such
      dict       a model's named intermediate gradients: no input is checked, parameters are
      None       no input gradient (e.g. Embedding): parameters are checked

    The module runs in the mode it is in: in training mode dropout masks drawn by the first forward
    are replayed on every later one. Rows of an Embedding's `padding_idx` are not compared (they get
    no gradient by design, as in torch) and are listed in `report.skipped`. Each parameter's `.grad`
    is zeroed first and holds the analytic gradient afterwards; every perturbed value is restored
    exactly, and a final forward at the unperturbed point leaves the module's caches as after a
    plain forward.
    """
    if not isinstance(module, Module):
        raise TypeError(f"module: expected an npformer Module, got {type(module).__name__}")
    _check_args(eps, tol, max_per_tensor, seed)
    params = list(module.named_parameters()) if check_params else []
    wrong = [f"{n} ({p.dtype})" for n, p in module.named_parameters() if p.dtype != _F64]
    if wrong:
        raise TypeError(f"module: expected float64 parameters (gradient checks run in float64), "
                        f"got {wrong}; build it with dtype='float64'")
    call_inputs = _copy_float64_inputs(inputs, "inputs")
    names = [f"input:{n}" for n in _positional_names(module.forward, len(call_inputs))]
    float_positions = [i for i, x in enumerate(call_inputs) if _is_float_array(x)]
    rng = np.random.default_rng(seed)
    report = GradcheckReport(tol=float(tol))

    # 1. analytic: one forward (drawing dropout masks) and one backward
    module.zero_grad()
    out = module(*call_inputs, **forward_kwargs)
    g = _make_upstream(out, upstream, rng)
    f0 = float(np.sum(out * g))
    masks = collect_dropout_masks(module)
    grads = _copy_grads(module.backward(g))                  # copies: later forwards may reuse buffers
    param_grads = {n: p.grad.copy() for n, p in params}

    # 2. the function the finite differences see: masks replayed, so deterministic
    def f() -> float:
        if masks:
            replay_dropout_masks(module, masks)
        return float(np.sum(module(*call_inputs, **forward_kwargs) * g))

    if not _same(f0, f()):
        raise RuntimeError("gradcheck: forward is not deterministic once dropout masks are "
                           "replayed (does the module draw random numbers outside Dropout "
                           "modules?); finite differences would be meaningless")

    # 3. collect what to compare
    targets = []
    if check_inputs and float_positions:
        if isinstance(grads, dict):
            for i in float_positions:
                report.skipped[names[i]] = ("backward returned a dict (model-level gradients); "
                                            "input gradients are not finite-differenced")
        elif grads is None:
            for i in float_positions:
                report.skipped[names[i]] = "backward returned None (no input gradient)"
        else:
            targets += _input_targets(grads, call_inputs, float_positions, names, report)
    padding = _padding_rows(module)
    for n, p in params:
        excluded = None
        if id(p) in padding:
            rows = sorted(set(padding[id(p)]))
            width = p.data.shape[1]
            excluded = np.concatenate([np.arange(r * width, (r + 1) * width) for r in rows])
            report.skipped[f"{n}{rows}"] = ("padding_idx rows: no gradient through the lookup by "
                                            "design (torch.nn.Embedding semantics)")
        targets.append((n, p.data, param_grads[n], excluded))
    if not targets:
        raise ValueError("gradcheck: nothing to check (no float input gradient and no parameter); "
                         f"skipped: {report.skipped}")

    # 4. finite differences, then leave the module as after a plain forward at the original point
    _compare(report, f, targets, eps, max_per_tensor, np.random.default_rng([seed, 1]))
    if not _same(f0, f()):
        report.problems.append("f changed after the check: a perturbed value was not restored")
    return report


# --------------------------------------------------------------------------------------------------
# functional pairs
# --------------------------------------------------------------------------------------------------
def check_pair(forward_fn: Callable, backward_fn: Callable, inputs: Sequence, *,
               upstream: np.ndarray | None = None, output_index: int | None = None, seed: int = 0,
               eps: float = 1e-5, tol: float = 1e-6, max_per_tensor: int | None = None,
               **forward_kwargs) -> GradcheckReport:
    """Check a functional pair `forward_fn(*inputs, **kw) -> (out, cache)`, `backward_fn(dout, cache)`.

    Every float array in `inputs` (float64 only) is checked against backward's gradients, matched as
    in `gradcheck` (array: the first float input; tuple: the float inputs in order, extra trailing
    entries None; a None entry claims a zero gradient). When forward's `out` is a tuple (sdpa returns
    (out, weights)), `output_index` picks the entry that `backward_fn`'s dout belongs to.
    """
    _check_args(eps, tol, max_per_tensor, seed)
    call_inputs = _copy_float64_inputs(inputs, "inputs")
    names = [f"input:{n}" for n in _positional_names(forward_fn, len(call_inputs))]
    float_positions = [i for i, x in enumerate(call_inputs) if _is_float_array(x)]
    if not float_positions:
        raise ValueError("inputs: expected at least one float64 array to differentiate")

    def run():
        out, cache = forward_fn(*call_inputs, **forward_kwargs)
        if isinstance(out, tuple):
            if output_index is None:
                raise ValueError(f"output_index: forward returned a tuple of {len(out)} outputs; "
                                 f"say which one backward's dout belongs to")
            out = out[output_index]
        return out, cache

    out, cache = run()
    g = _make_upstream(out, upstream, np.random.default_rng(seed))
    f0 = float(np.sum(out * g))
    grads = _copy_grads(backward_fn(g, cache))
    if grads is None:
        raise ValueError("backward_fn returned None: nothing to check")
    report = GradcheckReport(tol=float(tol))
    targets = _input_targets(grads, call_inputs, float_positions, names, report)

    def f() -> float:
        return float(np.sum(run()[0] * g))

    if not _same(f0, f()):
        raise RuntimeError("check_pair: forward_fn is not deterministic; finite differences would "
                           "be meaningless")
    _compare(report, f, targets, eps, max_per_tensor, np.random.default_rng([seed, 1]))
    return report
