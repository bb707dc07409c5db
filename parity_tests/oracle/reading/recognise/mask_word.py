"""Recogniser (report only): a mask taken by an optional argument no name list holds, the one whose
name has the word `mask` in it (`pad_attn_mask=None`, `keys_mask=None`; reading/signatures.ANY_MASK):
without it such a mask was never drawn and a right layer matched with its masks "not compared"
(and failed a grading that requires them). Whatever the argument's form, the mask recognisers
that follow (mask_rank, mask_forms, additive_mask) adapt to it by behaviour; this one says which
argument was taken."""
from __future__ import annotations


def probe(adapter) -> None:
    b = getattr(adapter, "binding", None)
    for arg, source in (getattr(b, "by_word", None) or {}).items():
        text = (f"forward argument {arg!r} (optional, named with the word 'mask'): takes the "
                f"{source}, no other argument being named for it")
        if text not in adapter.notes:
            adapter.notes.append(text)
