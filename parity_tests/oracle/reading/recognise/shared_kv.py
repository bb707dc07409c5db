"""Recogniser: attention taking key and value as ONE argument (`forward(x, kv, mask)`,
`forward(query_tokens, key_or_value_tokens, mask)`), the same tensor serving as both, as encoder
memory does in a decoder's cross-attention. Checked as multi-head attention whose key and value are
equal: the query and the key/value tensor are drawn apart (unequal lengths too), the reference is
MultiHead(q, kv, kv), and the gradient of the one argument is compared with dk + dv. The report
says so, and that keys and values were never drawn apart.

Found by the forward's argument names, read from its signature (nothing runs): one argument whose
name holds both `key` and `value`, or is `kv` (`kv`, `k_v`, `x_kv`, `kv_input`, `memory_kv`),
beside no argument of its own for the key or the value. Also two inputs named by number
(`forward(x1, x2, x2_mask=None)`, `input_1, input_2`), the first two required arguments, with no
argument named for the query, key or value: the first is the query, the second key and value.
And cross-attention named for what it reads (`forward(decoder_x, encoder_output)`, `forward(x,
memory, mask=None)`): the second required argument named for the encoder's output (`memory`,
`enc_out`, `encoder_output`, `context`, ...; any name holding `encoder`), the first for the
decoder's input or as an input, none for the query, key or value: the first is the query, the
second key and value. Failing all names, the argument the forward hands to its query projection is
the query, whichever comes first (`forward(x, y, mask)` with `q = self.q_layer(y)`: query_source).
"""
from __future__ import annotations

import re

from ...components import K_ALIASES, Q_ALIASES, V_ALIASES, X_ALIASES
from . import memory_source
from .query_source import query_pair

SOURCE = "key_value"
KV_WORDS = ("kv", "k_v", "keyvalue", "keyorvalue", "keysvalues", "keys_values")


NOT_INPUT = ("cache", "past", "mask", "len", "pad", "head", "dim", "size", "proj", "weight", "bias",
             "use", "num", "pos", "idx", "index", "state")
"""Words that make a kv-like name something else than the input (`kv_cache`, `kv_mask`,
`key_value_heads`, `use_kv`)."""


def is_kv_name(name: str) -> bool:
    n = name.lower()
    if any(w in n for w in NOT_INPUT):
        return False
    return n in KV_WORDS or n.startswith("kv_") or n.endswith("_kv") or ("key" in n and "value" in n)


def kv_argument(sig) -> str | None:
    """The forward's one key-and-value argument, or None (none, or separate key/value ones too)."""
    if sig is None:
        return None
    names = [p.name for p in sig.parameters.values() if p.name not in ("self", "cls")
             and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    kv = [n for n in names if is_kv_name(n)]
    own = {a.lower() for a in K_ALIASES + V_ALIASES}
    if len(kv) != 1 or any(n.lower() in own for n in names):
        return None
    return kv[0]


NUMBERED = re.compile(r"^([a-z_]*?)_?([12])$")


def numbered_pair(sig) -> tuple[str, str] | None:
    """(query argument, key/value argument) when the forward's first two required arguments are one
    name numbered 1 and 2 (`x1, x2`) and none is named for the query, key or value; else None."""
    if sig is None:
        return None
    params = [p for p in sig.parameters.values() if p.name not in ("self", "cls")
              and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    own = {a.lower() for a in Q_ALIASES + K_ALIASES + V_ALIASES}
    required = [p.name for p in params if p.default is p.empty]
    if len(required) < 2 or any(p.name.lower() in own for p in params):
        return None
    first, second = (NUMBERED.match(n.lower()) for n in required[:2])
    if first is None or second is None or first.group(1) != second.group(1) or \
            (first.group(2), second.group(2)) != ("1", "2"):
        return None
    return required[0], required[1]


MEMORY_NAMES = ("memory", "mem", "enc_out", "enc_output", "enc_outputs", "encoder_out",
                "encoder_output", "encoder_outputs", "encoder_hidden_states", "memory_bank",
                "context", "encoded", "enc_hidden", "e_outputs")
DECODER_WORDS = ("decoder", "dec", "tgt", "trg", "target")


def memory_pair(sig) -> tuple[str, str] | None:
    """(query argument, key/value argument) when the forward's second required argument is named
    for the encoder's output and the first for the decoder's input (or as an input), none for the
    query, key or value; else None."""
    if sig is None:
        return None
    params = [p for p in sig.parameters.values() if p.name not in ("self", "cls")
              and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    own = {a.lower() for a in Q_ALIASES + K_ALIASES + V_ALIASES}
    required = [p.name for p in params if p.default is p.empty]
    if len(required) < 2 or any(p.name.lower() in own for p in params):
        return None
    first, second = (n.lower() for n in required[:2])
    memory = second in MEMORY_NAMES or "encoder" in second
    decoder_input = first in {a.lower() for a in X_ALIASES} or \
        any(w in first.split("_") for w in DECODER_WORDS)
    if not memory or not decoder_input or "mask" in first or "mask" in second:
        return None
    return required[0], required[1]


def sources(comp, arg: str, query: str | None = None) -> list:
    """Binding sources: the query (by the query's or a single input's names, or `query`), the
    key/value argument by its own name, then the masks as usual."""
    ins = [("query", tuple(Q_ALIASES) + tuple(X_ALIASES) + ((query,) if query else ()), True),
           (SOURCE, (arg,), True)]
    return ins + [(m.name, tuple(m.aliases), False) for m in comp.masks]


NOTE = ("forward takes key and value as one argument: checked as MultiHead(q, kv, kv), the "
        "gradient of that argument compared with dk + dv")


def bind(adapter, fn, how: dict):
    """The mha forward bound as forward(q, kv, mask) when it takes key and value as one argument
    (caps.shared_kv set, the note added), else None. `how`: naming.bind's keyword arguments."""
    from ..naming import bind as bind_names
    from ..naming import signature_of
    if adapter.comp.name == "decoder_layer":          # the layer's memory: key and value of its cross-attention
        return memory_source.bind(adapter, fn, how)
    if adapter.comp.name != "mha" or adapter.caps.self_attention:
        return None
    sig = signature_of(fn)
    arg, query = kv_argument(sig), None
    numbered = False
    if arg is None:
        query, arg = numbered_pair(sig) or (None, None)
        numbered = arg is not None
    if arg is None:
        query, arg = memory_pair(sig) or (None, None)
    read = arg is None
    if read:
        query, arg = query_pair(fn, sig) or (None, None)
    if arg is None:
        return None
    b = bind_names(fn, sources(adapter.comp, arg, query), **how)
    adapter.caps.shared_kv = True
    how_named = "inputs named by number" if numbered else \
        "the one handed to the query projection is the query" if read else \
        "the second named for the encoder's output"
    first, second = sorted((query, arg), key=list(sig.parameters).index) if query else (query, arg)
    for note in (NOTE, f"forward({first}, {second}, ...): {how_named}, {query!r} read as "
                       f"the query and {arg!r} as key and value" if query else None):
        if note and note not in adapter.notes:
            adapter.notes.append(note)
    return b
