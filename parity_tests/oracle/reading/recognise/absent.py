"""Recogniser: parameters the candidate really does not have (a Linear without bias, a LayerNorm
without gain). The oracle only says "absent" when it can know it; otherwise the weight is an
interface error naming it, and `--map REF=-` states that it is absent.

    function / pair  the signature lists every array the function takes: none was given for it
    torch module     named_parameters() lists every parameter; absent when no unclaimed parameter
                     or buffer has a shape it could be
    output projection  an attention module (ELECTRA's self-attention) whose q, k, v projections
                     are all placed and that has no unclaimed (d, d) matrix: it returns the merged
                     heads, checked against the reference's attention before out_proj (held at the
                     identity); the report lists it as not compared
    numpy module     a projection's bias (attention, feed-forward): absent when a walk of
                     everything the object reaches (attributes, private ones and cache dicts
                     included, lists, dicts, parts; gradient dicts and the `.grad` a parameter
                     object keeps beside its value left out) ends within its bounds and finds no
                     array but the claimed ones that could be it; so is the gain or shift of a norm
                     inside a layer or model (a layer computing its norms without parameters). A
                     LayerNorm checked on its own never has its gain or shift called absent (its
                     check is about them; affine_free_norm): interface error unless --map REF=-
"""
from __future__ import annotations

import inspect

import numpy as np

WALK_DEPTH = 8
WALK_OBJECTS = 2000
LEAVES = (str, bytes, int, float, complex, bool, np.generic, np.random.Generator,
          np.random.RandomState, np.random.BitGenerator, np.random.SeedSequence)
"""Values that hold no array of the candidate's (a random generator a part keeps to draw its
dropout masks is no bias)."""


GRAD_DICTS = ("grads", "gradients", "dparams", "param_grads")
"""Attributes holding the object's parameter gradients (a dict keyed by parameter name), also
under a private name (`self._grads = {"gamma": zeros(d), ...}` in a norm: no bias of a layer's
attention)."""

GRAD_SLOTS = ("grad", "gradient")
"""The gradient a parameter object keeps beside its value (`Parameter(data).grad`, zeros of the
value's shape until a backward): no parameter of its own, so no bias either."""


def _vector_like(ref_shape, shape) -> bool:
    from .row_bias import unit_axes_shape
    return tuple(shape) == tuple(ref_shape) or unit_axes_shape(ref_shape, shape) is not None


def _torch_tensors(m):
    """Every float tensor the module registers: parameters and buffers (a plain tensor attribute
    is neither trained nor saved, and may be an activation kept by a forward)."""
    from ..plain_torch_params import named_tensors  # a plain class: its tensors requiring grad
    out = named_tensors(m)
    out.update(dict(m.named_buffers()) if hasattr(m, "named_buffers") else {})
    return {n: t for n, t in out.items() if t.is_floating_point()}


def _no_output_projection(adapter, module, ref: str, ref_shape, entries: dict) -> str | None:
    if adapter.comp.name != "mha" or ref != "out_proj.weight" or adapter.framework != "torch" or \
            module is None or len(ref_shape) != 2:
        return None
    placed = [entries.get(f"{p}_proj.weight") for p in "qkv"]
    if any(e is None or (e.cand is None and not e.parts) for e in placed):
        return None
    claimed = {e.cand for e in entries.values() if e.cand} | \
        {p[0] for e in entries.values() for p in e.parts}
    if any(n not in claimed and t.dim() == 2 for n, t in _torch_tensors(module).items()):
        return None
    return ("the module has no output projection (q, k, v placed, no other matrix): checked "
            "against the reference's attention before out_proj, held at the identity")


def _gradient_beside(name: str, value, attrs: dict) -> bool:
    """Whether attribute `name` is the gradient of another array attribute of the same object:
    named so (`grad_W_q`, `dgamma`, `bias_grad`: slots.GRAD_PATTERNS), also privately (`_dW` beside
    `W` or `_W`), and of its shape."""
    from ..slots import GRAD_PATTERNS
    if not isinstance(value, np.ndarray):
        return False
    bare = name.lstrip("_")
    for pat in GRAD_PATTERNS:
        pre, _, post = pat.partition("{}")
        if bare.startswith(pre) and bare.endswith(post) and len(bare) > len(pre) + len(post):
            stem = bare[len(pre): len(bare) - len(post)]
            for base in (attrs.get(stem), attrs.get("_" + stem)):
                if isinstance(base, np.ndarray) and base.shape == value.shape:
                    return True
    return False


def _layer_norm_leaf(owner: str, ref: str, ref_shape) -> bool:
    """A gain or shift of a norm inside a larger component (`norm1.weight` of a layer): looked for
    as a bias is. A LayerNorm checked on its own (owner "") keeps its interface error
    (affine_free_norm), its gain and shift being what that check is about."""
    return owner != "" and "norm" in owner.rsplit(".", 1)[-1] and len(ref_shape) == 1 and \
        ref.rsplit(".", 1)[-1] in ("weight", "bias")


def _numpy_arrays(obj) -> list | None:
    """Every array reachable from a NumPy candidate (attributes of any name, lists, tuples, dicts,
    parts), or None when the walk meets its bounds (then nothing can be said absent)."""
    found, seen = [], set()
    stack = [(obj, 0)]
    while stack:
        o, depth = stack.pop()
        if isinstance(o, np.ndarray):
            found.append(o)
            continue
        if id(o) in seen or isinstance(o, LEAVES) or o is None or inspect.ismodule(o) \
                or inspect.isclass(o) or inspect.isroutine(o):
            continue
        seen.add(id(o))
        if depth > WALK_DEPTH or len(seen) > WALK_OBJECTS:
            return None
        if isinstance(o, dict):
            items = list(o.values())
        elif not isinstance(o, (list, tuple, set, frozenset)) and hasattr(o, "__dict__"):
            # a gradient dict (`self.grads = {'W_q': ...}`) holds no parameter of the object, nor
            # does a gradient kept beside its parameter (`self.grad_gamma` beside `self.gamma`)
            own = vars(o)
            items = [v for k, v in own.items() if k.lstrip("_") not in GRAD_DICTS + GRAD_SLOTS
                     and not _gradient_beside(k, v, own)]
        elif isinstance(o, (list, tuple, set, frozenset)):
            items = list(o)
        else:
            return None                      # slots or a C object: what it holds is not known
        stack.extend((v, depth + 1) for v in items)
    return found


def _numpy_bias_absent(module, ref: str, ref_shape, entries: dict) -> str | None:
    owner = ref.rsplit(".", 1)[0] if "." in ref else ""
    if module is None or not (_layer_norm_leaf(owner, ref, ref_shape)
                              or ("norm" not in owner and ref.rsplit(".", 1)[-1] == "bias")):
        return None
    from ..slots import numpy_space
    arrays = _numpy_arrays(module)
    if arrays is None:
        return None
    _, slots = numpy_space(module)
    claimed = {e.cand for e in entries.values() if e.cand} | \
        {p[0] for e in entries.values() for p in e.parts}
    held = {id(slots[n].array()) for n in claimed if n in slots}
    if any(id(a) not in held and _vector_like(ref_shape, a.shape) for a in arrays):
        return None
    return "no array the object reaches could be it (a walk of all it holds)"


def reason(adapter, module, ref: str, ref_shape, entries: dict) -> str | None:
    """Why the candidate has no `ref` (a bias, a norm parameter, an attention's output projection),
    or None when it may have one."""
    leaf = ref.rsplit(".", 1)[-1]
    owner = ref.rsplit(".", 1)[0] if "." in ref else ""
    why = _no_output_projection(adapter, module, ref, ref_shape, entries)
    if why is not None:
        return why
    if not (leaf == "bias" or (len(ref_shape) == 1 and ("norm" in owner or owner == ""))):
        return None
    if adapter.mode in ("function", "pair"):
        return "the function takes no argument for it"
    if adapter.framework == "torch" and module is not None:
        claimed = {e.cand for e in entries.values() if e.cand} | \
            {p[0] for e in entries.values() for p in e.parts}
        could = [n for n, t in _torch_tensors(module).items()
                 if n not in claimed and _vector_like(ref_shape, t.shape)]
        if not could:
            return "no parameter or buffer of the module could be it"
    if adapter.framework == "numpy" and adapter.mode not in ("function", "pair"):
        return _numpy_bias_absent(module, ref, ref_shape, entries)
    return None
