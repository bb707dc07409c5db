"""Recogniser: a whole model's output projection (not tied to a table) kept in a part of its own
under a name no alias list holds: `self.projection_layer = ProjectionLayer(d_model, vocab)` whose
`self.proj = nn.Linear(d_model, vocab)`, as the widely copied translation tutorial writes it. After
every other parameter is placed, the reference's `output_proj.weight` takes the one unclaimed
candidate matrix of its shape (vocabulary x d_model, or transposed) whose name has an output word
(vocab_tables.OUTPUT_WORDS: proj, projection, generator, head, ...) and no embedding word, when
there is exactly one; `output_proj.bias` then takes the bias beside it (`<part>.bias`)."""
from __future__ import annotations

from .vocab_tables import EMBED_WORDS, OUTPUT_WORDS, _words


def place(r) -> None:
    """Place an untied output projection by shape and an output word (see the module's text)."""
    wref, bref = "output_proj.weight", "output_proj.bias"
    shape = r.ref_shapes.get(wref)
    if shape is None or wref in r.entries:
        return
    free = [n for n in r.space.names if n not in r.claimed
            and tuple(r.space.shapes.get(n) or ()) in (tuple(shape), tuple(shape)[::-1])
            and _words(n) & set(OUTPUT_WORDS) and not _words(n) & set(EMBED_WORDS)]
    if len(free) != 1 or not r.take(wref, free[0], how="shape"):
        return
    e = r.entries[wref]
    e.why = (e.why + "; " if e.why else "") + "the model's one unclaimed output matrix of this shape"
    part = free[0].rsplit(".", 1)[0] if "." in free[0] else ""
    bias = f"{part}.bias" if part else "bias"
    if bref in r.ref_shapes and bref not in r.entries and bias in r.space.names and \
            bias not in r.claimed and r.take(bref, bias, how="shape"):
        e = r.entries[bref]
        e.why = (e.why + "; " if e.why else "") + "the bias beside the output matrix"
