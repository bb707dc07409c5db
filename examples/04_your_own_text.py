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
# # 4. Your own text
#
# A GPT-style language model (a decoder-only `nf.CausalLM`: masked self-attention, no encoder) learns
# to predict the next character of a text file, and then writes text by **sampling**: with a
# temperature, top-k and top-p (nucleus) filtering. The text here is this project's own
# documentation, which every clone has; point `TEXT_FILES` at any UTF-8 files of your own.
#
# Training uses the command line, as you would on your own files (`npformer train --task lm --data
# ...`); everything after it is Python. The run is kept short so the notebook finishes in about a
# minute: the model learns the documents' spelling and layout, not their meaning.

# %%
import math
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import npformer as nf
from npformer.data.tokenizers import BPETokenizer, CharTokenizer
from npformer.decoding.sampling import sample, sampling_probs
from npformer.training.blas import set_blas_threads

set_blas_threads(1)                          # small matrices: BLAS threads only cost time here
ROOT = Path(nf.__file__).resolve().parents[1]
TEXT_FILES = [ROOT / "README.md", ROOT / "docs" / "TEXT.md", ROOT / "docs" / "ARCHITECTURE.md",
              ROOT / "docs" / "NUMERICS.md"]
missing = [str(p) for p in TEXT_FILES if not p.is_file()]
assert not missing, f"TEXT_FILES: these files do not exist: {missing}; point TEXT_FILES at your own text"
text = "\n".join(p.read_text(encoding="utf-8") for p in TEXT_FILES)
print(f"{len(TEXT_FILES)} files, {len(text):,} characters, {len(set(text))} distinct characters")
print(repr(text[:200]))

# %% [markdown]
# ## Tokens: characters or byte-level BPE
#
# A model reads integer ids. The simplest tokenizer gives each distinct character of the corpus an
# id. Byte-pair encoding (BPE) starts from the 256 byte values and repeatedly merges the most frequent
# adjacent pair into a new token, so common words and word pieces become one token each: fewer
# tokens per text, a larger vocabulary. Both are trained here, by this project's own code.

# %%
char_tok = CharTokenizer.train(text)
bpe_tok = BPETokenizer.train(text, 400)
sentence = "The model learns to attend to every position."
for name, tok in (("char", char_tok), ("bpe", bpe_tok)):
    ids = tok.encode(sentence)
    pieces = [tok.decode([i]) for i in ids]
    assert tok.decode(ids) == sentence
    print(f"{name:4s} vocabulary {tok.vocab_size:4d}: {len(ids):2d} tokens {pieces}")
n_bpe = len(bpe_tok.encode(text))
print(f"the whole text: {len(text) / n_bpe:.2f} characters per BPE token "
      f"({len(text):,} characters, {n_bpe:,} BPE tokens)")

# %% [markdown]
# ## Training from the command line
#
# A character-level model of the default size (d_model 64, 4 heads, 2 layers), on windows of 48
# characters, for a few hundred steps. The last tenth of the text is held out for validation, and the
# run reports the validation loss in nats per token, the perplexity, and **bits per character**
# (comparable between tokenizers). The checkpoint keeps the tokenizer, so the model always decodes
# with its own. `--tokenizer bpe --vocab-size 400` would train the BPE one instead.

# %%
workdir = Path(tempfile.mkdtemp(prefix="npformer-nb4-"))
checkpoint = workdir / "lm.npz"
cmd = [sys.executable, "-m", "npformer", "train", "--task", "lm", "--data", *map(str, TEXT_FILES),
       "--context", "48", "--batch-size", "16", "--steps", "400", "--warmup", "100",
       "--label-smoothing", "0", "--seed", "0", "--eval-size", "100", "--threads", "1",
       "--no-progress", "--save", str(checkpoint)]
env = {**os.environ, "PYTHONPATH": str(ROOT)}
run = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
print(run.stdout)
assert run.returncode == 0, run.stderr

# %% [markdown]
# How good is that? A model that knew only how often each character occurs (a **unigram** model)
# would score the entropy of the character frequencies. The cell computes it on the validation part
# of the text, with the frequencies counted on the training part, for comparison with the run's
# bits per character above.

# %%
cut = int(len(text) * 0.9)
counts = Counter(text[:cut])
total = sum(counts.values())
val = text[cut:]
unigram_bits = -sum(math.log2(counts.get(ch, 0.5) / total) for ch in val) / len(val)
print(f"unigram model: {unigram_bits:.2f} bits per character on the validation text")

# %% [markdown]
# ## Loading the run
#
# `nf.load_training_state` rebuilds everything from the checkpoint: the model, the optimizer state,
# and the task with its tokenizer (it re-reads the text files and refuses them if they changed).

# %%
state = nf.load_training_state(str(checkpoint))
model, task = state.model, state.task
model.eval()
vocab = task.vocab
print(type(model).__name__, f"{sum(p.data.size for p in model.parameters()):,} parameters, step {state.step},",
      f"{task.tokenizer.kind} tokenizer with {vocab.size} tokens, context {task.context}")

# %% [markdown]
# ## Temperature, top-k, top-p
#
# At each step the model gives logits $z$ over the vocabulary. Sampling draws the next token from
# $p_i \propto \exp(z_i / T)$:
#
# * **temperature** $T < 1$ sharpens the distribution (towards greedy), $T > 1$ flattens it;
# * **top-k** keeps only the $k$ most probable tokens;
# * **top-p** (nucleus) keeps the smallest set of most probable tokens whose probability adds up to
#   at least $p$, so it keeps few tokens where the model is sure and many where it is not.
#
# `sampling_probs` is the distribution `sample` draws from. Below: the next character after a
# prompt, under each setting.

# %%
prompt = "The attention weights "
ids = np.array([vocab.encode(prompt)])
logits = model(ids)[0, -1].astype(np.float64)                       # (V,) the next token's logits
logits[task.suppress_ids] = -np.inf                                 # PAD/BOS/EOS/UNK never generated
settings = {"T=0.5": dict(temperature=0.5), "T=1": dict(temperature=1.0), "T=2": dict(temperature=2.0),
            "top-k 5": dict(top_k=5), "top-p 0.9": dict(top_p=0.9)}
order = np.argsort(-logits)[:12]
labels = [repr(vocab.decode([i]))[1:-1] or "?" for i in order]

fig, axes = plt.subplots(1, len(settings), figsize=(15, 3), sharey=True)
for ax, (name, kw) in zip(axes, settings.items()):
    p = sampling_probs(logits[None], **kw)[0]
    kept = int((p > 0).sum())
    entropy = -np.sum(p[p > 0] * np.log2(p[p > 0]))
    ax.bar(range(len(order)), p[order])
    ax.set_xticks(range(len(order)), labels, fontsize=8)
    ax.set_title(f"{name}: {kept} kept, {entropy:.2f} bits", fontsize=9)
    print(f"{name:10s} tokens kept {kept:3d}   entropy {entropy:5.2f} bits   most likely {labels[0]!r} "
          f"p={p[order[0]]:.3f}")
axes[0].set_ylabel("probability")
fig.suptitle(f"next character after {prompt!r}")
plt.tight_layout()
plt.show()

# %% [markdown]
# ## Continuations
#
# `nf.greedy_decode` always takes the most probable token; `sample` draws, from a seeded
# `numpy.random.Generator` (the same seed, the same text). Low temperatures repeat the most common
# patterns; high ones invent spellings.

# %%
n_new = task.context - ids.shape[1]
kw = dict(max_new_tokens=n_new, eos_id=None, suppress_ids=task.suppress_ids)
greedy = nf.greedy_decode(model, ids, **kw)
print(f"{'greedy':14s} {prompt}[{vocab.decode(greedy.tokens[0])}]")
for name, setting in [("T=0.5", dict(temperature=0.5)), ("T=1", dict(temperature=1.0)),
                      ("T=1.5", dict(temperature=1.5)), ("top-k 5", dict(top_k=5)),
                      ("top-p 0.9", dict(top_p=0.9)), ("T=0.8 top-p 0.9", dict(temperature=0.8, top_p=0.9))]:
    out = sample(model, ids, seed=0, **setting, **kw)
    print(f"{name:14s} {prompt}[{vocab.decode(out.tokens[0])}]")
first, second = (sample(model, ids, seed=7, temperature=1.0, **kw) for _ in range(2))
print("\nseed 7 twice, the same text:", np.array_equal(first.tokens, second.tokens))

# %% [markdown]
# The same from the command line, `npformer generate CHECKPOINT "prompt"` with the sampling options:

# %%
gen = subprocess.run([sys.executable, "-m", "npformer", "generate", str(checkpoint), "The model",
                      "--temperature", "0.8", "--top-p", "0.9", "--seed", "1", "--max-new-tokens", "30"],
                     capture_output=True, text=True, env=env, timeout=300)
print(gen.stdout)
assert gen.returncode == 0, gen.stderr
shutil.rmtree(workdir)

# %% [markdown]
# **Try it:** train longer (`--steps 4000`: docs/TEXT.md reports the curve), switch to
# `--tokenizer bpe --vocab-size 400` and compare bits per character, or point `TEXT_FILES` at a
# book. Then sample the same prompt at several temperatures again.
