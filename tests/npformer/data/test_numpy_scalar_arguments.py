"""Every task takes NumPy integers and floats wherever it takes Python ones (as the models and
their config do) and keeps Python numbers: the same task, the same draws, the same saved fields.

Before: the text tasks refused `context=np.int64(16)` and `seed=np.int64(1)` ("expected an int"),
every task refused a `np.float32` fraction, and the synthetic tasks took NumPy integers but kept
them, so a task's fields differed in type from the same task built from Python numbers."""
import json

import numpy as np
import pytest

from npformer.data.lm_data import ArithmeticTask
from npformer.data.mlm_data import MirrorTask
from npformer.data.tasks import Task
from npformer.data.text_classify import build_classify_task
from npformer.data.text_lm import build_text_task
from npformer.data.text_translate import build_translate_task
from npformer.training.resume import task_metadata

WORDS = "the cat sat on a mat and ran to big red house dog saw it".split()


def assert_same(x, y):
    """Equal draws: arrays by value, tuples and lists item by item, generators by state."""
    if isinstance(x, np.random.Generator):                  # (an MLM sample's masking generator)
        assert x.bit_generator.state == y.bit_generator.state
    elif isinstance(x, (tuple, list)):
        assert len(x) == len(y)
        for a, b in zip(x, y):
            assert_same(a, b)
    else:
        np.testing.assert_array_equal(x, y)


def plain_types(fields: dict) -> dict:
    return {k: type(v) for k, v in fields.items()}


@pytest.mark.parametrize("cls,python,numpy", [
    (Task, dict(num_symbols=5, max_len=4, seed=3, heldout_fraction=0.25, num_pairs=7),
     dict(num_symbols=np.int64(5), max_len=np.int32(4), seed=np.uint8(3),
          heldout_fraction=np.float32(0.25), num_pairs=np.int64(7))),
    (ArithmeticTask, dict(max_number=20, seed=3, heldout_fraction=0.25),
     dict(max_number=np.int64(20), seed=np.int64(3), heldout_fraction=np.float32(0.25))),
    (MirrorTask, dict(num_symbols=5, mask_prob=0.25, seed=3),
     dict(num_symbols=np.int64(5), mask_prob=np.float32(0.25), seed=np.int64(3))),
])
def test_synthetic_tasks_take_numpy_numbers_and_keep_python_ones(cls, python, numpy):
    a, b = cls(**python), cls(**numpy)
    assert a == b
    assert plain_types(task_metadata(b)) == plain_types(task_metadata(a))
    assert json.dumps(task_metadata(b)) == json.dumps(task_metadata(a))
    assert_same(a.sample(np.random.default_rng(0), 8), b.sample(np.random.default_rng(0), 8))


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("text")
    rng = np.random.default_rng(0)
    lines = [" ".join(rng.choice(WORDS, 6)) for _ in range(200)]
    (folder / "corpus.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / "pairs.tsv").write_text("".join(f"{t}\t{t[::-1]}\n" for t in lines),
                                      encoding="utf-8")
    (folder / "labels.tsv").write_text("".join(f"{t}\t{t.split()[0]}\n" for t in lines),
                                       encoding="utf-8")
    return folder


@pytest.mark.parametrize("build,name", [(build_text_task, "corpus.txt"),
                                        (build_translate_task, "pairs.tsv"),
                                        (build_classify_task, "labels.tsv")])
def test_text_tasks_take_numpy_numbers_and_keep_python_ones(files, build, name):
    path = [str(files / name)] if build is not build_classify_task else str(files / name)
    a = build(path, context=32, val_fraction=0.25, seed=1)
    b = build(path, context=np.int64(32), val_fraction=np.float32(0.25), seed=np.int64(1))
    assert (type(b.context), type(b.val_fraction), type(b.seed)) == (int, float, int)
    assert json.dumps(task_metadata(b)) == json.dumps(task_metadata(a))
    assert_same(a.sample(np.random.default_rng(0), 4), b.sample(np.random.default_rng(0), 4))


@pytest.mark.parametrize("bad", [True, 32.0, "32"])
def test_text_tasks_still_refuse_what_is_not_an_integer(files, bad):
    with pytest.raises(ValueError, match="context: expected an int >= 2"):
        build_text_task([str(files / "corpus.txt")], context=bad)
