"""`npformer generate` on a checkpoint trained on your own text: what it does with INPUT text the
training corpus never held (characters outside the vocabulary, Windows line ends) and with decoding
options that do not go together (never silently ignored)."""
from __future__ import annotations

import pytest

from npformer.cli.main import main
from npformer.cli.text import read_inputs
from npformer.data.text_files import normalise_text
from npformer.data.tokenizers import BPETokenizer, CharTokenizer
from tests.npformer.conftest import TEXT_CORPUS, text_lm_args, train_text_lm

SMALL = text_lm_args(24)
CORPUS = TEXT_CORPUS


@pytest.fixture(scope="module")
def lm(tmp_path_factory):
    return train_text_lm(tmp_path_factory.mktemp("lm"), context=24, steps=2)


def test_characters_never_seen_in_training_are_named_in_a_note(lm, capsys):
    assert main(["generate", lm, "the Ωcat 日", "--max-new-tokens", "2"]) == 0
    out, err = capsys.readouterr()
    assert "never saw in training ('Ω', 'c'" not in err                 # 'c' is in the corpus
    assert "2 character(s)" in err and "('Ω', '日')" in err and "unknown token" in err
    assert out.splitlines()[-1].startswith("the Ωcat 日")               # the prompt as given


def test_an_input_of_seen_characters_gets_no_note(lm, capsys):
    assert main(["generate", lm, "the cat", "--max-new-tokens", "2"]) == 0
    assert "note:" not in capsys.readouterr().err


def test_windows_line_ends_in_an_input_are_read_as_the_corpus_was(lm, capsys):
    assert main(["generate", lm, "the cat\r\nthe\rdog", "--max-new-tokens", "2"]) == 0
    out, err = capsys.readouterr()
    assert "note:" not in err                                 # "\r" was never a vocabulary question
    assert "the cat\nthe\ndog" in out


@pytest.mark.parametrize("sampling", [["--top-k", "3"], ["--top-p", "0.9"], ["--seed", "1"],
                                      ["--temperature", "0.5"]])
def test_beam_search_with_any_sampling_option_is_refused(lm, capsys, sampling):
    assert main(["generate", lm, "the", "--beam", "2", *sampling]) == 2
    err = capsys.readouterr().err
    assert "--beam 2: beam search cannot be combined with sampling" in err


def test_a_length_penalty_without_beam_search_is_refused(lm, capsys):
    assert main(["generate", lm, "the", "--alpha", "0.6"]) == 2
    assert "--alpha: the length penalty of beam search; it needs --beam K" in capsys.readouterr().err


def test_read_inputs_names_each_unseen_character_once_in_order():
    import io
    tok = CharTokenizer.train("abc\n")
    buf = io.StringIO()
    assert read_inputs(["a\r\nzyz", "abc"], tok, file=buf) == ["a\nzyz", "abc"]
    assert buf.getvalue().count("note:") == 1 and "('z', 'y')" in buf.getvalue()


def test_a_byte_level_tokenizer_has_no_unseen_characters():
    import io
    buf = io.StringIO()
    read_inputs(["Ω日🦊"], BPETokenizer.train("abc abc abc", vocab_size=260), file=buf)
    assert buf.getvalue() == ""


@pytest.mark.parametrize("raw, expected", [("\ufeffa\r\nb\rc\n", "a\nb\nc\n"), ("a\ufeff", "a\ufeff"),
                                           ("\r\r\n", "\n\n")])
def test_normalise_text_drops_a_leading_bom_and_unifies_line_ends(raw, expected):
    assert normalise_text(raw) == expected


def test_a_run_without_save_says_that_nothing_was_kept(tmp_path, capsys):
    (tmp_path / "c.txt").write_text(CORPUS, encoding="utf-8")
    assert main(["train", "--task", "lm", "--data", str(tmp_path / "c.txt"), *SMALL]) == 0
    assert "not saved: no --save PATH was given" in capsys.readouterr().out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.txt"]


@pytest.fixture(scope="module")
def classifier(tmp_path_factory):
    d = tmp_path_factory.mktemp("cls")
    rows = [f"a fine film {i}\tpos\nwhat a waste {i}\tneg\n" for i in range(30)]
    (d / "rows.tsv").write_text("".join(rows), encoding="utf-8")
    save = str(d / "cls.npz")
    small = [a if a != "24" else "12" for a in SMALL]                          # --context 12
    assert main(["train", "--task", "classify", "--data", str(d / "rows.tsv"), *small, "--save",
                 save]) == 0
    return save


def test_an_empty_input_to_a_classifier_is_refused(classifier, capsys):
    assert main(["generate", classifier, "a film", ""]) == 2
    assert "INPUT '': encodes to no tokens; give some text to classify" in capsys.readouterr().err


def test_an_input_longer_than_the_classifier_reads_is_cut_with_a_note(classifier, capsys):
    assert main(["generate", classifier, "a film", "w" * 15]) == 0       # 6 and 15 characters
    err = capsys.readouterr().err
    assert f"note: INPUT {'w' * 15!r}: 15 tokens, cut to the first 10 (--context 12" in err
    assert err.count("note:") == 1                         # none for the input that fits


def test_plot_draws_a_text_language_model_on_a_given_input(lm, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    out = tmp_path / "maps"
    assert main(["plot", lm, "--out", str(out), "--input", "the cat"]) == 0   # was AttributeError
    assert sorted(p.name for p in out.iterdir()) == ["attn_decoder_layer0.png"]


@pytest.mark.parametrize("text, message", [("", "input '': 0 char tokens; the model reads 1 to 24"),
                                           ("the " * 10, "40 char tokens; the model reads 1 to 24")])
def test_plot_refuses_an_input_the_language_model_cannot_read(lm, tmp_path, capsys, text, message):
    pytest.importorskip("matplotlib")
    assert main(["plot", lm, "--out", str(tmp_path / "maps"), "--input", text]) == 2
    assert message in capsys.readouterr().err


def test_plot_refuses_an_empty_input_to_a_classifier(classifier, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    assert main(["plot", classifier, "--out", str(tmp_path / "maps"), "--input", ""]) == 2
    assert "input '': encodes to no tokens; give some text to classify" in capsys.readouterr().err


@pytest.mark.parametrize("corpus_form, input_form", [("NFD", "NFC"), ("NFC", "NFD")])
def test_an_input_in_the_other_unicode_normal_form_is_named_in_the_note(corpus_form, input_form):
    import io
    import unicodedata
    corpus = unicodedata.normalize(corpus_form, "café déjà vu\n")
    tok = CharTokenizer.train(corpus)
    buf = io.StringIO()
    read_inputs([unicodedata.normalize(input_form, "déjà")], tok, file=buf)
    assert "never saw in training" in buf.getvalue()
    assert f"written in Unicode normal form {corpus_form} this INPUT has none" in buf.getvalue()
    buf = io.StringIO()                            # a character missing in both forms: no such hint
    read_inputs([unicodedata.normalize(input_form, "déjà Ω")], tok, file=buf)
    assert "never saw in training" in buf.getvalue() and "normal form" not in buf.getvalue()
