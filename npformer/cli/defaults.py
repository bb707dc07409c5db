"""Default settings of `npformer train`: the main job's (a small encoder-decoder learning to reverse
sequences of 1..10 symbols in pure NumPy) and those of the language-model tasks where they differ.
How the main job's values were chosen (seeds, accuracies): docs/reliability/usability.md,
"Defaults of npformer train".
"""
from __future__ import annotations

__all__ = ["DEFAULTS", "LM_DEFAULTS", "MLM_DEFAULTS", "fill_task_defaults"]

DEFAULTS = dict(task="reverse", num_symbols=10, min_len=1, max_len=10, num_pairs=200,
                d_model=64, heads=4, d_ff=128, layers=2, dropout=0.0, activation="relu",
                steps=3000, batch_size=64, lr=1e-3, warmup=200, label_smoothing=0.1, clip_norm=1.0,
                seed=0, eval_size=500, examples=5, threads=1)

# `npformer train --task lm` defaults where they differ from DEFAULTS; the rest (d_model 64,
# 4 heads, d_ff 128, 2 layers, batch 64, post-norm ReLU, sinusoidal) is shared.
# How they were chosen: README, "Language models from the command line".
LM_DEFAULTS = dict(steps=5000, lr=3e-3, warmup=400)
MLM_DEFAULTS = dict(steps=2000, lr=3e-3, warmup=400)               # --task mlm (BertForMaskedLM)
_TASK_DEFAULTS = {"lm": LM_DEFAULTS, "mlm": MLM_DEFAULTS}


def fill_task_defaults(args, defaults: dict) -> None:
    """Options left unset (None) take the task's default: LM_DEFAULTS for --task lm (or a --resume
    file holding the lm task), else `defaults` (the seq2seq main job's)."""
    name = getattr(args, "task", None)
    if getattr(args, "resume", None):
        try:
            from npformer.io.checkpoint import load_checkpoint
            name = load_checkpoint(args.resume).metadata.get("task", {}).get("name")
        except Exception:  # noqa: BLE001 - the real load reports what is wrong with the file
            pass
    for key in LM_DEFAULTS:
        if getattr(args, key, None) is None:
            setattr(args, key, _TASK_DEFAULTS.get(name, defaults)[key])
