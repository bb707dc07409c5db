"""Bad `python -m benchmarks` options end in a one-line usage error (exit status 2) before any
measuring starts, never minutes later or as a traceback."""
import re

import pytest

import benchmarks.cli as cli
from tests.benchmarks.stop_at_measuring import no_measuring  # noqa: F401 - autouse fixture


@pytest.mark.parametrize("argv,match", [
    (["--configs", ""], "argument --configs: expected comma-separated names, got ''"),
    (["--backends", ","], "argument --backends: expected comma-separated names"),
    (["--threads", "0"], r"argument --threads: expected an integer >= 1, got '0'"),
    (["--repeats", "0"], r"argument --repeats: expected an integer >= 1, got '0'"),
    (["--warmup", "-1"], r"argument --warmup: expected an integer >= 0, got '-1'"),
    (["--batch-size", str(10 ** 20)], r"argument --batch-size: expected an integer from 1 to 2\*\*63 - 1"),
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


@pytest.mark.parametrize("argv", [["--threads", "3"], ["--scaling", "--scaling-threads", "1,3"]])
def test_thread_counts_above_the_cores_are_usage_errors(argv, monkeypatch, capsys):
    """More threads than cores only measures contention (`--threads 3` on 2 cores was accepted)."""
    monkeypatch.setattr(cli, "available_cores", lambda: 2)
    with pytest.raises(SystemExit) as e:
        cli.main(["--quick", "--no-plots", *argv])
    assert e.value.code == 2
    assert re.search(r"expected at most 2 \(the cores available here\), got '(3|1,3)'",
                     capsys.readouterr().err)


def test_a_huge_warmup_stays_within_max_time():
    """`--warmup 1000000000` ignored --max-time: the warm-up now starts no call after it."""
    import time

    from benchmarks.timing import time_numpy
    calls = []
    t0 = time.perf_counter()
    timing = time_numpy(lambda: calls.append(time.sleep(0.002)), warmup=10**9, repeats=1,
                        max_time=0.05)
    assert time.perf_counter() - t0 < 5.0 and timing.samples >= 1
    assert 1 <= len(calls) < 1000



@pytest.mark.parametrize("earlier, extra", [("results.json", []), ("throughput.png", []),
                                            ("sweep_seq_len.png", []),
                                            ("third_party_output.log", ["--no-plots"])])
def test_an_earlier_runs_files_in_out_are_never_replaced_silently(tmp_path, capsys, earlier, extra):
    f = tmp_path / earlier
    f.write_text("an earlier run's file")
    rc = cli.main(["--quick", *extra, "--out", str(tmp_path)])
    assert rc == 2
    err = capsys.readouterr().err
    assert earlier in err and "--overwrite" in err and str(tmp_path) in err
    assert f.read_text() == "an earlier run's file"                      # untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == [earlier]       # nothing else written


def test_a_plot_the_run_will_not_write_does_not_block_it(tmp_path):
    from benchmarks.cli import _written_files, build_parser
    args = build_parser().parse_args(["--no-plots", "--out", str(tmp_path)])
    assert "throughput.png" not in _written_files(args)
    args = build_parser().parse_args(["--no-sweeps", "--out", str(tmp_path)])
    assert "throughput.png" in _written_files(args) and "sweep_d_model.png" not in _written_files(args)


def test_scaling_refuses_an_earlier_scaling_json(tmp_path, capsys):
    (tmp_path / "scaling.json").write_text("{}")
    rc = cli.main(["--scaling", "--quick", "--out", str(tmp_path)])
    assert rc == 2 and "scaling.json" in capsys.readouterr().err
    assert (tmp_path / "scaling.json").read_text() == "{}"


@pytest.mark.parametrize("module, written", [("benchmarks.gemm_forms", "results.json"),
                                             ("benchmarks.elementwise", "results.json"),
                                             ("benchmarks.optimizer", "optimizer.json")])
def test_the_single_purpose_benchmarks_refuse_an_earlier_result_too(tmp_path, capsys, module,
                                                                     written):
    import importlib
    (tmp_path / written).write_text("kept")
    with pytest.raises(SystemExit) as e:
        importlib.import_module(module).main(["--out", str(tmp_path)])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert written in err and "--overwrite" in err
    assert (tmp_path / written).read_text() == "kept"


def test_the_benchmarks_usage_error_is_one_line(capsys):
    try:
        cli.build_parser().parse_args(["--fo\no", "--c\x1b[2Jonfigs"])
    except SystemExit as e:
        assert e.code == 2
    err = capsys.readouterr().err
    last = err.rstrip("\n").split("\n")[-1]
    assert "\x1b" not in err and "--fo\\no --c\\x1b[2Jonfigs" in last, err
