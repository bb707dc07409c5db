"""Data parallelism over threads: what torch's DistributedDataParallel does, in NumPy.

One training step on a batch of B rows split into K shards (contiguous row ranges, one per replica):

    replica k:  logits_k = model_k(shard_k)                  same parameter arrays, own caches/grads
                L_k      = CE(logits_k, targets_k)           mean over its n_k counted tokens
                model_k.backward(CE_k.backward(n_k / N))     N = sum_k n_k (counted tokens of the batch)
    all-reduce: grad = sum_k grad_k                          into the wrapped model's .grad
    loss        L    = sum_k n_k L_k / N

Because the full-batch loss is L = (1/N) sum_tokens l_t = sum_k (n_k / N) L_k, feeding each shard's
backward the upstream gradient n_k / N (instead of 1) makes the summed gradients those of the full
batch: weighting shards by their token counts, not equally, is what keeps a shard with more PAD equal
to the same rows inside the full batch. The only difference from one full-batch step is the order
of the floating-point additions (float64: ~1e-15 relative; tests/npformer/training/test_parallel.py).

Replicas are made once: replica 0 is the model itself; the others are copies whose Parameters hold
the *same* `.data` arrays (so the optimizer's in-place update of the model moves every replica) and
their own `.grad`, caches and dropout generators. Each replica runs its forward and backward in its
own thread; NumPy releases the GIL inside every array operation, so the shards run at once when the
arrays are large enough (small operations are dominated by Python, which holds the GIL: see
`benchmarks/scaling.py` for when this is faster than one thread with a multi-threaded BLAS).

BLAS threads: with K replicas each GEMM should use one BLAS thread (K threads already keep K cores
busy; a multi-threaded GEMM in every replica would oversubscribe them). OpenBLAS has one process-wide
thread count (no per-thread limit in its API), so `DataParallel(..., blas_threads=1)` sets it to 1 for
the whole process through ctypes (`npformer.training.blas.set_blas_threads`; optional: when no OpenBLAS/MKL
symbol is found, nothing changes and `blas_threads_set` is False). Setting `OPENBLAS_NUM_THREADS=1`
before NumPy is imported does the same. Concurrent calls into OpenBLAS from several threads are safe.

Memory: replica k > 0 holds gradients only during a step. Its Parameters adopt the gradient
arrays backward makes (npformer.fast.adopt_grad: taken, not copied into a zeroed `.grad`), and
the all-reduce releases them (`.grad = None`) once they are summed into the model's: between steps
the replicas hold no gradient memory, and no pass zeroes or copies theirs.

Dropout: replica k > 0 draws from its own generator, restarted at every training step from a seed
the model's generator draws: a run is reproducible for a given seed and number of replicas, resumed
(the checkpoint saves the model's generator) it draws the masks of the uninterrupted run, and its
masks differ from a one-thread run's. `collect_dropout_masks()` returns each replica's masks of the last step,
`replay_dropout_masks(per_shard)` queues masks for the next one, and `split_masks` / `join_masks`
convert between one full-batch mask dict and per-shard dicts (every mask is batch-first), so a
data-parallel step can replay a one-thread step's masks exactly, and the other way round.
"""
from __future__ import annotations

import copy
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Callable, Sequence

import numpy as np

from npformer.checks.dropout_masks import collect_dropout_masks, replay_dropout_masks
from npformer.fast.adopt_grad import adopt_gradients
from npformer.layers.dropout import Dropout
from npformer.layers.module import Module
from npformer.training.blas import set_blas_threads
from npformer.training.forward import model_forward

__all__ = ["DataParallel", "replicate", "shard_bounds", "shard_batch", "split_masks",
           "join_masks", "make_step_fn", "choose_replicas"]


# ---------------------------------------------------------------------------------------------------
# shards
# ---------------------------------------------------------------------------------------------------
def shard_bounds(batch_size: int, num_shards: int) -> list[tuple[int, int]]:
    """Contiguous row ranges [(lo, hi)], as equal as possible, first ones larger; empty ranges dropped
    (a batch of 3 rows over 4 replicas gives 3 shards)."""
    edges = np.linspace(0, batch_size, num_shards + 1)                 # (K+1,)
    sizes = np.diff(np.floor(edges).astype(np.int64))                  # (K,)
    sizes = np.sort(sizes)[::-1]                                       # larger shards first
    ends = np.cumsum(sizes)                                            # (K,)
    return [(int(e - s), int(e)) for s, e in zip(sizes, ends) if s > 0]


def shard_batch(batch, lo: int, hi: int):
    """Rows lo:hi of every array of a batch (a NamedTuple of arrays whose first axis is the batch)."""
    return type(batch)(*(a[lo:hi] for a in batch))


def _batch_rows(batch) -> int:
    """Number of rows of a batch, checking that every field is an array with that leading size."""
    if not isinstance(batch, tuple) or not hasattr(batch, "_fields") or not len(batch):
        raise TypeError(f"batch: expected a batch NamedTuple of arrays (Seq2SeqBatch, "
                        f"ClassificationBatch), got {type(batch).__name__}")
    sizes = {}
    for name, a in zip(batch._fields, batch):
        if not isinstance(a, np.ndarray) or a.ndim == 0:
            raise TypeError(f"batch.{name}: expected an array with a batch axis first, got "
                            f"{type(a).__name__}")
        sizes[name] = a.shape[0]
    if len(set(sizes.values())) != 1:
        raise ValueError(f"batch: expected every field to have the same number of rows, got {sizes}")
    return next(iter(sizes.values()))


# ---------------------------------------------------------------------------------------------------
# replicas
# ---------------------------------------------------------------------------------------------------
_TRANSIENT = ("_cache", "last_mask", "_replay", "attn_weights")   # per-forward state, not copied


def replicate(model: Module) -> Module:
    """A copy of `model` whose Parameters share `.data` with the model's and own a fresh `.grad`.
    Caches and recorded masks are not copied; each distinct dropout generator is replaced by one
    spawned from it (independent stream, reproducible from the model's seed)."""
    memo: dict[int, object] = {}
    for p in model.parameters():
        memo[id(p.data)] = p.data                                     # shared: not copied
    for _, m in model.named_modules():
        for attr in _TRANSIENT:
            v = m.__dict__.get(attr)
            if v is not None:
                memo[id(v)] = None                                    # the copy starts empty
        if isinstance(m, Dropout) and id(m.rng) not in memo:
            memo[id(m.rng)] = m.rng.spawn(1)[0]                       # own stream per replica
    rep = copy.deepcopy(model, memo)
    for p in rep.parameters():
        p.zero_grad()
    return rep


def _dropout_streams(model: Module, reps: Sequence[Module]) -> list[tuple]:
    """(each distinct dropout generator of `model`, the replicas' generators in its place)."""
    out, seen = [], set()
    named = [list(r.named_modules()) for r in reps]
    for i, (_, m) in enumerate(model.named_modules()):
        if isinstance(m, Dropout) and m.rng is not None and id(m.rng) not in seen:
            seen.add(id(m.rng))
            out.append((m.rng, [mods[i][1].rng for mods in named]))
    return out


# ---------------------------------------------------------------------------------------------------
# masks
# ---------------------------------------------------------------------------------------------------
def split_masks(masks: dict[str, np.ndarray], bounds: Sequence[tuple[int, int]]) -> list[dict]:
    """One full-batch {module name: mask} dict -> one dict per shard (rows lo:hi of every mask)."""
    return [{k: v[lo:hi] for k, v in masks.items()} for lo, hi in bounds]


def join_masks(per_shard: Sequence[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """Per-shard mask dicts -> one full-batch dict (concatenated along the batch axis)."""
    names = set(per_shard[0]) if per_shard else set()
    for i, d in enumerate(per_shard):
        if set(d) != names:
            raise ValueError(f"per_shard[{i}]: expected masks for {sorted(names)}, got {sorted(d)}")
    return {k: np.concatenate([d[k] for d in per_shard], axis=0) for k in sorted(names)}


# ---------------------------------------------------------------------------------------------------
# the wrapper
# ---------------------------------------------------------------------------------------------------
class DataParallel:
    """Run forward+backward of one batch on `replicas` threads; gradients summed into `model`.

    DataParallel(model, replicas, *, forward=None, blas_threads=1)
        model     the npformer model; its Parameters receive the summed gradients (the optimizer and
                  gradient clipping work on `model` exactly as without data parallelism)
        replicas  number of replicas = threads (>= 1; 1 runs the plain step in the calling thread)
        forward   (model, batch) -> (logits, targets); default: npformer.training.train's (src, tgt_in) ->
                  tgt_out for Seq2SeqBatch, src -> labels for ClassificationBatch
        blas_threads  process-wide BLAS thread count to set (1: one per replica); None: leave it

    step(batch, loss_fn) -> float: the token-weighted loss of the whole batch; afterwards every
    `model` parameter's `.grad` holds the full batch's gradient (it is overwritten, not added to).
    forward(*inputs) -> output: inference on the rows split over the replicas (no backward after it).
    """

    def __init__(self, model: Module, replicas: int, *,
                 forward: Callable | None = None, blas_threads: int | None = 1):
        if not isinstance(model, Module):
            raise TypeError(f"model: expected an npformer Module, got {type(model).__name__}")
        if isinstance(replicas, bool) or not isinstance(replicas, (int, np.integer)) or replicas < 1:
            raise ValueError(f"replicas: expected an int >= 1, got {replicas!r}")
        if forward is not None and not callable(forward):
            raise TypeError(f"forward: expected a callable (model, batch) -> (logits, targets), got "
                            f"{type(forward).__name__}")
        self.model = model
        self.forward_fn = forward or model_forward
        self.replicas = [model] + [replicate(model) for _ in range(int(replicas) - 1)]
        self._streams = _dropout_streams(model, self.replicas[1:])
        self._params = [r.parameters() for r in self.replicas]       # [replica][param]
        for params in self._params[1:]:                               # gradients only during a step
            adopt_gradients(params)
        self._pool = ThreadPoolExecutor(int(replicas) - 1, thread_name_prefix="npformer-dp") \
            if replicas > 1 else None
        self._losses: list = []                                       # per-replica loss modules
        self.last_bounds: list[tuple[int, int]] = []                  # shards of the last step
        self.blas_threads_set = False
        if blas_threads is not None and replicas > 1:
            self.blas_threads_set = set_blas_threads(int(blas_threads))

    @property
    def num_replicas(self) -> int:
        return len(self.replicas)

    def close(self) -> None:
        """Stop the worker threads (the wrapper cannot step afterwards)."""
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None

    def __enter__(self) -> "DataParallel":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- helpers --------------------------------------------------------------------------------------
    def _map(self, fn, items: list) -> list:
        """fn over items: item 0 in the calling thread, the others on the pool, in order. Every call
        has finished when this returns or raises (the first error, by item order, is raised)."""
        futures = [self._pool.submit(fn, *it) for it in items[1:]]
        try:
            first = fn(*items[0])
        finally:
            wait(futures)                                              # no replica left running
        return [first] + [f.result() for f in futures]

    def _reseed_replicas(self) -> None:
        """Restart the replicas' dropout generators from seeds the model's generators draw, so their
        streams follow from the model's generator state alone (what save_training_state keeps)."""
        for g, copies in self._streams:
            for r, s in zip(copies, g.integers(0, 2**63, size=len(copies))):
                r.bit_generator.state = type(r.bit_generator)(int(s)).state

    def _check_shared(self) -> None:
        base = self._params[0]
        for k, params in enumerate(self._params[1:], 1):
            if any(p.data is not q.data for p, q in zip(base, params)):
                raise RuntimeError(f"DataParallel: replica {k} no longer shares the model's parameter "
                                   f"arrays (a Parameter's .data was re-assigned instead of updated "
                                   f"in place); make a new DataParallel")

    def _loss_modules(self, loss_fn) -> list:
        if len(self._losses) != self.num_replicas or self._losses[0][0] is not loss_fn:
            self._losses = [(loss_fn, copy.deepcopy(loss_fn)) for _ in range(self.num_replicas)]
        return [c for _, c in self._losses]

    # -- one step -------------------------------------------------------------------------------------
    def step(self, batch, loss_fn) -> float:
        """Forward + backward of `batch` over the replicas; gradients of the full batch in `model`."""
        if self._pool is None and self.num_replicas > 1:
            raise RuntimeError("DataParallel: closed (close() was called); make a new one")
        rows = _batch_rows(batch)
        if not hasattr(loss_fn, "ignore_index") or not hasattr(loss_fn, "backward"):
            raise TypeError(f"loss_fn: expected an npformer CrossEntropyLoss, got "
                            f"{type(loss_fn).__name__}")
        self._check_shared()
        bounds = shard_bounds(rows, self.num_replicas)
        self.last_bounds = bounds
        losses = self._loss_modules(loss_fn)
        for r in self.replicas[1:]:
            if r.training != self.model.training:
                r.train(self.model.training)
        if self.model.training:
            self._reseed_replicas()

        def forward(k, lo, hi):
            logits, targets = self.forward_fn(self.replicas[k], shard_batch(batch, lo, hi))
            n = int(np.count_nonzero(np.asarray(targets) != losses[k].ignore_index))
            return float(losses[k](logits, targets)) if n else 0.0, n

        out = self._map(forward, [(k, lo, hi) for k, (lo, hi) in enumerate(bounds)])
        counts = [n for _, n in out]                                   # n_k per shard
        total = sum(counts)                                            # N
        if total == 0:
            raise ValueError(f"batch: every target equals ignore_index={loss_fn.ignore_index}; the "
                             f"mean over zero counted targets is undefined")
        active = [k for k, n in enumerate(counts) if n]                # shards with counted tokens

        def backward(k):
            r = self.replicas[k]
            r.zero_grad()
            r.backward(losses[k].backward(counts[k] / total))       # upstream n_k / N

        self.model.zero_grad()                                         # a skipped replica 0 adds 0
        self._map(backward, [(k,) for k in active])
        self._all_reduce([k for k in active if k != 0])
        return float(sum(loss * n for loss, n in out)) / total          # sum_k n_k L_k / N

    def _all_reduce(self, others: list[int]) -> None:
        """model.grad += replica_k.grad for every k in `others`; parameters split over the threads."""
        if not others:
            return
        idx = list(range(len(self._params[0])))
        groups = [idx[i::self.num_replicas] for i in range(self.num_replicas)]

        def reduce(group):
            for j in group:
                p0 = self._params[0][j]
                for k in others:
                    g = self._params[k][j].grad                        # (param shape)
                    if g is not None:                                  # None: untouched this step
                        p0.accumulate(g)
                        self._params[k][j].grad = None                 # released until next step

        self._map(reduce, [(g,) for g in groups if g])

    def forward(self, *inputs: np.ndarray) -> np.ndarray:
        """Inference: `model(*inputs)` with the rows split over the replicas, outputs concatenated.

        Every input is an array whose first axis is the batch (ids; a mask must then be given per
        row). Each replica keeps its shard's cache, so no backward follows this call (use step()).
        """
        if self._pool is None and self.num_replicas > 1:
            raise RuntimeError("DataParallel: closed (close() was called); make a new one")
        if not inputs:
            raise ValueError("inputs: expected at least one array (the batch's ids)")
        for i, a in enumerate(inputs):
            if not isinstance(a, np.ndarray) or a.ndim == 0:
                raise TypeError(f"inputs[{i}]: expected an array with the batch axis first, got "
                                f"{type(a).__name__}")
        rows = inputs[0].shape[0]
        bad = {i: a.shape[0] for i, a in enumerate(inputs) if a.shape[0] != rows}
        if bad:
            raise ValueError(f"inputs: expected {rows} rows in every array (inputs[0]'s), got {bad}")
        self._check_shared()
        for r in self.replicas[1:]:
            if r.training != self.model.training:
                r.train(self.model.training)
        bounds = shard_bounds(rows, self.num_replicas)
        self.last_bounds = bounds
        outs = self._map(lambda k, lo, hi: self.replicas[k](*(a[lo:hi] for a in inputs)),
                         [(k, lo, hi) for k, (lo, hi) in enumerate(bounds)])
        return np.concatenate(outs, axis=0)                                # (B, ...)

    # -- dropout masks --------------------------------------------------------------------------------
    def collect_dropout_masks(self) -> list[dict[str, np.ndarray]]:
        """Each shard's {module name: keep-mask} of the last step (join_masks makes one dict)."""
        return [collect_dropout_masks(self.replicas[k]) for k in range(len(self.last_bounds))]

    def replay_dropout_masks(self, per_shard: Sequence[dict[str, np.ndarray]]) -> None:
        """Queue one mask dict per shard of the next step (split_masks cuts a full-batch dict)."""
        if len(per_shard) > self.num_replicas:
            raise ValueError(f"per_shard: expected at most {self.num_replicas} mask dicts (one per "
                             f"replica), got {len(per_shard)}")
        for k, masks in enumerate(per_shard):
            replay_dropout_masks(self.replicas[k], masks)


def make_step_fn(model: Module, loss_fn, replicas: int = 1, *, forward: Callable | None = None):
    """The training loop's forward+backward: step(batch) -> loss, leaving the gradients in `model`.

    replicas == 1: the plain step (forward, loss, zero_grad, backward) in the calling thread.
    replicas > 1: a DataParallel step (token-weighted, gradients summed); `step.parallel` is the
    DataParallel (close it when done), None for the plain step.
    """
    fwd = forward or model_forward
    if replicas == 1:
        def step(batch) -> float:
            logits, targets = fwd(model, batch)
            loss = float(loss_fn(logits, targets))
            model.zero_grad()
            model.backward(loss_fn.backward())
            return loss
        step.parallel = None
        return step
    dp = DataParallel(model, replicas, forward=forward)

    def step(batch) -> float:
        return dp.step(batch, loss_fn)
    step.parallel = dp
    return step


# Activation elements per replica (rows x tokens x d_model) from which `auto` splits the batch. Below
# it every NumPy call is short, so Python's fixed cost per call (paid under the GIL, once per replica)
# outweighs the elementwise work the second thread takes over. Measured on 2 idle cores, training
# step, `python -m benchmarks --scaling --configs tiny,small,main-job,mid,small-l64,base`
# (docs/benchmarks/run-scaling.txt): data-parallel time / one-model time = 1.13 at 16384 elements per
# replica (small), 1.16 at 24576 (main-job, `npformer train`'s default), 1.08 at 32768 (mid), 0.93
# at 65536 (small-l64), 0.89 at 131072 (base); other idle runs moved these by a few hundredths.
MIN_ELEMENTS_PER_REPLICA = 65536


def choose_replicas(threads: int, batch_size: int, mode: str = "auto", *, tokens_per_row: int,
                    d_model: int) -> int:
    """Data-parallel replicas the training loop uses for `threads` CPU threads (the CLI's --threads).

    mode "off": 1 (one model; BLAS gets the threads).  "on": `threads` replicas (at most one per row).
    "auto": `threads` replicas when threads > 1 and each replica's activations, (batch_size //
    threads) rows x tokens_per_row x d_model, reach MIN_ELEMENTS_PER_REPLICA; else 1. With data
    parallelism every operation (the elementwise ones too, which NumPy runs on one core) runs on all
    the threads; with one model only the GEMMs do, but each call pays Python's overhead once.
    """
    if mode not in ("auto", "on", "off"):
        raise ValueError(f"mode: expected 'auto', 'on' or 'off', got {mode!r}")
    for name, v in (("threads", threads), ("batch_size", batch_size),
                    ("tokens_per_row", tokens_per_row), ("d_model", d_model)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name}: expected an int >= 1, got {v!r}")
    if mode == "off" or threads == 1:
        return 1
    if mode == "on":
        return int(min(threads, batch_size))
    per_replica = (batch_size // threads) * tokens_per_row * d_model
    return int(threads) if per_replica >= MIN_ELEMENTS_PER_REPLICA else 1
