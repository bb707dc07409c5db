"""Training on many processes or GPUs: torch.nn.parallel.DistributedDataParallel (DDP).

Launch one process per CPU worker or GPU with torchrun, which sets RANK, WORLD_SIZE, LOCAL_RANK,
MASTER_ADDR and MASTER_PORT for every process:

    torchrun --standalone --nproc-per-node 2 -m torchformer.training.distributed --task reverse --steps 300
    torchrun --standalone --nproc-per-node 4 -m torchformer.training.distributed --device cuda ...  (4 GPUs)
    python -m npformer train --backend torch --nproc 2 ...        (the CLI starts the workers itself:
                                                                   npformer.training.launcher)

Every process builds the same model (same seed) and reads the same stream of full batches (same
seed); process r takes its rows (`npformer.training.parallel.shard_bounds`, the split npformer's thread-level
DataParallel uses). One step, with n_r the counted target tokens of shard r, N = sum_r n_r and W
processes:

    L_r  = CE(model(shard_r), targets_r)            mean over the shard's n_r tokens
    backward of L_r * (n_r W / N)                   DDP all-reduces the gradients and divides by W,
                                                    so every process holds sum_r (n_r / N) dL_r:
                                                    the full batch's gradient (token-weighted)
    clip, Adam, schedule: identical on every process, so the weights stay identical
    loss = all_reduce(sum) of L_r n_r / N           the full batch's loss, for the record

The backend is gloo on CPU and NCCL on CUDA (process r uses GPU LOCAL_RANK). Dropout draws from
torch's global RNG, seeded with seed + rank, so the shards' masks differ from each other (and from a
one-process run's). Only rank 0 prints, evaluates and saves.
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import Iterable, Iterator

import numpy as np
import torch
import torch.distributed as dist

from npformer.data.display import visible
from npformer.data.tasks import Task, batch_iterator
from npformer.training.loop import run_steps
from npformer.training.metrics import TrainResult
from npformer.training.parallel import shard_batch, shard_bounds
from npformer.training.train import TrainConfig, check_sizes_fit
from torchformer.guards.validation import device_memory
from torchformer.training.train import TorchStep

__all__ = ["init", "is_initialized", "rank", "world_size", "wrap", "train", "main",
           "launch_from_cli"]


def is_initialized() -> bool:
    return dist.is_available() and dist.is_initialized()


def rank() -> int:
    return dist.get_rank() if is_initialized() else 0


def world_size() -> int:
    return dist.get_world_size() if is_initialized() else 1


def init(device: str | torch.device | None = None, *, backend: str | None = None,
         seed: int = 0) -> torch.device:
    """Join the process group torchrun set up (env:// rendezvous); returns this process's device.

    device  "cpu" (gloo) or "cuda" (NCCL, GPU number LOCAL_RANK); default: cuda when available
    seed    torch's global RNG (dropout) is seeded with seed + rank
    """
    if not dist.is_available():
        raise RuntimeError("torch.distributed is not available in this torch build")
    missing = [v for v in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT") if v not in os.environ]
    if missing and not is_initialized():
        raise RuntimeError(f"torchformer.training.distributed.init: environment variables {missing} are not "
                           f"set; launch with torchrun --nproc-per-node N (see this module's doc)")
    dev = torch.device(device) if device is not None else \
        torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if dev.type not in ("cpu", "cuda"):
        raise ValueError(f"device: expected cpu or cuda, got {device!r}")
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise RuntimeError("device cuda: CUDA is not available on this machine")
        dev = torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0)))
        torch.cuda.set_device(dev)
    if not is_initialized():
        dist.init_process_group(backend or ("nccl" if dev.type == "cuda" else "gloo"))
    torch.manual_seed(int(seed) + rank())
    return dev


def wrap(model: torch.nn.Module, device: torch.device):
    """DistributedDataParallel around `model` (moved to `device`); its .module is `model`."""
    from torch.nn.parallel import DistributedDataParallel as DDP
    if not is_initialized():
        raise RuntimeError("wrap: call torchformer.training.distributed.init() first (inside torchrun)")
    model.to(device)
    return DDP(model, device_ids=[device.index] if device.type == "cuda" else None)


def _tensor(a: np.ndarray, device) -> torch.Tensor:
    return torch.as_tensor(a, dtype=torch.int64, device=device)


def _targets(batch) -> np.ndarray:
    from npformer.data.tasks import ClassificationBatch
    if hasattr(batch, "answer_mask"):                                 # LMBatch, MLMBatch
        return batch.targets
    return batch.labels if isinstance(batch, ClassificationBatch) else batch.tgt_out


def model_forward(ddp, batch, device):
    from npformer.data.tasks import ClassificationBatch
    if hasattr(batch, "answer_mask"):                                 # language models
        from torchformer.training.lm_train import lm_forward
        return lm_forward(ddp, batch, device)
    if isinstance(batch, ClassificationBatch):
        return ddp(_tensor(batch.src, device)), _tensor(batch.labels, device)
    return ddp(_tensor(batch.src, device), _tensor(batch.tgt_in, device)), \
        _tensor(batch.tgt_out, device)


def train(model, task: Task, config: TrainConfig, *, batches: Iterable | None = None,
          optimizer=None, schedule=None, file=None) -> TrainResult:
    """Train `model` (a torchformer model, already on this process's device) with DDP for
    `config.steps` full batches; every process returns the same TrainResult (losses of the full
    batch) and holds the same weights. Needs init() first."""
    import torchformer.training.train as T
    if not isinstance(config, TrainConfig):
        raise TypeError(f"config: expected a TrainConfig, got {type(config).__name__}")
    W, r = world_size(), rank()
    if config.batch_size < W:
        raise ValueError(f"batch_size: expected at least one row per process (>= {W}), got "
                         f"{config.batch_size}")
    device = next(model.parameters()).device
    check_sizes_fit(model, task, config, batches, None, device_memory(device), processes=W)
    ddp = wrap(model, device)
    if optimizer is None:
        optimizer, schedule = T.make_optimizer(model, config)
    loss_fn = T.make_loss(model, config.label_smoothing, task.is_classification)
    stream: Iterator = iter(batches) if batches is not None else \
        batch_iterator(task, config.batch_size, config.seed)
    step = DDPStep(ddp, model, optimizer, schedule, loss_fn, config.clip_norm, device)
    return run_steps(step, model, config, stream, file=file, show_progress=r == 0)


class DDPStep(TorchStep):
    """One DistributedDataParallel step (see npformer.training.loop): each process runs its shard of
    the batch, gradients are averaged by DDP with weights that make them the full batch's, and the
    full-batch loss is summed over processes. Clipping, the update and the schedule are TorchStep's."""

    def __init__(self, ddp, model, optimizer, schedule, loss_fn, clip_norm, device):
        super().__init__(model, optimizer, schedule, loss_fn, clip_norm)
        self.ddp, self.device = ddp, device
        self.W, self.r = world_size(), rank()
        self.n = 0

    def gradients(self, batch) -> float:
        W, r, loss_fn = self.W, self.r, self.loss_fn
        self.n += 1
        bounds = shard_bounds(batch[0].shape[0], W)
        if len(bounds) < W:
            raise ValueError(f"batches: step {self.n} has {batch[0].shape[0]} rows, fewer than "
                             f"the {W} processes")
        logits, targets = model_forward(self.ddp, shard_batch(batch, *bounds[r]), self.device)
        counts = [int(np.count_nonzero(_targets(batch)[lo:hi] != loss_fn.ignore_index))
                  for lo, hi in bounds]                                # n_r of every shard
        n, total = counts[r], sum(counts)
        if total == 0:
            raise ValueError(f"batches: step {self.n}: every target equals ignore_index")
        # a shard without counted targets still runs backward (DDP needs every process), with 0
        shard_loss = loss_fn(logits, targets) if n else logits.sum() * 0
        self.optimizer.zero_grad(set_to_none=False)
        (shard_loss * (n * W / total)).backward()                      # DDP: mean over processes
        record = (shard_loss.detach() * (n / total)).to(torch.float64)
        dist.all_reduce(record)                                        # full-batch loss
        return float(record)


# ---------------------------------------------------------------------------------------------------
# command line: torchrun --standalone --nproc-per-node N -m torchformer.training.distributed [options]
# ---------------------------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    from npformer.data.lm_data import LM_TASKS
    from npformer.data.tasks import TASKS
    from npformer.data.text_tasks import ROW_TASKS
    p = argparse.ArgumentParser(prog="torchrun --nproc-per-node N -m torchformer.training.distributed",
                                description="Train a torchformer model with DistributedDataParallel "
                                            "(one process per CPU worker or GPU).")
    p.add_argument("--task", choices=TASKS + LM_TASKS + ROW_TASKS, default="reverse")
    p.add_argument("--data", nargs="+", default=None, help="your own text (--task lm, translate, "
                                                           "classify; see npformer train --help)")
    p.add_argument("--tokenizer", choices=("char", "bpe"), default=None)
    p.add_argument("--vocab-size", type=int, default=None)
    p.add_argument("--context", type=int, default=None)
    p.add_argument("--val-fraction", type=float, default=None)
    p.add_argument("--shared-vocab", action="store_true")
    p.add_argument("--max-number", type=int, default=None, help="--task lm: operands 0..N-1")
    p.add_argument("--num-pairs", type=int, default=200, help="--task pairs: size of the table")
    p.add_argument("--num-symbols", type=int, default=10)
    p.add_argument("--min-len", type=int, default=1)
    p.add_argument("--max-len", type=int, default=10)
    p.add_argument("--d-model", type=int, default=64)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--d-ff", type=int, default=256)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--dropout", type=float, default=0.1)
    p.add_argument("--dtype", choices=("float32", "float64"), default="float32")
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--batch-size", type=int, default=64, help="rows of the full batch, split over "
                                                               "the processes")
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--warmup", type=int, default=100)
    p.add_argument("--label-smoothing", type=float, default=0.0)
    p.add_argument("--clip-norm", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default=None, help="cpu (gloo) or cuda (NCCL); default cuda if any")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads per process")
    p.add_argument("--eval-size", type=int, default=200, help="held-out sequences rank 0 "
                                                                "evaluates on at the end")
    p.add_argument("--save", default=None, help="rank 0 writes the trained model's checkpoint here "
                                                "(a new file; checked before training)")
    p.add_argument("--examples", type=int, default=0, help="decoded held-out examples rank 0 "
                                                               "prints")
    p.add_argument("--no-progress", action="store_true")
    return p


class _Stopped(KeyboardInterrupt):
    """SIGTERM in a worker (the launcher stopping the run): ends it quietly, temp files removed."""


def _raise_stopped(signum, frame):
    raise _Stopped()


def main(argv: list[str] | None = None) -> int:
    """One worker: train, and on rank 0 evaluate, print and save. Errors end it with one line
    (status 2), SIGTERM quietly (143); started by npformer's launcher it never outlives it."""
    import signal

    from npformer.training.launcher import watch_launcher
    args = build_parser().parse_args(argv)
    watch_launcher()
    if _in_main_thread():
        signal.signal(signal.SIGTERM, _raise_stopped)
    try:
        return _run(args)
    except KeyboardInterrupt:
        return 143
    except (ValueError, OSError, RuntimeError, MemoryError) as e:
        print(f"npformer train: worker {rank()}: error: {e}".splitlines()[0], file=sys.stderr)
        return 2


def _in_main_thread() -> bool:
    import threading
    return threading.current_thread() is threading.main_thread()


def _run(args) -> int:
    import torchformer.training.train as T
    from npformer.data.registry import build_text_task_from_files, make_any_task
    from npformer.training.resume import BatchStream, TrainState
    from torchformer.training.resume import save_training_state
    if args.save and os.path.exists(args.save):
        print(f"error: --save {args.save}: exists; choose a new path", file=sys.stderr)
        return 2
    torch.set_num_threads(max(1, args.threads))
    dev = init(args.device, seed=args.seed)
    code = 0                                  # rank 0's save may make it 2 (_save)
    try:
        fields = dict(num_symbols=args.num_symbols, min_len=args.min_len, max_len=args.max_len,
                      num_pairs=args.num_pairs, seed=args.seed)
        if args.task == "lm":                              # sized by --max-number only
            fields = dict(seed=args.seed, max_number=args.max_number)
        task = make_any_task(name=args.task, **fields) if not args.data else \
            build_text_task_from_files(args.task, args.data, tokenizer=args.tokenizer,
                                       vocab_size=args.vocab_size, context=args.context,
                                       val_fraction=args.val_fraction,
                                       shared_vocab=args.shared_vocab, seed=args.seed)
        cfg = T.model_config_for(task, d_model=args.d_model, num_heads=args.heads, d_ff=args.d_ff,
                                 num_encoder_layers=args.layers, num_decoder_layers=args.layers,
                                 dropout=args.dropout, dtype=args.dtype)
        tc = TrainConfig(steps=args.steps, batch_size=args.batch_size, lr=args.lr,
                         warmup=args.warmup, label_smoothing=args.label_smoothing, seed=args.seed,
                         clip_norm=args.clip_norm, eval_size=args.eval_size,
                         progress=not args.no_progress)
        model = T.build_model(cfg, task, seed=args.seed, device=dev)
        optimizer, schedule = T.make_optimizer(model, tc)
        stream = BatchStream(task, tc.batch_size, tc.seed)      # the stream `--resume` continues
        if rank() == 0:
            print(f"{task.describe()}: {world_size()} processes on {dev.type} "
                  f"({dist.get_backend()}), {tc.batch_size} rows per step", flush=True)
        res = train(model, task, tc, batches=stream, optimizer=optimizer, schedule=schedule)
        if rank() == 0:
            ev = T.evaluate(model, task, task.heldout(args.eval_size), num_shown=args.examples)
            tail = f"final loss {res.losses[-1]:.4f}" if res.losses else "no steps run"
            print(f"trained {res.steps} steps in {res.seconds:.1f} s, {tail}; held-out "
                  f"{ev.summary()}")
            for src, tgt, pred in ev.examples:
                print(visible(f"  {src} -> {tgt} / {pred}  {'ok' if tgt == pred else 'WRONG'}"))
            if args.save:
                state = TrainState(model=model, optimizer=optimizer, schedule=schedule,
                                   stream=stream, config=tc, task=task)
                state.record(res)
                metadata = {"metrics": {"loss": ev.loss, "token_accuracy": ev.token_accuracy,
                                        "sequence_accuracy": ev.sequence_accuracy,
                                        "train_seconds": res.seconds},
                            "processes": world_size()}
                if hasattr(ev, "metrics"):              # BLEU/chrF, or accuracy and macro F1
                    metadata["metrics"].update(ev.metrics())
                code = _save(args, save_training_state, state, metadata, res.steps)
        dist.barrier()                        # the others wait for rank 0's evaluation and save
    finally:
        dist.destroy_process_group()
    return code


def _save(args, save_training_state, state, metadata, steps: int) -> int:
    """Rank 0's save of --save, never replacing a file another program wrote there while the run
    trained (the launcher checked the path first): the run is then saved beside it (`X-1.npz`) and
    an error line says both (exit status 2)."""
    from npformer.io.files import save_beside
    try:
        path = save_training_state(args.save, state, metadata=metadata, overwrite=False)
    except FileExistsError:
        path = save_beside(args.save, lambda p: save_training_state(p, state, metadata=metadata,
                                                                    overwrite=False))
        print(f"error: --save {args.save}: was written by another program while this run trained "
              f"(another run saving there?) and is left as it is; this run's checkpoint (step "
              f"{steps}) is saved as {path}", file=sys.stderr, flush=True)
        return 2
    print(f"saved checkpoint {path} (step {steps}; `npformer train --resume` "
          f"continues it, `npformer evaluate` reads it)", flush=True)
    return 0


# options of `npformer train` this entry point takes over, and those it does not support
_FORWARDED = ("task", "num_symbols", "min_len", "max_len", "num_pairs", "max_number", "d_model", "heads",
              "d_ff", "layers",
              "dropout", "dtype", "steps", "batch_size", "lr", "warmup", "label_smoothing",
              "clip_norm", "seed", "threads", "eval_size", "examples", "save",
              "data", "tokenizer", "vocab_size", "context", "val_fraction", "shared_vocab")
_UNSUPPORTED = {"encoder_layers": None, "decoder_layers": None, "norm_first": False,
                "positional": "sinusoidal", "activation": "relu", "eval_every": 0, "plot": None,
                "resume": None, "overwrite": False}


def launch_from_cli(args) -> int:
    """`npformer train --backend torch --nproc N ...`: N worker processes of this module (see
    npformer.training.launcher: Ctrl-C, SIGTERM and a failed worker stop every worker)."""
    from npformer.training.launcher import WorkerFailed, run_workers
    bad = [k for k, default in _UNSUPPORTED.items() if getattr(args, k, default) != default]
    if bad:
        raise ValueError(f"--nproc {args.nproc}: options {['--' + k.replace('_', '-') for k in bad]} "
                         f"are not supported with DistributedDataParallel training yet")
    argv = [sys.executable, "-m", "torchformer.training.distributed", "--device", str(args.device)]
    for k in _FORWARDED:
        v = getattr(args, k, None)
        if isinstance(v, list):                           # --data FILE [FILE ...]
            argv += ["--" + k.replace("_", "-"), *map(str, v)]
        elif v is True:                                   # a flag
            argv.append("--" + k.replace("_", "-"))
        elif v is not None and v is not False:
            argv += ["--" + k.replace("_", "-"), str(v)]
    if getattr(args, "no_progress", False):
        argv.append("--no-progress")
    print(f"running {args.nproc} workers: " + " ".join(argv[1:]), flush=True)
    save = getattr(args, "save", None)
    before = _stat(save)
    try:
        return run_workers(argv, args.nproc)
    except WorkerFailed as e:
        if e.said:
            return e.code
        msg = str(e)
        if save:
            written = _stat(save) not in (None, before)
            msg += f"; --save {save} " + ("was written before that" if written else
                                          "was not written")
        print(f"npformer train: error: {msg}", file=sys.stderr)
        return e.code
    except KeyboardInterrupt:
        if save and _stat(save) not in (None, before):     # rank 0 saved before the interruption
            args.saved = save
        raise


def _stat(path):
    try:
        st = os.stat(path) if path else None
    except OSError:
        return None
    return None if st is None else (st.st_ino, st.st_mtime_ns, st.st_size)


if __name__ == "__main__":
    sys.exit(main())
