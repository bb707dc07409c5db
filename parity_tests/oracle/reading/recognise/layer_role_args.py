"""Recogniser: a whole layer whose forward takes its inputs under the attention's role names, as
the attention inside it does (`TransformerBlock.forward(value, key, query, mask)`,
`DecoderBlock.forward(x, value, key, src_mask, trg_mask)`), a pattern copied from a widely read
tutorial. An encoder layer attends to itself: its query, key and value arguments all get x. A
decoder layer's key and value arguments both get the encoder memory, its query (or x) argument
the decoder input. Torch code only (autograd sums the gradients of an input handed twice; a
NumPy backward would return one gradient per argument).

Found by the forward's argument names, read from its signature (nothing runs): at least two
arguments named exactly for a role (`query`/`queries`/`q`, `key`/`keys`/`k`, `value`/`values`/`v`:
`EncoderBlock.forward(q, k, v, mask)`, `DecoderBlock.forward(q, k, v, src_mask, trg_mask)`); for a
decoder layer one key and one value argument, and the decoder input under the query's or its own
names.
"""
from __future__ import annotations

ROLE_NAMES = {"query": "query", "queries": "query", "key": "key", "keys": "key",
              "value": "value", "values": "value", "q": "query", "k": "key", "v": "value"}
COPY = "@"


def _role_args(sig) -> dict[str, str]:
    if sig is None:
        return {}
    return {p.name: ROLE_NAMES[p.name.lower()] for p in sig.parameters.values()
            if p.name.lower() in ROLE_NAMES and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}


def _sources(comp, roles: dict[str, str]) -> list | None:
    masks = [(m.name, tuple(m.aliases), False) for m in comp.masks]
    if comp.name == "encoder_layer":
        names = list(roles)
        first = ("x", (names[0],) + tuple(comp.inputs[0].aliases), True)
        return [first] + [(f"x{COPY}{n}", (n,), True) for n in names[1:]] + masks
    if comp.name == "decoder_layer":
        keys = [n for n, r in roles.items() if r == "key"]
        values = [n for n, r in roles.items() if r == "value"]
        queries = [n for n, r in roles.items() if r == "query"]
        if len(keys) != 1 or len(values) != 1 or len(queries) > 1:
            return None
        x_names = tuple(queries) + tuple(comp.inputs[0].aliases)
        return [("x", x_names, True), ("memory", (values[0],), True),
                (f"memory{COPY}{keys[0]}", (keys[0],), True)] + masks
    return None


def bind(adapter, fn, how: dict):
    """The layer's forward bound with its role arguments given x (encoder layer) or the memory
    (a decoder layer's key and value), the note added; None when it does not take them so."""
    from ..naming import bind as bind_names
    from ..naming import signature_of
    if adapter.framework != "torch" or adapter.comp.name not in ("encoder_layer", "decoder_layer"):
        return None
    roles = _role_args(signature_of(fn))
    if len(roles) < 2:
        return None
    srcs = _sources(adapter.comp, roles)
    if srcs is None:
        return None
    b = bind_names(fn, srcs, **how)
    b.positional = [s.split(COPY, 1)[0] for s in b.positional]
    b.keywords = {a: s.split(COPY, 1)[0] for a, s in b.keywords.items()}
    b.arg_of = {s: a for s, a in b.arg_of.items() if COPY not in s}
    b.unbound = [s for s in b.unbound if COPY not in s]
    dec = adapter.comp.name == "decoder_layer"
    given = ", ".join(f"{a}={'memory' if dec and r != 'query' else 'x'}" for a, r in roles.items())
    note = "forward takes its inputs under the attention's role names: passed " + given
    if note not in adapter.notes:
        adapter.notes.append(note)
    return b
