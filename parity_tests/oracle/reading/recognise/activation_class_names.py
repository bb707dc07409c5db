"""The activation's name as torch.nn spells its class, for code that builds the activation with
`getattr(nn, config.activation)()`: the oracle's drawn 'relu' there raised AttributeError (torch.nn
has `ReLU`, no `relu`) and right code was RAISED. Read from the text of the candidate's module: a
`getattr(nn, ...)` (or `getattr(torch.nn, ...)`) whose name argument mentions an activation.
'gelu_tanh' has no class of its own (it is `nn.GELU(approximate="tanh")`) and keeps its spelling.
Every build is tried with the assignment's name first and spelled so only where that raised
(construct), so code taking both spellings is compared under the assignment's."""
from __future__ import annotations

import inspect
import re

CLASS_NAMES = {"relu": "ReLU", "gelu": "GELU"}
"""The oracle's activation names (npformer.models.config.ACTIVATIONS) -> torch.nn's class names."""

GETATTR_NN = re.compile(r"getattr\(\s*(?:torch\.)?nn\s*,\s*[^,)]*act", re.IGNORECASE)


def builds_by_class_name(module) -> bool:
    """Whether the module's text builds an activation with getattr(nn, <activation name>)."""
    try:
        text = inspect.getsource(module)
    except (OSError, TypeError):
        return False
    return bool(GETATTR_NN.search(text))


def class_spelled(module, values: dict, notes: list) -> dict:
    """`values` with the activation spelled as torch.nn's class ('relu' -> 'ReLU') where the
    module's text needs that spelling, said in `notes`; else `values` as they came."""
    act = values.get("activation")
    if act not in CLASS_NAMES or module is None or not builds_by_class_name(module):
        return values
    note = (f"the candidate builds its activation with getattr(nn, <name>)(): the activation was "
            f"handed as torch.nn spells its class, {CLASS_NAMES[act]!r} (not {act!r})")
    if note not in notes:
        notes.append(note)
    return dict(values, activation=CLASS_NAMES[act])


def looked_up(exc: BaseException, values: dict) -> bool:
    """Whether `exc` is torch.nn refusing the assignment's activation name, looked up as a class
    (`getattr(nn, self.activation)()` in forward): the call is then made again on a build handed
    the class name."""
    act = values.get("activation")
    return isinstance(exc, AttributeError) and act in CLASS_NAMES and \
        f"module 'torch.nn' has no attribute '{act}'" in str(exc)
