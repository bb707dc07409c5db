"""The backends the command line runs, and the one file of npformer that names torchformer.

    numpy   npformer: the hand-written forward and backward (this package)
    torch   torchformer: the PyTorch twin (CPU or CUDA), imported only when asked for

    module(backend, part)  the twin's module for one part of the work, e.g. module("torch", "train")
                           is torchformer.training.train; both twins give each part the same names.
"""
from __future__ import annotations

import importlib

PACKAGES = {"numpy": "npformer", "torch": "torchformer"}
PARTS = {
    "train": "training.train",             # build_model, train, evaluate, make_optimizer
    "resume": "training.resume",           # save_training_state, load_training_state
    "distributed": "training.distributed",  # launch_from_cli (torch only: N workers + DDP)
    "checkpoint": "io.checkpoint",         # load_model, save_checkpoint, restore
    "hub": "io.hub",                       # from_pretrained (Hugging Face folders)
    "generate": "decoding",                # greedy_decode, beam_search (the decoding package)
    "sampling": "decoding.sampling",       # sample
}


def module(backend: str, part: str):
    """The module of `backend` ("numpy" or "torch") that holds `part` (a key of PARTS)."""
    if backend not in PACKAGES:
        raise ValueError(f"backend: expected one of {sorted(PACKAGES)}, got {backend!r}")
    if part not in PARTS:
        raise ValueError(f"part: expected one of {sorted(PARTS)}, got {part!r}")
    return importlib.import_module(f"{PACKAGES[backend]}.{PARTS[part]}")
