"""What the worker reports about a candidate (Findings) reaches the parent only as far as the parent
understands it: each field checked for its type and range, mask kinds only narrowed, settings the
parent's own."""
from __future__ import annotations

from parity_tests.oracle.components import get
from parity_tests.oracle.reading.findings import Findings


def test_a_well_formed_report_comes_through_whole():
    raw = Findings(self_attention=True, one_sequence=True, d_ff_ratio=4, norm_eps=1e-6,
                   mask_kinds={"mask": ["none", "causal"]}).to_wire()
    got = Findings.from_wire(raw, get("mha"), {"d_model": 8})
    assert got.self_attention is True and got.one_sequence is True
    assert got.d_ff_ratio == 4 and got.norm_eps == 1e-6
    assert got.mask_kinds == {"mask": ("none", "causal")}
    assert got.fixed == {"d_model": 8}


def test_wrong_types_and_ranges_are_dropped():
    raw = {"self_attention": "yes", "one_sequence": 1, "table": None, "d_ff_ratio": True,
           "norm_eps": 0.5, "fixed": {"d_model": 1}, "unknown": True}
    got = Findings.from_wire(raw, get("mha"), {})
    assert got == Findings()
    assert Findings.from_wire({"d_ff_ratio": 17}, get("ffn"), {}).d_ff_ratio is None
    assert Findings.from_wire({"norm_eps": 0.0}, get("layernorm"), {}).norm_eps is None
    assert Findings.from_wire("not a dict", get("mha"), {"eps": 1e-5}) == Findings(fixed={"eps": 1e-5})


def test_mask_kinds_can_only_narrow_to_kinds_the_component_has():
    raw = {"mask": ["causal", "made_up"], "other_mask": ["none"]}
    got = Findings.from_wire({"mask_kinds": raw}, get("mha"), {})
    assert got.mask_kinds == {"mask": ("causal",)}
    nothing_known = Findings.from_wire({"mask_kinds": {"mask": ["made_up"]}}, get("mha"), {})
    assert nothing_known.mask_kinds == {"mask": ("none",)}


def test_worker_side_fields_never_reach_the_parent():
    raw = Findings(list_input=True, bh_layout=True, returns_table=True, valid_lens={"mask": False}).to_wire()
    got = Findings.from_wire(raw, get("mha"), {})
    assert not got.list_input and not got.bh_layout and not got.returns_table and got.valid_lens == {}
