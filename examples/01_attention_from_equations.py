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
# # 1. Attention from the equations
#
# Section 3.2 of "Attention Is All You Need" defines scaled dot-product attention as
#
# $$\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V .$$
#
# This notebook computes it by hand on numbers small enough to check on paper, compares the result with
# npformer's `sdpa_forward`, adds masks, builds multi-head attention out of reshapes, and finally
# derives the softmax backward and checks it twice: against finite differences and against
# `torch.autograd`.

# %%
import matplotlib.pyplot as plt
import numpy as np
import torch

import npformer as nf
import torchformer as tf

np.set_printoptions(precision=4, suppress=True)
torch.set_default_dtype(torch.float64)

# %% [markdown]
# ## One query, three keys, by hand
#
# One batch, one head, one query and three keys of width $d_k = 2$. The query points along the
# first axis, so the first key (which also points there) should win.

# %%
q = np.array([[[[2.0, 0.0]]]])                        # (B=1, H=1, Tq=1, dk=2)
k = np.array([[[[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]]]])  # (1, 1, Tk=3, 2)
v = np.array([[[[10.0, 0.0], [0.0, 10.0], [5.0, 5.0]]]])  # (1, 1, 3, dv=2)

scores = (q @ k.swapaxes(-1, -2)) / np.sqrt(q.shape[-1])   # Q K^T / sqrt(dk)
weights_by_hand = np.exp(scores) / np.exp(scores).sum(-1, keepdims=True)
out_by_hand = weights_by_hand @ v
print("scores  ", scores[0, 0, 0])
print("weights ", weights_by_hand[0, 0, 0], " sum", weights_by_hand.sum())
print("output  ", out_by_hand[0, 0, 0])

# %% [markdown]
# The scores are $q \cdot k_j / \sqrt 2$; the weights are their softmax; the output is the
# weighted average of the value rows. npformer's functional pair returns the same two arrays (and a
# cache for the backward pass):

# %%
(out, weights), cache = nf.sdpa_forward(q, k, v)
print("npformer weights", weights[0, 0, 0])
print("npformer output ", out[0, 0, 0])
print("largest difference from the hand computation:",
      max(np.abs(out - out_by_hand).max(), np.abs(weights - weights_by_hand).max()))

# %% [markdown]
# ## Why divide by $\sqrt{d_k}$?
#
# For random queries and keys with unit-variance entries, $q \cdot k$ has variance $d_k$. Without
# the scale, wide heads push the softmax into a near one-hot regime where its gradient vanishes.
# The cell measures the spread of the scores, with and without the scale, and the largest
# weight of a row on average.

# %%
rng = np.random.default_rng(0)
for dk in (4, 64, 512):
    qs, ks = rng.standard_normal((2000, dk)), rng.standard_normal((2000, 16, dk))
    raw = np.einsum("nd,ntd->nt", qs, ks)
    for name, s in (("unscaled", raw), ("scaled", raw / np.sqrt(dk))):
        p = np.exp(s - s.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        print(f"dk={dk:4d} {name:9s} score std {s.std():7.2f}   mean max weight {p.max(-1).mean():.3f}")

# %% [markdown]
# ## Masks
#
# npformer's masks are **keep-masks**: `True` means *this query may attend to this key* (the
# paper's sense and `torch.nn.functional.scaled_dot_product_attention`'s). Two kinds matter:
#
# * a **padding mask** hides PAD tokens of the keys: `nf.padding_mask(ids, pad_id)` has shape
#   `(B, 1, 1, Tk)`;
# * a **causal mask** lets position $i$ see only positions $j \le i$: `nf.causal_mask(T)` has shape
#   `(1, 1, T, T)`.
#
# `nf.combine_masks` ANDs them with broadcasting. Below: 5 tokens, the last one PAD (id 0).

# %%
ids = np.array([[7, 3, 9, 4, 0]])                                  # (B=1, T=5), 0 = PAD
pad = nf.padding_mask(ids, pad_id=0)                               # (1, 1, 1, 5)
causal = nf.causal_mask(5)                                         # (1, 1, 5, 5)
both = nf.combine_masks(pad, causal)                               # (1, 1, 5, 5)
print("padding mask", pad.shape, pad.astype(int)[0, 0, 0])
print("causal mask", causal.shape)
print(causal.astype(int)[0, 0])
print("combined")
print(both.astype(int)[0, 0])

rng = np.random.default_rng(1)
q5, k5, v5 = (rng.standard_normal((1, 1, 5, 4)) for _ in range(3))
(_, w_none), _ = nf.sdpa_forward(q5, k5, v5)
(_, w_causal), _ = nf.sdpa_forward(q5, k5, v5, mask=causal)
(_, w_both), _ = nf.sdpa_forward(q5, k5, v5, mask=both)

fig, axes = plt.subplots(1, 3, figsize=(11, 3.4))
for ax, w, title in zip(axes, (w_none, w_causal, w_both), ("no mask", "causal", "causal + padding")):
    im = ax.imshow(w[0, 0], vmin=0, vmax=1, cmap="viridis")
    ax.set_title(title)
    ax.set_xlabel("key position")
    ax.set_ylabel("query position")
fig.colorbar(im, ax=axes, shrink=0.8, label="attention weight")
plt.show()
print("row sums, causal + padding:", w_both.sum(-1)[0, 0], " weight on the PAD key:", w_both[0, 0, :, 4])

# %% [markdown]
# Each row still sums to one, over the keys it may see; hidden keys get weight exactly zero.
#
# ### A row with nothing to attend to
#
# What if a query may see **no** key? The softmax of a row of $-\infty$ is $0/0$. Here npformer
# follows `F.scaled_dot_product_attention` (since `torch 2.5`): such a row gets zero weights, a zero output
# and zero gradients, never NaN. Below, query 0 is fully masked.

# %%
keep = np.ones((1, 1, 3, 3), dtype=bool)
keep[..., 0, :] = False                                          # query 0 sees nothing
q3, k3, v3 = (rng.standard_normal((1, 1, 3, 4)) for _ in range(3))
(o3, w3), c3 = nf.sdpa_forward(q3, k3, v3, mask=keep)
dq3, dk3, dv3 = nf.sdpa_backward(rng.standard_normal(o3.shape), c3)
print("weights of the fully masked row:", w3[0, 0, 0], " output:", o3[0, 0, 0])
print("its query gradient:", dq3[0, 0, 0], " any NaN anywhere:",
      any(np.isnan(a).any() for a in (o3, w3, dq3, dk3, dv3)))

ref = torch.nn.functional.scaled_dot_product_attention(
    torch.tensor(q3), torch.tensor(k3), torch.tensor(v3), attn_mask=torch.tensor(keep))
print("torch SDPA output of that row:", ref[0, 0, 0].numpy())

# %% [markdown]
# ## Multi-head attention is reshapes
#
# $\mathrm{MultiHead}(Q,K,V) = \mathrm{Concat}(\mathrm{head}_1,\dots,\mathrm{head}_h) W^O$ with
# $\mathrm{head}_i = \mathrm{Attention}(Q W^Q_i, K W^K_i, V W^V_i)$. The $h$ projections of width
# $d_k = d_{model}/h$ are one $(d_{model}, d_{model})$ matrix; splitting its output into heads is a
# reshape `(B, T, D) -> (B, T, H, dk)` and a transpose to `(B, H, T, dk)`. No loop over heads.
#
# Below the cell rebuilds `nf.MultiHeadAttention`'s forward from its own weights with
# `nf.linear_forward`, the reshape, `nf.sdpa_forward` and the reverse reshape.

# %%
B, T, D, H = 2, 4, 8, 2
mha = nf.MultiHeadAttention(D, H, dtype="float64", rng=np.random.default_rng(0))
x = np.random.default_rng(2).standard_normal((B, T, D))
mask = nf.causal_mask(T)


def split_heads(a):                      # (B, T, D) -> (B, H, T, dk)
    return a.reshape(B, T, H, D // H).transpose(0, 2, 1, 3)


def project(layer, a):
    return nf.linear_forward(a, layer.weight.data, layer.bias.data)[0]


qh, kh, vh = (split_heads(project(p, x)) for p in (mha.q_proj, mha.k_proj, mha.v_proj))
(heads, w_heads), _ = nf.sdpa_forward(qh, kh, vh, mask=mask)          # (B, H, T, dk)
concat = heads.transpose(0, 2, 1, 3).reshape(B, T, D)                  # (B, T, H*dk)
by_reshapes = project(mha.out_proj, concat)

module_out = mha(x, x, x, mask=mask)
print("shapes: per-head q", qh.shape, " weights", mha.attn_weights.shape, " output", module_out.shape)
print("largest difference, reshapes vs module:", np.abs(by_reshapes - module_out).max())
print("per-head weights equal:", np.allclose(w_heads, mha.attn_weights, rtol=0, atol=1e-15))

# %% [markdown]
# A classic mistake is to merge the heads with `reshape(B, T, D)` **without** the transpose back.
# With one head it changes nothing, which is why tests with `num_heads=1` miss it; with two it does:

# %%
wrong_concat = heads.reshape(B, T, D)                                  # forgot transpose(0, 2, 1, 3)
print("largest difference with the forgotten transpose:",
      np.abs(project(mha.out_proj, wrong_concat) - module_out).max())

# %% [markdown]
# ## The softmax backward, derived
#
# For $y = \mathrm{softmax}(x)$, $\partial y_i / \partial x_j = y_i(\delta_{ij} - y_j)$. Given the
# upstream gradient $g = \partial L / \partial y$, the chain rule gives
#
# $$\frac{\partial L}{\partial x_j} = \sum_i g_i\, y_i (\delta_{ij} - y_j)
#   = y_j \Big(g_j - \sum_i g_i y_i\Big),$$
#
# one elementwise product and one row sum: no Jacobian matrix is ever formed. That line is
# `nf.softmax_backward`. We check it by central differences
# $\big(L(x + \epsilon e_j) - L(x - \epsilon e_j)\big) / 2\epsilon$ with $L = \sum g \cdot y$ and a
# **random** $g$ (an upstream gradient of ones would hide bugs: the gradient of $\sum y$ is
# identically zero since every row sums to one).

# %%
rng = np.random.default_rng(3)
xs = rng.standard_normal((3, 5))
g = rng.standard_normal((3, 5))
y, sm_cache = nf.softmax_forward(xs)
dx_derived = y * (g - (g * y).sum(-1, keepdims=True))
dx_npformer = nf.softmax_backward(g, sm_cache)

eps = 1e-6
dx_numeric = np.zeros_like(xs)
for idx in np.ndindex(xs.shape):
    e = np.zeros_like(xs)
    e[idx] = eps
    dx_numeric[idx] = ((nf.softmax_forward(xs + e)[0] * g).sum()
                       - (nf.softmax_forward(xs - e)[0] * g).sum()) / (2 * eps)

print("derived vs npformer        ", np.abs(dx_derived - dx_npformer).max())
print("npformer vs finite diffs   ", np.abs(dx_npformer - dx_numeric).max())
print("gradient of sum(y) (ones upstream):", np.abs(nf.softmax_backward(np.ones_like(g), sm_cache)).max())

# %% [markdown]
# ## The whole attention backward, against `torch.autograd`
#
# `nf.sdpa_backward` chains four such steps ($O = PV$, $P = \mathrm{softmax}(S)$,
# $S = QK^\top/\sqrt{d_k}$). The project's gradient checker `nf.check_pair` compares it with central
# differences; `torch.autograd` through `F.scaled_dot_product_attention` (code nobody here wrote)
# gives a second, independent answer. Everything in float64.

# %%
rng = np.random.default_rng(4)
qa, ka, va = rng.standard_normal((2, 3, 4, 5)), rng.standard_normal((2, 3, 6, 5)), rng.standard_normal((2, 3, 6, 7))
keep = nf.combine_masks(nf.padding_mask(np.array([[1, 1, 1, 1, 1, 0], [1, 1, 1, 0, 0, 0]]), 0),
                        nf.causal_mask(4, 6))
report = nf.check_pair(nf.sdpa_forward, nf.sdpa_backward, (qa, ka, va), output_index=0, mask=keep)
print(report)

dout = rng.standard_normal((2, 3, 4, 7))
(oa, _), ca = nf.sdpa_forward(qa, ka, va, mask=keep)
np_grads = nf.sdpa_backward(dout, ca)

tq, tk, tv = (torch.tensor(a, requires_grad=True) for a in (qa, ka, va))
to = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, attn_mask=torch.tensor(keep))
to.backward(torch.tensor(dout))
print("output, npformer vs torch:", np.abs(oa - to.detach().numpy()).max())
for name, mine, t in zip(("dq", "dk", "dv"), np_grads, (tq, tk, tv)):
    print(f"{name}, npformer vs torch.autograd: {np.abs(mine - t.grad.numpy()).max():.2e}")

# %% [markdown]
# ## The module, against its PyTorch twin
#
# `torchformer` is the same model written with autograd. `tf.to_torch` copies the npformer
# module's weights by name; the outputs, the per-head weights and every gradient agree to rounding.

# %%
mha = nf.MultiHeadAttention(8, 2, dtype="float64", rng=np.random.default_rng(5))
twin = tf.to_torch(mha)
tf.set_need_weights(twin, True)                       # fill attn_weights (the explicit path)
x = np.random.default_rng(6).standard_normal((2, 4, 8))
dout = np.random.default_rng(7).standard_normal((2, 4, 8))

out_np = mha(x, x, x, mask=nf.causal_mask(4))
dq_np, dk_np, dv_np = mha.backward(dout)
xt = torch.tensor(x, requires_grad=True)
out_t = twin(xt, xt, xt, mask=torch.tensor(nf.causal_mask(4)))
out_t.backward(torch.tensor(dout))

print("output          ", np.abs(out_np - out_t.detach().numpy()).max())
print("per-head weights", np.abs(mha.attn_weights - twin.attn_weights.detach().numpy()).max())
print("input gradient  ", np.abs((dq_np + dk_np + dv_np) - xt.grad.numpy()).max())
worst = max(np.abs(p.grad - dict(twin.named_parameters())[n].grad.numpy()).max()
            for n, p in mha.named_parameters())
print("worst parameter gradient", worst)
print(f"float64 machine epsilon: {np.finfo(np.float64).eps:.1e}")

# %% [markdown]
# Differences of the order of float64's machine epsilon are rounding: the two twins compute the same function and the
# same gradients. **Try it:** change `keep` to hide every key of one query, or make the merge forget
# its transpose, and watch which numbers move. Next: notebook 2 takes one whole encoder layer through
# its backward pass.
