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
