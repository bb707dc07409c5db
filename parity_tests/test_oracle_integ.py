"""Integration of the isolated core with the reach recognisers: `--adapter FILE` through
the CLI (isolated worker, replay command, policy scan), through a batch spec (`adapter = "..."`,
relative to the spec) and the Gradescope bundle; notes made late in the worker reach the report."""
from __future__ import annotations

import json
import os
import shlex
import zipfile

import pytest

from parity_tests.conftest import candidate_path
from parity_tests.oracle import check
from parity_tests.oracle.cli import main
from parity_tests.oracle.core.report import render_text
from parity_tests.oracle.sandbox import parent

HERE = candidate_path()
ADAPTER = os.path.join(HERE, "hooked_adapter_numpy.py")

# a NumPy LayerNorm no guessing reaches (tuple state, run/back): the adapter above reaches it. Taken
# from oracle_candidates/hooked_styles.py (that file imports torch for its other candidates) and
# written alone under one class name, so the right and the wrong file differ only in `bad`.
HOOKED = os.path.join(HERE, "hooked_styles.py")


def _norm(path, bad: bool) -> str:
    src = open(HOOKED).read()
    body = src[src.index("class TupleStateNorm:"):src.index("class TupleStateNormBad")]
    assert "    bad = False\n" in body
    path.write_text("import numpy as np\n\n\n" + body.replace("    bad = False\n", f"    bad = {bad}\n"))
    return str(path)


def test_cli_adapter_in_an_isolated_worker_and_its_replay(tmp_path, capsys):
    right, wrong = _norm(tmp_path / "right.py", False), _norm(tmp_path / "wrong.py", True)
    report = tmp_path / "r.json"
    code = main(["check", "layernorm", f"{right}:TupleStateNorm", "--adapter", ADAPTER,
                 "--examples", "3", "--report", str(report)])
    out = capsys.readouterr().out
    assert code == 0, out
    rep = json.loads(report.read_text())
    assert rep["policy"]["isolated"] is True, rep["policy"]
    assert any("adapter file hooked_adapter_numpy.py" in n for n in rep["notes"]), rep["notes"]
    assert rep["options"]["adapter_path"] == ADAPTER
    code = main(["check", "layernorm", f"{wrong}:TupleStateNorm", "--adapter", ADAPTER,
                 "--examples", "20", "--report", str(report), "--overwrite"])
    out = capsys.readouterr().out
    rep = json.loads(report.read_text())
    assert code == 1 and rep["verdict"] == "mismatch", out
    replay = rep["replay"]
    assert "--adapter" in replay and ADAPTER in replay, replay
    argv = shlex.split(replay)
    assert argv[:2] == ["npformer-oracle", "check"]
    assert main(argv[1:]) == 1, capsys.readouterr().out          # the replay reproduces it


def test_cli_adapter_path_checked_before_any_work(tmp_path, capsys):
    right = _norm(tmp_path / "right.py", False)
    started = len(parent.STARTED)
    for bad in (str(tmp_path / "nowhere.py"), str(tmp_path / "adapter.txt")):
        code = main(["check", "layernorm", f"{right}:TupleStateNorm", "--adapter", bad])
        err = capsys.readouterr().err
        assert code == 2 and "--adapter" in err and bad in err, err
    assert len(parent.STARTED) == started                       # no worker was started


def test_adapter_is_under_the_import_policy(tmp_path):
    right = _norm(tmp_path / "right.py", False)
    sneaky = tmp_path / "sneaky_adapter.py"
    sneaky.write_text(open(ADAPTER).read() + "\nimport npformer.layers.layernorm  # the reference\n")
    res = check("layernorm", f"{right}:TupleStateNorm", examples=3, adapter_path=str(sneaky))
    assert res.verdict == "forbidden_import" and "npformer" in res.message, render_text(res)


def test_relative_adapter_path_reaches_the_worker(tmp_path, monkeypatch):
    """The worker runs in an empty scratch folder: a path relative to the caller must still work."""
    right = _norm(tmp_path / "right.py", False)
    (tmp_path / "hooks.py").write_text(open(ADAPTER).read())
    monkeypatch.chdir(tmp_path)
    res = check("layernorm", f"{right}:TupleStateNorm", examples=3, adapter_path="hooks.py")
    assert res.verdict == "match", render_text(res)


def test_late_notes_reach_the_report(tmp_path):
    """A note made while building in the worker (constant arrays left as constructed) is in the
    result, not only the notes made when the candidate was first loaded."""
    f = tmp_path / "ffn.py"
    f.write_text('''import numpy as np


class FFN:
    def __init__(self, d_model, d_ff):
        rng = np.random.default_rng()
        self.W1, self.b1 = rng.standard_normal((d_model, d_ff)), np.zeros(d_ff)
        self.W2, self.b2 = rng.standard_normal((d_ff, d_model)), np.zeros(d_model)
        self.scale = np.ones(7)               # a constant the reference has no counterpart for

    def forward(self, x):                     # (read, so it is no optimizer state left aside)
        return (np.maximum(x @ self.W1 + self.b1, 0) @ self.W2 + self.b2) * self.scale[0]
''')
    res = check("ffn", f"{f}:FFN", examples=3, weight_layout="in_out")
    assert res.verdict == "match", render_text(res)
    assert any("left as constructed" in n and "scale" in n for n in res.notes), res.notes


SPEC = """
[assignment]
name = "norm"
entry_file = "norm.py"
examples = 12
seed = 1
timeout = 20

[[check]]
name = "layernorm"
component = "layernorm"
entry = "TupleStateNorm"
points = 2
adapter = "hooks/norm_adapter.py"
"""


def test_batch_spec_adapter_relative_to_the_spec_and_in_the_bundle(tmp_path):
    from parity_tests.oracle.grading.batch import grade
    from parity_tests.oracle.grading.gradescope import build_bundle
    from parity_tests.oracle.grading.spec import SpecError, load_spec

    spec_dir = tmp_path / "course"
    (spec_dir / "hooks").mkdir(parents=True)
    (spec_dir / "hooks" / "norm_adapter.py").write_text(open(ADAPTER).read())
    spec = spec_dir / "assignment.toml"
    spec.write_text(SPEC)
    subs = tmp_path / "subs"
    for student, bad in (("ada", False), ("bob", True)):
        (subs / student).mkdir(parents=True)
        _norm(subs / student / "norm.py", bad)
    res = grade(str(subs), str(spec), str(tmp_path / "out"), jobs=1, quiet=True)
    by = {g["student"]: g for g in res["graded"]}
    assert by["ada"]["score"] == 2 and by["bob"]["score"] == 0, by
    assert by["bob"]["checks"][0]["verdict"] == "mismatch", by["bob"]["checks"]
    info = build_bundle(str(spec), str(tmp_path / "ag.zip"))
    with zipfile.ZipFile(info["zip"]) as z:
        assert z.read("hooks/norm_adapter.py") == (spec_dir / "hooks" / "norm_adapter.py").read_bytes()
    for bad, why in (('"hooks/none.py"', "an existing file"), ('"/etc/x.py"', "relative"),
                     ('"../x.py"', "relative")):
        spec.write_text(SPEC.replace('"hooks/norm_adapter.py"', bad))
        with pytest.raises(SpecError, match=why):
            load_spec(str(spec))


def test_activation_kept_by_a_lazy_forward_is_not_a_home_for_a_missing_bias():
    """Regression (three reach tests failed on the merged branch): d2l's attention keeps its
    attention weights as a plain tensor attribute; after the lazy first call, at d_model 1 that
    activation ((B*heads, Tq, Tk) = (1, 1, 1)) looked like a (1,) bias, so the bias-free LazyLinear
    projections were an interface error. Only parameters and buffers may hold a weight."""
    torch_styles = os.path.join(HERE, "torch_styles.py")
    for name in ("LazyMultiHeadAttention", "SelfAttentionValidLens"):
        res = check("mha", f"{torch_styles}:{name}", replay={
            "B": 1, "Tq": 1, "Tk": 1, "d_model": 1, "num_heads": 1, "mask": None, "seed": 0})
        assert res.verdict == "match", render_text(res)
        bias = [m for m in res.mapping if m.startswith("q_proj.bias")]
        assert bias and "no parameter or buffer" in bias[0], res.mapping


def test_a_weight_matrix_claimed_absent_is_still_refused():
    """The parent's rule: a worker may call only biases, norm parameters and an attention's own
    output projection absent (each a "parameters" gap); no other weight matrix."""
    from parity_tests.oracle.core.backend import may_be_absent
    assert may_be_absent("q_proj.bias", (1,), {}) and may_be_absent("norm1.weight", (4,), {})
    assert may_be_absent("out_proj.weight", (4, 4), {})
    assert not may_be_absent("q_proj.weight", (1, 1), {})
    assert not may_be_absent("self_attn.out_proj.weight", (4, 4), {})
    assert may_be_absent("q_proj.weight", (1, 1), {"q_proj.weight": "-"})


def test_notes_made_at_every_build_are_reported_once():
    """A constructor guess is noted again, with that example's sizes, at every build in the worker:
    the report keeps the one from the first build, not one line per example."""
    f = os.path.join(HERE, "constructor_styles.py")
    res = check("ffn", f"{f}:DictConfigFFN", examples=6)
    assert res.verdict == "match", render_text(res)
    cfg = [n for n in res.notes if n.startswith("constructor argument")]
    assert len(cfg) == 1 and "config object" in cfg[0], res.notes
