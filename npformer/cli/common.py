"""What the commands share: the task a run or a checkpoint names, the backend's model and device,
and the arrays going to and coming from either backend."""
from __future__ import annotations

import argparse

import numpy as np

from npformer.cli import backends
from npformer.cli.errors import CliError
from npformer.training.blas import set_blas_threads

__all__ = ["task_from", "checkpoint_task", "torch_and_device", "check_backend", "load_for_backend",
           "describe", "to_numpy", "as_backend", "heldout_set", "saved_task"]


def task_from(args, base: dict | None = None):
    """A Task from --task/... options over `base` (a checkpoint's task metadata)."""
    fields = dict(base or {})
    name = getattr(args, "task", None)
    if name is not None and name != fields.get("name", name):
        fields.pop("max_number", None)                   # the base's lm size is not the new task's
    for opt, key in (("task", "name"), ("num_symbols", "num_symbols"), ("min_len", "min_len"),
                     ("max_len", "max_len"), ("num_pairs", "num_pairs"),
                     ("max_number", "max_number")):
        v = getattr(args, opt, None)
        if v is not None:
            fields[key] = v
    if "seed" not in fields and getattr(args, "seed", None) is not None:
        fields["seed"] = args.seed
    from npformer.data.registry import make_any_task  # seq2seq or language-model task
    return make_any_task(**fields)


def heldout_set(task, n: int, name: str = "--eval-size"):
    """`task.heldout(n)`, refused first, naming `name`, when drawing and evaluating n examples cannot
    fit in this machine's memory (npformer.data.heldout_memory); the task's own errors about n name
    `name` too."""
    from npformer.data.heldout_memory import check_heldout_fits_memory
    check_heldout_fits_memory(name, task, n)
    try:
        return task.heldout(n)
    except ValueError as e:
        if str(e).startswith("n: "):
            raise ValueError(f"{name}: {str(e)[3:]}") from None
        raise


def checkpoint_task(args, ckpt):
    """The task a checkpoint was trained on, with the command line's task options over it."""
    meta = ckpt.metadata.get("task") if isinstance(ckpt.metadata, dict) else None
    if meta is not None and not isinstance(meta, dict):
        raise CliError(f"checkpoint {args.checkpoint}: its saved task: expected an object of task "
                       f"fields, got {type(meta).__name__}")
    if meta is None and getattr(args, "task", None) is None:
        raise CliError(f"checkpoint {args.checkpoint}: holds no task description (not written by "
                       f"`npformer train`); pass --task and the length options")
    given = getattr(args, "task", None)
    if meta and meta.get("data") is not None and given not in (None, meta.get("name")):
        raise CliError(f"--task {given}: {args.checkpoint} was trained on your own text with "
                       f"--task {meta.get('name')}; its task cannot change (drop --task)")
    given = getattr(args, "given", None) or {}
    own = not any(k in given for k in ("task", "num_symbols", "min_len", "max_len", "num_pairs",
                                       "max_number"))
    if meta and (meta.get("data") is not None or own):    # the saved task, unchanged: its errors
        return saved_task(ckpt, args.checkpoint, args)    # name the file
    return task_from(args, meta)


def saved_task(ckpt, path, args=None):
    """The task saved in checkpoint `path` (with `args`' task options over it), checked to fit its
    model's vocabulary and classes (npformer.data.registry.check_task_fits_model); what does not is
    one line naming the file."""
    from npformer.data.registry import check_task_fits_model
    meta = ckpt.metadata.get("task")
    if not isinstance(meta, dict):
        raise CliError(f"checkpoint {path}: its saved task: expected an object of task fields, got "
                       f"{type(meta).__name__}")
    try:
        task = task_from(args or argparse.Namespace(), meta)
        if ckpt.config is not None:
            check_task_fits_model(task, ckpt.config, ckpt.model_class)
    except ValueError as e:
        raise CliError(f"checkpoint {path}: {e}") from None
    return task


def torch_and_device(args):
    """Import torch for --backend torch, with a clear message when it is missing; set threads and
    check the device. Returns (torch, device)."""
    try:
        import torch
    except ImportError:
        raise CliError("--backend torch needs PyTorch, which is not installed: the CPU-only build is "
                       "pip install torch --index-url https://download.pytorch.org/whl/cpu (a plain "
                       "pip install torch pulls CUDA packages on Linux; README, Quick start)") from None
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


def check_backend(args) -> None:
    """--device fits --backend; the numpy backend's BLAS gets --threads."""
    if args.backend == "numpy" and args.device != "cpu":
        raise CliError(f"--device {args.device}: the numpy backend runs on the CPU only (use "
                       f"--backend torch)")
    if args.backend == "numpy":
        set_blas_threads(args.threads)


def load_for_backend(args):
    """(model, checkpoint) from args.checkpoint in the chosen backend (dtype override allowed)."""
    from npformer.io.checkpoint import load_checkpoint
    ckpt = load_checkpoint(args.checkpoint)
    if ckpt.config is None:
        raise CliError(f"checkpoint {args.checkpoint}: has no model config")
    if args.backend == "torch":
        torch, dev = torch_and_device(args)
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


def describe(model) -> str:
    """One line: the model's class, sizes, dtype and parameter count."""
    c = model.config
    n = model.num_parameters()
    layers = f"{c.num_encoder_layers}+{c.num_decoder_layers} layers" \
        if type(model).__name__ == "Transformer" else \
        (f"{c.num_encoder_layers} layers" if type(model).__name__ in (
            "EncoderClassifier", "BertForMaskedLM", "BertForSequenceClassification")
         else f"{c.num_decoder_layers} layers")
    return (f"{type(model).__name__}: d_model={c.d_model} heads={c.num_heads} d_ff={c.d_ff} "
            f"{layers} dropout={c.dropout} {c.dtype}, {n:,} parameters")


def to_numpy(x):
    """A NumPy array from either backend's output (a torch tensor is copied to the CPU)."""
    return x.detach().cpu().numpy() if hasattr(x, "detach") else x


def as_backend(a: np.ndarray, model, args):
    """`a` as the backend's input: a torch tensor on the model's device for --backend torch."""
    if args.backend == "torch":
        import torch
        return torch.as_tensor(a, device=model.device)
    return a
