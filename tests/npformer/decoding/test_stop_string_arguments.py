"""`StopStrings(stops, decode)` (the API's `stop=`) given the wrong kind of stop strings names what
came: bytes, a number, an empty string or an empty list each get their own message (all four were
`stop: expected non-empty strings, got [...]`, which is wrong for `b'END'`, a non-empty bytes)."""
from __future__ import annotations

import pytest

from npformer.decoding.stop import StopStrings


def _decode(ids):
    return "".join(chr(97 + i) for i in ids)


def test_bytes_say_they_are_bytes_and_how_to_make_text():
    with pytest.raises(TypeError, match=r"^stop: expected strings, got bytes b'END' at position 1 "
                                        r"\(decode it to text first"):
        StopStrings(["\n", b"END"], _decode)


def test_a_number_names_its_type_and_position():
    with pytest.raises(TypeError, match=r"^stop: expected strings, got int 3 at position 0$"):
        StopStrings([3], _decode)


def test_an_empty_string_names_its_position():
    with pytest.raises(ValueError, match=r"^stop: expected non-empty strings, got '' at position 2"):
        StopStrings(["a", "b", ""], _decode)


def test_an_empty_list_says_none_is_the_way_to_pass_no_stop_strings():
    with pytest.raises(ValueError, match=r"^stop: expected at least one stop string, got an empty list "
                                         r"\(pass None for none\)$"):
        StopStrings([], _decode)


def test_good_stop_strings_are_kept_in_order():
    assert StopStrings(("END", "\n\n"), _decode).stops == ["END", "\n\n"]
