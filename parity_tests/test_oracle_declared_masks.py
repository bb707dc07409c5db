"""Mask options an instructor sets (a spec's options table, an explicit --mask-* flag) are fixed:
the oracle adapts the mask options to what a submission appears to read only while they are the
defaults. An explicit `mask_convention = "keep"` could not be told from the default, so a layer
reading its mask another way (added to the scores) was handed additive masks and got `match`
(`oracle_hostile/additive_mask_under_keep.py`).
"""
from __future__ import annotations

import os

import pytest

from parity_tests.oracle import check
from parity_tests.oracle.cli import mask_defaults
from parity_tests.oracle.core.options import Options
from parity_tests.oracle.grading.spec import check_options, load_spec
from parity_tests.oracle.parser import build_parser

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOSTILE = os.path.join(ROOT, "parity_tests", "oracle_hostile")


def test_a_layer_reading_masks_otherwise_fails_when_the_instructor_fixed_keep():
    res = check("mha", os.path.join(HOSTILE, "additive_mask_under_keep.py:MultiHeadAttention"),
                examples=5, mask_convention="keep", declared=("mask_convention",))
    assert res.verdict in ("mismatch", "non_finite"), res.message
    assert any(n.startswith("not adapted:") and "mask_convention 'keep'" in n
               for n in res.notes), res.notes


def test_a_spec_options_table_fixes_the_mask_options_it_names(tmp_path):
    spec = tmp_path / "spec.toml"
    spec.write_text('[assignment]\nname = "A"\nentry_file = "a.py"\n'
                    '[[check]]\nname = "m"\ncomponent = "mha"\nentry = "M"\n'
                    'options = { mask_convention = "keep", examples = 3 }\n'
                    '[[check]]\nname = "n"\ncomponent = "mha"\nentry = "M"\n', encoding="utf-8")
    s = load_spec(str(spec))
    assert check_options(s, s.checks[0]).declared == ("mask_convention",)
    assert check_options(s, s.checks[0], hidden=True).declared == ("mask_convention",)
    assert check_options(s, s.checks[1]).declared == ()


def test_an_explicit_mask_flag_is_declared_and_an_absent_one_takes_its_default():
    p = build_parser()
    args = p.parse_args(["check", "mha", "x.py:M", "--mask-dtype", "bool"])
    mask_defaults(args)
    assert args.declared == ("mask_dtype",)
    assert (args.mask_convention, args.mask_dtype, args.mask_rank) == ("keep", "bool", 4)


def test_declared_names_only_mask_options():
    with pytest.raises(ValueError, match="declared"):
        Options(declared=("dtype",)).validate()


def test_the_replay_command_repeats_a_fixed_mask_option_even_at_its_default_value():
    from parity_tests.oracle.core.describe import replay_command
    cmd = replay_command("a.py:M", "mha", Options(declared=("mask_convention",)), {"B": 1})
    assert "--mask-convention keep" in cmd
    assert "--mask-convention" not in replay_command("a.py:M", "mha", Options(), {"B": 1})
