"""A file importing its own folder as a package by name (`from models.layers import lin` in
`models/attention.py`), as a project's files do when its scripts run from the folder above: the
worker searches the folder above for that package only, so the file loads and is checked (it was
RAISED: `models` was taken for a package the grader lacks and got a stand-in). The folder above
stays invisible: a module beside the package cannot be imported. A planted missing scale stays
MISMATCH."""
from __future__ import annotations

import textwrap

import pytest

from parity_tests.oracle import check, render_text
from parity_tests.oracle.reading.package_import import own_folder_package

LAYERS = "import torch.nn as nn\n\n\ndef lin(d):\n    return nn.Linear(d, d)\n"
ATTENTION = textwrap.dedent('''
    import math

    import torch
    import torch.nn as nn

    from models.layers import lin

    try:                      # a module of the folder above the package: must stay unseen
        import beside_models  # noqa: F401
        SEES_ABOVE = True
    except ImportError:
        SEES_ABOVE = False


    class MHA(nn.Module):
        scaled = True

        def __init__(self, d_model, num_heads):
            super().__init__()
            self.h = num_heads
            self.q, self.k, self.v, self.o = lin(d_model), lin(d_model), lin(d_model), lin(d_model)

        def forward(self, query, key, value, mask=None):
            B, T, D = query.shape
            S, h = key.shape[1], self.h
            q = self.q(query).view(B, T, h, D // h).transpose(1, 2)
            k = self.k(key).view(B, S, h, D // h).transpose(1, 2)
            v = self.v(value).view(B, S, h, D // h).transpose(1, 2)
            s = q @ k.transpose(-1, -2)
            if self.scaled and not SEES_ABOVE:
                s = s / math.sqrt(D // h)
            if mask is not None:
                s = s.masked_fill(~mask, float("-inf"))
            return self.o((s.softmax(-1) @ v).transpose(1, 2).reshape(B, T, D))


    class MHA_BUG(MHA):
        scaled = False
''')


@pytest.fixture
def project(tmp_path):
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "__init__.py").write_text("")
    (tmp_path / "models" / "layers.py").write_text(LAYERS)
    (tmp_path / "models" / "attention.py").write_text(ATTENTION)
    (tmp_path / "beside_models.py").write_text("X = 1\n")
    return tmp_path


def test_the_folder_above_is_searched_only_for_the_files_own_package(project, tmp_path):
    assert own_folder_package(str(project / "models" / "attention.py")) == str(project)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "f.py").write_text("from models.layers import lin\n")   # not its folder
    assert own_folder_package(str(tmp_path / "other" / "f.py")) is None
    (tmp_path / "models.py").write_text("")              # a module file of that name: Python's pick
    assert own_folder_package(str(project / "models" / "attention.py")) is None


def test_a_file_importing_its_own_folder_by_name_loads_and_matches(project):
    res = check("mha", f"{project / 'models' / 'attention.py'}:MHA", examples=6)
    if not res.policy["confinement"].get("view"):
        pytest.skip(f"no private view on this machine: {res.policy['confinement'].get('view_reason')}")
    assert res.verdict == "match", render_text(res)


def test_its_planted_missing_scale_is_a_mismatch(project):
    res = check("mha", f"{project / 'models' / 'attention.py'}:MHA_BUG", examples=6, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


# -- a sibling package of the file's folder: still not seen, but the note says what to run --------
SIBLING = ATTENTION.replace("from models.layers import lin", "from utils.helpers import lin")


@pytest.fixture
def sibling(project):
    (project / "utils").mkdir()
    (project / "utils" / "__init__.py").write_text("")
    (project / "utils" / "helpers.py").write_text(LAYERS)
    (project / "models" / "uses_utils.py").write_text(SIBLING)
    return project / "models" / "uses_utils.py"


@pytest.fixture
def away(tmp_path):
    """A folder outside the project (tmp_path holds it), to run the check from."""
    folder = tmp_path.parent / f"{tmp_path.name}-away"
    folder.mkdir()
    return folder


def _hint(res, name):
    return [n for n in res.notes if n.startswith(f"'{name}' is not installed") and "PYTHONPATH=" in n]


def test_a_sibling_package_the_worker_cannot_see_is_named_with_what_to_run(sibling, project,
                                                                           monkeypatch, away):
    monkeypatch.chdir(away)                            # outside the project
    res = check("mha", f"{sibling}:MHA", examples=3)
    assert res.verdict == "raised", render_text(res)
    hint = _hint(res, "utils")
    assert hint and f"PYTHONPATH={project}" in hint[0] and "outside" not in hint[0], res.notes
    monkeypatch.chdir(project)                         # the project's root: never shown to a worker
    res = check("mha", f"{sibling}:MHA", examples=3)
    hint = _hint(res, "utils")
    assert hint and "from a folder outside that one" in hint[0], res.notes


def test_following_the_hint_lets_the_sibling_package_load(sibling, project, monkeypatch, away):
    monkeypatch.chdir(away)
    monkeypatch.setenv("PYTHONPATH", str(project))    # the whole project shown, as the hint says:
    res = check("mha", f"{sibling}:MHA", examples=6, shrink=False)  # beside_models.py too (the file then errs)
    assert res.verdict == "mismatch", render_text(res)
    (project / "beside_models.py").unlink()
    res = check("mha", f"{sibling}:MHA", examples=6)
    assert res.verdict == "match", render_text(res)


def test_a_package_of_no_folder_nearby_gets_no_hint(project, monkeypatch, away):
    (project / "models" / "lost.py").write_text(
        ATTENTION.replace("from models.layers import lin", "from nowhere_pkg.helpers import lin"))
    monkeypatch.chdir(away)
    res = check("mha", f"{project / 'models' / 'lost.py'}:MHA", examples=3)
    assert res.verdict == "raised" and not _hint(res, "nowhere_pkg"), res.notes
