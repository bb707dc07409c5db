"""The progress display (tqdm when installed, else one line rewritten with \\r on a terminal, plain
lines otherwise, with an ETA), and the loss plot's final held-out point."""
import io
import sys

import pytest

from npformer.cli.main import main
from npformer.training.progress import Progress
from tests.npformer.conftest import tiny_train_args


class FakeTTY(io.StringIO):
    def isatty(self):
        return True


def test_terminal_without_tqdm_is_one_updating_line_with_eta(monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    f = FakeTTY()
    bar = Progress(40, file=f, log_every=10)
    for step in range(1, 41):
        bar.update(step, loss=1.0 / step)
    bar.close()
    text = f.getvalue()
    assert text.startswith("(pip install tqdm for a tqdm progress bar)\n")
    body = text.split("\n", 1)[1]
    assert body.count("\r") == 40 and body.count("\n") == 1      # one line, rewritten every step
    assert "step 40/40" in body and "ETA 0:00" in body and "it/s" in body


def test_pipe_gets_plain_lines_every_log_every(monkeypatch):
    f = io.StringIO()
    bar = Progress(40, file=f, log_every=10, use_tqdm=False)
    for step in range(1, 41):
        bar.update(step, loss=0.5)
    bar.close()
    lines = f.getvalue().splitlines()
    assert [ln.split()[2] for ln in lines] == ["10/40", "20/40", "30/40", "40/40"]
    assert all("ETA" in ln and "\r" not in ln for ln in lines)


def test_tqdm_is_used_when_installed():
    pytest.importorskip("tqdm")
    f = io.StringIO()
    bar = Progress(5, file=f, start=3)
    assert bar.bar is not None and bar.bar.n == 3 and bar.bar.total == 8   # resumed at step 3
    bar.close()


def test_loss_plot_has_the_final_held_out_point(tmp_path, monkeypatch, capsys):
    pytest.importorskip("matplotlib")
    from npformer.training import plots
    seen = {}
    real = plots.plot_loss_curve

    def spy(steps, losses, path, **kw):
        seen.update(kw, steps=list(steps))
        return real(steps, losses, path, **kw)
    monkeypatch.setattr(plots, "plot_loss_curve", spy)
    assert main(["train", *tiny_train_args(steps=3, d_ff=8), "--plot", str(tmp_path / "p")]) == 0
    assert seen["eval_steps"] == [3] and len(seen["eval_losses"]) == 1


@pytest.mark.parametrize("blocked, code, hint", [
    ("torch", "import torchformer", "install torch --index-url https://download.pytorch.org/whl/cpu"),
    ("matplotlib", "from npformer.training import plots; plots.pyplot()", "pip install matplotlib"),
])
def test_missing_optional_dependency_gives_an_install_hint(blocked, code, hint):
    import os
    import subprocess

    from tests.paths import ROOT
    root = str(ROOT)
    r = subprocess.run([sys.executable, "-c", f"import sys; sys.modules[{blocked!r}] = None\n{code}"],
                       cwd=root, capture_output=True, text=True, timeout=120,
                       env={**os.environ, "PYTHONPATH": root})
    assert r.returncode != 0 and hint in r.stderr.strip().splitlines()[-1]


def test_cli_backend_torch_without_torch_is_one_line(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "torch", None)
    assert main(["train", "--backend", "torch", "--steps", "1", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "install torch --index-url https://download.pytorch.org/whl/cpu" in err[0]
