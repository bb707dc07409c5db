"""Recogniser: a norm epsilon fixed by the candidate's own code, which no constructor argument of the
checked class sets (an EncoderLayer building `LayerNorm(d_model)` whose class defaults to
`eps=1e-12`, a NumPy layer with `self.eps = 1e-6`). Found by a probe: built with two different eps,
every norm inside keeps one and the same value (attributes `eps`, `epsilon`, `variance_epsilon`,
`layer_norm_eps` of the objects it holds whose class is named like a norm; of the layer itself when
it holds none). Then the reference uses that eps (unless
--set eps fixes it) and the report says so; without the probe a correct layer was compared with
eps 1e-5 and mismatched by about eps_difference / variance. A candidate whose norms follow the eps
it is built with, or that holds several different values, is left as it is.

A norm written as a function (`layer_norm(x, gamma, beta)`, a forward/backward pair) that takes no
eps argument is read from its text instead (nothing runs): one small constant added under a square
root (`np.sqrt(var + 1e-6)`, `(var + 1e-6) ** 0.5`, `np.sqrt(var) + 1e-6` is not one) in the
function or a module-level function it calls; several different ones, or none, leave it as it is."""
from __future__ import annotations

import ast
import inspect
import textwrap

COMPONENTS = ("layernorm", "encoder_layer", "decoder_layer", "model")
NAMES = ("eps", "epsilon", "variance_epsilon", "layer_norm_eps")


def _eps_values(obj, depth: int = 0, seen=None) -> set:
    """The norms' epsilon: the values held by objects of a class named like a norm (LayerNorm,
    RMSNorm, ...) inside obj; when there are none, the layer's own (self.eps of a NumPy layer that
    normalises itself). Another part's epsilon (an attention's softmax guard) is not a norm's."""
    normed = _held(obj, norms_only=True)
    return normed if normed else _own(obj)


def _own(obj) -> set:
    out = set()
    for n in NAMES:
        v = getattr(obj, n, None)
        if isinstance(v, float) and not isinstance(v, bool) and 0.0 < v < 0.1:
            out.add(v)
    return out


def _held(obj, norms_only: bool, depth: int = 0, seen=None) -> set:
    """Every float epsilon held by obj or the objects it holds (modules, lists, dicts), depth <= 6
    (a model's norm in a residual wrapper of a layer of its encoder is 5 deep)."""
    seen = set() if seen is None else seen
    if depth > 6 or id(obj) in seen or obj is None or isinstance(obj, (int, float, str, bytes)):
        return set()
    seen.add(id(obj))
    out = set()
    if isinstance(obj, (list, tuple)):
        items = obj
    elif isinstance(obj, dict):
        items = obj.values()
    else:
        try:
            attrs = vars(obj)
        except TypeError:
            return set()
        if not norms_only or "norm" in type(obj).__name__.lower():
            out |= _own(obj)
        items = list(attrs.get("_modules", {}).values()) + [
            v for k, v in attrs.items() if not k.startswith("_")]
    for v in items:
        if type(v).__module__.startswith(("numpy", "torch._tensor")) or hasattr(v, "shape"):
            continue                        # arrays and tensors hold no epsilon
        out |= _held(v, norms_only, depth + 1, seen)
    return out


def _small(node) -> float | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, float) and 0.0 < node.value < 0.1:
        return node.value
    return None


def _under_root(node) -> ast.AST | None:
    """The expression a square root is taken of: sqrt(e) / rsqrt(e) / e ** 0.5 / e ** -0.5."""
    if isinstance(node, ast.Call) and node.args:
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        return node.args[0] if name in ("sqrt", "rsqrt") else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow) and \
            isinstance(node.right, (ast.Constant, ast.UnaryOp)):
        power = ast.literal_eval(node.right) if not isinstance(node.right, ast.Name) else None
        return node.left if power in (0.5, -0.5) else None
    return None


def literal_eps(fn, depth: int = 2) -> set:
    """The small constants the text of `fn` adds under a square root, following module-level
    functions it calls by name (depth calls)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError, ValueError):
        return set()
    out = set()
    for n in ast.walk(tree):
        inner = _under_root(n)
        if isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.Add):
            out |= {c for c in (_small(inner.left), _small(inner.right)) if c is not None}
        if depth and isinstance(n, ast.Call) and isinstance(n.func, ast.Name):
            called = getattr(fn, "__globals__", {}).get(n.func.id)
            if inspect.isfunction(called) and called is not fn:
                out |= literal_eps(called, depth - 1)
    return out


def _function_probe(adapter) -> None:
    try:
        params = inspect.signature(adapter.obj).parameters
    except (TypeError, ValueError):
        return
    if any(p.lower() in NAMES + ("layernorm_eps", "norm_eps", "ln_eps") for p in params):
        return                              # it takes its eps: the oracle passes it
    found = literal_eps(adapter.obj)
    if len(found) != 1:
        return
    eps = found.pop()
    if eps == 1e-5:
        return
    adapter.caps.norm_eps = eps
    adapter.notes.append(f"the norm's epsilon is fixed in the function's text at {eps:g} (added "
                         f"under its square root; it takes no eps argument): the reference uses "
                         f"eps {eps:g} (--set eps=... to require another)")


def probe(adapter) -> None:
    if "eps" in adapter.opts.settings:
        return                              # an adapter's build() is probed like a constructor
    if adapter.comp.name == "layernorm" and adapter.mode in ("function", "pair") and \
            adapter.hooks is None:
        _function_probe(adapter)
        return
    if adapter.comp.name not in COMPONENTS or adapter.mode != "class" or adapter.probe is None:
        return
    notes = list(adapter.notes)
    try:
        first = _eps_values(adapter.probe)
        other = _eps_values(adapter.construct(dict(adapter.probe_hyper(), eps=1e-3)))
    except Exception:  # noqa: BLE001 - the examples report what is wrong with the candidate
        return
    finally:
        adapter.notes[:] = notes
    if len(first) != 1 or first != other:
        return                              # none, several, or it follows the eps it is given
    eps = first.pop()
    if eps == 1e-5:
        return
    adapter.caps.norm_eps = eps
    adapter.notes.append(f"the norms' epsilon is fixed by the candidate's code at {eps:g} (built "
                         f"with two different eps, it did not change): the reference uses eps "
                         f"{eps:g} (--set eps=... to require another)")
