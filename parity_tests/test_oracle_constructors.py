"""Reach: constructors the oracle works out from the signature alone.

Each candidate style reaches "match" from the plain command, and a deliberately wrong variant of it
"mismatch": the oracle really ran the candidate it built.
"""
from __future__ import annotations

import inspect

import pytest

pytest.importorskip("torch")

from parity_tests.conftest import candidate_path  # noqa: E402
from parity_tests.oracle import check  # noqa: E402
from parity_tests.oracle.core.report import render_text  # noqa: E402
from parity_tests.oracle.reading.recognise import configs, derived, submodules  # noqa: E402
from parity_tests.oracle.reading.recognise.base import MISSING, BuildContext  # noqa: E402

FILE = candidate_path("constructor_styles.py")
N = 5


def cand(name: str) -> str:
    return f"{FILE}:{name}"


def verdict(component, name, **kw):
    res = check(component, cand(name), examples=kw.pop("examples", N), **kw)
    return res


RIGHT_AND_WRONG = [
    # component, right, wrong, what the notes must mention
    ("sdpa", "ScaledDotProductAttention", "ScaledDotProductAttentionTwice", "temperature"),
    ("ffn", "DictConfigFFN", "DictConfigFFNBad", "config object"),
    ("encoder_layer", "EncoderLayer", "EncoderLayerNoResidual", "built a MultiHeadAttention"),
]


@pytest.mark.parametrize("component,right,wrong,note", RIGHT_AND_WRONG,
                         ids=[r[1] for r in RIGHT_AND_WRONG])
def test_derived_constructors_match_and_catch_bugs(component, right, wrong, note):
    res = verdict(component, right)
    assert res.verdict == "match", render_text(res)
    assert any(note in n for n in res.notes), res.notes
    bad = verdict(component, wrong, examples=25, shrink=False)
    assert bad.verdict == "mismatch", render_text(bad)


def test_head_width_and_device_are_derived():
    res = verdict("mha", "HeadWidthMHA")
    assert res.verdict == "match", render_text(res)
    text = " ".join(res.notes)
    assert "'d_k'" in text and "'d_v'" in text and "'device'" in text


def test_dataclass_args_are_built():
    res = verdict("mha", "ArgsAttention")
    assert res.verdict == "match", render_text(res)
    assert any("built ModelArgs(" in n for n in res.notes), res.notes


def test_submodules_found_by_role_name():
    res = verdict("encoder_layer", "EncoderLayerByRole")
    assert res.verdict == "match", render_text(res)


def test_init_kwargs_supply_a_required_argument():
    res = verdict("ffn", "ScaledFFN")
    assert res.verdict == "interface_error" and "alpha" in res.message, render_text(res)
    res = verdict("ffn", "ScaledFFN", init_kwargs={"alpha": 1.0})
    assert res.verdict == "match", render_text(res)
    res = verdict("ffn", "ScaledFFN", init_kwargs={"alpha": 2.0}, examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


# -- the recognisers on their own ------------------------------------------------------------------
def _param(src: str):
    ns: dict = {}
    exec(f"def f({src}): pass", ns)
    return next(iter(inspect.signature(ns["f"]).parameters.values()))


def _ctx(module=None, framework="torch", build=None):
    return BuildContext(module=module, framework=framework, order=("d_model", "num_heads"),
                        build=build or (lambda c, v, o: (c, v, o)))


def test_derived_recogniser():
    vals = {"d_model": 12, "num_heads": 3}
    assert derived.value(_ctx(), _param("d_head"), vals) == 4
    assert derived.value(_ctx(), _param("temperature"), vals) == pytest.approx(2.0)
    assert derived.value(_ctx(), _param("device"), vals) == "cpu"
    assert derived.value(_ctx(framework="numpy"), _param("device"), vals) is MISSING
    assert derived.value(_ctx(), _param("alpha"), vals) is MISSING
    assert derived.value(_ctx(), _param("d_v"), {"d_k": 3, "d_v": 5}) == 5


def test_configs_recogniser():
    bag = configs.value(_ctx(), _param("cfg"), {"d_model": 8, "num_heads": 2})
    assert bag.d_model == bag["embed_dim"] == bag.n_embd == 8 and bag["n_head"] == 2
    assert bag.dropout == 0.0 and bag["drop_rate"] == 0.0
    assert configs.value(_ctx(), _param("weights"), {"d_model": 8}) is MISSING


def test_submodules_recogniser():
    import types

    mod = types.ModuleType("m")

    class MyMultiHeadAttention:
        pass

    class Block:   # not an attention class despite its module
        pass

    MyMultiHeadAttention.__module__ = Block.__module__ = "m"
    mod.MyMultiHeadAttention, mod.Block = MyMultiHeadAttention, Block
    built = submodules.value(_ctx(module=mod), _param("self_attn"), {"d_model": 4, "num_heads": 2})
    assert built[0] is MyMultiHeadAttention and built[2] == ("d_model", "num_heads")
    assert submodules.value(_ctx(module=mod), _param("block"), {}) is MISSING
