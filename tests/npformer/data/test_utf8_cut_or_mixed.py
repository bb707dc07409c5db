"""A `--data` file that is UTF-8 but not entirely is told the fix that keeps its text, not "convert it
from an 8-bit encoding" (which would garble every good non-ASCII character): a file cut inside its
last character (an interrupted download, `head -c`) names the cut bytes and how to drop them; a
UTF-8 file with a stray byte says it mixes encodings. A file holding only a UTF-16 byte-order mark
(an empty Notepad "Unicode" file) says so. A file in an 8-bit encoding keeps its iconv hint."""
from __future__ import annotations

import pytest

from npformer.data.text_files import TextFileError, read_text_file

BODY = "naïve café, déjà vu\n".encode() * 3


@pytest.mark.parametrize("name,data,needle", [
    ("cut.txt", BODY + "…".encode()[:2],
     r"not UTF-8 at its end: the last 2 byte\(s\) \(e2 80\) begin a character that is cut off.*"
     r"truncate -s -2 cut\.txt"),
    ("mixed.txt", BODY + b"caf\xe9\n",
     r"byte 0xe9 at offset 75 \(invalid continuation byte\), in a file that also holds 12 UTF-8 "
     r"non-ASCII character\(s\), so it mixes encodings.*iconv -c -f UTF-8 -t UTF-8 mixed\.txt"),
    ("empty16.txt", b"\xff\xfe", r"holds only a UTF-16 byte-order mark \(FF FE\), no text"),
])
def test_the_hint_keeps_the_good_text(tmp_path, name, data, needle):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(TextFileError, match=needle) as e:
        read_text_file(path)
    assert "iconv -f LATIN1" not in str(e.value) and "WINDOWS-1252" not in str(e.value)


def test_an_eight_bit_file_keeps_its_conversion_hint(tmp_path):
    path = tmp_path / "latin.txt"
    path.write_bytes("naïve café\n".encode("latin-1"))
    with pytest.raises(TextFileError, match=r"convert it, e\.g\. iconv -f LATIN1 -t UTF-8 latin\.txt"):
        read_text_file(path)
