"""Option groups more than one command shares: the task, the backend, and sampling."""
from __future__ import annotations

import argparse

from npformer.cli.argtypes import (
    float_in,
    int_in,
    positive,
    positive_float,
    seed_int,
)
from npformer.cli.defaults import DEFAULTS

__all__ = ["add_task_args", "add_backend_args", "add_sampling_args"]


def add_task_args(p: argparse.ArgumentParser, defaults: bool = True) -> None:
    """The task group: which synthetic task and its sizes (`defaults=False`: the checkpoint's)."""
    from npformer.data.lm_data import LM_TASKS, MAX_NUMBER
    from npformer.data.tasks import TASKS
    from npformer.data.text_tasks import ROW_TASKS
    d = DEFAULTS if defaults else {}
    g = p.add_argument_group("task")
    g.add_argument("--task", choices=TASKS + LM_TASKS + ROW_TASKS, default=d.get("task"),
                   help="synthetic task: copy, reverse, sort (seq2seq), pairs (random pairs, "
                        "memorised), majority (classification), lm (addition lines 12+7=19, "
                        "GPT-style CausalLM), mlm (mirror sentences abc#cba, BERT-style masked "
                        "LM); translate, classify (on --data)" + (" (default: %(default)s)"
                                                                   if defaults else
                                                                   " (default: the checkpoint's)"))
    unset = " (default: %(default)s)" if defaults else " (default: the checkpoint's)"
    g.add_argument("--num-symbols", type=positive, default=d.get("num_symbols"), metavar="N",
                   help="alphabet size" + unset)
    g.add_argument("--min-len", type=positive, default=d.get("min_len"), metavar="N",
                   help="shortest source" + unset)
    g.add_argument("--max-len", type=positive, default=d.get("max_len"), metavar="N",
                   help="longest source" + unset)
    g.add_argument("--num-pairs", type=positive, default=d.get("num_pairs"), metavar="N",
                   help="size of the 'pairs' table" + unset)
    g.add_argument("--max-number", type=int_in(2, MAX_NUMBER), default=None, metavar="N",
                   help=f"--task lm: operands are 0..N-1, N at most {MAX_NUMBER} (default: "
                        + ("100)" if defaults else "the checkpoint's; 100 for another --task lm)"))


def add_backend_args(p: argparse.ArgumentParser, dtype_default: str | None = "float32") -> None:
    """The backend group: numpy or torch, device, dtype, threads."""
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


def add_sampling_args(p) -> None:
    """The `generate` options for sampling from a language model (their own argument group)."""
    g = p.add_argument_group("sampling (language-model checkpoints; default: greedy)")
    g.add_argument("--temperature", type=positive_float, default=None, metavar="T",
                   help="sample with logits / T (default when sampling: 1.0)")
    g.add_argument("--top-k", type=positive, default=None, metavar="K",
                   help="sample among the K most probable tokens (1: greedy; default: every token); "
                        "with a BERT folder: the candidates printed per [MASK] (default 5)")
    g.add_argument("--top-p", type=float_in(0.0, 1.0, lo_open=True, hi_open=False), default=None,
                   metavar="P", help="nucleus sampling: the smallest set of tokens holding mass P (default: "
                                     "1, every token)")
    g.add_argument("--seed", type=seed_int, default=None,
                   help="seed of the sampling generator (default when sampling: 0)")
