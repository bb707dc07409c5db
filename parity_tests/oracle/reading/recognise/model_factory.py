"""Recogniser: a whole model whose class is assembled from modules handed to it
(`EncoderDecoderTransformer(encoder, decoder, src_embed, tgt_embed, generator)`, the Annotated
Transformer's `EncoderDecoder`), built in its file by a function that makes the parts from sizes
and returns it (`make_transformer(src_vocab_size, tgt_vocab_size, num_layers, d_model, ...)`,
`build_transformer`, `make_model`). The class cannot be built from hyperparameters (before, each
part was built as a class from the file with the model's sizes: an `Encoder(layers)` given a
ModuleList it never got, RAISED); the function can, so the model is built through it and the
report says so.

Found by reading (nothing runs): the class's constructor requires no argument named for a size
(d_model, a vocabulary, a head count, a layer count, d_ff: `naming.HYPER_ALIASES`) and at least
two arguments; a module-level function of the same file returns an instance of the class (its
return annotation names the class, or it calls the class and returns that call or the name
bound to it), and takes at least one argument named for a size. One such function only. When the
class's file holds none, another file of its project is looked in (builder_files.py: a
`build_model.py` of its package, a `make_model.py` at the top of the checkout).
"""
from __future__ import annotations

import ast
import inspect
import os
import textwrap

from ..signatures import HYPER_ALIASES, signature_of
from .builder_files import builder_elsewhere

SIZES = ("d_model", "num_heads", "d_ff", "num_layers", "num_encoder_layers", "num_decoder_layers",
         "src_vocab", "tgt_vocab", "vocab_size")


def _size_names() -> set:
    return {a.lower() for k in SIZES for a in HYPER_ALIASES.get(k, [])}


def _takes_parts(cls) -> bool:
    sig = signature_of(cls.__init__)
    if sig is None:
        return False
    required = [p.name.lower() for p in sig.parameters.values() if p.name not in ("self", "cls")
                and p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    return len(required) >= 2 and not set(required) & _size_names()


def _makes(node, cls_name: str) -> bool:
    """Whether `node` calls the class, or a method on that call (`Transformer(...).to(device)`)."""
    while isinstance(node, ast.Call):
        if isinstance(node.func, ast.Name):
            return node.func.id == cls_name
        node = node.func.value if isinstance(node.func, ast.Attribute) else None
    return False


def _returns(fn_node: ast.FunctionDef, cls_name: str) -> bool:
    ann = fn_node.returns
    if isinstance(ann, (ast.Name, ast.Constant)) and cls_name in (getattr(ann, "id", None),
                                                                 getattr(ann, "value", None)):
        return True
    bound = set()
    for node in ast.walk(fn_node):
        if isinstance(node, ast.Assign) and _makes(node.value, cls_name):
            bound |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    for node in ast.walk(fn_node):
        if isinstance(node, ast.Return) and node.value is not None:
            v = node.value
            if _makes(v, cls_name) or (isinstance(v, ast.Name) and v.id in bound):
                return True
    return False


def factory(cls, module):
    """The module-level function of `module` that builds and returns `cls` from sizes, or None."""
    if not isinstance(cls, type) or module is None or not _takes_parts(cls):
        return None
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(module)))
    except (OSError, TypeError, SyntaxError, ValueError):
        return None
    found = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and _returns(node, cls.__name__):
            fn = getattr(module, node.name, None)
            if callable(fn) and _takes_size(fn):
                found.append(fn)
    if found:
        return found[0] if len(found) == 1 else None
    return builder_elsewhere(cls, module, _returns, _takes_size)


def _takes_size(fn) -> bool:
    sig = signature_of(fn)
    return sig is not None and bool({p.lower() for p in sig.parameters} & _size_names())


def note(cls, fn) -> str:
    where = "in its file"
    own, made = inspect.getmodule(cls), inspect.getmodule(fn)
    if made is not None and getattr(own, "__file__", None) != getattr(made, "__file__", None):
        where = f"in {os.path.basename(getattr(made, '__file__', '') or '?')} of its project"
    return (f"{cls.__name__}'s constructor takes its parts, not sizes: built through "
            f"{fn.__name__}(), the function {where} that makes the parts and returns it")


PART_WORDS = ("encoder", "decoder", "generator", "embed", "embedding", "embeddings", "enc", "dec")


def part_named(arg: str) -> bool:
    """Whether a constructor argument is named for a built part of the model (`encoder`,
    `decoder`, `src_embed`, `generator`): a size handed there by position is never what the
    class means (cfn's `Transformer(encoder, decoder, pad_idx)` was handed two vocabulary sizes)."""
    words = [w for w in arg.lower().split("_") if w]
    return bool(words) and any(w in PART_WORDS for w in words) and not any(
        w in ("size", "sizes", "dim", "layers", "layer", "vocab", "num", "n", "len", "heads", "d")
        for w in words)


def parts_message(cls_name: str, parts: list) -> str:
    return (f"{cls_name}'s constructor takes its parts built ({', '.join(parts)}), not sizes, and "
            f"no function of its file or project builds it from sizes: the model cannot be built "
            f"by the oracle; give an --adapter file whose build hook makes it, or check its parts "
            f"(encoder_layer, decoder_layer, mha, ffn, ...)")
