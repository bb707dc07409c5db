"""The `npformer` argument parser: every command, its options, their types, defaults and help.

The parser names each command (args.command); npformer.cli.main runs the matching command module.
"""
from __future__ import annotations

import argparse
import math

from npformer.cli.argtypes import (
    file_or_folder_path,
    file_path,
    float_in,
    folder_path,
    learning_rate,
    non_negative,
    positive,
    positive_float,
    probability,
    seed_int,
)
from npformer.cli.defaults import DEFAULTS, LM_DEFAULTS, MLM_DEFAULTS
from npformer.cli.errors import OneLineParser
from npformer.cli.finetune import add_init_args
from npformer.cli.options import add_backend_args, add_sampling_args, add_task_args
from npformer.cli.suggest import choice_hint
from npformer.cli.text import add_test_data_arg, add_text_args, forbid_abbreviations
from npformer.cli.text_output import add_text_output_args

__all__ = ["build_parser", "CommandParser", "TopParser", "DASH_INPUT_HINT"]

DASH_INPUT_HINT = ("; an INPUT that starts with '-' goes after `--`, which ends the options "
                   "(npformer generate CKPT -- -3+4=)")
# `npformer generate "Once upon a"`: the text is read as the checkpoint, and INPUT is what is missing
ORDER_HINT = "; the checkpoint comes first, then the text: npformer generate CKPT \"Once upon a\""


class CommandParser(OneLineParser):
    """A command's parser: a usage error about `generate`'s INPUT says how to pass an input that
    starts with '-' (argparse reads it as an option otherwise) and, when INPUT is missing, that the
    checkpoint comes first (a lone text was read as the checkpoint)."""

    def error(self, message):
        # "-hello" is read as -h with the value "ello": argparse's message names -h/--help, not INPUT
        about_input = "INPUT" in message or "ignored explicit argument" in message
        if about_input and self.prog.split()[-1] == "generate" and DASH_INPUT_HINT not in message:
            message += (ORDER_HINT if "required: INPUT" in message else "") + DASH_INPUT_HINT
        super().error(message + choice_hint(message))


class TopParser(OneLineParser):
    """The `npformer` parser: a misspelt command is answered with the nearest one (as is a misspelt
    choice of a command's option, by CommandParser)."""

    def error(self, message):
        super().error(message + choice_hint(message))


def build_parser() -> argparse.ArgumentParser:
    fmt = argparse.RawDescriptionHelpFormatter
    parser = TopParser(
        prog="npformer", formatter_class=fmt,
        description="A Transformer written by hand in NumPy (npformer) and twinned in PyTorch "
                    "(torchformer): train it, evaluate it, decode with it, check its gradients, "
                    "look at its attention.",
        epilog="Main job: `npformer train` trains a small encoder-decoder on the reverse task in "
               "pure NumPy\nand prints held-out exact-sequence accuracy and decoded examples.\n"
               "Run `npformer <command> --help` for each command's options.")
    parser.add_argument("--version", action="version", version="%(prog)s " + _version())
    sub = parser.add_subparsers(dest="command", metavar="command", parser_class=CommandParser)
    sub.required = True

    # -- train --------------------------------------------------------------------------------------
    p = sub.add_parser("train", formatter_class=fmt, help="train a model on a synthetic task or your own text "
                                                             "(--data), or fine-tune (--init)",
                       description="Train an encoder-decoder (or, for 'majority', an encoder "
                                   "classifier) on a synthetic task with teacher forcing, Adam "
                                   "(betas 0.9/0.98, eps 1e-9), the warm-up schedule and gradient "
                                   "clipping; then evaluate on held-out sequences (never seen in "
                                   "training) and print decoded examples. Your own text: --task "
                                   "lm|translate|classify --data FILE (docs/TEXT.md).",
                       epilog="Defaults are the main job: `npformer train` (reverse, 1..10 symbols, "
                              "d_model 64,\n2+2 layers, 3000 steps, label smoothing 0.1; one to two minutes on "
                              "one idle core,\n12 minutes measured on a busy one; 100 % held-out exact-sequence "
                              "accuracy for seeds 0, 1\nand 2).\n"
                              "Save and continue a run: `npformer train --steps 500 --save "
                              "run.npz`, then\n`npformer train --resume run.npz --steps 500 --save "
                              "run2.npz` (the same weights as 1000 steps in one run).")
    add_task_args(p)
    add_text_args(p)
    add_init_args(p)
    g = p.add_argument_group("model")
    g.add_argument("--d-model", type=positive, default=DEFAULTS["d_model"], metavar="D",
                   help="model width (default: %(default)s)")
    g.add_argument("--heads", type=positive, default=DEFAULTS["heads"], metavar="H",
                   help="attention heads; must divide d_model (default: %(default)s)")
    g.add_argument("--d-ff", type=positive, default=DEFAULTS["d_ff"], metavar="F",
                   help="feed-forward width (default: %(default)s)")
    g.add_argument("--layers", type=positive, default=DEFAULTS["layers"], metavar="N",
                   help="encoder and decoder layers each (default: %(default)s)")
    g.add_argument("--encoder-layers", type=positive, default=None, metavar="N",
                   help="encoder layers (default: --layers)")
    g.add_argument("--decoder-layers", type=positive, default=None, metavar="N",
                   help="decoder layers (default: --layers)")
    g.add_argument("--dropout", type=probability, default=DEFAULTS["dropout"], metavar="P",
                   help="dropout rate (default: %(default)s)")
    g.add_argument("--activation", choices=("relu", "gelu", "gelu_tanh"),
                   default=DEFAULTS["activation"], help="feed-forward activation (default: "
                                                        "%(default)s)")
    g.add_argument("--norm-first", action="store_true", help="pre-norm layers (default: post-norm, "
                                                             "as the paper)")
    g.add_argument("--positional", choices=("sinusoidal", "learned"), default="sinusoidal",
                   help="positional encoding (default: %(default)s)")
    g = p.add_argument_group("optimisation")
    g.add_argument("--steps", type=non_negative, default=None, metavar="N",
                   help=f"optimizer steps (default: {DEFAULTS['steps']}; --task lm: "
                        f"{LM_DEFAULTS['steps']}; --task mlm: {MLM_DEFAULTS['steps']})")
    g.add_argument("--batch-size", type=positive, default=DEFAULTS["batch_size"], metavar="B",
                   help="sequences per step (default: %(default)s)")
    g.add_argument("--lr", type=learning_rate, default=None,
                   help=f"peak learning rate, reached after the warm-up (default: {DEFAULTS['lr']}; "
                        f"--task lm: {LM_DEFAULTS['lr']}; --task mlm: {MLM_DEFAULTS['lr']})")
    g.add_argument("--warmup", type=positive, default=None, metavar="N",
                   help=f"warm-up steps; the rate then decays as step^-0.5 (default: "
                        f"{DEFAULTS['warmup']}; --task lm: {LM_DEFAULTS['warmup']}; --task mlm: "
                        f"{MLM_DEFAULTS['warmup']})")
    g.add_argument("--label-smoothing", type=probability, default=DEFAULTS["label_smoothing"],
                   metavar="EPS", help="label smoothing of the training loss (default: %(default)s)")
    g.add_argument("--clip-norm", type=positive_float, default=DEFAULTS["clip_norm"], metavar="C",
                   help="clip the global gradient norm to C (default: %(default)s)")
    g.add_argument("--seed", type=seed_int, default=DEFAULTS["seed"],
                   help="seeds the model, the batches and the held-out split (default: %(default)s)")
    add_backend_args(p)
    g = p.add_argument_group("output")
    g.add_argument("--eval-size", type=positive, default=DEFAULTS["eval_size"], metavar="N",
                   help="held-out sequences to evaluate on, at most (your text: --task lm's "
                        "validation windows of --context tokens, translate and classify's "
                        "held-out rows) (default: %(default)s)")
    g.add_argument("--eval-every", type=non_negative, default=0, metavar="N",
                   help="also evaluate every N steps (default: only at the end)")
    g.add_argument("--examples", type=non_negative, default=DEFAULTS["examples"], metavar="N",
                   help="decoded held-out examples to print (default: %(default)s)")
    g.add_argument("--save", type=file_path, metavar="PATH", help="write a checkpoint (.npz: config, weights, "
                                                  "optimizer, schedule, data order, task) that "
                                                  "--resume continues; checked before training, "
                                                  "missing folders are created")
    g.add_argument("--overwrite", action="store_true",
                   help="let --save replace an existing file and --plot the plots already in "
                        "its folder (refused otherwise, before training)")
    g.add_argument("--resume", type=file_path, metavar="CKPT", default=None,
                   help="continue the run saved in CKPT for --steps more steps (model, task and "
                        "optimisation settings come from CKPT; giving those options is an error); "
                        "N steps then M resumed give the same weights as N+M in one run")
    g.add_argument("--plot", type=folder_path, metavar="DIR", help="write loss curve, attention maps and the "
                                                 "positional encoding as PNGs into DIR")
    g.add_argument("--no-progress", action="store_true", help="no progress bar")
    g = p.add_argument_group("parallelism")
    g.add_argument("--data-parallel", choices=("auto", "on", "off"), default="auto",
                   help="numpy backend with --threads N > 1: split each batch over N replicas, one "
                        "thread each (npformer.training.parallel); auto: when each replica's activations "
                        "(rows x tokens x d_model) reach 65536 elements, below which one model is "
                        "measured faster (default: %(default)s)")
    g.add_argument("--no-fast-elementwise", action="store_true",
                   help="numpy backend: run the plain layers' elementwise passes (GELU, LayerNorm, "
                        "softmax, loss, dropout) instead of npformer.fast's variants, which give "
                        "the same bits faster, split over --threads threads (one per replica with "
                        "data parallelism); see docs/PERFORMANCE.md")
    g.add_argument("--nproc", type=positive, default=1, metavar="N",
                   help="torch backend: train with N processes (DistributedDataParallel, gloo on "
                        "CPU, NCCL on CUDA); Ctrl-C or SIGTERM stops every process (default: "
                        "%(default)s)")

    # -- evaluate -----------------------------------------------------------------------------------
    p = sub.add_parser("evaluate", formatter_class=fmt, help="evaluate a checkpoint on held-out data",
                       description="Load a checkpoint written by npformer train --save (either "
                                   "backend) and report held-out loss, token accuracy and "
                                   "exact-sequence accuracy (greedy decoding); a translation "
                                   "checkpoint reports BLEU and chrF, a classifier accuracy and "
                                   "macro F1, a language model of your text perplexity and bits per "
                                   "character. The task comes from the checkpoint; the options below "
                                   "override parts of it.")
    p.add_argument("checkpoint", type=file_path, help="checkpoint file (.npz)")
    add_task_args(p, defaults=False)
    add_test_data_arg(p)
    add_backend_args(p, dtype_default=None)
    p.add_argument("--eval-size", type=positive, default=DEFAULTS["eval_size"], metavar="N",
                   help="held-out sequences, at most (your text: validation windows or held-out "
                        "rows) (default: %(default)s)")
    p.add_argument("--examples", type=non_negative, default=DEFAULTS["examples"], metavar="N",
                   help="decoded examples to print (default: %(default)s)")

    # -- generate -----------------------------------------------------------------------------------
    p = sub.add_parser("generate", formatter_class=fmt,
                       help="decode with a checkpoint or a Hugging Face folder: reverse, "
                            "continue text, translate, classify, fill [MASK]",
                       description="Decode source sequences with a trained encoder-decoder, "
                                   "continue prompts with a CausalLM, or classify with an "
                                   "EncoderClassifier. Inputs are written in the task's symbols "
                                   "(the main job's: a..j), e.g. `npformer generate model.npz "
                                   "abcd jihgf`. An input that starts with '-' goes after `--`, "
                                   "which ends the options: npformer generate lm.npz -- -3+4=")
    p.add_argument("checkpoint", type=file_or_folder_path,
                   help="checkpoint file (.npz), or a Hugging Face GPT-2 folder "
                                      "(config.json, model.safetensors, vocab.json, merges.txt): "
                                      "INPUT is then text and the continuation is printed as text; "
                                      "or a BERT folder (config.json, model.safetensors, "
                                      "vocab.txt): each [MASK] in INPUT is filled, the --top-k "
                                      "candidates (default 5) printed with their probabilities")
    p.add_argument("inputs", nargs="+", metavar="INPUT",
                   help="input sequence(s): for a synthetic task, letters (abc) or space-separated "
                        "tokens ('a b c'); for a model of your own text (lm, translate, classify) "
                        "or a Hugging Face folder, the text itself, quoted")
    p.add_argument("--beam", type=positive, default=1, metavar="K",
                   help="beam size (1: greedy; default: %(default)s)")
    p.add_argument("--alpha", type=float_in(0.0, math.inf), default=0.6,
                   help="beam length penalty alpha, GNMT lp = ((5+len)/6)^alpha "
                        "(default: %(default)s)")
    p.add_argument("--max-new-tokens", type=positive, default=None, metavar="N",
                   help="generated tokens at most (default: as many as max_len allows after the "
                        "prompt; 40 for a Hugging Face folder)")
    p.add_argument("--no-cache", action="store_true",
                   help="recompute the whole prefix every step instead of using the KV cache")
    p.add_argument("--no-fast-decoding", action="store_true",
                   help="numpy backend: decode with the plain model (every Linear as x @ W^T, "
                        "logits of every fed position) instead of npformer.fast's decoding "
                        "variants (few-rows products, the last position's logits only), which "
                        "give the same tokens and the logits to rounding; see docs/PERFORMANCE.md")
    add_backend_args(p, dtype_default=None)
    add_sampling_args(p)
    add_text_output_args(p)

    # -- gradcheck ----------------------------------------------------------------------------------
    p = sub.add_parser("gradcheck", formatter_class=fmt,
                       help="finite-difference check of every component and model",
                       description="Run npformer.checks.gradcheck (central differences, float64, random "
                                   "upstream gradient) over every layer and model on tiny configs "
                                   "(padding and causal masks, fully masked rows, cross-attention "
                                   "with Tq != Tk, dropout with a fixed mask) and print a table. "
                                   "Exit status 1 when any check fails.")
    p.add_argument("--tol", type=positive_float, default=1e-6,
                   help="largest accepted relative error (default: %(default)s)")
    p.add_argument("--seed", type=seed_int, default=0, help="seed of inputs and upstream "
                                                                "gradients (default: %(default)s)")
    p.add_argument("--max-per-tensor", type=positive, default=40, metavar="N",
                   help="finite-difference at most N entries per tensor (default: %(default)s)")
    p.add_argument("--only", metavar="NAME", default=None,
                   help="run only the checks whose name contains NAME (case-insensitive; default: "
                        "every check)")
    p.add_argument("--verbose", action="store_true", help="print every tensor's error")

    # -- plot ---------------------------------------------------------------------------------------
    p = sub.add_parser("plot", formatter_class=fmt, help="attention heat maps (--positions: and positions)",
                       description="Draw attention weights of a trained model for one input "
                                   "(encoder self-attention, decoder self-attention, "
                                   "cross-attention; every head side by side or one per file) and, "
                                   "with --positions, the model's positions. Needs matplotlib "
                                   "(pip install matplotlib, the [plots] extra).")
    p.add_argument("checkpoint", type=file_path, help="checkpoint file (.npz)")
    p.add_argument("--out", type=folder_path, required=True, metavar="DIR", help="folder for the PNG files")
    p.add_argument("--overwrite", action="store_true",
                   help="replace the plots already in DIR (refused otherwise, before loading)")
    p.add_argument("--input", metavar="TEXT", default=None,
                   help="input sequence (default: the first held-out example of the task)")
    p.add_argument("--kinds", default="encoder,decoder,cross", metavar="LIST",
                   help="comma-separated subset of encoder,decoder,cross (default: %(default)s)")
    p.add_argument("--layer", type=non_negative, action="append", default=None, metavar="L",
                   help="layer index to draw (repeatable; default: all)")
    p.add_argument("--head", type=non_negative, action="append", default=None, metavar="H",
                   help="head index, one file per head (repeatable; default: all heads in one "
                        "figure)")
    p.add_argument("--positions", action="store_true",
                   help="also draw the model's positions: its learned position embeddings and "
                        "their cosine similarity, or the sinusoidal table (positions*.png)")
    forbid_abbreviations(parser)                   # `--data` is never read as `--data-parallel`
    return parser


def _version() -> str:
    try:
        from importlib.metadata import version
        return version("npformer")
    except Exception:  # noqa: BLE001 - not installed: running from a checkout
        return "0.1.0 (source)"
