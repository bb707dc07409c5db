"""load_state_dict's check lives in npformer.guards.state, registered for Module: it runs before
anything is written, names every refused key, and loads nothing when one is refused."""
import numpy as np
import pytest

import npformer as nf
from npformer.guards.state import check_state_dict
from npformer.layers.module import CHECKS, Module, registered


def test_module_load_state_dict_runs_the_registered_check():
    assert registered("load_state_dict", nf.Linear) is check_state_dict
    seen = []

    def spy(owner, own, state, strict=True):
        seen.append((owner, dict(own), strict))
        return check_state_dict(owner, own, state, strict)
    CHECKS["load_state_dict"][Module] = spy
    try:
        lin = nf.Linear(3, 2, dtype="float64")
        lin.load_state_dict(lin.state_dict(), strict=False)
    finally:
        CHECKS["load_state_dict"][Module] = check_state_dict
    assert seen == [("Linear", {"weight": (2, 3), "bias": (2,)}, False)]


def test_one_refused_key_loads_nothing_and_every_problem_is_named():
    lin = nf.Linear(3, 2, dtype="float32")
    before = lin.state_dict()
    bad = {"weight": np.ones((2, 3)), "bias": np.ones(3), "extra": np.ones(1)}
    with pytest.raises(ValueError) as e:
        lin.load_state_dict(bad)
    assert str(e.value) == ("Linear.load_state_dict: unexpected keys ['extra']; bias: expected shape "
                            "(2,), got (3,) (nothing was loaded)")
    for k, v in lin.state_dict().items():
        np.testing.assert_array_equal(v, before[k])


def test_values_that_are_not_real_arrays_are_refused_by_name():
    own = {"w": (2,), "s": (1,), "r": (2,)}
    state = {"w": np.array([1 + 2j, 3j]), "s": np.array(["a"]), "r": [[1.0], [2.0, 3.0]]}
    with pytest.raises(ValueError) as e:
        check_state_dict("Net", own, state)
    msg = str(e.value)
    assert "w: expected a real (float or integer) array, got dtype complex128" in msg
    assert "s: expected a real (float or integer) array, got dtype <U1" in msg
    assert "r: expected an array, got a list that is not one" in msg
    with pytest.raises(TypeError, match=r"^Net.load_state_dict: state: expected a mapping of name -> "
                                         r"array, got list$"):
        check_state_dict("Net", own, [1, 2])


def test_accepted_values_come_back_as_arrays_cast_nowhere():
    staged = check_state_dict("Net", {"w": (2,)}, {"w": [1, 2]})
    assert isinstance(staged["w"], np.ndarray) and staged["w"].tolist() == [1, 2]
