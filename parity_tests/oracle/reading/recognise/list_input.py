"""Recogniser: a forward that takes its inputs as one list, `forward(self, inputs)` with
`q, k, v = inputs` (or `qkv`, `xs`, an argument annotated as a list/tuple/Sequence). The list is
handed over in the component's order of inputs, or in the order the forward unpacks it when every
name it unpacks to is one input's (`memory, x = input` in a decoder layer: [memory, x])."""
from __future__ import annotations

import ast
import inspect
import re
import textwrap
import typing

SOURCE = "__inputs_list__"
NAMES = ("inputs", "qkv", "xs", "input_list", "tensors", "qkv_list", "qkv_inputs", "inputs_list",
         "args", "triple", "qkv_tuple", "input")


def detect(sig, comp, fn=None) -> str | None:
    """The argument that takes the list, when the forward's first argument is one (and the
    component has more than one input), else None."""
    if sig is None or len(comp.inputs) < 2:
        return None
    params = [p for p in sig.parameters.values() if p.name not in ("self", "cls")
              and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if not params:
        return None
    first = params[0]
    ann = first.annotation
    origin = typing.get_origin(ann) or ann
    listy = origin in (list, tuple) or getattr(origin, "__name__", "") in ("Sequence", "Iterable") \
        or (isinstance(ann, str) and ann.split("[")[0].lower() in ("list", "tuple", "sequence"))
    if listy or (first.name.lower() in NAMES and _unpacked(fn, first.name)):
        return first.name
    return None


def _unpacked(fn, arg: str) -> bool:
    """A name alone is ambiguous (`forward(self, inputs)` is also Keras-style self-attention on one
    tensor): believe it when the forward's source unpacks or indexes the argument (`q, k, v =
    inputs`, `inputs[0]`, `for t in inputs`), or when there is no source to read. An instance
    handed over as the forward (a NumPy class called through `__call__`) is read through its
    class's `__call__`, as when it was first bound."""
    if fn is None:
        return True
    if callable(fn) and not (inspect.isfunction(fn) or inspect.ismethod(fn) or inspect.isclass(fn)):
        fn = getattr(type(fn), "__call__", fn)      # an instance called as it is: its __call__'s text
    try:
        src = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        return True
    a = re.escape(arg)
    return bool(re.search(rf"^\s*[\w\s,()\[\]]*,[\w\s,()\[\]]*=\s*{a}\s*(#.*)?$", src, re.M)
                or re.search(rf"\b{a}\s*\[\s*-?[0-2]\s*\]", src)
                or re.search(rf"\bfor\s+\w+\s+in\s+{a}\b", src)
                or re.search(rf"\b(zip|map)\([^)]*\b{a}\b", src))


def sources(arg: str, comp) -> list:
    """Binding sources: the list, then the masks by name."""
    return [(SOURCE, (arg,), True)] + [(m.name, m.aliases, False) for m in comp.masks]


def unpacked_order(fn, arg: str, comp) -> list[str] | None:
    """The component's input names in the order the forward unpacks `arg` (`memory, x = input`),
    when it does so once into names each of which is exactly one input's alias and together all of
    them; None otherwise (the component's own order is used)."""
    if callable(fn) and not (inspect.isfunction(fn) or inspect.ismethod(fn)):
        fn = getattr(type(fn), "__call__", fn)
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError, ValueError):
        return None
    found = [n.targets[0].elts for n in ast.walk(tree) if isinstance(n, ast.Assign)
             and len(n.targets) == 1 and isinstance(n.targets[0], (ast.Tuple, ast.List))
             and isinstance(n.value, ast.Name) and n.value.id == arg]
    if len(found) != 1 or len(found[0]) != len(comp.inputs) or \
            not all(isinstance(e, ast.Name) for e in found[0]):
        return None
    order = []
    for e in found[0]:
        which = [i.name for i in comp.inputs if e.id.lower() in {a.lower() for a in (i.name, *i.aliases)}]
        if len(which) != 1 or which[0] in order:
            return None
        order.append(which[0])
    return order
