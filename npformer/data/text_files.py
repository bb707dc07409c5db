"""Reading a text corpus from files and folders, with one-line errors for what cannot be text.

    read_corpus(paths) -> Corpus(text, files, skipped)

A path may be a file or a folder. A file given by name must be text: not empty, no NUL byte (a
binary file), valid UTF-8; anything else raises TextFileError naming the file and what is wrong
(the first bad byte's offset for UTF-8; UTF-16 and UTF-32 text is named as such, with the
conversion to run). A folder contributes every regular, non-hidden file under
it (recursively, in sorted order) that is text by the same test; the others are skipped and counted,
and a folder without a single text file is an error. The files are joined in the order given, each
ending with a newline, so that one file's last line never runs into the next file's first.

Line endings are normalised to "\\n" (Windows and old-Mac files give the same characters); a UTF-8
byte-order mark at the start of a file is dropped.

A file is read whole, so one whose bytes and decoded text (twice its size, beside the files read
before it) cannot fit in the memory this process can still allocate is refused, naming it and its
size, before a byte of it is read (a 20 GB log was read until the process ran out of memory).
"""
from __future__ import annotations

import errno
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from npformer.guards.rules import available_memory, format_bytes

__all__ = ["TextFileError", "TextTooLargeError", "Corpus", "normalise_text", "read_text_file", "read_corpus",
           "read_saved"]

MISSING = "no such file or folder"
WIDE_PROBE = 8192                   # bytes looked at to tell UTF-16/UTF-32 text from binary
READ_COPIES = 2                     # a file held at once as its bytes and as their decoded text


class TextFileError(ValueError):
    """A file or folder that cannot serve as a text corpus; the message names it."""

    def __init__(self, path, problem: str):
        self.path, self.problem = str(path), problem
        super().__init__(f"--data {path}: {problem}")


class TextTooLargeError(TextFileError):
    """A text file too large to read into this process's memory (inside a folder too: it is text,
    so skipping it would train on less than the user gave)."""


@dataclass
class Corpus:
    """The joined text of the files read, the files in order, and the folder files skipped."""
    text: str
    files: list = field(default_factory=list)          # str paths, in reading order
    skipped: list = field(default_factory=list)        # (path, why) of folder files left out

    @property
    def sha256(self) -> str:
        """Digest of the joined text (a resumed run checks that its corpus is unchanged)."""
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


def normalise_text(text: str) -> str:
    """`text` as the corpus holds it: a leading UTF-8 byte-order mark dropped, "\\r\\n" and a lone
    "\\r" turned into "\\n" (a prompt goes through this too, so it meets the model's characters)."""
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def _path(path) -> Path:
    """`path` as a Path, or a TypeError naming --data (a number or None is no file name)."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"--data: expected a file or folder path (str or os.PathLike), got "
                        f"{type(path).__name__} {path!r:.60}")
    return Path(path)


def _wildcard_hint(p: Path) -> str:
    """For a missing path holding * ? or [: it is a wildcard pattern the shell did not expand (it was
    quoted, or matched nothing), and how many files it matches here."""
    if not any(ch in p.name or ch in str(p.parent) for ch in "*?["):
        return ""
    import glob
    n = sum(1 for m in glob.glob(str(p)) if os.path.isfile(m))
    matched = f"it matches {n} file(s) here" if n else "it matches no file here"
    return (f"; it looks like a wildcard pattern, which the shell expands and npformer does not "
            f"({matched}): write it unquoted (--data notes/*.txt), or give the folder")


def _check_fits_memory(path, p: Path, read_before: int) -> None:
    """TextTooLargeError when file `p`, held as its bytes and as their decoded text beside the
    `read_before` bytes of text read before it, cannot fit in the memory this process can still
    allocate (a lower bound: encoding the text for a model needs more)."""
    mem = available_memory()
    size = p.stat().st_size
    need = READ_COPIES * size + read_before
    if not mem or need <= mem:
        return
    before = f", with the {format_bytes(read_before)} of text read before it," if read_before else ""
    raise TextTooLargeError(path, f"too large to read: {format_bytes(size)}; its bytes and their "
                                  f"decoded text{before} take at least {format_bytes(need)}, more "
                                  f"than the {format_bytes(mem)} this machine has available; train "
                                  f"on a part of it, e.g. head -c 100M {p.name} > {p.stem}.part.txt")


def _dangling(p: Path) -> str:
    """Why the link `p` leads nowhere: a loop of links, or a target that does not exist."""
    try:
        p.resolve(strict=True)
    except RuntimeError:                             # (Python < 3.13 names a loop this way)
        return "leads back to itself (a loop of links)"
    except OSError as e:
        if e.errno == errno.ELOOP:
            return "leads back to itself (a loop of links)"
    return "does not exist"


def read_text_file(path, read_before: int = 0) -> str:
    """The text of one file (TextFileError when it is empty, binary, not UTF-8, or too large to
    hold beside the `read_before` bytes of text already read)."""
    p = _path(path)
    if not p.exists() and p.is_symlink():            # the link is there, what it names is not
        raise TextFileError(path, f"a symbolic link to {os.readlink(p)!r}, which "
                                  f"{_dangling(p)}; expected a text file")
    if not p.exists():
        where = "" if p.is_absolute() else f" (a relative path is read from the current folder, {Path.cwd()})"
        raise TextFileError(path, MISSING + where + _wildcard_hint(p))
    if p.is_dir():                    # --task translate/classify read files, not folders
        raise TextFileError(path, "is a folder; expected a text file (rows are read from the files "
                                  "given, not from the files of a folder)")
    if not p.is_file():
        raise TextFileError(path, "not a regular file (a pipe, device or socket: the text is read "
                                  "twice, to train and again to resume, so write it to a file)")
    _check_fits_memory(path, p, read_before)
    try:
        data = p.read_bytes()
    except OSError as e:
        raise TextFileError(path, f"cannot be read: {e.strerror or e}") from None
    if not data:
        raise TextFileError(path, "the file is empty (0 bytes)")
    nul = data.find(b"\0")            # the whole file (one memchr pass), not its head only
    if nul >= 0:
        wide = wide_encoding(data[:WIDE_PROBE])
        if wide:
            raise TextFileError(path, f"expected UTF-8 text, got {wide[1]}; convert it, e.g. "
                                      f"iconv -f {wide[0]} -t UTF-8 {p.name} > {p.stem}.utf8.txt")
        raise TextFileError(path, f"a binary file, not text (a NUL byte at offset {nul})")
    if data in (b"\xff\xfe", b"\xfe\xff"):
        raise TextFileError(path, f"holds only a UTF-16 byte-order mark ({data.hex(' ').upper()}), "
                                  f"no text")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise TextFileError(path, not_utf8(data, e, p)) from None
    text = normalise_text(text)
    if not text.strip():
        raise TextFileError(path, f"holds only whitespace ({len(data)} bytes), no text")
    return text


def not_utf8(data: bytes, e: UnicodeDecodeError, p: Path) -> str:
    """What is wrong with `data`, which is not UTF-8, and the fix that keeps its text: a UTF-8 file
    cut inside its last character (an interrupted copy, `head -c`), a UTF-8 file with a few bad
    bytes (converting it all from an 8-bit encoding would garble its good characters), or a file
    in an 8-bit encoding."""
    where = f"byte 0x{data[e.start]:02x} at offset {e.start} ({e.reason})"
    if e.reason == "unexpected end of data":                 # only ever at the end of the data
        cut = data[e.start:]
        return (f"not UTF-8 at its end: the last {len(cut)} byte(s) ({cut.hex(' ')}) begin a "
                f"character that is cut off (a file cut short: an interrupted download or copy, "
                f"head -c); everything before is UTF-8: restore the file, or drop them with "
                f"truncate -s -{len(cut)} {p.name}")
    good = sum(1 for ch in data.decode("utf-8", errors="replace") if "\x80" <= ch != "\ufffd")
    if good:
        return (f"not UTF-8: {where}, in a file that also holds {good} UTF-8 non-ASCII "
                f"character(s), so it mixes encodings (converting it all from an 8-bit encoding "
                f"would garble those): fix the bytes at that offset, or drop every invalid byte "
                f"with iconv -c -f UTF-8 -t UTF-8 {p.name} > {p.stem}.utf8.txt")
    return (f"not UTF-8: {where}; convert it, e.g. iconv -f {legacy_encoding(data)} -t UTF-8 "
            f"{p.name} > {p.stem}.utf8.txt")


_CP1252_UNDEFINED = frozenset(b"\x81\x8d\x8f\x90\x9d")


def legacy_encoding(data: bytes) -> str:
    """The 8-bit encoding to suggest for `data`, which is not UTF-8: WINDOWS-1252 when it holds bytes
    0x80..0x9F that code page defines (curly quotes, dashes, the euro sign: what Windows editors
    write), since read as Latin-1 they would become invisible C1 control characters; else LATIN1
    (the two agree on every other byte)."""
    high = {b for b in data if 0x80 <= b <= 0x9F}
    return "WINDOWS-1252" if high and not high & _CP1252_UNDEFINED else "LATIN1"


_WIDE_BOMS = ((b"\xff\xfe\0\0", "UTF-32", "little-endian"), (b"\0\0\xfe\xff", "UTF-32", "big-endian"),
              (b"\xff\xfe", "UTF-16", "little-endian"), (b"\xfe\xff", "UTF-16", "big-endian"))


def wide_encoding(head: bytes) -> tuple[str, str] | None:
    """(what iconv calls it, how it was told) when `head`, a file's first bytes holding a NUL, is
    UTF-16 or UTF-32 text rather than binary: its byte-order mark, or, without one, mostly
    Latin-script UTF-16 (a NUL in at least half of every other byte, in at most 5 % between: what
    Windows PowerShell's `>` and Notepad's "Unicode" write). None otherwise."""
    for bom, name, order in _WIDE_BOMS:
        if head.startswith(bom):
            return name, f"{name} {order}, byte-order mark {bom.hex(' ').upper()}"
    pairs = len(head) // 2
    if pairs >= 4:
        even, odd = head[0:2 * pairs:2], head[1:2 * pairs:2]
        for zeros, other, name in ((odd, even, "UTF-16LE"), (even, odd, "UTF-16BE")):
            if 2 * zeros.count(0) >= pairs and 20 * other.count(0) <= pairs:
                return name, f"{name}, no byte-order mark"
    return None


def _folder_files(folder: Path) -> list[Path]:
    """Non-hidden files under `folder`, sorted by path (hidden folders skipped too); a broken link
    or a special file is listed too, so that reading it skips it with its reason and counts it."""
    out = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        out += [Path(root) / f for f in sorted(files) if not f.startswith(".")]
    return out


def _read_once(p: Path, text: str, seen: dict) -> None:
    """Record file `p` as read; TextFileError when the same file (by device and inode: the same
    name, a link, a folder's file named again) or the same text (by SHA-256 of the normalised text:
    a copy under another name) was read before. The held-out split is the corpus's end: a second
    copy of a file would put training text into it."""
    st = p.stat()
    key = (st.st_dev, st.st_ino)
    if key in seen:
        raise TextFileError(p, f"read already (as {seen[key]}); each file is read once, or the "
                               f"held-out text would repeat training text")
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    if digest in seen:
        raise TextFileError(p, f"a copy: the same text as {seen[digest]}, read already; each text "
                               f"is read once, or the held-out text would repeat training text")
    seen[key] = seen[digest] = str(p)


def read_corpus(paths) -> Corpus:
    """The corpus of `paths` (files and folders, in order); see the module docstring."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    if isinstance(paths, (bytes, bytearray)) or not hasattr(paths, "__iter__"):
        raise TypeError(f"--data: expected a file or folder path (str or os.PathLike) or a list of "
                        f"them, got {type(paths).__name__} {paths!r:.60}")
    paths = list(paths)
    if not paths:
        raise TextFileError("", "expected at least one file or folder")
    parts, files, skipped = [], [], []
    seen: dict = {}                # (device, inode) and text SHA-256 -> the path read first
    held = 0                       # bytes of the files read so far
    for path in paths:
        p = _path(path)
        if p.is_dir():
            found, left_out = 0, 0
            for f in _folder_files(p):
                try:
                    t = read_text_file(f, held)
                    _read_once(f, t, seen)
                except TextTooLargeError:
                    raise
                except TextFileError as e:
                    skipped.append((str(f), e.problem))
                    left_out += 1
                    continue
                parts.append(t)
                files.append(str(f))
                held += f.stat().st_size
                found += 1
            if not found:
                why = f" ({left_out} files skipped: empty, binary, not UTF-8, not readable or " \
                      f"read already or copies)" if left_out else " (it is empty)"
                raise TextFileError(path, f"the folder holds no text files{why}")
        else:
            t = read_text_file(p, held)
            _read_once(p, t, seen)
            parts.append(t)
            files.append(str(p))
            held += p.stat().st_size
    text = "".join(t if t.endswith("\n") else t + "\n" for t in parts)
    return Corpus(text=text, files=files, skipped=skipped)


def read_saved(read, files, sha256):
    """`read(files)` for a task rebuilt from a checkpoint (`sha256` set): a training file that is no
    longer where the run read it says that it is the checkpoint's own text, and where it must be."""
    try:
        return read(files)
    except TextFileError as e:
        if sha256 is None or not e.problem.startswith(MISSING):
            raise
        raise TextFileError(e.path, f"{MISSING}; it is the text this checkpoint was trained on "
                                    f"(--data as given then, relative to the folder training ran "
                                    f"in), read again for the same held-out split: run from that "
                                    f"folder or put the file back") from None
