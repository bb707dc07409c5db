"""`npformer generate` with an input that starts with '-': argparse reads it as an option, so the
usage error says to put it after `--` (argparse's end-of-options marker), and after `--` it is
generated from like any other input."""
import pytest

from npformer.cli.main import main
from tests.npformer.conftest import run_cli as run


def test_a_lone_dashed_input_is_refused_with_the_double_dash_hint(capsys):
    code, _, err = run(["generate", "ck.npz", "-3+4="], capsys)
    assert code == 2
    assert "required: INPUT" in err and "after `--`" in err and "-- -3+4=" in err


def test_a_dashed_input_among_others_gets_the_same_hint(capsys):
    code, _, err = run(["generate", "ck.npz", "3+4=", "-7+1="], capsys)
    assert code == 2
    assert "unrecognized arguments: -7+1=" in err and "after `--`" in err


def test_a_dashed_input_read_as_a_short_option_with_a_value_gets_the_hint(capsys):
    """"-hello" is -h given "ello": argparse's message names -h/--help, so say where the text goes."""
    code, _, err = run(["generate", "ck.npz", "-hello"], capsys)
    assert code == 2
    assert "ignored explicit argument" in err and "after `--`" in err and "-- -3+4=" in err


def test_an_unknown_long_option_gets_no_dash_hint(capsys):
    for argv in (["generate", "ck.npz", "abc", "--bogus"], ["train", "-x"]):
        code, _, err = run(argv, capsys)
        assert code == 2 and "unrecognized arguments" in err and "after `--`" not in err


def test_generate_help_documents_the_double_dash(capsys):
    code, out, _ = run(["generate", "--help"], capsys)
    assert code == 0 and "-- -3+4=" in " ".join(out.split())


def test_after_double_dash_a_dashed_text_prompt_is_generated_from(tmp_path, capsys):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("-3 degrees and falling. -4 degrees tonight.\n" * 40)
    ck = tmp_path / "lm.npz"
    assert main(["train", "--task", "lm", "--data", str(corpus), "--context", "16",
                 "--d-model", "8", "--heads", "2", "--d-ff", "16", "--layers", "1", "--steps", "2",
                 "--batch-size", "4", "--no-progress", "--save", str(ck)]) == 0
    capsys.readouterr()
    code, out, err = run(["generate", str(ck), "--max-new-tokens", "3", "--", "-degrees"], capsys)
    assert code == 0, err
    assert "-degrees" in out


@pytest.mark.parametrize("argv", [["generate", "ck.npz", "--", "--beam"]])
def test_after_double_dash_even_an_option_name_is_an_input(argv, capsys):
    """`--` ends the options: "--beam" is then an INPUT (here refused only because ck.npz does not
    exist), never the option."""
    code, _, err = run(argv, capsys)
    assert code == 2 and "ck.npz" in err and "--beam" not in err.split("ck.npz")[0]
