"""The np-f32 / np-f64 backends train as `npformer train --threads N` does: data parallelism where
its --data-parallel auto rule picks it, one model elsewhere, and the same gradients either way."""
import numpy as np
import pytest

from benchmarks.backends import BACKENDS, make_inputs, make_session, master_weights
from benchmarks.configs import resolve_config
from npformer.layers.loss import CrossEntropyLoss
from npformer.models.transformer import Transformer
from npformer.training.parallel import choose_replicas


def _session(bc, name: str, threads: int):
    return make_session(bc, BACKENDS[name], master_weights(bc), make_inputs(bc, bc.transformer_config()),
                        threads)


def test_the_rule_the_backend_follows_picks_two_replicas_for_this_batch_and_one_for_the_default():
    big = resolve_config("small", batch_size=64, dropout=0.0)
    assert choose_replicas(2, big.batch, "auto", tokens_per_row=big.tgt_len, d_model=128) == 2
    own = resolve_config("small")
    assert choose_replicas(2, own.batch, "auto", tokens_per_row=own.tgt_len, d_model=128) == 1


def test_a_data_parallel_step_gives_the_one_model_gradients_and_restores_the_blas_threads(monkeypatch):
    import npformer.training.blas as blas
    bc = resolve_config("small", batch_size=64, dropout=0.0)
    s = _session(bc, "np-f64", 2)
    try:
        assert s.parallel is not None and s.parallel.num_replicas == 2
        assert s.train_model is not s.model                # the forward keeps its own threads
        note = s.workload_note("train_step")
        assert "2 replicas" in note
        assert s.workload_note("forward") is None
        rep = s.parallel.replicas[1]
        one_model = sum(p.data.nbytes for p in s.train_model.parameters())
        assert s.resident_extra_bytes("train_step") == one_model       # the replica's first zeros
        assert s.resident_extra_bytes("forward") == 0
        calls = []
        monkeypatch.setattr(blas, "set_blas_threads", lambda n: calls.append(n) or True)
        loss = s.fn("fwd_bwd")()
        assert calls == [1, 2]                             # one BLAS thread per replica, then back
        assert s.resident_extra_bytes("train_step") == 0   # released by the all-reduce
        rep.parameters()[0].grad = np.zeros_like(rep.parameters()[0].data)
        assert s.resident_extra_bytes("train_step") == rep.parameters()[0].data.nbytes   # read
        # the same step on one model, float64, same weights and ids
        ref = Transformer(bc.transformer_config("float64"), seed=0)
        ref.load_state_dict(master_weights(bc))
        x = s.inputs
        ce = CrossEntropyLoss()
        ref_loss = float(ce(ref(x.src, x.tgt_in), x.tgt_out))
        ref.zero_grad()
        ref.backward(ce.backward())
        assert loss == pytest.approx(ref_loss, rel=1e-12)
        got = dict(s.train_model.named_parameters())
        for name, p in ref.named_parameters():
            # only the order of the additions differs (shards summed): float64 rounding
            np.testing.assert_allclose(got[name].grad, p.grad, rtol=1e-9, atol=1e-12, err_msg=name)
    finally:
        s.close()


@pytest.mark.parametrize("name, threads, batch", [("np-f32", 1, 64), ("np-f32", 2, 8),
                                                  ("np-f32-one-model", 2, 64)])
def test_one_model_trains_where_the_rule_picks_one_replica_or_it_is_switched_off(name, threads,
                                                                                 batch):
    bc = resolve_config("small", batch_size=batch, dropout=0.0)
    s = _session(bc, name, threads)
    assert s.parallel is None and s.train_model is s.model
    assert s.workload_note("train_step") is None and s.resident_extra_bytes("train_step") == 0
    assert np.isfinite(float(s.fn("train_step")()))


def test_the_few_row_product_runs_while_decoding_only_as_the_cli_runs_it(monkeypatch):
    import npformer.fast.linear as fast_linear
    from npformer.layers.linear import Linear
    bc = resolve_config("small", batch_size=2, seq_len=4, dropout=0.0)
    s = _session(bc, "np-f32", 1)
    seen = {}

    def spy(name):
        def few(x, W, b):
            seen[name] = seen.get(name, 0) + 1
            return fast_linear.linear_forward(x, W, b)
        return few
    try:
        monkeypatch.setattr(fast_linear, "few_rows_linear_forward", spy("few"))
        for workload in ("forward", "train_step"):     # 8 rows: the few-row form would take them
            s.fn(workload)()
            assert "few" not in seen, workload
        s.fn("generate")()
        assert seen.get("few", 0) > 0
        linears = [m for _, m in s.model.named_modules() if isinstance(m, Linear)]
        assert all("functional" not in m.__dict__ for m in linears)    # switched off again
    finally:
        s.close()
