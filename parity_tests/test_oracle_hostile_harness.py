"""Submissions that rewrite the worker's own harness (the code that runs the other modes and checks
inputs beside them) or give a library function other code in place, and functions whose dropout
arguments the main run leaves at False / 0.

The worker snapshots the harness (every loaded `parity_tests.*` module's functions, their code,
classes, dispatch tables) before the submission loads and checks it before every reply
(sandbox/tamper.py, child.py): a change is `interface_error`, named. The parent's scan names a
source that spells out the oracle's modules (policy.scan, a report line). A function's `training`
argument is passed True (rate 0) in the `train` run and False with a rate of 0.5 in the
`eval_rate` run (sandbox/modes.py). Each hostile file here got `match` before; right code of every
style still matches (these tests, and the candidate tests).
"""
from __future__ import annotations

import os
import sys
import types

import pytest

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check, render_text
from parity_tests.oracle.sandbox import modes, policy, tamper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOSTILE = os.path.join(ROOT, "parity_tests", "oracle_hostile")
CANDS = candidate_path()


def hostile(name: str, target: str = "attention") -> str:
    return f"{os.path.join(HOSTILE, name)}.py:{target}"


@pytest.mark.parametrize("name,named", [
    ("forges_mode_table", "parity_tests.oracle.sandbox.modes.RUNS"),       # name built at run time
    ("forges_harness_check", "parity_tests.oracle.sandbox.tamper.replaced"),  # the check replaced
    ("names_oracle_internals", "parity_tests.oracle.sandbox.modes.RUNS"),
])
def test_a_submission_rewriting_the_harness_is_refused_with_what_it_replaced(name, named):
    res = check("sdpa", hostile(name), examples=5)
    assert res.verdict == "interface_error", (res.verdict, res.message)
    assert named in res.message and "harness" in res.message
    assert res.examples_run == 0


def test_a_library_function_given_other_code_in_place_is_refused():
    """numpy.array_equal keeps its identity (the library snapshot's test) while its implementation
    runs other code: what a function runs is part of the snapshot too."""
    res = check("sdpa", hostile("patches_array_equal_code"), examples=5)
    assert res.verdict == "interface_error", (res.verdict, res.message)
    assert "numpy.array_equal" in res.message
    assert res.policy["reaches_into"] == ["_impl.__code__ = ... (patches_array_equal_code.py:7)"]
    assert "REACHES INTO ITS OWN INTERPRETER" in render_text(res)


def test_a_source_naming_the_oracles_modules_is_named_in_the_report():
    res = check("sdpa", hostile("names_oracle_internals"), examples=3)
    assert res.policy["names_internals"] == ["parity_tests.oracle.sandbox.modes "
                                             "(names_oracle_internals.py:9)"]
    assert "NAMES THE ORACLE'S OWN MODULES" in render_text(res)


def test_the_scan_names_whole_module_names_only(tmp_path):
    src = tmp_path / "sub.py"
    src.write_text('"""Like parity_tests and npformer, but mine."""\n'
                   'A = "parity_tests is the project\'s test folder"\n'
                   'B = "npformer.layers.attention"\n')
    assert policy.scan(str(src), policy.DEFAULT_FORBIDDEN)["names_internals"] == [
        "npformer.layers.attention (sub.py:3)"]
    assert policy.scan(str(src), ())["names_internals"] == []


def test_the_scan_names_code_reaching_into_its_own_interpreter(tmp_path):
    """Checks made beside the submission can be beaten from its process (the garbage collector's
    objects, a caller's frame, a library function patched); the parent's scan (never executed)
    names each such use for a reading by hand. Right code of every style names none."""
    src = tmp_path / "sub.py"
    src.write_text("import gc, sys\nimport numpy as np\nimport torch\n"
                   "torch.backends.cuda.matmul.allow_tf32 = False\n"          # a setting: allowed
                   "def f(x):\n"
                   "    o = gc.get_objects()\n"
                   "    up = sys._getframe(1).f_back.f_locals\n"
                   "    np.array_equal = lambda a, b: True\n"
                   "    setattr(torch, 'softmax', None)\n"
                   "    return x\n")
    found = [r.split(" (")[0] for r in policy.scan(str(src), ())["reaches_into"]]
    assert sorted(found) == sorted(["get_objects", "_getframe", "f_back", "f_locals",
                                    "np.array_equal = ...", "setattr(torch, ...)"])
    for name in ("stack_reader", "omits_output", "patch_modules", "ref_in_memory"):
        assert policy.scan(os.path.join(HOSTILE, name + ".py"), ())["reaches_into"], name
    right = [os.path.join(d, f) for d, _, fs in os.walk(CANDS) for f in fs if f.endswith(".py")]
    assert len(right) > 40
    assert [(f, r) for f in right if (r := policy.scan(f, ())["reaches_into"])] == []


def test_the_snapshot_sees_each_kind_of_harness_change(monkeypatch):
    snap = tamper.snapshot()
    assert tamper.replaced(snap) == []
    assert any(k == "harness:parity_tests.oracle.sandbox.modes" for k in snap)
    monkeypatch.setitem(modes.RUNS, "nograd", modes.RUNS["train"])
    assert "parity_tests.oracle.sandbox.modes.RUNS" in tamper.replaced(snap)
    monkeypatch.undo()
    monkeypatch.setattr(modes.repeat, "__code__", modes.train.__code__)
    assert "parity_tests.oracle.sandbox.modes.repeat" in tamper.replaced(snap)
    monkeypatch.undo()
    monkeypatch.setattr(modes, "isinstance", lambda *a: True, raising=False)   # a builtin shadowed
    assert "parity_tests.oracle.sandbox.modes.isinstance" in tamper.replaced(snap)
    monkeypatch.undo()
    from parity_tests.oracle.sandbox.session import Session
    monkeypatch.setattr(Session, "run", lambda *a, **k: ({}, {}))
    assert "parity_tests.oracle.sandbox.session.Session" in tamper.replaced(snap)
    monkeypatch.undo()
    assert tamper.replaced(snap) == []


def test_plain_data_of_the_harness_may_change():
    """Counters and caches (plain data) are not watched: the harness changes them while it runs."""
    name = "parity_tests.oracle._snapshot_probe"
    mod = types.ModuleType(name)
    mod.COUNT, mod.SEEN = 0, {"a": 1}
    sys.modules[name] = mod
    try:
        snap = tamper.snapshot()
        mod.COUNT, mod.SEEN["b"] = 1, 2
        assert tamper.replaced(snap) == []
    finally:
        del sys.modules[name]


@pytest.mark.parametrize("name,mode,words", [
    ("functional_dropout_own_rate", "train", "training=True"),
    ("functional_dropout_in_eval", "eval_rate", "training=False and a dropout rate of 0.5"),
])
def test_a_functions_dropout_arguments_are_exercised(name, mode, words):
    res = check("sdpa", hostile(name), examples=10)
    assert res.verdict == "mismatch", res.message
    assert res.quantity == "output" and res.detail["mode"] == mode
    assert words in res.message


@pytest.mark.parametrize("target", ["attention", "sdpa_convention", "numpy_attention"])
def test_right_functions_with_dropout_arguments_match(target):
    res = check("sdpa", os.path.join(CANDS, f"dropout_arguments.py:{target}"), examples=8)
    assert res.verdict == "match", res.message
    assert "names_internals" in res.policy and res.policy["names_internals"] == []


def test_the_eval_rate_run_is_made_only_with_a_training_argument():
    """F.scaled_dot_product_attention's convention (a rate, no training flag) drops whenever the
    rate is above 0: such a function is never called with one."""
    import numpy as np

    def sdpa_convention(q, k, v, mask=None, dropout_p=0.0):
        s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
        w = np.exp(s - s.max(-1, keepdims=True))
        w = w / w.sum(-1, keepdims=True)
        keep = np.random.default_rng().random(w.shape) >= dropout_p
        return (w * keep / (1.0 - dropout_p)) @ v, w

    def with_flag(q, k, v, mask=None, dropout_p=0.0, training=False):
        return sdpa_convention(q, k, v, mask, dropout_p if training else 0.0)

    from parity_tests.oracle.components import get
    from parity_tests.oracle.core.structural import cases
    from parity_tests.oracle.reading.adapters import Adapter, Options
    from parity_tests.oracle.reading.findings import Findings
    from parity_tests.oracle.reading.loader import from_object
    comp = get("sdpa")
    case = comp.build(cases(comp, {}, Findings(), 0)[0], "float64", Findings())
    plain = Adapter(from_object(sdpa_convention, None), comp, Options())
    assert modes.eval_rate(plain, case) == {}
    flagged = Adapter(from_object(with_flag, None), comp, Options())
    assert set(modes.eval_rate(flagged, case)) >= {"output"}
