"""For tests of what `python -m benchmarks` refuses before it measures: reaching the measurement at
all raises Started (fast), so a test can tell "refused up front" from "started"."""
import pytest

import benchmarks.cli as cli


class Started(Exception):
    pass


@pytest.fixture(autouse=True)
def no_measuring(monkeypatch):
    """Threads left as they are; the first measurement (the peaks, or a --scaling run) raises."""
    def started(*a, **kw):
        raise Started()
    monkeypatch.setattr(cli, "apply_threads", lambda threads: {"threads": threads})
    import benchmarks.peak as peak
    monkeypatch.setattr(peak, "measure_peaks", started)
    import benchmarks.scaling as scaling
    monkeypatch.setattr(scaling, "run_scaling", started)
