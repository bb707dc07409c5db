"""Constructor arguments filled by what their name means when no hyperparameter alias names them:
output widths get d_model, lengths a length covering the examples, dtypes the examples' dtype
(never eps by position), device "cpu"; each said in the notes."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

pytest.importorskip("torch")

from parity_tests.conftest import candidate_path  # noqa: E402
from parity_tests.oracle import check, render_text  # noqa: E402
from parity_tests.oracle.reading.recognise import arg_meaning  # noqa: E402
from parity_tests.oracle.reading.recognise.base import MISSING, BuildContext  # noqa: E402

FILE = candidate_path("config_items.py")


def test_output_width_and_context_length_are_filled():
    res = check("mha", f"{FILE}:OutWidthAttention", examples=5)
    assert res.verdict == "match", render_text(res)
    text = " ".join(res.notes)
    assert "'d_out'" in text and "'context_length'" in text, res.notes


def test_output_width_candidate_with_a_bug_is_a_mismatch():
    res = check("mha", f"{FILE}:OutWidthAttentionPeeks", examples=25, shrink=False)
    assert res.verdict == "mismatch", render_text(res)


def test_required_data_type_gets_the_dtype_not_eps():
    res = check("ffn", f"{FILE}:TypedFeedForward", examples=5)
    assert res.verdict == "match", render_text(res)
    assert any("'data_type': passed float64" in n for n in res.notes), res.notes
    bad = check("ffn", f"{FILE}:TypedFeedForwardNoRelu", examples=25, shrink=False)
    assert bad.verdict == "mismatch", render_text(bad)


def _param(name):
    ns: dict = {}
    exec(f"def f({name}): pass", ns)
    return next(iter(inspect.signature(ns["f"]).parameters.values()))


@pytest.mark.parametrize("framework", ["numpy", "torch"])
def test_recogniser_values(framework):
    ctx = BuildContext(module=None, framework=framework, order=(), build=None, dtype="float32")
    values = {"d_model": 6, "num_heads": 2}
    assert arg_meaning.value(ctx, _param("d_out"), values) == 6
    assert arg_meaning.value(ctx, _param("block_size"), values) == arg_meaning.LONGEST
    assert arg_meaning.value(ctx, _param("n_timesteps"), {"max_len": 20}) == 20
    dt = arg_meaning.value(ctx, _param("data_type"), values)
    if framework == "numpy":
        assert dt is np.float32
    else:
        import torch
        assert dt is torch.float32
    assert arg_meaning.value(ctx, _param("device"), values) == "cpu"
    assert arg_meaning.value(ctx, _param("alpha"), values) is MISSING
    assert arg_meaning.value(ctx, _param("d_out"), {}) is MISSING   # no width drawn: nothing to say
    assert len(ctx.notes) == 5
