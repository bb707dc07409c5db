"""Square weights follow the layout their layer class shows on its non-square ones (Conv1D)."""
from __future__ import annotations

from parity_tests.oracle.reading import naming
from parity_tests.oracle.reading.recognise import class_layout

D = 4
REF = {f"{p}.{leaf}": ((D, D) if leaf == "weight" else (D,))
       for p in ("q_proj", "k_proj", "v_proj", "out_proj") for leaf in ("weight", "bias")}


def _space(owner_of_proj: str):
    names = ["c_attn.weight", "c_attn.bias", "c_proj.weight", "c_proj.bias"]
    shapes = {"c_attn.weight": (D, 3 * D), "c_attn.bias": (3 * D,), "c_proj.weight": (D, D),
              "c_proj.bias": (D,)}
    owner = {"c_attn.weight": "lib.Conv1D", "c_attn.bias": "lib.Conv1D",
             "c_proj.weight": owner_of_proj, "c_proj.bias": owner_of_proj}
    return naming.Space(names, shapes, {n: True for n in names}, owner)


def test_square_weight_of_the_same_class_is_read_in_out():
    entries, _ = naming.resolve("mha", _space("lib.Conv1D"), REF, {"d_model": D, "num_heads": 2})
    assert entries["q_proj.weight"].transpose          # (D, 3D) packed: (in, out) by shape
    assert entries["out_proj.weight"].transpose, entries["out_proj.weight"].describe()
    assert "like the other Conv1D weights" in entries["out_proj.weight"].describe()


def test_square_weight_of_another_class_keeps_the_default():
    entries, _ = naming.resolve("mha", _space("torch.nn.Linear"), REF, {"d_model": D, "num_heads": 2})
    assert not entries["out_proj.weight"].transpose


def test_a_class_seen_both_ways_decides_nothing():
    known = {"lib.Conv1D": {True, False}}
    entries, _ = naming.resolve("mha", _space("lib.Conv1D"), REF, {"d_model": D, "num_heads": 2},
                                class_layout=known)
    assert not entries["out_proj.weight"].transpose
    assert class_layout.apply(entries, _space("lib.Conv1D"), REF, known) == []
