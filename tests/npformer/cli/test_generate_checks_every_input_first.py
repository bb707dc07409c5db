"""`npformer generate` checks every INPUT before it generates anything: a bad second prompt (too
long for the model, no [MASK] to fill) is refused in one line with nothing printed and --out not
written. It used to be refused only after the first sample had been printed."""
from __future__ import annotations

import pytest

from tests.npformer.conftest import run_cli as run
from tests.npformer.conftest import train_text_lm


@pytest.fixture(scope="module")
def lm(tmp_path_factory):
    return train_text_lm(tmp_path_factory.mktemp("lm"), context=32, steps=2)


def refused_before_any_sample(code, out, err, *needles):
    assert code == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    for n in needles:
        assert n in lines[0], (n, err)
    assert out == "", out                                   # not even the header line


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_text_lm_refuses_a_bad_second_prompt_before_the_first_sample(lm, backend, tmp_path, capsys):
    if backend == "torch":
        pytest.importorskip("torch")
    dest = tmp_path / "samples.txt"
    long = "the cat sat on the mat. " * 3                        # 72 characters: more than context 32
    code, out, err = run(["generate", lm, "the ", long, "--backend", backend, "--max-new-tokens", "3",
                          "--out", str(dest)], capsys)
    refused_before_any_sample(code, out, err, "INPUT", "72 tokens", "32 at most")
    assert not dest.exists()
    code, out, err = run(["generate", lm, "the ", "the dog", "--backend", backend, "--max-new-tokens",
                          "3", "--out", str(dest)], capsys)                    # both fine: both written
    assert code == 0, err
    assert dest.read_text(encoding="utf-8").count("\n") == 2


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from tests.npformer.io.tiny_folders import gpt2_folder
    return str(gpt2_folder(tmp_path_factory.mktemp("gpt2") / "model", n_positions=16))


def test_gpt2_folder_refuses_a_bad_second_prompt_before_the_first_sample(gpt2, tmp_path, capsys):
    dest = tmp_path / "samples.txt"
    long = "the cat sat on the mat and the dog ran to the log " * 4
    code, out, err = run(["generate", gpt2, "the cat", long, "--max-new-tokens", "3", "--out", str(dest)],
                         capsys)
    refused_before_any_sample(code, out, err, "INPUT", "tokens", "16 at most")
    assert not dest.exists()


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from tests.npformer.io.tiny_folders import bert_folder
    return str(bert_folder(tmp_path_factory.mktemp("bert") / "model"))


def test_bert_folder_refuses_a_second_input_without_a_mask_before_the_first_fill(bert, capsys):
    code, out, err = run(["generate", bert, "the [MASK] sat", "the cat sat"], capsys)
    refused_before_any_sample(code, out, err, "INPUT 'the cat sat'", "no [MASK]")
