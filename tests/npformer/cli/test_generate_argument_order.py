"""`npformer generate "Once upon a"` (the checkpoint forgotten) reads the text as the checkpoint, and
argparse reports INPUT as missing: the error now says the checkpoint comes first, then the text."""
from tests.npformer.conftest import run_cli as run


def test_a_lone_text_is_told_that_the_checkpoint_comes_first(capsys):
    code, _, err = run(["generate", "Once upon a"], capsys)
    assert code == 2
    assert "required: INPUT; the checkpoint comes first, then the text: npformer generate CKPT" in err
    errors = [line for line in err.splitlines() if line.startswith("npformer generate: error:")]
    assert len(errors) == 1 and errors[0] == err.strip().splitlines()[-1]   # one error line, last


def test_other_usage_errors_of_generate_get_no_order_hint(capsys):
    code, _, err = run(["generate", "ck.npz", "abc", "--beam", "x"], capsys)
    assert code == 2 and "--beam" in err and "checkpoint comes first" not in err


def test_text_before_an_existing_checkpoint_is_told_the_order(tmp_path, monkeypatch, capsys):
    """`npformer generate "The model" docs-lm.npz`: the checkpoint named second exists, the text named
    first does not; the line says so and shows the command in the right order."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs-lm.npz").write_bytes(b"not read")
    code, _, err = run(["generate", "The model", "docs-lm.npz"], capsys)
    assert code == 2
    line = err.strip().splitlines()[-1]
    assert line.startswith("npformer generate: error: checkpoint The model: no such file"), line
    assert "the checkpoint comes first, then the text: npformer generate docs-lm.npz 'The model'" in line


def test_a_missing_checkpoint_with_plain_inputs_gets_no_order_hint(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code, _, err = run(["generate", "lm.npz", "The model"], capsys)
    assert code == 2 and "no such file" in err and "comes first" not in err
