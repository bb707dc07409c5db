"""The `npformer` command (also `python -m npformer`).

    npformer train                 train the default model (reverse task, pure NumPy) and report
    npformer train --backend torch the same run with torchformer (CPU or --device cuda)
    npformer evaluate CKPT         held-out loss / token accuracy / exact-sequence accuracy
    npformer generate CKPT abc ... decode inputs greedily or with --beam K
    npformer gradcheck             finite-difference check of every component and model (float64)
    npformer plot CKPT --out DIR   attention heat maps and the positional-encoding matrix

Every subcommand has --help. Bad arguments (and unusable checkpoint files) print one line saying what
is wrong and exit with status 2; a failed gradient check exits with 1.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time

import numpy as np

# The main job's embedded defaults: a small encoder-decoder (d_model 64, 2+2 layers, 170k parameters)
# that learns to reverse sequences of 1..10 symbols over a 10-letter alphabet in pure NumPy: 3000 steps
# x 64 sequences, about 100 s on one idle core. Measured over seeds 0, 1, 2 (docs/RELIABILITY.md
# and the README): 2000 steps without label smoothing reached 98.6 / 99.6 / 99.2 % exact-sequence
# accuracy on an AMD EPYC (100 % only on some CPUs: the runs are bit-identical per machine, not across
# BLAS builds) and spiked late; with label smoothing 0.1 all three seeds reach 100.00 % at step 3000
# (and at 1500; between, evaluations fluctuate from 99.2 to 100 %).
DEFAULTS = dict(task="reverse", num_symbols=10, min_len=1, max_len=10, num_pairs=200,
                d_model=64, heads=4, d_ff=128, layers=2, dropout=0.0, activation="relu",
                steps=3000, batch_size=64, lr=1e-3, warmup=200, label_smoothing=0.1, clip_norm=1.0,
                seed=0, eval_size=500, examples=5, threads=1)
# --task lm (npformer.data.lm_data) replaces these when they are not given: see npformer/lm_cli.py
from npformer.cli import backends  # noqa: E402
from npformer.training.blas import set_blas_threads  # noqa: E402
from npformer.cli.lm import LM_DEFAULTS  # noqa: E402
from npformer.cli.guards import (check_distinct_outputs, check_fits_memory,  # noqa: E402
                                 check_nproc, check_threads, given_options, interrupted_message,
                                 refuse_fixed_on_resume, sigterm_as_interrupt)


class CliError(Exception):
    """A problem with the command line: printed as one line, exit status 2."""


# ---------------------------------------------------------------------------------------------------
# argument types
# ---------------------------------------------------------------------------------------------------
def _int_at_least(lo: int):
    def parse(s: str) -> int:
        try:
            v = int(s)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {s!r}") from None
        if v < lo:
            raise argparse.ArgumentTypeError(f"expected an integer >= {lo}, got {v}")
        return v
    parse.__name__ = f"int>={lo}"
    return parse


def _float_in(lo: float, hi: float, lo_open: bool = False, hi_open: bool = True):
    def parse(s: str) -> float:
        try:
            v = float(s)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {s!r}") from None
        ok = (v > lo if lo_open else v >= lo) and (v < hi if hi_open else v <= hi)
        if not ok or math.isnan(v):
            a, b = ("(" if lo_open else "["), (")" if hi_open else "]")
            raise argparse.ArgumentTypeError(f"expected a number in {a}{lo}, {hi}{b}, got {s}")
        return v
    parse.__name__ = "float"
    return parse


positive = _int_at_least(1)
non_negative = _int_at_least(0)
probability = _float_in(0.0, 1.0)
positive_float = _float_in(0.0, math.inf, lo_open=True)


# ---------------------------------------------------------------------------------------------------
# threads
# ---------------------------------------------------------------------------------------------------
# ---------------------------------------------------------------------------------------------------
# parser
# ---------------------------------------------------------------------------------------------------
def _add_task_args(p: argparse.ArgumentParser, defaults: bool = True) -> None:
    from npformer.data.tasks import TASKS
    from npformer.data.lm_data import LM_TASKS
    d = DEFAULTS if defaults else {}
    g = p.add_argument_group("task")
    g.add_argument("--task", choices=TASKS + LM_TASKS, default=d.get("task"),
                   help="synthetic task: copy, reverse, sort (seq2seq), pairs (random pairs, "
                        "memorised), majority (classification), lm (addition lines 12+7=19, "
                        "GPT-style CausalLM)" + (" (default: %(default)s)"
                                                                   if defaults else
                                                                   " (default: the checkpoint's)"))
    g.add_argument("--num-symbols", type=positive, default=d.get("num_symbols"), metavar="N",
                   help="alphabet size" + (" (default: %(default)s)" if defaults else ""))
    g.add_argument("--min-len", type=positive, default=d.get("min_len"), metavar="N",
                   help="shortest source" + (" (default: %(default)s)" if defaults else ""))
    g.add_argument("--max-len", type=positive, default=d.get("max_len"), metavar="N",
                   help="longest source" + (" (default: %(default)s)" if defaults else ""))
    g.add_argument("--num-pairs", type=positive, default=d.get("num_pairs"), metavar="N",
                   help="size of the 'pairs' table" + (" (default: %(default)s)" if defaults
                                                        else ""))
    g.add_argument("--max-number", type=_int_at_least(2), default=None, metavar="N",
                   help="--task lm: operands are 0..N-1 (default: 100)")


def _add_backend_args(p: argparse.ArgumentParser, dtype_default: str | None = "float32") -> None:
    g = p.add_argument_group("backend")
    g.add_argument("--backend", choices=("numpy", "torch"), default="numpy",
                   help="numpy: npformer (hand-written backward); torch: torchformer "
                        "(default: %(default)s)")
    g.add_argument("--device", default="cpu",
                   help="torch device, e.g. cpu, cuda, cuda:0 (torch backend only; default: cpu)")
    g.add_argument("--dtype", choices=("float32", "float64"), default=dtype_default,
                   help="parameter and activation dtype" + (" (default: %(default)s)"
                                                            if dtype_default else
                                                            " (default: the checkpoint's)"))
    g.add_argument("--threads", type=positive, default=DEFAULTS["threads"], metavar="N",
                   help="BLAS / torch CPU threads, at most the CPUs available (default: "
                        "%(default)s; small matrices run fastest on one)")


def build_parser() -> argparse.ArgumentParser:
    fmt = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(
        prog="npformer", formatter_class=fmt,
        description="A Transformer written by hand in NumPy (npformer) and twinned in PyTorch "
                    "(torchformer): train it, evaluate it, decode with it, check its gradients, "
                    "look at its attention.",
        epilog="Main job: `npformer train` trains a small encoder-decoder on the reverse task in "
               "pure NumPy\nand prints held-out exact-sequence accuracy and decoded examples.\n"
               "Run `npformer <command> --help` for each command's options.")
    parser.add_argument("--version", action="version", version="%(prog)s " + _version())
    sub = parser.add_subparsers(dest="command", metavar="command")
    sub.required = True

    # -- train --------------------------------------------------------------------------------------
    p = sub.add_parser("train", formatter_class=fmt, help="train a model on a synthetic task",
                       description="Train an encoder-decoder (or, for 'majority', an encoder "
                                   "classifier) on a synthetic task with teacher forcing, Adam "
                                   "(betas 0.9/0.98, eps 1e-9), the warm-up schedule and gradient "
                                   "clipping; then evaluate on held-out sequences (never seen in "
                                   "training) and print decoded examples.",
                       epilog="Defaults are the main job: `npformer train` (reverse, 1..10 symbols, "
                              "d_model 64,\n2+2 layers, 3000 steps, label smoothing 0.1; about 100 s on one idle "
                              "core, 12 minutes\nmeasured on a busy one; 100 % held-out "
                              "exact-sequence accuracy for seeds 0, 1 and 2).\n"
                              "Save and continue a run: `npformer train --steps 500 --save "
                              "run.npz`, then\n`npformer train --resume run.npz --steps 500 --save "
                              "run2.npz` (the same weights as 1000 steps in one run).")
    _add_task_args(p)
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
                        f"{LM_DEFAULTS['steps']})")
    g.add_argument("--batch-size", type=positive, default=DEFAULTS["batch_size"], metavar="B",
                   help="sequences per step (default: %(default)s)")
    g.add_argument("--lr", type=positive_float, default=None,
                   help=f"peak learning rate, reached after the warm-up (default: {DEFAULTS['lr']}; "
                        f"--task lm: {LM_DEFAULTS['lr']})")
    g.add_argument("--warmup", type=positive, default=None, metavar="N",
                   help=f"warm-up steps; the rate then decays as step^-0.5 (default: "
                        f"{DEFAULTS['warmup']}; --task lm: {LM_DEFAULTS['warmup']})")
    g.add_argument("--label-smoothing", type=probability, default=DEFAULTS["label_smoothing"],
                   metavar="EPS", help="label smoothing of the training loss (default: %(default)s)")
    g.add_argument("--clip-norm", type=positive_float, default=DEFAULTS["clip_norm"], metavar="C",
                   help="clip the global gradient norm to C (default: %(default)s)")
    g.add_argument("--seed", type=non_negative, default=DEFAULTS["seed"],
                   help="seeds the model, the batches and the held-out split (default: %(default)s)")
    _add_backend_args(p)
    g = p.add_argument_group("output")
    g.add_argument("--eval-size", type=positive, default=DEFAULTS["eval_size"], metavar="N",
                   help="held-out sequences to evaluate on (default: %(default)s)")
    g.add_argument("--eval-every", type=non_negative, default=0, metavar="N",
                   help="also evaluate every N steps (default: only at the end)")
    g.add_argument("--examples", type=non_negative, default=DEFAULTS["examples"], metavar="N",
                   help="decoded held-out examples to print (default: %(default)s)")
    g.add_argument("--save", metavar="PATH", help="write a checkpoint (.npz: config, weights, "
                                                  "optimizer, schedule, data order, task) that "
                                                  "--resume continues; checked before training, "
                                                  "missing folders are created")
    g.add_argument("--overwrite", action="store_true",
                   help="let --save replace an existing file (refused otherwise, before training)")
    g.add_argument("--resume", metavar="CKPT", default=None,
                   help="continue the run saved in CKPT for --steps more steps (model, task and "
                        "optimisation settings come from CKPT; giving those options is an error); "
                        "N steps then M resumed give the same weights as N+M in one run")
    g.add_argument("--plot", metavar="DIR", help="write loss curve, attention maps and the "
                                                 "positional encoding as PNGs into DIR")
    g.add_argument("--no-progress", action="store_true", help="no progress bar")
    g = p.add_argument_group("parallelism")
    g.add_argument("--data-parallel", choices=("auto", "on", "off"), default="auto",
                   help="numpy backend with --threads N > 1: split each batch over N replicas, one "
                        "thread each (npformer.training.parallel); auto: when each replica's activations "
                        "(rows x tokens x d_model) reach 65536 elements, below which one model is "
                        "measured faster (default: %(default)s)")
    g.add_argument("--nproc", type=positive, default=1, metavar="N",
                   help="torch backend: train with N processes (DistributedDataParallel, gloo on "
                        "CPU, NCCL on CUDA) launched through torchrun (default: %(default)s)")
    p.set_defaults(func=cmd_train)

    # -- evaluate -----------------------------------------------------------------------------------
    p = sub.add_parser("evaluate", formatter_class=fmt, help="evaluate a checkpoint on held-out data",
                       description="Load a checkpoint written by npformer train --save (either "
                                   "backend) and report held-out loss, token accuracy and "
                                   "exact-sequence accuracy (greedy decoding). The task comes from "
                                   "the checkpoint; the options below override parts of it.")
    p.add_argument("checkpoint", help="checkpoint file (.npz)")
    _add_task_args(p, defaults=False)
    _add_backend_args(p, dtype_default=None)
    p.add_argument("--eval-size", type=positive, default=DEFAULTS["eval_size"], metavar="N",
                   help="held-out sequences (default: %(default)s)")
    p.add_argument("--examples", type=non_negative, default=DEFAULTS["examples"], metavar="N",
                   help="decoded examples to print (default: %(default)s)")
    p.set_defaults(func=cmd_evaluate)

    # -- generate -----------------------------------------------------------------------------------
    p = sub.add_parser("generate", formatter_class=fmt, help="decode input sequences",
                       description="Decode source sequences with a trained encoder-decoder, "
                                   "continue prompts with a CausalLM, or classify with an "
                                   "EncoderClassifier. Inputs are written in the task's symbols "
                                   "(the main job's: a..j), e.g. `npformer generate model.npz "
                                   "abcd jihgf`.")
    p.add_argument("checkpoint", help="checkpoint file (.npz)")
    p.add_argument("inputs", nargs="+", metavar="INPUT",
                   help="input sequence(s): letters (abc) or space-separated tokens ('a b c')")
    p.add_argument("--beam", type=positive, default=1, metavar="K",
                   help="beam size (1: greedy; default: %(default)s)")
    p.add_argument("--alpha", type=_float_in(0.0, math.inf), default=0.6,
                   help="beam length penalty alpha, GNMT lp = ((5+len)/6)^alpha "
                        "(default: %(default)s)")
    p.add_argument("--max-new-tokens", type=positive, default=None, metavar="N",
                   help="generated tokens at most (default: as many as max_len allows)")
    p.add_argument("--no-cache", action="store_true",
                   help="recompute the whole prefix every step instead of using the KV cache")
    _add_backend_args(p, dtype_default=None)
    from npformer.cli.lm import add_sampling_args
    add_sampling_args(p)
    p.set_defaults(func=cmd_generate)

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
    p.add_argument("--seed", type=non_negative, default=0, help="seed of inputs and upstream "
                                                                "gradients (default: %(default)s)")
    p.add_argument("--max-per-tensor", type=positive, default=40, metavar="N",
                   help="finite-difference at most N entries per tensor (default: %(default)s)")
    p.add_argument("--only", metavar="NAME", default=None,
                   help="run only the checks whose name contains NAME (case-insensitive)")
    p.add_argument("--verbose", action="store_true", help="print every tensor's error")
    p.set_defaults(func=cmd_gradcheck)

    # -- plot ---------------------------------------------------------------------------------------
    p = sub.add_parser("plot", formatter_class=fmt, help="attention heat maps and positional encoding",
                       description="Draw attention weights of a trained model for one input "
                                   "(encoder self-attention, decoder self-attention, "
                                   "cross-attention; every head side by side or one per file) and "
                                   "the sinusoidal positional-encoding matrix. Needs matplotlib "
                                   "(pip install npformer[plots]).")
    p.add_argument("checkpoint", help="checkpoint file (.npz)")
    p.add_argument("--out", required=True, metavar="DIR", help="folder for the PNG files")
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
                   help="also draw the sinusoidal positional-encoding matrix (positions.png)")
    p.set_defaults(func=cmd_plot)
    return parser


def _version() -> str:
    try:
        from importlib.metadata import version
        return version("npformer")
    except Exception:  # noqa: BLE001 - not installed: running from a checkout
        return "0.1.0 (source)"


# ---------------------------------------------------------------------------------------------------
# shared helpers
# ---------------------------------------------------------------------------------------------------
def _task_from(args, base: dict | None = None):
    """A Task from --task/... options over `base` (a checkpoint's task metadata)."""
    fields = dict(base or {})
    for opt, key in (("task", "name"), ("num_symbols", "num_symbols"), ("min_len", "min_len"),
                     ("max_len", "max_len"), ("num_pairs", "num_pairs"),
                     ("max_number", "max_number")):
        v = getattr(args, opt, None)
        if v is not None:
            fields[key] = v
    if "seed" not in fields and getattr(args, "seed", None) is not None:
        fields["seed"] = args.seed
    from npformer.data.registry import make_any_task                     # seq2seq or language-model task
    return make_any_task(**fields)


def _task_metadata(task) -> dict:
    if hasattr(task, "metadata"):                                  # language-model tasks
        return task.metadata()
    return dict(name=task.name, num_symbols=task.num_symbols, min_len=task.min_len,
                max_len=task.max_len, seed=task.seed, heldout_fraction=task.heldout_fraction,
                num_pairs=task.num_pairs)


def _torch(args):
    """Import torch for --backend torch, with a clear message when it is missing; set threads and
    check the device."""
    try:
        import torch
    except ImportError:
        raise CliError("--backend torch needs PyTorch: pip install npformer[torch]") from None
    torch.set_num_threads(args.threads)
    try:
        dev = torch.device(args.device)
    except RuntimeError:
        raise CliError(f"--device: expected a torch device such as cpu or cuda, got "
                       f"{args.device!r}") from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise CliError(f"--device {args.device}: CUDA is not available on this machine")
    if dev.type not in ("cpu", "cuda"):
        raise CliError(f"--device: expected cpu or cuda[:N], got {args.device!r}")
    return torch, dev


def _check_backend(args) -> None:
    if args.backend == "numpy" and args.device != "cpu":
        raise CliError(f"--device {args.device}: the numpy backend runs on the CPU only (use "
                       f"--backend torch)")
    if args.backend == "numpy":
        set_blas_threads(args.threads)


def _load(args):
    """(model, checkpoint) from args.checkpoint in the chosen backend (dtype override allowed)."""
    from npformer.io.checkpoint import load_checkpoint
    ckpt = load_checkpoint(args.checkpoint)
    if ckpt.config is None:
        raise CliError(f"checkpoint {args.checkpoint}: has no model config")
    if args.backend == "torch":
        torch, dev = _torch(args)
        model = backends.module("torch", "checkpoint").load_model(ckpt, device=dev, dtype=args.dtype)
    else:
        from npformer.io.checkpoint import load_model, model_class_for
        if args.dtype is not None and args.dtype != ckpt.config.dtype:
            cls = model_class_for(ckpt)
            model = load_model(ckpt, model_class=lambda c: cls(c.replace(dtype=args.dtype)))
        else:
            model = load_model(ckpt)
    model.eval()
    return model, ckpt


def _describe(model) -> str:
    c = model.config
    n = model.num_parameters()
    layers = f"{c.num_encoder_layers}+{c.num_decoder_layers} layers" \
        if type(model).__name__ == "Transformer" else \
        (f"{c.num_encoder_layers} layers" if type(model).__name__ in ("EncoderClassifier",
                                                                      "BertForMaskedLM")
         else f"{c.num_decoder_layers} layers")
    return (f"{type(model).__name__}: d_model={c.d_model} heads={c.num_heads} d_ff={c.d_ff} "
            f"{layers} dropout={c.dropout} {c.dtype}, {n:,} parameters")


def _print_examples(examples, classification: bool) -> None:
    if not examples:
        return
    if classification:
        print("examples (input -> label / predicted):")
        for src, tgt, pred in examples:
            mark = "ok" if tgt == pred else "WRONG"
            print(f"  {src:<16} -> {tgt} / {pred}   {mark}")
        return
    print("examples (source -> target / decoded):")
    w = max(len(s) for s, _, _ in examples)
    for src, tgt, pred in examples:
        mark = "ok" if tgt == pred else "WRONG"
        print(f"  {src:<{w}} -> {tgt:<{w}} / {pred:<{w}}  {mark}")


def _print_eval(ev, task) -> None:
    what = "memorised table" if task.memorise else "held-out"
    tok, seq = getattr(task, "metric_names", ("token accuracy", "exact-sequence accuracy"))
    print(f"{what}: loss {ev.loss:.4f}  {tok} {100 * ev.token_accuracy:.2f}%  "
          f"{seq} {100 * ev.sequence_accuracy:.2f}%  "
          f"({ev.num_examples} sequences)")


# ---------------------------------------------------------------------------------------------------
# train
# ---------------------------------------------------------------------------------------------------
def _check_outputs(args) -> None:
    """Every output path of `train` checked before any work (one-line errors naming the option)."""
    from npformer.io.files import check_output_dir, check_output_file
    check_distinct_outputs(args)
    if args.save:
        check_output_file(args.save, "--save", overwrite=args.overwrite)
    if args.plot:
        from npformer.training import plots
        plots._pyplot()                               # fail now, not after training
        check_output_dir(args.plot, "--plot")


def _fresh_state(args):
    """A new TrainState from the command line's task, model and optimisation options."""
    from npformer.training.resume import BatchStream, TrainState
    from npformer.training.train import TrainConfig, model_config_for
    task = _task_from(args)
    enc = args.encoder_layers or args.layers
    dec = args.decoder_layers or args.layers
    if args.d_model % args.heads:
        raise CliError(f"--heads {args.heads}: must divide --d-model {args.d_model}")
    config = model_config_for(task, d_model=args.d_model, num_heads=args.heads, d_ff=args.d_ff,
                              num_encoder_layers=enc, num_decoder_layers=dec, dropout=args.dropout,
                              activation=args.activation, norm_first=args.norm_first,
                              final_norm=args.norm_first, positional=args.positional,
                              dtype=args.dtype)
    tc = TrainConfig(steps=args.steps, batch_size=args.batch_size, lr=args.lr, warmup=args.warmup,
                     label_smoothing=args.label_smoothing, clip_norm=args.clip_norm, seed=args.seed,
                     eval_every=args.eval_every, eval_size=args.eval_size,
                     progress=not args.no_progress)
    if args.backend == "torch":
        _, dev = _torch(args)
        T = backends.module("torch", "train")
        model = T.build_model(config, task, seed=args.seed, device=dev)
    else:
        import npformer.training.train as T
        model = T.build_model(config, task, seed=args.seed)
    optimizer, schedule = T.make_optimizer(model, tc)
    stream = BatchStream(task, tc.batch_size, tc.seed)
    return TrainState(model=model, optimizer=optimizer, schedule=schedule, stream=stream,
                      config=tc, task=task, step=0)


def _resumed_state(args):
    """The TrainState saved in --resume's file, to run --steps more steps."""
    dev = _torch(args)[1] if args.backend == "torch" else None
    state = backends.module(args.backend, "resume").load_training_state(args.resume, device=dev)
    state.config = state.config.replace(steps=args.steps, eval_every=args.eval_every,
                                        eval_size=args.eval_size, progress=not args.no_progress)
    return state


def cmd_train(args) -> int:
    from npformer.cli.lm import fill_task_defaults
    fill_task_defaults(args, DEFAULTS)                   # --steps/--lr/--warmup: per-task defaults
    _check_backend(args)
    if args.resume:
        refuse_fixed_on_resume(args)                      # never silently ignore --task etc.
    _check_outputs(args)                                  # before any work, --nproc runs included
    if args.nproc > 1:                                    # torchrun runs torchformer.training.distributed
        if args.backend != "torch":
            raise CliError(f"--nproc {args.nproc}: needs --backend torch (the numpy backend uses "
                           f"threads: --threads N)")
        check_nproc(args)
        return backends.module("torch", "distributed").launch_from_cli(args)
    if not args.resume:
        check_fits_memory(args)                           # before minutes of allocation
    state = _resumed_state(args) if args.resume else _fresh_state(args)
    model, task, tc = state.model, state.task, state.config
    T = backends.module(args.backend, "train")
    where = f"torchformer on {model.device}" if args.backend == "torch" else "npformer (NumPy)"
    heldout = task.heldout(tc.eval_size)
    print(f"{task.describe()}  seed={tc.seed}")
    print(f"{_describe(model)}  [{where}, {args.threads} thread(s)]")
    if args.resume:
        print(f"resuming {args.resume} at step {state.step}: {tc.steps} more steps")
    print(f"{tc.steps} steps x {tc.batch_size} sequences, Adam(0.9, 0.98, 1e-9), peak lr {tc.lr} "
          f"after {tc.warmup} warm-up steps, clip {tc.clip_norm}, label smoothing "
          f"{tc.label_smoothing}", flush=True)
    t0 = time.perf_counter()
    extra = {}
    if args.backend == "numpy":                           # threads: data parallelism when it pays
        from npformer.training.parallel import choose_replicas
        extra["replicas"] = choose_replicas(args.threads, tc.batch_size, args.data_parallel,
                                            tokens_per_row=task.max_tgt_tokens,
                                            d_model=model.config.d_model)
        if extra["replicas"] > 1:
            print(f"data parallelism: {extra['replicas']} replicas, one thread each", flush=True)
    try:
        result = T.train(model, task, tc, batches=state.stream, optimizer=state.optimizer,
                         schedule=state.schedule, eval_examples=heldout, start_step=state.step,
                         **extra)
    except FloatingPointError as e:
        kept = f"; nothing was saved ({args.save} unchanged)" if args.save else ""
        raise CliError(f"training stopped: {e}{kept}") from None
    state.step = result.steps
    train_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    ev = T.evaluate(model, task, heldout, num_shown=args.examples)
    eval_s = time.perf_counter() - t1
    result.eval_history.append((result.steps, ev))                # the final held-out point
    tail = result.losses[-min(50, len(result.losses)):] if result.losses else [float("nan")]
    print(f"trained {len(result.losses)} steps in {train_s:.1f} s "
          f"({result.tokens_per_second:,.0f} target tokens/s), final train loss "
          f"{sum(tail) / len(tail):.4f} (mean of last {len(tail)} steps)")
    _print_eval(ev, task)
    print(f"evaluation took {eval_s:.1f} s; total {train_s + eval_s:.1f} s")
    _print_examples(ev.examples, task.is_classification)
    if args.save:
        from npformer.io.files import OutputPathError
        save_training_state = backends.module(args.backend, "resume").save_training_state
        metadata = {"metrics": {"loss": ev.loss, "token_accuracy": ev.token_accuracy,
                                "sequence_accuracy": ev.sequence_accuracy,
                                "train_seconds": train_s}}
        try:
            path = save_training_state(args.save, state, metadata=metadata)
        except OSError as e:
            kept = "the earlier file there is unchanged" if os.path.exists(args.save) else \
                "nothing was written"
            raise OutputPathError("--save", args.save, f"write failed: {e.strerror or e} "
                                                      f"({kept})") from None
        args.saved = str(path)                            # an interruption now: say it is saved
        print(f"saved checkpoint {path} (step {state.step})")
    if args.plot:
        np_model = model if args.backend == "numpy" else _to_numpy_model(model)
        try:
            paths = _train_plots(np_model, task, heldout, result, args.plot, start=result.steps -
                                 len(result.losses))
        except OSError as e:
            raise CliError(f"--plot {args.plot}: write failed: {e.strerror or e}") from None
        print(f"wrote {len(paths)} plots to {args.plot}")
    return 0


def _to_numpy_model(torch_model):
    """An npformer copy of a torchformer model (same class name, same state_dict keys)."""
    import importlib
    from npformer.io.checkpoint import MODEL_CLASSES
    name = type(torch_model).__name__
    cls = getattr(importlib.import_module(f"npformer.{MODEL_CLASSES[name]}"), name)
    m = cls(torch_model.config)
    m.load_state_dict({k: v.detach().cpu().numpy()
                       for k, v in torch_model.state_dict().items()})
    return m.eval()


def _train_plots(model, task, heldout, result, out_dir, start: int = 0) -> list[str]:
    from npformer.training import plots
    from npformer.layers.positional import sinusoidal_table
    paths = [plots.plot_loss_curve(np.arange(start + 1, start + len(result.losses) + 1),
                                   result.losses,
                                   os.path.join(out_dir, "loss.png"),
                                   eval_steps=[s for s, _ in result.eval_history],
                                   eval_losses=[e.loss for _, e in result.eval_history])]
    c = model.config
    paths.append(plots.plot_positional_encoding(sinusoidal_table(c.max_len, c.d_model),
                                                os.path.join(out_dir, "positions.png")))
    paths += _attention_plots(model, task, heldout.take(np.arange(1)), out_dir)
    return paths


def _attention_plots(model, task, examples, out_dir, kinds=None, layers=None, heads=None):
    from npformer.training import plots
    from npformer.data.tasks import BOS, EOS, collate
    from npformer.decoding.generate import greedy_decode
    kinds = kinds or plots.ATTENTION_KINDS
    if getattr(task, "is_lm", False):                               # CausalLM: the whole line
        from npformer.cli.lm import lm_attention_plots
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
                                     layers=layers, heads=heads)


# ---------------------------------------------------------------------------------------------------
# evaluate
# ---------------------------------------------------------------------------------------------------
def _checkpoint_task(args, ckpt):
    meta = ckpt.metadata.get("task") if isinstance(ckpt.metadata, dict) else None
    if meta is None and getattr(args, "task", None) is None:
        raise CliError(f"checkpoint {args.checkpoint}: holds no task description (not written by "
                       f"`npformer train`); pass --task and the length options")
    return _task_from(args, meta)


def cmd_evaluate(args) -> int:
    _check_backend(args)
    model, ckpt = _load(args)
    task = _checkpoint_task(args, ckpt)
    _check_model_fits_task(model, task, args.checkpoint)
    T = backends.module(args.backend, "train")
    print(f"{_describe(model)}  [checkpoint {args.checkpoint}, step {ckpt.step}, written by "
          f"{ckpt.writer}]")
    print(task.describe())
    t0 = time.perf_counter()
    ev = T.evaluate(model, task, task.heldout(args.eval_size), num_shown=args.examples)
    _print_eval(ev, task)
    print(f"evaluation took {time.perf_counter() - t0:.1f} s")
    _print_examples(ev.examples, task.is_classification)
    return 0


def _check_model_fits_task(model, task, path) -> None:
    c = model.config
    vocab = c.src_vocab if type(model).__name__ == "Transformer" else c.vocab_size
    if vocab != task.vocab_size:
        raise CliError(f"checkpoint {path}: the model's vocabulary has {vocab} tokens, the task "
                       f"needs {task.vocab_size} (--num-symbols {task.num_symbols} + 3 specials)")
    if c.max_len < max(task.max_src_tokens, task.max_tgt_tokens):
        raise CliError(f"checkpoint {path}: the model's max_len={c.max_len} is shorter than the "
                       f"task's rows ({max(task.max_src_tokens, task.max_tgt_tokens)} tokens for "
                       f"--max-len {task.max_len})")


# ---------------------------------------------------------------------------------------------------
# generate
# ---------------------------------------------------------------------------------------------------
def cmd_generate(args) -> int:
    from npformer.data.tasks import BOS, EOS, PAD, Vocab, collate, examples_from_text
    _check_backend(args)
    model, ckpt = _load(args)
    meta = ckpt.metadata.get("task") if isinstance(ckpt.metadata, dict) else None
    kind = type(model).__name__
    c = model.config
    if meta is not None:
        task = _task_from(argparse.Namespace(), meta)
        vocab = task.vocab
    else:
        task = None
        vocab = Vocab((c.src_vocab if kind == "Transformer" else c.vocab_size) - 3)
    gen = backends.module(args.backend, "generate")
    from npformer.cli import lm as lm_cli
    if kind in ("CausalLM", "BertForMaskedLM") or lm_cli.sampling_requested(args):  # LMs, sampling
        return lm_cli.generate_lm(args, model, task, vocab, gen)
    if kind == "EncoderClassifier":
        decoding = [o for d, o in getattr(args, "given", {}).items()
                    if d in ("beam", "alpha", "max_new_tokens", "no_cache")]
        if decoding:                                             # never silently ignored
            raise CliError(f"{decoding[0]}: a classifier checkpoint predicts one class per "
                           f"input; it decodes no tokens (drop {', '.join(decoding)})")
        if task is not None:
            src = collate(examples_from_text(task, args.inputs)).src          # BOS + symbols + EOS
        else:
            ids = [vocab.encode(t) for t in args.inputs]
            src = np.zeros((len(ids), max(len(r) for r in ids) + 2), dtype=np.int64)
            for i, r in enumerate(ids):
                src[i, : len(r) + 2] = [BOS] + r + [EOS]
        logits = model(_as_backend(src, model, args))
        pred = np.asarray(_numpy(logits)).argmax(axis=-1)
        for t, p in zip(args.inputs, pred):
            print(f"{t} -> class {int(p)}")
        return 0
    if kind == "Transformer":
        if task is not None:
            batch = collate(examples_from_text(task, args.inputs))
            src, expected = batch.src, [vocab.decode(r) for r in batch.tgt_out]
            if task.memorise:
                expected = [None] * len(args.inputs)
        else:
            ids = [vocab.encode(t) for t in args.inputs]
            width = max(len(r) for r in ids) + 1
            src = np.full((len(ids), width), PAD, dtype=np.int64)
            for i, r in enumerate(ids):
                src[i, : len(r) + 1] = r + [EOS]
            expected = [None] * len(ids)
        inputs = src
    else:                                                   # CausalLM: prompts, right-padded
        ids = [vocab.encode(t) for t in args.inputs]
        width = max(len(r) for r in ids)
        inputs = np.full((len(ids), width), PAD, dtype=np.int64)
        for i, r in enumerate(ids):
            inputs[i, : len(r)] = r
        expected = [None] * len(ids)
    common = dict(max_new_tokens=args.max_new_tokens, use_cache=not args.no_cache)
    if args.beam > 1:
        out = gen.beam_search(model, inputs, beam_size=args.beam, length_penalty_alpha=args.alpha,
                              **common)
        how = f"beam search (K={args.beam}, alpha={args.alpha})"
    else:
        out = gen.greedy_decode(model, inputs, **common)
        how = "greedy"
    from npformer.cli.lm import print_decoded
    return print_decoded(args, how, out, vocab, expected)


def _numpy(x):
    return x.detach().cpu().numpy() if hasattr(x, "detach") else x


def _as_backend(a: np.ndarray, model, args):
    if args.backend == "torch":
        import torch
        return torch.as_tensor(a, device=model.device)
    return a


# ---------------------------------------------------------------------------------------------------
# gradcheck
# ---------------------------------------------------------------------------------------------------
def gradcheck_suite(seed: int = 0):
    """[(name, thunk)]: each thunk runs one gradient check and returns a GradcheckReport.

    Tiny float64 configurations; every component, every model, the masks that matter.
    """
    from npformer.layers.activations import Activation
    from npformer.layers.attention import MultiHeadAttention, sdpa_backward, sdpa_forward
    from npformer.models.causal_lm import CausalLM
    from npformer.models.classifier import EncoderClassifier
    from npformer.models.config import TransformerConfig
    from npformer.models.decoder import Decoder, DecoderLayer
    from npformer.layers.dropout import Dropout
    from npformer.layers.embedding import Embedding
    from npformer.models.encoder import Encoder, EncoderLayer
    from npformer.layers.feedforward import PositionwiseFeedForward
    from npformer.checks.gradcheck import check_pair, gradcheck
    from npformer.layers.layernorm import LayerNorm, layernorm_backward, layernorm_forward
    from npformer.layers.linear import Linear
    from npformer.layers.loss import CrossEntropyLoss
    from npformer.layers.masks import causal_mask, padding_mask
    from npformer.layers.positional import LearnedPositionalEncoding, SinusoidalPositionalEncoding
    from npformer.layers.softmax import (log_softmax_backward, log_softmax_forward, softmax_backward,
                                  softmax_forward)
    from npformer.models.transformer import Transformer

    f64 = "float64"
    rng = np.random.default_rng(seed)
    B, S, T, D, H = 2, 5, 4, 8, 2

    def x(*shape):
        return rng.standard_normal(shape)

    cfg = TransformerConfig(d_model=D, num_heads=H, d_ff=12, num_encoder_layers=2,
                            num_decoder_layers=2, max_len=8, vocab_size=11, dtype=f64, dropout=0.2,
                            attention_dropout=0.1, activation_dropout=0.1)
    src = np.array([[3, 4, 5, 6, 2], [7, 8, 2, 0, 0]])                     # padded row
    tgt = np.array([[1, 5, 4, 3], [1, 9, 0, 0]])
    src_mask = padding_mask(src, 0)                                        # (B, 1, 1, S)
    tgt_mask = causal_mask(T) & padding_mask(tgt, 0)                       # (B, 1, T, T)
    empty_row = np.ones((B, 1, T, S), dtype=bool)
    empty_row[1, :, 2, :] = False                                          # a fully masked query

    def mod(m, *inputs, **kw):
        return lambda **o: gradcheck(m, *inputs, seed=seed, **o, **kw)

    def pair(fwd, bwd, inputs, **kw):
        return lambda **o: check_pair(fwd, bwd, inputs, seed=seed, **o, **kw)

    post, pre = cfg, cfg.replace(norm_first=True, final_norm=True, activation="gelu")
    suite = [
        ("Linear", mod(Linear(D, 6, dtype=f64, rng=rng), x(B, T, D))),
        ("Embedding (scaled, padding_idx)", mod(Embedding(11, D, padding_idx=0, scale=D ** 0.5,
                                                          dtype=f64, rng=rng), src)),
        ("SinusoidalPositionalEncoding", mod(SinusoidalPositionalEncoding(D, 8, f64), x(B, T, D))),
        ("LearnedPositionalEncoding", mod(LearnedPositionalEncoding(D, 8, f64, rng=rng),
                                          x(B, T, D))),
        ("Dropout (p=0.3, mask replayed)", mod(Dropout(0.3, rng=np.random.default_rng(seed)),
                                               x(B, T, D))),
        ("Activation relu", mod(Activation("relu"), x(B, T, D))),
        ("Activation gelu", mod(Activation("gelu"), x(B, T, D))),
        ("Activation gelu_tanh", mod(Activation("gelu_tanh"), x(B, T, D))),
        ("LayerNorm", mod(LayerNorm(D, dtype=f64), x(B, T, D))),
        ("layernorm pair", pair(layernorm_forward, layernorm_backward,
                                [x(B, T, D), 1 + 0.1 * x(D), 0.1 * x(D)])),
        ("softmax pair", pair(softmax_forward, softmax_backward, [x(B, T, S)])),
        ("log_softmax pair", pair(log_softmax_forward, log_softmax_backward, [x(B, T, S)])),
        ("sdpa pair (padding, fully masked row)",
         pair(sdpa_forward, sdpa_backward, [x(B, H, T, 4), x(B, H, S, 4), x(B, H, S, 4),
                                            empty_row & src_mask], output_index=0)),
        ("MultiHeadAttention self (causal+padding)",
         mod(MultiHeadAttention(D, H, dtype=f64, rng=rng), *(lambda q: (q, q, q))(x(B, T, D)),
             mask=tgt_mask)),
        ("MultiHeadAttention cross (Tq != Tk)",
         mod(MultiHeadAttention(D, H, dtype=f64, rng=rng), x(B, T, D), x(B, S, D), x(B, S, D),
             mask=src_mask)),
        ("PositionwiseFeedForward (gelu)",
         mod(PositionwiseFeedForward(D, 12, "gelu", dtype=f64, rng=rng), x(B, T, D))),
        ("EncoderLayer post-norm", mod(EncoderLayer(post, rng=rng), x(B, S, D), mask=src_mask)),
        ("EncoderLayer pre-norm", mod(EncoderLayer(pre, rng=rng), x(B, S, D), mask=src_mask)),
        ("DecoderLayer post-norm", mod(DecoderLayer(post, rng=rng), x(B, T, D), x(B, S, D),
                                       self_mask=tgt_mask, memory_mask=src_mask)),
        ("DecoderLayer pre-norm", mod(DecoderLayer(pre, rng=rng), x(B, T, D), x(B, S, D),
                                      self_mask=tgt_mask, memory_mask=src_mask)),
        ("Encoder (2 layers)", mod(Encoder(post, rng=rng), x(B, S, D), mask=src_mask)),
        ("Decoder (2 layers, final norm)", mod(Decoder(pre, rng=rng), x(B, T, D), x(B, S, D),
                                               self_mask=tgt_mask, memory_mask=src_mask)),
        ("Transformer", mod(Transformer(post, seed=seed), src, tgt)),
        ("Transformer (pre-norm, tied, learned pos)",
         mod(Transformer(pre.replace(tie_embeddings=True, share_embeddings=True,
                                     positional="learned"), seed=seed), src, tgt)),
        ("EncoderClassifier (mean pooling)",
         mod(EncoderClassifier(post.replace(pooling="mean", num_classes=3), seed=seed), src)),
        ("CausalLM (GPT-2 style)",
         mod(CausalLM(pre.replace(activation="gelu_tanh", positional="learned",
                                  scale_embeddings=False, tie_embeddings=True), seed=seed), tgt)),
        ("CrossEntropyLoss (ignore_index, smoothing)",
         mod(CrossEntropyLoss(ignore_index=0, label_smoothing=0.1), x(B, T, 11), tgt)),
    ]
    return suite


def cmd_gradcheck(args) -> int:
    set_blas_threads(1)
    suite = gradcheck_suite(args.seed)
    if args.only:
        suite = [(n, f) for n, f in suite if args.only.lower() in n.lower()]
        if not suite:
            raise CliError(f"--only {args.only!r}: matches no check")
    width = max(len(n) for n, _ in suite)
    print(f"npformer gradcheck: float64 central differences (eps 1e-5), random upstream gradient, "
          f"tol {args.tol:g}, <= {args.max_per_tensor} entries per tensor")
    print(f"{'component':<{width}}  {'tensors':>7}  {'entries':>7}  {'max rel err':>11}  "
          f"{'worst tensor':<32} result")
    failed = 0
    t0 = time.perf_counter()
    for name, run in suite:
        try:
            rep = run(tol=args.tol, max_per_tensor=args.max_per_tensor)
        except Exception as e:  # noqa: BLE001 - a crashing check is a failed check, reported
            failed += 1
            print(f"{name:<{width}}  {'-':>7}  {'-':>7}  {'-':>11}  {'-':<32} ERROR {e}")
            continue
        worst = max(rep.errors, key=rep.errors.get) if rep.errors else "-"
        entries = sum(d.checked for d in rep.details.values())
        ok = rep.passed
        failed += not ok
        print(f"{name:<{width}}  {len(rep.errors):>7}  {entries:>7}  {rep.max_error:11.2e}  "
              f"{worst[:32]:<32} {'ok' if ok else 'FAIL'}")
        if args.verbose or not ok:
            print("    " + str(rep).replace("\n", "\n    "))
    print(f"{len(suite) - failed}/{len(suite)} checks passed in {time.perf_counter() - t0:.1f} s")
    return 1 if failed else 0


# ---------------------------------------------------------------------------------------------------
# plot
# ---------------------------------------------------------------------------------------------------
def cmd_plot(args) -> int:
    from npformer.training import plots
    from npformer.io.checkpoint import load_model
    from npformer.data.tasks import examples_from_text
    from npformer.layers.positional import sinusoidal_table
    plots._pyplot()                                             # clear message if matplotlib is missing
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    bad = [k for k in kinds if k not in plots.ATTENTION_KINDS]
    if bad or not kinds:
        raise CliError(f"--kinds: expected a comma-separated subset of "
                       f"{','.join(plots.ATTENTION_KINDS)}, got {args.kinds!r}")
    from npformer.io.checkpoint import load_checkpoint
    from npformer.io.files import check_output_dir
    check_output_dir(args.out, "--out")
    ckpt = load_checkpoint(args.checkpoint)
    model = load_model(ckpt).eval()
    args.task = None
    task = _checkpoint_task(args, ckpt)
    if args.input is not None:
        examples = examples_from_text(task, [args.input])
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
    paths = _attention_plots(model, task, examples, args.out, kinds=kinds, layers=args.layer,
                             heads=args.head)
    if args.positions:
        paths.append(plots.plot_positional_encoding(sinusoidal_table(c.max_len, c.d_model),
                                                    os.path.join(args.out, "positions.png")))
    for p in paths:
        print(p)
    return 0


# ---------------------------------------------------------------------------------------------------
# entry point
# ---------------------------------------------------------------------------------------------------
def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    args.given = given_options(parser, list(sys.argv[1:] if argv is None else argv), args.command)
    try:
        check_threads(args)                               # before any work
        with sigterm_as_interrupt():                      # SIGTERM stops a run like Ctrl-C
            return int(args.func(args) or 0)
    except CliError as e:
        print(f"npformer {args.command}: error: {e}", file=sys.stderr)
        return 2
    except (ValueError, FileNotFoundError, ImportError) as e:
        # validation errors name the argument; checkpoint errors name the file
        print(f"npformer {args.command}: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        # a file that cannot be read or written: one line, never a traceback
        print(f"npformer {args.command}: error: {e.strerror or e}"
              f"{': ' + str(e.filename) if getattr(e, 'filename', None) else ''}", file=sys.stderr)
        return 2
    except MemoryError as e:                              # sizes beyond the machine: no traceback
        print(f"npformer {args.command}: error: out of memory ({e}); use smaller sizes "
              f"(--batch-size, --eval-size, --max-len, --d-model, --d-ff)", file=sys.stderr)
        return 2
    except KeyboardInterrupt as e:
        line, code = interrupted_message(args, e)
        print(f"npformer {args.command}: {line}", file=sys.stderr)
        return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
