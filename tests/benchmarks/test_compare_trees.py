"""benchmarks/compare_trees.py refuses bad arguments before starting any worker (nothing is timed)."""
from __future__ import annotations

import pytest

from benchmarks.compare_trees import main
from tests.paths import ROOT


@pytest.mark.parametrize("args, needle", [
    (["--root", str(ROOT)], "at least two"),
    (["--root", str(ROOT), "--root", "/nonexistent"], "no npformer package"),
    (["--root", str(ROOT), "--root", str(ROOT), "--configs", "huge"], "--configs"),
    (["--root", str(ROOT), "--root", str(ROOT), "--settle", "-1"], "--settle"),
    (["--root", str(ROOT), "--root", str(ROOT), "--workload", "generate"], "--workload"),
])
def test_bad_arguments_are_one_usage_error(args, needle, capsys):
    with pytest.raises(SystemExit) as e:
        main(args)
    assert e.value.code == 2 and needle in capsys.readouterr().err


def test_an_existing_out_file_is_never_replaced(tmp_path, capsys):
    out = tmp_path / "old.json"
    out.write_text("keep me")
    with pytest.raises(SystemExit):
        main(["--root", str(ROOT), "--root", str(ROOT), "--out", str(out)])
    assert out.read_text() == "keep me" and "exists" in capsys.readouterr().err
