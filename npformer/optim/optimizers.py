"""Optimizers, the paper's warm-up learning-rate schedule and gradient clipping, in NumPy.

The update rules are those of `torch.optim` (torch 2.13, single-tensor path), operation for operation,
so a model trained here and the same model trained by torchformer with `torch.optim` stay equal to
rounding. Notation for one parameter at step t (counted per parameter, from 1):

    theta   the parameter          g_t  its gradient          gamma  the learning rate (`lr`)
    lambda  `weight_decay`         mu   `momentum`            tau    `dampening`
    beta1, beta2   `betas`         eps  `eps`

Every optimizer takes `params` as `model.named_parameters()`, a list of `(name, Parameter)` pairs, or a
list of Parameters (named "0", "1", ...). Its state is keyed by those names, so `state_dict()` can be
checked against a model and moved to the torch twin by name (npformer.io.checkpoint does that).
A parameter whose `.grad` is None is skipped by `step()` (as torch skips a parameter without grad).

Hyper-parameters are plain attributes (`opt.lr = 0.1` changes the learning rate, which is what
`WarmupSchedule` does every step).
"""
from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from npformer.layers.module import Module, Parameter

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "warmup_lr", "WarmupSchedule", "clip_grad_norm"]


# -- parameters ---------------------------------------------------------------------------------------
def named_params(params, who: str) -> tuple[list[str], list[Parameter]]:
    """Normalise `params` to (names, Parameters): pairs keep their names, bare Parameters get "0", "1", ...

    A Module is accepted too (its `named_parameters()`). Duplicates and an empty list are errors.
    """
    if isinstance(params, Module):
        params = params.named_parameters()
    if isinstance(params, Parameter):
        params = [params]
    items = list(params)
    if not items:
        raise ValueError(f"{who}: params is empty; expected model.named_parameters(), a list of "
                         f"(name, Parameter) pairs or a list of Parameters")
    names: list[str] = []
    plist: list[Parameter] = []
    for i, item in enumerate(items):
        if isinstance(item, Parameter):
            name, p = str(i), item
        elif (isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str)
              and isinstance(item[1], Parameter)):
            name, p = item
        else:
            raise TypeError(f"{who}: params[{i}]: expected a Parameter or a (name, Parameter) pair, "
                            f"got {type(item).__name__}")
        if not np.issubdtype(p.data.dtype, np.floating):
            raise TypeError(f"{who}: parameter {name!r}: expected a floating dtype, got "
                            f"{p.data.dtype}")
        names.append(name)
        plist.append(p)
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise ValueError(f"{who}: parameter names must be unique, got duplicates {dup} (mixing bare "
                         f"Parameters and named pairs can cause this)")
    if len({id(p) for p in plist}) != len(plist):
        raise ValueError(f"{who}: the same Parameter appears twice in params (pass each tied "
                         f"parameter once, as model.named_parameters() does)")
    return names, plist


def _need(cond: bool, who: str, field: str, expected: str, got: Any) -> None:
    if not cond:
        raise ValueError(f"{who}: {field}: expected {expected}, got {got!r}")


def _is_real(v: Any) -> bool:
    return isinstance(v, (int, float, np.floating, np.integer)) and not isinstance(v, bool) \
        and math.isfinite(float(v))


def default_threads() -> int:
    """Threads for the optimizer's elementwise work: the limit set for BLAS by OMP_NUM_THREADS or
    OPENBLAS_NUM_THREADS when either is a positive int, else the cores this process may use."""
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        v = os.environ.get(var, "")
        if v.isdigit() and int(v) > 0:
            return int(v)
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def check_threads(name: str, threads) -> int:
    if threads is None:
        return default_threads()
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 1:
        raise ValueError(f"{name}: expected a positive int (or None: default_threads()), got "
                         f"{threads!r}")
    return int(threads)


_POOLS: dict[int, ThreadPoolExecutor] = {}


def _pool(n: int) -> ThreadPoolExecutor:
    """One shared pool of n worker threads, made on first use."""
    if n not in _POOLS:
        _POOLS[n] = ThreadPoolExecutor(n, thread_name_prefix="npformer-optim")
    return _POOLS[n]


# -- base class ---------------------------------------------------------------------------------------
class Optimizer:
    """Named parameters, hyper-parameters (attributes) and per-parameter state `state[name]`.

    Subclasses define `HYPER` (hyper-parameter names), `_check_hyper(h)` and `_update(p, g, state)`,
    plus `_state_keys(hyper)`: the keys a non-empty per-parameter state holds.
    """

    HYPER: tuple[str, ...] = ()

    def __init__(self, params, **hyper: Any) -> None:
        who = type(self).__name__
        self.param_names, self.params = named_params(params, who)
        hyper = self._normalise_hyper(hyper)
        self._check_hyper(hyper)
        for k, v in hyper.items():
            setattr(self, k, v)
        # per-parameter state, filled lazily by the first step that sees a gradient
        self.state: dict[str, dict[str, Any]] = {n: {} for n in self.param_names}

    # -- hyper-parameters -----------------------------------------------------------------------------
    @property
    def hyperparams(self) -> dict[str, Any]:
        """The current hyper-parameters as a dict (betas as a tuple)."""
        return {k: getattr(self, k) for k in self.HYPER}

    @staticmethod
    def _normalise_hyper(h: dict[str, Any]) -> dict[str, Any]:
        out = dict(h)
        for k, v in out.items():
            if isinstance(v, (np.floating, np.integer)) and not isinstance(v, np.bool_):
                out[k] = v.item()
            elif isinstance(v, np.bool_):
                out[k] = bool(v)
        if "betas" in out and isinstance(out["betas"], (list, tuple)):
            out["betas"] = tuple(b.item() if isinstance(b, (np.floating, np.integer)) else b
                                 for b in out["betas"])
        return out

    def _check_hyper(self, h: dict[str, Any]) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def _state_keys(self, h: dict[str, Any]) -> tuple[str, ...]:  # pragma: no cover - overridden
        raise NotImplementedError

    # -- the step -------------------------------------------------------------------------------------
    def zero_grad(self) -> None:
        """Set every parameter's gradient to zero, in place (npformer backward accumulates)."""
        for p in self.params:
            p.zero_grad()

    def step(self) -> None:
        """Update every parameter that has a gradient, in place (`.data` keeps its dtype)."""
        who = type(self).__name__
        for name, p in zip(self.param_names, self.params):   # loop over parameters, not data
            g = p.grad
            if g is None:
                continue
            if not isinstance(g, np.ndarray) or g.shape != p.data.shape or g.dtype != p.data.dtype:
                got = f"shape {g.shape} and dtype {g.dtype}" if isinstance(g, np.ndarray) \
                    else type(g).__name__
                raise ValueError(f"{who}.step: parameter {name!r}: expected a gradient of shape "
                                 f"{p.data.shape} and dtype {p.data.dtype}, got {got}")
        for name, p in zip(self.param_names, self.params):
            if p.grad is not None:
                self._update(p.data, p.grad, self.state[name])

    def _update(self, theta: np.ndarray, g: np.ndarray, state: dict) -> None:  # pragma: no cover
        raise NotImplementedError

    # -- state ----------------------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """A copy of everything needed to continue training.

        `{"type": class name, "hyperparams": {...}, "param_names": [...],
          "state": {param_name: {"step": int, "exp_avg": array, ...}}}`; parameters not stepped yet
        have no entry in "state". Arrays are copies.
        """
        state = {}
        for name in self.param_names:
            s = self.state[name]
            if s:
                state[name] = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in s.items()}
        hyper = self.hyperparams
        return {"type": type(self).__name__, "hyperparams": hyper,
                "param_names": list(self.param_names), "state": state}

    def check_state_dict(self, sd: dict[str, Any]) -> tuple[dict[str, Any], dict[str, dict]]:
        """Validate `sd` against this optimizer's parameters; return (hyperparams, new state).

        Raises ValueError naming every problem; changes nothing. `load_state_dict` applies the result.
        """
        who = f"{type(self).__name__}.load_state_dict"
        if not isinstance(sd, dict):
            raise TypeError(f"{who}: expected a dict from state_dict(), got {type(sd).__name__}")
        missing = [k for k in ("type", "hyperparams", "param_names", "state") if k not in sd]
        if missing:
            raise ValueError(f"{who}: state dict lacks keys {missing}")
        if sd["type"] != type(self).__name__:
            raise ValueError(f"{who}: expected the state of a {type(self).__name__} optimizer, got "
                             f"that of {sd['type']!r}")
        hyper = sd["hyperparams"]
        if not isinstance(hyper, dict) or set(hyper) != set(self.HYPER):
            got = sorted(hyper) if isinstance(hyper, dict) else type(hyper).__name__
            raise ValueError(f"{who}: hyperparams: expected keys {sorted(self.HYPER)}, got {got}")
        hyper = self._normalise_hyper(hyper)
        self._check_hyper(hyper)
        names = list(sd["param_names"])
        problems = []
        if sorted(names) != sorted(self.param_names):
            miss = sorted(set(self.param_names) - set(names))
            extra = sorted(set(names) - set(self.param_names))
            problems.append(f"parameter names differ: missing {miss}, unexpected {extra}")
        state_in = sd["state"]
        if not isinstance(state_in, dict):
            raise TypeError(f"{who}: state: expected a dict, got {type(state_in).__name__}")
        unknown = sorted(set(state_in) - set(self.param_names))
        if unknown:
            problems.append(f"state for unknown parameters {unknown}")
        want_keys = set(self._state_keys(hyper))
        new_state: dict[str, dict] = {n: {} for n in self.param_names}
        for name, p in zip(self.param_names, self.params):
            s = state_in.get(name)
            if not s:
                continue
            if not isinstance(s, dict) or set(s) != want_keys:
                got = sorted(s) if isinstance(s, dict) else type(s).__name__
                problems.append(f"{name}: expected state keys {sorted(want_keys)}, got {got}")
                continue
            staged = {}
            for k, v in s.items():
                if k == "step":
                    v = np.asarray(v)
                    ok = v.ndim == 0 and (np.issubdtype(v.dtype, np.integer) or
                                          (np.issubdtype(v.dtype, np.floating) and
                                           float(v) == round(float(v))))
                    if not ok or int(v) < 0:
                        problems.append(f"{name}/step: expected a non-negative integer, got {v!r}")
                        continue
                    staged[k] = int(v)
                    continue
                v = np.asarray(v)
                if not (np.issubdtype(v.dtype, np.floating) or np.issubdtype(v.dtype, np.integer)):
                    problems.append(f"{name}/{k}: expected a float array, got dtype {v.dtype}")
                elif v.shape != p.data.shape:
                    problems.append(f"{name}/{k}: expected shape {p.data.shape}, got {v.shape}")
                else:
                    staged[k] = v.astype(p.data.dtype, copy=True)   # a fresh copy in the param dtype
            new_state[name] = staged
        if problems:
            raise ValueError(f"{who}: " + "; ".join(problems) + " (nothing was loaded)")
        return hyper, new_state

    def load_state_dict(self, sd: dict[str, Any]) -> None:
        """Restore hyper-parameters and state from `state_dict()` output; all or nothing."""
        hyper, new_state = self.check_state_dict(sd)
        for k, v in hyper.items():
            setattr(self, k, v)
        self.state = new_state

    def __repr__(self) -> str:
        hp = ", ".join(f"{k}={v!r}" for k, v in self.hyperparams.items())
        return f"{type(self).__name__}({len(self.params)} parameters, {hp})"


# -- SGD ----------------------------------------------------------------------------------------------
class SGD(Optimizer):
    r"""Stochastic gradient descent with optional momentum, Nesterov momentum and L2 weight decay.

    For each parameter, at step t:

        g_t    = grad + lambda * theta_{t-1}                       (when lambda != 0)
        b_1    = g_1                                               (first step: the buffer is g itself)
        b_t    = mu * b_{t-1} + (1 - tau) * g_t                    (t > 1, when mu != 0)
        d_t    = g_t + mu * b_t  if nesterov  else  b_t            (d_t = g_t when mu == 0)
        theta_t = theta_{t-1} - gamma * d_t

    State per parameter: "momentum_buffer" b_t (only when mu != 0; torch keeps no step count for SGD).
    """

    HYPER = ("lr", "momentum", "dampening", "weight_decay", "nesterov")

    def __init__(self, params, lr: float, momentum: float = 0.0, dampening: float = 0.0,
                 weight_decay: float = 0.0, nesterov: bool = False) -> None:
        super().__init__(params, lr=lr, momentum=momentum, dampening=dampening,
                         weight_decay=weight_decay, nesterov=nesterov)

    def _check_hyper(self, h: dict[str, Any]) -> None:
        who = type(self).__name__
        _need(_is_real(h["lr"]) and h["lr"] >= 0, who, "lr", "a float >= 0", h["lr"])
        _need(_is_real(h["momentum"]) and h["momentum"] >= 0, who, "momentum", "a float >= 0",
              h["momentum"])
        _need(_is_real(h["dampening"]), who, "dampening", "a finite float", h["dampening"])
        _need(_is_real(h["weight_decay"]) and h["weight_decay"] >= 0, who, "weight_decay",
              "a float >= 0", h["weight_decay"])
        _need(isinstance(h["nesterov"], bool), who, "nesterov", "a bool", h["nesterov"])
        _need(not h["nesterov"] or (h["momentum"] > 0 and h["dampening"] == 0), who, "nesterov",
              f"False unless momentum > 0 and dampening == 0 (momentum={h['momentum']!r}, "
              f"dampening={h['dampening']!r})", h["nesterov"])

    def _state_keys(self, h: dict[str, Any]) -> tuple[str, ...]:
        return ("momentum_buffer",) if h["momentum"] != 0 else ()

    def _update(self, theta: np.ndarray, g: np.ndarray, state: dict) -> None:
        lr, mu, tau, wd = self.lr, self.momentum, self.dampening, self.weight_decay
        if wd != 0:
            g = g + wd * theta                                  # (shape of theta), a new array
        if mu != 0:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = g.copy()                                  # b_1 = g_1 (not (1 - tau) g_1)
                state["momentum_buffer"] = buf
            else:
                buf *= mu                                       # b = mu b + (1 - tau) g, in place
                buf += (1 - tau) * g
            g = g + mu * buf if self.nesterov else buf
        theta += -lr * g                                        # theta <- theta - gamma d


# -- Adam / AdamW -------------------------------------------------------------------------------------
class Adam(Optimizer):
    r"""Adam (Kingma & Ba 2015), optionally AMSGrad, with L2 weight decay added to the gradient.

    For each parameter, at step t (t = 1, 2, ...; m_0 = v_0 = 0):

        g_t     = grad + lambda * theta_{t-1}                     (when lambda != 0)
        m_t     = beta1 * m_{t-1} + (1 - beta1) * g_t             (computed as torch.lerp)
        v_t     = beta2 * v_{t-1} + (1 - beta2) * g_t^2
        vmax_t  = max(vmax_{t-1}, v_t)                            (amsgrad; v_t below becomes vmax_t)
        theta_t = theta_{t-1} - (gamma / (1 - beta1^t)) * m_t / (sqrt(v_t) / sqrt(1 - beta2^t) + eps)

    Note where eps sits: it is added to sqrt(v_t / (1 - beta2^t)), the bias-corrected root, and the
    first-moment correction is folded into the step size, exactly as torch does.

    State per parameter: "step" (int t), "exp_avg" m_t, "exp_avg_sq" v_t, and "max_exp_avg_sq"
    vmax_t with amsgrad.
    """

    HYPER = ("lr", "betas", "eps", "weight_decay", "amsgrad")
    DECOUPLED = False

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0, amsgrad: bool = False,
                 threads: int | None = None) -> None:
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                         amsgrad=amsgrad)
        self.threads = check_threads("threads", threads)
        self._jobs: list = []                                   # blocks queued by _update for step()

    def _check_hyper(self, h: dict[str, Any]) -> None:
        who = type(self).__name__
        _need(_is_real(h["lr"]) and h["lr"] >= 0, who, "lr", "a float >= 0", h["lr"])
        b = h["betas"]
        _need(isinstance(b, tuple) and len(b) == 2 and all(_is_real(x) and 0 <= x < 1 for x in b),
              who, "betas", "a pair of floats in [0, 1)", b)
        _need(_is_real(h["eps"]) and h["eps"] >= 0, who, "eps", "a float >= 0", h["eps"])
        _need(_is_real(h["weight_decay"]) and h["weight_decay"] >= 0, who, "weight_decay",
              "a float >= 0", h["weight_decay"])
        _need(isinstance(h["amsgrad"], bool), who, "amsgrad", "a bool", h["amsgrad"])

    def _state_keys(self, h: dict[str, Any]) -> tuple[str, ...]:
        keys = ("step", "exp_avg", "exp_avg_sq")
        return keys + ("max_exp_avg_sq",) if h["amsgrad"] else keys

    # Elements per block of the update. One thread: 32768 float32 are 128 KB per array, so the five or
    # six arrays of a block stay in the L2 cache across its dozen elementwise passes (see step);
    # measured on 46M float32 parameters, 1.2-1.3x faster than whole arrays, and 128K blocks slower.
    # Several threads: 4x larger blocks, else the threads spend their time waiting for the GIL
    # between the short NumPy calls (2 threads, 46M parameters: 32K blocks no faster than 1 thread,
    # 128K blocks about 1.6x).
    BLOCK = 32768
    BLOCK_THREADED = 131072
    MIN_THREADED = 4 * BLOCK_THREADED       # fewer elements in all: one thread (the pool costs more)

    def step(self) -> None:
        """One Adam step on every parameter with a gradient, in place.

        The update is elementwise, about a dozen passes per element. Run on a whole (out, in) weight,
        every pass streams all of it through main memory; run on consecutive blocks of the flattened
        arrays, a block stays in cache across its passes. The blocks of all parameters are listed,
        then updated, by `threads` worker threads when there is enough work (NumPy releases the
        GIL inside each pass, so the threads run at once). Every element gets the same arithmetic
        whatever the blocking and the threads: the results are identical.
        """
        super().step()                                          # checks; then _update lists blocks
        jobs, self._jobs = self._jobs, []
        if self.threads > 1 and sum(job[0].size for job in jobs) >= self.MIN_THREADED:
            chunks = [jobs[i::self.threads] for i in range(self.threads)]    # round robin
            list(_pool(self.threads).map(self._run_blocks, chunks))
        else:
            self._run_blocks(jobs)

    def _run_blocks(self, jobs: list) -> None:
        for job in jobs:
            self._update_block(*job)

    def _update(self, theta: np.ndarray, g: np.ndarray, state: dict) -> None:
        """Advance this parameter's step count; queue its blocks for step()."""
        if not state:                                           # lazy init: m_0 = v_0 = 0
            state["step"] = 0
            state["exp_avg"] = np.zeros_like(theta)
            state["exp_avg_sq"] = np.zeros_like(theta)
            if self.amsgrad:
                state["max_exp_avg_sq"] = np.zeros_like(theta)
        state["step"] += 1
        t = float(state["step"])
        arrays = [theta, g, state["exp_avg"], state["exp_avg_sq"], state.get("max_exp_avg_sq")]
        if not all(a is None or a.flags.c_contiguous for a in arrays):
            self._jobs.append((*arrays, t))                     # rare: non-contiguous, whole array
            return
        flat = [None if a is None else a.reshape(-1) for a in arrays]      # views: writes land in place
        n = self.BLOCK if self.threads == 1 else self.BLOCK_THREADED
        for s in range(0, theta.size, n):
            self._jobs.append((*(None if a is None else a[s:s + n] for a in flat), t))

    def _update_block(self, theta: np.ndarray, g: np.ndarray, m: np.ndarray, v: np.ndarray,
                      vmax: np.ndarray | None, t: float) -> None:
        """One Adam step on matching pieces of theta, its gradient and its state, all in place."""
        lr, (beta1, beta2), eps, wd = self.lr, self.betas, self.eps, self.weight_decay
        if wd != 0:
            if self.DECOUPLED:
                theta *= 1 - lr * wd                            # AdamW: theta <- (1 - gamma lambda) theta
            else:
                g = g + wd * theta                              # Adam: L2 term joins the gradient
        # Every line below runs in place (out= or an augmented assignment) on two scratch arrays, in
        # the same operation order as torch, so the results are those of the plain expressions in
        # the comments without allocating a temporary per operation.
        tmp = np.empty_like(theta)                              # scratch
        w = 1 - beta1                                           # m <- lerp(m, g, 1 - beta1), torch's form
        np.subtract(g, m, out=tmp)                              # g - m
        if abs(w) < 0.5:
            tmp *= w
            m += tmp                                            # m = m + w (g - m)
        else:
            tmp *= 1 - w
            np.subtract(g, tmp, out=m)                          # m = g - (g - m) (1 - w)
        v *= beta2                                              # v <- beta2 v + (1 - beta2) g^2
        np.multiply(g, 1 - beta2, out=tmp)
        tmp *= g
        v += tmp                                                # v = beta2 v + ((1 - beta2) g) g
        bias_correction1 = 1 - beta1 ** t
        bias_correction2 = 1 - beta2 ** t
        step_size = lr / bias_correction1
        if vmax is not None:                                    # amsgrad
            np.maximum(vmax, v, out=vmax)                       # vmax <- max(vmax, v)
            v = vmax
        denom = np.sqrt(v)                                      # sqrt(v / (1 - beta2^t)) + eps
        denom /= bias_correction2 ** 0.5
        denom += eps
        np.multiply(m, -step_size, out=tmp)
        tmp /= denom
        theta += tmp                                            # theta <- theta - step_size m / denom


class AdamW(Adam):
    r"""Adam with decoupled weight decay (Loshchilov & Hutter 2019), torch.optim.AdamW's rule.

    The decay shrinks the parameter before the moment updates and never enters m or v:

        theta'  = (1 - gamma * lambda) * theta_{t-1}
        m_t, v_t as in Adam with g_t = grad (no L2 term)
        theta_t = theta' - (gamma / (1 - beta1^t)) * m_t / (sqrt(v_t) / sqrt(1 - beta2^t) + eps)
    """

    DECOUPLED = True

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False,
                 threads: int | None = None) -> None:
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                         amsgrad=amsgrad, threads=threads)


# -- learning-rate schedule ---------------------------------------------------------------------------
def warmup_lr(step: int, d_model: int, warmup_steps: int, factor: float = 1.0) -> float:
    r"""The paper's learning rate (section 5.3): linear warm-up, then inverse square-root decay.

        lr(s) = factor * d_model^{-1/2} * min(s^{-1/2}, s * warmup_steps^{-3/2}),   s = max(step, 1)

    The two branches meet at s = warmup_steps, the peak, factor * (d_model * warmup_steps)^{-1/2}.
    Step 0 is treated as step 1 (the formula is undefined at 0).
    """
    for name, v in (("step", step), ("d_model", d_model), ("warmup_steps", warmup_steps)):
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool):
            raise TypeError(f"warmup_lr: {name}: expected an int, got {type(v).__name__}")
    if step < 0:
        raise ValueError(f"warmup_lr: step: expected an int >= 0, got {step}")
    if d_model < 1:
        raise ValueError(f"warmup_lr: d_model: expected a positive int, got {d_model}")
    if warmup_steps < 1:
        raise ValueError(f"warmup_lr: warmup_steps: expected a positive int, got {warmup_steps}")
    if not _is_real(factor) or factor < 0:
        raise ValueError(f"warmup_lr: factor: expected a float >= 0, got {factor!r}")
    s = max(int(step), 1)
    return float(factor) * d_model ** -0.5 * min(s ** -0.5, s * warmup_steps ** -1.5)


class WarmupSchedule:
    """Sets `optimizer.lr = warmup_lr(last_epoch + 1, d_model, warmup_steps, factor)`.

    Behaves exactly like `torch.optim.lr_scheduler.LambdaLR(opt, lambda s: warmup_lr(s + 1, ...))` on an
    optimizer whose base learning rate is 1.0: construction sets last_epoch = 0 and the first rate,
    each `step()` (call it after `optimizer.step()`) increments last_epoch and sets the next rate.
    The optimizer's own lr at construction is overwritten, not multiplied; scale with `factor`.
    """

    def __init__(self, optimizer: Optimizer, d_model: int, warmup_steps: int,
                 factor: float = 1.0) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"WarmupSchedule: optimizer: expected an npformer Optimizer, got "
                            f"{type(optimizer).__name__}")
        warmup_lr(1, d_model, warmup_steps, factor)             # validates the three arguments
        self.optimizer = optimizer
        self.d_model = int(d_model)
        self.warmup_steps = int(warmup_steps)
        self.factor = float(factor)
        self.last_epoch = -1
        self.step()

    def get_lr(self) -> float:
        """The rate for the current `last_epoch`."""
        return warmup_lr(self.last_epoch + 1, self.d_model, self.warmup_steps, self.factor)

    def get_last_lr(self) -> list[float]:
        """The rate last set, as a one-element list (torch's LRScheduler API)."""
        return [self._last_lr]

    def step(self) -> None:
        self.last_epoch += 1
        self.optimizer.lr = self.get_lr()
        self._last_lr = self.optimizer.lr

    def state_dict(self) -> dict[str, Any]:
        """`{"type": "WarmupSchedule", "last_epoch", "d_model", "warmup_steps", "factor"}`."""
        return {"type": "WarmupSchedule", "last_epoch": self.last_epoch, "d_model": self.d_model,
                "warmup_steps": self.warmup_steps, "factor": self.factor}

    @staticmethod
    def check_state_dict(sd: dict[str, Any]) -> dict[str, Any]:
        """Validate a schedule state dict; return a normalised copy. Changes nothing."""
        who = "WarmupSchedule.load_state_dict"
        if not isinstance(sd, dict):
            raise TypeError(f"{who}: expected a dict, got {type(sd).__name__}")
        want = {"type", "last_epoch", "d_model", "warmup_steps", "factor"}
        if set(sd) != want:
            raise ValueError(f"{who}: expected keys {sorted(want)}, got {sorted(sd)}")
        if sd["type"] != "WarmupSchedule":
            raise ValueError(f"{who}: type: expected 'WarmupSchedule', got {sd['type']!r}")
        le = sd["last_epoch"]
        if not isinstance(le, (int, np.integer)) or isinstance(le, bool) or le < 0:
            raise ValueError(f"{who}: last_epoch: expected an int >= 0, got {le!r}")
        try:
            warmup_lr(1, sd["d_model"], sd["warmup_steps"], sd["factor"])
        except (TypeError, ValueError) as e:
            raise ValueError(f"{who}: {e}") from None
        return {"type": "WarmupSchedule", "last_epoch": int(le), "d_model": int(sd["d_model"]),
                "warmup_steps": int(sd["warmup_steps"]), "factor": float(sd["factor"])}

    def load_state_dict(self, sd: dict[str, Any]) -> None:
        """Restore the position and constants (like LambdaLR, the optimizer's lr is left alone: it is
        restored with the optimizer's own state)."""
        sd = self.check_state_dict(sd)
        self.last_epoch = sd["last_epoch"]
        self.d_model, self.warmup_steps, self.factor = sd["d_model"], sd["warmup_steps"], sd["factor"]
        self._last_lr = self.get_lr()

    def __repr__(self) -> str:
        return (f"WarmupSchedule(d_model={self.d_model}, warmup_steps={self.warmup_steps}, "
                f"factor={self.factor}, last_epoch={self.last_epoch})")


# -- gradient clipping --------------------------------------------------------------------------------
def nonfinite_norm_message(norm_type: float) -> str:
    """The message both twins raise for a non-finite total norm with error_if_nonfinite=True."""
    return (f"clip_grad_norm: the total norm of order {float(norm_type)} of the gradients is "
            f"non-finite, so it cannot be clipped (a gradient holds NaN or inf); pass "
            f"error_if_nonfinite=False to clip anyway (the gradients then become NaN)")


def clip_grad_norm(params, max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False) -> float:
    r"""Scale all gradients in place so their joint norm is at most `max_norm`; return the norm before.

        N    = || (||g_1||_p, ||g_2||_p, ...) ||_p      (the p-norm of all gradients as one vector)
        coef = min(max_norm / (N + 1e-6), 1)
        g_i <- coef * g_i                                 (always applied, as torch does)

    `params`: as for the optimizers (named pairs, Parameters, a Module); parameters whose grad is None
    are ignored. `norm_type` may be any p >= 1 or `inf` (p < 1 is not a norm; torch accepts it and
    shrinks gradients enormously, both twins refuse it). Gradients keep their dtype.
    `error_if_nonfinite`: as torch's: True raises RuntimeError when N is NaN or inf (gradients left
    unchanged); False (the default, as torch) scales anyway and returns the non-finite N.
    """
    if isinstance(params, Module):
        params = params.parameters()
    if isinstance(params, Parameter):
        params = [params]
    plist = [item[1] if isinstance(item, tuple) else item for item in params]
    for i, p in enumerate(plist):
        if not isinstance(p, Parameter):
            raise TypeError(f"clip_grad_norm: params[{i}]: expected a Parameter or a (name, "
                            f"Parameter) pair, got {type(p).__name__}")
    if not isinstance(error_if_nonfinite, (bool, np.bool_)):
        raise TypeError(f"clip_grad_norm: error_if_nonfinite: expected a bool, got "
                        f"{type(error_if_nonfinite).__name__}")
    if not _is_real(max_norm) or max_norm < 0:
        raise ValueError(f"clip_grad_norm: max_norm: expected a float >= 0, got {max_norm!r}")
    p_ = float(norm_type)
    if not (p_ >= 1 or math.isinf(p_)) or math.isnan(p_):
        raise ValueError(f"clip_grad_norm: norm_type: expected a float >= 1 or inf, got {norm_type!r}")
    grads = [p.grad for p in plist if p.grad is not None]
    if not grads:
        return 0.0
    # per-tensor norms in each gradient's own dtype (as torch), then the norm of those norms
    norms = np.array([np.linalg.norm(g.ravel(), ord=p_) if g.size else 0.0 for g in grads],
                     dtype=np.float64)                           # (number of gradients,)
    total = float(norms.max() if math.isinf(p_) else np.linalg.norm(norms, ord=p_))
    if error_if_nonfinite and not math.isfinite(total):
        raise RuntimeError(nonfinite_norm_message(p_))
    coef = min(float(max_norm) / (total + 1e-6), 1.0)
    for g in grads:
        g *= coef                                               # in place, dtype kept
    return total
