"""--batch-size, --seq-len and --dropout: applied to any configuration, and bad values refused with
a message naming the option (exit status 2, before any measurement)."""
import json
import re

import pytest

import benchmarks.cli as cli
from benchmarks.configs import CONFIGS, resolve_config


def test_causal_config_takes_batch_length_and_every_dropout_site():
    bc = resolve_config("gpt2s-cpu", batch_size=4, seq_len=128, dropout=0.0)
    assert (bc.batch, bc.tgt_len) == (4, 128)
    assert bc.model_fields["dropout"] == 0.0 and bc.model_fields["attention_dropout"] == 0.0
    assert "--batch-size 4" in bc.note and "--seq-len 128" in bc.note
    own = CONFIGS["gpt2s-cpu"]                       # the registry itself is left alone
    assert (own.batch, own.tgt_len, own.model_fields["dropout"]) == (2, 64, 0.1)


def test_seq2seq_length_sets_source_and_target():
    bc = resolve_config("base", seq_len=96)
    assert (bc.src_len, bc.tgt_len, bc.batch) == (96, 96, 8)
    assert "dropout=0.1" in bc.describe() and "len=96->96" in bc.describe()
    assert resolve_config("base") is CONFIGS["base"]


@pytest.mark.parametrize("kwargs,match", [
    ({"seq_len": 1025}, r"--seq-len: expected at most 1024 for config 'gpt2s-cpu'.*got 1025"),
    ({"batch_size": 0}, r"--batch-size: expected an integer >= 1, got 0"),
    ({"dropout": 1.0}, r"--dropout: expected a probability in \[0, 1\), got 1.0"),
])
def test_values_that_do_not_fit_the_config_name_the_option(kwargs, match):
    with pytest.raises(ValueError, match=match):
        resolve_config("gpt2s-cpu", **kwargs)


@pytest.fixture
def no_measuring(monkeypatch):
    class Started(Exception):
        pass

    def started(*a, **kw):
        raise Started()
    monkeypatch.setattr(cli, "apply_threads", lambda threads: {"threads": threads})
    import benchmarks.load as load
    monkeypatch.setattr(load, "sample", started)      # the first thing a run measures
    return Started


@pytest.mark.parametrize("argv,match", [
    (["--batch-size", "0"], r"argument --batch-size: expected an integer >= 1, got '0'"),
    (["--batch-size", "two"], r"argument --batch-size: expected an integer >= 1, got 'two'"),
    (["--seq-len", "-3"], r"argument --seq-len: expected an integer >= 1, got '-3'"),
    (["--dropout", "1"], r"argument --dropout: expected a probability in \[0, 1\), got '1'"),
    (["--dropout", "nan"], r"argument --dropout: expected a probability in \[0, 1\), got 'nan'"),
    (["--dropout", "-0.1"], r"argument --dropout: expected a probability in \[0, 1\), got '-0.1'"),
])
def test_bad_values_are_usage_errors(argv, match, capsys, no_measuring):
    with pytest.raises(SystemExit) as e:
        cli.main(["--quick", "--no-plots", *argv])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and re.search(match, err), err


def test_length_beyond_a_configs_positions_stops_before_measuring(tmp_path, capsys, no_measuring):
    rc = cli.main(["--configs", "tiny", "--seq-len", "65", "--no-plots", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert rc == 2 and "--seq-len: expected at most 64 for config 'tiny'" in err, err


def test_scaling_refuses_shape_options(tmp_path, capsys):
    rc = cli.main(["--scaling", "--batch-size", "4", "--out", str(tmp_path)])
    assert rc == 2 and "--batch-size/--seq-len/--dropout: not supported with --scaling" \
        in capsys.readouterr().err


def test_a_run_measures_the_shape_asked_for(tmp_path):
    torch = pytest.importorskip("torch")
    old = torch.get_num_threads()
    try:
        assert cli.main(["--threads", "1", "--configs", "tiny", "--backends", "np-f32,tf-cpu",
                         "--workloads", "forward,train_step", "--batch-size", "3", "--seq-len", "5",
                         "--dropout", "0", "--repeats", "1", "--warmup", "1", "--peak-sizes", "64",
                         "--no-sweeps", "--no-memory", "--no-plots", "--quiet",
                         "--out", str(tmp_path)]) == 0
    finally:
        torch.set_num_threads(old)
    doc = json.loads((tmp_path / "results.json").read_text())
    (c,) = doc["configs"]
    assert (c["batch"], c["src_len"], c["tgt_len"], c["model_fields"]["dropout"]) == (3, 5, 5, 0.0)
    assert doc["options"]["overrides"] == {"batch_size": 3, "seq_len": 5, "dropout": 0.0}
    assert {r["tokens"] for r in doc["results"]} == {15}          # 3 rows x 5 target tokens
    assert all(r["status"] == "ok" and r["check"]["rel"] < 1e-5 for r in doc["results"])
    assert any("shape overridden (--batch-size 3, --seq-len 5, --dropout 0.0)" in c
               for c in doc["goal_caveats"])
