"""An example's first call made again on a build handed torch.nn's class name for the activation,
where the call raised because torch.nn has no class of the assignment's name ('relu'): code that
looks its activation up when called, `getattr(nn, self.activation)()(x)` in forward. A build that
raised so is spelled in construct already (reading/recognise/activation_class_names); both try the
assignment's name first on every example, so code taking both spellings is compared under it."""
from __future__ import annotations

from typing import Any, Callable

from ..components import Case
from ..reading.recognise import hooks

LOOKED_UP = hooks("constructor").class_looked_up


def spelled_on_lookup(ad, inst, case: Case, call: Callable[[], Any] | None = None):
    """(instance, result) of the example's first call, `call` or `ad.execute(inst, case)`; where
    it raised because torch.nn has no class of the assignment's activation name (looked up in
    forward: `getattr(nn, self.activation)()`), the example is built again with the class name
    and called again. A build that raised so is spelled in construct already."""
    run = call or (lambda: ad.execute(inst, case))
    try:
        return inst, run()
    except AttributeError as exc:
        if ad.framework != "torch" or not LOOKED_UP(exc, dict(case.hyper)):
            raise
    ad.spell_lookup = True
    if call is not None:
        return inst, call()
    inst = ad.instantiate(case)
    return inst, ad.execute(inst, case)
