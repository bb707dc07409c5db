"""Seeing the model: attention heat maps, the positional-encoding matrix, loss curves (PNG files).

matplotlib is imported only when a plot is asked for (and then with the non-interactive "Agg" backend);
without it every function raises ImportError saying `pip install matplotlib`.

    collect_attention(model)                     {"encoder.layers.0.self_attn": (B,H,Tq,Tk), ...}
    plot_attention(weights, q_tokens, k_tokens, path)         one heat map (Tq, Tk)
    save_attention_maps(model, src, tgt, vocab, out_dir, ...)  run the model once, one PNG per
                                                 (kind, layer) with every head side by side, or one head
    plot_positional_encoding(table, path)        the (max_len, d_model) sinusoidal matrix
    plot_loss_curve(steps, losses, path, ...)    training loss (and evaluation points)
    plot_confusion(confusion, labels, path)      a classifier's confusion matrix, counts written in

Attention rows are queries, columns keys; each row of a heat map sums to 1 (0 for a fully masked row).
Every PNG is written by npformer.training.plot_files.save_png (atomic; inside its `writing(replace=
False)` block a file that appeared at the path meanwhile is kept).
"""
from __future__ import annotations

import os
from typing import Sequence

import numpy as np

from npformer.checks.attention_maps import collect_attention
from npformer.training.plot_files import PLOT_NAME, plots_in, save_png, writing  # noqa: F401

ATTENTION_KINDS = ("encoder", "decoder", "cross")
_KIND_SUFFIX = {"encoder": ("encoder", "self_attn"), "decoder": ("decoder", "self_attn"),
                "cross": ("decoder", "cross_attn")}


def pyplot():
    """matplotlib.pyplot with the Agg backend, or a clear ImportError."""
    try:
        import matplotlib
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("plots need matplotlib: pip install matplotlib "
                          "(or, in the repository: pip install -e '.[plots]')") from e
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt
    return plt


def _save(fig, path: str) -> None:
    """fig as a PNG at `path` (npformer.training.plot_files.save_png: atomic, and inside a `writing`
    block never over a file that appeared meanwhile)."""
    save_png(fig, path)


# ---------------------------------------------------------------------------------------------------
# attention modules by name (collect_attention: npformer.checks.attention_maps)
# ---------------------------------------------------------------------------------------------------
def attention_name(kind: str, layer: int) -> str:
    """The module name of one attention: ("cross", 1) -> "decoder.layers.1.cross_attn"."""
    if kind not in ATTENTION_KINDS:
        raise ValueError(f"kind: expected one of {ATTENTION_KINDS}, got {kind!r}")
    stack, attn = _KIND_SUFFIX[kind]
    return f"{stack}.layers.{layer}.{attn}"


# ---------------------------------------------------------------------------------------------------
# single plots
# ---------------------------------------------------------------------------------------------------
FIGURE_MAX_INCHES = 16.0   # the widest attention figure; heads wrap onto more rows beyond it
PANEL_MAX_INCHES = 6.0     # one head's heat map at most (long inputs no longer grow the figure)
MAX_TICK_LABELS = 40       # tokens labelled per axis at most; longer axes label every Nth one


def tick_step(n: int) -> int:
    """Label every tick_step(n)-th of n tokens: 1 up to MAX_TICK_LABELS tokens, then just enough
    that at most MAX_TICK_LABELS labels are drawn."""
    return max(1, -(-int(n) // MAX_TICK_LABELS))


def attention_layout(heads: int, tq: int, tk: int) -> tuple[int, int, float]:
    """(rows, columns, panel inches) of a figure of `heads` heat maps (tq, tk): a panel grows with
    the tokens up to PANEL_MAX_INCHES, and the heads wrap so the figure stays within
    FIGURE_MAX_INCHES wide."""
    panel = min(0.35 * max(tq, tk) + 1.5, PANEL_MAX_INCHES)
    cols = max(1, min(heads, int(FIGURE_MAX_INCHES // panel)))
    return -(-heads // cols), cols, panel


def _heatmap(ax, w: np.ndarray, q_tokens: Sequence[str], k_tokens: Sequence[str], title: str,
             ylabel: bool = True):
    im = ax.imshow(w, cmap="viridis", vmin=0.0, vmax=1.0, aspect="auto")
    for labels, set_ticks, set_labels, rot in ((k_tokens, ax.set_xticks, ax.set_xticklabels, 90),
                                               (q_tokens, ax.set_yticks, ax.set_yticklabels, 0)):
        at = range(0, len(labels), tick_step(len(labels)))
        set_ticks(list(at))
        set_labels([labels[i] for i in at], rotation=rot, fontsize=8, parse_math=False)  # "$$" is text
    ax.set_xlabel("key")
    if ylabel:
        ax.set_ylabel("query")
    ax.set_title(title, fontsize=9)
    return im


def plot_attention(weights: np.ndarray, q_tokens: Sequence[str], k_tokens: Sequence[str], path: str,
                   title: str = "attention") -> str:
    """Heat map of one head's weights (Tq, Tk), axes labelled with the tokens; returns `path`.

    A (H, Tq, Tk) array draws every head, side by side while the figure stays readable (see
    attention_layout; long axes label every tick_step-th token).
    """
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim == 2:
        w = w[None]                                                       # (1, Tq, Tk)
    if w.ndim != 3:
        raise ValueError(f"weights: expected shape (Tq, Tk) or (heads, Tq, Tk), got {w.shape}")
    h, tq, tk = w.shape
    if len(q_tokens) != tq or len(k_tokens) != tk:
        raise ValueError(f"tokens: expected {tq} query and {tk} key labels (the weights' shape "
                         f"{w.shape}), got {len(q_tokens)} and {len(k_tokens)}")
    plt = pyplot()
    rows, cols, size = attention_layout(h, tq, tk)
    fig, axes = plt.subplots(rows, cols, figsize=(size * cols + 1.0, size * rows), squeeze=False)
    im = None
    for i in range(h):
        sub = title if h == 1 else f"{title} head {i}"
        im = _heatmap(axes[i // cols, i % cols], w[i], q_tokens, k_tokens, sub,
                      ylabel=i % cols == 0)
    for i in range(h, rows * cols):
        axes[i // cols, i % cols].axis("off")                             # unused grid cells
    fig.subplots_adjust(wspace=0.35, hspace=0.45)
    fig.colorbar(im, ax=list(axes.ravel()), fraction=0.03)
    _save(fig, path)
    plt.close(fig)
    return path


def plot_confusion(confusion, labels: Sequence[str], path: str,
                   title: str = "held-out confusion matrix") -> str:
    """Counts (C, C), rows the true label and columns the predicted one, each cell written in;
    colours are each row's share, so a rare label's errors show as clearly as a common one's."""
    m = np.asarray(confusion, dtype=np.int64)
    c = len(labels)
    if m.shape != (c, c):
        raise ValueError(f"confusion: expected shape ({c}, {c}) for {c} labels, got {m.shape}")
    share = m / np.maximum(m.sum(axis=1, keepdims=True), 1)                 # (C, C) row shares
    plt = pyplot()
    size = 0.6 * c + 2.5
    fig, ax = plt.subplots(figsize=(size + 1.0, size))
    im = ax.imshow(share, cmap="Blues", vmin=0.0, vmax=1.0)
    ax.set_xticks(range(c))
    ax.set_xticklabels(labels, rotation=90, parse_math=False)      # a label "$5 $10" is text
    ax.set_yticks(range(c))
    ax.set_yticklabels(labels, parse_math=False)
    ax.set_xlabel("predicted")
    ax.set_ylabel("true label")
    ax.set_title(title)
    rows, cols = np.indices(m.shape)
    for i, j, n, s in zip(rows.ravel(), cols.ravel(), m.ravel(), share.ravel()):
        ax.text(j, i, str(n), ha="center", va="center", color="white" if s > 0.5 else "black")
    fig.colorbar(im, ax=ax, fraction=0.046, label="share of the true label's rows")
    _save(fig, path)
    plt.close(fig)
    return path


def plot_positional_encoding(table: np.ndarray, path: str,
                             title: str = "sinusoidal positional encoding",
                             limit: float | None = 1.0) -> str:
    """The (positions, d_model) encoding matrix as an image (position down, dimension across);
    the colours span [-limit, limit] (None: the table's largest magnitude, for learned tables
    whose entries are ~0.02)."""
    t = np.asarray(table, dtype=np.float64)
    if t.ndim != 2:
        raise ValueError(f"table: expected shape (max_len, d_model), got {t.shape}")
    if limit is None:
        limit = float(np.abs(t).max()) or 1.0
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 5))
    im = ax.imshow(t, cmap="RdBu", vmin=-limit, vmax=limit, aspect="auto",
                   interpolation="nearest")
    ax.set_xlabel("dimension i")
    ax.set_ylabel("position pos")
    ax.set_title(title)
    fig.colorbar(im, ax=ax)
    _save(fig, path)
    plt.close(fig)
    return path


def plot_position_similarity(table: np.ndarray, path: str,
                             title: str = "cosine similarity of the position embeddings") -> str:
    """(positions, positions) cosine similarity of a position table's rows: how alike the model
    has made near and far positions."""
    t = np.asarray(table, dtype=np.float64)
    if t.ndim != 2:
        raise ValueError(f"table: expected shape (max_len, d_model), got {t.shape}")
    u = t / np.maximum(np.linalg.norm(t, axis=1, keepdims=True), 1e-300)   # (P, D) unit rows
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 5))
    im = ax.imshow(u @ u.T, cmap="RdBu", vmin=-1.0, vmax=1.0, interpolation="nearest")
    ax.set_xlabel("position")
    ax.set_ylabel("position")
    ax.set_title(title)
    fig.colorbar(im, ax=ax)
    _save(fig, path)
    plt.close(fig)
    return path


def plot_loss_curve(steps: Sequence[int], losses: Sequence[float], path: str, *,
                    eval_steps: Sequence[int] | None = None,
                    eval_losses: Sequence[float] | None = None, title: str = "training loss",
                    label_smoothing: float = 0.0,
                    eval_accuracy: Sequence[float] | None = None,
                    accuracy_name: str = "exact-sequence accuracy") -> str:
    """Training loss against step (log scale), with optional evaluation points, and the held-out
    accuracy (0..1 values, drawn in %) on a second axis. With label_smoothing > 0 the figure says
    that the training loss includes it (its floor is above zero) while the held-out loss does not,
    which is why the two curves sit apart."""
    from matplotlib import ticker
    steps, losses = np.asarray(steps), np.asarray(losses, dtype=np.float64)
    if steps.shape != losses.shape or steps.ndim != 1 or steps.size == 0:
        raise ValueError(f"steps, losses: expected two equal non-empty 1-D sequences, got shapes "
                         f"{steps.shape} and {losses.shape}")
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.4))
    smoothing = f", label smoothing {label_smoothing:g}" if label_smoothing else ""
    ax.plot(steps, losses, lw=1.0, label=f"train (per step{smoothing})")
    if steps.size >= 20:                                # a moving average shows the trend
        k = max(steps.size // 50, 5)
        smooth = np.convolve(losses, np.ones(k) / k, mode="valid")
        ax.plot(steps[k - 1:], smooth, lw=2.0, label=f"train ({k}-step mean)")
    has_eval = eval_steps is not None and eval_losses is not None and len(eval_steps) > 0
    if has_eval:
        ax.plot(eval_steps, eval_losses, "o-", label="held-out (plain cross-entropy)")
    if np.all(losses > 0):
        ax.set_yscale("log")
        plain = ticker.FuncFormatter(lambda v, _: f"{v:g}")   # 2, not 2x10^0
        ax.yaxis.set_major_formatter(plain)
        ax.yaxis.set_minor_formatter(plain)
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy")
    ax.set_title(title)
    handles, labels = ax.get_legend_handles_labels()
    if has_eval and eval_accuracy is not None and len(eval_accuracy) == len(eval_steps):
        ax2 = ax.twinx()
        h = ax2.plot(eval_steps, 100 * np.asarray(eval_accuracy, dtype=np.float64), "s--",
                     color="tab:green", label=f"held-out {accuracy_name}")
        ax2.set_ylim(0, 100)
        ax2.set_ylabel(f"held-out {accuracy_name} (%)")
        handles, labels = handles + h, labels + [h[0].get_label()]
    ax.legend(handles, labels, fontsize=8)
    ax.grid(alpha=0.3)
    if label_smoothing:
        fig.text(0.01, 0.01, f"The training loss includes label smoothing {label_smoothing:g}, "
                             f"which keeps it above zero;\nthe held-out loss is plain "
                             f"cross-entropy, so it can sit well below the training curve.",
                 fontsize=7, va="bottom")
        fig.subplots_adjust(bottom=0.22)
    _save(fig, path)
    plt.close(fig)
    return path


# ---------------------------------------------------------------------------------------------------
# whole-model attention maps
# ---------------------------------------------------------------------------------------------------
def _labels(vocab, ids: np.ndarray) -> list[str]:
    return [vocab.tokens[int(i)] if vocab is not None else str(int(i)) for i in ids]


def save_attention_maps(model, src: np.ndarray, tgt: np.ndarray | None, vocab, out_dir: str, *,
                        kinds: Sequence[str] = ATTENTION_KINDS, layers: Sequence[int] | None = None,
                        heads: Sequence[int] | None = None, example: int = 0,
                        prefix: str = "attn", tgt_vocab=None) -> list[str]:
    """Run `model` once in eval mode and save heat maps of the chosen attentions; returns the paths.

    model   npformer Transformer (src (B,S), tgt_in (B,T)), EncoderClassifier (src) or CausalLM
            (tgt = the ids; src ignored)
    kinds   subset of ("encoder", "decoder", "cross"); kinds the model lacks are skipped
    layers  layer indices (None: all); heads: head indices (None: all heads in one figure per layer,
            else one figure per head)
    example which row of the batch to draw; padding positions are cut off the axes
    tgt_vocab labels the target side when it has its own vocabulary (None: `vocab`)
    Files: {out_dir}/{prefix}_{kind}_layer{l}.png or ..._layer{l}_head{h}.png
    """
    for k in kinds:
        if k not in ATTENTION_KINDS:
            raise ValueError(f"kinds: expected a subset of {ATTENTION_KINDS}, got {k!r}")
    was_training = getattr(model, "training", False)
    model.eval()
    name = type(model).__name__
    try:
        if name == "Transformer":
            if tgt is None:
                raise ValueError("tgt: a Transformer needs target ids (the decoder input) to draw")
            model(src, tgt)
        elif name == "CausalLM":
            model(tgt if tgt is not None else src)
        else:
            model(src)
    finally:
        model.train(was_training)
    weights = collect_attention(model)
    pad = getattr(model.config, "pad_id", None) if hasattr(model, "config") else None

    def cut(ids, v):
        ids = np.asarray(ids)[example]                                       # (T,)
        n = int((ids != pad).sum()) if pad is not None else ids.shape[0]
        return n, _labels(v, ids[:n])

    src_n, src_lab = cut(src, vocab) if src is not None else (0, [])
    tgt_n, tgt_lab = cut(tgt, tgt_vocab or vocab) if tgt is not None else (0, [])
    if name == "CausalLM":
        axes = {"decoder": (tgt_n, tgt_lab, tgt_n, tgt_lab)} if tgt is not None else \
            {"decoder": (src_n, src_lab, src_n, src_lab)}
    else:
        axes = {"encoder": (src_n, src_lab, src_n, src_lab),
                "decoder": (tgt_n, tgt_lab, tgt_n, tgt_lab),
                "cross": (tgt_n, tgt_lab, src_n, src_lab)}
    if layers is not None:
        have = {int(n.split(".")[2]) for n in weights if ".layers." in n}
        bad = sorted(set(layers) - have)
        if bad:
            raise ValueError(f"layers: expected indices among {sorted(have)}, got {bad}")
    if heads is not None and weights:
        num_heads = next(iter(weights.values())).shape[1]
        bad = sorted(h for h in heads if not 0 <= h < num_heads)
        if bad:
            raise ValueError(f"heads: expected indices in [0, {num_heads}), got {bad}")
    paths = []
    for kind in kinds:
        stack, attn = _KIND_SUFFIX[kind]
        found = sorted((int(n.split(".")[2]), n) for n in weights
                       if n.startswith(f"{stack}.layers.") and n.endswith(attn))
        if not found or kind not in axes:
            continue
        nq, ql, nk, kl = axes[kind]
        for li, n in found:
            if layers is not None and li not in layers:
                continue
            w = weights[n][example][:, :nq, :nk]                              # (H, nq, nk)
            if heads is None:
                p = os.path.join(out_dir, f"{prefix}_{kind}_layer{li}.png")
                paths.append(plot_attention(w, ql, kl, p, title=f"{kind} layer {li}"))
                continue
            for h in heads:
                p = os.path.join(out_dir, f"{prefix}_{kind}_layer{li}_head{h}.png")
                paths.append(plot_attention(w[h], ql, kl, p, title=f"{kind} layer {li} head {h}"))
    return paths
