"""A class's submissions folder, read safely: one student's odd files fail that student only.

    subs, refused = find_submissions(folder)    # {student: path}, {student: why it is refused}
    ignored_entries(folder)                     # [names neither a folder nor a .py file]
    files = read_submission(path, entry_file)   # {relative path: bytes}; SubmissionError(why)

Every student name is cleaned (`student_name`) before it is used anywhere: control characters
(terminal escape sequences) become '?', and two names that clean alike are told apart with a
suffix. A submission that is a link (to a classmate's folder, anywhere) is refused, never followed;
so are links, devices and pipes inside a folder, files that cannot be read, a submission
larger than MAX_BYTES (measured before reading: a sparse 1 GiB file is refused, not read) and one
of more than MAX_ENTRIES files and folders (a million empty files, copied and fingerprinted for
the student, took the grader minutes and the temporary folder's inodes), or with a path longer
than MAX_PATH (its private copy, under another folder, could not be written: `oracle_error`). The
refused are graded 0 with the reason (`load_error`); the class is graded on.
"""
from __future__ import annotations

import os
import stat

MAX_BYTES = 16 << 20   # per submission
MAX_ENTRIES = 2000     # files and folders per submission (each is copied and hashed again)
MAX_PATH = 1024        # bytes of a path inside a submission (its private copy lives elsewhere)
RESERVED = ("gradebook.csv", "summary.json")


class SubmissionError(ValueError):
    pass


def clean_text(s: str, limit: int = 200) -> str:
    """A student-controlled string safe for a terminal, a CSV cell and a file name part."""
    out = "".join(c if c.isprintable() and c not in "/\\" else "?" for c in s)[:limit]
    return out or "?"


def csv_cell(s: str) -> str:
    """A cell a spreadsheet shows as text (no formula: =, +, -, @ at the start)."""
    return "'" + s if s[:1] in ("=", "+", "-", "@", "\t", "\r") else s


NAME_BYTES = 200       # of a student's name: OUT/<student>/ with a suffix stays under NAME_MAX (255)


def student_name(raw: str, taken: set) -> str:
    """The student's cleaned name, unique among `taken`, at most NAME_BYTES bytes before a `-2`
    suffix (a 254-byte folder name that cleans like another's became 256 bytes with its suffix:
    the output folder could not be made, and `grade` failed after grading the whole class)."""
    name = clean_text(raw).encode("utf-8")[:NAME_BYTES].decode("utf-8", "ignore") or "?"
    if name.startswith("."):
        name = "_" + name[1:]
    base, i = name, 2
    while name in taken or name in RESERVED:
        name = f"{base}-{i}"
        i += 1
    taken.add(name)
    return name


def find_submissions(folder: str) -> tuple[dict[str, str], dict[str, str]]:
    """(student -> the submission's folder or its single .py file, student -> why refused)."""
    if not os.path.isdir(folder):
        got = ("nothing (no such path)" if not os.path.lexists(folder) else
               "a file (to grade one student, put it in a folder of its own)"
               if os.path.isfile(folder) else "something else")
        raise ValueError(f"SUBMISSIONS {folder!r}: expected a folder of submissions, got {got}")
    out: dict[str, str] = {}
    refused: dict[str, str] = {}
    taken: set = set()
    raw_of: dict[str, str] = {}
    for name in sorted(os.listdir(folder)):
        p = os.path.join(folder, name)
        if name.startswith(".") or name == "__pycache__":
            continue
        st = os.lstat(p)
        is_dir, is_py = stat.S_ISDIR(st.st_mode), name.endswith(".py")
        link = stat.S_ISLNK(st.st_mode)
        raw = name[:-3] if (is_py and not is_dir) else name
        if not (is_dir or is_py or link):
            continue
        if raw in RESERVED:         # OUT/<student>/ would take the place of the class's files
            raise ValueError(f"SUBMISSIONS {folder!r}: a submission may not be named "
                             f"{clean_text(name)!r} (the output folder's {raw!r} is the "
                             f"oracle's own)")
        if raw in raw_of:
            raise ValueError(f"SUBMISSIONS {folder!r}: two submissions for {clean_text(raw)!r} "
                             f"({clean_text(raw_of[raw])!r} and {clean_text(name)!r}); keep one")
        raw_of[raw] = name
        student = student_name(raw, taken)
        if link:
            refused[student] = (f"the submission {clean_text(name)!r} is a link (to "
                                f"{clean_text(os.readlink(p), 300)!r}); links are not followed: "
                                f"submit the files themselves")
        elif is_dir or stat.S_ISREG(st.st_mode):
            out[student] = p
        else:
            refused[student] = f"the submission {clean_text(name)!r} is not a regular file"
    if not out and not refused:
        raise ValueError(f"SUBMISSIONS {folder!r}: no submission folders or .py files in it")
    return out, refused


def ignored_entries(folder: str) -> list[str]:
    """The cleaned names of what `find_submissions` passes over in `folder` without a word:
    entries that are neither a folder, a .py file nor a link (a student's zip or notebook, a
    class list), hidden files and __pycache__ left out. The summary names them."""
    out = []
    for name in sorted(os.listdir(folder)):
        if name.startswith(".") or name == "__pycache__" or name.endswith(".py"):
            continue
        st = os.lstat(os.path.join(folder, name))
        if not (stat.S_ISDIR(st.st_mode) or stat.S_ISLNK(st.st_mode)):
            out.append(clean_text(name))
    return out


def missing_file(root: str, rel: str) -> str:
    """Why `rel` (a path the spec names) is not in the submission copied to `root`, with what is
    there instead: a file of that name one folder down (an unpacked archive's), or its .py files."""
    found, py = [], []
    for dp, dns, fns in os.walk(root):
        dns[:] = sorted(d for d in dns if d != "__pycache__" and not d.startswith("."))
        for fn in sorted(fns):
            r = os.path.relpath(os.path.join(dp, fn), root)
            (found if fn == os.path.basename(rel) else py if fn.endswith(".py") else []).append(r)
    def shown(r: str) -> str:            # a student's path, each part cleaned, '/' kept
        return "/".join(clean_text(p, 100) for p in r.replace(os.sep, "/").split("/"))[:300]

    msg = f"no file {shown(rel)!r} in the submission"
    if found:
        return msg + f"; found {shown(found[0])!r}: the spec reads {shown(rel)!r}"
    listed = ", ".join(shown(r) for r in py[:5]) + (" ..." if len(py) > 5 else "")
    return msg + (f"; its .py files: {listed}" if py else "; it holds no .py file")


def _read_regular(p: str, shown: str, left: int) -> bytes:
    st = os.lstat(p)
    if stat.S_ISLNK(st.st_mode):
        raise SubmissionError(f"{shown} is a link; links are not followed: submit the file itself")
    if not stat.S_ISREG(st.st_mode):
        raise SubmissionError(f"{shown} is not a regular file (a pipe, device or socket)")
    if st.st_size > left:
        raise SubmissionError(f"the submission is larger than {MAX_BYTES >> 20} MiB ({shown}: "
                              f"{st.st_size} bytes)")
    try:
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as f:
            data = f.read(left + 1)
    except OSError as exc:
        raise SubmissionError(f"{shown} cannot be read ({exc.strerror})") from None
    if len(data) > left:
        raise SubmissionError(f"the submission is larger than {MAX_BYTES >> 20} MiB")
    return data


def read_submission(path: str, entry_file: str) -> dict[str, bytes]:
    """relative path -> bytes; a single .py file becomes the entry file. SubmissionError (one
    line, the student's to read) for anything refused; nothing is cut silently."""
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode):
        return {entry_file: _read_regular(path, repr(entry_file), MAX_BYTES)}
    files, left, entries = {}, MAX_BYTES, 0

    def walk_error(exc: OSError) -> None:      # os.walk would skip a folder it cannot list
        raise SubmissionError(f"a folder of the submission cannot be read ({exc.strerror})")

    for dp, dns, fns in os.walk(path, onerror=walk_error):
        entries += len(dns) + len(fns)
        if entries > MAX_ENTRIES:
            raise SubmissionError(f"the submission holds more than {MAX_ENTRIES} files and folders "
                                  f"(counted before reading); submit the files the assignment "
                                  f"asks for")
        for d in list(dns):
            if os.path.islink(os.path.join(dp, d)):
                raise SubmissionError(f"{clean_text(os.path.relpath(os.path.join(dp, d), path))!r}"
                                      f" is a link; links are not followed")
        dns[:] = sorted(d for d in dns if d != "__pycache__" and not d.startswith("."))
        for fn in sorted(fns):
            p = os.path.join(dp, fn)
            rel = os.path.relpath(p, path)
            if len(os.fsencode(rel)) > MAX_PATH:    # its copy's path would pass PATH_MAX
                raise SubmissionError(f"a path in the submission is longer than {MAX_PATH} bytes "
                                      f"({clean_text(rel, 60)!r}...)")
            data = _read_regular(p, repr(clean_text(rel, 300)), left)
            left -= len(data)
            files[rel] = data
    return files


def materialize(files: dict[str, bytes], prefix: str = "oracle-sub-", folder: str | None = None) -> str:
    """The files written to a new private folder (`prefix` + random, in `folder`, by default the
    temporary folder); its path."""
    import tempfile

    root = tempfile.mkdtemp(prefix=prefix, dir=folder)
    for rel, data in files.items():
        p = os.path.join(root, rel)
        if os.path.commonpath([root, os.path.abspath(p)]) != root:
            continue
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(data)
    return root
