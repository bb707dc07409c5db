"""Greedy decoding and beam search (npformer.decoding: generate, beam) and their twins in torchformer.decoding.

References here are built independently of the decoding loop: full (uncached) model forwards, one
row at a time, and exhaustive enumeration of every hypothesis for beam search.
"""
import itertools

import numpy as np
import pytest

from npformer.data.vocab import BOS, EOS, PAD
from npformer.decoding.beam import beam_search
from npformer.decoding.generate import greedy_decode, length_penalty
from npformer.models.causal_lm import CausalLM
from npformer.models.config import TransformerConfig
from npformer.models.transformer import Transformer

SRC = np.array([[3, 4, 5, 6, 2, 0],
                [7, 8, 2, 0, 0, 0],
                [5, 5, 3, 9, 8, 2]])                      # EOS-terminated, PAD-padded sources
PROMPTS = np.array([[3, 4, 5, 0],
                    [7, 0, 0, 0],
                    [6, 8, 3, 9]])                        # right-padded prompts of lengths 3, 1, 4


def _config(**kw):
    base = dict(d_model=16, num_heads=2, d_ff=24, num_encoder_layers=2, num_decoder_layers=2,
                max_len=10, vocab_size=10, dtype="float64", dropout=0.1)
    base.update(kw)
    return TransformerConfig(**base)


def _sharpen(model, eos_bias=-1.5):
    """Make an untrained model's next-token distributions peaked and EOS less likely, so decoding
    produces varied sequences of several tokens (a flat model would emit EOS at once)."""
    model.output_proj.weight.data *= 6.0
    model.output_proj.bias.data[:] = np.random.default_rng(3).normal(0, 1.0, size=model.output_proj.bias.data.shape)
    model.output_proj.bias.data[EOS] = eos_bias
    return model


@pytest.fixture(scope="module")
def seq2seq():
    return _sharpen(Transformer(_config(), seed=1))


@pytest.fixture(scope="module")
def lm():
    return _sharpen(CausalLM(_config(num_encoder_layers=0), seed=2), eos_bias=-0.5)


def _log_softmax(x):
    m = x.max(axis=-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=-1, keepdims=True))


def _reference_greedy(model, src_row, n):
    """One source, uncached: full forward on the growing prefix, argmax of the last position with
    PAD and BOS excluded; stops after EOS."""
    model.eval()
    tgt = [BOS]
    toks, logits = [], []
    for _ in range(n):
        out = model(src_row[None], np.array([tgt]))[0, -1]         # (V,) full forward
        allowed = out.copy()
        allowed[[PAD, BOS]] = -np.inf
        t = int(allowed.argmax())
        toks.append(t)
        logits.append(out)
        tgt.append(t)
        if t == EOS:
            break
    return toks, np.array(logits)


def _strip(row):
    row = list(row)
    return row[: row.index(EOS) + 1] if EOS in row else [t for t in row if t != PAD]


# -- greedy -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("use_cache", [True, False])
def test_greedy_is_argmax_step_by_step(seq2seq, use_cache):
    out = greedy_decode(seq2seq, SRC, max_new_tokens=7, use_cache=use_cache)
    assert out.tokens.shape == (3, 7)
    lengths = []
    for i in range(3):
        src_row = SRC[i][: int((SRC[i] != PAD).sum())]              # unpadded, alone
        toks, logits = _reference_greedy(seq2seq, src_row, 7)
        got = _strip(out.tokens[i])
        assert got == toks, f"row {i}"
        assert int(out.lengths[i]) == len(toks)
        np.testing.assert_allclose(out.logits[i, : len(toks)], logits, rtol=1e-10, atol=1e-12)
        # everything after the row's EOS is PAD
        assert (out.tokens[i, len(toks):] == PAD).all()
        # score = summed log-probabilities of the chosen tokens
        lp = _log_softmax(logits)[np.arange(len(toks)), toks].sum()
        assert out.scores[i] == pytest.approx(lp, rel=1e-10)
        lengths.append(len(toks))
    assert max(lengths) >= 3                                          # not a trivial EOS-only run


def test_greedy_cache_and_no_cache_agree(seq2seq):
    a = greedy_decode(seq2seq, SRC, max_new_tokens=8, use_cache=True)
    b = greedy_decode(seq2seq, SRC, max_new_tokens=8, use_cache=False)
    np.testing.assert_array_equal(a.tokens, b.tokens)
    np.testing.assert_allclose(a.logits, b.logits, rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(a.scores, b.scores, rtol=1e-12)


def test_greedy_float32_keeps_dtype():
    m = _sharpen(Transformer(_config(dtype="float32"), seed=4))
    out = greedy_decode(m, SRC, max_new_tokens=4)
    assert out.logits.dtype == np.float32


def test_causal_lm_prompts_of_different_lengths(lm):
    """Each row of a batch of ragged prompts gets exactly what it gets alone, cached or not."""
    a = greedy_decode(lm, PROMPTS, max_new_tokens=5, use_cache=True)
    b = greedy_decode(lm, PROMPTS, max_new_tokens=5, use_cache=False)
    np.testing.assert_array_equal(a.tokens, b.tokens)
    np.testing.assert_allclose(a.logits, b.logits, rtol=1e-11, atol=1e-12)
    lm.eval()
    for i, n in enumerate([3, 1, 4]):
        seq = list(PROMPTS[i, :n])
        toks = []
        for _ in range(5):
            out = lm(np.array([seq]))[0, -1]
            out[PAD] = -np.inf
            t = int(out.argmax())
            toks.append(t)
            seq.append(t)
            if t == EOS:
                break
        assert _strip(a.tokens[i]) == toks, f"row {i}"
    assert max(len(_strip(r)) for r in a.tokens) >= 3


def test_eos_none_generates_the_full_budget(seq2seq):
    out = greedy_decode(seq2seq, SRC, max_new_tokens=6, eos_id=None, suppress_ids=(PAD, BOS, EOS))
    assert (out.lengths == 6).all() and (out.tokens != EOS).all() and (out.tokens != PAD).all()


# -- beam search ------------------------------------------------------------------------------------
@pytest.mark.parametrize("use_cache", [True, False])
def test_beam_size_one_is_greedy(seq2seq, lm, use_cache):
    g = greedy_decode(seq2seq, SRC, max_new_tokens=7, use_cache=use_cache)
    b = beam_search(seq2seq, SRC, beam_size=1, length_penalty_alpha=0.0, max_new_tokens=7,
                    use_cache=use_cache)
    np.testing.assert_array_equal(b.tokens, g.tokens)
    np.testing.assert_allclose(b.scores, g.scores, rtol=1e-12)
    np.testing.assert_array_equal(b.lengths, g.lengths)
    g = greedy_decode(lm, PROMPTS, max_new_tokens=5, use_cache=use_cache)
    b = beam_search(lm, PROMPTS, beam_size=1, length_penalty_alpha=0.0, max_new_tokens=5,
                    use_cache=use_cache)
    np.testing.assert_array_equal(b.tokens, g.tokens)


def test_beam_cache_and_no_cache_agree(seq2seq, lm):
    for model, inputs in ((seq2seq, SRC), (lm, PROMPTS)):
        a = beam_search(model, inputs, beam_size=3, max_new_tokens=5, use_cache=True)
        b = beam_search(model, inputs, beam_size=3, max_new_tokens=5, use_cache=False)
        np.testing.assert_array_equal(a.beams, b.beams)
        np.testing.assert_allclose(a.beam_scores, b.beam_scores, rtol=1e-11)


def _all_hypotheses(model, src_row, symbols, n, alpha):
    """Every hypothesis of up to n generated tokens: EOS-terminated ones (length = tokens incl. EOS)
    and, when the budget runs out, n symbols without EOS (scored with lp(n)); normalised scores from
    a full uncached forward."""
    model.eval()
    hyps = []
    for L in range(1, n + 1):
        for body in itertools.product(symbols, repeat=L - 1):
            hyps.append(list(body) + [EOS])
    hyps += [list(b) for b in itertools.product(symbols, repeat=n)]
    out = {}
    for h in hyps:
        tgt = np.array([[BOS] + h[:-1]])
        lp = _log_softmax(model(src_row[None], tgt)[0])                # (len, V)
        raw = lp[np.arange(len(h)), h].sum()
        out[tuple(h)] = raw / length_penalty(len(h), alpha)
    return out


@pytest.mark.parametrize("alpha", [0.0, 0.6, 1.5])
def test_beam_search_finds_the_exhaustive_best(alpha):
    """With a beam wide enough to hold every candidate, beam search must return exactly the best
    hypotheses of an exhaustive enumeration, in order, with their normalised scores."""
    cfg = _config(vocab_size=6, max_len=6)                 # symbols 3, 4, 5
    model = _sharpen(Transformer(cfg, seed=5), eos_bias=0.0)
    src = np.array([[3, 5, 4, 2], [4, 4, 2, 0]])
    n, K = 3, 36                                            # 36 >= candidates at any step (9 * 4)
    out = beam_search(model, src, beam_size=K, length_penalty_alpha=alpha, max_new_tokens=n)
    for i in range(2):
        row = src[i][: int((src[i] != PAD).sum())]
        ref = _all_hypotheses(model, row, [3, 4, 5], n, alpha)
        best = sorted(ref.items(), key=lambda kv: -kv[1])[:K]
        got = [(tuple(_strip(h)), s) for h, s in zip(out.beams[i], out.beam_scores[i])]
        assert [g[0] for g in got] == [b[0] for b in best]
        np.testing.assert_allclose([g[1] for g in got], [b[1] for b in best], rtol=1e-10)
        assert tuple(_strip(out.tokens[i])) == best[0][0]
        assert int(out.lengths[i]) == len(best[0][0])


def test_beam_keeps_finished_hypotheses_and_ranks_them(seq2seq):
    out = beam_search(seq2seq, SRC, beam_size=4, length_penalty_alpha=0.6, max_new_tokens=7)
    assert out.beams.shape == (3, 4, 7)
    assert (np.diff(out.beam_scores, axis=1) <= 1e-12).all()          # best first
    for i in range(3):
        for k in range(4):
            h = _strip(out.beams[i, k])
            assert len(h) == out.beam_lengths[i, k]
            assert EOS not in h[:-1]                                    # EOS only at the end
    # a wider beam never finds a worse best hypothesis than greedy under the same scoring
    g = greedy_decode(seq2seq, SRC, max_new_tokens=7)
    greedy_norm = g.scores / length_penalty(g.lengths, 0.6)
    assert (out.scores >= greedy_norm - 1e-12).all()


@pytest.mark.parametrize("alpha", [0.0, 0.6, 1.0, 3.0])
def test_early_stopping_never_changes_the_result(alpha):
    """The stopping bound is exact: stopping early gives what running to the budget gives. (A model
    that likes EOS fills the store early; a large alpha then lets longer hypotheses win later.)"""
    model = _sharpen(Transformer(_config(), seed=1), eos_bias=2.0)
    a = beam_search(model, SRC, beam_size=2, length_penalty_alpha=alpha, max_new_tokens=9)
    b = beam_search(model, SRC, beam_size=2, length_penalty_alpha=alpha, max_new_tokens=9,
                    early_stopping=False)
    np.testing.assert_array_equal(a.beams, b.beams)
    np.testing.assert_allclose(a.beam_scores, b.beam_scores, rtol=1e-12)


def test_batched_beam_equals_one_row_at_a_time(seq2seq):
    out = beam_search(seq2seq, SRC, beam_size=3, max_new_tokens=6)
    for i in range(3):
        row = SRC[i: i + 1, : int((SRC[i] != PAD).sum())]
        one = beam_search(seq2seq, row, beam_size=3, max_new_tokens=6)
        np.testing.assert_array_equal(one.beams[0], out.beams[i])
        np.testing.assert_allclose(one.beam_scores[0], out.beam_scores[i], rtol=1e-10)


# -- errors ------------------------------------------------------------------------------------------
def test_bad_arguments(seq2seq, lm):
    with pytest.raises(ValueError, match="max_new_tokens"):
        greedy_decode(seq2seq, SRC, max_new_tokens=11)              # max_len=10 allows 10
    with pytest.raises(ValueError, match="max_new_tokens"):
        greedy_decode(lm, PROMPTS, max_new_tokens=8)                # prompt 4 + 8 - 1 > 10
    with pytest.raises(ValueError, match="beam_size"):
        beam_search(seq2seq, SRC, beam_size=0)
    with pytest.raises(ValueError, match="length_penalty_alpha"):
        beam_search(seq2seq, SRC, length_penalty_alpha=-1.0)
    with pytest.raises(ValueError, match="src"):
        greedy_decode(seq2seq, np.array([[3, 40]]))
    with pytest.raises(ValueError, match="prompt_lengths"):
        greedy_decode(lm, PROMPTS, prompt_lengths=[3, 0, 4])
    with pytest.raises(ValueError, match="suppress_ids"):
        greedy_decode(seq2seq, SRC, suppress_ids=[99])
    with pytest.raises(TypeError, match="use_cache"):
        greedy_decode(seq2seq, SRC, use_cache="yes")


def test_decoding_restores_training_mode(seq2seq):
    seq2seq.train()
    greedy_decode(seq2seq, SRC, max_new_tokens=2)
    assert seq2seq.training
    seq2seq.eval()


# -- the torch twin ----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def twins(seq2seq, lm):
    torch = pytest.importorskip("torch")
    from torchformer.models.bridge import to_torch
    return torch, to_torch(seq2seq), to_torch(lm)


def test_torch_twin_cache_and_no_cache_agree(twins):
    import torchformer.decoding as tg
    torch, t_s2s, t_lm = twins
    for model, inputs, n in ((t_s2s, SRC, 8), (t_lm, PROMPTS, 5)):
        a = tg.greedy_decode(model, inputs, max_new_tokens=n, use_cache=True)
        b = tg.greedy_decode(model, inputs, max_new_tokens=n, use_cache=False)
        assert torch.equal(a.tokens, b.tokens)
        torch.testing.assert_close(a.logits, b.logits, rtol=1e-11, atol=1e-12)
        a = tg.beam_search(model, inputs, beam_size=3, max_new_tokens=n, use_cache=True)
        b = tg.beam_search(model, inputs, beam_size=3, max_new_tokens=n, use_cache=False)
        assert torch.equal(a.beams, b.beams)
        torch.testing.assert_close(a.beam_scores, b.beam_scores, rtol=1e-11, atol=1e-12)


def test_torch_twin_decodes_like_npformer(twins, seq2seq, lm):
    """Same weights (float64): the two twins' decoders pick the same tokens with the same logits,
    greedy and beam (length penalty, EOS handling, ragged prompts included)."""
    import torchformer.decoding as tg
    torch, t_s2s, t_lm = twins
    for np_model, t_model, inputs, n in ((seq2seq, t_s2s, SRC, 8), (lm, t_lm, PROMPTS, 5)):
        a = greedy_decode(np_model, inputs, max_new_tokens=n)
        b = tg.greedy_decode(t_model, inputs, max_new_tokens=n)
        np.testing.assert_array_equal(b.tokens.numpy(), a.tokens)
        np.testing.assert_allclose(b.logits.numpy(), a.logits, rtol=1e-10, atol=1e-12)
        np.testing.assert_array_equal(b.lengths.numpy(), a.lengths)
        a = beam_search(np_model, inputs, beam_size=3, max_new_tokens=n, length_penalty_alpha=0.8)
        b = tg.beam_search(t_model, inputs, beam_size=3, max_new_tokens=n, length_penalty_alpha=0.8)
        np.testing.assert_array_equal(b.beams.numpy(), a.beams)
        np.testing.assert_array_equal(b.beam_lengths.numpy(), a.beam_lengths)
        np.testing.assert_allclose(b.beam_scores.numpy(), a.beam_scores, rtol=1e-10)


def test_torch_twin_beam_size_one_is_greedy(twins):
    import torchformer.decoding as tg
    torch, t_s2s, _ = twins
    g = tg.greedy_decode(t_s2s, SRC, max_new_tokens=7)
    b = tg.beam_search(t_s2s, SRC, beam_size=1, length_penalty_alpha=0.0, max_new_tokens=7)
    assert torch.equal(b.tokens, g.tokens)
    torch.testing.assert_close(b.scores, g.scores, rtol=1e-12, atol=0.0)


def test_wide_padded_prompts_with_a_short_budget(lm, twins):
    """Trailing PAD columns reaching past longest prompt + max_new_tokens are ignored (both twins),
    greedy and beam; the result equals that of the prompts without those columns."""
    import torchformer.decoding as tg
    _, _, t_lm = twins
    narrow = PROMPTS[:, :4]                                      # longest prompt: 4 tokens
    wide = np.concatenate([narrow, np.full((3, 5), PAD)], axis=1)  # 9 columns, 5 of them PAD
    ref = greedy_decode(lm, narrow, max_new_tokens=1)
    for decode in (greedy_decode, tg.greedy_decode):
        got = decode(lm if decode is greedy_decode else t_lm, wide, max_new_tokens=1)
        np.testing.assert_array_equal(np.asarray(got.tokens), ref.tokens)
    ref = beam_search(lm, narrow, beam_size=2, max_new_tokens=2)
    for search, model in ((beam_search, lm), (tg.beam_search, t_lm)):
        got = search(model, wide, beam_size=2, max_new_tokens=2)
        np.testing.assert_array_equal(np.asarray(got.beams), ref.beams)
