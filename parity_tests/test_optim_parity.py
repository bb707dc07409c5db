"""npformer.optim against torch.optim (and torch's LambdaLR and clip_grad_norm_), which nobody here wrote.

Random parameters and gradients, Hypothesis-drawn hyper-parameters, 1 to 4 steps with the warm-up
schedule and gradient clipping optionally in the loop; after every step the parameters, every state
tensor, the step counts and the learning rate must agree ("optimizer_state" tolerance: float64 1e-13
relative to max(1, |ref|), far below any real rule difference such as eps placement or bias-correction
order, which shows at 1e-4..1e0).
"""
import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import npformer.optim as npo
import torchformer.optim as tfo
from npformer.layers.module import Parameter
from parity_tests.harness import compare, compare_all, note_case
from parity_tests.harness import strategies as S

TORCH_DTYPES = {"float32": torch.float32, "float64": torch.float64}


def reference_rate(s: int, d_model: int, warmup: int, factor: float) -> float:
    """The paper's formula, written out independently of both twins (s = LambdaLR's last_epoch + 1)."""
    return factor * (d_model ** -0.5) * min(s ** -0.5, s * warmup ** -1.5)


@st.composite
def optimizer_specs(draw):
    kind = draw(st.sampled_from(["SGD", "Adam", "AdamW"]))
    if kind == "SGD":
        momentum = draw(st.sampled_from([0.0, 0.5, 0.9]))
        nesterov = momentum > 0 and draw(st.booleans())
        dampening = 0.0 if nesterov else draw(st.sampled_from([0.0, 0.1]))
        hyper = dict(lr=draw(st.sampled_from([0.01, 0.1, 0.7])), momentum=momentum,
                     dampening=dampening, weight_decay=draw(st.sampled_from([0.0, 0.01, 0.3])),
                     nesterov=nesterov)
    else:
        # beta1 on both sides of 0.5: torch's lerp takes a different formula for weight >= 0.5
        hyper = dict(lr=draw(st.sampled_from([1e-3, 0.01, 0.3])),
                     betas=(draw(st.sampled_from([0.0, 0.3, 0.9, 0.95])),
                            draw(st.sampled_from([0.5, 0.98, 0.999]))),
                     eps=draw(st.sampled_from([1e-9, 1e-8, 1e-3])),
                     weight_decay=draw(st.sampled_from([0.0, 0.01, 0.2])),
                     amsgrad=draw(st.booleans()))
    return kind, hyper


@st.composite
def schedules(draw):
    if not draw(st.booleans()):
        return None
    return dict(d_model=draw(st.sampled_from([4, 16, 512])), warmup_steps=draw(st.integers(1, 4)),
                factor=draw(st.sampled_from([0.5, 1.0, 2.0])))


def make_pair(shapes, dtype, rng):
    """Equal npformer and torch parameters, named p0, p1, ..."""
    np_params, t_params = [], []
    for i, shape in enumerate(shapes):
        a = S.normal(rng, shape, dtype)
        np_params.append((f"p{i}", Parameter(a.copy())))
        t_params.append(torch.nn.Parameter(torch.from_numpy(a.copy())))
    return np_params, t_params


def compare_optimizers(np_opt, t_opt, np_params, t_params, dtype, step):
    items = []
    for (name, p), tp in zip(np_params, t_params):
        items.append((f"step{step}/{name}", p.data, tp.detach(), "optimizer_state"))
        st_np, st_t = np_opt.state[name], t_opt.state.get(tp, {})
        assert set(st_np) == set(st_t), f"{name}: state keys {sorted(st_np)} vs torch {sorted(st_t)}"
        for key, v in st_np.items():
            if key == "step":
                assert v == int(st_t[key].item()), f"{name}: step {v} vs torch {st_t[key]}"
            else:
                items.append((f"step{step}/{name}/{key}", v, st_t[key], "optimizer_state"))
    compare_all(items, dtype=dtype)
    assert np_opt.lr == t_opt.param_groups[0]["lr"], (np_opt.lr, t_opt.param_groups[0]["lr"])


@given(spec=optimizer_specs(), schedule=schedules(),
       max_norm=st.sampled_from([None, 0.05, 1.0, 1e3]),
       shapes=st.lists(st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple),
                       min_size=1, max_size=3),
       steps=st.integers(1, 4), skip=st.booleans(), dtype=S.dtypes(), seed=S.seeds())
def test_optimizer_matches_torch(spec, schedule, max_norm, shapes, steps, skip, dtype, seed):
    kind, hyper = spec
    note_case(kind=kind, hyper=hyper, schedule=schedule, max_norm=max_norm, shapes=shapes,
              steps=steps, skip=skip, dtype=dtype, seed=seed)
    rng = np.random.default_rng(seed)
    np_params, t_params = make_pair(shapes, dtype, rng)
    np_opt = getattr(npo, kind)(np_params, **hyper)
    t_opt = getattr(torch.optim, kind)(t_params, **hyper)
    np_sched = t_sched = None
    if schedule is not None:
        np_sched = npo.WarmupSchedule(np_opt, **schedule)
        # the reference: stock LambdaLR on base lr 1.0 with the paper's formula written out here
        for g in t_opt.param_groups:
            g["lr"] = 1.0
        t_sched = torch.optim.lr_scheduler.LambdaLR(
            t_opt, lambda e: reference_rate(e + 1, schedule["d_model"], schedule["warmup_steps"],
                                            schedule["factor"]))
    for step in range(steps):
        for (name, p), tp in zip(np_params, t_params):
            g = S.normal(rng, p.data.shape, dtype)
            # optionally the first parameter has no gradient on even steps (skipped by both)
            if skip and name == "p0" and step % 2 == 0:
                p.grad, tp.grad = None, None
            else:
                p.grad = g.copy()
                tp.grad = torch.from_numpy(g.copy())
        if max_norm is not None:
            total_np = npo.clip_grad_norm(np_params, max_norm)
            total_t = torch.nn.utils.clip_grad_norm_(t_params, max_norm)
            compare(f"step{step}/total_norm", np.float64(total_np), total_t, dtype, "optimizer_state")
            for (name, p), tp in zip(np_params, t_params):
                if p.grad is not None:
                    compare(f"step{step}/{name}/clipped_grad", p.grad, tp.grad, dtype,
                            "optimizer_state")
        np_opt.step()
        t_opt.step()
        if schedule is not None:
            np_sched.step()
            t_sched.step()
        compare_optimizers(np_opt, t_opt, np_params, t_params, dtype, step)
        for _, p in np_params:
            assert p.data.dtype == np.dtype(dtype)


@pytest.mark.parametrize("kind, hyper", [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.2, weight_decay=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, betas=(0.9, 0.98), eps=1e-9, weight_decay=0.1, amsgrad=True)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, betas=(0.3, 0.9), weight_decay=0.5, amsgrad=True)),
])
@pytest.mark.parametrize("steps", [1, 5])
def test_fixed_cases_one_and_several_steps(kind, hyper, steps):
    """Every optimizer variant, always run (not left to Hypothesis' draws): 1 and 5 steps, float64."""
    rng = np.random.default_rng(7)
    np_params, t_params = make_pair([(3, 4), (4,)], "float64", rng)
    np_opt = getattr(npo, kind)(np_params, **hyper)
    t_opt = getattr(torch.optim, kind)(t_params, **hyper)
    for step in range(steps):
        for (_, p), tp in zip(np_params, t_params):
            g = rng.standard_normal(p.data.shape)
            p.grad, tp.grad = g.copy(), torch.from_numpy(g.copy())
        np_opt.step()
        t_opt.step()
        compare_optimizers(np_opt, t_opt, np_params, t_params, "float64", step)


@given(d_model=st.sampled_from([1, 8, 64, 512]), warmup=st.integers(1, 50),
       factor=st.sampled_from([0.1, 1.0, 2.0]), base_lr=st.sampled_from([1.0, 1e-3, 5.0]),
       steps=st.integers(1, 120))
def test_warmup_schedules_match_lambdalr(d_model, warmup, factor, base_lr, steps):
    """Both twins' WarmupSchedule equal LambdaLR on base lr 1.0, whatever lr the optimizer started with."""
    note_case(d_model=d_model, warmup=warmup, factor=factor, base_lr=base_lr, steps=steps)
    p = torch.nn.Parameter(torch.zeros(1, dtype=torch.float64))
    ref_opt = torch.optim.SGD([p], lr=1.0)
    ref = torch.optim.lr_scheduler.LambdaLR(
        ref_opt, lambda e: reference_rate(e + 1, d_model, warmup, factor))
    t_opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=base_lr)
    t_sched = tfo.WarmupSchedule(t_opt, d_model, warmup, factor)
    np_opt = npo.SGD([Parameter(np.zeros(1))], lr=base_lr)
    np_sched = npo.WarmupSchedule(np_opt, d_model, warmup, factor)
    for e in range(steps):
        want = ref_opt.param_groups[0]["lr"]
        assert math.isclose(np_opt.lr, want, rel_tol=1e-15), (e, np_opt.lr, want)
        assert math.isclose(t_opt.param_groups[0]["lr"], want, rel_tol=1e-15), (e, want)
        assert np_sched.last_epoch == ref.last_epoch == t_sched.last_epoch
        assert np_sched.get_last_lr() == t_sched.get_last_lr()
        ref_opt.step(), t_opt.step()
        ref.step(), t_sched.step(), np_sched.step()


@given(shapes=st.lists(st.lists(st.integers(1, 5), min_size=1, max_size=3).map(tuple), min_size=1,
                       max_size=4),
       max_norm=st.sampled_from([1e-3, 0.5, 2.0, 1e4]),
       norm_type=st.sampled_from([2.0, 1.0, 3.0, float("inf")]), dtype=S.dtypes(), seed=S.seeds())
def test_clip_grad_norm_matches_torch(shapes, max_norm, norm_type, dtype, seed):
    note_case(shapes=shapes, max_norm=max_norm, norm_type=norm_type, dtype=dtype, seed=seed)
    rng = np.random.default_rng(seed)
    np_params, t_params = make_pair(shapes, dtype, rng)
    tf_params = [torch.nn.Parameter(tp.detach().clone()) for tp in t_params]
    for (_, p), tp, fp in zip(np_params, t_params, tf_params):
        g = S.normal(rng, p.data.shape, dtype, scale=3.0)
        p.grad, tp.grad, fp.grad = g.copy(), torch.from_numpy(g.copy()), torch.from_numpy(g.copy())
    total_np = npo.clip_grad_norm(np_params, max_norm, norm_type)
    total_ref = torch.nn.utils.clip_grad_norm_(t_params, max_norm, norm_type)
    total_tf = tfo.clip_grad_norm(tf_params, max_norm, norm_type)
    assert isinstance(total_np, float) and isinstance(total_tf, float)
    compare("total_norm", np.float64(total_np), total_ref, dtype, "optimizer_state")
    compare("total_norm/torchformer", np.float64(total_tf), total_ref, dtype, "optimizer_state")
    for (name, p), tp, fp in zip(np_params, t_params, tf_params):
        compare(f"{name}/grad", p.grad, tp.grad, dtype, "optimizer_state", check_dtype=True)
        compare(f"{name}/grad/torchformer", fp.grad, tp.grad, dtype, "optimizer_state")
