"""`python -m benchmarks.gemm_forms`: every form computes x W^T + b (to the reordered-sum bound), a
configuration's shapes are its Linear products, bad options are usage errors before measuring, and
a tiny run prints every shape and writes its JSON; the np backends pick last-position logits."""
from __future__ import annotations

import json

import numpy as np
import pytest

import benchmarks.gemm_forms as gf
from benchmarks.configs import CONFIGS


@pytest.mark.parametrize("n, i, o", [(1, 7, 5), (3, 16, 9), (33, 12, 40)])
def test_every_form_computes_the_linear_product(n, i, o):
    jobs = gf.form_jobs(n, i, o, seed=n)
    rng = np.random.default_rng(n)                      # form_jobs' draws, in its order
    x = rng.standard_normal((n, i)).astype(np.float32)
    W = rng.standard_normal((o, i)).astype(np.float32)
    b = rng.standard_normal(o).astype(np.float32)
    want = x.astype(np.float64) @ W.T.astype(np.float64) + b
    bound = (i + 1) * np.finfo(np.float32).eps * (np.abs(x) @ np.abs(W).T + np.abs(b))
    assert set(jobs) == set(gf.FORMS)
    for name, fn in jobs.items():
        y = fn()
        y = y.numpy() if name == "torch" else y           # torch's GEMM, the ceiling column
        assert y.shape == (n, o) and y.dtype == np.float32 and y.flags.c_contiguous, name
        assert np.all(np.abs(y - want) <= bound), name


@pytest.mark.parametrize("n, i, o", [(1, 7, 5), (33, 12, 40)])
def test_backward_products_are_linear_backward_s(n, i, o):
    from npformer.layers.linear import linear_backward, linear_forward
    jobs = gf.backward_jobs(n, i, o, seed=n)
    rng = np.random.default_rng(n)                      # backward_jobs' draws, in its order
    x = rng.standard_normal((n, i)).astype(np.float32)
    W = rng.standard_normal((o, i)).astype(np.float32)
    dy = rng.standard_normal((n, o)).astype(np.float32)
    _, cache = linear_forward(x, W, None)
    dx, dW, _ = linear_backward(dy, cache)
    assert set(jobs) == set(gf.BACKWARD)
    assert np.array_equal(jobs["dy@W"](), dx) and np.array_equal(jobs["dy^T@x"](), dW)
    for name, want, k in (("torch dy@W", dx, o), ("torch dy^T@x", dW, n)):
        got = jobs[name]().numpy()
        bound = (k + 1) * np.finfo(np.float32).eps * (
            np.abs(dy) @ np.abs(W) if name == "torch dy@W" else np.abs(dy).T @ np.abs(x))
        assert got.shape == want.shape and np.all(np.abs(got - want) <= bound), name


def test_one_forward_counts_every_linear_of_the_model():
    import npformer as nf
    for name in ("base", "gpt2s-cpu"):
        bc = CONFIGS[name]
        cfg = bc.transformer_config()
        model = (nf.Transformer(cfg, seed=0) if bc.model == "seq2seq" else nf.CausalLM(cfg, seed=0))
        kinds = {"forward D->D": 0, "forward D->F": 0, "forward F->D": 0}
        D, F = cfg.d_model, cfg.d_ff
        for _, m in model.named_modules():
            if isinstance(m, nf.Linear):
                shape = (m.in_features, m.out_features)
                what = {(D, D): "forward D->D", (D, F): "forward D->F", (F, D): "forward F->D"}.get(shape)
                if what:
                    kinds[what] += 1
        counts = gf.forward_counts(bc)
        assert {k: counts[k] for k in kinds} == kinds, name
        assert counts["forward D->V"] == 1


def test_shapes_are_the_configuration_s_linear_products():
    got = gf.shapes(CONFIGS["base"])                    # batch 8 x 64, generation batch 4
    assert ("forward D->F", 512, 512, 2048) in got
    assert ("forward D->V", 512, 512, 4096) in got
    assert ("decode step F->D", 4, 2048, 512) in got
    assert len(got) == 8


@pytest.mark.parametrize("argv, match", [
    (["--configs", "nope"], "--configs: unknown ['nope']"),
    (["--threads", "0"], "--threads: expected comma-separated positive ints, got '0'"),
    (["--repeats", "0"], "--repeats: expected a positive int, got 0"),
])
def test_bad_options_are_usage_errors(argv, match, capsys, monkeypatch):
    monkeypatch.setattr(gf, "interleave", lambda *a, **k: pytest.fail("measured anyway"))
    with pytest.raises(SystemExit) as e:
        gf.main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert match in err and "Traceback" not in err


def test_a_tiny_run_reports_every_shape(tmp_path, capsys, monkeypatch):
    import benchmarks.ab_rounds as ab
    import benchmarks.load as load
    monkeypatch.setattr(load, "sample", lambda seconds=1.0: {"other_processes_cores": 0.0,
                                                             "cpus": 2, "utc": "2026-01-01T00:00"})
    monkeypatch.setattr(ab, "settle", lambda: None)
    assert gf.main(["--configs", "tiny", "--threads", "1", "--repeats", "1",
                    "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    for what in ("forward D->D", "decode step D->V", "(W@x^T)^T/x@W^T", "W_F/x@W^T"):
        assert what in out, what
    doc = json.loads((tmp_path / "results.json").read_text())
    # 8 shapes, the backward of the 4 forward ones, one forward's sum, one training step's sum
    assert len(doc["results"]) == 14 and "stamp" in doc["load"]
    fwd, step = doc["results"][-2:]
    assert fwd["what"] == "one forward's products" and fwd["ratio_numpy_to_torch"] > 0
    assert step["what"] == "one training step's products"
    assert step["wall_ms"]["x@W^T"] > fwd["wall_ms"]["x@W^T"]
    assert "one forward's products: numpy x@W^T" in out
    assert "one training step's products (forward, dx, dW): numpy" in out
    assert "torch dy^T@x" in out


@pytest.mark.parametrize("name, expected", [("np-f32", True), ("np-f64", True),
                                            ("np-f32-plain", False)])
def test_numpy_backends_decode_with_last_position_logits_except_plain(name, expected):
    from benchmarks.backends import BACKENDS, make_inputs, make_session, master_weights
    from npformer.fast.last_logits import last_position_logits_enabled
    bc = CONFIGS["tiny"]
    s = make_session(bc, BACKENDS[name], master_weights(bc), make_inputs(bc, bc.transformer_config()), 1)
    assert last_position_logits_enabled(s.model) is expected
    assert s.fn("generate")().tokens.shape[0] == bc.gen_batch

