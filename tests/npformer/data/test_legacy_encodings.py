"""A --data file in an 8-bit encoding gets the conversion that keeps its text: WINDOWS-1252 when it
holds curly quotes, dashes or the euro sign (bytes 0x80..0x9F, what Windows editors write), LATIN1
otherwise. The hint was always `iconv -f latin1`, which turns those bytes into invisible C1 control
characters (U+0093 for a curly quote) that the corpus then accepted as text."""
from __future__ import annotations

import pytest

from npformer.cli.main import main

SMART = "He said \u201chello\u201d \u2014 it\u2019s caf\u00e9 time\u2026 \u20ac5.\n" * 60
PLAIN = "Le caf\u00e9 est ferm\u00e9 \u00e0 mi\u00advi\u00e9 ; \u00e7a d\u00e9pend.\n" * 60


@pytest.mark.parametrize("text, codec, named, offset", [
    (SMART, "cp1252", "WINDOWS-1252", 8),
    (PLAIN, "latin-1", "LATIN1", 6),
])
def test_an_eight_bit_file_gets_the_conversion_that_keeps_its_text(tmp_path, capsys, text, codec,
                                                                   named, offset):
    path = tmp_path / "notes.txt"
    data = text.encode(codec)
    path.write_bytes(data)
    assert main(["train", "--task", "lm", "--data", str(path), "--steps", "1", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"npformer train: error: --data {path}: not UTF-8: byte 0x{data[offset]:02x} at "
                   f"offset {offset} (invalid {'start' if codec == 'cp1252' else 'continuation'} "
                   f"byte); convert it, e.g. iconv -f {named} -t UTF-8 notes.txt > notes.utf8.txt"], err
    # what the named conversion gives is the text, without a C1 control character
    converted = data.decode({"WINDOWS-1252": "cp1252", "LATIN1": "latin-1"}[named])
    assert converted == text and not any("\x80" <= c <= "\x9f" for c in converted)


def test_latin1_would_have_turned_curly_quotes_into_control_characters():
    """Why the hint matters: the old advice, applied to a Windows file."""
    assert "\x93hello\x94" in SMART.encode("cp1252").decode("latin-1")
