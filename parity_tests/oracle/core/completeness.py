"""What a check did NOT compare, decided in the parent from what it saw itself.

The worker shares the submission's process, so whatever it reports about the candidate (the mask
kinds it takes, self-attention only, the parameters it lacks, the gradients it cannot give, its own
LayerNorm epsilon) may be a lie written by the submission. Such a report can only *narrow* what is
compared, never widen it (a claim to take a mask it ignores is compared, and fails). So the parent
lists every narrowing as a gap:

    gaps = find_gaps(comp, caps, opts, not_checked, absent)   # {requirement: one-line reason}

and, where the assignment requires it (grading: `grade`, the Gradescope bundle, `check` writing
Gradescope results), a gap is a failing verdict (`incomplete`, or `missing_gradient` for
gradients) instead of a match. The quick `check` keeps inferring and prints the gaps prominently.

Requirements (`REQUIREMENTS`, all of them by default when grading):
  masks            every mask kind the component is specified for was drawn
  cross_attention  multi-head attention was called with key/value different from the query
  gradients        every input and parameter gradient was compared
  parameters       every reference parameter was mapped onto the candidate (none held at 0 / 1),
                   except those the instructor mapped to '-' (a quick check with nothing required
                   names those too)
  eps              the reference used the assignment's epsilon (--set eps or 1e-5), never the
                   candidate's own
  batch            batches were drawn (not only batch 1, as for code computing one sequence at a
                   time, recognise/function_calls) and handed over batch-first, (B, T, d), not
                   time-first as a probe found the candidate reading them (recognise/time_first)
  sizes            every size was drawn as the assignment asks, none fixed by the candidate's code
                   (a feed-forward width read from its weights, recognise/ffn_width, as for a
                   constructor taking d_ff and ignoring it; a model width from a module global,
                   recognise/global_width; a head count the code fixes, recognise/fixed_heads)
  table            a positional table's values were compared: the module computes its table, it does
                   not hold a learned one the reference's sinusoid was placed into (recognise/
                   learned_table)
  mask_convention  masks were handed over in the assignment's convention (declared, or True = may
                   attend) and form (declared, or (B, 1, Tq, Tk)), not in one a recogniser adapted
                   to because the candidate's code reads them otherwise (True = hidden, additive:
                   recognise/hidden_mask, part_convention, torch_mha_mask, ...; (B, Tq, Tk) or heads
                   merged into the batch axis: recognise/mask_rank, merged_mask)
  norm_order       a layer was checked in the norm order its constructor or the assignment gives
                   (--set norm_first / the spec's settings), not one found by probing its behaviour
                   (recognise/norm_order: a pre-norm layer where the paper's is post-norm);
                   likewise a whole model's final norms after each stack, found by their names
                   (recognise/final_norms), where the assignment does not set final_norm
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..reading.findings import Findings

REQUIREMENTS = ("masks", "cross_attention", "gradients", "parameters", "eps", "batch", "sizes", "table",
                "mask_convention", "norm_order")
UNREAD = "the candidate has a backward, but the oracle cannot read the gradient of"
"""How a worker says a parameter gradient of code WITH a backward was not found: such a check is
never a match (`unread_gradients`), whatever the assignment requires."""
DEFAULT_EPS = 1e-5


def requirements(names: Iterable[str]) -> tuple[str, ...]:
    """Validated requirement names, in the canonical order."""
    names = list(names)
    bad = [n for n in names if n not in REQUIREMENTS]
    if bad:
        raise ValueError(f"require: expected names among {', '.join(REQUIREMENTS)}, got "
                         f"{', '.join(map(repr, bad))}")
    return tuple(r for r in REQUIREMENTS if r in names)


def wanted_mask_kinds(mask, opts) -> tuple[str, ...]:
    """The kinds of one mask the assignment's options ask for (rank-3 masks cannot be per head,
    an option the instructor chose)."""
    kinds = tuple(mask.kinds)
    if getattr(opts, "mask_rank", 4) == 3:
        kinds = tuple(k for k in kinds if k != "random")
    return kinds


def find_gaps(comp, caps: Findings, opts, not_checked: dict, absent: Iterable[str],
              quick: bool = False) -> dict[str, str]:
    """`quick`: a check nothing is required of (no assignment): parameters mapped to '-' there are
    the user's guess, named with the rest (an assignment's own '-' maps are its declaration)."""
    gaps: dict[str, str] = {}
    if comp.name != "model":       # a whole model builds its own masks from the padding id
        missing = []
        for m in comp.masks:
            got = (caps.mask_kinds or {}).get(m.name)
            if got is None:
                continue
            lost = [k for k in wanted_mask_kinds(m, opts) if k not in got]
            if lost:
                missing.append(f"{m.name} ({', '.join(lost)})")
        if missing:
            gaps["masks"] = ("masks were not compared: " + "; ".join(missing) + ". The candidate's "
                             "forward must take the mask argument and apply it")
    if comp.name == "mha" and caps.shared_kv:
        gaps["cross_attention"] = ("keys and values were not drawn apart: forward takes them as one "
                                   "argument, so they were always the same tensor")
    if comp.name == "mha" and caps.self_attention:
        gaps["cross_attention"] = ("cross-attention was not compared: forward takes a single input, "
                                   "so key and value were always the query. Take query, key and "
                                   "value as separate arguments")
    grads = ungraded(not_checked, absent)
    if grads:
        gaps["gradients"] = ("gradients were not compared: " + "; ".join(
            f"{k} ({why})" for k, why in list(grads.items())[:6])
            + ". Compute the output with differentiable operations (torch), or give a backward")
    mapped_out = {k for k, v in (getattr(opts, "name_map", None) or {}).items() if v == "-"}
    lost = sorted(set(absent) - (set() if quick else mapped_out))
    if lost and "out_proj.weight" in lost:
        gaps["parameters"] = ("parameters were not compared: the candidate has no output projection ("
                              + ", ".join(lost[:8]) + "): checked against the reference's attention "
                              "before out_proj (held at the identity, its bias at 0). Apply the "
                              "output projection inside the attention")
    elif lost:
        said = [f"{k} (mapped to '-' by --map)" if k in mapped_out else k for k in lost]
        gaps["parameters"] = ("parameters were not compared: the candidate has no "
                              + ", ".join(said[:8]) + (" ..." if len(lost) > 8 else "")
                              + " (held at 0 / 1 in the reference). Give every layer its bias "
                                "and norm parameters")
    if caps.one_sequence:
        gaps["batch"] = ("batches were not compared: the candidate computes one sequence at a time, "
                         "so only batch 1 was drawn" + (" (and one head)" if comp.name == "sdpa"
                                                        else "") + ". Take a batch axis first")
    if getattr(caps, "time_first", False):
        fed = ("it adds one table row per sequence, not one per position" if comp.name == "positional"
               else "it mixes the sequences of a batch, as torch.nn.MultiheadAttention without "
                    "batch_first=True does")
        line = ("batches were not handed over in the assignment's (batch, seq, d_model) layout: a "
                "probe found the candidate taking its sequences time-first, (seq, batch, d_model), "
                f"and it was called so; fed batch-first, {fed}. Where the assignment takes "
                "sequences time-first, leave batch out of its require")
        gaps["batch"] = (gaps["batch"] + "; " + line) if "batch" in gaps else line
    fixed = _code_sizes(caps, getattr(opts, "settings", {}) or {})
    if fixed:
        gaps["sizes"] = ("sizes were not drawn as the assignment asks: the candidate's code fixes "
                         + " and ".join(fixed) + " (its weights kept that shape whatever the "
                         "constructor was given), so only that size was compared. Build the layer "
                         "at the sizes its constructor is given")
    if comp.name == "positional" and caps.learned_table:
        gaps["table"] = ("the table's values were not compared: the module holds a learned table (a "
                         "parameter), into which the reference's sinusoid was placed; only the lookup "
                         "of positions 0 .. T-1 and the addition to x were checked. Compute the "
                         "sinusoid where the assignment asks for it")
    if caps.mask_convention:
        said = {"drop": "True where a key is hidden (--mask-convention drop)",
                "additive": "as an additive float mask (--mask-convention additive)"}
        gaps["mask_convention"] = (
            "masks were not handed over in the assignment's convention (True where a key may be "
            "attended): the candidate's code reads them " + said.get(caps.mask_convention, "otherwise")
            + ", and it was called so. Where the assignment uses that convention, declare it in the "
              "spec's options (mask_convention)")
    form = getattr(caps, "mask_form", None)
    if form and getattr(opts, "mask_rank", 4) == 4:
        said = {"rank3": "(batch, Tq, Tk), adding the head axis itself (--mask-rank 3)",
                "heads_merged": "spread over heads merged into the batch axis, (batch * heads, Tq, Tk)"}
        line = ("masks were not handed over in the assignment's form (batch, 1, Tq, Tk): a probe "
                "found the candidate refusing it, and it was called with masks shaped "
                + said.get(form, "otherwise") + " instead, so its reading of the assignment's form "
                "was never compared. Where the assignment uses that form, declare it in the spec's "
                "options (mask_rank)")
        gaps["mask_convention"] = (gaps["mask_convention"] + "; " + line) if "mask_convention" in gaps \
            else line
    if caps.norm_first and "norm_first" not in (getattr(opts, "settings", {}) or {}):
        gaps["norm_order"] = ("the norm order was not the assignment's: the layer was checked as "
                              "pre-norm (normalising before each sublayer), found by probing its "
                              "behaviour; the paper's layer is post-norm. Where the assignment asks "
                              "for pre-norm, set norm_first = true in its settings")
    if getattr(caps, "final_norm", False) and "final_norm" not in (getattr(opts, "settings", {}) or {}):
        gaps["norm_order"] = ("the norms were not the assignment's: the model was checked with a "
                              "final norm after its encoder and its decoder, found by their names; "
                              "the paper's model has none. Where the assignment asks for them, set "
                              "final_norm = true in its settings")
    own = caps.norm_eps
    if own is not None:
        gaps["eps"] = (f"the reference used the candidate's own LayerNorm epsilon {own:g} instead "
                       f"of the assignment's {(getattr(opts, 'settings', {}) or {}).get('eps', DEFAULT_EPS):g}")
    return gaps


def _code_sizes(caps: Findings, settings: dict) -> list[str]:
    """The sizes the candidate's own code fixed and the search then drew at (never one the user
    fixed with --set to the same value)."""
    out = []
    if caps.d_ff_ratio and "d_ff" not in settings:
        out.append(f"the feed-forward width at {caps.d_ff_ratio} x d_model")
    sizes = caps.fixed_sizes or {}
    if "d_ff" in sizes and settings.get("d_ff") != sizes["d_ff"]:
        out.append(f"the feed-forward width at {sizes['d_ff']}")
    if "d_model" in sizes and settings.get("d_model") != sizes["d_model"]:
        out.append(f"d_model at {sizes['d_model']}")
    if "num_heads" in sizes and settings.get("num_heads") != sizes["num_heads"]:
        out.append(f"the head count at {sizes['num_heads']} (d_model drawn as its multiples)")
    return out


def ungraded(not_checked: dict, absent: Iterable[str]) -> dict[str, str]:
    """Gradients not compared, but for the parameters the parent itself accepted as absent: the
    reasons are the worker's words (a rewritten reply may say anything), never the test."""
    gone = {f"grad_param:{a}" for a in absent}
    return {k: why for k, why in not_checked.items() if k.startswith("grad_") and k not in gone}


def reference_eps(comp, caps: Findings, opts) -> float | None:
    """The epsilon the reference's norms use on this check (None: the component has no norm)."""
    if "eps" not in getattr(comp, "settable", {}):
        return None
    fixed = getattr(opts, "settings", {}) or {}
    return float(fixed.get("eps", DEFAULT_EPS if caps.norm_eps is None else caps.norm_eps))


def unread_gradients(not_checked: dict) -> tuple[str, str] | None:
    """(quantity, message) when code with a backward kept a parameter gradient where the oracle
    could not read it: the forward matched, but a gradient bug there would go unseen."""
    unread = [(k, why) for k, why in not_checked.items() if k.startswith("grad_param:")
              and why.startswith(UNREAD)]
    if not unread:
        return None
    return unread[0][0], (
        "the forward matched, but the candidate has a backward and these parameter gradients were "
        "not compared: " + "; ".join(f"{k} ({why})" for k, why in unread[:4])
        + ". Keep them as d<name> / <name>_grad / grads[name], or give an adapter file with "
          "grads(obj) returning {reference name: gradient} (--adapter)")


# Options a check draws at one value only (the assignment's, or the default): a candidate taking
# such an argument and ignoring it (always post-norm, always relu) matches, so the report says so.
ONE_VALUE = ("norm_first", "activation", "final_norm", "scale_embeddings")


def one_value_line(dtype: str, seen: dict, mask_dtype: str | None = None,
                   unvaried: dict | None = None) -> str:
    """The report line naming what every compared example held at one value: the dtype, the masks'
    dtype (`mask_dtype`, where masks were drawn), each option in ONE_VALUE the search drew (its
    values in `seen`) that was never varied, and the forward's own arguments no run varied
    (`unvaried`, {argument: "left at its default None" | "passed False in every run"}, as the worker
    read the signature: reading/unvaried.py)."""
    held = {k: next(iter(seen[k])) for k in ONE_VALUE if len(seen.get(k, ())) == 1}
    other = ["--dtype " + ("float64" if dtype == "float32" else "float32")]
    if mask_dtype is not None:
        other.append("--mask-dtype " + ("int" if mask_dtype == "bool" else "bool"))
    other += [f"--set {k}=" + (("relu" if v == "gelu" else "gelu") if k == "activation" else
                               str(not v).lower()) for k, v in held.items()]
    named = [f"dtype {dtype}"] + ([f"masks {mask_dtype}"] if mask_dtype else []) + [
        f"{k} {v}" for k, v in held.items()]
    line = ("compared at one value only: " + ", ".join(named) + " (never varied: a candidate that "
            "ignores another value of these matches; where the assignment asks for it, add a check "
            "with " + " / ".join(other) + ")")
    if unvaried:
        line += ("; the forward's own arguments, not checked: " + ", ".join(
            f"{k} {v}" for k, v in sorted(unvaried.items())) + " (the oracle never passes another "
            "value: a candidate that ignores them matches; read the code, or pass another value "
            "through an --adapter file's call())")
    return line
