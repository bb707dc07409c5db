"""`npformer gradcheck`: finite-difference check (float64, random upstream gradient) of every layer
and model on tiny configurations, printed as a table; exit status 1 when any check fails."""
from __future__ import annotations

import time

import numpy as np

from npformer.cli.errors import CliError
from npformer.training.blas import set_blas_threads

__all__ = ["gradcheck_suite", "cmd_gradcheck"]


def gradcheck_suite(seed: int = 0):
    """[(name, thunk)]: each thunk runs one gradient check and returns a GradcheckReport.

    Tiny float64 configurations; every component, every model, the masks that matter.
    """
    from npformer.checks.gradcheck import check_pair, gradcheck
    from npformer.layers.activations import Activation
    from npformer.layers.attention import (
        MultiHeadAttention,
        sdpa_backward,
        sdpa_forward,
    )
    from npformer.layers.dropout import Dropout
    from npformer.layers.embedding import Embedding
    from npformer.layers.feedforward import PositionwiseFeedForward
    from npformer.layers.layernorm import (
        LayerNorm,
        layernorm_backward,
        layernorm_forward,
    )
    from npformer.layers.linear import Linear
    from npformer.layers.loss import CrossEntropyLoss
    from npformer.layers.masks import causal_mask, padding_mask
    from npformer.layers.positional import (
        LearnedPositionalEncoding,
        SinusoidalPositionalEncoding,
    )
    from npformer.layers.softmax import (
        log_softmax_backward,
        log_softmax_forward,
        softmax_backward,
        softmax_forward,
    )
    from npformer.models.causal_lm import CausalLM
    from npformer.models.classifier import EncoderClassifier
    from npformer.models.config import TransformerConfig
    from npformer.models.decoder import Decoder, DecoderLayer
    from npformer.models.encoder import Encoder, EncoderLayer
    from npformer.models.transformer import Transformer

    f64 = "float64"
    rng = np.random.default_rng(seed)
    B, S, T, D, H = 2, 5, 4, 8, 2

    def x(*shape):
        return rng.standard_normal(shape)

    cfg = TransformerConfig(d_model=D, num_heads=H, d_ff=12, num_encoder_layers=2,
                            num_decoder_layers=2, max_len=8, vocab_size=11, dtype=f64, dropout=0.2,
                            attention_dropout=0.1, activation_dropout=0.1)
    src = np.array([[3, 4, 5, 6, 2], [7, 8, 2, 0, 0]])                     # padded row
    tgt = np.array([[1, 5, 4, 3], [1, 9, 0, 0]])
    src_mask = padding_mask(src, 0)                                        # (B, 1, 1, S)
    tgt_mask = causal_mask(T) & padding_mask(tgt, 0)                       # (B, 1, T, T)
    empty_row = np.ones((B, 1, T, S), dtype=bool)
    empty_row[1, :, 2, :] = False                                          # a fully masked query

    def mod(m, *inputs, **kw):
        return lambda **o: gradcheck(m, *inputs, seed=seed, **o, **kw)

    def pair(fwd, bwd, inputs, **kw):
        return lambda **o: check_pair(fwd, bwd, inputs, seed=seed, **o, **kw)

    post, pre = cfg, cfg.replace(norm_first=True, final_norm=True, activation="gelu")
    suite = [
        ("Linear", mod(Linear(D, 6, dtype=f64, rng=rng), x(B, T, D))),
        ("Embedding (scaled, padding_idx)", mod(Embedding(11, D, padding_idx=0, scale=D ** 0.5,
                                                          dtype=f64, rng=rng), src)),
        ("SinusoidalPositionalEncoding", mod(SinusoidalPositionalEncoding(D, 8, f64), x(B, T, D))),
        ("LearnedPositionalEncoding", mod(LearnedPositionalEncoding(D, 8, f64, rng=rng),
                                          x(B, T, D))),
        ("Dropout (p=0.3, mask replayed)", mod(Dropout(0.3, rng=np.random.default_rng(seed)),
                                               x(B, T, D))),
        ("Activation relu", mod(Activation("relu"), x(B, T, D))),
        ("Activation gelu", mod(Activation("gelu"), x(B, T, D))),
        ("Activation gelu_tanh", mod(Activation("gelu_tanh"), x(B, T, D))),
        ("LayerNorm", mod(LayerNorm(D, dtype=f64), x(B, T, D))),
        ("layernorm pair", pair(layernorm_forward, layernorm_backward,
                                [x(B, T, D), 1 + 0.1 * x(D), 0.1 * x(D)])),
        ("softmax pair", pair(softmax_forward, softmax_backward, [x(B, T, S)])),
        ("log_softmax pair", pair(log_softmax_forward, log_softmax_backward, [x(B, T, S)])),
        ("sdpa pair (padding, fully masked row)",
         pair(sdpa_forward, sdpa_backward, [x(B, H, T, 4), x(B, H, S, 4), x(B, H, S, 4),
                                            empty_row & src_mask], output_index=0)),
        ("MultiHeadAttention self (causal+padding)",
         mod(MultiHeadAttention(D, H, dtype=f64, rng=rng), *(lambda q: (q, q, q))(x(B, T, D)),
             mask=tgt_mask)),
        ("MultiHeadAttention cross (Tq != Tk)",
         mod(MultiHeadAttention(D, H, dtype=f64, rng=rng), x(B, T, D), x(B, S, D), x(B, S, D),
             mask=src_mask)),
        ("PositionwiseFeedForward (gelu)",
         mod(PositionwiseFeedForward(D, 12, "gelu", dtype=f64, rng=rng), x(B, T, D))),
        ("EncoderLayer post-norm", mod(EncoderLayer(post, rng=rng), x(B, S, D), mask=src_mask)),
        ("EncoderLayer pre-norm", mod(EncoderLayer(pre, rng=rng), x(B, S, D), mask=src_mask)),
        ("DecoderLayer post-norm", mod(DecoderLayer(post, rng=rng), x(B, T, D), x(B, S, D),
                                       self_mask=tgt_mask, memory_mask=src_mask)),
        ("DecoderLayer pre-norm", mod(DecoderLayer(pre, rng=rng), x(B, T, D), x(B, S, D),
                                      self_mask=tgt_mask, memory_mask=src_mask)),
        ("Encoder (2 layers)", mod(Encoder(post, rng=rng), x(B, S, D), mask=src_mask)),
        ("Decoder (2 layers, final norm)", mod(Decoder(pre, rng=rng), x(B, T, D), x(B, S, D),
                                               self_mask=tgt_mask, memory_mask=src_mask)),
        ("Transformer", mod(Transformer(post, seed=seed), src, tgt)),
        ("Transformer (pre-norm, tied, learned pos)",
         mod(Transformer(pre.replace(tie_embeddings=True, share_embeddings=True,
                                     positional="learned"), seed=seed), src, tgt)),
        ("EncoderClassifier (mean pooling)",
         mod(EncoderClassifier(post.replace(pooling="mean", num_classes=3), seed=seed), src)),
        ("CausalLM (GPT-2 style)",
         mod(CausalLM(pre.replace(activation="gelu_tanh", positional="learned",
                                  scale_embeddings=False, tie_embeddings=True), seed=seed), tgt)),
        ("CrossEntropyLoss (ignore_index, smoothing)",
         mod(CrossEntropyLoss(ignore_index=0, label_smoothing=0.1), x(B, T, 11), tgt)),
    ]
    return suite


def cmd_gradcheck(args) -> int:
    set_blas_threads(1)
    suite = gradcheck_suite(args.seed)
    if args.only is not None and not args.only.strip():
        raise CliError(f"--only {args.only!r}: expected part of a check's name, got an empty name")
    if args.only:
        suite = [(n, f) for n, f in suite if args.only.lower() in n.lower()]
        if not suite:
            raise CliError(f"--only {args.only!r}: matches no check")
    width = max(len(n) for n, _ in suite)
    print(f"npformer gradcheck: float64 central differences (eps 1e-5), random upstream gradient, "
          f"tol {args.tol:g}, <= {args.max_per_tensor} entries per tensor")
    print(f"{'component':<{width}}  {'tensors':>7}  {'entries':>7}  {'max rel err':>11}  "
          f"{'worst tensor':<32} result")
    failed = 0
    t0 = time.perf_counter()
    for name, run in suite:
        try:
            rep = run(tol=args.tol, max_per_tensor=args.max_per_tensor)
        except Exception as e:  # noqa: BLE001 - a crashing check is a failed check, reported
            failed += 1
            print(f"{name:<{width}}  {'-':>7}  {'-':>7}  {'-':>11}  {'-':<32} ERROR {e}")
            continue
        worst = max(rep.errors, key=rep.errors.get) if rep.errors else "-"
        entries = sum(d.checked for d in rep.details.values())
        ok = rep.passed
        failed += not ok
        print(f"{name:<{width}}  {len(rep.errors):>7}  {entries:>7}  {rep.max_error:11.2e}  "
              f"{worst[:32]:<32} {'ok' if ok else 'FAIL'}")
        if args.verbose or not ok:
            print("    " + str(rep).replace("\n", "\n    "))
    print(f"{len(suite) - failed}/{len(suite)} checks passed in {time.perf_counter() - t0:.1f} s")
    return 1 if failed else 0
