"""Generated text as a terminal shows it safely: `visible(text)`.

A language model can sample characters no one typed: a byte-level BPE model can emit any byte, and
a character model any character of its corpus. Printed raw, a carriage return rewrites the line
that holds it, an escape (ESC, or the one-character CSI U+009B) starts a terminal control sequence
(colours, cursor moves, a changed window title), a NUL or BEL is invisible. `visible` writes every
C0 control character but tab and newline, DEL and the C1 controls as a Python-style escape
(`\\x1b`, `\\r`, `\\x9b`), so what was generated is shown, never obeyed. Everything else, tabs,
newlines, every script and emoji included, is left as it is.
"""
from __future__ import annotations

__all__ = ["visible"]

_NAMED = {"\r": "\\r", "\x0b": "\\v", "\x0c": "\\f", "\x08": "\\b", "\x07": "\\a", "\0": "\\0"}
_ESCAPES = {c: _NAMED.get(chr(c), f"\\x{c:02x}")
            for c in [*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0)]}


def visible(text: str) -> str:
    """`text` with its control characters (all of C0 but tab and newline, DEL, C1) escaped."""
    if not isinstance(text, str):
        raise TypeError(f"text: expected a str, got {type(text).__name__}")
    return text.translate(_ESCAPES)
