"""torchformer under torch.compile: whole models trace as one graph (no graph breaks), compiled
outputs and gradients equal eager ones, and the two CPU compile ops (torchformer/compile_ops.py)
compute dropout and ReLU exactly.

Compiled with backend="aot_eager" (dynamo + AOT autograd, the same graphs inductor gets, without
the C++ build that would take ~15 s per test); `torch._dynamo.explain` counts graphs and breaks.
"""
from __future__ import annotations

import pytest
import torch

from tests.torchformer.helpers import assert_close, perturb, randn, small_config
from torchformer.layers import compile_ops
from torchformer.layers.dropout import Dropout
from torchformer.models.causal_lm import CausalLM
from torchformer.models.classifier import EncoderClassifier
from torchformer.models.transformer import Transformer

IDS = torch.tensor([[3, 5, 7, 2, 0], [4, 4, 9, 11, 12]])          # row 0 ends in padding


def config(**changes):
    """One layer per stack: graph breaks and numerics show in one layer; tracing two costs time."""
    return small_config(num_encoder_layers=1, num_decoder_layers=1, num_classes=3,
                        pooling="mean", **changes)


def call(model, ids, seq2seq: bool):
    return model(ids, ids) if seq2seq else model(ids)


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


@pytest.mark.parametrize("cls", [Transformer, CausalLM, EncoderClassifier])
@pytest.mark.parametrize("mode", ["eval", "train"])
def test_models_trace_as_one_graph(cls, mode):
    """No data-dependent check (id range, empty mask rows), retain_grad or dropout bookkeeping
    breaks the graph: one graph, zero breaks, in eval and in training with dropout on."""
    model = cls(config(dropout=0.1, activation_dropout=0.1))
    getattr(model, mode)()
    ex = torch._dynamo.explain(model)(*((IDS, IDS) if cls is Transformer else (IDS,)))
    reasons = [str(b.reason).splitlines()[0] for b in ex.break_reasons]
    assert (ex.graph_count, ex.graph_break_count) == (1, 0), reasons


@pytest.mark.parametrize("cls,activation", [(Transformer, "relu"), (CausalLM, "gelu"),
                                            (EncoderClassifier, "relu")])
def test_compiled_outputs_and_gradients_equal_eager(cls, activation):
    """Training mode (dropout 0, so both runs compute the same function), float64, a random upstream
    gradient: logits and every parameter gradient of the compiled model equal eager's."""
    gen = torch.Generator().manual_seed(3)
    model = cls(config(activation=activation))
    perturb(model, gen)
    model.train()
    eager = call(model, IDS, cls is Transformer)
    g = randn(gen, *eager.shape)
    eager.backward(g)
    ref = {n: p.grad.clone() for n, p in model.named_parameters()}
    model.zero_grad(set_to_none=True)
    compiled = call(torch.compile(model, backend="aot_eager", fullgraph=True), IDS,
                    cls is Transformer)
    compiled.backward(g)
    # same ops in another order at most (AOT traces the same aten calls): float64 floors apply
    assert_close("logits", compiled, eager)
    for n, p in model.named_parameters():
        assert_close(f"{n}.grad", p.grad, ref[n], kind="grad", ref_scale=float(
            max(r.abs().max() for r in ref.values())))


def test_compiled_fully_masked_rows_stay_zero():
    """Under compile the empty-row check cannot run, so rows are always opened and zeroed: a fully
    masked query row still gives output 0 and passes no gradient."""
    from torchformer.layers.attention import MultiHeadAttention
    gen = torch.Generator().manual_seed(5)
    mha = MultiHeadAttention(16, 4, dtype="float64")
    perturb(mha, gen)
    x = randn(gen, 2, 3, 16, requires_grad=True)
    mask = torch.ones(2, 1, 3, 3, dtype=torch.bool)
    mask[0, 0, 1] = False                                          # batch 0, query 1 sees nothing
    out = torch.compile(mha, backend="aot_eager", fullgraph=True)(x, x, x, mask)
    eager = mha(x, x, x, mask)
    assert_close("out", out, eager)
    heads_in = mha.out_proj.bias.detach()                          # empty row: 0 @ W_o + b_o
    assert_close("empty row", out[0, 1], heads_in)
    g = torch.zeros(2, 3, 16, dtype=torch.float64)
    g[0, 1] = randn(gen, 16)                                       # upstream on the empty row only
    (dx,) = torch.autograd.grad(torch.compile(mha, backend="aot_eager")(x, x, x, mask), x, g)
    assert float(dx.abs().max()) == 0.0                            # the empty row passes nothing


def test_compiled_dropout_draws_scaled_keep_noise():
    """The compiled CPU dropout (keep_noise op): every output is 0 or x / (1 - p), about 1 - p of
    them kept, and the gradient is upstream * (that same factor)."""
    gen = torch.Generator().manual_seed(7)
    p = 0.25
    drop = Dropout(p).train()
    x = randn(gen, 64, 64, requires_grad=True)
    y = torch.compile(drop, backend="aot_eager", fullgraph=True)(x)
    factor = (y / x).detach()                                       # (64, 64) 0 or 1/(1-p)
    kept = factor != 0
    assert torch.allclose(factor[kept], torch.full_like(factor[kept], 1.0 / (1.0 - p)))
    assert 0.70 < float(kept.double().mean()) < 0.80               # 4096 draws: 1 - p = 0.75
    g = randn(gen, 64, 64)
    y.backward(g)
    assert_close("dx", x.grad, g * factor, kind="grad")


def test_compile_ops_relu_value_and_gradient():
    """compile_ops.relu (used inside compiled CPU graphs) against torch.relu, with a random
    upstream gradient and float64 finite differences."""
    gen = torch.Generator().manual_seed(11)
    x = randn(gen, 5, 7, requires_grad=True)
    assert torch.equal(compile_ops.relu(x), torch.relu(x))
    g = randn(gen, 5, 7)
    (ours,) = torch.autograd.grad(compile_ops.relu(x), x, g)
    (ref,) = torch.autograd.grad(torch.relu(x), x, g)
    assert torch.equal(ours, ref)
    assert torch.autograd.gradcheck(compile_ops.relu, (x,))


def test_compiled_model_has_no_retained_input_grad_but_eager_does():
    """retain_grad is skipped only under compile (documented): eager keeps it for parity."""
    model = CausalLM(config())
    model.train()
    call(model, IDS, False).sum().backward()
    assert model.decoder_input.grad is not None
