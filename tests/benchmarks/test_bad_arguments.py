"""`python -m benchmarks` options found by the input audit: each used to start measuring (minutes),
or fail late with a traceback, instead of a one-line usage error (exit status 2)."""
import re

import pytest

import benchmarks.cli as cli


class Started(Exception):
    pass


@pytest.fixture(autouse=True)
def no_measuring(monkeypatch):
    """Reaching the measurement at all is the bug: stop there, fast."""
    def started(*a, **kw):
        raise Started()
    monkeypatch.setattr(cli, "apply_threads", lambda threads: {"threads": threads})
    import benchmarks.peak as peak
    monkeypatch.setattr(peak, "measure_peaks", started)   # the first measurement
    import benchmarks.scaling as scaling
    monkeypatch.setattr(scaling, "run_scaling", started)


@pytest.mark.parametrize("argv,match", [
    (["--configs", ""], "argument --configs: expected comma-separated names, got ''"),
    (["--backends", ","], "argument --backends: expected comma-separated names"),
    (["--threads", "0"], r"argument --threads: expected an integer >= 1, got '0'"),
    (["--repeats", "0"], r"argument --repeats: expected an integer >= 1, got '0'"),
    (["--warmup", "-1"], r"argument --warmup: expected an integer >= 0, got '-1'"),
    (["--max-time", "nan"], r"argument --max-time: expected a finite number of seconds > 0"),
    (["--max-time", "0"], r"argument --max-time: expected a finite number of seconds > 0"),
])
def test_bad_numbers_and_empty_lists_are_usage_errors(argv, match, capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["--quick", "--no-plots", *argv])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and re.search(match, err), err


def test_sweep_d_model_not_divisible_by_its_heads(tmp_path, capsys):
    rc = cli.main(["--quick", "--no-plots", "--sweep-d-models", "7", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert rc == 2 and "--sweep-d-models: expected multiples of their head count" in err


def test_scaling_out_that_is_a_file(tmp_path, capsys):
    f = tmp_path / "f"
    f.write_text("keep me")
    rc = cli.main(["--scaling", "--quick", "--out", str(f)])
    err = capsys.readouterr().err
    assert rc == 2 and f"--out {f}: is a file; expected a folder" in err and "Traceback" not in err
    assert f.read_text() == "keep me"
