"""`npformer plot CKPT --out DIR`: attention heat maps of a trained model for one input, and with
--positions the model's positions (the sinusoidal matrix or a learned table), as PNG files (needs
matplotlib)."""
from __future__ import annotations

import numpy as np

from npformer.cli.common import checkpoint_task
from npformer.cli.errors import CliError
from npformer.cli.figures import attention_plots, position_plots

__all__ = ["cmd_plot", "MODEL_ATTENTION"]

# model class -> the attention kinds it has
MODEL_ATTENTION = {"Transformer": ("encoder", "decoder", "cross"), "EncoderClassifier": ("encoder",),
                   "BertForMaskedLM": ("encoder",), "BertForSequenceClassification": ("encoder",),
                   "CausalLM": ("decoder",)}


def cmd_plot(args) -> int:
    from npformer.data.tasks import examples_from_text
    from npformer.io.checkpoint import load_model
    from npformer.training import plots
    plots.pyplot()                                             # clear message if matplotlib is missing
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    bad = [k for k in kinds if k not in plots.ATTENTION_KINDS]
    if bad or not kinds:
        raise CliError(f"--kinds: expected a comma-separated subset of "
                       f"{','.join(plots.ATTENTION_KINDS)}, got {args.kinds!r}")
    from npformer.io.checkpoint import load_checkpoint
    from npformer.io.files import check_output_dir
    # checked before the checkpoint is read, made once every input is checked (below)
    check_output_dir(args.out, "--out", writes=plots.plots_in(args.out), overwrite=args.overwrite,
                     create=False)
    ckpt = load_checkpoint(args.checkpoint)
    model = load_model(ckpt).eval()
    kinds = kinds_the_model_has(args, kinds, type(model).__name__)
    args.task = None
    task = checkpoint_task(args, ckpt)
    if args.input is not None:
        text = args.input
        if getattr(task, "tokenizer", None) is not None:          # your own text: as generate reads it
            from npformer.cli.text import read_inputs
            text = read_inputs([text], task.tokenizer)[0]
        examples = examples_from_text(task, [text])
    else:
        examples = task.heldout(1).take(np.arange(1))
    c = model.config
    for li in args.layer or []:
        n = c.num_encoder_layers if kinds == ["encoder"] else max(c.num_encoder_layers,
                                                                  c.num_decoder_layers)
        if li >= n:
            raise CliError(f"--layer {li}: the model has {n} layers (indices 0..{n - 1})")
    for h in args.head or []:
        if h >= c.num_heads:
            raise CliError(f"--head {h}: the model has {c.num_heads} heads (0..{c.num_heads - 1})")
    # made only now that every input was read and checked (a refused run leaves no empty folder)
    check_output_dir(args.out, "--out", writes=plots.plots_in(args.out), overwrite=args.overwrite)
    from npformer.cli.plot_outputs import new_plots_removed_on_failure
    with new_plots_removed_on_failure(args.out, "--out", overwrite=args.overwrite):
        paths = attention_plots(model, task, examples, args.out, kinds=kinds, layers=args.layer,
                                heads=args.head)
        if args.positions:
            paths += position_plots(model, args.out)
    for p in paths:
        print(p)
    return 0


def kinds_the_model_has(args, kinds: list[str], model_class: str) -> list[str]:
    """The asked attention kinds the model has. A kind it lacks (`--kinds cross` on a CausalLM) is
    refused in one line when --kinds was given; the default list keeps the ones it has."""
    has = MODEL_ATTENTION.get(model_class)
    if has is None:
        return kinds
    missing = [k for k in kinds if k not in has]
    if missing and "kinds" in (getattr(args, "given", None) or {}):
        article = "an" if model_class[:1] in "AEIOU" else "a"
        raise CliError(f"--kinds {args.kinds}: checkpoint {args.checkpoint} holds {article} {model_class}, "
                       f"which has no {' or '.join(missing)} attention; expected a subset of "
                       f"{','.join(has)}, got {','.join(kinds)}")
    return [k for k in kinds if k in has]
