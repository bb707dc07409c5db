"""The pictures the commands draw (`train --plot`, `plot`): loss curve, positional encoding and the
attention maps of any model kind, from an npformer model."""
from __future__ import annotations

import importlib
import os

import numpy as np

__all__ = ["to_numpy_model", "train_plots", "attention_plots", "lm_attention_plots",
           "position_plots", "SINUSOID_ROWS"]

SINUSOID_ROWS = 128          # a sinusoidal table drawn with at least this many positions


def position_plots(model, out_dir) -> list[str]:
    """What the model holds for positions: its learned tables (positions.png, then
    positions_<module>.png for a second one) with their cosine-similarity matrices; or the
    sinusoidal table, drawn over at least SINUSOID_ROWS positions so its waves show."""
    from npformer.layers.positional import LearnedPositionalEncoding, sinusoidal_table
    from npformer.training import plots
    c = model.config
    learned = [(name, getattr(model, name)) for name in ("src_pos", "tgt_pos", "pos")
               if isinstance(getattr(model, name, None), LearnedPositionalEncoding)]
    if not learned:
        n = max(c.max_len, SINUSOID_ROWS)
        return [plots.plot_positional_encoding(
            sinusoidal_table(n, c.d_model), os.path.join(out_dir, "positions.png"),
            title=f"sinusoidal positional encoding ({n} positions; the model uses the first "
                  f"{c.max_len})")]
    paths = []
    for i, (name, module) in enumerate(learned):
        stem = "positions" if i == 0 else f"positions_{name}"
        table = np.asarray(module.weight.data)                          # (max_len, d_model)
        paths.append(plots.plot_positional_encoding(
            table, os.path.join(out_dir, f"{stem}.png"), limit=None,
            title=f"learned position embeddings {name} ({c.max_len} x {c.d_model})"))
        paths.append(plots.plot_position_similarity(
            table, os.path.join(out_dir, f"{stem}_similarity.png"),
            title=f"cosine similarity of the learned positions ({name})"))
    return paths


def to_numpy_model(torch_model):
    """An npformer copy of a torchformer model (same class name, same state_dict keys)."""
    from npformer.io.checkpoint import MODEL_CLASSES
    name = type(torch_model).__name__
    cls = getattr(importlib.import_module(f"npformer.{MODEL_CLASSES[name]}"), name)
    m = cls(torch_model.config)
    m.load_state_dict({k: v.detach().cpu().numpy()
                       for k, v in torch_model.state_dict().items()})
    return m.eval()


def train_plots(model, task, heldout, result, out_dir, start: int = 0,
                label_smoothing: float = 0.0) -> list[str]:
    """`train --plot DIR`: the loss curve (with the evaluations and their accuracy), positions and
    attention maps."""
    from npformer.training import plots
    names = getattr(task, "metric_names", ("token accuracy", "exact-sequence accuracy"))
    accuracy = "classification accuracy" if task.is_classification else names[1]
    steps = result.loss_steps or np.arange(start + 1, start + len(result.losses) + 1)
    paths = [plots.plot_loss_curve(steps,
                                   result.losses,
                                   os.path.join(out_dir, "loss.png"),
                                   eval_steps=[s for s, _ in result.eval_history],
                                   eval_losses=[e.loss for _, e in result.eval_history],
                                   eval_accuracy=[e.sequence_accuracy
                                                  for _, e in result.eval_history],
                                   accuracy_name=accuracy, label_smoothing=label_smoothing)]
    paths += position_plots(model, out_dir)
    paths += attention_plots(model, task, heldout.take(np.arange(1)), out_dir)
    last = result.eval_history[-1][1] if result.eval_history else None
    if getattr(last, "confusion", None):                  # classify on your own text
        paths.append(plots.plot_confusion(last.confusion, last.labels,
                                          os.path.join(out_dir, "confusion.png")))
    return paths


def attention_plots(model, task, examples, out_dir, kinds=None, layers=None, heads=None):
    """Attention maps of the first example: encoder, decoder and cross attention as `kinds` asks
    (the decoder reads what the model generated itself)."""
    from npformer.data.tasks import BOS, EOS, collate
    from npformer.decoding.generate import greedy_decode
    from npformer.training import plots
    kinds = kinds or plots.ATTENTION_KINDS
    if getattr(task, "is_lm", False):                               # CausalLM: the whole line
        return lm_attention_plots(model, task, examples, out_dir, kinds, layers, heads)
    batch = collate(examples)
    if task.is_classification:
        return plots.save_attention_maps(model, batch.src, None, task.vocab, out_dir,
                                         kinds=[k for k in kinds if k == "encoder"], layers=layers,
                                         heads=heads)
    # the decoder reads what it generated itself: BOS + greedy output up to its EOS
    out = greedy_decode(model, batch.src)
    toks = out.tokens[0][: max(int(out.lengths[0]), 1)]
    toks = toks[:-1] if toks.size and toks[-1] == EOS else toks
    tgt = np.concatenate([[BOS], toks])[None, : model.config.max_len].astype(np.int64)  # (1, T)
    return plots.save_attention_maps(model, batch.src, tgt, task.vocab, out_dir, kinds=kinds,
                                     layers=layers, heads=heads,
                                     tgt_vocab=getattr(task, "target_vocab", None))


def lm_attention_plots(model, task, examples, out_dir, kinds, layers, heads) -> list[str]:
    """Decoder self-attention maps of a CausalLM on the first example's whole line; for a
    BertForMaskedLM the encoder self-attention maps of the first sentence with one [MASK]."""
    from npformer.training import plots
    if getattr(task, "is_mlm", False):
        if isinstance(examples, list):                                  # plot --input "abc#c_a"
            from npformer.data.vocab import BOS, EOS
            ids = np.asarray([[BOS] + examples[0] + [EOS]], dtype=np.int64)  # (1, T)
        else:                                                           # a held-out sentence
            ids = task.single_mask(examples.take(np.arange(1)), np.random.default_rng(0)).ids
        return plots.save_attention_maps(model.bert, ids, None, task.vocab, out_dir,
                                         kinds=[k for k in kinds if k == "encoder"],
                                         layers=layers, heads=heads)
    ids = task.collate(examples).ids[:1]                                # (1, T) BOS + line
    n = int((ids[0] != model.config.pad_id).sum())
    return plots.save_attention_maps(model, None, ids[:, :n], task.vocab, out_dir,
                                     kinds=[k for k in kinds if k == "decoder"], layers=layers,
                                     heads=heads)
