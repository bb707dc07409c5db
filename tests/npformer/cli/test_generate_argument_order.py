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
