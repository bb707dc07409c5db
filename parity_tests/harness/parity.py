"""Run an npformer module and its torch twin on the same inputs and compare everything by name.

    result = check_parity(np_module, torch_module, args, dtype="float64", seed=seed,
                          input_names=("query", "key", "value"))

does, in order: deterministic torch (TF32 off), copy the weights npformer -> torch by state_dict key,
switch every torch attention to its explicit path (`need_weights`), run both forwards recording
every sub-module's output, replay npformer's dropout masks into torch when `train=True`, draw one
random upstream gradient, run both backwards, then compare in dependency order:

  1. every sub-module output        "<module>"                 (forward call order)
  2. every attention's weights      "<module>.attn_weights"    per head, (B,H,Tq,Tk)
  3. the output                     "output"
  4. the loss (when given)          "loss", then its gradient "output.grad" (d loss / d output)
  5. every parameter gradient       "<param>.grad"             (backward order: last module first)
  6. every input gradient           "<input>.grad"

and raises ParityError naming the first tensor that differs (others listed after it).
The two halves (`run_numpy`, `run_torch`) and `compare_runs` are usable separately, e.g. by the
grading oracle with a candidate in place of one twin.
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from .compare import Report, compare_all
from .recording import flatten_outputs, record_numpy, unique_named_modules
from .strategies import random_upstream
from .tolerances import Tolerance
from .weights import numpy_grads


@dataclass
class Run:
    """Everything one twin produced for one example (all numpy)."""

    output: Any = None
    modules: "OrderedDict[str, np.ndarray]" = field(default_factory=OrderedDict)
    attention: "OrderedDict[str, np.ndarray]" = field(default_factory=OrderedDict)
    loss: np.ndarray | None = None
    param_grads: "OrderedDict[str, np.ndarray]" = field(default_factory=OrderedDict)
    input_grads: "OrderedDict[str, np.ndarray]" = field(default_factory=OrderedDict)
    call_order: list = field(default_factory=list)   # module names in first-call order
    dropout_masks: dict | None = None
    upstream: np.ndarray | None = None               # the gradient backward started from
    output_grad: np.ndarray | None = None            # d loss / d output (only with a loss)


def _attention_weights(model, order: Sequence[str]) -> "OrderedDict[str, np.ndarray]":
    """{name: attn_weights} for every module holding attention weights, in call order."""
    from .compare import as_array

    found = {}
    for name, m in unique_named_modules(model):
        w = getattr(m, "attn_weights", None)
        if w is not None:
            found[name] = as_array(w).copy()
    rank = {n: i for i, n in enumerate(order)}
    return OrderedDict(sorted(found.items(), key=lambda kv: rank.get(kv[0], len(rank))))


def _name_grads(grads: Any, input_names: Sequence[str]) -> "OrderedDict[str, np.ndarray]":
    """Backward's return (array, tuple or dict) as {input_name: grad}, dropping None entries."""
    if grads is None:
        return OrderedDict()
    if isinstance(grads, Mapping):
        return OrderedDict((k, v) for k, v in grads.items() if v is not None)
    if not isinstance(grads, (tuple, list)):
        grads = (grads,)
    if len(input_names) < len([g for g in grads if g is not None]):
        raise ValueError(f"backward returned {len(grads)} gradients; name them with input_names "
                         f"(got {tuple(input_names)})")
    return OrderedDict((n, g) for n, g in zip(input_names, grads) if g is not None)


def run_numpy(module, args: Sequence = (), kwargs: Mapping | None = None, *,
              upstream: np.ndarray | Callable[[np.ndarray], np.ndarray] | None = None, input_names: Sequence[str] = (),
              loss: tuple | None = None, loss_upstream: float = 1.0,
              backward: bool = True, record: bool = True,
              collect_masks: bool = False) -> Run:
    """Forward (recording sub-module outputs) and backward of an npformer module.

    loss: (loss_module, targets): the loss of the output is computed and backward starts from it
    (scaled by loss_upstream); otherwise backward starts from `upstream` (an array, or a function
    of the output returning one, e.g. a random gradient of the output's shape).
    """
    kwargs = dict(kwargs or {})
    run = Run()
    if record:
        with record_numpy(module) as rec:
            out = module(*args, **kwargs)
        run.modules = flatten_outputs(rec)
        run.call_order = list(rec)
    else:
        out = module(*args, **kwargs)
    run.output = out.copy() if isinstance(out, np.ndarray) else out
    run.attention = _attention_weights(module, run.call_order)
    if collect_masks:
        from npformer.checks.dropout_masks import collect_dropout_masks
        run.dropout_masks = collect_dropout_masks(module)
    if not backward:
        return run
    if loss is not None:
        loss_module, targets = loss
        value = loss_module(out, targets)
        run.loss = np.asarray(value).copy()
        dout = loss_module.backward(np.asarray(loss_upstream, dtype=out.dtype))
        run.output_grad = np.asarray(dout).copy()
    else:
        if upstream is None:
            raise ValueError("run_numpy: backward needs `upstream` (or `loss`)")
        dout = upstream(out) if callable(upstream) else upstream
        run.upstream = dout
    module.zero_grad()
    grads = module.backward(dout)
    run.input_grads = OrderedDict((k, np.asarray(v).copy())
                                  for k, v in _name_grads(grads, input_names).items())
    run.param_grads = numpy_grads(module)
    return run


def enable_attention_weights(torch_module) -> None:
    """Explicit attention path everywhere (weights are returned; no fused SDPA kernel)."""
    for _, m in torch_module.named_modules():
        if hasattr(m, "need_weights"):
            m.need_weights = True


def run_torch(module, args: Sequence = (), kwargs: Mapping | None = None, *,
              upstream: np.ndarray | None = None, input_names: Sequence[str] = (),
              input_grads: Callable[[Any], Mapping[str, Any]] | None = None,
              loss: tuple | None = None, loss_upstream: float = 1.0,
              backward: bool = True, record: bool = True,
              replay_masks: dict | None = None, device=None) -> Run:
    """Forward/backward of the torch twin on the same (numpy) inputs.

    Float array arguments become separate leaf tensors with requires_grad (named by input_names,
    in order); ids and masks become int64/bool tensors. input_grads(module) -> {name: tensor} gives
    the tensors whose .grad are the input gradients instead (models: encoder_input/decoder_input).
    loss: (torch_loss_module, targets as numpy).
    """
    import torch

    from .recording import record_torch
    from .torch_utils import deterministic_torch, to_tensor
    from .weights import torch_grads, zero_torch_grads

    deterministic_torch()
    kwargs = dict(kwargs or {})
    leaves = []
    targs = []
    for a in args:
        is_float = isinstance(a, np.ndarray) and np.issubdtype(a.dtype, np.floating)
        t = to_tensor(a, device=device, requires_grad=is_float and backward)
        if is_float:
            leaves.append(t)
        targs.append(t)
    tkwargs = {k: to_tensor(v, device=device) for k, v in kwargs.items()}
    if replay_masks is not None:
        from torchformer.checks.dropout_masks import replay_dropout_masks
        replay_dropout_masks(module, replay_masks)
    run = Run()
    zero_torch_grads(module)
    if record:
        with record_torch(module) as rec:
            out = module(*targs, **tkwargs)
        run.modules = flatten_outputs(rec)
        run.call_order = list(rec)
    else:
        out = module(*targs, **tkwargs)
    run.output = out.detach().cpu().numpy().copy() if isinstance(out, torch.Tensor) else out
    run.attention = _attention_weights(module, run.call_order)
    if not backward:
        return run
    if loss is not None:
        loss_module, targets = loss
        value = loss_module(out, to_tensor(targets, device=device))
        run.loss = value.detach().cpu().numpy().copy()
        if out.requires_grad:
            out.retain_grad()
        value.backward(torch.as_tensor(loss_upstream, dtype=value.dtype, device=value.device))
        if out.grad is not None:
            run.output_grad = out.grad.detach().cpu().numpy().copy()
    else:
        out.backward(torch.as_tensor(upstream, device=out.device))
    if input_grads is not None:
        named = input_grads(module)
    else:
        named = OrderedDict(zip(input_names, leaves))
    run.input_grads = OrderedDict(
        (k, np.zeros(tuple(t.shape), dtype=str(t.dtype).replace("torch.", "")) if t.grad is None
         else t.grad.detach().cpu().numpy().copy())
        for k, t in named.items())
    run.param_grads = torch_grads(module)
    return run


def _param_order(param_names: Sequence[str], call_order: Sequence[str]) -> list[str]:
    """Parameters in backward order: those of the module called last come first."""
    rank = {n: i for i, n in enumerate(call_order)}

    def owner_rank(pname: str) -> int:
        parts = pname.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            r = rank.get(".".join(parts[:cut]))
            if r is not None:
                return r
        return -1

    return sorted(param_names, key=lambda n: -owner_rank(n))


TolFor = Callable[[str, str, np.ndarray], "Tolerance | None"]


def compare_runs(got: Run, ref: Run, dtype, *, case: Mapping | None = None,
                 modules: bool = True, attention: bool = True, grads: bool = True,
                 skip: Callable[[str], bool] | None = None,
                 check_dtype: bool = True, tol_for: TolFor | None = None) -> list[Report]:
    """Compare two Runs by name in dependency order (see module docstring); raise on mismatch.

    Names recorded by only one side are reported as a structural failure (a module the other twin
    does not have or never called), except those `skip(name)` excludes. tol_for(name, quantity,
    ref) may return a Tolerance replacing the table's for that tensor (None: the table's); use it
    only for inputs with a known condition number, and say why where you do.
    """
    skip = skip or (lambda name: False)
    items: list[tuple] = []
    structural = []
    if modules:
        for name, v in got.modules.items():
            if skip(name):
                continue
            if name in ref.modules:
                items.append((name, v, ref.modules[name], "output"))
        only_got = [n for n in got.modules if n not in ref.modules and not skip(n)]
        only_ref = [n for n in ref.modules if n not in got.modules and not skip(n)]
        if only_got or only_ref:
            structural.append(f"module outputs recorded by one side only: first run {only_got}, "
                              f"second run {only_ref}")
    if attention:
        for name, w in got.attention.items():
            key = f"{name}.attn_weights"
            if name in ref.attention and not skip(key):
                items.append((key, w, ref.attention[name], "attention_weights"))
        missing = [n for n in set(got.attention) ^ set(ref.attention) if not skip(f"{n}.attn_weights")]
        if missing:
            structural.append(f"attention weights held by one side only: {sorted(missing)}")
    outs_g = got.output if isinstance(got.output, (tuple, list)) else (got.output,)
    outs_r = ref.output if isinstance(ref.output, (tuple, list)) else (ref.output,)
    for i, (a, b) in enumerate(zip(outs_g, outs_r)):
        if a is not None or b is not None:
            items.append(("output" if len(outs_g) == 1 else f"output.{i}", a, b, "output"))
    if got.loss is not None or ref.loss is not None:
        items.append(("loss", got.loss, ref.loss, "loss"))
    if grads and got.output_grad is not None and ref.output_grad is not None:
        items.append(("output.grad", got.output_grad, ref.output_grad, "input_grad"))
    if grads:
        if list(got.param_grads) != list(ref.param_grads):
            structural.append(f"parameter names differ: {list(got.param_grads)} vs "
                              f"{list(ref.param_grads)}")
        for n in _param_order(list(got.param_grads), got.call_order or ref.call_order):
            if n in ref.param_grads and not skip(f"{n}.grad"):
                items.append((f"{n}.grad", got.param_grads[n], ref.param_grads[n], "param_grad"))
        if set(got.input_grads) != set(ref.input_grads):
            structural.append(f"input gradients differ in names: {list(got.input_grads)} vs "
                              f"{list(ref.input_grads)}")
        for n, g in got.input_grads.items():
            if n in ref.input_grads and not skip(f"{n}.grad"):
                items.append((f"{n}.grad", g, ref.input_grads[n], "input_grad"))
    if tol_for is not None:
        items = [(n, g, r, q, tol_for(n, q, np.asarray(r))) for n, g, r, q in items]
    reports = compare_all(items, dtype=dtype, case=case, check_dtype=check_dtype)
    if structural:
        from .case import reproduce_hint
        raise AssertionError("parity structure mismatch: " + "; ".join(structural) + "\n  "
                             + reproduce_hint())
    return reports


@dataclass
class ParityResult:
    numpy: Run
    torch: Run
    reports: list


def check_parity(np_module, torch_module, args: Sequence = (), kwargs: Mapping | None = None, *,
                 dtype, seed: int = 0, input_names: Sequence[str] = (),
                 input_grads: Callable[[Any], Mapping[str, Any]] | None = None,
                 loss: tuple | None = None, train: bool = False, copy: bool = True,
                 backward: bool = True, modules: bool = True, attention: bool = True,
                 skip: Callable[[str], bool] | None = None, case: Mapping | None = None,
                 device=None, upstream: np.ndarray | None = None,
                 tol_for: TolFor | None = None, explicit_attention: bool = True) -> ParityResult:
    """npformer (`got`) vs torch twin (`ref`) on the same inputs; raises ParityError on a mismatch.

    loss: (np_loss_module, torch_loss_module, targets). train=True runs both in training mode and
    replays the masks npformer drew into torch. seed drives the random upstream gradient (and the
    random loss upstream scale); `upstream` gives one explicitly instead. tol_for: see compare_runs.
    explicit_attention=False leaves torch's attention modules as they are (the fused SDPA path of
    torchformer: no weights to compare, so pass attention=False too).
    """
    from .weights import copy_weights

    if copy:
        copy_weights(np_module, torch_module)
    if explicit_attention:
        enable_attention_weights(torch_module)
    np_module.train(train)
    torch_module.train(train)
    rng = np.random.default_rng(seed)
    loss_up = float(rng.uniform(0.5, 2.0)) * (1 if rng.random() < 0.5 else -1)
    np_loss = t_loss = None
    if loss is not None:
        np_loss = (loss[0], loss[2])
        t_loss = (loss[1], loss[2])
    got = run_numpy(np_module, args, kwargs, input_names=input_names, loss=np_loss,
                    upstream=upstream if upstream is not None
                    else (lambda out: random_upstream(out.shape, out.dtype, rng)),
                    loss_upstream=loss_up, backward=backward, record=modules, collect_masks=train)
    ref = run_torch(torch_module, args, kwargs, upstream=got.upstream, input_names=input_names,
                    input_grads=input_grads, loss=t_loss, loss_upstream=loss_up,
                    backward=backward, record=modules,
                    replay_masks=got.dropout_masks if train else None, device=device)
    reports = compare_runs(got, ref, dtype, case=case, modules=modules, attention=attention,
                           grads=backward, skip=skip, tol_for=tol_for)
    return ParityResult(got, ref, reports)


def check_pair(np_forward: Callable, np_backward: Callable, torch_fn: Callable,
               args: Sequence, kwargs: Mapping | None = None, *, dtype, seed: int = 0,
               input_names: Sequence[str] = (), output_names: Sequence[str] = ("output",),
               output_quantities: Sequence[str] = ("output",), backward: bool = True,
               case: Mapping | None = None, device=None,
               tol_for: TolFor | None = None, upstream: np.ndarray | None = None) -> list[Report]:
    """A functional pair `np_forward(*args) -> (out or (out, extra...), cache)`,
    `np_backward(dout, cache) -> grads` against a torch function of the same arguments.

    The first output gets a random upstream gradient; further outputs (e.g. attention weights) are
    compared forward only. Float array arguments are the differentiable inputs, named in order by
    input_names; the torch side gets each as its own leaf tensor.
    """
    import torch

    from .torch_utils import deterministic_torch, to_tensor

    deterministic_torch()
    kwargs = dict(kwargs or {})
    rng = np.random.default_rng(seed)
    outs, cache = np_forward(*args, **kwargs)
    outs = outs if isinstance(outs, tuple) else (outs,)
    outs = tuple(np.asarray(o).copy() for o in outs)
    leaves, targs = [], []
    for a in args:
        is_float = isinstance(a, np.ndarray) and np.issubdtype(a.dtype, np.floating)
        t = to_tensor(a, device=device, requires_grad=is_float and backward)
        if is_float:
            leaves.append(t)
        targs.append(t)
    tk = {k: to_tensor(v, device=device) for k, v in kwargs.items()}
    touts = torch_fn(*targs, **tk)
    touts = touts if isinstance(touts, tuple) else (touts,)
    items = []
    quants = tuple(output_quantities) + ("output",) * (len(outs) - len(output_quantities))
    names = tuple(output_names) + tuple(f"output.{i}" for i in range(len(output_names), len(outs)))
    for n, q, o, t in zip(names, quants, outs, touts):
        if t is not None:
            items.append((n, o, t.detach().cpu().numpy(), q))
    if backward:
        g = upstream if upstream is not None else random_upstream(outs[0].shape, outs[0].dtype,
                                                                   rng)
        grads = _name_grads(np_backward(g, cache), input_names)
        touts[0].backward(torch.as_tensor(g, device=touts[0].device))
        tgrads = dict(zip(input_names, leaves))
        for n, gv in grads.items():
            t = tgrads[n]
            ref = (np.zeros(tuple(t.shape)) if t.grad is None else t.grad.detach().cpu().numpy())
            items.append((f"{n}.grad", gv, ref, "input_grad"))
    if tol_for is not None:
        items = [(n, g_, r, q, tol_for(n, q, np.asarray(r))) for n, g_, r, q in items]
    return compare_all(items, dtype=dtype, case=case, check_dtype=True)
