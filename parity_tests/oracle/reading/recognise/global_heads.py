"""Recogniser: the head count of a module whose model width a global fixes (global_width found it)
and which takes no head count itself: course code whose settings module holds `num_heads = 8` beside
`d_model = 512`, star-imported (`from constants import *`), with `view(B, -1, num_heads, d_k)` in the
forward. fixed_heads probes by building at several widths, which such a module ignores; here the
module's globals are read instead: exactly one global named as a head count (`num_heads`,
`n_heads`, `number_of_heads`, ...; not a one-letter name) holding an integer above 1 that divides
the fixed width is the head count, every example is drawn with it, and the report says so. A wrong
reading only draws another head count: every output is still compared with the reference."""
from __future__ import annotations

import dataclasses
import inspect

from ..name_words import names_num_heads
from ..signatures import HYPER_ALIASES

COMPONENTS = ("mha", "encoder_layer", "decoder_layer")
NAMES = {a.lower() for a in HYPER_ALIASES["num_heads"] if len(a) > 1}


def _names_heads(name: str) -> bool:
    return name.lower() in NAMES or names_num_heads(name)


def _takes_heads(target) -> bool:
    try:
        sig = inspect.signature(target.__init__ if isinstance(target, type) else target)
    except (TypeError, ValueError):
        return True                                  # unknown: leave it to the other probes
    return any(_names_heads(n) for n in sig.parameters)


def fix(adapter, width: int) -> None:
    """After global_width fixed d_model at `width`: the head count a global of the module fixes."""
    if adapter.comp.name not in COMPONENTS or "num_heads" in adapter.opts.settings or \
            _takes_heads(adapter.obj):
        return
    module = adapter.source_module()
    found = {v for k, v in vars(module).items() if not k.startswith("__") and _names_heads(k)
             and isinstance(v, int) and not isinstance(v, bool) and v > 1 and width % v == 0}
    if len(found) != 1:
        return
    h = found.pop()
    adapter.caps.fixed_sizes["num_heads"] = h
    adapter.opts = dataclasses.replace(adapter.opts, settings=dict(adapter.opts.settings, num_heads=h))
    adapter.notes.append(f"the head count is fixed by a global of the candidate's module at {h} (its "
                         f"constructor takes none, and the width is fixed at {width}): every example "
                         f"drawn with num_heads = {h}")
