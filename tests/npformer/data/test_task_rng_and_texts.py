"""Every task's `sample(rng, n)` takes a numpy Generator and names `rng` for anything else, and
`examples_from_text` (the function and each task's method) refuses one string for its list of texts.

Before: `task.sample(0, 4)` (a seed for the generator) was `AttributeError: 'int' object has no
attribute 'integers'`, and `examples_from_text(task, "abc")` read the string's characters as three
inputs of one symbol each, silently."""
import re

import numpy as np
import pytest

from npformer.data.lm_data import ArithmeticTask
from npformer.data.mlm_data import MirrorTask
from npformer.data.tasks import Task, examples_from_text
from npformer.data.text_classify import build_classify_task
from npformer.data.text_lm import build_text_task
from npformer.data.text_translate import build_translate_task

WORDS = "the cat sat on a mat and ran to big red house dog saw it".split()


@pytest.fixture(scope="module")
def tasks(tmp_path_factory):
    folder = tmp_path_factory.mktemp("text")
    rng = np.random.default_rng(0)
    lines = [" ".join(rng.choice(WORDS, 6)) for _ in range(200)]
    (folder / "corpus.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / "pairs.tsv").write_text("".join(f"{t}\t{t[::-1]}\n" for t in lines), encoding="utf-8")
    (folder / "labels.tsv").write_text("".join(f"{t}\t{t.split()[0]}\n" for t in lines),
                                       encoding="utf-8")
    return {"reverse": (Task(), "abc"), "lm": (ArithmeticTask(), "12+7="), "mlm": (MirrorTask(), "ab#ba"),
            "text": (build_text_task([str(folder / "corpus.txt")], context=16), "the cat"),
            "translate": (build_translate_task([str(folder / "pairs.tsv")], context=64), "the cat"),
            "classify": (build_classify_task(str(folder / "labels.tsv"), context=64), "the cat")}


NAMES = ["reverse", "lm", "mlm", "text", "translate", "classify"]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("rng", [0, None, np.random.RandomState(0)], ids=["int", "None", "RandomState"])
def test_sample_names_an_rng_that_is_not_a_generator(tasks, name, rng):
    task, _ = tasks[name]
    with pytest.raises(TypeError, match=r"^rng: expected a numpy Generator \(np.random.default_rng"
                                        r"\(seed\)\), got "):
        task.sample(rng, 4)
    task.sample(np.random.default_rng(0), 4)                    # a Generator still works


@pytest.mark.parametrize("name", NAMES)
def test_one_string_is_not_a_list_of_texts(tasks, name):
    task, text = tasks[name]
    calls = [lambda: examples_from_text(task, text)]
    if hasattr(task, "examples_from_text"):                      # the tasks' own method too
        calls.append(lambda: task.examples_from_text(text))
    for call in calls:
        with pytest.raises(TypeError, match=re.escape(f"texts: expected a list of input strings, "
                                                      f"got one str '{text}'")):
            call()
    examples_from_text(task, [text])                             # a list of one text works
