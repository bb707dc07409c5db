"""TrainConfig takes NumPy numbers for every numeric field and keeps Python ones (what its
checkpoint records and what the schedule computes with): `label_smoothing=np.float32(0.1)` was
refused while `lr=np.float32(0.1)` was taken and kept as a float32, and NumPy integers were kept as
they came. Bools, strings and fractional counts are still refused."""
import numpy as np
import pytest

from npformer.training.train import TrainConfig

NUMPY = dict(steps=np.int64(3), batch_size=np.int32(2), lr=np.float32(0.5), warmup=np.int64(4),
             eps=np.float64(1e-9), weight_decay=np.float32(0.25), label_smoothing=np.float32(0.25),
             clip_norm=np.float32(2.0), seed=np.uint16(7), eval_every=np.int64(1),
             eval_size=np.int64(5), log_every=np.int64(2))


def test_numpy_numbers_are_taken_and_kept_as_python_numbers():
    c = TrainConfig(**NUMPY)
    for name, v in NUMPY.items():
        got = getattr(c, name)
        assert type(got) is (int if isinstance(v, np.integer) else float), name
        assert got == (int(v) if isinstance(v, np.integer) else float(v)), name
    assert c == TrainConfig(**{k: v.item() for k, v in NUMPY.items()})


@pytest.mark.parametrize("field,bad", [("label_smoothing", True), ("label_smoothing", "0.1"),
                                       ("label_smoothing", np.float32(np.nan)), ("steps", 3.0),
                                       ("batch_size", True), ("lr", "0.1")])
def test_what_is_not_a_number_of_the_kind_is_still_refused(field, bad):
    with pytest.raises(ValueError, match=f"TrainConfig.{field}: expected"):
        TrainConfig(**{field: bad})
