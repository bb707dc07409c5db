"""`npformer generate --max-new-tokens N` past the room the model's positions leave after a prompt:
the samples are shorter than N, and a note on stderr says why and how long they can be."""
from __future__ import annotations

import pytest

from npformer.cli.main import main
from tests.npformer.conftest import train_text_lm


@pytest.fixture(scope="module")
def lm(tmp_path_factory):
    return train_text_lm(tmp_path_factory.mktemp("lm"), context=24, steps=2)


def test_more_new_tokens_than_the_context_leaves_get_a_note(lm, capsys):
    assert main(["generate", lm, "the cat", "--max-new-tokens", "100"]) == 0   # 7 tokens of 24
    out, err = capsys.readouterr()
    assert "note: --max-new-tokens 100: the model reads 24 tokens at most (--context)" in err
    assert "17 after the longest prompt (7 tokens)" in err
    assert len(out.splitlines()[-1]) == 24                                   # 7 + 17 characters


@pytest.mark.parametrize("extra", [[], ["--max-new-tokens", "17"]])
def test_new_tokens_within_the_context_get_no_note(lm, capsys, extra):
    assert main(["generate", lm, "the cat", *extra]) == 0
    assert "max-new-tokens" not in capsys.readouterr().err
