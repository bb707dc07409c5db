"""`generate --out FILE` checks FILE before the model is loaded; a file another program writes there
while the samples are generated is kept without `--overwrite` (one line says so, exit status 2, the
samples already printed), and replaced with it."""
from __future__ import annotations

import pytest

from npformer.cli import text_output
from tests.npformer.conftest import run_cli, train_text_lm

OTHER = "another program's notes\n"


@pytest.fixture
def written_while_generating(monkeypatch):
    """Write the given paths (another program) just before the samples are written."""
    paths = []
    write = text_output.write_samples

    def write_samples(args, samples):
        for p in paths:
            p.write_text(OTHER)
        return write(args, samples)
    monkeypatch.setattr(text_output, "write_samples", write_samples)
    return paths


def test_a_file_written_while_generating_is_kept(tmp_path, capsys, written_while_generating):
    ckpt = train_text_lm(tmp_path)
    capsys.readouterr()
    out = tmp_path / "samples.txt"
    written_while_generating.append(out)
    code, stdout, err = run_cli(["generate", ckpt, "the cat", "--out", str(out)], capsys)
    assert code == 2 and stdout.count("the cat") == 1               # printed before the write
    assert err == (f"npformer generate: error: --out {out}: was written by another program while this "
                   f"one worked, and is left as it is (--overwrite replaces it)\n")
    assert out.read_text() == OTHER
    assert [p.name for p in tmp_path.iterdir() if ".tmp." in p.name] == []


def test_with_overwrite_it_is_replaced(tmp_path, capsys, written_while_generating):
    ckpt = train_text_lm(tmp_path)
    out = tmp_path / "samples.txt"
    written_while_generating.append(out)
    code, stdout, _ = run_cli(["generate", ckpt, "the cat", "--out", str(out), "--overwrite"], capsys)
    assert code == 0 and f"wrote 1 sample(s) to {out}" in stdout
    assert out.read_text() != OTHER and out.read_text().endswith("\n")
