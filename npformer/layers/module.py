"""Parameter and Module: the small torch-like surface every npformer layer shares.

A Module registers the Parameters and sub-Modules assigned to its attributes (in assignment order,
like torch.nn.Module), so dotted names such as `encoder.layers.0.self_attn.q_proj.weight` come out
identical to torchformer's `state_dict()` keys.

Calling a module is the public, checked entry: `module(*args)` checks the arguments once, then runs
`forward` on them; inside a module, children run through `child.forward(...)`, unchecked. The checks
live apart from the math, in npformer.guards, which registers them per class in CHECKS below.

Forward stores what backward needs on the module (`self._cache`; in most layers its output last,
`(..., out)`, so the upstream gradient's check can compare shapes with it); backward(grad_output)
returns the gradients of the float inputs and *accumulates* into each Parameter's `.grad` (a tied
parameter sums both uses).
"""
from collections import OrderedDict
from collections.abc import Iterator

import numpy as np

# {kind: {class: check}}, kinds "init", "call", "backward", "load_state_dict" and other methods' names
CHECKS: dict[str, dict] = {"init": {}, "call": {}, "backward": {}, "load_state_dict": {}}


def registered(kind: str, cls: type):
    """The `kind` check registered for `cls` or its nearest base class, or None."""
    table = CHECKS.get(kind, {})
    return next((table[k] for k in cls.__mro__ if k in table), None)


class Parameter:
    """A trainable array `.data` and its accumulated gradient `.grad` (same shape and dtype).

    Layers add their gradients with `accumulate(g)` (a tied parameter sums both uses); `zero_grad()`
    fills `.grad` with zeros in place, so the array stays the same object.
    """

    def __init__(self, data: np.ndarray):
        self.data = np.ascontiguousarray(data)
        self.grad: np.ndarray | None = np.zeros_like(self.data)

    def zero_grad(self) -> None:
        if self.grad is not None:
            self.grad.fill(0)

    def accumulate(self, g: np.ndarray) -> None:
        """grad += g; a gradient set to None by the user starts again from zeros."""
        if self.grad is None:
            self.grad = np.zeros_like(self.data)
        self.grad += g

    @property
    def shape(self) -> tuple[int, ...]:
        return self.data.shape

    @property
    def dtype(self) -> np.dtype:
        return self.data.dtype

    def __repr__(self) -> str:
        return f"Parameter(shape={self.data.shape}, dtype={self.data.dtype})"


class Module:
    """Base class: parameter registry, state dicts, train/eval, zero_grad, parameter count."""

    def __init__(self) -> None:
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_cache", None)
        object.__setattr__(self, "_inference", False)   # the last forward kept no cache on purpose

    def __setattr__(self, name: str, value) -> None:
        if "_parameters" not in self.__dict__:
            raise RuntimeError(f"{type(self).__name__}: call Module.__init__() before assigning "
                               f"attributes")
        # a re-assigned name keeps its place (as in torch), so tying a weight does not reorder keys
        if isinstance(value, Parameter):
            self._modules.pop(name, None)
            self._parameters[name] = value
        elif isinstance(value, Module):
            self._parameters.pop(name, None)
            self._modules[name] = value
        else:
            self._parameters.pop(name, None)
            self._modules.pop(name, None)
        object.__setattr__(self, name, value)
        if name == "_cache":                    # a forward ran: a backward may free it again
            object.__setattr__(self, "_cache_freed", False)

    def __call__(self, *args, **kwargs):
        """The public entry: check the arguments once, then run forward on the checked ones."""
        return self.forward(*self.check_inputs(*args, **kwargs))

    def check_inputs(self, *args, **kwargs) -> tuple:
        """forward's arguments as positions, checked by the class's "call" check (Module's own, the
        fallback, only turns keywords into positions)."""
        return registered("call", type(self))(self, *args, **kwargs)

    def checked(self, method: str, *args, **kwargs):
        """The arguments of another public method (Transformer.encode ...), checked by its guard."""
        return registered(method, type(self))(self, *args, **kwargs)

    def forward(self, *args, **kwargs):  # pragma: no cover - every layer overrides it
        raise NotImplementedError(f"{type(self).__name__} does not define forward")

    def _require_cache(self):
        """The cache saved by forward; a clear error when backward comes first, or follows an
        inference-only forward (one with incremental caches, Transformer.encode or .decode)."""
        if self._cache is None:
            why = (": the last forward was inference only (incremental caches, encode or decode) "
                   "and kept no cache; run forward without caches first") if self._inference else ""
            raise RuntimeError(f"{type(self).__name__}.backward called before forward{why}")
        return self._cache

    # -- traversal --------------------------------------------------------------------------------
    def named_modules(self, prefix: str = "") -> Iterator[tuple[str, "Module"]]:
        """Yield (dotted_name, module) for this module ("" for itself) and every descendant."""
        yield prefix, self
        for name, child in self._modules.items():
            yield from child.named_modules(f"{prefix}.{name}" if prefix else name)

    def _named_parameters_all(self, prefix: str = "") -> Iterator[tuple[str, Parameter]]:
        for name, p in self._parameters.items():
            yield (f"{prefix}.{name}" if prefix else name), p
        for name, child in self._modules.items():
            yield from child._named_parameters_all(f"{prefix}.{name}" if prefix else name)

    def named_parameters(self, prefix: str = "") -> Iterator[tuple[str, Parameter]]:
        """Yield (dotted_name, Parameter) once per distinct parameter (a tied one under its first name)."""
        seen: set[int] = set()
        for name, p in self._named_parameters_all(prefix):
            if id(p) not in seen:
                seen.add(id(p))
                yield name, p

    def parameters(self) -> list[Parameter]:
        return [p for _, p in self.named_parameters()]

    def num_parameters(self) -> int:
        """Number of distinct trainable scalars (tied weights counted once)."""
        return int(sum(p.data.size for p in self.parameters()))

    # -- state ------------------------------------------------------------------------------------
    def state_dict(self) -> "OrderedDict[str, np.ndarray]":
        """Copies of every parameter by dotted name; a tied parameter appears under each name (as torch)."""
        return OrderedDict((n, p.data.copy()) for n, p in self._named_parameters_all())

    def load_state_dict(self, state: dict, strict: bool = True) -> None:
        """Copy arrays into the parameters, cast to each one's dtype, after the registered
        "load_state_dict" check accepts them all (nothing is written when one is refused)."""
        own = OrderedDict(self._named_parameters_all())
        staged = registered("load_state_dict", type(self))(
            type(self).__name__, {k: p.data.shape for k, p in own.items()}, state, strict)
        for k, v in staged.items():
            np.copyto(own[k].data, v, casting="unsafe")

    def zero_grad(self) -> None:
        for p in self.parameters():
            p.zero_grad()

    def train(self, mode: bool = True) -> "Module":
        """Training mode on or off for this module and every descendant (after the "train" check)."""
        check = registered("train", type(self))
        mode = check(self, mode) if check is not None else mode
        for _, m in self.named_modules():
            object.__setattr__(m, "training", bool(mode))
        return self

    def eval(self) -> "Module":
        return self.train(False)

    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__}({self.extra_repr()}"]
        for name, child in self._modules.items():
            sub = repr(child).replace("\n", "\n  ")
            lines.append(f"  ({name}): {sub}")
        return "\n".join(lines) + (")" if len(lines) == 1 else "\n)")


class ModuleList(Module):
    """An indexable list of modules, registered under "0", "1", ... (as torch.nn.ModuleList)."""

    def __init__(self, modules=()):
        super().__init__()
        for i, m in enumerate(modules):
            setattr(self, str(i), m)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __getitem__(self, i: int) -> Module:
        return list(self._modules.values())[i]
