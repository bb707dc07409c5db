"""Switches held in a config object. A constructor's own `bias=` flag is built False by the
bias_ctor run (red-team round 13), but a config's (nanoGPT's `GPTConfig.bias`, a dataclass of the
submission's own, a key the code reads from the oracle's config object) was built at its default
and never named: a feed-forward ignoring it matched. The build now records the switches its
config objects held as they were (reading/recognise/configs.config_flags), and the bias_ctor and
causal_ctor runs flip them through --init-kwargs (sandbox/ctor_modes.py); right code honouring
the switch, or having none, matches.
"""
from __future__ import annotations

import dataclasses
import os

import pytest

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check
from parity_tests.oracle.core.modes import WHAT
from parity_tests.oracle.reading.recognise import hooks

HOSTILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "oracle_hostile",
                       "config_flag_ignored.py")
RIGHT = os.path.join(candidate_path(), "config_flags.py")
CONFIG_FLAGS = hooks("constructor").config_flags


@pytest.mark.parametrize("name", ["MLP", "UntypedMLP"])
def test_a_config_bias_switch_taken_and_ignored_fails(name):
    res = check("ffn", f"{HOSTILE}:{name}", examples=10)
    assert res.verdict == "mismatch", res.message
    assert res.detail["mode"] == "bias_ctor" and WHAT["bias_ctor"] in res.message


@pytest.mark.parametrize("name", ["MLP", "UntypedMLP", "PlainMLP"])
def test_a_config_switch_honoured_or_absent_matches(name):
    res = check("ffn", f"{RIGHT}:{name}", examples=10)
    assert res.verdict == "match", res.message


def test_the_switches_a_config_held_as_they_were():
    @dataclasses.dataclass
    class Cfg:
        width: int = 4
        bias: bool = True
        causal: bool = False

    assert CONFIG_FLAGS([Cfg()], {}) == {"bias": True, "causal": False}
    assert CONFIG_FLAGS([Cfg(causal=True)], {}) == {"bias": True}     # set: not at its default
    assert CONFIG_FLAGS([Cfg()], {"bias": False}) == {"causal": False}  # given by --init-kwargs
    assert CONFIG_FLAGS([3, "x", None], {}) == {}
