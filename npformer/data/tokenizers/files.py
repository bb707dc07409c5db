"""Reading a tokenizer's own files (vocab.json, merges.txt, vocab.txt): UTF-8 text, or an error that
names the file and the first byte that is not."""
from __future__ import annotations

import io

__all__ = ["read_utf8", "read_utf8_lines"]


def read_utf8(path: str) -> str:
    """The text of `path`; ValueError naming the file when it is not UTF-8 (a binary file, or text
    in another encoding)."""
    with open(path, "rb") as f:
        data = f.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not UTF-8: byte 0x{data[e.start]:02x} at offset {e.start} "
                         f"({e.reason}); a tokenizer file is UTF-8 text") from None


def read_utf8_lines(path: str) -> list[str]:
    """The lines of `path` without their endings, split as a file opened in text mode splits them
    (\\n, \\r\\n or \\r), no empty line after a final newline; ValueError as read_utf8."""
    return [line.rstrip("\n") for line in io.StringIO(read_utf8(path), newline=None)]
