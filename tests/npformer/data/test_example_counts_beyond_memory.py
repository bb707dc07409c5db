"""Every task's `sample(rng, n)` and `heldout(n)` refuse, before drawing, a number of examples whose
arrays cannot fit in this machine's memory, naming `n`, the bytes per example and the total
(npformer.guards.rules.check_examples_fit_memory). `task.heldout(10**10)` used to end in NumPy's raw
MemoryError ("Unable to allocate 74.5 GiB ..."), after seconds of work where memory allowed it."""
import time

import numpy as np
import pytest

from npformer.data.registry import build_text_task_from_files, make_any_task
from npformer.guards.rules import physical_memory

HUGE = 10**13           # 16 bytes each is 160 TB: beyond any machine this suite runs on

pytestmark = pytest.mark.skipif(physical_memory() is None,
                                reason="the platform does not report its memory")


def refused(call, per_example: str):
    start = time.perf_counter()
    with pytest.raises(ValueError) as err:
        call()
    assert time.perf_counter() - start < 5                            # refused, not attempted
    msg = str(err.value)
    assert msg.startswith("n: expected a number of examples whose arrays fit in this machine's "
                          "available memory ("), msg
    assert f"got {HUGE:,}: at least {per_example or ''}" in msg and " bytes per example for " in msg, msg
    return msg


SYNTHETIC = [("reverse", {}, "176"), ("majority", {}, "96"), ("mlm", {}, "176"), ("lm", {}, "16")]


@pytest.mark.parametrize("name, fields, per", SYNTHETIC, ids=[s[0] for s in SYNTHETIC])
def test_synthetic_tasks_refuse_a_sample_beyond_memory(name, fields, per):
    task = make_any_task(name=name, **fields)
    refused(lambda: task.sample(np.random.default_rng(0), HUGE), per)


@pytest.mark.parametrize("name", ["reverse", "majority", "mlm"])
def test_synthetic_held_out_sets_beyond_memory_are_refused(name):
    task = make_any_task(name=name)
    refused(lambda: task.heldout(HUGE), None)
    assert len(task.heldout(5)) == 5                                  # a size that fits still draws


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("corpus")
    rng = np.random.default_rng(0)
    words = ["alpha", "beta", "gamma", "delta", "epsilon"]
    (root / "text.txt").write_text("\n".join(" ".join(rng.choice(words, 8)) for _ in range(200)))
    (root / "pairs.tsv").write_text("\n".join(f"{w} {i}\t{w[::-1]} {i}" for i in range(40)
                                              for w in words[:2]))
    (root / "labels.tsv").write_text("\n".join(f"{w} {i}\t{'pos' if i % 2 else 'neg'}"
                                               for i in range(40) for w in words))
    return root


@pytest.mark.parametrize("name, file, per", [("lm", "text.txt", "8"), ("classify", "labels.tsv", None),
                                             ("translate", "pairs.tsv", None)])
def test_text_tasks_refuse_a_sample_beyond_memory(corpus, name, file, per):
    task = build_text_task_from_files(name, [str(corpus / file)], context=16)
    refused(lambda: task.sample(np.random.default_rng(0), HUGE), per)
    assert len(task.sample(np.random.default_rng(0), 3)) == 3


@pytest.mark.parametrize("bad", [2.5, 0, "3"])
def test_a_text_task_sample_size_that_is_not_a_positive_int_is_named(corpus, bad):
    """TextTask.sample read `int(n)`: 2.5 drew 2 rows and "3" drew 3."""
    task = build_text_task_from_files("translate", [str(corpus / "pairs.tsv")], context=16)
    with pytest.raises(ValueError, match=r"^n: expected a positive int, got "):
        task.sample(np.random.default_rng(0), bad)
