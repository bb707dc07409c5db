"""`npformer generate` on a model of your own text, and the sample line of a text evaluation, show
what the model generated with its control characters escaped (npformer.data.display.visible): a
sampled ESC started a terminal control sequence and a carriage return rewrote the printed line.
A byte-level BPE model emitted NUL, BEL, ESC and CR bytes from a corpus that held none."""
from __future__ import annotations

import pytest

import npformer.data.text_lm as text_lm
from npformer.cli.main import main
from npformer.training.text_eval import TextEvalResult
from tests.npformer.conftest import train_text_lm

HOSTILE = "\x1b]0;owned\x07\x1b[2J\rgone\x9b"


@pytest.fixture(scope="module")
def lm(tmp_path_factory):
    return train_text_lm(tmp_path_factory.mktemp("lm"), context=24, steps=1)


def test_a_generated_continuation_is_printed_with_its_controls_escaped(lm, capsys, monkeypatch):
    """The continuation a model decodes to (made hostile here) reaches the terminal escaped."""
    real = text_lm.TextVocab.decode
    monkeypatch.setattr(text_lm.TextVocab, "decode", lambda self, ids: HOSTILE + real(self, ids))
    assert main(["generate", lm, "the cat", "--max-new-tokens", "2"]) == 0
    out = capsys.readouterr().out
    last = out.splitlines()[-1]
    assert last.startswith("the cat\\x1b]0;owned\\a\\x1b[2J\\rgone\\x9b"), last
    assert not any(c in out for c in "\x1b\x07\r\x9b")


def test_the_evaluation_sample_line_escapes_controls():
    result = TextEvalResult(loss=1.0, token_accuracy=0.5, sequence_accuracy=0.0, num_examples=1,
                            num_tokens=4, prompt="log: \x1b[31m", sample="x\ry")
    line = result.summary().splitlines()[-1]
    assert line == "  sample: log: \\x1b[31m[x\\ry]"


@pytest.mark.parametrize("classification", [False, True])
def test_evaluation_examples_escape_controls(capsys, classification):
    """`train`/`evaluate` list decoded translations (or labels) the model produced."""
    from npformer.cli.printing import print_examples
    print_examples([("src", "tgt", "pred\x1b[2J\r")], classification)
    out = capsys.readouterr().out
    assert "pred\\x1b[2J\\r" in out and "\x1b" not in out and "\r" not in out
