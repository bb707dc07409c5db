"""Code that knows it is graded (`oracle_hostile/behaves_when_watched.py`): right only when its
module name, `sys.modules`, its caller's stack, the environment or the command line say the oracle
runs it. The oracle cannot make such code honest (the harness calls it in its own interpreter), so
it matches; but the report used to say nothing about it. The parent's source scan now names every
such read, file and line (`sandbox/watch_scan.py`), and code that reads none is not named. The facts
of a confined process (one compute thread, rlimits, an empty working directory, the global random
state: `oracle_hostile/reads_process_facts.py`) were not named before red-team round 14.
"""
from __future__ import annotations

import os

import pytest

pytest.importorskip("torch")

from parity_tests.oracle import check, render_text  # noqa: E402
from parity_tests.oracle.sandbox import policy  # noqa: E402

HERE = os.path.dirname(__file__)
WATCHED = os.path.join(HERE, "oracle_hostile", "behaves_when_watched.py")
PLAIN = os.path.join(HERE, "oracle_candidates", "call_arguments.py")
FACTS = os.path.join(HERE, "oracle_hostile", "reads_process_facts.py")


def test_the_report_names_every_tell_the_code_reads():
    res = check("sdpa", WATCHED + ":attention", runs=1, examples=2)
    assert res.verdict == "match", render_text(res)          # it behaves when watched
    seen = res.policy.get("watches") or []
    for tell in ("__name__ (behaves_when_watched.py:15)", "sys.modules (behaves_when_watched.py:16)",
                 "inspect.stack (behaves_when_watched.py:17)", "os.environ (behaves_when_watched.py:18)",
                 "sys.argv (behaves_when_watched.py:19)"):
        assert tell in seen, seen
    assert "LOOKS AT WHAT RUNS IT" in render_text(res)


def test_the_scan_names_imported_aliases_and_proc_paths_but_not_the_main_or_logger_idiom(tmp_path):
    src = tmp_path / "layer.py"
    src.write_text("from os import environ as E\nimport traceback as tb\n"
                   "def f(x):\n    return x if E.get('CI') or tb.extract_stack() or "
                   "open('/proc/self/cmdline').read() else -x\n"
                   "import logging\nlog = logging.getLogger(__name__)\n"
                   "if __name__ == '__main__':\n    print(f(1))\n")
    seen = policy.scan(str(src), ())["watches"]
    assert seen == ["os.environ (layer.py:4)", "traceback.extract_stack (layer.py:4)",
                    "'/proc/self/cmdline' (layer.py:4)"], seen


def test_plain_code_is_not_named():
    assert policy.scan(PLAIN, ())["watches"] == []


def test_the_report_names_the_facts_of_a_confined_process_the_code_reads():
    res = check("sdpa", FACTS + ":attention", runs=1, examples=2)
    assert res.verdict == "match", render_text(res)          # right where it thinks it is graded
    seen = res.policy.get("watches") or []
    for tell in ("torch.get_num_threads (reads_process_facts.py:15)",
                 "os.listdir (reads_process_facts.py:16)", "pathlib.Path.cwd (reads_process_facts.py:17)",
                 "resource.getrlimit (reads_process_facts.py:18)",
                 "numpy.random.get_state (reads_process_facts.py:19)"):
        assert tell in seen, seen
    assert "LOOKS AT WHAT RUNS IT" in render_text(res)


def test_the_scan_follows_dotted_names_and_from_imports_without_naming_their_other_uses(tmp_path):
    src = tmp_path / "layer.py"
    src.write_text("import numpy.random\nfrom numpy import random as npr\nfrom pathlib import Path\n"
                   "from torch import get_num_threads as nt\nimport os.path\n"
                   "def f(x):\n    a = numpy.random.get_state(), npr.get_state(), nt()\n"
                   "    return Path('w.npy'), os.path.join('a', 'b'), numpy.random.default_rng(0), a\n")
    seen = policy.scan(str(src), ())["watches"]
    assert seen == ["numpy.random.get_state (layer.py:7)", "numpy.random.get_state (layer.py:7)",
                    "torch.get_num_threads (layer.py:7)"], seen
