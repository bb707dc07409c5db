"""The FLOP formula of benchmarks/flops.py against torch.utils.flop_counter.FlopCounterMode.

FlopCounterMode counts what the model actually multiplies (mm, addmm, bmm, SDPA kernels) at run time,
independently of the formula. On torchformer's explicit attention path (`set_need_weights(model,
True)`: matmul, softmax, matmul) every product is an mm/bmm it sees, and the counts must be EXACTLY
the formula's, forward and forward+backward, for several configurations.

Documented exception: on CPU, F.scaled_dot_product_attention dispatches to
`aten._scaled_dot_product_flash_attention_for_cpu`, which torch 2.13's FlopCounterMode has no formula
for (it counts 0). On that path the count must be exactly the formula minus its attention term,
which also checks that the attention (O(n^2)) term is isolated correctly.
"""
import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

from benchmarks import flops as FL  # noqa: E402
from npformer.models.config import TransformerConfig  # noqa: E402

CONFIGS = [
    # (fields, model, batch, src_len, tgt_len)
    (dict(d_model=24, num_heads=3, d_ff=40, num_encoder_layers=2, num_decoder_layers=1,
          vocab_size=50), "seq2seq", 3, 7, 5),
    (dict(d_model=16, num_heads=4, d_ff=8, num_encoder_layers=1, num_decoder_layers=2,
          vocab_size=31, tie_embeddings=True, share_embeddings=True, norm_first=True,
          final_norm=True, activation="gelu"), "seq2seq", 2, 4, 9),
    (dict(d_model=32, num_heads=2, d_ff=64, num_encoder_layers=1, num_decoder_layers=1,
          vocab_size=20, src_vocab_size=17, tgt_vocab_size=23, bias=False, output_bias=False,
          positional="learned"), "seq2seq", 1, 1, 1),
    (dict(d_model=24, num_heads=2, d_ff=48, num_encoder_layers=0, num_decoder_layers=3,
          vocab_size=40, norm_first=True, final_norm=True, activation="gelu_tanh",
          tie_embeddings=True, positional="learned", pad_id=None), "causal", 2, 0, 11),
]
IDS = ["seq2seq-post", "seq2seq-pre-tied", "seq2seq-nobias-len1", "causal-gpt2ish"]


def _model(fields, kind):
    from torchformer.layers.attention import set_need_weights
    cfg = TransformerConfig(max_len=32, dropout=0.1, **fields)
    if kind == "seq2seq":
        from torchformer.models.transformer import Transformer
        m = Transformer(cfg, seed=0)
    else:
        from torchformer.models.causal_lm import CausalLM
        m = CausalLM(cfg, seed=0)
    return cfg, m, set_need_weights


def _ids(B, T, vocab, gen):
    return torch.randint(3, vocab, (B, T), generator=gen)


def _count(m, cfg, kind, B, S, T, backward: bool) -> int:
    gen = torch.Generator().manual_seed(1)
    src = _ids(B, max(S, 1), cfg.src_vocab, gen)
    tgt = _ids(B, T, cfg.tgt_vocab, gen)
    targets = _ids(B, T, cfg.tgt_vocab, gen)
    m.train()
    with FlopCounterMode(display=False) as fc:
        logits = m(src, tgt) if kind == "seq2seq" else m(tgt)
        if backward:
            F.cross_entropy(logits.reshape(-1, cfg.tgt_vocab), targets.reshape(-1)).backward()
    return fc.get_total_flops()


@pytest.mark.parametrize("fields,kind,B,S,T", CONFIGS, ids=IDS)
def test_forward_and_backward_match_flop_counter_exactly(fields, kind, B, S, T):
    cfg, m, set_need_weights = _model(fields, kind)
    set_need_weights(m, True)                                   # explicit attention: plain bmm
    fwd = FL.forward_flops(cfg, kind, B, S, T)
    assert _count(m, cfg, kind, B, S, T, backward=False) == fwd.total
    m.zero_grad()
    assert _count(m, cfg, kind, B, S, T, backward=True) == 3 * fwd.total
    assert FL.step_flops(cfg, kind, "fwd_bwd", B, S, T) == 3 * fwd.total
    assert FL.step_flops(cfg, kind, "train_step", B, S, T) == 3 * fwd.total


@pytest.mark.parametrize("fields,kind,B,S,T", CONFIGS[:2] + CONFIGS[3:],
                         ids=IDS[:2] + IDS[3:])
def test_sdpa_path_misses_exactly_the_attention_term(fields, kind, B, S, T):
    cfg, m, set_need_weights = _model(fields, kind)
    set_need_weights(m, False)                                  # F.scaled_dot_product_attention
    fwd = FL.forward_flops(cfg, kind, B, S, T)
    assert fwd.attention > 0
    assert _count(m, cfg, kind, B, S, T, backward=False) == fwd.total - fwd.attention
    assert _count(m, cfg, kind, B, S, T, backward=True) == 3 * (fwd.total - fwd.attention)


@pytest.mark.parametrize("kind", ["seq2seq", "causal"])
@pytest.mark.parametrize("use_cache", [True, False])
def test_generation_flops_match_flop_counter(kind, use_cache):
    from torchformer.decoding.generate import greedy_decode
    fields = dict(d_model=24, num_heads=3, d_ff=40, num_encoder_layers=2, num_decoder_layers=2,
                  vocab_size=50, pad_id=None)
    cfg, m, set_need_weights = _model(fields, kind)
    set_need_weights(m, True)
    B, S, P, N = 3, 7, 4, 6
    gen = torch.Generator().manual_seed(2)
    inputs = _ids(B, S if kind == "seq2seq" else P, 50, gen)
    with FlopCounterMode(display=False) as fc:
        greedy_decode(m, inputs, max_new_tokens=N, use_cache=use_cache, eos_id=None)
    prompt = 1 if kind == "seq2seq" else P
    assert fc.get_total_flops() == FL.generate_flops(cfg, kind, B, S, prompt, N, kv_cache=use_cache)


def test_attention_term_is_quadratic_and_the_rest_linear_in_length():
    cfg = TransformerConfig(d_model=64, num_heads=4, d_ff=256, num_encoder_layers=2,
                            num_decoder_layers=2, vocab_size=100, max_len=512)
    a = FL.forward_flops(cfg, "seq2seq", 2, 50, 50)
    b = FL.forward_flops(cfg, "seq2seq", 2, 100, 100)
    assert b.attention == 4 * a.attention
    assert b.total - b.attention == 2 * (a.total - a.attention)


def test_parameter_count_matches_torchformer():
    for fields, kind, *_ in CONFIGS:
        cfg, m, _ = _model(fields, kind)
        assert FL.parameter_count(cfg, kind) == sum(p.numel() for p in m.parameters())


def test_bad_names_are_rejected():
    cfg = TransformerConfig(d_model=8, num_heads=2, d_ff=8, vocab_size=10)
    with pytest.raises(ValueError, match="model"):
        FL.forward_flops(cfg, "encoder", 1, 1, 1)
    with pytest.raises(ValueError, match="workload"):
        FL.step_flops(cfg, "seq2seq", "backward", 1, 1, 1)
