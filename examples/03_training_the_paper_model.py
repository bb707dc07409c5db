# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 3. Training the paper's model
#
# An encoder-decoder Transformer learns to **reverse** a sequence of symbols, trained end to end in
# NumPy with the paper's recipe (section 5): Adam with $\beta = (0.9, 0.98)$, the warm-up learning
# rate schedule, label smoothing, and teacher forcing. Then we decode with greedy search and beam
# search and read the attention maps: to reverse, the decoder's cross-attention must look at the
# source from the end to the start, an **anti-diagonal**.
#
# `npformer train` runs the same recipe from the command line (a bigger model, longer). Here the
# model is small so that the notebook trains in about a minute on one core.

# %%
import time

import matplotlib.pyplot as plt
import numpy as np

import npformer as nf
from npformer.data.tasks import batch_iterator, iterate_examples, make_task
from npformer.training.blas import set_blas_threads

np.set_printoptions(precision=3, suppress=True)
# matrices this small gain nothing from BLAS threads, and on a busy machine spinning threads cost a lot
set_blas_threads(1)

# %% [markdown]
# ## The task and a batch
#
# Sources are 1 to 8 symbols from an alphabet of 8 letters; the target is the source reversed. The
# vocabulary adds three special tokens: PAD (id 0), BOS (id 1) and EOS (id 2). With teacher forcing
# the decoder reads the target shifted right (`tgt_in`, BOS first) and must predict every next token
# at once (`tgt_out`, EOS last). A tenth of all sequences is held out and never trained on.

# %%
task = make_task("reverse", num_symbols=8, min_len=1, max_len=8, seed=0)
vocab = task.vocab
batch = next(batch_iterator(task, batch_size=4, seed=123))
print("vocabulary:", vocab.symbols, f"({task.vocab_size} ids with PAD, BOS, EOS)")
print("src    ", batch.src[0], " ->", repr(vocab.decode(batch.src[0])))
print("tgt_in ", batch.tgt_in[0], " ->", repr(vocab.decode(batch.tgt_in[0])))
print("tgt_out", batch.tgt_out[0], " ->", repr(vocab.decode(batch.tgt_out[0])))

# %% [markdown]
# ## The warm-up schedule
#
# $$lr(s) = d_{model}^{-0.5} \cdot \min\left(s^{-0.5},\ s \cdot warmup^{-1.5}\right)$$
#
# rises linearly for `warmup` steps, then decays as $1/\sqrt{s}$. The paper used $d_{model} = 512$
# and 4000 warm-up steps; our small run uses a shorter warm-up and a `factor` that sets the peak.
# `nf.warmup_lr` is the formula; `nf.WarmupSchedule` applies it to an optimizer at every step.

# %%
D_MODEL, WARMUP, STEPS, PEAK_LR = 32, 100, 900, 5e-3
factor = PEAK_LR * np.sqrt(D_MODEL) * np.sqrt(WARMUP)          # makes lr(WARMUP) == PEAK_LR

s_paper = np.arange(1, 40_001)
s_ours = np.arange(1, STEPS + 1)
paper = [nf.warmup_lr(int(s), 512, 4000) for s in s_paper]
ours = [nf.warmup_lr(int(s), D_MODEL, WARMUP, factor) for s in s_ours]
print(f"paper: peak {max(paper):.2e} at step {s_paper[int(np.argmax(paper))]}")
print(f"ours:  peak {max(ours):.2e} at step {s_ours[int(np.argmax(ours))]}, {ours[-1]:.2e} at the last step")

fig, axes = plt.subplots(1, 2, figsize=(11, 3))
axes[0].plot(s_paper, paper)
axes[0].set_title("the paper: d_model 512, warm-up 4000")
axes[1].plot(s_ours, ours, color="C1")
axes[1].set_title(f"this notebook: d_model {D_MODEL}, warm-up {WARMUP}")
for ax in axes:
    ax.set_xlabel("step")
    ax.set_ylabel("learning rate")
plt.show()

# %% [markdown]
# ## Label smoothing, and why training loss sits above held-out loss
#
# With label smoothing $\epsilon$ the training target is not one-hot: it puts $1 - \epsilon$ on the
# right token and spreads $\epsilon$ uniformly over all $V$ classes (torch's convention, which
# npformer follows). Cross-entropy against that target is smallest when the model predicts exactly
# the smoothed distribution, and even then it equals the target's entropy, not zero. So a
# perfect model's *training* loss has a floor, while the *held-out* loss (evaluated without
# smoothing) can go towards zero. The cell computes that floor for our vocabulary.

# %%
V, EPS_LS = task.vocab_size, 0.1
target = np.array([5])
smoothed = np.full(V, EPS_LS / V)
smoothed[target[0]] += 1 - EPS_LS
best_logits = np.log(np.maximum(smoothed, 1e-300))[None]     # predicts the target exactly (log 0 ~ -690)
smooth_ce = nf.CrossEntropyLoss(label_smoothing=EPS_LS)
plain_ce = nf.CrossEntropyLoss()
floor = float(smooth_ce(best_logits, target))
entropy = float((smoothed * -best_logits[0]).sum())          # -sum q log q
confident = np.full((1, V), -20.0)
confident[0, target[0]] = 20.0                                # a nearly one-hot prediction
print(f"smoothed loss of the best possible prediction: {floor:.4f} nats (entropy of the target: {entropy:.4f})")
print(f"its plain (unsmoothed) loss:                   {float(plain_ce(best_logits, target)):.4f} nats")
print(f"a near one-hot prediction: smoothed {float(smooth_ce(confident, target)):.2f}, "
      f"plain {float(plain_ce(confident, target)):.2e} nats")

# %% [markdown]
# Smoothing penalises over-confidence: the near one-hot prediction is *worse* under the smoothed loss
# than the calibrated one. The paper reports that this hurts perplexity but improves accuracy and BLEU.
#
# ## The model and the training loop
#
# Two encoder and two decoder layers, post-norm as in the paper, sinusoidal positions, `dropout=0.1`.
# The loop is the whole recipe: forward, loss, the hand-written backward, gradient clipping, Adam,
# schedule. Every 100 steps we measure the held-out loss (teacher forced, no smoothing).

# %%
config = nf.TransformerConfig(d_model=D_MODEL, num_heads=2, d_ff=64, num_encoder_layers=2,
                              num_decoder_layers=2, vocab_size=task.vocab_size, pad_id=0,
                              dropout=0.1, max_len=16)
model = nf.Transformer(config, seed=0)
print(f"{sum(p.data.size for p in model.parameters()):,} parameters")

loss_fn = nf.CrossEntropyLoss(ignore_index=config.pad_id, label_smoothing=EPS_LS)
eval_fn = nf.CrossEntropyLoss(ignore_index=config.pad_id)
opt = nf.Adam(model.named_parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)
schedule = nf.WarmupSchedule(opt, d_model=D_MODEL, warmup_steps=WARMUP, factor=factor)
heldout = task.heldout(300)


def heldout_loss(model):
    model.eval()
    total = tokens = 0
    for b in iterate_examples(heldout, 300):
        n = int((b.tgt_out != config.pad_id).sum())
        total += float(eval_fn(model(b.src, b.tgt_in), b.tgt_out)) * n
        tokens += n
    model.train()
    return total / tokens


def exact_accuracy(decoded_tokens, tgt_out):
    """Share of rows whose decoded tokens equal the target up to and including its EOS."""
    ok = []
    for pred, ref in zip(decoded_tokens, tgt_out):
        n = int((ref != config.pad_id).sum())
        ok.append(len(pred) >= n and np.array_equal(pred[:n], ref[:n]))
    return float(np.mean(ok))


def decode_accuracies(model, beam_size=4):
    b = next(iterate_examples(heldout, len(heldout)))
    greedy = nf.greedy_decode(model, b.src, max_new_tokens=b.tgt_out.shape[1])
    beam = nf.beam_search(model, b.src, beam_size=beam_size, max_new_tokens=b.tgt_out.shape[1])
    return exact_accuracy(greedy.tokens, b.tgt_out), exact_accuracy(beam.tokens, b.tgt_out)


stream = batch_iterator(task, batch_size=64, seed=0)
train_losses, eval_steps, eval_losses, early = [], [], [], None
start, start_cpu = time.perf_counter(), time.process_time()
model.train()
for step in range(1, STEPS + 1):
    b = next(stream)
    logits = model(b.src, b.tgt_in)                           # (B, T, V), teacher forcing
    loss = loss_fn(logits, b.tgt_out)
    model.zero_grad()
    model.backward(loss_fn.backward())                        # every gradient by hand
    nf.clip_grad_norm(model.parameters(), 1.0)
    opt.step()
    schedule.step()
    train_losses.append(float(loss))
    if step % 100 == 0:
        eval_steps.append(step)
        eval_losses.append(heldout_loss(model))
        print(f"step {step:4d}  lr {opt.lr:.2e}  train loss (smoothed) {float(loss):.3f}  "
              f"held-out loss {eval_losses[-1]:.3f}")
    if step == 200:
        early = decode_accuracies(model)
        model.train()
print(f"{STEPS} steps in {time.perf_counter() - start:.0f} s ({time.process_time() - start_cpu:.0f} s of CPU)")

# %%
smooth = np.convolve(train_losses, np.ones(25) / 25, mode="valid")
plt.figure(figsize=(7, 3.5))
plt.plot(np.arange(1, STEPS + 1), train_losses, alpha=0.3, color="C0")
plt.plot(np.arange(25, STEPS + 1), smooth, color="C0", label="training loss (smoothed labels), 25-step mean")
plt.plot(eval_steps, eval_losses, "o-", color="C1", label="held-out loss (plain)")
plt.axhline(floor, ls="--", color="gray", label="floor of the smoothed loss")
plt.yscale("log")
plt.xlabel("step")
plt.ylabel("cross-entropy (nats / token)")
plt.legend()
plt.show()
print(f"last 100 steps: mean training loss {np.mean(train_losses[-100:]):.3f}, "
      f"held-out loss {eval_losses[-1]:.3f}, smoothed-loss floor {floor:.3f}")

# %% [markdown]
# The training curve flattens towards the dashed floor while the held-out loss keeps going down past
# it: the gap is label smoothing (and dropout, which is on in training only), not overfitting.
#
# ## Greedy search and beam search
#
# Greedy decoding takes the most probable token at each step. Beam search keeps the $K$ best
# partial hypotheses and ranks finished ones by their log-probability divided by the GNMT length
# penalty $((5 + |Y|)/6)^\alpha$. We compare the exact-sequence accuracy of both on the held-out
# sources, early in training (step 200) and at the end.

# %%
final = decode_accuracies(model)
print(f"step  200: greedy {100 * early[0]:.1f} %   beam (K=4) {100 * early[1]:.1f} %")
print(f"step {STEPS}: greedy {100 * final[0]:.1f} %   beam (K=4) {100 * final[1]:.1f} %   "
      f"({len(heldout)} held-out sequences)")

src_text = "hgfabcde"
src = np.array([vocab.encode(src_text) + [2]])                # symbols then EOS
out = nf.greedy_decode(model, src, max_new_tokens=10)
beams = nf.beam_search(model, src, beam_size=3, max_new_tokens=10)
print(f"\n{src_text!r} -> greedy {vocab.decode(out.tokens[0])!r}")
for k in range(3):
    print(f"  beam {k}: {vocab.decode(beams.beams[0, k])!r}  score {beams.beam_scores[0, k]:.3f}")

# %% [markdown]
# ## Reading the attention maps
#
# `nf.attention_weights` runs one forward and returns every attention module's per-head weights.
# To reverse, the decoder's $i$-th output must copy the source symbol at position $L - 1 - i$: the
# cross-attention should light up the anti-diagonal. Encoder self-attention has no such obvious job.

# %%
tgt_in = np.array([[1] + vocab.encode(src_text[::-1])])       # BOS + the reversed source
maps = nf.attention_weights(model, src, tgt_in)
print("modules:", list(maps))
cross = maps["decoder.layers.1.cross_attn"][0]                 # (H, Tq, Tk)
L = len(src_text)
anti = np.array([[cross[h, i, L - 1 - i] for i in range(L)] for h in range(cross.shape[0])])
print("weight on the anti-diagonal, per head and query position:\n", anti)

labels_src = list(src_text) + ["EOS"]
labels_tgt = ["BOS"] + list(src_text[::-1])
fig, axes = plt.subplots(1, 3, figsize=(13, 4))
for h in range(2):
    axes[h].imshow(cross[h], vmin=0, vmax=1, cmap="viridis")
    axes[h].set_title(f"decoder layer 1, cross-attention, head {h}")
enc = maps["encoder.layers.0.self_attn"][0]
axes[2].imshow(enc[0], vmin=0, vmax=1, cmap="viridis")
axes[2].set_title("encoder layer 0, self-attention, head 0")
for ax, (ql, kl) in zip(axes, [(labels_tgt, labels_src)] * 2 + [(labels_src, labels_src)]):
    ax.set_xticks(range(len(kl)), kl)
    ax.set_yticks(range(len(ql)), ql)
    ax.set_xlabel("key (source)")
    ax.set_ylabel("query")
plt.tight_layout()
plt.show()
best = int(np.argmax(anti.mean(1)))
print(f"head {best} puts {100 * anti[best].mean():.0f} % of its weight, on average over the {L} positions, "
      "on the source symbol the decoder must copy next")

# %% [markdown]
# **Try it:** set `EPS_LS = 0.0` and rerun: the floor drops to zero and the training loss falls far
# below its old floor, though dropout still keeps it above the held-out loss. Shorten `WARMUP` to 1
# (no warm-up: the same peak at step 1, so by step 100 the rate is ten times lower) or raise `PEAK_LR`
# ten-fold, and watch the early loss curve. Sort instead of reversing (`make_task("sort", ...)`) and
# look at the cross-attention again (give the attention cell `"".join(sorted(src_text))` where it
# reverses `src_text`; the anti-diagonal numbers then no longer apply).
