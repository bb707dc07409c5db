"""Recogniser: constructors that take sub-modules, e.g.
`EncoderLayer(d_model, self_attn: MultiHeadAttention, feed_forward: PositionwiseFeedForward, dropout)`.

A required argument annotated with a class, or named like a role the oracle knows (attention,
feed-forward, norm), is given a fresh instance of the matching class DEFINED IN THE SAME FILE as the
candidate (or, when that file defines none, in a sibling file of its folder: sibling_files.py),
built from the same hyperparameters (recursively, with the same recognisers). A norm with no class
of its own in the file becomes torch.nn.LayerNorm for a torch candidate.

An argument that asks for the class itself, dependency-injection style (`attn_cls`,
`ffn_class`, `norm_factory`, annotated `type[MHA]` / `Type[MHA]` / `Callable[..., nn.Module]`, or
`attention_type` that the constructor calls), gets that class, not an instance: the class the
annotation names, else the file's class of that role.
"""
from __future__ import annotations

import ast
import collections.abc
import inspect
import re
import sys
import textwrap
import typing

from ..name_words import COUNT_WORDS
from .base import MISSING
from .configs import annotation_class
from .flags import PREFIXES
from .sibling_files import sibling_file_class

ROLES = {
    "mha": (("self_attn", "attn", "attention", "mha", "self_attention", "slf_attn", "multihead_attn",
             "cross_attn", "src_attn", "enc_attn", "self_attn_layer", "attention_layer",
             "multi_head_attention", "enc_dec_attn", "masked_attn", "cross_attention"),
            ("multihead", "multi_head", "mha", "attention", "attn")),
    "ffn": (("feed_forward", "ffn", "ff", "pos_ffn", "mlp", "feedforward", "positionwise_ffn",
             "position_wise_ffn", "pwff", "feed_forward_layer", "ffn_layer"),
            ("feedforward", "feed_forward", "ffn", "mlp", "positionwise", "position_wise", "pointwise")),
    "norm": (("norm", "layer_norm", "layernorm", "ln", "norm1", "norm2", "norm3", "ln1", "ln2"),
             ("layernorm", "layer_norm", "norm")),
}
ORDER = {"mha": ("d_model", "num_heads"), "ffn": ("d_ff", "d_model", "activation"),
         "norm": ("d_model", "eps")}


SIZE_WORDS = ("dim", "dims", "dimension", "dimensions", "dimensionality", "size", "width",
              "features", "units")
"""A last word saying the argument is a width (`feedforward_dimension`), not a block."""

NUMBER_WORDS = ("p", "prob", "probability", "rate", "ratio", "factor", "multiplier", "mult")
"""A last word saying the argument is a number (`attention_dropout_p`, `mlp_ratio`), not a block;
so is any name holding a dropout word (`attn_drop`, `mlp_dropout`)."""


WORDS = {"mha": ("attention", "attn", "mha", "multihead"),
         "ffn": ("feedforward", "ffn", "ff", "mlp", "pointwise", "positionwise")}
"""Words that name a block inside a longer argument name (`multi_headed_attention`,
`pointwise_net`, `feed_forward_block`); a name holding words of both roles names neither."""


def role_of(name: str) -> str | None:
    n = name.lower()
    for role, (names, _) in ROLES.items():
        if n in names:
            return role
    if n.startswith(PREFIXES):                 # log_attention_weights is a switch, not a block
        return None
    words = [w for w in re.split(r"[^a-z]+", n) if w]
    if words and words[-1] in SIZE_WORDS:       # feedforward_dimension, attention_size: a width
        return None
    if words and (words[-1] in NUMBER_WORDS or any(w.startswith("drop") for w in words)):
        return None                             # attention_dropout_p, mlp_ratio: a number
    if any(w in COUNT_WORDS for w in words):
        return None                             # mlp_num_outputs, n_ffn: a count
    joined = {a + b for a, b in zip(words, words[1:])}     # feed_forward -> feedforward
    found = {role for role, keys in WORDS.items() if any(k in words or k in joined for k in keys)}
    return found.pop() if len(found) == 1 else None


def sibling_class(module, role: str, exclude=None, files: bool = True):
    """The class of the candidate's own file that plays `role` (by its name), else (with `files`)
    one of a sibling file of its folder, or None; never `exclude` (the class being built), its
    bases nor its subclasses."""
    if module is None:
        return None
    keys = ROLES[role][1]

    def accept(low: str) -> bool:
        return not (role == "mha" and "layer" in low and "attention" not in low)

    found = []
    for name, obj in vars(module).items():
        if inspect.isclass(obj) and not _kin(obj, exclude) and \
                getattr(obj, "__module__", None) == module.__name__:
            low = name.lower()
            rank = next((i for i, k in enumerate(keys) if k in low), None)
            if rank is not None and accept(low):
                found.append((rank, len(name), obj))
    if found:
        return min(found, key=lambda t: (t[0], t[1]))[2]
    return sibling_file_class(module, keys, accept) if files else None


def _kin(cls: type, other) -> bool:
    """`cls` is `other`, a base or a subclass of it (an argument of a class is never one)."""
    return isinstance(other, type) and (issubclass(cls, other) or issubclass(other, cls))


CLASS_ENDINGS = ("cls", "class", "factory")
"""Last words saying an argument is a class to build from (`attn_cls`, `ffn_class`)."""


def _annotation(param, module):
    ann = param.annotation
    if isinstance(ann, str) and module is not None:
        try:
            ann = eval(ann, vars(module))          # noqa: S307 - the module's own annotation text
        except Exception:  # noqa: BLE001 - unresolvable: read as no annotation
            return None
    return None if ann is inspect.Parameter.empty else ann


def _called_in_init(ctx, name: str) -> bool:
    """The constructor being built calls its argument `name` (`self.attn = attention_type(...)`)."""
    target = getattr(sys.modules.get(ctx.target_module or ""), str(ctx.target_name or ""), None)
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(target.__init__)))
    except Exception:  # noqa: BLE001 - no source: not known to call it
        return False
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == name
               for n in ast.walk(tree))


def class_wanted(ctx, param) -> tuple[bool, type | None]:
    """(True, the class an annotation names, or None) when the argument is a class to build from
    rather than a built block; (False, None) otherwise."""
    ann = _annotation(param, ctx.module)
    origin, args = typing.get_origin(ann), typing.get_args(ann)
    if ann is type or origin in (type, collections.abc.Callable):    # type[MHA], Callable[..., X]
        made = args[0] if origin is type and args else (args[-1] if args else None)
        named = inspect.isclass(made) and made.__module__ not in ("builtins", "typing") and \
            made.__name__ != "Module"                                 # nn.Module: the role's class
        return True, made if named else None
    words = [w for w in re.split(r"[^a-z]+", param.name.lower()) if w]
    last = words[-1] if words else ""
    if last.endswith(CLASS_ENDINGS) or (last == "type" and _called_in_init(ctx, param.name)):
        return True, None
    return False, None


def value(ctx, param, values: dict):
    if ctx.depth >= 3:
        return MISSING
    wanted, cls = class_wanted(ctx, param)
    cls = cls or (None if wanted else annotation_class(param, ctx.module))
    role = role_of(param.name)
    if cls is not None and (cls.__module__ in ("builtins", "typing") or cls is dict):
        cls = None
    if cls is None and role is not None:
        torch_norm = role == "norm" and ctx.framework == "torch"     # nn.LayerNorm before siblings
        cls = sibling_class(ctx.module, role, exclude=ctx.target, files=not torch_norm)
        if cls is None and torch_norm:
            import torch
            cls = torch.nn.LayerNorm
    if cls is None or (_kin(cls, ctx.target) and not wanted):     # never an argument of itself
        return MISSING
    if wanted:
        ctx.note(f"constructor argument {param.name!r}: passed the class {cls.__name__} itself "
                 f"(the argument names a class to build from)")
        return cls
    order = ORDER.get(role or "", ctx.order)
    made = ctx.build(cls, values, order)
    ctx.note(f"constructor argument {param.name!r}: built a {cls.__name__} from the same "
             f"hyperparameters")
    return made
