"""Fixture bundles for graders that cannot run Python candidates: export the reference, verify outputs.

`export(component, folder)` writes

    folder/manifest.json      component, versions, conventions, tolerances, and per case the drawn
                              example and every array's name, shape and dtype
    folder/case_000.npz ...   one case each:
        input.NAME              the inputs (float in the chosen dtype; token ids int64)
        mask.NAME               the masks exactly as a candidate receives them (convention, rank, dtype)
        param.NAME              the weights, by npformer's state_dict names, layout (out, in)
        grad_output             the upstream gradient dL/d(output)
        expected.output         the reference output (float64)
        expected.attention_weights, expected.grad_input.NAME, expected.grad_param.NAME
        compare.output          (models) 1 where the output is compared, 0 at padded target positions

A grader runs the candidate on input.*/mask.*/param.*, backpropagates grad_output, and saves, per case,
`output`, `attention_weights`, `grad_input.NAME`, `grad_param.NAME` (any subset; `output` is needed)
into outputs/case_000.npz ... (or one outputs.npz with keys `case_000/output`, ...). Then

    npformer-oracle verify folder outputs/

compares them with the tolerances recorded in the manifest (exit 0 all match, 1 something differs,
2 the files are unreadable or `output` is missing).
"""
from __future__ import annotations

import json
import os
import platform

import numpy as np

from parity_tests.harness.compare import measure
from parity_tests.harness.tolerances import QUANTITIES, Tolerance, tolerance

from .. import __version__
from ..components import REF, get, quantity_kind
from ..components.base import parse_settings
from ..reading.adapters import Options, convert_mask
from ..reading.findings import Findings

FORMAT = "npformer-oracle-bundle"
FORMAT_VERSION = 1


def _versions() -> dict:
    import hypothesis
    v = {"oracle": __version__, "python": platform.python_version(), "numpy": np.__version__,
         "hypothesis": hypothesis.__version__}
    try:
        from importlib.metadata import version
        v["npformer"] = version("npformer")
    except Exception:  # noqa: BLE001
        v["npformer"] = "source checkout"
    return v


def draw_examples(component: str, n: int, seed: int, strict: bool, caps: Findings) -> list[dict]:
    """n examples from the component's strategy, deterministic in seed (Hypothesis, no shrinking)."""
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings
    from hypothesis import seed as hseed

    comp = get(component)
    got: list[dict] = []
    strategy = comp.strategy(caps.fixed, strict, caps)

    @settings(max_examples=n, deadline=None, database=None, phases=(Phase.generate,),
              verbosity=Verbosity.quiet, suppress_health_check=list(HealthCheck), derandomize=False)
    @hseed(seed)
    @given(strategy)
    def collect(example):
        if len(got) < n and example not in got:
            got.append(example)

    collect()
    return got


def export(component: str, folder: str, *, examples: int = 10, seed: int = 0,
           dtype: str = "float64", mask_convention: str = "keep", mask_dtype: str = "bool",
           mask_rank: int = 4, strict: bool = False, settings: dict | None = None) -> dict:
    comp = get(component)
    opts = Options(mask_convention=mask_convention, mask_dtype=mask_dtype, mask_rank=mask_rank,
                   strict=strict, dtype=dtype, settings=dict(settings or {}))
    opts.validate()
    fixed = parse_settings(comp, opts.settings)
    caps = Findings(fixed=fixed)
    if mask_rank == 3:
        caps.mask_kinds = {m.name: tuple(k for k in m.kinds if k != "random") for m in comp.masks}
    os.makedirs(folder, exist_ok=True)
    cases = []
    for i, ex in enumerate(draw_examples(component, examples, seed, strict, caps)):
        case = comp.build(ex, dtype, caps)
        ref = comp.reference(case)
        arrays: dict[str, np.ndarray] = {}
        for name, a in case.inputs.items():
            arrays[f"input.{name}"] = a.astype(dtype) if a.dtype == REF else a
        for name, keep in case.masks.items():
            m = convert_mask(keep, opts, dtype)
            if m is not None:
                arrays[f"mask.{name}"] = m
        for name, p in case.params.items():
            arrays[f"param.{name}"] = p.astype(dtype)
        arrays["grad_output"] = case.dout.astype(dtype)
        for key, v in ref.items():
            arrays["expected." + key.replace(":", ".")] = v
        if case.row_keep is not None:
            arrays["compare.output"] = case.row_keep.astype(np.int8)
        fname = f"case_{i:03d}.npz"
        np.savez(os.path.join(folder, fname), **arrays)
        cases.append({"file": fname, "example": ex, "hyperparameters": case.hyper,
                      "arrays": {k: {"shape": list(v.shape), "dtype": str(v.dtype)}
                                 for k, v in arrays.items()}})
    tols = {q: {"atol": tolerance(dtype, q).atol, "rtol": tolerance(dtype, q).rtol}
            for q in QUANTITIES if q in ("output", "attention_weights", "input_grad", "param_grad")}
    manifest = {
        "format": FORMAT, "format_version": FORMAT_VERSION, "component": component,
        "title": comp.title, "versions": _versions(), "dtype": dtype, "seed": seed,
        "conventions": {
            "mask": {"keep": "True/1 = this query may attend to this key",
                     "drop": "True/1 = this key is hidden from this query",
                     "additive": "0 where allowed, -inf where hidden, added to the scores"}[
                mask_convention] + f" (convention {mask_convention!r}, dtype {mask_dtype}, rank "
                                   f"{mask_rank}: " + ("(B, Tq, Tk))" if mask_rank == 3
                                                       else "(B, 1 or H, Tq, Tk))"),
            "fully_masked_rows": ("present: the expected output, weights and gradients are 0 there"
                                  if strict else "never drawn"),
            "weights": "Linear weights are (out_features, in_features): y = x @ W.T + b",
            "attention_weights": "per head, (B, H, Tq, Tk), the softmax before any dropout",
            "gradients": "expected.grad_* are dL/d(.) for L = sum(output * grad_output)",
            "dropout": "none (evaluation mode)",
            "layer_norm": "biased variance, eps from the case's hyperparameters",
        },
        "tolerances": {"rule": "|got - expected| <= atol * max(1, max|expected|) + rtol * |expected|"
                               " elementwise", "by_quantity": tols,
                       "quantity_of": {"output": "output", "attention_weights": "attention_weights",
                                       "grad_input.*": "input_grad", "grad_param.*": "param_grad"}},
        "cases": cases,
    }
    with open(os.path.join(folder, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")
    return manifest


# ------------------------------------------------------------------------------------------------
def _load_outputs(path: str, case_files: list[str]) -> dict[str, dict[str, np.ndarray]]:
    out: dict[str, dict[str, np.ndarray]] = {}
    if os.path.isdir(path):
        for fname in case_files:
            p = os.path.join(path, fname)
            if os.path.exists(p):
                with np.load(p, allow_pickle=False) as z:
                    out[fname] = {k: z[k] for k in z.files}
        return out
    with np.load(path, allow_pickle=False) as z:
        for k in z.files:
            case, _, q = k.partition("/")
            fname = case if case.endswith(".npz") else f"{case}.npz"
            out.setdefault(fname, {})[q] = z[k]
    return out


def verify(bundle: str, outputs: str, *, require_all: bool = False) -> dict:
    """Compare saved candidate outputs with a bundle; returns a JSON-able result with exit_code."""
    try:
        with open(os.path.join(bundle, "manifest.json"), encoding="utf-8") as f:
            manifest = json.load(f)
        if manifest.get("format") != FORMAT:
            raise ValueError(f"not an {FORMAT} manifest")
        files = [c["file"] for c in manifest["cases"]]
        got_all = _load_outputs(outputs, files)
    except (OSError, ValueError, KeyError) as exc:
        return {"verdict": "load_error", "exit_code": 2, "message": f"cannot read: {exc}",
                "cases": []}
    dtype = manifest["dtype"]
    tols = {q: Tolerance(**t) for q, t in manifest["tolerances"]["by_quantity"].items()}
    results, first_fail, missing_output = [], None, []
    for c in manifest["cases"]:
        fname = c["file"]
        with np.load(os.path.join(bundle, fname), allow_pickle=False) as z:
            expected = {k[len("expected."):]: z[k] for k in z.files if k.startswith("expected.")}
            compare_rows = z["compare.output"].astype(bool) if "compare.output" in z.files else None
        got = got_all.get(fname, {})
        entry = {"file": fname, "quantities": {}}
        for q, ref in expected.items():
            kind = quantity_kind(q.replace("grad_input.", "grad_input:").replace("grad_param.",
                                                                                 "grad_param:"))
            if q not in got:
                entry["quantities"][q] = {"status": "missing"}
                if q == "output":
                    missing_output.append(fname)
                continue
            g = np.asarray(got[q])
            if q == "output" and compare_rows is not None and g.shape == ref.shape:
                keep = compare_rows.reshape(compare_rows.shape + (1,) * (ref.ndim - 2))
                g, ref = np.where(keep, g, 0.0), np.where(keep, ref, 0.0)
            rep = measure(q, g, ref, dtype=dtype, quantity=kind, tol=tols[kind])
            e = {"status": "match" if rep.passed else "mismatch", "ratio_to_tolerance": rep.ratio,
                 "max_abs_err": rep.max_abs}
            if not rep.passed:
                e.update({"problem": rep.problem, "worst_index": [int(i) for i in rep.worst_index],
                          "got": rep.got_value, "expected": rep.ref_value,
                          "elements_over": rep.n_over})
                if first_fail is None:
                    first_fail = (fname, q, e)
            entry["quantities"][q] = e
        results.append(entry)
    missing_any = [(r["file"], q) for r in results for q, e in r["quantities"].items()
                   if e["status"] == "missing"]
    if missing_output:
        verdict, code = "missing_output", 2
        msg = f"no 'output' for {', '.join(missing_output)}"
    elif first_fail is not None:
        verdict, code = "mismatch", 1
        fname, q, e = first_fail
        msg = (f"{fname}: {q} differs ({e.get('problem') or ''} worst at {e.get('worst_index')}: got "
               f"{e.get('got')!r}, expected {e.get('expected')!r}, {e['ratio_to_tolerance']:.3g} x "
               f"tolerance)")
    elif missing_any and require_all:
        verdict, code = "missing_quantities", 1
        msg = f"{len(missing_any)} quantities missing, e.g. {missing_any[0][1]} in {missing_any[0][0]}"
    else:
        verdict, code = "match", 0
        msg = "every provided quantity matches" + (
            f" ({len(missing_any)} not provided)" if missing_any else "")
    return {"verdict": verdict, "exit_code": code, "message": msg, "component": manifest["component"],
            "bundle": bundle, "outputs": outputs, "cases": results}


def render_verify(result: dict) -> str:
    lines = [f"npformer-oracle verify: {result['verdict'].upper()} (exit {result['exit_code']}) - "
             f"{result['message']}"]
    for c in result.get("cases", []):
        bad = [q for q, e in c["quantities"].items() if e["status"] != "match"]
        ok = len(c["quantities"]) - len(bad)
        lines.append(f"  {c['file']}: {ok} matched" + (f"; not matching/missing: {', '.join(bad)}"
                                                       if bad else ""))
    return "\n".join(lines)
