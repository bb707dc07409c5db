"""`generate --stop STR` with bytes that are not UTF-8 (a shell's $'\\xff', another encoding's
text: Python keeps them as lone surrogates) is refused before any model is loaded; generated text
never holds such characters, so the stop string silently never matched."""
from __future__ import annotations

import argparse

import pytest

from npformer.cli.errors import CliError
from npformer.cli.text_output import check_text_output


def _args(*stops):
    return argparse.Namespace(stop=list(stops), out=None, overwrite=False, checkpoint="x.npz")


def test_a_stop_string_that_is_not_utf8_is_refused():
    bad = b"\xff".decode("utf-8", "surrogateescape")
    with pytest.raises(CliError, match=r"^--stop '\\udcff': expected UTF-8 text"):
        check_text_output(_args("END", bad))


def test_utf8_stop_strings_pass():
    check_text_output(_args("END", "\n\n", "é😀"))
