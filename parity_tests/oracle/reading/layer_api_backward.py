"""A NumPy layer API whose backward takes back what its forward was given and returned:

    y, cache = layer.forward(x)
    dx = layer.backward(x, cache, dy, gradients)   # `gradients`: a dict the layer fills

The oracle called `backward(dout)` alone, and right code was an INTERFACE_ERROR ("missing 3 required
positional arguments"). When a module's backward has more than one required parameter and each is
one of: an argument of the forward (by name, or `x` / `inputs` / `input`), the cache (a name holding
`cache`, or `ctx`), the upstream gradient (`dout`, `dy`, `grad_output`, `backwards_gradient`, ... -
exactly one) or a dict to collect parameter gradients in (`gradients`, `grads`, `param_grads`,
`dparams`), it is called with the forward's inputs as they were fed, the second item of what the
forward returned as the cache (None when it returned the output alone), the drawn upstream gradient
and a fresh dict. What it returns is read as the input gradients; each collected gradient whose key
is the key a weight is kept under in a dict of the candidate (`self._parameters['Dense/W']`,
registry_dicts) is that weight's gradient; other keys are left to the usual readers
(returned_grads: `gamma`, `dW`, ...)."""
from __future__ import annotations

import inspect

COLLECTORS = ("gradients", "grads", "param_grads", "dparams", "grad_dict", "grads_dict")
UPSTREAM = ("dout", "dy", "d_out", "grad_out", "grad_output", "grad_outputs", "grad_y", "dl_dy",
            "dldy", "upstream", "upstream_grad", "backwards_gradient", "backward_gradient", "delta",
            "grad", "gradient", "dz", "dh", "error", "out_grad", "output_grad", "dout_")
INPUTS = ("x", "inputs", "input", "x_in", "inp")


def _role(name: str, forward_args: set[str]) -> str | None:
    n = name.lower()
    if n in COLLECTORS:
        return "collector"
    if n in forward_args or n in INPUTS:
        return "input"
    if "cache" in n or n == "ctx":
        return "cache"
    if n in UPSTREAM:
        return "upstream"
    return None


def plan(backward, forward_args: set[str]) -> list[tuple[str, str]] | None:
    """[(parameter, role)] for a backward of this API, or None (one required argument, or a
    parameter whose role cannot be told)."""
    try:
        params = list(inspect.signature(backward).parameters.values())
    except (TypeError, ValueError):
        return None
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = [p for p in positional if p.default is p.empty]
    if len(required) < 2 or len(required) != len([p for p in params if p.default is p.empty]):
        return None
    roles = [(p.name, _role(p.name, forward_args)) for p in required]
    if any(r is None for _, r in roles) or [r for _, r in roles].count("upstream") != 1 or \
            [r for _, r in roles].count("collector") > 1:
        return None
    return roles


def bound_backward(inst, last_call, notes: list):
    """A one-argument backward(dout) calling the candidate's backward of this API with the last
    forward call's inputs and cache, or None when the module's backward is not of this API.
    `last_call`: (the inputs fed by the candidate's argument names, what the forward returned)."""
    obj = inst.obj
    backward = getattr(obj, "backward", None)
    if obj is None or not callable(backward) or last_call is None:
        return None
    fed, returned = last_call
    own = getattr(type(obj), "backward", None)     # the class's: the instance's may be wrapped
    roles = plan(own.__get__(obj) if inspect.isfunction(own) else backward, set(fed))
    if roles is None:
        return None
    cache = returned[1] if isinstance(returned, tuple) and len(returned) == 2 else None
    keyed = {slot.key: name for name, slot in inst.slots.items()
             if isinstance(getattr(slot, "container", None), dict)}

    def run(dout):
        collected: dict = {}
        values = {"cache": cache, "upstream": dout, "collector": collected}
        only = next(iter(fed.values())) if len(fed) == 1 else None
        args = [fed.get(p, only) if r == "input" else values[r] for p, r in roles]
        dx = backward(*args)
        text = (f"backward called as backward({', '.join(p for p, _ in roles)}): the forward's "
                f"input{'s' if len(fed) > 1 else ''} and returned cache handed back, the "
                f"parameter gradients read from the dict it fills")
        if text not in notes:
            notes.append(text)
        grads = {keyed[k]: g for k, g in collected.items() if k in keyed}
        grads.update({k: g for k, g in collected.items() if k not in keyed})
        return (*dx, grads) if isinstance(dx, (tuple, list)) else (dx, grads)

    return run
