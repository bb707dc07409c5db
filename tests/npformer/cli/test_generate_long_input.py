"""`npformer generate` with an INPUT longer than the model reads: one line naming which INPUT (its
start), its length, the limit, and how many tokens to keep; the other INPUTs are not the issue.
It said only `INPUT: 40 tokens; ...`, which with several INPUTs named none."""
from __future__ import annotations

import pytest

from npformer.cli.main import main
from tests.npformer.conftest import train_text_lm


@pytest.fixture(scope="module")
def lm(tmp_path_factory):
    return train_text_lm(tmp_path_factory.mktemp("lm"), context=24, steps=1)


def test_a_too_long_input_is_named_with_the_tokens_to_keep(lm, capsys):
    long = "the dog " * 5                                                    # 40 characters
    assert main(["generate", lm, "the cat", long, "--max-new-tokens", "2"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert f"INPUT {long[:40]!r}: 40 tokens; the model reads 24 at most" in err
    assert "give at most its last 23 tokens" in err
