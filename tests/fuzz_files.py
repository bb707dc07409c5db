"""Shared pieces of the fuzz tests of the readers of outside files (checkpoints, Hugging Face folders,
safetensors, tokenizer files): byte mutations, JSON mutations, and the rule every reader is held to.

The rule (`loads_or_names_the_file`): a mutated file either loads, or raises the reader's named error
(CheckpointError / ValueError / OSError as documented) whose message names the file; never another
exception type, never a peak of Python/NumPy allocation far beyond the file's size, never a hang
(each example's time is bounded by the settings' deadline).

Budget: `fuzz_settings(n)` gives n examples under the `ci` profile (NPFORMER_HYPOTHESIS_PROFILE, or
CI set), n // 2 under `dev`, 50 x n under `thorough`; NPFORMER_HYPOTHESIS_MAX_EXAMPLES overrides.
"""
from __future__ import annotations

import copy
import json
import os
import time
import tracemalloc

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

PROFILE = os.environ.get("NPFORMER_HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
SLACK = 16 << 20                          # allocation allowed beyond 16 x the file's size
SECONDS = 20.0                            # one example, on a loaded 2-core machine


def fuzz_settings(n: int):
    override = os.environ.get("NPFORMER_HYPOTHESIS_MAX_EXAMPLES")
    count = int(override) if override else {"ci": n, "thorough": 50 * n}.get(PROFILE, max(2, n // 2))
    return settings(max_examples=count, deadline=None, derandomize=PROFILE == "ci", print_blob=True,
                    database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.function_scoped_fixture])


# -- byte mutations -----------------------------------------------------------------------------------
_position = st.integers(0, 2 ** 32)
_op = st.one_of(
    st.tuples(st.just("flip"), _position, st.integers(0, 7)),
    st.tuples(st.just("set"), _position, st.sampled_from([0, 1, 0x7F, 0x80, 0xFF, ord("["), ord("{")])),
    st.tuples(st.just("cut"), _position),
    st.tuples(st.just("insert"), _position,
              st.one_of(st.binary(min_size=1, max_size=16),
                        st.sampled_from([b"1" * 5000, b"[" * 5000, b'"\xff\xfe"', b"\\ud800"]))),
    st.tuples(st.just("duplicate"), _position, st.integers(1, 64), _position),
    st.tuples(st.just("delete"), _position, st.integers(1, 64)),
)
byte_mutations = st.lists(_op, min_size=1, max_size=4)


def mutate_bytes(data: bytes, ops) -> bytes:
    b = bytearray(data)
    for op in ops:
        n = max(len(b), 1)
        kind, at = op[0], op[1] % n
        if kind == "flip" and b:
            b[at] ^= 1 << op[2]
        elif kind == "set" and b:
            b[at] = op[2]
        elif kind == "cut":
            del b[at:]
        elif kind == "insert":
            b[at:at] = op[2]
        elif kind == "duplicate":
            piece = bytes(b[at:at + op[2]])
            where = op[3] % n
            b[where:where] = piece
        elif kind == "delete":
            del b[at:at + op[2]]
    return bytes(b)


# -- JSON mutations -----------------------------------------------------------------------------------
def _nested(depth: int, inner):
    return json.loads("[" * depth + json.dumps(inner) + "]" * depth)


HOSTILE = st.one_of(
    st.sampled_from([None, True, False, 0, -1, -(2 ** 63), 2 ** 31, 2 ** 63, 2 ** 64 + 1, 10 ** 30,
                     0.5, -0.0, 1e308, float("inf"), float("-inf"), float("nan"), "", "x", "F32",
                     "\u0000", "\ud800x"[1:], "é\u202e😀", [], {}, [0], [-1], [2 ** 62, 2 ** 62],
                     [1, 2, 3], {"a": 1}]),
    st.integers(-(2 ** 70), 2 ** 70),
    st.text(max_size=6),
    st.lists(st.integers(-3, 2 ** 40), max_size=4),
    st.integers(5, 60).map(lambda d: _nested(d, 1)),
)
def _paths(value, prefix=()):
    """Every path (tuple of keys/indexes) into a JSON value, the root included."""
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, prefix + (i,))


def draw_json_mutation(data, value, max_edits: int = 3):
    """A deep copy of `value` with 1..max_edits edits drawn by `data` (Hypothesis' st.data()): at a
    path drawn uniformly from every node, replace the node with a hostile value, delete it from its
    container, or add a key/item beside it."""
    value = copy.deepcopy(value)
    for _ in range(data.draw(st.integers(1, max_edits), label="edits")):
        path = data.draw(st.sampled_from(sorted(_paths(value), key=repr)), label="path")
        action = data.draw(st.sampled_from(["replace", "delete", "add"]), label="action")
        new = copy.deepcopy(data.draw(HOSTILE, label="value"))
        if not path:
            if action == "replace":
                value = new
            continue
        parent = value
        for k in path[:-1]:
            parent = parent[k]
        key = path[-1]
        if action == "replace":
            parent[key] = new
        elif action == "delete":
            del parent[key]
        elif isinstance(parent, dict):
            parent[f"{key}\u00e9"] = new
        else:
            parent.append(new)
    return value


def dumps(value) -> str:
    """JSON text of a mutated value (NaN/Infinity written as Python's json writes them)."""
    return json.dumps(value, ensure_ascii=False)


# -- the rule -------------------------------------------------------------------------------------------
def loads_or_names_the_file(call, path, named=(ValueError,), size: int | None = None):
    """call() -> its result, or None when it raised one of `named` whose message names `path` (its
    file name at least). Anything else fails the test: another exception type, a message that does
    not name the file, a Python allocation peak above 16 x the file's size + 16 MiB, a hang."""
    size = size if size is not None else _size(path)
    tracemalloc.start()
    start = time.perf_counter()
    try:
        result = call()
    except named as e:
        seconds = time.perf_counter() - start
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert os.path.basename(str(path)) in str(e), f"the message does not name {path}: {e!r}"
        result = None
    except BaseException:
        tracemalloc.stop()
        raise
    else:
        seconds = time.perf_counter() - start
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert peak <= 16 * size + SLACK, f"allocated {peak} bytes reading a {size}-byte file"
    assert seconds < SECONDS, f"took {seconds:.1f} s"
    return result


def _size(path) -> int:
    if os.path.isdir(path):
        return sum(os.path.getsize(os.path.join(path, f)) for f in os.listdir(path))
    return os.path.getsize(path)
