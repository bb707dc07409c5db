"""A dropout rate the code reads as a global of its own project (`nn.Dropout(p_drop)`,
`F.dropout(w, p_drop, self.training)`, `p_drop` star-imported from a settings module): set to 0.0
before each build, as a constructor's dropout argument is. Before, it kept 0.1 and the train() run
called correct code MISMATCH. A global read elsewhere too, and a rate written as a number, stay the
candidate's own."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402
from parity_tests.oracle.reading.recognise.global_dropout import dropout_only_names  # noqa: E402


def _spec(candidate_file, name):
    return f"{candidate_file('settings_module_rates', 'blocks.py')}:{name}"


def test_a_feed_forward_reading_its_rate_from_a_settings_module_matches(candidate_file):
    res = check("ffn", _spec(candidate_file, "SettingsFeedForward"), examples=10)
    assert res.verdict == "match", render_text(res)
    assert any("p_drop" in n and "0.0" in n for n in res.notes), res.notes


def test_an_attention_dropping_at_the_global_rate_in_its_forward_matches(candidate_file):
    res = check("mha", _spec(candidate_file, "SettingsSelfAttention"), examples=10)
    assert res.verdict == "match", render_text(res)


def test_a_rate_written_as_a_number_is_still_a_mismatch(candidate_file):
    res = check("mha", _spec(candidate_file, "SettingsSelfAttentionFixedRateBUG"), examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_a_global_rate_also_used_as_an_inference_scale_is_a_mismatch(candidate_file):
    path = candidate_file("settings_module_rates", "scaled_blocks.py")
    res = check("ffn", f"{path}:SettingsFeedForwardInferenceScaledBUG", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_only_names_read_solely_as_a_dropout_rate_are_taken():
    source = ("import torch.nn as nn\nimport torch.nn.functional as F\n"
              "a = 0.1\nb = 0.2\nc = 0.3\n"
              "class M(nn.Module):\n"
              "    def __init__(self):\n"
              "        self.d = nn.Dropout(a)\n"
              "        self.e = nn.Dropout(p=b)\n"
              "    def forward(self, x):\n"
              "        return F.dropout(x, c, self.training) * (1 - b)\n")
    found = dropout_only_names(source)
    assert {"a", "c"} <= found and "b" not in found, found


def test_modules_of_an_environment_inside_the_submission_folder_are_left_alone(tmp_path, monkeypatch):
    import importlib.util
    import sys

    from parity_tests.oracle.reading.recognise.global_dropout import zero_rates

    src = "import torch.nn as nn\nrate = 0.1\nlayer = nn.Dropout(rate)\n"
    (tmp_path / "own.py").write_text(src)
    (tmp_path / ".venv" / "site-packages").mkdir(parents=True)
    (tmp_path / ".venv" / "site-packages" / "lib_mod.py").write_text(src)
    mods = {}
    for name, path in (("own_settings_mod", tmp_path / "own.py"),
                       ("env_library_mod", tmp_path / ".venv" / "site-packages" / "lib_mod.py")):
        spec = importlib.util.spec_from_file_location(name, path)
        mods[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mods[name])
        monkeypatch.setitem(sys.modules, name, mods[name])
    notes: list = []
    zero_rates(mods["own_settings_mod"], notes)
    assert mods["own_settings_mod"].rate == 0.0 and mods["env_library_mod"].rate == 0.1, notes
