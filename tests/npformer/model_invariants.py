"""Properties every correct Transformer obeys, written once and run on both twins.

No reference implementation is needed: each property compares a model with itself (a later token
changed, a row run alone, another row changed). The same functions run on npformer (plain and with
npformer.fast's methods bound) and on torchformer (explicit attention and SDPA) through a small
adapter, `Twin`, that builds models through the public API and returns NumPy arrays:

    causality          in CausalLM and the Transformer's decoder, tokens after position t change no
                       logit, attention weight, first-layer input gradient or parameter gradient
                       of positions <= t (the loss of positions <= t), eval or train mode
    padding            a right-padded row's real positions equal the row run alone, unpadded, for
                       every model family; the loss ignoring pad_id gives the token-weighted mean
                       of the rows' own losses and the matching parameter gradients
    batch independence row i's outputs and input gradient do not depend on the other rows' tokens,
                       also in training mode with dropout (masks come from the model's generator,
                       drawn per call for the whole batch: the same seed gives the same masks)

Tolerances. Where both runs have the same shapes (causality, batch independence) the results are
compared **bit for bit**: the changed entries are multiplied by exact zeros (masked attention
weights, zero upstream gradients), and the same shapes run the same kernels in the same order. A
row run alone has other shapes than the batch, so BLAS may block its sums differently: those
compare in float64 with rtol 1e-9 and atol 1e-9 * max|ref| (the rounding of a few hundred float64
operations is ~1e-13 relative; a masking or pooling bug moves results by 1e-2 or more).
"""
from __future__ import annotations

import numpy as np
from hypothesis import settings
from hypothesis import strategies as st

from npformer.models.config import TransformerConfig
from tests.npformer.data.tokenizers.text_strategies import PROFILE

# whole models per example: a small budget (the parity suite's ci profile gives 20 to a layer)
EXAMPLES = {"dev": 8, "ci": 20, "thorough": 200}.get(PROFILE, 6)
ALONE_RTOL = 1e-9


def model_settings(n: int = EXAMPLES):
    return settings(max_examples=n, deadline=None, derandomize=PROFILE == "ci", print_blob=True)


@st.composite
def configs(draw, dropout: bool = True, **fixed) -> TransformerConfig:
    """A small float64 config: every layout switch drawn (norm placement, activation, positions,
    scaling, tying, source/target sharing, biases, final norm), 1-2 layers, 1-2 heads; dropout at
    every site when drawn."""
    heads = draw(st.sampled_from([1, 2]))
    rate = draw(st.sampled_from([0.0, 0.3])) if dropout else 0.0
    base = dict(
        d_model=heads * draw(st.sampled_from([2, 4])), num_heads=heads,
        d_ff=draw(st.sampled_from([4, 8])),
        num_encoder_layers=draw(st.integers(1, 2)), num_decoder_layers=draw(st.integers(1, 2)),
        max_len=12, vocab_size=draw(st.integers(6, 10)), pad_id=draw(st.sampled_from([0, 1])),
        num_classes=3, activation=draw(st.sampled_from(["relu", "gelu", "gelu_tanh"])),
        norm_first=draw(st.booleans()), positional=draw(st.sampled_from(["sinusoidal", "learned"])),
        scale_embeddings=draw(st.booleans()), tie_embeddings=draw(st.booleans()),
        share_embeddings=draw(st.booleans()), output_bias=draw(st.booleans()),
        bias=draw(st.booleans()), pooling=draw(st.sampled_from(["first", "mean"])),
        dropout=rate, attention_dropout=rate, activation_dropout=rate, dtype="float64")
    base["final_norm"] = base["norm_first"] and draw(st.booleans())
    base.update(fixed)
    return TransformerConfig(**base)


def draw_ids(draw, config, rows: int, length: int, pads: bool = True) -> np.ndarray:
    """(rows, length) token ids; pad_id among them only when `pads`."""
    ids = np.array(draw(st.lists(st.lists(st.integers(0, config.vocab_size - 1), min_size=length,
                                          max_size=length), min_size=rows, max_size=rows)))
    if not pads and config.pad_id is not None:
        ids[ids == config.pad_id] = config.pad_id + 2
    return ids.reshape(rows, length)


def draw_lengths(draw, rows: int, width: int) -> list[int]:
    lengths = draw(st.lists(st.integers(1, width), min_size=rows, max_size=rows))
    lengths[draw(st.integers(0, rows - 1))] = width                  # one row fills the batch
    return lengths


def right_pad(ids: np.ndarray, lengths, pad_id: int) -> np.ndarray:
    out = ids.copy()
    out[np.arange(ids.shape[1])[None, :] >= np.asarray(lengths)[:, None]] = pad_id
    return out


def assert_alone_close(name: str, got: np.ndarray, ref: np.ndarray) -> None:
    """A row run alone vs the same row inside a batch (other shapes: see the module's docstring)."""
    scale = max(1.0, float(np.abs(ref).max(initial=0.0)))
    np.testing.assert_allclose(got, ref, rtol=ALONE_RTOL, atol=ALONE_RTOL * scale, err_msg=name)


def assert_same(name: str, got: np.ndarray, ref: np.ndarray) -> None:
    np.testing.assert_array_equal(got, ref, err_msg=name)


class Run:
    """One forward (and optionally one backward) of a fresh model: outputs, attention weights,
    input gradients and parameter gradients, all as NumPy arrays."""

    def __init__(self, outputs, weights, input_grads=None, param_grads=None):
        self.outputs, self.weights = outputs, weights
        self.input_grads, self.param_grads = input_grads or {}, param_grads or {}


class Twin:
    """The numpy adapter; torchformer's subclasses it (tests/torchformer/models/invariant_twin.py).
    `fast`: bind npformer.fast's methods (accelerate) to every model built."""

    name = "numpy"

    def __init__(self, fast: bool = False):
        self.fast = fast
        import npformer
        self.api = npformer

    def __repr__(self) -> str:
        return f"{self.name}{'-fast' if self.fast else ''}"

    def build(self, cls: str, config, seed: int, train: bool):
        m = getattr(self.api, cls)(config, seed=seed)
        m.train(train)
        if self.fast:
            from npformer.fast.accelerate import accelerate
            accelerate(m, threads=1)
        return m

    def to_np(self, x):
        return None if x is None else np.asarray(x)

    def weights(self, model) -> dict[str, np.ndarray]:
        return {n: np.array(m.attn_weights) for n, m in model.named_modules()
                if getattr(m, "attn_weights", None) is not None}

    def params(self, model):
        return list(model.named_parameters())

    def backward(self, model, raw, upstream: np.ndarray, inputs: tuple[str, ...]) -> dict:
        grads = model.backward(upstream)
        return {k: np.array(grads[k]) for k in inputs}

    def param_grads(self, model) -> dict[str, np.ndarray]:
        return {n: np.array(p.grad) for n, p in model.named_parameters()}

    def as_targets(self, ids: np.ndarray):
        return ids

    def loss(self, **kw):
        loss_fn = self.api.CrossEntropyLoss(**kw)
        if self.fast:
            from npformer.fast.accelerate import accelerate
            accelerate(loss_fn, threads=1)
        return loss_fn

    def loss_backward(self, model, loss, loss_fn, logits) -> float:
        model.zero_grad()
        model.backward(loss_fn.backward())
        return float(loss)

    def run(self, cls: str, config, *args, seed: int = 0, train: bool = False, upstream=None,
            inputs: tuple[str, ...] = (), pick=None, **kw) -> Run:
        """Build `cls` fresh (seed), call it on args/kw, and with `upstream` run backward from
        `pick(raw output)` (default the output itself; BERT's hidden states of its pair)."""
        m = self.build(cls, config, seed, train)
        raw = m(*args, **kw)
        outs = tuple(self.to_np(o) for o in raw) if isinstance(raw, tuple) else (self.to_np(raw),)
        run = Run(outs, self.weights(m))
        if upstream is not None:
            target = pick(raw) if pick else raw[0] if isinstance(raw, tuple) else raw
            run.input_grads = self.backward(m, target, upstream.astype(outs[0].dtype), inputs)
            run.param_grads = self.param_grads(m)
        return run


# -- causality -------------------------------------------------------------------------------------
def check_causality(twin: Twin, cls: str, config, prefix_ids, tail_a, tail_b, t: int, train: bool,
                    src=None, seed: int = 0) -> None:
    """Two runs whose ids agree on positions <= t; the upstream gradient is random on positions
    <= t and zero after. Every output of positions <= t must agree bit for bit, attention of those
    queries must give later keys exactly zero weight, and the first layer's input gradient must be
    zero after t (and equal before)."""
    ids_a = np.concatenate([prefix_ids, tail_a], axis=1)
    ids_b = np.concatenate([prefix_ids, tail_b], axis=1)
    B, T = ids_a.shape
    V = config.vocab_size
    g = np.random.default_rng(seed).standard_normal((B, T, V))
    g[:, t + 1:] = 0.0
    inputs = ("decoder_input",) if cls == "CausalLM" else ("decoder_input", "encoder_input")
    args = ((ids_a,), (ids_b,)) if src is None else ((src, ids_a), (src, ids_b))
    a, b = (twin.run(cls, config, *x, seed=seed, train=train, upstream=g, inputs=inputs)
            for x in args)
    assert_same("logits of positions <= t", a.outputs[0][:, :t + 1], b.outputs[0][:, :t + 1])
    assert a.outputs[0].shape == (B, T, V)
    for name, w in a.weights.items():
        assert_same(f"{name} weights of queries <= t", w[:, :, :t + 1], b.weights[name][:, :, :t + 1])
        if "self_attn" in name and "encoder" not in name:
            assert not w[:, :, :t + 1, t + 1:].any(), f"{name}: a query <= t attends to a later key"
    da, db = a.input_grads["decoder_input"], b.input_grads["decoder_input"]
    assert not da[:, t + 1:].any(), "the loss of positions <= t has a gradient at a later input"
    assert_same("decoder input gradient", da, db)
    if "encoder_input" in inputs:
        assert_same("encoder input gradient", a.input_grads["encoder_input"],
                    b.input_grads["encoder_input"])
    for name, ga in a.param_grads.items():
        assert_same(f"gradient of {name}", ga, b.param_grads[name])


# -- padding: a row inside a padded batch equals the row alone ------------------------------------
def check_padded_rows_equal_rows_alone(twin: Twin, cls: str, config, ids, lengths, src=None,
                                       src_lengths=None, seed: int = 0, **keep_kw) -> None:
    """Eval mode. Real positions of row i (and pooled / classifier outputs) equal the row run
    alone without its padding. `src`/`src_lengths` for the Transformer (ids are then the target).
    `keep_kw` (key keep-masks, BERT's attention_mask) go to the batch's call only: then the
    padded positions may hold any token, not only pad_id."""
    batch = twin.run(cls, config, *(() if src is None else (src,)), ids, seed=seed, **keep_kw)
    for i, n in enumerate(lengths):
        alone_args = (ids[i:i + 1, :n],)
        if src is not None:
            alone_args = (src[i:i + 1, :src_lengths[i]],) + alone_args
        alone = twin.run(cls, config, *alone_args, seed=seed)
        for k, (got, ref) in enumerate(zip(batch.outputs, alone.outputs)):
            if got is None:
                continue
            row = got[i:i + 1]
            if row.ndim == 3:                                          # per position: real ones
                row = row[:, :n]
            assert_alone_close(f"{cls} output {k}, row {i} (length {n}) vs alone", row, ref)


def check_loss_ignoring_padding(twin: Twin, cls: str, config, ids, lengths, targets, src=None,
                                src_lengths=None, seed: int = 0, label_smoothing: float = 0.0) -> None:
    """CrossEntropyLoss(ignore_index=pad_id, label_smoothing) on a right-padded batch is the
    token-weighted mean of each row's loss alone, and its parameter gradients the same weighted sum
    of the rows' own (ignored targets count in neither, smoothed or not)."""
    loss_fn = twin.loss(ignore_index=config.pad_id, label_smoothing=label_smoothing)
    counts = np.asarray(lengths, dtype=np.float64)

    def loss_and_grads(x_src, x_ids, tgt):
        m = twin.build(cls, config, seed, train=False)
        logits = m(*(() if x_src is None else (x_src,)), x_ids)
        loss = loss_fn(logits, twin.as_targets(tgt))
        return twin.loss_backward(m, loss, loss_fn, logits), twin.param_grads(m)

    batch_loss, batch_grads = loss_and_grads(src, ids, targets)
    total, summed = 0.0, {k: np.zeros_like(v) for k, v in batch_grads.items()}
    for i, n in enumerate(lengths):
        row_src = None if src is None else src[i:i + 1, :src_lengths[i]]
        row_loss, row_grads = loss_and_grads(row_src, ids[i:i + 1, :n], targets[i:i + 1, :n])
        total += counts[i] * row_loss
        for k, v in row_grads.items():
            summed[k] += counts[i] / counts.sum() * v
    assert_alone_close("padded batch loss vs token-weighted row losses", np.array(batch_loss),
                       np.array(total / counts.sum()))
    for k, v in batch_grads.items():
        assert_alone_close(f"gradient of {k}: padded batch vs weighted rows", v, summed[k])


# -- batch independence ----------------------------------------------------------------------------
def check_batch_independence(twin: Twin, cls: str, config, args_a: tuple, args_b: tuple, row: int,
                             train: bool, seed: int = 0, inputs: tuple[str, ...] = ()) -> None:
    """args_a and args_b (the model's id arrays) agree on row `row` only; same shapes, same seed
    (train mode draws the same dropout masks). Row `row` of every output, attention weight and
    input gradient agrees bit for bit (the upstream gradient is the same random array)."""
    probe = twin.run(cls, config, *args_a, seed=seed)
    g = np.random.default_rng(seed + 1).standard_normal(probe.outputs[0].shape)
    a, b = (twin.run(cls, config, *x, seed=seed, train=train, upstream=g if inputs else None,
                     inputs=inputs) for x in (args_a, args_b))
    for k, (oa, ob) in enumerate(zip(a.outputs, b.outputs)):
        if oa is not None:
            assert_same(f"{cls} output {k} of row {row}", oa[row], ob[row])
    for name, w in a.weights.items():
        assert_same(f"{name} weights of row {row}", w[row], b.weights[name][row])
    for name, da in a.input_grads.items():
        assert_same(f"{name} gradient of row {row}", da[row], b.input_grads[name][row])
