"""Mask dtypes a submission's code says it takes (sandbox/mask_claims.py). A check draws its masks
in one dtype unless the assignment names others, since right bool-only code fails an int mask; code
annotating its mask `torch.LongTensor`, or saying "mask: int64" in its docstring, while reading 0/1
integers wrongly matched every bool check. Each claimed dtype the check does not draw is now also
handed over (the `mask_dtype` run): such code fails, right code saying the same matches, and code
claiming nothing is compared as before.
"""
from __future__ import annotations

import os

import pytest

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check
from parity_tests.oracle.core.options import Options
from parity_tests.oracle.sandbox.mask_claims import claimed_mask_dtypes, widen

HOSTILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "oracle_hostile",
                       "claims_int_masks.py")
RIGHT = os.path.join(candidate_path(), "int_mask_claims.py")


@pytest.mark.parametrize("component,name", [("mha", "AnnotatedMaskAttention"), ("sdpa", "attention")])
def test_code_claiming_int_masks_is_handed_them_and_fails_when_it_misreads_them(component, name):
    res = check(component, f"{HOSTILE}:{name}", examples=10)
    assert res.verdict in ("mismatch", "non_finite"), res.message
    assert res.detail["mode"] == "mask_dtype"
    assert any(n.startswith("the candidate says its mask takes int") for n in res.notes), res.notes


@pytest.mark.parametrize("component,name,claimed", [
    ("mha", "AnnotatedMaskAttention", True), ("sdpa", "attention", True),
    ("mha", "BoolMaskAttention", False)])
def test_right_code_saying_what_it_takes_matches(component, name, claimed):
    res = check(component, f"{RIGHT}:{name}", examples=10)
    assert res.verdict == "match", res.message
    assert any(n.startswith("the candidate says its mask takes int") for n in res.notes) == claimed


def test_what_counts_as_a_claim(tmp_path):
    f = tmp_path / "m.py"
    f.write_text('class Base:\n    def forward(self, x, attn_mask: "torch.LongTensor" = None):\n'
                 '        return x\n\n\nclass A(Base):\n    """n_heads: int."""\n\n\n'
                 'def g(q, mask=None):\n    """mask: bool or 0/1 int, nonzero = keep."""\n'
                 '    return q\n\n\ndef b(q, mask=None):\n    """mask: keep positions (bool), batch size: int."""\n'
                 '    return q\n\n\ndef h(q, mask=None, n: int = 1):\n    return q\n', encoding="utf-8")
    assert [d for d, _ in claimed_mask_dtypes(str(f), "A", ("mask",))] == ["int"]   # the base's
    assert [d for d, _ in claimed_mask_dtypes(str(f), "g", ("mask",))] == ["int", "bool"]
    assert [d for d, _ in claimed_mask_dtypes(str(f), "b", ("mask",))] == ["bool"]   # its item only
    assert claimed_mask_dtypes(str(f), "h", ("mask",)) == []      # an int that is no mask's
    assert claimed_mask_dtypes(str(f), "missing", ("mask",)) == []
    assert claimed_mask_dtypes(str(tmp_path / "absent.py"), "A", ("mask",)) == []


def test_a_claim_only_adds_dtypes_the_check_does_not_draw():
    opts = Options()
    assert widen(opts, [("bool", "x")]) is None and opts.mask_dtypes_also == ()
    assert widen(opts, [("int", "x")]).startswith("the candidate says its mask takes int (x)")
    assert opts.mask_dtypes_also == ("int",)
    assert widen(opts, [("int", "x")]) is None
    assert widen(Options(mask_convention="additive", mask_dtype="float"), [("int", "x")]) is None
