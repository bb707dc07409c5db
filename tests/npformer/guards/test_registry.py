"""The guards: every public layer and model is checked at its entry by a check registered apart from
its math, subclasses inherit their base's check, and the math files hold no argument check."""
import ast
from pathlib import Path

import numpy as np
import pytest

import npformer as nf
from npformer.layers.module import CHECKS, Module, registered

ROOT = Path(__file__).resolve().parents[3] / "npformer"
PUBLIC_MODULES = [getattr(nf, n) for n in nf.__all__
                  if isinstance(getattr(nf, n), type) and issubclass(getattr(nf, n), Module)
                  and getattr(nf, n) not in (Module, nf.ModuleList)]


@pytest.mark.parametrize("cls", PUBLIC_MODULES, ids=lambda c: c.__name__)
def test_every_public_module_has_a_registered_call_and_gradient_check(cls):
    assert registered("call", cls) is not None
    assert registered("backward", cls) is not None


def test_the_layer_and_model_files_define_no_argument_check():
    for path in sorted((ROOT / "layers").glob("*.py")) + sorted((ROOT / "models").glob("*.py")):
        tree = ast.parse(path.read_text())
        names = [n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
        imported = [a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names]
        assert "check_inputs" not in names or path.name == "module.py", path
        assert not [n for n in imported if n.startswith("check_")], (path, imported)
        assert not any(n.startswith("check_") and n != "check_inputs" for n in names), (path, names)


def test_a_subclass_is_checked_by_its_base_class_guard():
    class Scaled(nf.Linear):
        def forward(self, x):
            return 2 * super().forward(x)

    lin = Scaled(4, 3, dtype="float64")
    with pytest.raises(ValueError, match=r"^x: expected last dimension 4 \(in_features\), got shape"):
        lin(np.ones((2, 5)))
    y = lin(np.ones((2, 4)))
    with pytest.raises(ValueError, match=r"^dout: expected shape \(2, 3\)"):
        lin.backward(np.ones((2, 4)))
    assert lin.backward(np.ones_like(y)).shape == (2, 4)


def test_a_registered_check_runs_at_the_call_and_not_inside_a_model():
    calls = []
    layer = nf.LayerNorm(4, dtype="float64")
    original = registered("call", nf.LayerNorm)

    def spy(m, *args, **kwargs):
        calls.append(m)
        return original(m, *args, **kwargs)
    CHECKS["call"][nf.LayerNorm] = spy
    try:
        layer(np.ones((2, 4)))
        layer.forward(np.ones((2, 4)))
        assert calls == [layer]
    finally:
        CHECKS["call"][nf.LayerNorm] = original


def test_a_constructor_argument_is_refused_before_anything_is_built():
    with pytest.raises(ValueError, match=r"^in_features: expected a positive int, got 0"):
        nf.Linear(0, 3)
    with pytest.raises(TypeError, match=r"^config: expected a TransformerConfig, got dict"):
        nf.Transformer({"d_model": 8})
    with pytest.raises(ValueError, match=r"^TransformerConfig\.num_heads: expected a positive int"):
        nf.TransformerConfig(num_heads=0)
