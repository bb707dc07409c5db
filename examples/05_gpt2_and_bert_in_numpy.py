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
# # 5. GPT-2 and BERT in NumPy
#
# The two model families people use every day are built from the same hand-written parts as the
# paper's model: GPT-2 is a decoder-only `nf.CausalLM` (pre-norm, tanh GELU, learned positions,
# output tied to the embeddings) and BERT is an encoder (`nf.BertForMaskedLM`). This notebook
# loads a Hugging Face folder into npformer, maps the weight names, compares the logits and the
# gradients with `transformers`, puts text in and gets text out through npformer's own tokenizers,
# and fine-tunes for a few steps with the hand-written backward.
#
# **Weights.** Nothing here downloads anything. Put a GPT-2 folder (`config.json`,
# `model.safetensors`, `vocab.json`, `merges.txt`) at `examples/gpt2`, or name one in the
# environment variable `NPFORMER_GPT2_DIR`, and the notebook uses it. Otherwise it builds a **tiny
# random GPT-2 offline**, with a byte-level BPE trained on a few sentences, and says so below: the
# comparisons are just as exact, the generated text is gibberish. To fetch GPT-2 small, run this
# from the repository root on a machine with network access (`hf` is huggingface_hub's command,
# installed with transformers):
#
# `hf download gpt2 config.json model.safetensors vocab.json merges.txt --local-dir examples/gpt2`

# %%
import os
import shutil
import tempfile
import warnings
from pathlib import Path

warnings.filterwarnings("ignore", message="IProgress not found")   # tqdm's notice, via transformers

import numpy as np  # noqa: E402
import tokenizers  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402

import npformer as nf  # noqa: E402
from npformer.data.tokenizers import GPT2Tokenizer, WordPieceTokenizer  # noqa: E402
from npformer.io import hub  # noqa: E402
from npformer.training.blas import set_blas_threads  # noqa: E402

torch.set_default_dtype(torch.float64)
set_blas_threads(1)                      # tiny matrices: BLAS threads only cost time here
transformers.logging.set_verbosity_error()
transformers.utils.logging.disable_progress_bar()
scratch = Path(tempfile.mkdtemp(prefix="npformer-nb5-"))


def has_gpt2_files(folder):
    return all((Path(folder) / f).is_file() for f in ("config.json", "model.safetensors", "vocab.json",
                                                       "merges.txt"))


def build_tiny_gpt2(folder):
    """A random 2-layer GPT-2 and a byte-level BPE trained here: a complete Hugging Face folder."""
    corpus = ["Alan Turing theorized that machines could think.",
              "The quick brown fox jumps over the lazy dog.",
              "Attention is all you need, said the paper; the model learned to attend."] * 30
    bpe = tokenizers.ByteLevelBPETokenizer()
    bpe.train_from_iterator(corpus, vocab_size=300, min_frequency=2, special_tokens=["<|endoftext|>"],
                            show_progress=False)                     # its bar prints blank lines outside a terminal
    folder.mkdir(parents=True)
    bpe.save_model(str(folder))                                  # vocab.json, merges.txt
    cfg = transformers.GPT2Config(vocab_size=bpe.get_vocab_size(), n_positions=64, n_embd=32, n_layer=2,
                                  n_head=4, bos_token_id=0, eos_token_id=0)
    torch.manual_seed(0)
    transformers.GPT2LMHeadModel(cfg).save_pretrained(str(folder), safe_serialization=True)


# examples/gpt2 from Jupyter (which starts in the notebook's folder) or from the repository root
candidates = [os.environ.get("NPFORMER_GPT2_DIR", ""), "gpt2", os.path.join("examples", "gpt2")]
found = next((c for c in candidates if c and has_gpt2_files(c)), None)
if found:
    gpt2_dir = Path(found)
    print(f"using the GPT-2 weights in {gpt2_dir.resolve()}")
else:
    gpt2_dir = scratch / "tiny-gpt2"
    build_tiny_gpt2(gpt2_dir)
    print("no GPT-2 folder found: using a TINY RANDOM GPT-2 built offline (2 layers, d_model 32); "
          "its text is gibberish, its comparisons are exact")

# %% [markdown]
# ## Loading a folder, the names mapped
#
# `hub.from_pretrained` reads `config.json`, checks the safetensors header, reads the tensors with
# NumPy alone (pickle files are refused), and builds a `CausalLM`. The names differ: Hugging Face's
# GPT-2 packs the query, key and value projections into one `c_attn` matrix and stores its linear
# layers as `Conv1D`, `(in, out)`, the transpose of `torch.nn.Linear`. `hub.plan` is the table:

# %%
model = hub.from_pretrained(gpt2_dir, dtype="float64")
c = model.config
print(type(model).__name__, f"{sum(p.data.size for p in model.parameters()):,} parameters;",
      f"d_model {c.d_model}, {c.num_decoder_layers} layers, {c.num_heads} heads, vocabulary {c.vocab_size},",
      f"norm_first={c.norm_first}, activation={c.activation!r}, positions={c.positional!r}")
table = hub.plan("gpt2", c)
for ours, theirs, how in table[:12]:
    print(f"  {ours:38s} <- {theirs:34s} {how}")
print(f"  ... {len(table)} weights in all")

# %% [markdown]
# ## The logits, against `transformers`
#
# The same folder loaded by `transformers`, both in float64, on the same token ids:

# %%
hf = transformers.GPT2LMHeadModel.from_pretrained(gpt2_dir, torch_dtype=torch.float64).eval()
ids = np.random.default_rng(0).integers(0, c.vocab_size, size=(2, 12))
ours = model(ids)                                                          # (B, T, V)
with torch.no_grad():
    theirs = hf(torch.tensor(ids)).logits.numpy()
print("logits", ours.shape, f" largest difference {np.abs(ours - theirs).max():.1e}",
      f" (largest logit {np.abs(theirs).max():.1f})")

# %% [markdown]
# ## The gradients, against `torch.autograd`
#
# npformer's backward is written by hand. The next-token cross-entropy of one batch, backward through
# both models, and every parameter gradient compared through the name table: a packed `c_attn`
# gradient is cut into its three parts, a `Conv1D` gradient transposed.

# %%
loss_fn = nf.CrossEntropyLoss()
model.eval()                                                 # no dropout, so both compute one function
loss = loss_fn(model(ids[:, :-1]), ids[:, 1:])
model.zero_grad()
model.backward(loss_fn.backward())

hf.zero_grad()
hf_loss = torch.nn.functional.cross_entropy(hf(torch.tensor(ids[:, :-1])).logits.reshape(-1, c.vocab_size),
                                            torch.tensor(ids[:, 1:]).reshape(-1))
hf_loss.backward()
hf_grads = {n: p.grad.numpy() for n, p in hf.named_parameters()}
D = c.d_model


def as_ours(how, g):
    if how == "copy":
        return g
    if how == "T":
        return g.T
    _, j, part = how                                         # ("qkv", j, "weight" | "bias")
    return g[:, j * D:(j + 1) * D].T if part == "weight" else g[j * D:(j + 1) * D]


grads = {n: p.grad for n, p in model.named_parameters()}
scale = max(np.abs(g).max() for g in grads.values())        # the largest gradient entry of the model
worst = max((np.abs(grads[o] - as_ours(how, hf_grads[t])).max(), o) for o, t, how in table if t in hf_grads)
print(f"loss: npformer {float(loss):.6f}, transformers {hf_loss.item():.6f}")
print(f"worst gradient difference over {len(table)} weights: {worst[0]:.1e} ({worst[1]}), "
      f"{worst[0] / scale:.1e} of the largest gradient entry")

# %% [markdown]
# ## Text in, text out
#
# `GPT2Tokenizer` is GPT-2's byte-level BPE in plain Python (the byte table, the pre-tokenisation
# pattern, merges by rank). It reads the same `vocab.json` and `merges.txt` as `transformers`'
# tokenizer and gives the same ids. `nf.greedy_decode` continues the prompt with the key/value
# cache.

# %%
tok = GPT2Tokenizer.from_folder(gpt2_dir)
hf_tok = transformers.GPT2TokenizerFast.from_pretrained(gpt2_dir)
prompt = "Alan Turing theorized that"
prompt_ids = tok.encode(prompt)
print("ids, npformer    ", prompt_ids)
print("ids, transformers", hf_tok(prompt).input_ids)
eos = tok.vocab["<|endoftext|>"]
out = nf.greedy_decode(model, np.array([prompt_ids]), max_new_tokens=15, eos_id=eos, suppress_ids=())
with torch.no_grad():
    hf_out = hf.generate(torch.tensor([prompt_ids]), max_new_tokens=15, do_sample=False,
                         pad_token_id=eos, eos_token_id=eos)
print("npformer:    ", repr(prompt + tok.decode(out.tokens[0][: out.lengths[0]])))
print("transformers:", repr(prompt + hf_tok.decode(hf_out[0, len(prompt_ids):])))

# %% [markdown]
# ## A few fine-tuning steps with the hand-written backward
#
# Teach the model one sentence: next-token cross-entropy, AdamW, every gradient from npformer's own
# backward through every layer. Then `hub.save_pretrained` writes a folder `transformers` loads, and
# its logits are ours.

# %%
text = "The Transformer is all you need."
batch = np.array([tok.encode(text)])                          # (1, T+1)
opt = nf.AdamW(model.named_parameters(), lr=3e-3 if not found else 1e-5)
model.train()
for step in range(8):
    logits = model(batch[:, :-1])                             # (1, T, V)
    loss = loss_fn(logits, batch[:, 1:])
    model.zero_grad()
    model.backward(loss_fn.backward())
    opt.step()
    print(f"step {step}  loss {float(loss):.4f}")
model.eval()

tuned_dir = scratch / "tuned"
hub.save_pretrained(model, tuned_dir)
hf_tuned = transformers.GPT2LMHeadModel.from_pretrained(tuned_dir, torch_dtype=torch.float64).eval()
with torch.no_grad():
    diff = np.abs(model(batch) - hf_tuned(torch.tensor(batch)).logits.numpy()).max()
print(f"the tuned model, reloaded by transformers: largest logit difference {diff:.1e}")
print("files written:", sorted(p.name for p in tuned_dir.iterdir()))

# %% [markdown]
# ## BERT
#
# BERT is an encoder: token + position + segment embeddings and an embedding LayerNorm, post-norm
# layers with exact GELU and LayerNorm epsilon `1e-12`, and for masked-language modelling a dense +
# GELU + LayerNorm head tied to the embeddings. The same steps: a tiny random `BertForMaskedLM`
# built offline with a small WordPiece vocabulary, loaded by npformer, compared with `transformers`
# on a padded batch, text through npformer's `WordPieceTokenizer`.

# %%
bert_dir = scratch / "tiny-bert"
bert_dir.mkdir()
words = ("the quick brown fox jumps over lazy dog attention is all you need transformer model "
         "learn ##s ##ed ##ing , . !").split()
vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + words
(bert_dir / "vocab.txt").write_text("\n".join(vocab) + "\n")
bcfg = transformers.BertConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                               intermediate_size=32, max_position_embeddings=32)
torch.manual_seed(1)
transformers.BertForMaskedLM(bcfg).save_pretrained(str(bert_dir), safe_serialization=True)

bert = hub.from_pretrained(bert_dir, dtype="float64")
hf_bert = transformers.BertForMaskedLM.from_pretrained(bert_dir, torch_dtype=torch.float64).eval()
wp = WordPieceTokenizer.from_folder(bert_dir)
hf_wp = transformers.BertTokenizerFast.from_pretrained(str(bert_dir))
texts = ["The quick brown fox jumps over the lazy [MASK].", "Attention is all you need!"]
enc = [wp.encode(t) for t in texts]
print(type(bert).__name__, "| tokens:", wp.tokenize(texts[0]))
print("ids equal to transformers' tokenizer:", enc == [hf_wp(t).input_ids for t in texts])

T = max(map(len, enc))
input_ids = np.array([e + [0] * (T - len(e)) for e in enc])              # right-padded with [PAD]
attention_mask = (np.arange(T)[None] < np.array([[len(e)] for e in enc])).astype(np.int64)
ours = bert(input_ids, attention_mask=attention_mask)
with torch.no_grad():
    theirs = hf_bert(torch.tensor(input_ids), attention_mask=torch.tensor(attention_mask)).logits.numpy()
real = attention_mask.astype(bool)
print(f"MLM logits {ours.shape}: largest difference at real tokens {np.abs(ours - theirs)[real].max():.1e}")

where = enc[0].index(wp.vocab["[MASK]"])
top = np.argsort(-ours[0, where])[:3]
print("top 3 fillers for [MASK] (random weights, so any):", [wp.tokens[i] for i in top])

# %%
shutil.rmtree(scratch)

# %% [markdown]
# Every difference above is float64 rounding. With real weights in `examples/gpt2` the same cells
# load GPT-2 small and its continuation reads as English. `npformer generate FOLDER
# "prompt"` does the text-in, text-out step from the command line; docs/GPT2_BERT.md has the recipe
# and the parity tests behind it.
