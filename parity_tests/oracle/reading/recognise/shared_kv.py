"""Recogniser: attention taking key and value as ONE argument (`forward(x, kv, mask)`,
`forward(query_tokens, key_or_value_tokens, mask)`), the same tensor serving as both, as encoder
memory does in a decoder's cross-attention. Checked as multi-head attention whose key and value are
equal: the query and the key/value tensor are drawn apart (unequal lengths too), the reference is
MultiHead(q, kv, kv), and the gradient of the one argument is compared with dk + dv. The report
says so, and that keys and values were never drawn apart.

Found by the forward's argument names, read from its signature (nothing runs): one argument whose
name holds both `key` and `value`, or is `kv` (`kv`, `k_v`, `x_kv`, `kv_input`, `memory_kv`),
beside no argument of its own for the key or the value.
"""
from __future__ import annotations

from ...components import K_ALIASES, Q_ALIASES, V_ALIASES, X_ALIASES

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


def sources(comp, arg: str) -> list:
    """Binding sources: the query (by the query's or a single input's names), the key/value
    argument by its own name, then the masks as usual."""
    ins = [("query", tuple(Q_ALIASES) + tuple(X_ALIASES), True), (SOURCE, (arg,), True)]
    return ins + [(m.name, tuple(m.aliases), False) for m in comp.masks]


NOTE = ("forward takes key and value as one argument: checked as MultiHead(q, kv, kv), the "
        "gradient of that argument compared with dk + dv")


def bind(adapter, fn, how: dict):
    """The mha forward bound as forward(q, kv, mask) when it takes key and value as one argument
    (caps.shared_kv set, the note added), else None. `how`: naming.bind's keyword arguments."""
    from ..naming import bind as bind_names
    from ..naming import signature_of
    if adapter.comp.name != "mha" or adapter.caps.self_attention:
        return None
    arg = kv_argument(signature_of(fn))
    if arg is None:
        return None
    b = bind_names(fn, sources(adapter.comp, arg), **how)
    adapter.caps.shared_kv = True
    if NOTE not in adapter.notes:
        adapter.notes.append(NOTE)
    return b
