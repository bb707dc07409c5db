"""Sizes a file's classes read as globals that only its `if __name__ == "__main__":` block sets
(graykode's nlp-tutorial Transformer and its many copies: `d_model = 512`, `n_heads = 8`,
`d_k = d_v = 64`, `d_ff = 2048` there, `nn.Linear(d_model, d_k * n_heads)` and `/ np.sqrt(d_k)`
in the classes, constructors without arguments). The loader runs those plain assignments after the
definitions (script_code.main_block_constants). They are the code's constructor arguments in all
but name, so each top-level build first sets them, by what their names mean, to the example's
sizes, as a constructor's arguments would be: the model width, the head count, the width of one
head (`d_k`, `d_v`: the example's per-head width), the feed-forward width, the layer count and the
vocabulary sizes. A name that means none of these keeps the file's value, and so does one whose
size the built class's constructor takes as an argument itself: code reading the global there
ignores its argument, and a caller's other value would not reach it. The globals stay set
until the next build, so a forward reading them (`np.sqrt(d_k)`) sees the sizes of its own
instance; the report says which names were set so."""
from __future__ import annotations

import inspect
import os
import weakref

from .name_words import names_hyper
from .script_code import MAIN_SET
from .signatures import HYPER_ALIASES

HEAD_WIDTHS = {"d_k": "dk", "d_q": "dk", "d_v": "dv", "d_head": "dk", "head_dim": "dk",
               "dim_head": "dk", "head_size": "dk", "d_key": "dk", "d_value": "dv"}
"""Names of one head's width, and the sdpa size that is that width (query/key or value)."""
SIZES = ("d_model", "num_heads", "d_ff", "num_layers", "num_encoder_layers", "num_decoder_layers",
         "src_vocab", "tgt_vocab", "vocab_size")
ONE_LETTER = ("n", "h", "d", "p", "N")
"""Aliases too short to read a module-level global by: `n` or `d` at the top of a file is rarely
a width."""


def _meaning(name: str) -> str | None:
    low = name.lower()
    if low in HEAD_WIDTHS:
        return HEAD_WIDTHS[low]
    for hyper in SIZES:
        if (name not in ONE_LETTER and low in (a.lower() for a in HYPER_ALIASES.get(hyper, ()))) \
                or names_hyper(hyper, name):
            return hyper
    return None


def _value(meaning: str, values: dict):
    if meaning in ("dk", "dv"):
        own = {"dk": "d_k", "dv": "d_v"}[meaning]           # an sdpa's head widths, as drawn
        if own in values:
            return int(values[own])
        if "d_model" in values and "num_heads" in values:
            return int(values["d_model"]) // int(values["num_heads"])
        return None
    if meaning in ("num_encoder_layers", "num_decoder_layers") and meaning not in values:
        meaning = "num_layers"
    v = values.get(meaning)
    return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


BUILT: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
"""Each object built with such sizes -> (its module, the sizes it was built with)."""


def remember(obj, module, sizes: dict) -> None:
    if sizes:
        try:
            BUILT[obj] = (module, dict(sizes))
        except TypeError:                 # an object weakref cannot hold keeps no sizes
            pass


def before_call(fn) -> None:
    """The sizes of the instance `fn` is (or is a method of) set again in its module."""
    for obj in (fn, getattr(fn, "__self__", None)):
        try:
            found = BUILT.get(obj) if obj is not None else None
        except TypeError:
            found = None
        if found is not None:
            found[0].__dict__.update(found[1])
            return


def own_arguments(target) -> tuple[str, ...]:
    """The names of what the class or factory `target` takes (() where it cannot be read)."""
    try:
        sig = inspect.signature(target.__init__ if isinstance(target, type) else target)
    except (TypeError, ValueError):
        return ()
    return tuple(n for n in sig.parameters if n not in ("self", "cls"))


def set_sizes(module, values: dict, notes: list, arguments: tuple = ()) -> dict:
    """Before a top-level build: the module's __main__-set sizes given the example's values, but
    for sizes the constructor takes among its `arguments`; returns them ({} when the file sets
    none)."""
    path = getattr(module, "__file__", None)
    names = MAIN_SET.get(os.path.abspath(path)) if path else None
    if not names:
        return {}
    done, taken = [], {_meaning(a) for a in arguments} - {None}
    for name in names:
        current = module.__dict__.get(name)
        meaning = _meaning(name)
        if meaning is None or not isinstance(current, int) or isinstance(current, bool):
            continue
        if meaning in taken:
            kept = (f"the global {name} its __main__ block sets kept the file's value "
                    f"({current}): the constructor takes that size as an argument itself")
            if kept not in notes:
                notes.append(kept)
            continue
        v = _value(meaning, values)
        if v is not None:
            module.__dict__[name] = v
            done.append(name)
    note = (f"sizes the file's classes read as globals set by its __main__ block ({', '.join(done)}) "
            f"are given each example's sizes by what their names mean before every build, as "
            f"constructor arguments would be")
    if done and note not in notes:
        notes.append(note)
    return {n: module.__dict__[n] for n in done}
