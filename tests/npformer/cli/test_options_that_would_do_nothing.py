"""Options accepted and then ignored are refused in one line: `--no-fast-decoding` with the torch
backend (only the numpy backend has decoding variants to turn off) and `gradcheck --only ''` (an
empty name, which selected every check). Both ran before, doing something else than asked."""
from tests.npformer.conftest import run_cli as run


def test_no_fast_decoding_with_the_torch_backend_is_refused(tmp_path, capsys):
    code, out, err = run(["generate", str(tmp_path / "m.npz"), "abc", "--backend", "torch",
                          "--no-fast-decoding"], capsys)
    assert code == 2 and out == "" and "Traceback" not in err, (out, err)
    assert "--no-fast-decoding" in err and "expected --backend numpy, got --backend torch" in err, err


def test_an_empty_only_is_refused(capsys):
    code, out, err = run(["gradcheck", "--only", ""], capsys)
    assert code == 2 and out == "" and "Traceback" not in err, (out, err)
    assert "--only ''" in err and "an empty name" in err, err


def test_sizes_of_the_addition_task_refused_on_your_own_text_say_why_for_text(tmp_path, capsys):
    """`--task lm --data FILE --max-len 5`: the reason is the text's (its windows, --context), not the
    synthetic addition task's (--max-number, the symbols 0-9 + =)."""
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("some text to read\n" * 40)
    for option, why in (("--max-len", "its rows are your text's; --context sets the model's length"),
                        ("--min-len", "its rows are your text's"),
                        ("--num-symbols", "its vocabulary is trained on --data")):
        code, out, err = run(["train", "--task", "lm", "--data", str(corpus), option, "5", "--steps", "1"],
                             capsys)
        assert code == 2 and out == "", (out, err)
        assert f"{option}: does not apply to --task lm on --data ({why}" in err, err
        assert "--max-number" not in err and "0-9" not in err, err
