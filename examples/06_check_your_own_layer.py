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
# # 6. Check your own layer
#
# You wrote a multi-head attention (for a course, a paper, a model of your own). Is it right? Not
# "does it run", not "are the shapes right": does it compute the paper's function, and are its
# gradients the derivatives of that function, on every batch size, length, head count and mask?
#
# The project's grading oracle answers that. It builds your class with sizes it draws, copies its
# own random weights into yours **by name**, runs both on the same inputs, and compares the output,
# the per-head attention weights, and the gradients of every input and weight (with a random upstream
# gradient). Hypothesis draws the examples; when one fails, it **shrinks** it to the smallest input
# that still fails. The reference is npformer, whose every gradient is checked by finite
# differences and against PyTorch.
#
# Your code never runs in the notebook's process: the oracle starts a separate, confined worker
# process for it, which is why the layer is written to a file first.

# %%
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from parity_tests.oracle import check, render_text

workdir = Path(tempfile.mkdtemp(prefix="npformer-nb6-"))
print("candidates go to", workdir)

# %% [markdown]
# ## A multi-head attention, written as in a tutorial
#
# Plain PyTorch: four `nn.Linear` projections, heads by `view` and `transpose`, a keep-mask
# (`mask == 0` means hidden), softmax, and the heads merged back. Change anything you like in this
# cell and rerun the notebook from here.

# %%
ATTENTION = '''import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        assert d_model % num_heads == 0
        self.h, self.d_k = num_heads, d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        B = query.size(0)
        # (B, T, d_model) -> (B, h, T, d_k)
        q, k, v = (lin(x).view(B, -1, self.h, self.d_k).transpose(1, 2)
                   for lin, x in ((self.W_q, query), (self.W_k, key), (self.W_v, value)))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float("-inf"))
        weights = scores.softmax(dim=-1)
        out = (weights @ v).transpose(1, 2).contiguous().view(B, -1, self.h * self.d_k)
        return self.W_o(out), weights
'''
good = workdir / "attention.py"
good.write_text(ATTENTION)

result = check("mha", f"{good}:MultiHeadAttention", examples=25)
print(f"verdict {result.verdict!r}, exit code {result.exit_code}, {result.examples_run} examples")
print("compared:", ", ".join(result.checked))

# %% [markdown]
# The verdict covers every quantity listed under "compared". The full text report (what
# `npformer-oracle check` prints) also says how the oracle understood the class and which of your
# weights stood for which of its own:

# %%
print(render_text(result))

# %% [markdown]
# ## A planted mistake
#
# The most common bug in student attention code: merging the heads with `view(B, -1, h * d_k)`
# straight from `(B, h, T, d_k)`, without transposing back to `(B, T, h, d_k)` first. It runs, the
# shapes are right, and with one head, or one position, it even gives the right numbers.

# %%
BUGGY = ATTENTION.replace("(weights @ v).transpose(1, 2).contiguous().view", "(weights @ v).contiguous().view")
assert BUGGY != ATTENTION
bad = workdir / "attention_bug.py"
bad.write_text(BUGGY)

result = check("mha", f"{bad}:MultiHeadAttention", examples=25)
print(render_text(result))

# %% [markdown]
# ## Reading the verdict
#
# The same facts are fields of the result, so a notebook or a grading script can use them directly:

# %%
d = result.detail
print("verdict:         ", result.verdict, "(exit code", result.exit_code, ")")
print("first quantity:  ", result.quantity)
print("shrunk example:  ", json.dumps(result.example))
print("worst element:   ", d["worst_at"])
print(f"got {d['got']:.6f}, expected {d['expected']:.6f}, {d['ratio_to_tolerance']:.1e} x the tolerance")
after = d.get("after_first_difference", {})       # the other quantities, on the same counterexample
print("also differ:     ", [q for q, status in after.items() if status == "differs"])
print("still match:     ", [q for q, status in after.items() if status != "differs"])

# %% [markdown]
# How to read it:
#
# * **The first quantity** that differs is the output, so the bug is in the forward pass. The
#   attention weights are in the "still match" list: the bug comes after the softmax. The gradients
#   in the "also differ" list are all on the path of the values and the output projection: the bug
#   sits after the weights meet the values.
# * **The shrunk example** is the smallest the search found: look at `num_heads` and the lengths in
#   it. One head would hide this bug (nothing to interleave), so the oracle needs at least two, and
#   at least two query positions to mix them up.
# * **The replay command** reruns exactly this case. Below, the same case through the command line,
#   before and after the fix: the exit status is what a grader or CI sees.

# %%
def oracle_cli(*args):
    done = subprocess.run([sys.executable, "-m", "parity_tests.oracle", *args], capture_output=True,
                          text=True, timeout=300)
    return done.returncode, done.stdout


replay = json.dumps(result.example)
for path in (bad, good):
    code, text = oracle_cli("check", "mha", f"{path}:MultiHeadAttention", "--replay", replay)
    verdict = next(line for line in text.splitlines() if line.startswith("verdict:"))
    print(f"{path.name:18s} exit {code}  {verdict}")

# %% [markdown]
# ## Masks and the fully masked row
#
# By default the oracle never draws a query row whose every key is hidden: the paper leaves its output
# undefined. `strict=True` draws such rows and expects what `F.scaled_dot_product_attention` gives
# there (zero weights, zero output, zero gradients; notebook 1), so the module's output on that row
# is just the output projection's bias (the `expected` value below). Our candidate fills hidden scores
# with `-inf`, and the softmax of a row of `-inf` is `0/0`:

# %%
strict = check("mha", f"{good}:MultiHeadAttention", examples=25, strict=True)
print(render_text(strict))

# %% [markdown]
# The candidate that matched everywhere else returns NaN on such a row; whether that matters is the
# assignment's choice, and the oracle says exactly where it happens. **Try it:** scale the scores by
# `math.sqrt(d_model)` instead of `math.sqrt(self.d_k)`, or fill with `-1e9` instead of `-inf`, and
# rerun the checks. The oracle checks `sdpa`, `ffn`, `layernorm`, `positional`, `encoder_layer`,
# `decoder_layer` and whole `model`s the same way: `python -m parity_tests.oracle list`.

# %% [markdown]
# The candidate files stay where the first cell put them, so the replay commands the reports print
# can be run from a terminal; delete the folder when you are done.

# %%
print("the candidate files are kept in", workdir)
