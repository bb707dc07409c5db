"""A bad value on the oracle's command line is one error line naming the option, what was expected
and what came, before any search: never a traceback, an `oracle_error` (exit 3) that blames the
oracle, a worker that `crashed`, or a silently accepted value (`--points nan` in a Gradescope
file, `--hidden-examples 0` read as "use --examples"). The same ranges hold for `--set` on the
command line, in an assignment spec and in `export`."""
from __future__ import annotations

import os

import pytest

from parity_tests.conftest import oracle_refusal
from parity_tests.oracle.grading.spec import load_spec

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RIGHT = os.path.join(ROOT, "parity_tests", "oracle_hostile", "right.py")


@pytest.mark.parametrize("option, value, expected", [
    ("--runs", "0", "an integer >= 1"),
    ("--memory-mb", "0", "an integer >= 64"),
    ("--examples", "-3", "an integer >= 1"),
    ("--hidden-examples", "0", "an integer >= 1"),
    ("--points", "-1", "a number in [0.0, 1000000.0]"),
    ("--points", "nan", "a number in [0.0, 1000000.0]"),
    ("--init-kwargs", "[1]", "a JSON object"),
    ("--replay", "@no-such-file.json", "cannot be read"),
])
def test_check_refuses_a_bad_option_value_naming_it(capsys, option, value, expected):
    extra = ["--hidden-seed", "5"] if option == "--hidden-examples" else []
    oracle_refusal(capsys, ["check", "sdpa", f"{RIGHT}:attention", option, value, *extra],
                   option, expected, value.lstrip("@"))


def test_a_missing_map_file_is_named(tmp_path, capsys):
    oracle_refusal(capsys, ["check", "sdpa", f"{RIGHT}:attention", "--map-file",
                            str(tmp_path / "map.json")], "--map-file", "cannot be read")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    oracle_refusal(capsys, ["check", "sdpa", f"{RIGHT}:attention", "--map-file", str(bad)],
                   "--map-file", "not JSON")


@pytest.mark.parametrize("setting, expected", [
    ("max_len=0", "an integer 1..4096, got '0'"),
    ("max_batch=-2", "an integer 1..4096, got '-2'"),
    ("max_heads=2.5", "an integer 1..4096, got '2.5'"),
    ("max_d_head=true", "an integer 1..4096, got 'true'"),
])
def test_set_sizes_out_of_range_are_refused_before_the_search(capsys, setting, expected):
    oracle_refusal(capsys, ["check", "sdpa", f"{RIGHT}:attention", "--set", setting],
                   f"--set {setting.split('=')[0]}", expected)


@pytest.mark.parametrize("argv, needles", [
    (["--set", "eps=0"], ("--set eps", "a finite number > 0 and <= 0.1")),
    (["--set", "eps=nan"], ("--set eps", "a finite number > 0")),
    (["--set", "d_model=0"], ("--set d_model", "an integer 1..4096")),
    (["--set", "num_heads=3", "--set", "d_model=8"], ("num_heads=3", "must divide d_model=8")),
])
def test_layer_settings_out_of_range_or_clashing_are_refused(capsys, argv, needles):
    oracle_refusal(capsys, ["check", "encoder_layer", f"{RIGHT}:attention", *argv], *needles)


def test_export_refuses_zero_examples_and_a_bad_setting(tmp_path, capsys):
    oracle_refusal(capsys, ["export", "layernorm", "--out", str(tmp_path / "b"), "--examples",
                            "0"], "--examples", "an integer >= 1")
    oracle_refusal(capsys, ["export", "layernorm", "--out", str(tmp_path / "b"), "--set",
                            "d_model=0"], "d_model", "an integer 1..4096")
    assert not (tmp_path / "b").exists()


@pytest.mark.parametrize("table, needles", [
    ("d_model = true", ("d_model", "an integer 1..4096, got True")),
    ("d_model = 8\nnum_heads = 3", ("num_heads=3", "must divide d_model=8")),
    ("pad_id = 20\nsrc_vocab = 10", ("pad_id=20", "below src_vocab=10")),
])
def test_a_spec_refuses_the_same_settings(tmp_path, table, needles):
    spec = tmp_path / "assignment.toml"
    spec.write_text('[assignment]\nname = "a"\nentry_file = "a.py"\n\n[[check]]\nname = "m"\n'
                    'component = "model"\nentry = "Model"\npoints = 1\n\n[check.settings]\n'
                    + table + "\n")
    with pytest.raises(ValueError) as info:
        load_spec(str(spec))
    for n in needles:
        assert n in str(info.value), (n, str(info.value))
