"""Torch code whose classes are not nn.Modules (tensors kept in dicts): an interface error saying
so, never a crash of the oracle."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from parity_tests.conftest import candidate_path  # noqa: E402
from parity_tests.oracle import check, render_text  # noqa: E402

FILE = candidate_path("torch_non_modules.py")


def test_torch_code_that_is_not_a_module_is_an_interface_error():
    res = check("ffn", f"{FILE}:TensorDictFeedForward", examples=3)
    assert res.verdict == "interface_error", render_text(res)
    assert "torch.nn.Module" in res.message, res.message
