"""Backends: one model configuration, run by different implementations, on the same weights and inputs.

  np-f32 / np-f64          npformer float32 / float64 with the npformer.fast variants training uses
                           (FusedAdam, few-rows Linear, the elementwise variants on the run's threads)
                           and those `npformer generate` uses (last-position logits while decoding);
                           fwd_bwd and train_step run as `npformer train --threads N` runs the batch:
                           N data-parallel replicas where its --data-parallel auto rule
                           (npformer.training.parallel.choose_replicas) picks them, else one model
  np-f32-one-model         np-f32 trained as with --data-parallel off: always one model
  np-f32-plain             npformer float32 as a learner reads it: plain Adam, no npformer.fast
  hf-cpu                   transformers' GPT2LMHeadModel, causal configs (benchmarks/hf_backend.py)
  tf-cpu                   torchformer on CPU, eager, float32, attention via F.scaled_dot_product_attention
                           (the torch sessions: benchmarks/torch_backend.py)
  tf-cpu-explicit          the same with the explicit attention path (matmul, softmax, matmul)
  tf-cpu-compile           torchformer under torch.compile (default inductor backend); a failure is
                           caught and reported as the backend's error, the run goes on
  nn-cpu                   stock torch.nn.Transformer, same configuration (benchmarks/stock.py)
  tf-cuda-fp32 / -tf32     torchformer on CUDA, float32 with TF32 matmuls off / on
  tf-cuda-bf16             bfloat16 autocast (weights float32)
  tf-cuda-fp32-explicit, tf-cuda-bf16-explicit   explicit attention instead of SDPA
  tf-cuda-compile-tf32, tf-cuda-compile-bf16     torch.compile on CUDA
  nn-cuda-tf32, nn-cuda-bf16                      stock torch.nn on CUDA

Every backend of a configuration gets the same weights (the float32 npformer model's initial state,
built with seed 0) and the same token ids; `Session.check_logits` compares its eval-mode logits with
npformer float64 on them, so "the same model" is verified, not assumed.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, Callable, NamedTuple

import numpy as np

BOS = 1  # first decoder token of stock generation (npformer.data.tasks.BOS; weights are random anyway)


@dataclass(frozen=True)
class Backend:
    name: str
    impl: str                       # "npformer", "torchformer" or "torch.nn"
    device: str = "cpu"
    dtype: str = "float32"          # parameter dtype
    compile: bool = False
    tf32: bool = False
    autocast: str | None = None     # "bfloat16" or None
    attention: str = "sdpa"         # "sdpa" or "explicit" (torchformer only)
    note: str = ""
    fast: bool = True               # npformer: the npformer.fast variants training uses
    data_parallel: str = "auto"     # npformer's training workloads: as `--data-parallel` says

    @property
    def family(self) -> str:
        return "numpy" if self.impl == "npformer" else "torch"

    @property
    def cuda(self) -> bool:
        return self.device.startswith("cuda")

    @property
    def precision(self) -> str:
        """The precision its matmuls run in: which measured peak it is judged against."""
        if self.autocast:
            return self.autocast
        if self.dtype == "float64":
            return "float64"
        return "tf32" if (self.cuda and self.tf32) else "float32"

    @property
    def memory_kind(self) -> str:
        return "numpy" if self.family == "numpy" else ("torch-cuda" if self.cuda else "torch-cpu")

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "impl": self.impl, "device": self.device, "dtype": self.dtype,
                "compile": self.compile, "tf32": self.tf32, "autocast": self.autocast,
                "attention": self.attention, "precision": self.precision, "note": self.note,
                "fast": self.fast, "data_parallel": self.data_parallel}


_B = Backend
BACKENDS: dict[str, Backend] = {b.name: b for b in (
    _B("np-f32", "npformer"),
    _B("np-f64", "npformer", dtype="float64"),
    _B("np-f32-plain", "npformer", fast=False, note="npformer.optim.Adam, no npformer.fast"),
    _B("np-f32-one-model", "npformer", data_parallel="off",
       note="np-f32 trained as with --data-parallel off: one model, its products on every thread"),
    _B("hf-cpu", "transformers", note="transformers GPT2LMHeadModel (causal configs)"),
    _B("tf-cpu", "torchformer"),
    _B("tf-cpu-explicit", "torchformer", attention="explicit"),
    _B("tf-cpu-compile", "torchformer", compile=True),
    _B("nn-cpu", "torch.nn"),
    _B("tf-cuda-fp32", "torchformer", device="cuda"),
    _B("tf-cuda-tf32", "torchformer", device="cuda", tf32=True),
    _B("tf-cuda-bf16", "torchformer", device="cuda", autocast="bfloat16"),
    _B("tf-cuda-fp32-explicit", "torchformer", device="cuda", attention="explicit"),
    _B("tf-cuda-bf16-explicit", "torchformer", device="cuda", autocast="bfloat16",
       attention="explicit"),
    _B("tf-cuda-compile-tf32", "torchformer", device="cuda", tf32=True, compile=True),
    _B("tf-cuda-compile-bf16", "torchformer", device="cuda", autocast="bfloat16", compile=True),
    _B("nn-cuda-tf32", "torch.nn", device="cuda", tf32=True),
    _B("nn-cuda-bf16", "torch.nn", device="cuda", autocast="bfloat16"),
)}
CPU_DEFAULT = ("np-f32", "np-f32-plain", "np-f64", "tf-cpu", "tf-cpu-compile", "nn-cpu")
CPU_QUICK = ("np-f32", "np-f64", "tf-cpu", "nn-cpu")
CUDA_DEFAULT = tuple(n for n, b in BACKENDS.items() if b.cuda)
CUDA_QUICK = ("tf-cuda-fp32", "tf-cuda-tf32", "tf-cuda-bf16", "tf-cuda-bf16-explicit", "nn-cuda-bf16")


def default_backends(quick: bool, cuda: bool) -> list[str]:
    names = list(CPU_QUICK if quick else CPU_DEFAULT)
    if cuda:
        names += list(CUDA_QUICK if quick else CUDA_DEFAULT)
    return names


def get_backend(name: str) -> Backend:
    if name not in BACKENDS:
        raise ValueError(f"--backends: expected names from {list(BACKENDS)}, got {name!r}")
    return BACKENDS[name]


class NotApplicable(Exception):
    """This workload does not apply to this backend (reported as skipped, with the reason)."""


# -- shared inputs -------------------------------------------------------------------------------------
@dataclass
class Inputs:
    src: np.ndarray        # (B, S) int64 source ids (seq2seq)
    tgt_in: np.ndarray     # (B, T) decoder input ids
    tgt_out: np.ndarray    # (B, T) targets of the loss
    gen_src: np.ndarray    # (Bg, S) source (seq2seq) or prompt (causal) for generation


def make_inputs(bc, tcfg, seed: int = 0) -> Inputs:
    """Random ids in [3, V): never PAD (0), BOS (1) or EOS (2) of npformer.data.tasks, so nothing is padded."""
    rng = np.random.default_rng(seed)
    lo = 3

    def ids(shape, vocab):
        return rng.integers(lo, vocab, size=shape, dtype=np.int64)

    S = bc.src_len if bc.model == "seq2seq" else 0
    src = ids((bc.batch, S), tcfg.src_vocab)
    tgt_in = ids((bc.batch, bc.tgt_len), tcfg.tgt_vocab)
    tgt_out = ids((bc.batch, bc.tgt_len), tcfg.tgt_vocab)
    gen_len = bc.src_len if bc.model == "seq2seq" else prompt_length(bc)
    gen_src = ids((bc.gen_batch, gen_len), tcfg.src_vocab if bc.model == "seq2seq" else tcfg.tgt_vocab)
    return Inputs(src, tgt_in, tgt_out, gen_src)


def prompt_length(bc) -> int:
    """Decoder tokens fed before the first generated one: BOS (seq2seq) or a 16-token prompt (causal)."""
    return 1 if bc.model == "seq2seq" else 16


class TrainBatch(NamedTuple):
    """One training batch as DataParallel shards it (every field batch-first)."""
    src: np.ndarray               # (B, S) source ids (B, 0 for a causal model)
    tgt_in: np.ndarray            # (B, T) decoder input ids
    tgt_out: np.ndarray           # (B, T) next-token targets


# -- sessions --------------------------------------------------------------------------------------------
class Session:
    """A built model of one backend, ready to run each workload; `fn(workload)` gives the callable."""

    backend: Backend
    kv_cache: bool = True

    def fn(self, workload: str) -> Callable[[], object]:
        raise NotImplementedError

    def logits(self, src: np.ndarray, tgt: np.ndarray) -> np.ndarray:
        """Eval-mode logits of (src, tgt) ids as float64 NumPy (the same-model check; src unused by
        causal models)."""
        raise NotImplementedError

    def close(self) -> None:
        pass

    def compile_stats(self) -> dict[str, int] | None:
        """torch.compile's running counts (graph breaks, graphs) or None when nothing is compiled."""
        return None


class NumpySession(Session):
    def __init__(self, bc, backend: Backend, master_state: dict, inputs: Inputs,
                 threads: int | None = None):
        from npformer.layers.loss import CrossEntropyLoss

        self.bc, self.backend, self.inputs = bc, backend, inputs
        tcfg = bc.transformer_config(backend.dtype)
        self.model = np_model(bc.model, tcfg)
        self.model.load_state_dict(master_state)
        self.loss = CrossEntropyLoss()
        self.threads = threads or 1
        self.parallel = None                              # the DataParallel of training, if chosen
        if backend.fast:                                  # the speed variants, as training picks them
            from npformer.fast.accelerate import accelerate
            from npformer.fast.fused_adam import FusedAdam
            from npformer.fast.last_logits import use_last_position_logits
            use_last_position_logits(self.model)          # read by decoding only
            accelerate(self.model, self.threads)
            accelerate(self.loss, self.threads)
            self.train_model, self.train_loss, replicas = self._training_model(bc, tcfg, master_state)
            self.opt = FusedAdam(self.train_model.named_parameters(), lr=1e-4, threads=threads)
            if replicas > 1:                              # after the optimizer, as training does
                from npformer.training.parallel import DataParallel
                self.parallel = DataParallel(self.train_model, replicas, blas_threads=None,
                                             forward=partial(_shard_logits, bc.model))
        else:
            from npformer.optim import Adam
            self.train_model, self.train_loss = self.model, self.loss
            self.opt = Adam(self.model.named_parameters(), lr=1e-4)

    def _training_model(self, bc, tcfg, master_state: dict):
        """The model fwd_bwd and train_step run, as `npformer train --threads N` runs it: with
        data parallelism when `choose_replicas` (--data-parallel auto) picks it for this batch, a
        copy of the model split over N replicas, one BLAS thread and one elementwise thread each;
        otherwise the forward's own model."""
        from npformer.training.parallel import choose_replicas
        replicas = choose_replicas(self.threads, bc.batch, self.backend.data_parallel,
                                   tokens_per_row=bc.tgt_len, d_model=tcfg.d_model)
        if replicas == 1:
            return self.model, self.loss, 1
        from npformer.fast.accelerate import accelerate
        from npformer.layers.loss import CrossEntropyLoss
        model = np_model(bc.model, tcfg)
        model.load_state_dict(master_state)
        accelerate(model, 1)                              # before the replicas are copied
        return model, accelerate(CrossEntropyLoss(), 1), replicas

    def workload_note(self, workload: str) -> str | None:
        """How this backend ran `workload` when it differs from one model on the run's threads."""
        if self.parallel is None or workload not in ("fwd_bwd", "train_step"):
            return None
        mode = self.backend.data_parallel
        return (f"data parallelism: {self.parallel.num_replicas} replicas, one BLAS and one "
                f"elementwise thread each, as `npformer train --threads {self.threads}` runs this "
                f"batch (--data-parallel {mode}); the other replicas' gradients exist only during "
                f"a step (in its peak)")

    def resident_extra_bytes(self, workload: str) -> int:
        """Bytes `workload` keeps allocated between calls beyond one model's parameters and
        gradients: the gradient arrays the other data-parallel replicas hold now (read, not
        assumed; 0 without data parallelism)."""
        if self.parallel is None or workload not in ("fwd_bwd", "train_step"):
            return 0
        return sum(g.nbytes for r in self.parallel.replicas[1:] for p in r.parameters()
                   if (g := p.__dict__.get("grad")) is not None)

    def close(self) -> None:
        if self.parallel is not None:
            self.parallel.close()

    def _logits(self, ids_a, ids_b=None, model=None):
        model = self.model if model is None else model
        if self.bc.model == "seq2seq":
            return model.forward(ids_a, ids_b)
        return model.forward(ids_b)

    def _parallel_step(self) -> float:
        """One data-parallel forward + backward, OpenBLAS at one thread per replica during it (as
        the training loop sets it for a whole run; restored after, for the other workloads)."""
        from npformer.training.blas import set_blas_threads
        self.train_model.train()
        set_blas_threads(1)
        try:
            x = self.inputs
            return self.parallel.step(TrainBatch(x.src, x.tgt_in, x.tgt_out), self.train_loss)
        finally:
            set_blas_threads(self.threads)

    def fn(self, workload: str) -> Callable[[], object]:
        m, x = self.model, self.inputs

        def forward():
            m.eval()
            return self._logits(x.src, x.tgt_in)

        def fwd_bwd():
            if self.parallel is not None:
                return self._parallel_step()
            tm = self.train_model
            tm.train()
            tm.zero_grad()
            logits = self._logits(x.src, x.tgt_in, tm)                   # (B, T, V)
            loss = self.train_loss.forward(logits, x.tgt_out)
            tm.backward(self.train_loss.backward())
            return loss

        def train_step():
            loss = fwd_bwd()
            self.opt.step()
            return loss

        if workload == "forward":
            return forward
        if workload == "fwd_bwd":
            return fwd_bwd
        if workload == "train_step":
            return train_step
        if workload == "generate":
            from npformer.decoding.generate import greedy_decode
            from npformer.fast.linear import use_few_rows_linear

            def generate():
                # the few-row product only while decoding, as `npformer generate` runs it (training
                # and a plain forward never use it)
                use_few_rows_linear(m, on=self.backend.fast)
                try:
                    return greedy_decode(m, x.gen_src, max_new_tokens=self.bc.gen_tokens,
                                         eos_id=None)
                finally:
                    use_few_rows_linear(m, on=False)
            return generate
        raise ValueError(f"workload: unknown {workload!r}")

    def logits(self, src: np.ndarray, tgt: np.ndarray) -> np.ndarray:
        self.model.eval()
        return np.asarray(self._logits(src, tgt), dtype=np.float64)


def _shard_logits(kind: str, model, batch: TrainBatch):
    """(logits, targets) of one DataParallel shard of a `kind` ("seq2seq" or causal) model."""
    if kind == "seq2seq":
        return model.forward(batch.src, batch.tgt_in), batch.tgt_out
    return model.forward(batch.tgt_in), batch.tgt_out


def np_model(model: str, tcfg):
    """npformer's model of a benchmark configuration ("seq2seq": Transformer, else CausalLM), seed 0."""
    if model == "seq2seq":
        from npformer.models.transformer import Transformer
        return Transformer(tcfg, seed=0)
    from npformer.models.causal_lm import CausalLM
    return CausalLM(tcfg, seed=0)


def make_session(bc, backend: Backend, master_state: dict, inputs: Inputs, threads: int) -> Session:
    if backend.family == "numpy":
        return NumpySession(bc, backend, master_state, inputs, threads)
    if backend.impl == "transformers":
        from benchmarks.hf_backend import HFSession
        return HFSession(bc, backend, master_state, inputs, threads)
    from benchmarks.torch_backend import TorchSession
    return TorchSession(bc, backend, master_state, inputs, threads)


def master_weights(bc) -> dict[str, np.ndarray]:
    """The configuration's weights every backend loads: npformer float32, seed 0."""
    return dict(np_model(bc.model, bc.transformer_config("float32")).state_dict())
