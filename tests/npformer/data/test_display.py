"""npformer.data.display.visible: generated text is shown, never obeyed, by a terminal. Control
characters (C0 but tab and newline, DEL, C1) become escapes; every other character stays."""
import pytest

from npformer.data.display import visible


@pytest.mark.parametrize("raw, shown", [
    ("\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m"),            # a colour escape sequence
    ("\x1b]0;title\x07", "\\x1b]0;title\\a"),                    # sets the window title
    ("done\rgone", "done\\rgone"),                               # would rewrite the line
    ("\x9b2J", "\\x9b2J"),                                       # the one-character CSI: clears
    ("a\0b\x08c\x0bd\x0ce\x7ff\x80g\x9fh", "a\\0b\\bc\\vd\\fe\\x7ff\\x80g\\x9fh"),
], ids=["colour", "window-title", "carriage-return", "csi", "nul-bs-vt-ff-del-c1"])
def test_control_characters_are_escaped(raw, shown):
    assert visible(raw) == shown


def test_text_of_every_kind_is_left_as_it_is():
    text = "tab\there\nnew line, naïve café, e\u0301, 日本語, Ω, 😀, \u00a0, \u200d, \ufffd, \\x1b"
    assert visible(text) == text


def test_a_value_that_is_not_text_is_named():
    with pytest.raises(TypeError, match="^text: expected a str, got bytes$"):
        visible(b"\x1b")
