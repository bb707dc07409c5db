"""benchmarks/load.py: the load stamp's verdict and line, from given measurements."""
import pytest

from benchmarks.load import LOADED_CORES, LoadMeter, sample, summarize


def _m(cores, load=0.5):
    return {"load_average_1min": load, "other_processes_cores": cores, "cpus": 2,
            "utc": "2026-11-26T12:00:00+00:00"}


@pytest.mark.parametrize("before,during,after,loaded", [
    (0.0, 0.1, 0.0, False),
    (LOADED_CORES + 0.01, 0.0, 0.0, True),
    (0.0, 1.5, 0.0, True),
    (0.0, 0.0, 1.9, True),
    (None, None, None, False),
])
def test_loaded_when_other_processes_used_cores_at_any_point(before, during, after, loaded):
    s = summarize(_m(before), during, _m(after))
    assert s["loaded"] is loaded
    assert s["stamp"].startswith("LOADED: " if loaded else "idle: ")
    assert "2026-11-26 12:00 UTC" in s["stamp"] and "(of 2)" in s["stamp"]


def test_measurements_are_well_formed():
    m = sample(0.05)
    assert set(m) >= {"load_average_1min", "other_processes_cores", "cpus", "utc"}
    v = LoadMeter().others()
    assert v is None or v >= 0


@pytest.mark.parametrize("x,y,moved", [(25.0, 24.0, False), (28.0, 14.0, True), (14.0, 28.0, True),
                                       (None, 20.0, False)])
def test_the_stamp_says_when_memory_bandwidth_moved_between_start_and_end(x, y, moved):
    s = summarize({**_m(0.0), "memory_gb_s": x}, 0.0, {**_m(0.0), "memory_gb_s": y})
    assert s["bandwidth_moved"] is moved
    assert s["stamp"].startswith("idle: ")                    # bandwidth never makes a run "loaded"
    assert ("MOVED" in s["stamp"]) is moved
    assert ("memory bandwidth" in s["stamp"]) is (x is not None)
    if x is not None:
        assert f"memory bandwidth {x:g} -> {y:g} GB/s" in s["stamp"]


def test_memory_bandwidth_is_a_positive_figure():
    from benchmarks.load import memory_bandwidth

    assert memory_bandwidth(mib=8, rounds=1) > 0
